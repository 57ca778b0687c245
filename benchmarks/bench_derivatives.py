#!/usr/bin/env python3
"""Single-call C timing of the derivatives against the robot's own dynamics, two symdyn checkouts side by side.

    python benchmarks/bench_derivatives.py --before /path/to/other/symdyn/checkout --robots panda ur5 solo12

For each robot, both checkouts generate inverse_dynamics, forward_dynamics and their *_derivatives as C
(`symdyn generate --functions ...`, run in a scratch folder so that each checkout's package is the one
imported); both modules are linked into one executable (the second's symbols renamed with objcopy) that
times every function interleaved, single calls over 1000 random states, the median over --reps rounds
(benchmarks/c/bench_derivatives.c), in --processes processes, and the
median over processes is printed with the processes' range (the time of a long function moved up to 3x from
one process to another: where its stack frame and the arrays land). Flags: -O3 -DNDEBUG -ffp-contract=fast -march=native
-fno-tree-slp-vectorize (load_c's, without OpenMP). Prints the load average beside the numbers.
solo12 (example-robot-data) is generated with a free-flyer. Needs gcc, objcopy, nm.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
FUNCTIONS = ("inverse_dynamics", "forward_dynamics", "inverse_dynamics_derivatives", "forward_dynamics_derivatives")
FLAGS = ["-O3", "-DNDEBUG", "-ffp-contract=fast", "-march=native", "-fno-tree-slp-vectorize", "-std=c99"]


def robot_file(name):
    """(path, floating) of a robot name: robots/<name>.urdf, or solo12 from example-robot-data."""
    local = REPO / "robots" / f"{name}.urdf"
    if local.exists():
        return local, False
    sys.path.insert(0, str(REPO / "tests"))
    from conftest import ERD_TREES, erd_path
    return erd_path(ERD_TREES[name]), True


def generate(checkout, robot, floating, out):
    cmd = [sys.executable, "-m", "symdyn", "generate", str(robot), "--lang", "c", "--out", str(out),
           "--functions", ",".join(FUNCTIONS)] + (["--floating-base"] if floating else [])
    subprocess.run(cmd, check=True, cwd=out, env={**os.environ, "PYTHONPATH": str(checkout)}, capture_output=True)


def renamed_object(source, module, tag, work):
    """The module compiled, its public functions renamed tag_<function>, its other globals prefixed."""
    obj = work / f"{tag}.o"
    subprocess.run(["gcc", *FLAGS, "-c", str(source), "-o", str(obj)], check=True)
    symbols = subprocess.run(["nm", "--defined-only", "-g", str(obj)], check=True, capture_output=True,
                             text=True).stdout.split()[2::3]
    renames = []
    for s in symbols:
        fn = s[len(module) + 1:] if s.startswith(module + "_") else None
        renames += ["--redefine-sym", f"{s}={tag}_{fn}" if fn in FUNCTIONS else f"{s}={tag}_x_{s}"]
    subprocess.run(["objcopy", *renames, str(obj)], check=True)
    return obj


def run(robot_name, before, reps, processes):
    robot, floating = robot_file(robot_name)
    sys.path.insert(0, str(REPO))
    import symdyn
    model = symdyn.load_robot(robot, floating_base=floating) if floating else symdyn.load_robot(robot)
    quat = 3 if floating else -1
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        objects = []
        for tag, checkout in (("old", before), ("new", REPO)):
            out = work / tag
            out.mkdir()
            generate(checkout, robot, floating, out)
            source = next(out.glob("*.c"))
            objects.append(renamed_object(source, source.stem, tag, work))
        exe = work / "bench"
        subprocess.run(["gcc", *FLAGS, str(HERE / "c" / "bench_derivatives.c"), *map(str, objects), "-lm", "-o",
                        str(exe)], check=True)
        load = os.getloadavg()
        runs = [[float(x) for x in subprocess.run([str(exe), str(model.nq), str(model.nv), str(quat), str(reps)],
                                                  check=True, capture_output=True, text=True).stdout.split()]
                for _ in range(processes)]
    label = f"{robot_name}{' floating' if floating else ''}"
    print(f"{label} (nv {model.nv}), load {load[0]:.1f} / {os.getloadavg()[0]:.1f} "
          f"(before / after); old = {before}, new = this checkout; ns per call, median over {processes} processes "
          f"[their range]")
    report(runs)


def report(runs):
    """One line per function (old, new), then the ratios, from the processes' medians."""
    med = [statistics.median(r[i] for r in runs) for i in range(8)]
    for i, name in enumerate(("ID", "FD", "dID", "dFD")):
        cells = [f"{med[2 * i + j]:8.1f} [{min(r[2 * i + j] for r in runs):.0f}-{max(r[2 * i + j] for r in runs):.0f}]"
                 for j in (0, 1)]
        print(f"  {name:4s} old {cells[0]:24s} new {cells[1]}")
    print(f"  dID/ID old {med[4] / med[0]:.2f} new {med[5] / med[1]:.2f}; dFD/FD old {med[6] / med[2]:.2f} "
          f"new {med[7] / med[3]:.2f}; new/old speedup dID {med[4] / med[5]:.2f} dFD {med[6] / med[7]:.2f}")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--before", required=True, help="the other symdyn checkout (its repository root)")
    p.add_argument("--robots", nargs="+", default=["panda", "ur5", "solo12"])
    p.add_argument("--reps", type=int, default=32, help="rounds per process (each at another stack offset)")
    p.add_argument("--processes", type=int, default=5)
    args = p.parse_args()
    if not shutil.which("objcopy"):
        sys.exit("bench_derivatives: objcopy not found")
    for name in args.robots:
        run(name, Path(args.before).resolve(), args.reps, args.processes)


if __name__ == "__main__":
    main()
