#!/usr/bin/env python3
"""The generated Python module on numpy (and JAX): time per call of every function, one state and a batch.

    PYTHONPATH=. python benchmarks/bench_python.py [--module A.py [--module B.py]] [--batch 1000] [--reps 30] \
        [--jax] [--jax-no-fusion] [--torch]

Prints a Markdown table: per function and module, microseconds per call with one state (q of
shape (n,)) and with a batch of --batch states (q of shape (batch, n)), the best of --reps timed
loops of ~3 ms (short loops, many: on a loaded machine some run undisturbed). Several modules (e.g. generated/panda.py of two commits) are timed interleaved, loop after
loop, so that the load of a shared machine falls on all alike. --jax adds the first module under
jax.jit (float64), batched; --jax-no-fusion the same with XLA's fusion pass off for that function
(jax.jit(f, compiler_options={"xla_disable_hlo_passes": "fusion"}): see docs/api.md); --torch the
first module on PyTorch CPU tensors (float64, eager, one intra-op thread like numpy), batched.
"""
import argparse
import importlib.util
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from symdyn.functions import FUNCTIONS, arguments  # noqa: E402


def load(path, index):
    spec = importlib.util.spec_from_file_location(f"{Path(path).stem}_bench{index}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def states(module, count, seed=0):
    """Arguments of every function for `count` states (count None: one state, no batch axis)."""
    rng = np.random.default_rng(seed)
    lead = () if count is None else (count,)
    q = rng.uniform(-np.pi, np.pi, lead + (module.NQ,))
    vectors = [rng.normal(size=lead + (module.NV,)) for _ in range(2)]
    f_ext = rng.normal(size=lead + (len(module.FRAMES), 6))
    params = np.broadcast_to(module.PARAMETERS, lead + module.PARAMETERS.shape)
    return {fn.name: arguments(fn, q, vectors, f_ext, params if fn.name == "base_parameters" else None)
            for fn in FUNCTIONS if hasattr(module, fn.name)}


def loops_for(f, args, seconds=0.003):
    """How many calls last about `seconds`."""
    f(*args)
    loops, start = 1, time.perf_counter()
    while time.perf_counter() - start < seconds:
        f(*args)
        loops += 1
    return loops


def interleaved(calls, reps):
    """Microseconds per call of each (f, args), the best of the timed loops (the least disturbed by
    other processes), the loops of all taking turns."""
    loops = [loops_for(f, args) for f, args in calls]
    times = [[] for _ in calls]
    for _ in range(reps):
        for k, ((f, args), n) in enumerate(zip(calls, loops)):
            start = time.perf_counter()
            for _ in range(n):
                f(*args)
            times[k].append((time.perf_counter() - start) / n)
    return [min(t) * 1e6 for t in times]


def _jitted(jax, f, args, options=None):
    """(a call of jax.jit(f) that waits for its result, the arguments as JAX arrays)."""
    compiled = jax.jit(f, compiler_options=options)
    return (lambda *a: jax.block_until_ready(compiled(*a))), [jax.numpy.asarray(a) for a in args]


#: XLA's CPU fusion makes the whole straight-line function one loop fusion that recomputes shared
#: subexpressions for every output entry (docs/perf-history.md "Batch throughput, issue 15, second pass")
NO_FUSION = {"xla_disable_hlo_passes": "fusion"}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--module", action="append", help="generated module(s) (default: generated/panda.py)")
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--reps", type=int, default=30)
    parser.add_argument("--jax", action="store_true", help="also time jax.jit of the first module (batched)")
    parser.add_argument("--jax-no-fusion", action="store_true", help="also time jax.jit with XLA's fusion pass off")
    parser.add_argument("--torch", action="store_true", help="also time the first module on torch CPU tensors")
    parser.add_argument("--functions", default=None, help="comma-separated names (default: all)")
    opts = parser.parse_args()
    paths = opts.module or [str(REPO / "generated" / "panda.py")]
    modules = [load(p, k) for k, p in enumerate(paths)]
    one, many = states(modules[0], None), states(modules[0], opts.batch)
    names = opts.functions.split(",") if opts.functions else list(one)
    if opts.jax or opts.jax_no_fusion:
        import jax
        jax.config.update("jax_enable_x64", True)
    if opts.torch:
        import torch
        torch.set_num_threads(1)
    for k, p in enumerate(paths):
        print(f"module {chr(65 + k)}: {p}")
    columns = [f"{chr(65 + k)} one state (us) | {chr(65 + k)} batch {opts.batch} (us)" for k in range(len(modules))]
    header = ("| function | " + " | ".join(columns) + " |" + (" A jax.jit batch (us) |" if opts.jax else "")
              + (" A jax.jit no fusion batch (us) |" if opts.jax_no_fusion else "")
              + (" A torch batch (us) |" if opts.torch else ""))
    print(header)
    print("|---" * (header.count("|") - 1) + "|")
    for name in names:
        calls = [(getattr(m, name), args[name]) for m in modules for args in (one, many)]
        if opts.jax:
            calls.append(_jitted(jax, getattr(modules[0], name), many[name]))
        if opts.jax_no_fusion:
            calls.append(_jitted(jax, getattr(modules[0], name), many[name], NO_FUSION))
        if opts.torch:
            calls.append((getattr(modules[0], name), [torch.asarray(np.ascontiguousarray(a)) for a in many[name]]))
        times = interleaved(calls, opts.reps)
        print(f"| {name} | " + " | ".join(f"{t:.1f}" if t < 100 else f"{t:.0f}" for t in times) + " |", flush=True)


if __name__ == "__main__":
    main()
