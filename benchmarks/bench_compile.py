"""Compile cost of the generated C against the size of the robot: the whole function set (or
--functions), generation time, C size, then `cc -O2 -std=c99 -fPIC -c` time and peak memory.

    python benchmarks/bench_compile.py 30 50 100            # spatial chains, one compile at a time
    python benchmarks/bench_compile.py tree:100 robots/panda.urdf   # a random tree (tests/random_chain.py), a file
    python benchmarks/bench_compile.py 30 --whole            # every function in one piece (older output)
    python benchmarks/bench_compile.py 100 --functions inverse_dynamics,mass_matrix
    python benchmarks/bench_compile.py <talos_reduced.urdf> --floating-base --build o2 --build load_c --build load_c-nolanes

--build (repeatable) compiles the same C several ways: o2 (`cc -O2 -std=c99 -fPIC -c`, the default),
load_c (load_c's flags: -O3 -ffp-contract=fast -fno-math-errno -march=native, gcc's
-fno-tree-slp-vectorize, -fopenmp), and either with -nolanes (-DSYMDYN_NO_LANES: the batch entries as
loops of single calls).

Peak memory is the compiler's largest resident set (`ru_maxrss` of the finished child). On a shared
machine, read the CPU time (user + sys): the wall time grows with the load.
"""
import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import symdyn
from symdyn.codegen.c import loader as cload
from symdyn.codegen.c import render_c
from symdyn.codegen.generator import trace_all
from symdyn.generate import module_name
from symdyn.multibody.synthetic import spatial_chain


BUILDS = {"o2": ["-O2"], "load_c": [*cload.OPT_FLAGS, *cload.GCC_FLAGS, "-fopenmp"]}


def build_flags(build):
    """The flags of a --build name: o2, load_c, o2-nolanes, load_c-nolanes."""
    name, _, lanes = build.partition("-")
    return BUILDS[name] + (["-DSYMDYN_NO_LANES"] if lanes == "nolanes" else [])


def compile_cost(c_file, timeout, compiler="cc", flags=("-O2",)):
    """(wall s, CPU s, peak MB, return code) of one compile, run in a child of its own."""
    cmd = [compiler, *flags, "-std=c99", "-fPIC", "-c", str(c_file), "-o", os.devnull]
    probe = ("import resource, subprocess, sys, time; t = time.perf_counter(); "
             f"rc = subprocess.run({cmd!r}).returncode; "
             "u = resource.getrusage(resource.RUSAGE_CHILDREN); "
             "print(time.perf_counter() - t, u.ru_utime + u.ru_stime, u.ru_maxrss / 1024, rc)")
    child = subprocess.Popen([sys.executable, "-c", probe], stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, _ = child.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, signal.SIGKILL)           # the compiler too, not only the probe
        child.communicate()
        return None
    wall, cpu, peak, rc = out.split()
    return float(wall), float(cpu), float(peak), int(rc)


def robot(spec, floating_base=False):
    """N: a spatial chain of N links; tree:N: a random tree of N moving joints; else a robot file."""
    if floating_base:
        return symdyn.load_robot(spec, floating_base=True)
    if spec.isdigit():
        return spatial_chain(int(spec))
    if spec.startswith("tree:"):
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
        from random_chain import random_tree
        return random_tree(int(spec[5:]), seed=0)
    return symdyn.load_robot(spec)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("robots", nargs="+", help="N (spatial chain), tree:N (random tree) or a robot file")
    ap.add_argument("--whole", action="store_true", help="no splitting: every function in one piece")
    ap.add_argument("--functions", default=None, help="comma-separated subset (default: the whole set)")
    ap.add_argument("--timeout", type=float, default=1800, help="seconds before a compile is abandoned")
    ap.add_argument("--cc", default=os.environ.get("CC", "cc"))
    ap.add_argument("--floating-base", action="store_true", help="robot files with a free-flyer base")
    ap.add_argument("--build", action="append", choices=[b + n for b in BUILDS for n in ("", "-nolanes")],
                    help="compile flags (repeatable): o2 (default), load_c, o2-nolanes, load_c-nolanes")
    args = ap.parse_args()
    print(f"| robot | DOF | generation (s) | C (MB) | parts | lane loops | {args.cc} build | wall (s) | CPU (s) | peak memory (MB) |")
    print("|---|---:|---:|---:|---:|---:|---|---:|---:|---:|")
    for spec in args.robots:
        model = robot(spec, args.floating_base)
        t = time.perf_counter()
        programs = trace_all(model, functions=args.functions)
        module = module_name(model.provenance.path)
        header, source = render_c(model, programs, module, "numeric", **({"split_above": None} if args.whole else {}))
        seconds = time.perf_counter() - t
        parts = source.count("static SD_NOINLINE void")
        lanes = len(re.findall(r"(?m)^static void sd_\w+_lanes\(", source))     # the lane entries' loops
        for build in args.build or ["o2"]:
            with tempfile.TemporaryDirectory(prefix="symdyn-bench-compile-") as tmp:
                (Path(tmp) / f"{module}.h").write_text(header)
                (Path(tmp) / f"{module}.c").write_text(source)
                cost = compile_cost(Path(tmp) / f"{module}.c", args.timeout, args.cc, build_flags(build))
            if cost is None:
                measured = f"> {args.timeout:.0f} (timeout) | - | -"
            else:
                wall, cpu, peak, rc = cost
                measured = f"{wall:.1f} | {cpu:.1f} | {peak:.0f}" + ("" if rc == 0 else f" (exit {rc})")
            print(f"| {Path(spec).name}{' floating' if args.floating_base else ''} | {model.dof} | {seconds:.1f} | "
                  f"{len(source) / 1e6:.2f} | {parts} | {lanes} | {build} | {measured} |", flush=True)


if __name__ == "__main__":
    sys.exit(main())
