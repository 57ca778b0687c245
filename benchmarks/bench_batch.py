"""States per second of the batch entries against a loop of single-state calls, in one C program.

    python benchmarks/bench_batch.py                          # generated/panda.c, every function
    python benchmarks/bench_batch.py generated/ur5.c --count 8192 --threads 2
    python benchmarks/bench_batch.py generated/panda.c --functions mass_matrix,gravity
    python benchmarks/bench_batch.py before/panda.c generated/panda.c --rounds 4   # two modules, in turn

The module is compiled with load_c's flags (symdyn.codegen.cload.OPT_FLAGS, -fopenmp) together with a driver
that, for each function, times `count` random states three ways on the same arrays: the loop of
single calls (what load_c did before batch entries), the batch entry on one OpenMP thread, and on
--threads threads; best of --repeat runs, then median and range over --rounds runs of the driver. It also
times memset of the same output arrays (the bytes every way must store: the floor of both) and checks that
the batch gives the loop's numbers.

--split also splits each lane entry's time: a copy of the module whose lane functions skip the copy of their
blocks into the rows (sd_scatter / sd_scatter_map replaced by a compiler barrier, so that the block is still
stored) times the lane loop alone (with the input gather); and the module's own sd_scatter_map / sd_scatter,
called on a block for every block of `count` states into the same output arrays, the copy alone.

    python benchmarks/bench_batch.py generated/panda.c --floor --functions frame_jacobian --rounds 5

--floor: the roofline of the lane entries. Two more builds of each module, measurement only (their outputs are
wrong): "alone", whose lane blocks are not copied out to the rows (sd_scatter / sd_scatter_map return at once:
the input gather and the lane loop), and "memset", whose copy is a memset of the same rows (the lane loop,
then the output bytes stored at memset's speed, the fastest way to store them). Timed in turn with the
module; "memset" is what a perfect copy of the blocks could reach. Functions without lane entries (tiny ones,
loops of single calls) are the same code in the three builds.
"""
import argparse
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import symdyn
from symdyn.codegen import cload
from symdyn.functions import out_dims, resolve

DRIVER = r"""
%(include)s
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

static double *random_array(long n, double scale, unsigned *seed)
{
    double *a = malloc(sizeof(double) * (n ? n : 1));
    for (long i = 0; i < n; ++i)
        a[i] = scale * (2.0 * rand_r(seed) / RAND_MAX - 1.0);
    return a;
}

static double max_difference(const double *a, const double *b, long n)
{
    double worst = 0.0, scale = 1.0;
    for (long i = 0; i < n; ++i)
        scale = fmax(scale, fabs(b[i]));
    for (long i = 0; i < n; ++i)
        worst = fmax(worst, fabs(a[i] - b[i]));
    return worst / scale;
}

int main(void)
{
    const long count = %(count)d;
    const int repeat = %(repeat)d, threads = %(threads)d;
    unsigned seed = 1;
%(body)s
    return 0;
}
"""

FUNCTION = r"""
    {
%(alloc)s
        double loop = 1e30, one = 1e30, many = 1e30, fill = 1e30;
        for (int r = 0; r < repeat; ++r) {
            double t = now();
%(memset)s
            fill = fmin(fill, now() - t);
            double t0 = now();
            for (long i = 0; i < count; ++i)
                %(prefix)s_%(name)s(%(single)s);
            double t1 = now();
            omp_set_num_threads(1);
            %(prefix)s_%(name)s_batch(count, %(batch)s);
            double t2 = now();
            omp_set_num_threads(threads);
            %(prefix)s_%(name)s_batch(count, %(batch)s);
            double t3 = now();
            loop = fmin(loop, t1 - t0); one = fmin(one, t2 - t1); many = fmin(many, t3 - t2);
        }
        double copy = 0.0;
%(copy)s
        for (long i = 0; i < count; ++i)
            %(prefix)s_%(name)s(%(single)s);
        %(prefix)s_%(name)s_batch(count, %(batch_check)s);
        printf("%(name)s %%g %%g %%g %%g %%g %%d %%g\n", loop / count, one / count, many / count, %(diff)s, fill / count, %(entries)d, copy / count);
%(free)s
    }
"""


def _scale(arg):
    return {"q": math.pi, "params": 0.0, "f_ext": 5.0}.get(arg, 2.0)


#: the copy of a lane block into the rows in a lane function: sd_scatter_map(sd_Y[0], sd_src_..., ...);
SCATTER_CALL = re.compile(r"^    (sd_scatter(?:_map)?)\((sd_\w+)\[0\], (.*), sd_n, \w+ \+ sd_first \* \d+\);$",
                          re.MULTILINE)
LANES = re.compile(r"^static void sd_\w+?_(\w+)_lanes\(.*?^}$", re.MULTILINE | re.DOTALL)

#: the copy alone: the module's own function, on one block of values, for every block of `count` states
COPY = r"""
        {
            static double block[%(entries)d][SD_LANES];
            for (int j = 0; j < %(entries)d; ++j)
                for (int k = 0; k < SD_LANES; ++k)
                    block[j][k] = 1.0 + j + 0.01 * k;
            copy = 1e30;
            for (int r = 0; r < repeat; ++r) {
%(rewrite)s
                double t = now();
                for (long b = 0; b + SD_LANES <= count; b += SD_LANES) {
%(calls)s
                }
                copy = fmin(copy, now() - t);
            }
        }"""


def lanes_alone(source):
    """The module's C with the copy of each lane block into the rows left out (a compiler barrier keeps the
    block's stores), and {function: [(copy function, its arguments but the block, output size)]}."""
    copies = {}
    for lanes in LANES.finditer(source):
        copies[lanes.group(1)] = [(m.group(1), m.group(3), int(m.group(3).rsplit(", ", 1)[-1]))
                                  for m in SCATTER_CALL.finditer(lanes.group(0))]
    alone = SCATTER_CALL.sub(r'    __asm__ volatile("" : : "r"(\2[0]) : "memory");', source)
    alone = re.sub(r"^static void (sd_scatter(?:_map)?)\(", r"__attribute__((unused)) static void \1(", alone,
                   flags=re.MULTILINE)
    return alone, copies


def driver(module, c_module, names, count, repeat, threads, copies=None):
    """The C driver; with `copies` (see lanes_alone) it includes the module's source and also times the copies."""
    body = []
    for name in names:
        fn, args = c_module._signatures[name]
        sizes = [math.prod(resolve(d, c_module._sizes)) for d in out_dims(fn)]
        alloc = [f"        double *in{k} = random_array(count * {c_module._size(a)}L, {_scale(a)}, &seed);"
                 for k, a in enumerate(args)]
        alloc += [f"        for (long i = 0; i < count; ++i) for (int j = 0; j < {c_module._size(a)}; ++j) "
                  f"in{k}[i * {c_module._size(a)} + j] = {module}_parameters[j];"
                  for k, a in enumerate(args) if a == "params"]
        alloc += [f"        double *out{k} = random_array(count * {s}L, 0.0, &seed), "
                  f"*chk{k} = random_array(count * {s}L, 0.0, &seed);" for k, s in enumerate(sizes)]
        single = ", ".join([f"in{k} + i * {c_module._size(a)}" for k, a in enumerate(args)]
                           + [f"out{k} + i * {s}" for k, s in enumerate(sizes)])
        batch = ", ".join([f"in{k}" for k in range(len(args))] + [f"out{k}" for k in range(len(sizes))])
        check = ", ".join([f"in{k}" for k in range(len(args))] + [f"chk{k}" for k in range(len(sizes))])
        diff = " + ".join(f"max_difference(chk{k}, out{k}, count * {s}L)" for k, s in enumerate(sizes))
        memset = "\n".join(f"            memset(out{k}, 0, count * {s}L * sizeof(double));" for k, s in enumerate(sizes))
        copy = ""
        if copies and copies.get(name):
            outs = iter(range(len(sizes)))
            calls = "\n".join(f"                    {fn}(block[0], {rest}, SD_LANES, out{next(outs)} + b * {size});"
                              for fn, rest, size in copies[name])
            rewrite = "\n".join("    " + line for line in memset.splitlines())   # as the batch finds the rows
            copy = COPY % {"entries": max(size for _, _, size in copies[name]), "calls": calls, "rewrite": rewrite}
        free = "\n".join(f"        free(in{k});" for k in range(len(args)))
        free += "\n" + "\n".join(f"        free(out{k}); free(chk{k});" for k in range(len(sizes)))
        body.append(FUNCTION % dict(alloc="\n".join(alloc), prefix=module, name=name, single=single, batch=batch,
                                    batch_check=check, diff=diff, free=free, memset=memset, entries=sum(sizes),
                                    copy=copy))
    include = f'#include "{module}.c"' if copies is not None else f'#include "{module}.h"'
    return DRIVER % dict(include=include, count=count, repeat=repeat, threads=threads, body="".join(body))


def build(c_path, names, args, folder, split=False):
    """The driver of one module, compiled into folder; returns its path. split: the driver of the module's
    lane loops alone, which also times the copies alone (see lanes_alone)."""
    c_module = symdyn.load_c(c_path, lanes=False)          # its signatures (a quick compile)
    names = names or list(c_module._signatures)
    src = Path(folder) / "driver.c"
    sources = [str(c_path)]
    copies = None
    if split:
        alone, copies = lanes_alone(c_path.read_text())
        (Path(folder) / c_path.name).write_text(alone)
        sources = []                                       # the driver includes it
    src.write_text(driver(c_path.stem, c_module, names, args.count, args.repeat, args.threads, copies))
    exe = Path(folder) / "driver"
    flags = [*cload.OPT_FLAGS, *cload.GCC_FLAGS, "-fopenmp", "-std=gnu99", *args.cflags.split()]
    if split:       # the copy inlined with the block's bounds: gcc warns of overflows it cannot rule out
        flags.append("-Wno-aggressive-loop-optimizations")
    print(" ".join([args.cc, *flags]), c_path, "(lane loops alone)" if split else "", file=sys.stderr, flush=True)
    subprocess.run([args.cc, *flags, f"-I{folder}", f"-I{c_path.parent}", str(src), *sources, "-o", str(exe), "-lm"],
                   check=True)
    return exe


#: the first line of the copies out of a lane block (templates/module.c.jinja), and what --floor puts there
_COPY = re.compile(r"^static void (sd_scatter|sd_scatter_map)\((?:[^)]*)\)\n\{\n", re.M)
_FLOORS = {"alone": '    __asm__ volatile("" : : "r"(block) : "memory");   /* the block is computed */\n    return;\n',
           "memset": '    __asm__ volatile("" : : "r"(block) : "memory");\n'
                     '    __builtin_memset(rows, 0, (unsigned long)n * size * sizeof *rows);\n    return;\n'}


def floor_module(c_path, kind, folder):
    """A copy of the module (and its header) in folder whose lane blocks are not copied out (kind "alone") or
    whose copy is a memset of the same rows ("memset"); measurement only."""
    text = c_path.read_text()
    patched, found = _COPY.subn(lambda m: m.group(0) + _FLOORS[kind], text)
    if not found:
        sys.exit(f"{c_path}: no lane block copy (sd_scatter) to replace: a module without lane entries?")
    folder.mkdir()
    (folder / c_path.name).write_text(patched)
    header = c_path.with_suffix(".h")
    (folder / header.name).write_text(header.read_text())
    return folder / c_path.name


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("c_files", nargs="*", default=[str(Path(__file__).resolve().parents[1] / "generated" / "panda.c")],
                    help="one module, or several (e.g. two commits' panda.c) timed in turn")
    ap.add_argument("--count", type=int, default=4096)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--rounds", type=int, default=1, help="runs of every module's driver, in turn (median and range)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--functions", default=None, help="comma-separated (default: every function of the module)")
    ap.add_argument("--cc", default=os.environ.get("CC", "cc"))
    ap.add_argument("--cflags", default="", help="more compiler flags, e.g. '-DPANDA_BATCH_LANES=4 -mprefer-vector-width=512'")
    one_of = ap.add_mutually_exclusive_group()
    one_of.add_argument("--split", action="store_true",
                        help="also time each lane entry's lane loop alone and its copy into the rows alone")
    one_of.add_argument("--floor", action="store_true", help="also time each module without its output copy and with a "
                    "memset instead (the roofline of the lane entries; a table per module)")
    args = ap.parse_args()
    names = args.functions.split(",") if args.functions else None
    paths = [Path(c).resolve() for c in args.c_files]
    alone = [{} for _ in paths]                  # --split: the same from the driver of the lane loops alone
    with tempfile.TemporaryDirectory() as tmp:
        if args.floor:
            paths = [p for c_path in paths
                     for p in (c_path, *(floor_module(c_path, kind, Path(tmp) / f"{kind}{k}")
                                         for kind in _FLOORS for k in [paths.index(c_path)]))]
        runs = [{} for _ in paths]               # per module, function: one (loop, one, many, diff, fill) per round
        exes = []
        for k, c_path in enumerate(paths):
            (Path(tmp) / str(k)).mkdir()
            exes.append((build(c_path, names, args, Path(tmp) / str(k)), runs[k]))
            if args.split:
                (Path(tmp) / f"{k}-split").mkdir()
                exes.append((build(c_path, names, args, Path(tmp) / f"{k}-split", split=True), alone[k]))
        for _ in range(args.rounds):
            for exe, times in exes:
                out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
                for line in out.splitlines():
                    name, *values = line.split()
                    times.setdefault(name, []).append([float(v) for v in values])
    if args.floor:
        _print_floor(paths, runs, args)
        return
    for c_path, times, split in zip(paths, runs, alone):
        print(f"{c_path}: {args.count} random states, {args.rounds} rounds of best of {args.repeat}; ns per state: "
              f"median [range] over the rounds; x = median single calls / median batch; memset = the same bytes "
              f"of output written by memset (the store floor of both)"
              + ("; lane loop = the batch entry on one thread without the copy of its blocks into the rows, copy = "
                 "that copy alone (sd_scatter_map / sd_scatter on every block)" if args.split else "") + "\n")
        extra = " lane loop ns | copy ns |" if args.split else ""
        print(f"| function | single calls ns | batch 1 thread ns | x | batch {args.threads} threads ns | x | "
              f"M states/s (1 / {args.threads} threads) | output bytes per state | memset ns |{extra} max diff |")
        print("|---|---|---|---|---|---|---|---|---|" + ("---|---|" if args.split else "") + "---|")
        for name, rounds in times.items():
            loop, one, many, fill = ([r[k] * 1e9 for r in rounds] for k in (0, 1, 2, 4))
            diff = max(r[3] for r in rounds)
            m = {key: statistics.median(v) for key, v in (("loop", loop), ("one", one), ("many", many))}
            extra = ""
            if args.split:
                lanes = [r[1] * 1e9 for r in split[name]] if split.get(name) and split[name][0][6] else None
                copy = [r[6] * 1e9 for r in split[name]] if lanes else None
                extra = f" {_spread(lanes) if lanes else '-'} | {_spread(copy) if copy else '-'} |"
            print(f"| {name} | {_spread(loop)} | {_spread(one)} | {m['loop'] / m['one']:.2f} | {_spread(many)} | "
                  f"{m['loop'] / m['many']:.2f} | {1e3 / m['one']:.1f} / {1e3 / m['many']:.1f} | {8 * rounds[0][5]:.0f} | "
                  f"{_spread(fill)} |{extra} {diff:.1e} |")
        print()


def _print_floor(paths, runs, args):
    """Per module: the batch (one thread) against its lane loop alone and with a memset for the copy."""
    for k in range(0, len(paths), 1 + len(_FLOORS)):
        times, alone, memset = runs[k:k + 3]
        print(f"{paths[k]}: the roofline of the lane entries, {args.count} random states, {args.rounds} rounds of best of "
              f"{args.repeat}; ns per state, median [range] over the rounds, one thread; alone: the gather and the lane "
              f"loop, no copy out of the block; + memset: then a memset of the rows for the copy; x = median single "
              f"calls / median of the column before\n")
        print("| function | single calls | batch | x | alone | + memset | x | copy - memset | 2.5x target |")
        print("|---|---|---|---|---|---|---|---|---|")
        for name, rounds in times.items():
            loop, one, bare, fill = ([r[k] * 1e9 for r in rs] for rs, k in
                                     ((rounds, 0), (rounds, 1), (alone[name], 1), (memset[name], 1)))
            m = {key: statistics.median(v) for key, v in (("loop", loop), ("one", one), ("fill", fill))}
            print(f"| {name} | {_spread(loop)} | {_spread(one)} | {m['loop'] / m['one']:.2f} | {_spread(bare)} | "
                  f"{_spread(fill)} | {m['loop'] / m['fill']:.2f} | {m['one'] - m['fill']:.1f} | {m['loop'] / 2.5:.1f} |")
        print()


def _spread(values):
    """median [min-max] of one time per round, ns."""
    if len(values) == 1:
        return f"{values[0]:.0f}"
    return f"{statistics.median(values):.0f} [{min(values):.0f}-{max(values):.0f}]"


if __name__ == "__main__":
    main()
