"""States per second of the batch entries against a loop of single-state calls, in one C program.

    python benchmarks/bench_batch.py                          # generated/panda.c, every function
    python benchmarks/bench_batch.py generated/ur5.c --count 8192 --threads 2
    python benchmarks/bench_batch.py generated/panda.c --functions mass_matrix,gravity
    python benchmarks/bench_batch.py before/panda.c generated/panda.c --rounds 4   # two modules, in turn
    python benchmarks/bench_batch.py --before 70c49d1 robots/panda.urdf --rounds 5   # a git ref's module and this one's

The module is compiled with load_c's flags (symdyn.codegen.c.loader.OPT_FLAGS, -fopenmp) together with a driver
that, for each function, times `count` random states three ways on the same arrays: the loop of
single calls (what load_c did before batch entries), the batch entry on one OpenMP thread, and on
--threads threads; best of --repeat runs, then median and range over --rounds runs of the driver. It also
times memset of the same output arrays (the bytes every way must store: the floor of both) and checks that
the batch gives the loop's numbers.

--split: where the time of each lane entry goes, and its roofline. One table per module, one thread, the lane
entries only (the others have no copy to take out): single calls | batch | x | lane loop alone | copy alone |
lane loop + memset | x | 2.5x target (issue 15's). The first two come from the plain driver; the others from one
more build of each module, for measurement only: a copy whose copies out of the lane blocks (sd_scatter; modules
before the one copy path also sd_scatter_map) start with a switch, sd_bench_copy, that its driver sets. 1: they return at once (an empty asm
reads the block, so the lane loop still stores it): the **lane loop alone**, with the input gather. 2: a memset
of the same rows instead: **lane loop + memset**, the output bytes stored the fastest way this machine stores
them, what a perfect copy could reach. 0: the module's copy, which the driver also calls on one block for every
block of `count` states into the same output arrays: the **copy alone**. A switch at run time rather than one
build per variant: the copy alone needs the real copy, and one branch per block of states costs nothing
measurable. The driver checks the switch (in 1 the rows stay as they were, in 2 they are zeros, in 0 they are
the loop of single calls').

    python benchmarks/bench_batch.py generated/panda.c --split --functions frame_jacobian,regressor --rounds 5

(--floor is another name of --split, the one of docs/perf-history.md "Batch frame Jacobian, issue 15".)

--before REF: the arguments are robot files; each is generated as C (`symdyn generate --lang c`, --functions and
--generate-args passed on) by the symdyn of REF (a temporary git worktree, as bench_c.py --before) and by this
checkout, both modules are timed in turn as above, and a last table gives after/before per function (batch, one
thread, and single calls): the batch half of issue 25's before/after in one run.

    python benchmarks/bench_batch.py --before 70c49d1 ~/solo12.urdf --generate-args=--floating-base --threads 1
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
from symdyn.codegen.c import loader as cload

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_c import REPO, ref_worktree  # noqa: E402  (the temporary worktree of --before, shared)

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
        for (long i = 0; i < count; ++i)
            %(prefix)s_%(name)s(%(single)s);
        %(prefix)s_%(name)s_batch(count, %(batch_check)s);
        printf("%(name)s %%g %%g %%g %%g %%g %%d\n", loop / count, one / count, many / count, %(diff)s, fill / count, %(entries)d);
%(free)s
    }
"""


def _scale(arg):
    return {"q": math.pi, "params": 0.0, "f_ext": 5.0}.get(arg, 2.0)


#: --split: the first line of the copies out of a lane block (symdyn/codegen/c/module.c.jinja), and the switch put there
_COPY = re.compile(r"^static void (sd_scatter|sd_scatter_map)\([^)]*\)\n\{\n", re.MULTILINE)
_SWITCH = r"""    if (sd_bench_copy) {      /* bench_batch.py --split: 1, the lane loop alone; 2, a memset instead */
        __asm__ volatile("" : : "r"(block) : "memory");
        if (sd_bench_copy == 2)
            __builtin_memset(rows, 0, (unsigned long)n * size * sizeof *rows);
        return;
    }
"""
#: a lane function's copy of a block into the rows: sd_scatter(sd_Y[0], sd_src_..., sd_fill_..., 686, sd_n, ...);
SCATTER_CALL = re.compile(r"^    (sd_scatter(?:_map)?)\(sd_\w+\[0\], (.*), sd_n, \w+ \+ sd_first \* \d+\);$",
                          re.MULTILINE)

SPLIT_FUNCTION = r"""
    {
%(alloc)s
        double bare = 1e30, floor = 1e30, copy = 1e30;
        for (int r = 0; r < repeat; ++r) {
            sd_bench_copy = 1;
            double t0 = now();
            %(prefix)s_%(name)s_batch(count, %(batch)s);
            double t1 = now();
            sd_bench_copy = 2;
            %(prefix)s_%(name)s_batch(count, %(batch)s);
            double t2 = now();
            bare = fmin(bare, t1 - t0); floor = fmin(floor, t2 - t1);
        }
        sd_bench_copy = 0;
        {   /* the copy alone: the module's own, on one block of values, for every block of `count` states */
            static double block[%(block)d][SD_LANES];
            for (int j = 0; j < %(block)d; ++j)
                for (int k = 0; k < SD_LANES; ++k)
                    block[j][k] = 1.0 + j + 0.01 * k;
            for (int r = 0; r < repeat; ++r) {
%(memset)s
                double t = now();
                for (long b = 0; b + SD_LANES <= count; b += SD_LANES) {
%(copies)s
                }
                copy = fmin(copy, now() - t);
            }
        }
        /* the switch at work: 1 leaves the rows as they were, 2 zeros them, 0 is the module's batch */
        long wrong = 0;
        sd_bench_copy = 1;
%(ones)s
        %(prefix)s_%(name)s_batch(count, %(batch_check)s);
%(count_ones)s
        sd_bench_copy = 2;
        %(prefix)s_%(name)s_batch(count, %(batch_check)s);
%(count_zeros)s
        sd_bench_copy = 0;
        %(prefix)s_%(name)s_batch(count, %(batch_check)s);
        for (long i = 0; i < count; ++i)
            %(prefix)s_%(name)s(%(single)s);
        printf("%(name)s %%g %%g %%g %%ld %%g\n", bare / count, floor / count, copy / count, wrong, %(diff)s);
%(free)s
    }
"""


def split_module(source, module):
    """The module's C with the switch sd_bench_copy (see --split) at the top of its copies out of the lane
    blocks, and {lane function: [(copy function, its arguments between the block and sd_n, output size)]}:
    its calls of them, which the driver makes again for the copy alone."""
    copies = {m.group(1): [(c.group(1), c.group(2), int(c.group(2).rsplit(", ", 1)[-1]))
                           for c in SCATTER_CALL.finditer(m.group(0))]
              for m in re.finditer(rf"^static void sd_{module}_(\w+)_lanes\(.*?^}}$", source, re.MULTILINE | re.DOTALL)}
    calls = len(re.findall(r"^ +sd_scatter(?:_map)?\(", source, re.MULTILINE))
    patched, found = _COPY.subn(lambda m: m.group(0) + _SWITCH, source)
    if not copies or sum(map(len, copies.values())) != calls or found != len({c[0] for cs in copies.values() for c in cs}):
        sys.exit(f"{module}.c: its copies out of the lane blocks are not those of symdyn/codegen/c/module.c.jinja "
                 f"({calls} calls, {sum(map(len, copies.values()))} found in {len(copies)} lane functions)")
    return "static int sd_bench_copy;    /* bench_batch.py --split */\n" + patched, copies


def _arrays(module, c_module, name):
    """The C fragments of one function's arrays: random inputs and outputs, the arguments of its calls."""
    entry = c_module._signatures[name]                    # the manifest's entry of the function
    args, lengths = [a["name"] for a in entry["args"]], [math.prod(a["shape"]) for a in entry["args"]]
    sizes = [math.prod(o["shape"]) for o in entry["outputs"]]
    alloc = [f"        double *in{k} = random_array(count * {n}L, {_scale(a)}, &seed);"
             for k, (a, n) in enumerate(zip(args, lengths))]
    alloc += [f"        for (long i = 0; i < count; ++i) for (int j = 0; j < {n}; ++j) "
              f"in{k}[i * {n} + j] = {module}_parameters[j];"
              for k, (a, n) in enumerate(zip(args, lengths)) if a == "params"]
    alloc += [f"        double *out{k} = random_array(count * {s}L, 0.0, &seed), "
              f"*chk{k} = random_array(count * {s}L, 0.0, &seed);" for k, s in enumerate(sizes)]
    free = "\n".join(f"        free(in{k});" for k in range(len(args)))
    free += "\n" + "\n".join(f"        free(out{k}); free(chk{k});" for k in range(len(sizes)))
    return sizes, dict(
        alloc="\n".join(alloc), prefix=module, name=name, free=free, entries=sum(sizes),
        single=", ".join([f"in{k} + i * {n}" for k, n in enumerate(lengths)]
                         + [f"out{k} + i * {s}" for k, s in enumerate(sizes)]),
        batch=", ".join([f"in{k}" for k in range(len(args))] + [f"out{k}" for k in range(len(sizes))]),
        batch_check=", ".join([f"in{k}" for k in range(len(args))] + [f"chk{k}" for k in range(len(sizes))]),
        diff=" + ".join(f"max_difference(chk{k}, out{k}, count * {s}L)" for k, s in enumerate(sizes)),
        memset="\n".join(f"            memset(out{k}, 0, count * {s}L * sizeof(double));" for k, s in enumerate(sizes)))


def driver(module, c_module, names, count, repeat, threads, copies=None):
    """The C driver: the plain one (the module's header), or with `copies` (see split_module) the one of
    --split, which includes the patched module's source and times the lane functions among `names`."""
    body = []
    for name in names:
        sizes, a = _arrays(module, c_module, name)
        if copies is None:
            body.append(FUNCTION % a)
            continue
        outs = iter(range(len(sizes)))
        a.update(block=max(size for _, _, size in copies[name]),
                 copies="\n".join(f"                    {fn}(block[0], {rest}, SD_LANES, out{next(outs)} + b * {size});"
                                  for fn, rest, size in copies[name]),
                 memset="\n".join("    " + line for line in a["memset"].splitlines()),   # as the batch finds the rows
                 ones="\n".join(f"        for (long i = 0; i < count * {s}L; ++i) chk{k}[i] = 1.0;"
                                for k, s in enumerate(sizes)),
                 count_ones="\n".join(f"        for (long i = 0; i < count * {s}L; ++i) wrong += chk{k}[i] != 1.0;"
                                      for k, s in enumerate(sizes)),
                 count_zeros="\n".join(f"        for (long i = 0; i < count * {s}L; ++i) wrong += chk{k}[i] != 0.0;"
                                       for k, s in enumerate(sizes)))
        body.append(SPLIT_FUNCTION % a)
    if copies is not None:       # the lanes of one thread, as the batch column
        body.insert(0, "    omp_set_num_threads(1);")
    include = f'#include "{module}.c"' if copies is not None else f'#include "{module}.h"'
    return DRIVER % dict(include=include, count=count, repeat=repeat, threads=threads, body="\n".join(body))


def build(c_path, names, args, folder, split=False, like=None):
    """The driver of one module, compiled into folder; returns its path. split: the driver of --split (a
    patched copy of the module included), of the lane functions among names; exits if there are none.
    like: the module whose signatures (load_c) stand for c_path's (an older module: no manifest to load)."""
    c_module = symdyn.load_c(like or c_path, lanes=False)  # its signatures (a quick compile)
    names = names or list(c_module._signatures)
    src = Path(folder) / "driver.c"
    sources = [str(c_path)]
    copies = None
    if split:
        patched, copies = split_module(c_path.read_text(), c_path.stem)
        names = [n for n in names if copies.get(n)]
        if not names:
            sys.exit(f"{c_path}: none of these functions has lane entries: nothing to split")
        (Path(folder) / c_path.name).write_text(patched)
        sources = []                                       # the driver includes it
    src.write_text(driver(c_path.stem, c_module, names, args.count, args.repeat, args.threads, copies))
    exe = Path(folder) / "driver"
    flags = [*cload.OPT_FLAGS, *cload.GCC_FLAGS, "-fopenmp", "-std=gnu99", *args.cflags.split()]
    if split:       # the copy inlined with the block's bounds: gcc warns of overflows it cannot rule out
        flags.append("-Wno-aggressive-loop-optimizations")
    print(" ".join([args.cc, *flags]), c_path, "(--split)" if split else "", file=sys.stderr, flush=True)
    subprocess.run([args.cc, *flags, f"-I{folder}", f"-I{c_path.parent}", str(src), *sources, "-o", str(exe), "-lm"],
                   check=True)
    return exe


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
    ap.add_argument("--split", "--floor", action="store_true",
                    help="instead, per lane entry: the lane loop alone, the copy alone, the lane loop + memset (the "
                         "roofline) beside the single calls and the batch, one thread")
    ap.add_argument("--before", metavar="REF", default=None,
                    help="the arguments are robot files: generate each with REF's symdyn and this checkout's, time both")
    ap.add_argument("--generate-args", default="", help="with --before: more options of symdyn generate")
    args = ap.parse_args()
    if args.before:
        with tempfile.TemporaryDirectory() as tmp, ref_worktree(args.before, show=False) as ref:
            pairs = [_before_after(Path(robot).resolve(), ref, Path(tmp), args) for robot in args.c_files]
            runs = _time_modules([p for pair in pairs for p in pair], args, like=[a for _, a in pairs for _ in "ba"])
        for (before, after), (b, a) in zip(pairs, zip(runs[::2], runs[1::2])):
            _print_before_after(before, after, b, a, args)
        return
    runs = _time_modules([Path(c).resolve() for c in args.c_files], args)


def _time_modules(paths, args, like=None):
    """Build every module's driver, run them in turn --rounds times and print their tables; each module's
    {function: one (loop, one, many, diff, fill, entries) per round}. like: per module, build's."""
    names = args.functions.split(",") if args.functions else None
    runs = [{} for _ in paths]                   # per module, function: one (loop, one, many, diff, fill, entries) per round
    splits = [{} for _ in paths]                 # --split: one (alone, + memset, copy, wrong, diff) per round
    with tempfile.TemporaryDirectory() as tmp:
        exes = []
        for k, c_path in enumerate(paths):
            (Path(tmp) / str(k)).mkdir()
            exes.append((build(c_path, names, args, Path(tmp) / str(k), like=like and like[k]), runs[k]))
            if args.split:
                (Path(tmp) / f"{k}-split").mkdir()
                exes.append((build(c_path, names, args, Path(tmp) / f"{k}-split", split=True), splits[k]))
        for _ in range(args.rounds):
            for exe, times in exes:
                out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
                for line in out.splitlines():
                    name, *values = line.split()
                    times.setdefault(name, []).append([float(v) for v in values])
    if args.split:
        for c_path, times, split in zip(paths, runs, splits):
            _print_split(c_path, times, split, args)
        return runs
    for c_path, times in zip(paths, runs):
        print(f"{c_path}: {args.count} random states, {args.rounds} rounds of best of {args.repeat}; ns per state: "
              f"median [range] over the rounds; x = median single calls / median batch; memset = the same bytes "
              f"of output written by memset (the store floor of both)\n")
        print(f"| function | single calls ns | batch 1 thread ns | x | batch {args.threads} threads ns | x | "
              f"M states/s (1 / {args.threads} threads) | output bytes per state | memset ns | max diff |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for name, rounds in times.items():
            loop, one, many, fill = ([r[k] * 1e9 for r in rounds] for k in (0, 1, 2, 4))
            diff = max(r[3] for r in rounds)
            m = {key: statistics.median(v) for key, v in (("loop", loop), ("one", one), ("many", many))}
            print(f"| {name} | {_spread(loop)} | {_spread(one)} | {m['loop'] / m['one']:.2f} | {_spread(many)} | "
                  f"{m['loop'] / m['many']:.2f} | {1e3 / m['one']:.1f} / {1e3 / m['many']:.1f} | {8 * rounds[0][5]:.0f} | "
                  f"{_spread(fill)} | {diff:.1e} |")
        print()
    return runs


def _before_after(robot, ref, folder, args):
    """(REF's module, this checkout's module) of one robot file, generated into folder/before, folder/after."""
    paths = []
    for side, repo in (("before", ref), ("after", REPO)):
        out = folder / side
        cmd = [sys.executable, "-m", "symdyn", "generate", str(robot), "--lang", "c", "--out", str(out),
               *(["--functions", args.functions] if args.functions else []), *args.generate_args.split()]
        env = dict(os.environ, PYTHONPATH=str(repo))
        if subprocess.run(cmd, cwd=repo, env=env, stdout=subprocess.DEVNULL).returncode:
            sys.exit(f"error: generation failed ({side}): {' '.join(cmd)}")
        paths.append(out / f"{robot.stem}.c")
    return paths


def _print_before_after(before, after, b, a, args):
    """after/before of one robot, per function both modules have: batch (one thread) and single calls."""
    print(f"{after.stem}: before = {args.before}, after = this checkout; ns per state, median over the rounds; "
          f"speed-up = before / after\n")
    print("| function | batch 1 thread before | after | speed-up | single calls before | after | speed-up |")
    print("|---|---|---|---|---|---|---|")
    for name in (n for n in a if n in b):
        one_b, one_a, loop_b, loop_a = (statistics.median(r[k] * 1e9 for r in side[name])
                                        for k, side in ((1, b), (1, a), (0, b), (0, a)))
        print(f"| {name} | {one_b:.0f} | {one_a:.0f} | {one_b / one_a:.2f} | {loop_b:.0f} | {loop_a:.0f} | "
              f"{loop_b / loop_a:.2f} |")
    print()


def _print_split(c_path, times, split, args):
    """One module's table of --split: its lane entries' time, split, and their roofline."""
    bad = [name for name, rounds in split.items() if any(r[3] or not r[4] < 1e-12 for r in rounds)]
    if bad:
        sys.exit(f"{c_path}: the switch of --split did not work in {', '.join(bad)} (see split_module)")
    print(f"{c_path}: {args.count} random states, {args.rounds} rounds of best of {args.repeat}; ns per state, one "
          f"thread, median [range] over the rounds; lane loop alone = the batch whose copies of the lane blocks into "
          f"the rows return at once (the input gather and the lane loop); copy alone = those copies alone; + memset = "
          f"the lane loop, then a memset of the rows for the copy (what a perfect copy could reach); x = median "
          f"single calls / median of the column before; target = single calls / 2.5\n")
    print("| function | single calls | batch | x | lane loop alone | copy alone | lane loop + memset | x | 2.5x target |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, rounds in split.items():
        loop, one = ([r[k] * 1e9 for r in times[name]] for k in (0, 1))
        bare, fill, copy = ([r[k] * 1e9 for r in rounds] for k in (0, 1, 2))
        m = {key: statistics.median(v) for key, v in (("loop", loop), ("one", one), ("fill", fill))}
        print(f"| {name} | {_spread(loop)} | {_spread(one)} | {m['loop'] / m['one']:.2f} | {_spread(bare)} | "
              f"{_spread(copy)} | {_spread(fill)} | {m['loop'] / m['fill']:.2f} | {m['loop'] / 2.5:.1f} |")
    print()


def _spread(values):
    """median [min-max] of one time per round, ns."""
    if len(values) == 1:
        return f"{values[0]:.0f}"
    return f"{statistics.median(values):.0f} [{min(values):.0f}-{max(values):.0f}]"


if __name__ == "__main__":
    main()
