#!/usr/bin/env python3
"""Time Pinocchio's C++ (and, if present, symdyn-generated C99) dynamics.

Builds ``benchmarks/cpp/bench.cpp`` against the Pinocchio installed by the
``pin`` wheel (cmeel prefix), runs it for each robot and prints a Markdown
table.

    python benchmarks/bench_c.py --robots panda ur5 xarm7
    python benchmarks/bench_c.py --generated generated --robots panda ur5 xarm7
    python benchmarks/bench_c.py --generated /tmp/gen --robots panda solo12 talos_reduced \
        --march-native --pinocchio-inline

solo12 and talos_reduced (trees) are loaded by Pinocchio with a free-flyer root
(``--floating NAME ...`` to choose): generate them with ``symdyn generate
--floating-base``; q has nq entries (unit quaternion), v, a, tau nv.

``--contacts solo12`` (or ``NAME=FRAME,...``) also times Pinocchio's
constraintDynamics and impulseDynamics on point contacts of those frames, and,
when the module was generated with the same ``--contact`` (its header defines
R_NC), R_constrained_forward_dynamics and R_impact beside them:

    symdyn generate solo12.urdf --floating-base --contact FL_FOOT,FR_FOOT,HL_FOOT,HR_FOOT --lang c --out /tmp/gen
    python benchmarks/bench_c.py --generated /tmp/gen --robots solo12 --contacts solo12

The derivatives (computeRNEADerivatives, computeABADerivatives) are timed for
symdyn when the module has them: generate the default set and the two with
``--functions`` (see docs/perf-history.md "Derivatives of the dynamics").

For a robot ``R`` the generated module is ``<generated>/R.c`` + ``R.h``
(``--generated`` defaults to the repository's ``generated/``).  When it is
missing, only the Pinocchio column is measured for that robot.

Compiling bench.cpp takes a few minutes (Pinocchio's templates); executables
are cached in benchmarks/cpp/build/ and rebuilt only when bench.cpp, the
generated R.c/R.h or a compile command changes.  Each robot is run in
``--runs`` fresh processes; in each, every function is timed ``--reps`` times
(round-robin over functions, Pinocchio and symdyn interleaved) and the medians
are reported.  ``--show-cmd`` prints the exact compile and run commands.

Needs: g++/gcc, ``pip install pin example-robot-data cmeel-eigen
cmeel-urdfdom-headers``.
"""

from __future__ import annotations

import argparse
import concurrent.futures
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
    "solo12": ("solo_description/robots/solo12.urdf", []),
    "talos_reduced": ("talos_data/robots/talos_reduced.urdf", []),
    "panda": ("panda_description/urdf/panda.urdf", ["panda_finger_joint1", "panda_finger_joint2"]),
    "ur5": ("ur_description/urdf/ur5_robot.urdf", []),
    "xarm7": ("xarm_description/urdf/xarm7.urdf", []),
    "z1": ("z1_description/urdf/z1.urdf", []),
}
DEFAULT_ROBOTS = ["panda", "ur5", "xarm7"]
FLOATING = {"solo12", "talos_reduced"}
# --contacts NAME: the point contacts (frames) a robot stands on by default
CONTACTS = {"solo12": "FL_FOOT,FR_FOOT,HL_FOOT,HR_FOOT"}


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

    def cxx_command(self, out: Path, *, objects=(), extra_defines=(), extra_includes=(),
                    native=False, pin_inline=False) -> list[str]:
        defines = [d for d in self.defines
                   if not (pin_inline and d == "PINOCCHIO_ENABLE_TEMPLATE_INSTANTIATION")]
        cmd = [CXX, *OPT_FLAGS, *CXX_FLAGS]
        if native:
            cmd += NATIVE_FLAGS + NATIVE_CXX_DEFINES
        cmd += [f"-D{d}" for d in defines] + list(extra_defines)
        cmd += [f"-I{d}" for d in [*extra_includes, *self.include_dirs]]
        cmd += [str(BENCH_SRC), *map(str, objects), "-o", str(out)]
        cmd += [f"-L{self.lib_dir}", f"-Wl,-rpath,{self.lib_dir}",
                f"-Wl,-rpath-link,{self.lib_dir}"]
        cmd += [f"-l{lib}" for lib in PIN_LIBS]
        return cmd

    @staticmethod
    def cc_command(src: Path, out: Path, *, native=False) -> list[str]:
        cmd = [CC, *OPT_FLAGS, *C_FLAGS]
        if native:
            cmd += NATIVE_FLAGS
        return cmd + ["-c", str(src), "-o", str(out)]


def run(cmd: list[str], show: bool) -> None:
    if show:
        print("$ " + shlex.join(cmd), file=sys.stderr)
    r = subprocess.run(cmd)
    if r.returncode:
        raise RuntimeError(f"command failed ({r.returncode}): {shlex.join(cmd)}")


def build_key(native: bool, pin_inline: bool) -> str:
    return ("native" if native else "base") + ("-inline" if pin_inline else "")


class Build:
    """One benchmark executable: the commands producing it and their inputs."""

    def __init__(self, exe: Path, commands: list[list[str]], inputs: list[Path]):
        self.exe, self.commands, self.inputs = exe, commands, inputs

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
        for c in self.commands:
            run(c, show)
        self.exe.with_suffix(".stamp").write_text(stamp)


def find_dof_macro(header: Path, robot: str, suffix: str = "DOF",
                   required: bool = True) -> str | None:
    """Name of the DOF (or NQ) macro in a generated header: R_DOF, or e.g. PANDA_DOF."""
    names = re.findall(r"^\s*#\s*define\s+(\w+_%s)\b" % suffix, header.read_text(), re.M)
    for want in (f"{robot}_{suffix}", f"{robot.upper()}_{suffix}"):
        if want in names:
            return want
    matches = [n for n in names if n.lower() == f"{robot}_{suffix}".lower()]
    if not matches:
        if not required:
            return None
        sys.exit(f"error: no {robot}_{suffix} / {robot.upper()}_{suffix} macro in {header}")
    return matches[0]


def plan_build(tc: Toolchain, build_dir: Path, robot: str, gen_dir: Path | None,
               args: argparse.Namespace) -> Build:
    """Harness executable for `robot`; with gen_dir, <gen_dir>/<robot>.c is linked in.

    Without a generated module the executable is robot-independent (shared).
    Compiling bench.cpp takes minutes (Pinocchio's templates), so executables
    are cached: rebuilt only when a command or an input file changes.
    """
    key = build_key(args.march_native, args.pinocchio_inline)
    if gen_dir is None:
        exe = build_dir / f"bench-pinocchio-{key}"
        cmd = tc.cxx_command(exe, native=args.march_native, pin_inline=args.pinocchio_inline)
        return Build(exe, [cmd], [BENCH_SRC])
    obj = build_dir / f"{robot}-{key}.o"
    exe = build_dir / f"bench-{robot}-{key}"
    cc = tc.cc_command(gen_dir / f"{robot}.c", obj, native=args.march_native)
    defines = [f"-DSYMDYN_ROBOT={robot}", f'-DSYMDYN_HEADER="{robot}.h"']
    dof_macro = find_dof_macro(gen_dir / f"{robot}.h", robot)
    if dof_macro != f"{robot}_DOF":
        defines.append(f"-DSYMDYN_DOF={dof_macro}")
    defines.append(f"-DSYMDYN_NUM_PARAMS={dof_macro[:-len('_DOF')]}_NUM_PARAMS")
    if f"{robot}_inverse_dynamics_derivatives(" in (gen_dir / f"{robot}.h").read_text():
        defines.append("-DSYMDYN_DERIVATIVES=1")     # generated with --functions ...,*_derivatives
    base_macro = find_dof_macro(gen_dir / f"{robot}.h", robot, "NUM_BASE_PARAMS", required=False)
    if base_macro and f"{robot}_base_regressor(" in (gen_dir / f"{robot}.h").read_text():
        defines += ["-DSYMDYN_BASE_REGRESSOR=1", f"-DSYMDYN_NUM_BASE={base_macro}"]
    nq_macro = find_dof_macro(gen_dir / f"{robot}.h", robot, "NQ", required=False)
    if nq_macro:
        defines.append(f"-DSYMDYN_NQ={nq_macro}")
    nc_macro = find_dof_macro(gen_dir / f"{robot}.h", robot, "NC", required=False)
    if nc_macro:                                  # generated with --contact
        defines.append(f"-DSYMDYN_NC={nc_macro}")
    cxx = tc.cxx_command(exe, objects=[obj], native=args.march_native,
                         pin_inline=args.pinocchio_inline, extra_defines=defines,
                         extra_includes=[gen_dir])
    return Build(exe, [cc, cxx], [BENCH_SRC, gen_dir / f"{robot}.c", gen_dir / f"{robot}.h"])


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
        vals = [r[key] for r in runs if r[key] is not None]
        return statistics.median(vals) if vals else None

    out = dict(runs[0])
    out["pinocchio_ns"] = med("pinocchio_ns")
    out["symdyn_ns"] = med("symdyn_ns")
    out["ratio"] = med("ratio")
    errs = [r["max_rel_err"] for r in runs if r["max_rel_err"] is not None]
    out["max_rel_err"] = max(errs) if errs else None
    out["runs"] = len(runs)
    return out


def fmt(x, spec):
    return "—" if x is None else format(x, spec)


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


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--robots", nargs="+", default=DEFAULT_ROBOTS,
                   help=f"robots to run (known: {', '.join(ROBOTS)}; default: %(default)s)")
    p.add_argument("--generated", type=Path, default=REPO / "generated",
                   help="directory holding generated R.c/R.h (default: %(default)s); robots "
                        "without R.c there are timed with Pinocchio only")
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
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                   help="parallel compilations (default: %(default)s; each needs ~4 GB RAM)")
    args = p.parse_args(argv)

    if shutil.which(CXX) is None or shutil.which(CC) is None:
        sys.exit(f"error: need {CXX} and {CC} on PATH")
    tc = Toolchain(find_cmeel_prefix())
    robots = dict(ROBOTS)
    robots.update(parse_urdf_overrides(args.urdf))
    floating = FLOATING if args.floating is None else set(args.floating)
    contacts = {}
    for item in args.contacts:
        name, _, frames = item.partition("=")
        if not frames and name not in CONTACTS:
            sys.exit(f"error: --contacts {name}: give the frames (NAME=FRAME,...)")
        contacts[name] = frames or CONTACTS[name]

    jobs = []  # (robot, urdf, locked, Build)
    any_symdyn = False
    for robot in args.robots:
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

        gen_dir = None
        if not args.pinocchio_only:
            gdir = args.generated.resolve()
            if (gdir / f"{robot}.c").is_file() and (gdir / f"{robot}.h").is_file():
                gen_dir = gdir
                any_symdyn = True
            else:
                print(f"note: {gdir / (robot + '.c')} not found; timing Pinocchio only for "
                      f"{robot}", file=sys.stderr)
        jobs.append((robot, urdf, locked, plan_build(tc, args.build_dir, robot, gen_dir, args)))

    # Build everything first, then time sequentially (never while compiling).
    args.build_dir.mkdir(parents=True, exist_ok=True)
    unique = {b.exe: b for *_, b in jobs}
    build_all(list(unique.values()), args)

    # Fresh processes, robots interleaved: run-to-run differences on a shared
    # machine are larger than the spread within one run.
    per_run: dict[tuple, list[dict]] = {}
    for _ in range(args.runs):
        for robot, urdf, locked, b in jobs:
            name = robot + (" (floating base)" if robot in floating else "")
            cmd = [str(b.exe), str(urdf), str(args.iterations), *locked, f"--name={name}",
                   f"--reps={args.reps}", f"--pool={args.pool}", f"--seed={args.seed}"]
            if args.cpu is not None:
                cmd.append(f"--cpu={args.cpu}")
            if robot in floating:
                cmd.append("--floating")
            if robot in contacts:
                cmd.append(f"--contacts={contacts[robot]}")
            if args.show_cmd:
                print("$ " + shlex.join(cmd), file=sys.stderr)
            r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            if r.returncode or args.show_cmd:
                sys.stderr.write(r.stderr)
            if r.returncode:
                sys.exit(f"error: benchmark failed for {robot} ({r.returncode})")
            for line in r.stdout.splitlines():
                line = line.strip()
                if line.startswith("{"):
                    row = json.loads(line)
                    per_run.setdefault((row["robot"], row["function"]), []).append(row)
    rows = [aggregate(v) for v in per_run.values()]

    if args.json_out:
        args.json_out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    flags = ("-march=native" if args.march_native else "baseline x86-64") + (
        ", Pinocchio inlined" if args.pinocchio_inline else ", libpinocchio_default")
    print(f"ns per call: median over {args.runs} run(s) of the median of {args.reps} reps x "
          f"{args.iterations} calls over {args.pool} random states; "
          f"{CXX} {' '.join(OPT_FLAGS)} ({flags})\n")
    print(markdown(rows, any_symdyn))
    return 0


if __name__ == "__main__":
    sys.exit(main())
