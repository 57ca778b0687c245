"""The cost of load_c's flags: the Panda's C module (generated/panda.c) loaded with load_c's
optimization flags, with and without gcc's SLP vectorizer (docs/perf-history.md "gcc's SLP vectorizer turned off"),
and with 256-bit
vectors instead. ns per state, best of 9 batches of 4000 states looped in C.

    python benchmarks/bench_opt_flags.py
"""
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import numpy as np  # noqa: E402

import symdyn  # noqa: E402
import symdyn.codegen.c.loader as cload  # noqa: E402
from conftest import function_args  # noqa: E402
from symdyn.functions import ALL_BY_NAME  # noqa: E402

BASE = ("-O3", "-ffp-contract=fast", "-march=native")
SETS = {"default": BASE, "no-slp": BASE + ("-fno-tree-slp-vectorize",),
        "vw256": BASE + ("-mprefer-vector-width=256",)}
N, REPEAT = 4000, 9


def main():
    os.environ.setdefault("SYMDYN_CACHE", tempfile.mkdtemp(prefix="symdyn-bench-"))
    cload.GCC_FLAGS = ()                              # the sets above say exactly what is compiled
    modules = {}
    for key, flags in SETS.items():
        cload.OPT_FLAGS = flags
        modules[key] = symdyn.load_c(ROOT / "generated" / "panda.c")
    rng = np.random.default_rng(0)
    q, qd, x = (rng.uniform(-1, 1, (N, 7)) for _ in range(3))
    print("%-36s" % "function", *("%9s" % k for k in SETS), "  (ns per state)")
    total = dict.fromkeys(SETS, 0.0)
    for name, fn in ALL_BY_NAME.items():
        if not hasattr(modules["default"], name) or "params" in fn.args:
            continue
        args = function_args(fn, q, qd, x, nf=3)
        row = []
        for key in SETS:
            f = getattr(modules[key], name)
            f(*args)
            best = min(_time(f, args) for _ in range(REPEAT))
            row.append(best / N * 1e9)
            total[key] += row[-1]
        print("%-36s" % name, *("%9.1f" % t for t in row))
    print("%-36s" % "sum", *("%9.1f" % total[k] for k in SETS),
          "  no-slp/default %.3f" % (total["no-slp"] / total["default"]))


def _time(f, args):
    start = time.perf_counter()
    f(*args)
    return time.perf_counter() - start


if __name__ == "__main__":
    main()
