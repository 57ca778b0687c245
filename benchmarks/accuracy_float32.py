"""Accuracy of the float32 C module (--precision float32) against the float64 one, per function.

    python benchmarks/accuracy_float32.py                     # robots/panda.urdf, 1000 random states
    python benchmarks/accuracy_float32.py robots/ur5.urdf --states 5000

Both modules are generated from the robot file and compiled by load_c; the states are drawn in
float64 and rounded to float32 once, and both modules get those same rounded inputs, so the error
is that of the float32 arithmetic alone. Per state, the error of a function is
max |f32 - f64| / max |f64| over its outputs (norm-wise: an entry near zero of a large matrix does
not count as a large relative error); the table gives its median, 99th percentile and maximum.
"""
import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

import symdyn
from symdyn.codegen import manifest
from symdyn.codegen.c import C, C32
from symdyn.codegen.generator import trace_all
from symdyn.functions import FUNCTIONS, arguments

BY_NAME = {fn.name: fn for fn in FUNCTIONS}


def modules(robot, folder):
    model = symdyn.load_robot(robot)
    programs = trace_all(model, "numeric")
    module = Path(robot).stem
    files = manifest.render(model, programs, module, "numeric", (C, C32))      # what load_c reads
    for backend in (C, C32):
        files.update(backend.render(model, programs, module, "numeric"))
    for name, text in files.items():
        (folder / name).write_text(text)
    return (symdyn.load_c(folder / f"{module}.c"), symdyn.load_c(folder / f"{module}_f32.c"),
            np.array(model.parameters))


def states(module, count, params, seed=0):
    rng = np.random.default_rng(seed)
    n = module.NV
    q, qd, x = rng.uniform(-np.pi, np.pi, (count, n)), rng.normal(size=(count, n)) * 2, rng.normal(size=(count, n)) * 3
    f_ext = rng.normal(size=(count, len(module.FRAMES), 6)) * 5
    p = np.broadcast_to(params, (count,) + params.shape)
    return q, (qd, x), f_ext, p


def errors(double, single, count, parameters):
    q, extra, f_ext, params = states(double, count, parameters)
    out = {}
    for name in double._signatures:
        args = [np.asarray(a, np.float32).astype(np.float64) for a in arguments(BY_NAME[name], q, extra, f_ext, params)]
        ref, low = getattr(double, name)(*args), getattr(single, name)(*args)
        pairs = zip(ref, low) if isinstance(ref, tuple) else [(ref, low)]
        err = np.zeros(count)
        for r, s in pairs:
            r, s = r.reshape(count, -1), s.reshape(count, -1).astype(np.float64)
            scale = np.maximum(np.abs(r).max(axis=1), np.finfo(np.float64).tiny)
            err = np.maximum(err, np.abs(s - r).max(axis=1) / scale)
        out[name] = err
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("robot", nargs="?", default=str(Path(__file__).resolve().parents[1] / "robots" / "panda.urdf"))
    ap.add_argument("--states", type=int, default=1000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        double, single, parameters = modules(args.robot, Path(tmp))
        table = errors(double, single, args.states, parameters)
    print(f"{Path(args.robot).name}: float32 against float64, {args.states} random states "
          f"(max |f32 - f64| / max |f64| per state)\n", file=sys.stdout)
    print("| function | median | 99th percentile | max |")
    print("|---|---|---|---|")
    for name, err in table.items():
        print(f"| {name} | {np.median(err):.1e} | {np.percentile(err, 99):.1e} | {err.max():.1e} |")


if __name__ == "__main__":
    main()
