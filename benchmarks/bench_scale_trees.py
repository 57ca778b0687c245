"""Issue 10, speed and scale: generation of the full set (Python + C) for trees with a floating base,
with wall time and peak memory of the `symdyn generate` process; compile time and peak memory of the
generated C with gcc -O2; operation counts of the floating-base inverse dynamics, mass matrix and
forward dynamics.

    PYTHONPATH=. python benchmarks/bench_scale_trees.py [--repeats 3] [--skip-compile]

Each generation runs in a fresh process under /usr/bin/time (wall clock and maximum resident set
size); the table gives the median wall time over the repeats and the largest peak. The 100-body tree
is symdyn.multibody.synthetic.random_tree_description(100, seed=1) (100 moving joints, fixed links besides),
written as symdyn YAML, generated with a fixed base and with --floating-base. The compile step runs
`gcc -O2 -c` on the generated C of talos_reduced with a floating base (the same module as generated).
"""
import argparse
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from conftest import ERD_TREES, erd_path  # noqa: E402
from symdyn.multibody.synthetic import random_tree_description  # noqa: E402

TARGETS = {"solo12": 10, "talos_reduced": 60, "tree100": 120}
COUNTED = ("inverse_dynamics", "mass_matrix", "forward_dynamics", "gravity", "mass_matrix_inverse",
           "coriolis_matrix")


def timed(cmd, cwd=ROOT):
    """(wall s, peak RSS MB, CPU s = user + system) of cmd run under /usr/bin/time; exits on failure."""
    r = subprocess.run(["/usr/bin/time", "-f", "%e %U %S %M", *cmd], cwd=cwd, capture_output=True, text=True)
    if r.returncode:
        sys.exit(f"failed ({r.returncode}): {' '.join(map(str, cmd))}\n{r.stderr[-2000:]}")
    wall, user, system, rss = r.stderr.strip().splitlines()[-1].split()
    return float(wall), int(rss) / 1024, float(user) + float(system)


def operations(header, function):
    """(mul, add, div, sqrt) of `function` from the generated header's comment."""
    text = header.read_text()
    m = re.search(r"Operations: (\d+) mul, (\d+) add, (\d+) div, (\d+) sqrt[^\n]*\*/\nvoid \w+_%s\(" % function,
                  text)
    return tuple(map(int, m.groups())) if m else None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--skip-compile", action="store_true")
    ap.add_argument("--cases", nargs="*", default=None, help="subset of: solo12 talos_reduced tree100")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="symdyn-scale-"))
    tree = work / "tree100.yaml"
    tree.write_text(yaml.safe_dump(random_tree_description(100, seed=1)))
    cases = [("solo12", erd_path(ERD_TREES["solo12"]), True),
             ("talos_reduced", erd_path(ERD_TREES["talos_reduced"]), True),
             ("tree100", tree, False),
             ("tree100", tree, True)]
    cases = [c for c in cases if args.cases is None or c[0] in args.cases]
    print("### Generation of the full set, Python + C (`symdyn generate --lang python,c`, one process each)\n")
    print(f"Median wall time over {args.repeats} fresh processes, largest peak RSS.\n")
    print("| robot | base | nq | nv | wall (s) | target (s) | peak RSS (MB) | C size (MB) | Python size (MB) |")
    print("|---|---|---|---|---:|---:|---:|---:|---:|")
    out = {}
    for name, path, floating in cases:
        dest = work / (name + ("_floating" if floating else "_fixed"))
        cmd = [sys.executable, "-m", "symdyn", "generate", str(path), "--lang", "python,c", "--out", str(dest)]
        if floating:
            cmd.append("--floating-base")
        runs = [timed(cmd) for _ in range(args.repeats)]
        stem = path.stem
        header = dest / f"{stem}.h"
        nq = re.search(r"#define \w+_NQ (\d+)", header.read_text()).group(1)
        nv = re.search(r"#define \w+_NV (\d+)", header.read_text()).group(1)
        csize = (dest / f"{stem}.c").stat().st_size / 1e6
        pysize = (dest / f"{stem}.py").stat().st_size / 1e6
        print(f"| {name} | {'floating' if floating else 'fixed'} | {nq} | {nv} | "
              f"{statistics.median(w for w, _, _ in runs):.1f} | {TARGETS[name]} | {max(m for _, m, _ in runs):.0f} | "
              f"{csize:.1f} | {pysize:.1f} |", flush=True)
        out[(name, floating)] = (dest, stem, nv)

    print("\n### Operation counts with a floating base (mul / add / div / sqrt, from the generated headers)\n")
    print("| robot | nv | " + " | ".join(COUNTED) + " |")
    print("|---|---|" + "---:|" * len(COUNTED))
    for (name, floating), (dest, stem, nv) in out.items():
        if not floating:
            continue
        cells = [" / ".join(map(str, operations(dest / f"{stem}.h", fn))) for fn in COUNTED]
        print(f"| {name} | {nv} | " + " | ".join(cells) + " |")

    if not args.skip_compile and ("talos_reduced", True) in out:
        dest, stem, _ = out[("talos_reduced", True)]
        print("\n### Compiling the generated C of talos_reduced with a floating base\n")
        print("| compiler | C size (MB) | wall (s) | CPU (s) | peak RSS (MB) | target |\n|---|---:|---:|---:|---:|---|")
        for flags in (["-O2"],):
            wall, rss, cpu = timed(["gcc", *flags, "-std=c99", "-c", str(dest / f"{stem}.c"), "-o",
                               str(work / f"{stem}.o")])
            print(f"| gcc {' '.join(flags)} -c | {(dest / f'{stem}.c').stat().st_size / 1e6:.1f} | {wall:.1f} | {cpu:.1f} | "
                  f"{rss:.0f} | < 120 s, < 2048 MB |", flush=True)


if __name__ == "__main__":
    sys.exit(main())
