"""Floating bases: generation time of the full set and operation counts of inverse dynamics, mass
matrix and forward dynamics, fixed against floating base (free-flyer root, Pinocchio's conventions).

    python benchmarks/bench_floating.py
"""
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from conftest import ERD_TREES, erd_path  # noqa: E402
from symdyn.codegen.generator import trace  # noqa: E402
from symdyn.functions import BY_NAME  # noqa: E402
from symdyn.generate import render  # noqa: E402
from symdyn.readers.load import load_robot  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
ROBOTS = {"solo12": lambda: erd_path(ERD_TREES["solo12"]), "panda": lambda: ROOT / "robots" / "panda.urdf"}
CLASSICAL = {"inverse_dynamics": ("RNEA", lambda n: (93 * n - 108, 81 * n - 100)),
             "mass_matrix": ("CRBA", lambda n: (10 * n * n + 22 * n - 32, 6 * n * n + 37 * n - 43)),
             "forward_dynamics": ("ABA", lambda n: (224 * n - 259, 205 * n - 248))}


def main():
    print("### Generation of the full set with a floating base (trace, optimize, render Python + C)\n")
    print("| robot | nq | nv | numeric params (s) | symbolic params (s) |\n|---|---|---|---|---|")
    for name, path in ROBOTS.items():
        model = load_robot(path(), floating_base=True)
        times = []
        for mode in ("numeric", "symbolic"):
            t = time.perf_counter()
            render(model, ("python", "c"), mode)
            times.append(time.perf_counter() - t)
        print(f"| {name} | {model.nq} | {model.nv} | {times[0]:.2f} | {times[1]:.2f} |")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\nPeak memory of this process (all of the above): {peak:.0f} MB\n")
    print("### Operation counts, fixed and floating base (numeric parameters; mul / add)\n")
    print("| robot | function | fixed base | floating base | classical fixed-base formula at n = nv "
          "(free-flyer as 6 one-DoF joints) |\n|---|---|---|---|---|")
    for name, path in ROBOTS.items():
        fixed, floating = load_robot(path()), load_robot(path(), floating_base=True)
        for fn, (algo, formula) in CLASSICAL.items():
            a, b = trace(fixed, BY_NAME[fn]).ops, trace(floating, BY_NAME[fn]).ops
            mul, add = formula(floating.nv)
            print(f"| {name} | {fn} | {a['mul']} / {a['add']} | {b['mul']} / {b['add']} | {algo} {mul} / {add} |")


if __name__ == "__main__":
    sys.exit(main())
