"""The batch entries of tiny functions against the loop of single calls and against the memory roofline.

    python benchmarks/bench_tiny.py                              # generated/panda.c: friction, base_parameters
    python benchmarks/bench_tiny.py before/panda.c after/panda.c --counts 256,4096 --rounds 7
    python benchmarks/bench_tiny.py after/panda.c --callgrind    # instructions per state (valgrind)

For each function and count, one C program (load_c's flags, module and driver compiled apart, as in
bench_batch.py) times, in turn per round: the loop of single calls, the batch entry on one thread, and
the roofline, a kernel that moves the same bytes and computes nothing: it reads every input double of
the batch once and writes every output double once, in two contiguous streams (a copy of the first
count * min(in, out) doubles, a sum over the rest of the input). No batch entry can be faster than it:
it bounds the speedup any batch can reach over the loop of single calls. Medians and ranges over
--rounds rounds, each the best of --repeat runs; several modules run in turn within each round.
"""
import argparse
import math
import os
import shutil
import statistics
import subprocess
import tempfile
from pathlib import Path

import symdyn
from symdyn.codegen.c import loader as cload
from symdyn.functions import out_dims, resolve

DRIVER = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "%(module)s.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

/* Reads n_in doubles and writes n_out, contiguous, no arithmetic to speak of. */
__attribute__((noinline)) static double roofline(long n_in, long n_out, const double *restrict in, double *restrict out)
{
    const long both = n_in < n_out ? n_in : n_out;
    double sum = 0.0;
#pragma omp simd
    for (long e = 0; e < both; ++e)
        out[e] = in[e];
#pragma omp simd reduction(+:sum)
    for (long e = both; e < n_in; ++e)
        sum += in[e];
#pragma omp simd
    for (long e = both; e < n_out; ++e)
        out[e] = sum;
    return sum;
}

int main(int argc, char **argv)
{
    const char *only = argc > 1 ? argv[1] : "";            /* single, batch or roofline: that alone (callgrind) */
    const int repeat = argc > 2 ? atoi(argv[2]) : %(repeat)d;
    volatile double sink = 0.0;
    srand(1);
%(body)s
    (void)sink;
    return 0;
}
"""

FUNCTION = r"""
    {
        const long count = %(count)dL, n_in = %(n_in)d, n_out = %(n_out)d;
        double *in = malloc(sizeof(double) * count * n_in), *out = malloc(sizeof(double) * count * n_out);
        for (long i = 0; i < count; ++i)
            for (int j = 0; j < n_in; ++j)
                in[i * n_in + j] = %(fill)s;
        memset(out, 0, sizeof(double) * count * n_out);
        double t[3] = {1e30, 1e30, 1e30};
        for (int r = 0; r < repeat; ++r) {
            double t0 = now();
            if (!*only || !strcmp(only, "single"))
                for (long i = 0; i < count; ++i)
                    %(prefix)s_%(name)s(%(single)s);
            double t1 = now();
            if (!*only || !strcmp(only, "batch"))
                %(prefix)s_%(name)s_batch(count, %(batch)s);
            double t2 = now();
            if (!*only || !strcmp(only, "roofline"))
                sink += roofline(count * n_in, count * n_out, in, out);
            double t3 = now();
            t[0] = t1 - t0 < t[0] ? t1 - t0 : t[0];
            t[1] = t2 - t1 < t[1] ? t2 - t1 : t[1];
            t[2] = t3 - t2 < t[2] ? t3 - t2 : t[2];
        }
        if (!*only)
            printf("%(name)s %%ld %%g %%g %%g\n", count, t[0] / count, t[1] / count, t[2] / count);
        free(in);
        free(out);
    }
"""


def driver(module, c_module, names, counts, repeat):
    body = []
    for name in names:
        fn, args = c_module._signatures[name]
        sizes = [c_module._size(a) for a in args]
        outs = [math.prod(resolve(d, c_module._sizes)) for d in out_dims(fn)]
        n_in, n_out = sum(sizes), sum(outs)
        if len(args) != 1 or len(outs) != 1:
            raise SystemExit(f"{name}: bench_tiny.py takes functions of one argument and one output")
        # parameters: the robot's, each scaled by 1 +- 1 %; velocities uniform in [-2, 2]
        fill = (f"{module}_parameters[j] * (1.0 + 0.01 * (rand() / (double)RAND_MAX))" if args[0] == "params"
                else "4.0 * rand() / RAND_MAX - 2.0")
        for count in counts:
            body.append(FUNCTION % dict(count=count, n_in=n_in, n_out=n_out, fill=fill, prefix=module, name=name,
                                        single=f"in + i * {n_in}, out + i * {n_out}", batch="in, out"))
    return DRIVER % dict(module=module, repeat=repeat, body="".join(body))


def build(c_path, names, counts, args, folder, extra=()):
    c_module = symdyn.load_c(c_path, lanes=False)          # its signatures (a quick compile)
    src = Path(folder) / "driver.c"
    src.write_text(driver(c_path.stem, c_module, names, counts, args.repeat))
    exe = Path(folder) / "driver"
    flags = [*cload.OPT_FLAGS, *cload.GCC_FLAGS, "-fopenmp", "-std=gnu99", *args.cflags.split(), *extra]
    objects = []
    for c in (src, c_path):                                  # apart: the single calls are not inlined
        obj = Path(folder) / (c.stem + ".o")
        subprocess.run([args.cc, *flags, f"-I{c_path.parent}", "-c", str(c), "-o", str(obj)], check=True)
        objects.append(str(obj))
    subprocess.run([args.cc, *flags, *objects, "-o", str(exe), "-lm"], check=True)
    return exe


def callgrind(exe, kind, repeat):
    """Instructions of `repeat` runs of `kind` (the program's setup subtracted: 1 run less)."""
    counts = []
    for reps in (1, repeat + 1):
        out = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", str(exe), kind,
                              str(reps)], capture_output=True, text=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
        counts.append(int(next(line for line in out.stderr.splitlines() if "Collected" in line).split()[-1]))
    return (counts[1] - counts[0]) / repeat


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("c_files", nargs="*", default=[str(Path(__file__).resolve().parents[1] / "generated" / "panda.c")])
    ap.add_argument("--functions", default="friction,base_parameters")
    ap.add_argument("--counts", default="256,4096")
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--callgrind", action="store_true",
                    help="instructions per state instead of times (an AVX2 build, -march=x86-64-v3: valgrind "
                         "does not decode AVX-512)")
    ap.add_argument("--cc", default=os.environ.get("CC", "cc"))
    ap.add_argument("--cflags", default="", help="more compiler flags, e.g. -DSYMDYN_NO_LANES")
    args = ap.parse_args()
    names, counts = args.functions.split(","), [int(c) for c in args.counts.split(",")]
    paths = [Path(c).resolve() for c in args.c_files]
    with tempfile.TemporaryDirectory() as tmp:
        if args.callgrind:
            if not shutil.which("valgrind"):
                raise SystemExit("valgrind not found")
            for k, c_path in enumerate(paths):
                for name in names:
                    folder = Path(tmp) / f"{k}{name}"
                    folder.mkdir()
                    exe = build(c_path, [name], counts[-1:], args, folder, ["-march=x86-64-v3"])
                    # not the roofline: gcc makes its copy a memcpy, whose `rep movsb` valgrind counts per byte
                    row = {kind: callgrind(exe, kind, 3) / counts[-1] for kind in ("single", "batch")}
                    print(f"{c_path} {name} {counts[-1]} states: instructions per state: "
                          + ", ".join(f"{kind} {n:.1f}" for kind, n in row.items()))
            return
        exes = []
        for k, c_path in enumerate(paths):
            (Path(tmp) / str(k)).mkdir()
            exes.append(build(c_path, names, counts, args, Path(tmp) / str(k)))
        times = [{} for _ in paths]
        for _ in range(args.rounds):
            for exe, got in zip(exes, times):
                out = subprocess.run([str(exe)], check=True, capture_output=True, text=True,
                                     env={**os.environ, "OMP_NUM_THREADS": "1"}).stdout
                for line in out.splitlines():
                    name, count, *values = line.split()
                    got.setdefault((name, int(count)), []).append([float(v) * 1e9 for v in values])
    print(f"load average {os.getloadavg()[0]:.1f}; ns per state, median [range] of {args.rounds} rounds, "
          f"each the best of {args.repeat}; x = single / batch, ceiling = single / roofline\n")
    print("| module | function | states | single calls | batch | roofline | x | ceiling |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for c_path, got in zip(paths, times):
        for (name, count), rows in got.items():
            cols = list(zip(*rows))
            med = [statistics.median(c) for c in cols]
            text = [f"{m:.2f} [{min(c):.2f}-{max(c):.2f}]" for m, c in zip(med, cols)]
            print(f"| {c_path.parent.name}/{c_path.name} | {name} | {count} | {text[0]} | {text[1]} | {text[2]} | "
                  f"{med[0] / med[1]:.2f} | {med[0] / med[2]:.2f} |")


if __name__ == "__main__":
    main()
