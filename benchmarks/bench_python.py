#!/usr/bin/env python3
"""The generated Python module on numpy (and JAX): time per call of every function, one state and a batch.

    PYTHONPATH=. python benchmarks/bench_python.py [--module generated/panda.py] [--batch 1000] [--reps 7] [--jax]

Prints a Markdown table: per function, microseconds per call with one state (q of shape (n,)) and
with a batch of --batch states (q of shape (batch, n)), medians of --reps repetitions of a timed
loop. Run it on two versions of a module (e.g. the committed generated/panda.py of two commits) to
compare them on the same machine. --jax adds the same module under jax.jit (float64), batched.
"""
import argparse
import importlib.util
import statistics
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from symdyn.functions import FUNCTIONS, arguments  # noqa: E402


def load(path):
    spec = importlib.util.spec_from_file_location(Path(path).stem + "_bench", path)
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


def per_call(f, args, reps):
    """Median microseconds per call, each repetition a loop long enough to last ~20 ms."""
    f(*args)
    loops, start = 1, time.perf_counter()
    while time.perf_counter() - start < 0.02:
        f(*args)
        loops += 1
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        for _ in range(loops):
            f(*args)
        times.append((time.perf_counter() - start) / loops)
    return statistics.median(times) * 1e6


def _jitted(jax, f, args):
    """(a call of jax.jit(f) that waits for its result, the arguments as JAX arrays)."""
    compiled = jax.jit(f)
    return (lambda *a: jax.block_until_ready(compiled(*a))), [jax.numpy.asarray(a) for a in args]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--module", default=str(REPO / "generated" / "panda.py"))
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--jax", action="store_true", help="also time jax.jit of each function (batched)")
    parser.add_argument("--functions", default=None, help="comma-separated names (default: all)")
    opts = parser.parse_args()
    module = load(opts.module)
    one, many = states(module, None), states(module, opts.batch)
    names = opts.functions.split(",") if opts.functions else list(one)
    jitted = {}
    if opts.jax:
        import jax
        jax.config.update("jax_enable_x64", True)
        jitted = {n: _jitted(jax, getattr(module, n), many[n]) for n in names}
    header = f"| function | one state (us) | batch {opts.batch} (us) | batch, per state (ns) |"
    print(header + (" jax.jit batch (us) |" if opts.jax else ""))
    print("|---" * (header.count("|") - 1 + opts.jax) + "|")
    for name in names:
        f = getattr(module, name)
        t1, tb = per_call(f, one[name], opts.reps), per_call(f, many[name], opts.reps)
        row = f"| {name} | {t1:.1f} | {tb:.0f} | {tb * 1e3 / opts.batch:.0f} |"
        if opts.jax:
            row += f" {per_call(*jitted[name], opts.reps):.0f} |"
        print(row, flush=True)


if __name__ == "__main__":
    main()
