#!/usr/bin/env python3
"""jax.jit of a generated Python module on the CPU: XLA options against numpy, per state and per compile.

    PYTHONPATH=. taskset -c 1 python benchmarks/bench_jax.py [--module generated/panda.py] \
        [--functions inverse_dynamics,mass_matrix] [--counts 1,100,1000,10000] \
        [--modes numpy,default,helper,helper-one-state,no-fusion,no-emitters] [--transforms] \
        [--seconds 0.05] [--reps 5] [--max-default 10000]

Prints Markdown rows: per function, mode and batch size (q of shape (count, n)), the time of trace +
lowering (`jit(f).lower`), of XLA's compile (`.compile()`), and microseconds per call and per state
(the best of --reps timed loops of about --seconds each), with the largest difference to numpy.
Modes: `numpy` the module on numpy arrays; `default` jax.jit(f) (skipped beyond --max-default
states: 4-6 ms per state for the Panda's forward_dynamics); `helper` the module's jax_jit(f),
`helper-one-state` jax_jit(f, one_state=True); `no-fusion` jax.jit with {"xla_disable_hlo_passes": "fusion"}; `no-emitters` jax.jit with
{"xla_cpu_use_fusion_emitters": False} (XLA:CPU's older elemental loop emitter). --transforms times,
instead of the plain functions, what an optimizer or MPC user compiles: the gradient of a weighted
sum of inverse_dynamics over the batch (jit(grad)), jit(vmap(forward_dynamics)) on single-state
calls, and a rollout of forward_dynamics with semi-implicit Euler steps under jax.lax.scan (count =
states in the rollout's batch, 100 steps; per state = per state and step).
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

OPTIONS = {"default": None, "no-fusion": {"xla_disable_hlo_passes": "fusion"},
           "no-emitters": {"xla_cpu_use_fusion_emitters": False}}
STEPS = 100


def load(path):
    spec = importlib.util.spec_from_file_location(f"{Path(path).stem}_bench_jax", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def states(module, name, count, seed=0):
    rng = np.random.default_rng(seed)
    q = rng.uniform(-np.pi, np.pi, (count, module.NQ))
    vectors = [rng.normal(size=(count, module.NV)) for _ in range(2)]
    f_ext = rng.normal(size=(count, len(module.FRAMES), 6))
    params = np.broadcast_to(module.PARAMETERS, (count,) + module.PARAMETERS.shape)
    fn = next(fn for fn in FUNCTIONS if fn.name == name)
    return arguments(fn, q, vectors, f_ext, params if name == "base_parameters" else None)


def best_time(call, seconds, reps):
    """Seconds per call: the best of `reps` loops of about `seconds` each."""
    start = time.perf_counter()
    call()
    once = time.perf_counter() - start
    loops = max(1, int(seconds / max(once, 1e-7)))
    best = once
    for _ in range(reps):
        start = time.perf_counter()
        for _ in range(loops):
            call()
        best = min(best, (time.perf_counter() - start) / loops)
    return best


def transformed(module, kind):
    """(function to compile, its numpy reference) for --transforms."""
    import jax
    if kind == "jit(grad(inverse_dynamics))":
        def cost(q, qd, qdd):
            return (module.inverse_dynamics(q, qd, qdd) ** 2).sum()
        return jax.grad(cost, argnums=(0, 1, 2)), None
    if kind == "jit(vmap(forward_dynamics))":
        return jax.vmap(module.forward_dynamics), module.forward_dynamics
    if kind == "jit(scan(forward_dynamics))":
        def rollout(q, qd, tau, dt=1e-3):
            def step(state, _):
                q, qd = state
                qd = qd + dt * module.forward_dynamics(q, qd, tau)
                return (q + dt * qd, qd), None
            return jax.lax.scan(step, (q, qd), None, length=STEPS)[0][0]

        def reference(q, qd, tau, dt=1e-3):
            for _ in range(STEPS):
                qd = qd + dt * module.forward_dynamics(q, qd, tau)
                q = q + dt * qd
            return q
        return rollout, reference
    raise ValueError(kind)


def measure(module, name, mode, count, opts, f=None, reference=None):
    args = states(module, "forward_dynamics" if f is not None else name, count)
    f = f or getattr(module, name)
    reference = reference if f is not getattr(module, name, None) else f
    if mode == "numpy":
        seconds = best_time(lambda: f(*args), opts.seconds, opts.reps)
        return 0.0, 0.0, seconds, 0.0
    import jax
    jargs = [jax.numpy.asarray(a) for a in args]
    if mode.startswith("helper"):
        jitted = module.jax_jit(f, one_state=mode == "helper-one-state")
    else:
        jitted = jax.jit(f, compiler_options=OPTIONS[mode])
    start = time.perf_counter()
    lowered = jitted.lower(*jargs)
    traced = time.perf_counter() - start
    compiled = lowered.compile()
    compile_time = time.perf_counter() - start - traced
    out = jax.block_until_ready(compiled(*jargs))
    diff = 0.0
    if reference is not None:
        want = reference(*args)
        diff = max(float(np.max(np.abs(np.asarray(o) - w))) for o, w in
                   zip(out if isinstance(out, tuple) else (out,), want if isinstance(want, tuple) else (want,)))
    seconds = best_time(lambda: jax.block_until_ready(compiled(*jargs)), opts.seconds, opts.reps)
    return traced, compile_time, seconds, diff


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--module", default=str(REPO / "generated" / "panda.py"))
    parser.add_argument("--functions", default="inverse_dynamics,mass_matrix,forward_dynamics")
    parser.add_argument("--counts", default="1,100,1000,10000")
    parser.add_argument("--modes", default="numpy,default,helper")
    parser.add_argument("--transforms", action="store_true", help="time jit(grad), jit(vmap), jit(scan) instead")
    parser.add_argument("--seconds", type=float, default=0.05)
    parser.add_argument("--max-default", type=int, default=10000, help="largest batch timed with plain jax.jit")
    parser.add_argument("--reps", type=int, default=5)
    opts = parser.parse_args()
    import jax
    jax.config.update("jax_enable_x64", True)
    module = load(opts.module)
    names = (["jit(grad(inverse_dynamics))", "jit(vmap(forward_dynamics))", "jit(scan(forward_dynamics))"]
             if opts.transforms else opts.functions.split(","))
    print(f"module {opts.module}, jax {jax.__version__}, backend {jax.default_backend()}")
    print("| function | mode | states | trace (s) | compile (s) | call (us) | us per state | max diff |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for name in names:
        for count in map(int, opts.counts.split(",")):
            for mode in opts.modes.split(","):
                if mode == "default" and count > opts.max_default:
                    continue
                f, reference = transformed(module, name) if opts.transforms else (None, None)
                if mode == "numpy" and opts.transforms:
                    if reference is None:
                        continue
                    f = reference
                traced, compile_time, seconds, diff = measure(module, name, mode, count, opts, f, reference)
                per = count * (STEPS if "scan" in name else 1)
                print(f"| {name} | {mode} | {count} | {traced:.2f} | {compile_time:.2f} | {seconds * 1e6:.1f} "
                      f"| {seconds * 1e6 / per:.2f} | {diff:.1e} |", flush=True)


if __name__ == "__main__":
    main()
