#!/usr/bin/env python3
"""Frame Jacobians and centroidal maps: generated C against Pinocchio's C++ in one process.

For each robot, generates the C module with `--frames` set to the frames timed, compiles
benchmarks/cpp/bench_kinematics.cpp against it and the installed Pinocchio (the toolchain of
bench_c.py: -O3 -DNDEBUG, Pinocchio's precompiled algorithms), checks every output against
Pinocchio's on 64 random states, then times both, interleaved, and prints a Markdown table
(medians of --reps repetitions, and the ratio of the fastest repetitions, steadier on a loaded
machine):

    python benchmarks/bench_kinematics.py [--robots panda ur5 solo12 solo12_fb] [--reps 11] [--iterations 200000]

solo12 is timed fixed-base; solo12_fb is the same robot with a floating base (Pinocchio's
JointModelFreeFlyer root, symdyn generate --floating-base).
"""
import argparse
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO))

import bench_c  # noqa: E402  (toolchain: flags, include dirs, Pinocchio libraries)

SOURCE = HERE / "cpp" / "bench_kinematics.cpp"
SOLO12 = ("erd:solo_description/robots/solo12.urdf", ["FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"])
# name -> (URDF: in the repository or example-robot-data, frames timed, floating base)
ROBOTS = {
    "panda": ("robots/panda.urdf", ["panda_hand_tcp"], False),
    "ur5": ("robots/ur5.urdf", ["tool0"], False),
    "solo12": (*SOLO12, False),
    "solo12_fb": (*SOLO12, True),
}


def urdf_path(tc, spec):
    if spec.startswith("erd:"):
        return tc.robots_dir / spec[4:]
    return REPO / spec


def build(tc, name, urdf, frames, floating, build_dir, show):
    from symdyn.generate import generate
    from symdyn.readers.options import LoadOptions
    gen = build_dir / name
    generate([urdf], gen, ("c",), options=LoadOptions(frames=frames, floating_base=floating))
    module = Path(urdf).stem
    obj, exe = gen / f"{module}.o", gen / "bench_kinematics"
    cc = [bench_c.CC, *bench_c.OPT_FLAGS, *bench_c.C_FLAGS, "-c", str(gen / f"{module}.c"), "-o", str(obj)]
    cxx = [bench_c.CXX, *bench_c.OPT_FLAGS, *bench_c.CXX_FLAGS, *(f"-D{d}" for d in tc.defines),
           f"-DSYMDYN_ROBOT={module}", f'-DSYMDYN_HEADER="{module}.h"',
           f"-DSYMDYN_DOF={module.upper()}_DOF", f"-DSYMDYN_NF={module.upper()}_NF", f"-DSYMDYN_NQ={module.upper()}_NQ",
           *(f"-I{d}" for d in [gen, *tc.include_dirs]), str(SOURCE), str(obj), "-o", str(exe),
           f"-L{tc.lib_dir}", f"-Wl,-rpath,{tc.lib_dir}", *(f"-l{lib}" for lib in bench_c.PIN_LIBS)]
    for cmd in (cc, cxx):
        bench_c.run(cmd, show)
    return exe


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--robots", nargs="+", default=list(ROBOTS), choices=list(ROBOTS))
    p.add_argument("--reps", type=int, default=11)
    p.add_argument("--iterations", type=int, default=200000, help="calls per timed repetition")
    p.add_argument("--build-dir", default=str(HERE / "cpp" / "build" / "kinematics"))
    p.add_argument("--show-cmd", action="store_true")
    args = p.parse_args()
    tc = bench_c.Toolchain(bench_c.find_cmeel_prefix())
    rows = []
    for name in args.robots:
        spec, frames, floating = ROBOTS[name]
        urdf = urdf_path(tc, spec)
        exe = build(tc, name, urdf, frames, floating, Path(args.build_dir), args.show_cmd)
        out = subprocess.run([str(exe), str(urdf), ",".join(frames), str(args.iterations), f"--reps={args.reps}",
                              *(["--floating"] if floating else [])],
                             capture_output=True, text=True, check=True).stdout
        rows += [dict(json.loads(line), robot=name) for line in out.splitlines() if line.startswith("{")]
    print("| robot | nv | frames | function | Pinocchio | Pinocchio ns | symdyn C ns | speed-up | "
          "speed-up of the minima | max rel err |")
    print("|---|---:|---:|---|---|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['robot']} | {r['dof']} | {r['frames']} | {r['function']} | `{r['pinocchio_fn']}` | "
              f"{r['pinocchio_ns']:.1f} | {r['symdyn_ns']:.1f} | {r['ratio']:.2f} | {r['ratio_of_minima']:.2f} | "
              f"{r['max_rel_err']:.1e} |")


if __name__ == "__main__":
    main()
