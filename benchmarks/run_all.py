"""Rerun the headline benchmarks and rewrite their tables in benchmarks/README.md.

    python benchmarks/run_all.py                     # every headline (an hour or more on 2 cores: the
                                                     # Pinocchio harness takes minutes to build, once)
    python benchmarks/run_all.py --only batch        # one headline (repeatable)
    python benchmarks/run_all.py --dry-run           # the commands only

Each headline is one of the existing scripts, run in a process of its own with the arguments in HEADLINES, on C
modules generated first into a temporary folder (the checkout's generated/ holds only planar2). Its Markdown
output replaces the text between `<!-- run_all: NAME -->` and `<!-- /run_all: NAME -->` in the README, under one
line that says when (UTC), on which commit, at which load and by which command it was measured. Run it on a quiet
machine: the scripts time both sides in one process, so ratios survive some load, nanoseconds do not.
"""
import argparse
import datetime
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
README = HERE / "README.md"

#: the robots of the Pinocchio table (issue 26's; iiwa14 from benchmarks/robots/)
PINOCCHIO_ROBOTS = ["panda", "ur5", "iiwa14", "baxter", "solo12", "anymal", "talos_reduced"]
#: the derivatives (not in the default set: generated only when named) in a module of their own
DERIVATIVES = ["robots/panda.urdf", "--functions", "inverse_dynamics_derivatives,forward_dynamics_derivatives",
               "--out", "{gen}/derivatives"]
#: name: (the `symdyn generate` arguments of each module to write as C into {gen} unless they say --out, the
#: script's command line); {gen} is that folder
HEADLINES = {
    # bench_c.py generates its own modules (per-robot options: frames, floating base, locked joints)
    "pinocchio": ([], ["bench_c.py", "--generate", "--generated", "{gen}", "--robots", *PINOCCHIO_ROBOTS,
                       "--march-native", "--pinocchio-inline", "--table", "--iterations", "5000", "--reps", "11"]),
    "kinematics": ([], ["bench_kinematics.py", "--robots", "panda", "ur5", "solo12_fb", "--reps", "15"]),
    "batch": ([["robots/panda.urdf"], DERIVATIVES],
              ["bench_batch.py", "{gen}/panda.c", "{gen}/derivatives/panda.c", "--count", "4096", "--rounds", "5"]),
    "compile": ([], ["bench_compile.py", "robots/panda.urdf", "robots/ur5.urdf", "--build", "load_c"]),
}


def replace_section(text, name, body):
    """`text` with the part between the markers of headline `name` replaced by `body`; ValueError if the
    markers are missing (a headline the README does not have is an error, not a silent append)."""
    start, end = f"<!-- run_all: {name} -->", f"<!-- /run_all: {name} -->"
    pattern = re.compile(re.escape(start) + r"\n.*?" + re.escape(end), re.S)
    if not pattern.search(text):
        raise ValueError(f"{README.name}: no {start} ... {end} markers")
    return pattern.sub(lambda _: f"{start}\n{body.strip()}\n{end}", text, count=1)


def provenance(command):
    """One line: when, which commit, the load average, the command."""
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip() or "unknown commit"
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return f"Measured {when} on {commit} (load average {load}) by `python benchmarks/{' '.join(command)}`:"


def generate(modules, folder):
    for args in modules:
        subprocess.run([sys.executable, "-m", "symdyn", "generate", "--lang", "c", "--out", str(folder),
                        *(a.replace("{gen}", str(folder)) for a in args)], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)


def run_headline(name, folder, dry_run=False):
    """The README body of one headline: its provenance line and the script's output."""
    modules, command = HEADLINES[name]
    command = [part.replace("{gen}", str(folder)) for part in command]
    shown = [part.replace(str(folder), "GEN") for part in command]
    if dry_run:
        first = "".join(f"symdyn generate --lang c --out GEN {' '.join(args)}; ".replace("{gen}", "GEN")
                        for args in modules)
        print(f"{name}: {first}python benchmarks/{' '.join(shown)}")
        return None
    generate(modules, folder)
    print(f"{name}: running {' '.join(shown)} ...", flush=True)
    out = subprocess.run([sys.executable, str(HERE / command[0]), *command[1:]], cwd=ROOT, check=True,
                         capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(ROOT))).stdout
    return provenance(shown) + "\n\n" + out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", action="append", choices=sorted(HEADLINES), help="a headline (repeatable)")
    ap.add_argument("--dry-run", action="store_true", help="print the commands, run nothing")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="symdyn-bench-") as folder:
        for name in args.only or HEADLINES:
            body = run_headline(name, Path(folder), args.dry_run)
            if body is not None:                  # written after each headline: a later failure keeps it
                README.write_text(replace_section(README.read_text(), name, body))
                print(f"{name}: {README} updated", flush=True)


if __name__ == "__main__":
    main()
