#!/usr/bin/env python3
"""Time Pinocchio's C++ and symdyn-generated C side by side in one process.

Builds ``benchmarks/cpp/bench.cpp`` against the Pinocchio installed by the
``pin`` wheel (cmeel prefix), builds each robot's generated module as a shared
library that the harness loads, runs it for each robot and prints Markdown.
Issue 26's table (benchmarks/README.md; ``run_all.py --only pinocchio``):

    python benchmarks/bench_c.py --generate --generated /tmp/gen \
        --robots panda ur5 baxter solo12 anymal talos_reduced \
        --march-native --pinocchio-inline --table --iterations 5000 --reps 11

``--generate`` first writes each robot's module into ``--generated`` with this
checkout's symdyn: the 11 functions of the table (TABLE_FUNCTIONS), the frames
of FRAMES, ``--floating-base`` for the robots loaded with a free-flyer root
(FLOATING: solo12, anymal, talos_reduced; ``--floating NAME ...`` to choose),
the options of GENERATE_OPTIONS; and reports the CPU seconds of generation and
compile. Without it, ``<generated>/R.c``, ``R.h`` and ``R.json`` (the manifest:
sizes, FRAMES) are used as they are, and the harness times every function the
module has; a robot without them is timed with Pinocchio only:

    python benchmarks/bench_c.py --robots panda ur5 xarm7          # Pinocchio only

``--march-native --pinocchio-inline`` give both sides -march=native, Pinocchio's
algorithms compiled from its headers into the harness (without them: baseline
x86-64 and the wheel's precompiled libpinocchio_default).

``--contacts solo12`` (or ``NAME=FRAME,...``) also times Pinocchio's
constraintDynamics and impulseDynamics on point contacts of those frames, and,
when the module was generated with the same ``--contact`` (R_NC rows),
R_constrained_forward_dynamics and R_impact beside them:

    symdyn generate solo12.urdf --floating-base --contact FL_FOOT,FR_FOOT,HL_FOOT,HR_FOOT --lang c --out /tmp/gen
    python benchmarks/bench_c.py --generated /tmp/gen --robots solo12 --contacts solo12

Before/after a change (issue 25): ``--before REF`` (any git ref, e.g. ``main`` or a commit) also generates
each module with the symdyn of REF, from a temporary ``git worktree`` (same options; its ``symdyn generate``
must accept them), and the harness loads both modules into one process: Pinocchio, REF's C and this
checkout's C are checked against Pinocchio on the same states and timed in the same repetitions (the three
take turns going first). It implies ``--generate``, into ``<build-dir>/generated`` and ``.../before`` unless
``--generated`` is given, and prints, per robot and function, Pinocchio/before, Pinocchio/after and the
speed-up before ns / after ns (medians over the processes, ranges), before the usual table:

    python benchmarks/bench_c.py --before main --robots panda ur5 solo12 \
        --march-native --pinocchio-inline --iterations 5000 --reps 11

Compiling bench.cpp takes minutes (Pinocchio's templates; ~4 min of CPU with
--pinocchio-inline) but happens once per set of flags: it is robot-independent.
The harness and the modules' libraries are cached in benchmarks/cpp/build/ and
rebuilt only when bench.cpp, the generated R.c or a compile command changes.
Each robot is run in ``--runs`` fresh processes; in each, every function is
checked against Pinocchio on every state of the pool, then timed ``--reps``
times (round-robin over functions, Pinocchio and symdyn interleaved) and the
medians are reported.  ``--show-cmd`` prints the exact compile and run commands.

Needs: g++/gcc, ``pip install pin example-robot-data cmeel-urdfdom-headers``.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import datetime
import hashlib
import json
import os
import re
import shlex
import shutil
import site
import statistics
import subprocess
import sys
import sysconfig
import tempfile
from contextlib import contextmanager
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
BENCH_SRC = HERE / "cpp" / "bench.cpp"

# --------------------------------------------------------------------------
# Compile flags: the single place to change them.
# --------------------------------------------------------------------------
CXX = os.environ.get("CXX", "g++")
CC = os.environ.get("CC", "gcc")
# Shared by the harness (C++) and generated code (C).  -std=c99 / -std=c++17 turn floating-point
# contraction off (GNU modes have it on); -ffp-contract=fast gives both sides the FMAs that
# symdyn.load_c compiles with (its flags: -O3 -ffp-contract=fast -march=native).
OPT_FLAGS = ["-O3", "-DNDEBUG", "-ffp-contract=fast"]
CXX_FLAGS = ["-std=c++17", "-Wall", "-Wno-unused-local-typedefs", "-Wno-deprecated-declarations"]
# -fno-tree-slp-vectorize: as load_c with gcc (gcc 12.2 miscompiles some generated C with AVX-512;
# docs/api.md, docs/perf-history.md "gcc's SLP vectorizer turned off")
C_FLAGS = ["-std=c99", "-Wall", "-fno-tree-slp-vectorize"]
# The Pinocchio wheel is built for the x86-64 baseline (SSE2, 16-byte Eigen
# alignment).  With --march-native, the harness must keep Eigen's alignment
# at 16 bytes so that Model/Data objects created by libpinocchio are ABI-compatible.
NATIVE_FLAGS = ["-march=native"]
NATIVE_CXX_DEFINES = [
    "-DEIGEN_MAX_ALIGN_BYTES=16",
    "-DEIGEN_MAX_STATIC_ALIGN_BYTES=16",
    "-DEIGEN_MALLOC_ALREADY_ALIGNED=1",
]
# Pinocchio libraries the harness links (URDF parser + precompiled algorithms).
PIN_LIBS = ["pinocchio_parsers", "pinocchio_default"]
# Fallback if pinocchioTargets.cmake cannot be read (values of pin 4.1.0).
PIN_DEFINES_FALLBACK = [
    "BOOST_MPL_LIMIT_LIST_SIZE=30",
    "BOOST_MPL_LIMIT_VECTOR_SIZE=30",
    "BOOST_MPL_CFG_NO_PREPROCESSED_HEADERS",
    "BOOST_FUSION_INVOKE_MAX_ARITY=12",
    "PINOCCHIO_ENABLE_TEMPLATE_INSTANTIATION",
    "PINOCCHIO_WITH_URDFDOM",
]
# Targets whose INTERFACE_COMPILE_DEFINITIONS we use.
PIN_TARGETS = ["pinocchio_headers", "pinocchio_default", "pinocchio_parsers"]

# --------------------------------------------------------------------------
# Robots: name -> (URDF path relative to example-robot-data/robots, locked joints)
# The name is the stem of the generated module (<name>.c); robots in FLOATING are
# loaded by Pinocchio with a free-flyer root joint (generate them with
# `symdyn generate --floating-base`).
# --------------------------------------------------------------------------
ROBOTS = {
    "panda": ("panda_description/urdf/panda.urdf", ["panda_finger_joint1", "panda_finger_joint2"]),
    "ur5": ("ur_description/urdf/ur5_robot.urdf", []),
    "baxter": ("baxter_description/urdf/baxter.urdf", []),
    "solo12": ("solo_description/robots/solo12.urdf", []),
    "anymal": ("anymal_c_simple_description/urdf/anymal.urdf", []),
    "talos_reduced": ("talos_data/robots/talos_reduced.urdf", []),
    "xarm7": ("xarm_description/urdf/xarm7.urdf", []),
    "z1": ("z1_description/urdf/z1.urdf", []),
    # not in example-robot-data: bundled here (benchmarks/robots/README.md names its source and license)
    "iiwa14": (str(Path(__file__).resolve().parent / "robots" / "iiwa14.urdf"), []),
}
DEFAULT_ROBOTS = ["panda", "ur5", "xarm7"]
FLOATING = {"solo12", "anymal", "talos_reduced"}
# --contacts NAME: the point contacts (frames) a robot stands on by default
CONTACTS = {"solo12": "FL_FOOT,FR_FOOT,HL_FOOT,HR_FOOT"}
# --generate: the frames of the frame Jacobians (end effectors, feet) and the functions of the table
FRAMES = {
    "panda": "panda_hand", "ur5": "tool0", "baxter": "left_gripper,right_gripper",
    "solo12": "FL_FOOT,FR_FOOT,HL_FOOT,HR_FOOT", "anymal": "LF_FOOT,RF_FOOT,LH_FOOT,RH_FOOT",
    "talos_reduced": "left_sole_link,right_sole_link", "xarm7": "link7", "z1": "link06",
    "iiwa14": "lbr_iiwa_link_7",
}
# --generate: further options of a robot (Pinocchio's URDF parser keeps mimic joints as joints of their own)
GENERATE_OPTIONS = {"baxter": ["--mimic", "independent"]}
TABLE_FUNCTIONS = ("inverse_dynamics,gravity,mass_matrix,forward_dynamics,mass_matrix_inverse,coriolis_matrix,"
                   "frame_jacobian,centroidal_momentum_matrix,inverse_dynamics_derivatives,"
                   "forward_dynamics_derivatives,regressor")


# --------------------------------------------------------------------------
# Locating the cmeel prefix (Pinocchio, Eigen, Boost, urdfdom)
# --------------------------------------------------------------------------
def find_cmeel_prefix() -> Path:
    candidates = []
    for d in [*site.getsitepackages(), site.getusersitepackages(),
              sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"], *sys.path]:
        if d:
            candidates.append(Path(d) / "cmeel.prefix")
    for c in candidates:
        if (c / "include" / "pinocchio").is_dir() and (c / "lib").is_dir():
            return c
    sys.exit("error: no cmeel.prefix with include/pinocchio found; `pip install pin`")


class Toolchain:
    def __init__(self, prefix: Path):
        self.prefix = prefix
        inc = prefix / "include"
        self.lib_dir = prefix / "lib"
        eigen = inc / "eigen3"
        if not (eigen / "Eigen" / "Core").is_file():
            sys.exit(f"error: Eigen not found in {eigen}; `pip install cmeel-eigen`")
        if not (inc / "boost" / "version.hpp").is_file():
            sys.exit(f"error: Boost headers not found in {inc}; `pip install cmeel-boost`")
        if not (inc / "urdf_model").is_dir() and not (inc / "urdfdom_headers").is_dir():
            print("warning: urdfdom headers not found; `pip install cmeel-urdfdom-headers`",
                  file=sys.stderr)
        self.include_dirs = [inc, eigen]
        for extra in ["urdfdom_headers", "urdfdom"]:
            if (inc / extra).is_dir():
                self.include_dirs.append(inc / extra)
        for lib in PIN_LIBS:
            if not (self.lib_dir / f"lib{lib}.so").exists():
                sys.exit(f"error: lib{lib}.so not in {self.lib_dir}")
        self.defines = self._pin_defines()
        ex = prefix / "share" / "example-robot-data" / "robots"
        self.robots_dir = ex if ex.is_dir() else None

    def _pin_defines(self) -> list[str]:
        path = self.prefix / "lib" / "cmake" / "pinocchio" / "pinocchioTargets.cmake"
        try:
            text = path.read_text()
        except OSError:
            return list(PIN_DEFINES_FALLBACK)
        defines: list[str] = []
        for target in PIN_TARGETS:
            m = re.search(
                r"set_target_properties\(pinocchio::%s PROPERTIES(.*?)\n\)" % target, text, re.S)
            if not m:
                continue
            d = re.search(r'INTERFACE_COMPILE_DEFINITIONS "([^"]*)"', m.group(1))
            if not d:
                continue
            for item in d.group(1).split(";"):
                if item and "$<" not in item and "\\$" not in item and item not in defines:
                    defines.append(item)
        return defines or list(PIN_DEFINES_FALLBACK)

    def cxx_command(self, out: Path, *, native=False, pin_inline=False) -> list[str]:
        defines = [d for d in self.defines
                   if not (pin_inline and d == "PINOCCHIO_ENABLE_TEMPLATE_INSTANTIATION")]
        cmd = [CXX, *OPT_FLAGS, *CXX_FLAGS]
        if native:
            cmd += NATIVE_FLAGS + NATIVE_CXX_DEFINES
        cmd += [f"-D{d}" for d in defines]
        cmd += [f"-I{d}" for d in self.include_dirs]
        cmd += [str(BENCH_SRC), "-o", str(out), "-ldl"]
        cmd += [f"-L{self.lib_dir}", f"-Wl,-rpath,{self.lib_dir}",
                f"-Wl,-rpath-link,{self.lib_dir}"]
        cmd += [f"-l{lib}" for lib in PIN_LIBS]
        return cmd

    @staticmethod
    def cc_command(src: Path, out: Path, *, native=False) -> list[str]:
        """The generated C as a shared library (the harness loads it): single calls only, so the batch
        entries are built as loops of single calls (-DSYMDYN_NO_LANES, much faster to compile)."""
        cmd = [CC, *OPT_FLAGS, *C_FLAGS]
        if native:
            cmd += NATIVE_FLAGS
        return cmd + ["-fPIC", "-shared", "-DSYMDYN_NO_LANES", str(src), "-o", str(out)]


def run(cmd: list[str], show: bool) -> float:
    """Run `cmd`; its CPU seconds (user + system, the compiler's own: the machine may be shared)."""
    if show:
        print("$ " + shlex.join(cmd), file=sys.stderr)
    proc = subprocess.Popen(cmd)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise RuntimeError(f"command failed ({proc.returncode}): {shlex.join(cmd)}")
    return usage.ru_utime + usage.ru_stime


def build_key(native: bool, pin_inline: bool) -> str:
    return ("native" if native else "base") + ("-inline" if pin_inline else "")


class Build:
    """One benchmark executable: the commands producing it and their inputs."""

    def __init__(self, exe: Path, commands: list[list[str]], inputs: list[Path]):
        self.exe, self.commands, self.inputs = exe, commands, inputs
        self.cpu_seconds = None           # set when built by this process

    def stamp(self) -> str:
        h = hashlib.sha256()
        for c in self.commands:
            h.update(shlex.join(c).encode() + b"\n")
        for f in self.inputs:
            h.update(f.read_bytes())
        return h.hexdigest()

    def up_to_date(self) -> bool:
        st = self.exe.with_suffix(".stamp")
        return self.exe.is_file() and st.is_file() and st.read_text() == self.stamp()

    def run(self, show: bool) -> None:
        stamp = self.stamp()  # inputs as they are when compilation starts
        self.exe.with_suffix(".stamp").unlink(missing_ok=True)
        self.cpu_seconds = sum(run(c, show) for c in self.commands)
        self.exe.with_suffix(".stamp").write_text(stamp)


def module_args(gen_dir: Path, robot: str) -> list[str]:
    """The harness's --module/--prefix/--sizes/--frames for <gen_dir>/<robot>: read from the module's
    manifest (<robot>.json), the base parameters' count from its header."""
    manifest = json.loads((gen_dir / f"{robot}.json").read_text())
    z = manifest["sizes"]
    header = (gen_dir / f"{robot}.h").read_text()
    m = re.search(r"^#define\s+\w+_NUM_BASE_PARAMS\s+(\d+)", header, re.M)
    nb = int(m.group(1)) if m and f"{robot}_base_regressor(" in header else 0
    sizes = ",".join(str(x) for x in (z["nq"], z["nv"], z["np"], nb, z["nf"], z["nc"]))
    return [f"--prefix={manifest['module']}", f"--sizes={sizes}", "--frames=" + ",".join(manifest["frames"])]


def plan_builds(tc: Toolchain, build_dir: Path, robot: str, gen_dir: Path | None,
                args: argparse.Namespace, before_dir: Path | None = None) -> list[Build]:
    """The harness (robot-independent: compiled once per set of flags, minutes for Pinocchio's templates)
    and, with gen_dir, <gen_dir>/<robot>.c as a shared library that the harness loads (and, with before_dir,
    <before_dir>/<robot>.c as a second one). All are cached: rebuilt only when a command or an input changes."""
    key = build_key(args.march_native, args.pinocchio_inline)
    exe = build_dir / f"bench-{key}"
    builds = [Build(exe, [tc.cxx_command(exe, native=args.march_native, pin_inline=args.pinocchio_inline)],
                    [BENCH_SRC])]
    if gen_dir is not None:
        lib = build_dir / f"{robot}-{key}.so"
        src = gen_dir / f"{robot}.c"
        builds.append(Build(lib, [tc.cc_command(src, lib, native=args.march_native)], [src]))
    if gen_dir is not None and before_dir is not None:
        lib = build_dir / f"{robot}-before-{key}.so"
        src = before_dir / f"{robot}.c"
        builds.append(Build(lib, [tc.cc_command(src, lib, native=args.march_native)], [src]))
    return builds


def build_all(builds: list[Build], args: argparse.Namespace) -> None:
    """Compile (in parallel) every executable that is not up to date."""
    todo = {b.exe: b for b in builds if args.rebuild or not b.up_to_date()}
    if not todo:
        return
    print(f"building {len(todo)} executable(s), this takes a few minutes each ...",
          file=sys.stderr)
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futs = [pool.submit(b.run, args.show_cmd) for b in todo.values()]
        errors = [f.exception() for f in futs if f.exception()]
    if errors:
        sys.exit("error: " + "\n".join(map(str, errors)))


def aggregate(runs: list[dict]) -> dict:
    """Combine one function's rows from several runs: median times, median of
    the per-run ratios (Pinocchio and symdyn are interleaved within a run),
    worst error."""
    def med(key):
        vals = [r.get(key) for r in runs if r.get(key) is not None]
        return statistics.median(vals) if vals else None

    out = dict(runs[0])
    out["pinocchio_ns"] = med("pinocchio_ns")
    out["symdyn_ns"] = med("symdyn_ns")
    out["ratio"] = med("ratio")
    out["ratios"] = [r["ratio"] for r in runs if r["ratio"] is not None]
    out["ratio_of_minima"] = med("ratio_of_minima")
    errs = [r["max_rel_err"] for r in runs if r["max_rel_err"] is not None]
    out["max_rel_err"] = max(errs) if errs else None
    out["runs"] = len(runs)
    if "before_ns" in runs[0]:
        out.update(aggregate_before(runs))
    return out


def aggregate_before(runs: list[dict]) -> dict:
    """--before: per-run ratios Pinocchio/before and before/after (the three are interleaved within a run),
    their medians over the runs, and the before module's median ns and worst error."""
    def per_run(num, den):
        return [r[num] / r[den] for r in runs if r.get(num) and r.get(den)]

    out = {"ratios_before": per_run("pinocchio_ns", "before_ns"), "speedups": per_run("before_ns", "symdyn_ns")}
    out["ratio_before"] = statistics.median(out["ratios_before"]) if out["ratios_before"] else None
    out["speedup"] = statistics.median(out["speedups"]) if out["speedups"] else None
    ns = [r["before_ns"] for r in runs if r.get("before_ns") is not None]
    out["before_ns"] = statistics.median(ns) if ns else None
    errs = [r["before_max_rel_err"] for r in runs if r.get("before_max_rel_err") is not None]
    out["before_max_rel_err"] = max(errs) if errs else None
    return out


def fmt(x, spec):
    return "—" if x is None else format(x, spec)


#: the compact table's columns: function -> heading (issue 26's order)
COLUMNS = {"inverse_dynamics": "ID", "gravity": "g", "mass_matrix": "M", "forward_dynamics": "FD",
           "mass_matrix_inverse": "M⁻¹", "coriolis_matrix": "C", "frame_jacobian": "J",
           "centroidal_momentum_matrix": "Ag", "inverse_dynamics_derivatives": "∂ID",
           "forward_dynamics_derivatives": "∂FD", "regressor": "Y"}


def compact(rows: list[dict], cell) -> str:
    """One line per robot, one column per function of COLUMNS; cell(row) -> text."""
    robots = list(dict.fromkeys(r["robot"] for r in rows))
    by = {(r["robot"], r["function"]): r for r in rows}
    lines = ["| robot | nv | " + " | ".join(COLUMNS.values()) + " |",
             "|---|---:|" + "---:|" * len(COLUMNS)]
    for robot in robots:
        nv = next(r["dof"] for r in rows if r["robot"] == robot)
        cells = [cell(by[robot, f]) if (robot, f) in by else "—" for f in COLUMNS]
        lines.append(f"| {robot} | {nv} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def ratio_cell(r: dict) -> str:
    if r["ratio"] is None:
        return "—"
    lo, hi = min(r["ratios"]), max(r["ratios"])
    return f"{r['ratio']:.1f}" + (f" ({lo:.1f}-{hi:.1f})" if len(r["ratios"]) > 1 else "")


def compact_tables(rows: list[dict]) -> str:
    """Ratios (median over the processes, their range), both sides' ns, the worst disagreement."""
    return "\n\n".join([
        "Ratio Pinocchio ns / generated C ns (median over the processes, range):\n\n" + compact(rows, ratio_cell),
        "Ratio of the fastest repetitions (median over the processes; where it is far from the ratio above, the "
        "load disturbed the run):\n\n" + compact(rows, lambda r: fmt(r.get("ratio_of_minima"), ".1f")),
        "ns per call, Pinocchio / generated C:\n\n" + compact(
            rows, lambda r: f"{fmt(r['pinocchio_ns'], '.0f')} / {fmt(r['symdyn_ns'], '.0f')}"),
        "Largest disagreement over every state of the pool, ‖x − x_pin‖∞ / ‖x_pin‖∞:\n\n" + compact(
            rows, lambda r: fmt(r["max_rel_err"], ".0e"))])


def spread(median, values: list, spec: str = ".2f") -> str:
    """median (lo-hi over the processes), or — without values."""
    if median is None or not values:
        return "—"
    lo, hi = min(values), max(values)
    return format(median, spec) + (f" ({lo:{spec}}-{hi:{spec}})" if len(values) > 1 else "")


def before_after_table(rows: list[dict]) -> str:
    """--before: per robot and function, Pinocchio/before, Pinocchio/after, after's speed-up over before
    (before ns / after ns; > 1: after is faster), both sides' ns and worst disagreement with Pinocchio."""
    lines = ["| robot | nv | function | Pinocchio/before | Pinocchio/after | after/before speed-up | "
             "ns Pinocchio / before / after | max rel err before / after |", "|---|---:|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        if r.get("symdyn_ns") is None and r.get("before_ns") is None:
            continue
        ns = " / ".join(fmt(r.get(k), ".0f") for k in ("pinocchio_ns", "before_ns", "symdyn_ns"))
        err = f"{fmt(r.get('before_max_rel_err'), '.0e')} / {fmt(r.get('max_rel_err'), '.0e')}"
        lines.append(f"| {r['robot']} | {r.get('dof', '')} | {r['function']} | "
                     f"{spread(r.get('ratio_before'), r.get('ratios_before', []))} | "
                     f"{spread(r.get('ratio'), r.get('ratios', []))} | "
                     f"{spread(r.get('speedup'), r.get('speedups', []))} | {ns} | {err} |")
    return "\n".join(lines)


def markdown(rows: list[dict], with_symdyn: bool) -> str:
    if with_symdyn:
        head = ["robot", "nv", "function", "pinocchio", "pinocchio ns", "symdyn ns",
                "speedup (pin/symdyn)", "max rel err"]
    else:
        head = ["robot", "nv", "function", "pinocchio", "pinocchio ns"]
    lines = ["| " + " | ".join(head) + " |",
             "|" + "|".join("---" if i < 4 else "---:" for i in range(len(head))) + "|"]
    for r in rows:
        cells = [r["robot"], str(r.get("dof", "")), r["function"], f'`{r["pinocchio_fn"]}`',
                 fmt(r["pinocchio_ns"], ".1f")]
        if with_symdyn:
            cells += [fmt(r["symdyn_ns"], ".1f"), fmt(r["ratio"], ".2f"),
                      fmt(r["max_rel_err"], ".1e")]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def parse_urdf_overrides(items: list[str]) -> dict:
    out = {}
    for item in items or []:
        name, sep, rest = item.partition("=")
        if not sep:
            sys.exit(f"error: --urdf expects NAME=PATH[:LOCKED1,LOCKED2], got {item!r}")
        path, _, locked = rest.partition(":")
        out[name] = (str(Path(path).resolve()), [j for j in locked.split(",") if j])
    return out


def parse_args(argv) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--robots", nargs="+", default=DEFAULT_ROBOTS,
                   help=f"robots to run (known: {', '.join(ROBOTS)}; default: %(default)s)")
    p.add_argument("--generated", type=Path, default=None,
                   help=f"directory holding generated R.c/R.h/R.json (default: {REPO / 'generated'}; with "
                        "--before: BUILD_DIR/generated); robots without R.c there are timed with Pinocchio only")
    p.add_argument("--generate", action="store_true",
                   help="first generate each robot's module into --generated with this checkout's symdyn "
                        "(the functions of the table, FRAMES, --floating-base for the floating ones)")
    p.add_argument("--before", metavar="REF",
                   help="before/after: also generate each module with the symdyn of git REF (a temporary "
                        "worktree; into GENERATED/before) and time Pinocchio, REF's and this checkout's C in "
                        "the same process (implies --generate)")
    p.add_argument("--table", action="store_true",
                   help="print the compact tables (one line per robot) instead of one line per function")
    p.add_argument("--floating", nargs="*", default=None, metavar="NAME",
                   help="robots loaded with a free-flyer root joint (default: "
                        f"{', '.join(sorted(FLOATING))}; their modules must be generated "
                        "with --floating-base)")
    p.add_argument("--contacts", nargs="*", default=[], metavar="NAME[=FRAME,...]",
                   help="robots standing on point contacts (default frames: " +
                        "; ".join(f"{k}={v}" for k, v in CONTACTS.items()) + ")")
    p.add_argument("--pinocchio-only", action="store_true",
                   help="ignore generated modules even if present")
    p.add_argument("--urdf", action="append", metavar="NAME=PATH[:LOCKED,...]",
                   help="add/override a robot's URDF (repeatable)")
    p.add_argument("--iterations", type=int, default=20000,
                   help="calls per timed repetition (default: %(default)s)")
    p.add_argument("--reps", type=int, default=21,
                   help="timed repetitions per run; the median is taken (default: %(default)s)")
    p.add_argument("--runs", type=int, default=3,
                   help="benchmark processes per robot; medians over runs are reported "
                        "(default: %(default)s)")
    p.add_argument("--pool", type=int, default=1000,
                   help="number of random states cycled through (default: %(default)s)")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--cpu", type=int, default=None, help="pin the benchmark to this CPU")
    p.add_argument("--march-native", action="store_true",
                   help="compile harness and generated C with -march=native (Pinocchio's "
                        "precompiled library stays baseline SSE2)")
    p.add_argument("--pinocchio-inline", action="store_true",
                   help="compile Pinocchio's algorithms into the harness with our flags "
                        "(drops PINOCCHIO_ENABLE_TEMPLATE_INSTANTIATION) instead of calling "
                        "the precompiled libpinocchio_default")
    p.add_argument("--build-dir", type=Path, default=HERE / "cpp" / "build")
    p.add_argument("--json-out", type=Path, help="also write the JSON lines to this file")
    p.add_argument("--show-cmd", action="store_true", help="print compile/run commands")
    p.add_argument("--rebuild", action="store_true", help="ignore cached executables")
    p.add_argument("--build-only", action="store_true", help="build (and generate) only, time nothing")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                   help="parallel compilations (default: %(default)s; each needs ~4 GB RAM)")
    return defaults(p, p.parse_args(argv))


def defaults(p: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.Namespace:
    """--before implies --generate, and generates into the build directory unless --generated is given."""
    if args.before:
        args.generate = True
        if args.pinocchio_only:
            p.error("--before needs generated modules, not --pinocchio-only")
    if args.generated is None:
        args.generated = args.build_dir / "generated" if args.before else REPO / "generated"
    return args


def robot_urdf(tc: Toolchain, robots: dict, robot: str) -> tuple[Path, list[str]]:
    if robot not in robots:
        sys.exit(f"error: unknown robot {robot!r}; known: {', '.join(robots)} (or use --urdf)")
    rel, locked = robots[robot]
    urdf = Path(rel)
    if not urdf.is_absolute():
        if tc.robots_dir is None:
            sys.exit("error: example-robot-data not installed; `pip install example-robot-data`")
        urdf = tc.robots_dir / rel
    if not urdf.is_file():
        sys.exit(f"error: URDF not found: {urdf}")
    return urdf, locked


def generate_module(urdf: Path, robot: str, locked: list[str], floating: bool, out: Path,
                    show: bool, repo: Path = REPO) -> float:
    """Generate <out>/<robot>.c/.h/.json with the symdyn of `repo` (default: this checkout); its CPU seconds."""
    out.mkdir(parents=True, exist_ok=True)
    link = out / f"{robot}.urdf"               # the module is named after the file
    if link.resolve() != urdf.resolve():
        link.unlink(missing_ok=True)
        link.symlink_to(urdf)
    cmd = [sys.executable, "-m", "symdyn", "generate", str(link), "--lang", "c", "--out", str(out),
           "--functions", TABLE_FUNCTIONS]
    cmd += ["--frames", FRAMES[robot]] if robot in FRAMES else []
    cmd += ["--lock", ",".join(locked)] if locked else []
    cmd += ["--floating-base"] if floating else []
    cmd += GENERATE_OPTIONS.get(robot, [])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(repo), os.environ.get("PYTHONPATH", "")]))
    if show:
        print(f"$ (cd {repo}) " + shlex.join(cmd), file=sys.stderr)
    proc = subprocess.Popen(cmd, cwd=repo, env=env, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status):
        sys.exit(f"error: generation failed: {shlex.join(cmd)}")
    return usage.ru_utime + usage.ru_stime


@contextmanager
def ref_worktree(ref: str | None, show: bool):
    """A temporary detached `git worktree` of `ref` (None: no worktree), removed afterwards."""
    if not ref:
        yield None
        return
    tmp = Path(tempfile.mkdtemp(prefix="symdyn-before-"))
    cmd = ["git", "-C", str(REPO), "worktree", "add", "--detach", "--quiet", str(tmp), ref]
    if show:
        print("$ " + shlex.join(cmd), file=sys.stderr)
    if subprocess.run(cmd).returncode:
        shutil.rmtree(tmp, ignore_errors=True)
        sys.exit(f"error: cannot make a worktree of {ref!r}")
    try:
        check_cli(tmp, ref)
        yield tmp
    finally:
        subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(tmp)])


def check_cli(repo: Path, ref: str) -> None:
    """Exit unless `symdyn generate` of `repo` accepts the options generate_module passes."""
    env = dict(os.environ, PYTHONPATH=str(repo))
    r = subprocess.run([sys.executable, "-m", "symdyn", "generate", "--help"], cwd=repo, env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    options = {"--lang", "--out", "--functions", "--frames", "--lock", "--floating-base",
               *(o for opts in GENERATE_OPTIONS.values() for o in opts if o.startswith("--"))}
    missing = sorted(o for o in options if o not in r.stdout)
    if r.returncode or missing:
        sys.exit(f"error: `symdyn generate` of {ref} lacks {', '.join(missing) or 'a working --help'}:\n{r.stdout}")


def before_args(before_dir: Path, robot: str, lib: Path) -> list[str]:
    """The harness's --before/--before-prefix/--before-sizes for <before_dir>/<robot> (its FRAMES are --module's)."""
    args = [f"--before={lib}"]
    for a in module_args(before_dir, robot):
        if a.startswith(("--prefix=", "--sizes=")):
            args.append("--before-" + a[2:])
    return args


def run_robot(exe: Path, robot: str, urdf: Path, locked: list[str], extra: list[str],
              args: argparse.Namespace) -> list[dict]:
    """One benchmark process: its JSON rows."""
    cmd = [str(exe), str(urdf), str(args.iterations), *locked, f"--name={robot}",
           f"--reps={args.reps}", f"--pool={args.pool}", f"--seed={args.seed}", *extra]
    if args.cpu is not None:
        cmd.append(f"--cpu={args.cpu}")
    if args.show_cmd:
        print("$ " + shlex.join(cmd), file=sys.stderr)
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode or args.show_cmd:
        sys.stderr.write(r.stderr)
    if r.returncode:
        sys.exit(f"error: benchmark failed for {robot} ({r.returncode})")
    return [json.loads(line) for line in r.stdout.splitlines() if line.strip().startswith("{")]


def plan_jobs(tc: Toolchain, args: argparse.Namespace, before_repo: Path | None = None) -> tuple[list, dict]:
    """(robot, urdf, locked, harness arguments, builds) per robot, and the generation CPU seconds (this
    checkout's). With before_repo, each module is also generated by its symdyn, into <generated>/before."""
    robots = dict(ROBOTS)
    robots.update(parse_urdf_overrides(args.urdf))
    floating = FLOATING if args.floating is None else set(args.floating)
    contacts = {}
    for item in args.contacts:
        name, _, frames = item.partition("=")
        if not frames and name not in CONTACTS:
            sys.exit(f"error: --contacts {name}: give the frames (NAME=FRAME,...)")
        contacts[name] = frames or CONTACTS[name]
    gdir = args.generated.resolve()
    bdir = gdir / "before" if before_repo else None
    jobs, gen_seconds = [], {}
    for robot in args.robots:
        urdf, locked = robot_urdf(tc, robots, robot)
        if args.generate and not args.pinocchio_only:
            gen_seconds[robot] = generate_module(urdf, robot, locked, robot in floating, gdir, args.show_cmd)
            if bdir:
                generate_module(urdf, robot, locked, robot in floating, bdir, args.show_cmd, before_repo)
        extra = (["--floating"] if robot in floating else []) + (
            [f"--contacts={contacts[robot]}"] if robot in contacts else [])
        gen_dir = None
        if not args.pinocchio_only:
            if all((gdir / f"{robot}{ext}").is_file() for ext in (".c", ".h", ".json")):
                gen_dir = gdir
            else:
                print(f"note: {gdir / (robot + '.c')} (.h, .json) not found; timing Pinocchio only for "
                      f"{robot}", file=sys.stderr)
        builds = plan_builds(tc, args.build_dir, robot, gen_dir, args, bdir)
        if gen_dir is not None:
            extra += [f"--module={builds[1].exe}", *module_args(gen_dir, robot)]
        if gen_dir is not None and bdir:
            extra += before_args(bdir, robot, builds[2].exe)
        jobs.append((robot, urdf, locked, extra, builds))
    return jobs, gen_seconds


def main(argv=None) -> int:
    args = parse_args(argv)
    if shutil.which(CXX) is None or shutil.which(CC) is None:
        sys.exit(f"error: need {CXX} and {CC} on PATH")
    tc = Toolchain(find_cmeel_prefix())
    with ref_worktree(args.before, args.show_cmd) as before_repo:
        jobs, gen_seconds = plan_jobs(tc, args, before_repo)
    # Build everything first, then time sequentially (never while compiling).
    args.build_dir.mkdir(parents=True, exist_ok=True)
    unique = {b.exe: b for *_, builds in jobs for b in builds}
    build_all(list(unique.values()), args)
    if args.build_only:
        return 0
    loads = [os.getloadavg()[0]]
    # Fresh processes, robots interleaved: run-to-run differences on a shared
    # machine are larger than the spread within one run.
    per_run: dict[tuple, list[dict]] = {}
    for _ in range(args.runs):
        for robot, urdf, locked, extra, builds in jobs:
            for row in run_robot(builds[0].exe, robot, urdf, locked, extra, args):
                per_run.setdefault((row["robot"], row["function"]), []).append(row)
            loads.append(os.getloadavg()[0])
    rows = [aggregate(v) for v in per_run.values()]
    if args.json_out:
        args.json_out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    print(summary(args, loads))
    if args.before:
        print(f"Before ({describe_ref(args.before)}) / after (this checkout, "
              f"{describe_ref('HEAD')}), ratio = Pinocchio ns / generated C ns, speed-up = before ns / after ns "
              "(median over the processes, range):\n\n" + before_after_table(rows) + "\n")
    print(compact_tables(rows) if args.table else markdown(rows, any(r["symdyn_ns"] for r in rows)))
    if gen_seconds:
        print("\n" + build_table(jobs, gen_seconds))
    return 0


def describe_ref(ref: str) -> str:
    """`ref` and its commit, short (once if `ref` is that commit), with ' + uncommitted changes' for HEAD of a
    dirty checkout."""
    r = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", ref], stdout=subprocess.PIPE, text=True)
    sha = r.stdout.strip() or "?"
    text = sha if sha.startswith(ref) or ref.startswith(sha) or ref == "HEAD" else f"{ref} = {sha}"
    if ref == "HEAD" and subprocess.run(["git", "-C", str(REPO), "diff", "--quiet", "HEAD"]).returncode:
        text += " + uncommitted changes"
    return text


def summary(args: argparse.Namespace, loads: list[float]) -> str:
    flags = ("-march=native" if args.march_native else "baseline x86-64") + (
        ", Pinocchio's algorithms compiled into the harness" if args.pinocchio_inline
        else ", libpinocchio_default")
    return (f"{machine()}; ns per call: median over {args.runs} process(es) of the median of {args.reps} repetitions x "
            f"{args.iterations} calls over {args.pool} random states; {CXX}/{CC} {' '.join(OPT_FLAGS)} ({flags}); "
            f"1-minute load average {min(loads):.1f}-{max(loads):.1f} during the runs.\n")


def machine() -> str:
    """CPU model (/proc/cpuinfo), cores, date (UTC)."""
    try:
        text = Path("/proc/cpuinfo").read_text()
        model = re.search(r"^model name\s*:\s*(.*)$", text, re.M).group(1).strip()
    except (OSError, AttributeError):
        model = "unknown CPU"
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return f"{when}, {model}, {os.cpu_count()} cores"


def build_table(jobs: list, gen_seconds: dict) -> str:
    """Generation and compile CPU seconds of the table's functions, per robot."""
    lines = ["Generation (`symdyn generate`, the 11 functions above) and compile (`cc`, the flags above, "
             "-DSYMDYN_NO_LANES) of each module, CPU seconds:\n",
             "| robot | generation (s) | C (MB) | compile (s) |", "|---|---:|---:|---:|"]
    for robot, *_, builds in jobs:
        lib = builds[1] if len(builds) > 1 else None
        size = lib.inputs[0].stat().st_size / 1e6 if lib else None
        cpu = lib.cpu_seconds if lib else None
        lines.append(f"| {robot} | {fmt(gen_seconds.get(robot), '.1f')} | {fmt(size, '.2f')} | "
                     f"{fmt(cpu, '.1f') if cpu is not None else 'cached'} |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
