"""Output is all or nothing: a run replaces a module's set of files (.py, .h, .c, .json) whole or not at all.

A folder in the way, a full disk, a failed rename, an exception or Ctrl-C half-way, SIGKILL at any moment,
two runs at once: every file is the previous one or the complete new one, the next run (or load_c)
finishes a committed set or puts the previous one back, nothing is left behind (temporaries, staging
folders, an empty output folder), and file modes are kept. The files of one set carry its identity, so a
mixed .h/.c pair neither compiles nor loads."""
import errno
import json
import os
import random
import re
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

import symdyn
from conftest import GCC, ROOT, assert_one_line, child_env, needs_gcc, planar_arm, posix, stages, wait_ready, write_yaml
from symdyn.cli import main
from symdyn.errors import CModuleError, OutputError
from symdyn.generate import JOURNAL, folder_lock, generate, recover, render, write_all


def _which_set(folder, sets):
    """For each of arm.py, arm.h, arm.c: the index of the set it is complete from (None: neither)."""
    found = {}
    for name in ("arm.py", "arm.h", "arm.c"):
        text = (folder / name).read_text()
        found[name] = next((k for k, s in enumerate(sets) if s[name] == text), None)
    return found


def _settle(folder):
    """What the next run in the folder, or load_c, does first."""
    with folder_lock(folder):
        recover(folder)


def _prepare(folder, sets, index=0):
    folder.mkdir(parents=True, exist_ok=True)
    write_all(sets[index], folder)
    (folder / "unrelated.txt").write_text("keep me\n")


# ============================================================================================
# 1. The files of one set carry its identity; a mixed .h/.c pair cannot be used
# ============================================================================================

@needs_gcc
@pytest.mark.parametrize("header_from, source_from", [(0, 1), (1, 0)], ids=["2dof_h_3dof_c", "3dof_h_2dof_c"])
def test_mixed_pair_stops_the_compiler(tmp_path, two_arms, header_from, source_from):
    """A 2-joint arm.h with a 3-joint arm.c (or the other way round) no longer compiles."""
    _, sets = two_arms
    (tmp_path / "arm.h").write_text(sets[header_from]["arm.h"])
    (tmp_path / "arm.c").write_text(sets[source_from]["arm.c"])
    result = subprocess.run([GCC, "-std=c99", "-c", str(tmp_path / "arm.c"), "-o", str(tmp_path / "arm.o")],
                            capture_output=True, text=True)
    assert result.returncode != 0
    assert "arm.h is not the header written with this arm.c" in result.stderr
    (tmp_path / "arm.h").write_text(sets[source_from]["arm.h"])          # the right header: compiles
    result = subprocess.run([GCC, "-std=c99", "-c", str(tmp_path / "arm.c"), "-o", str(tmp_path / "arm.o")],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("header_from, source_from", [(0, 1), (1, 0)], ids=["2dof_h_3dof_c", "3dof_h_2dof_c"])
@pytest.mark.parametrize("odd", ["h", "c"])
def test_load_c_refuses_a_mixed_pair(tmp_path, monkeypatch, two_arms, header_from, source_from, odd):
    """The .h, .c and manifest of one module must come from one run: the odd one out is named."""
    monkeypatch.setenv("SYMDYN_CACHE", str(tmp_path / "cache"))
    _, sets = two_arms
    (tmp_path / "arm.h").write_text(sets[header_from]["arm.h"])
    (tmp_path / "arm.c").write_text(sets[source_from]["arm.c"])
    agree = source_from if odd == "h" else header_from       # the manifest agrees with the other file
    (tmp_path / "arm.json").write_text(sets[agree]["arm.json"])
    with pytest.raises(CModuleError) as caught:
        symdyn.load_c(tmp_path / "arm.c")
    assert_one_line(str(caught.value), f"{tmp_path / ('arm.' + odd)}: arm.{odd} and arm.json ({agree + 2} DOF")
    assert "regenerate the module's files together" in str(caught.value)
    assert not list((tmp_path / "cache").glob("*.so")) if (tmp_path / "cache").exists() else True


def test_every_file_of_a_set_carries_its_identity(two_arms):
    """The set id, the robot file's digest and the DOF, in the .py, .h and .c of one run; different robots differ."""
    paths, sets = two_arms
    ids = []
    for path, files in zip(paths, sets):
        model = symdyn.load_robot(path)
        py_id = re.search(r'^SET_ID = "([0-9a-f]{16})"$', files["arm.py"], re.M).group(1)
        assert f"#define ARM_SET_ID 0x{py_id}u" in files["arm.h"]
        assert f"ARM_SET_ID != 0x{py_id}u || ARM_DOF != {model.dof}" in files["arm.c"]
        assert f"#define ARM_DOF {model.dof}" in files["arm.h"] and f"DOF = {model.dof}" in files["arm.py"]
        for name, text in files.items():
            assert f"sha256 {model.provenance.digest[:16]}" in text or name == "arm.json"
        manifest = json.loads(files["arm.json"])
        assert (manifest["set_id"], manifest["digest"], manifest["sizes"]["dof"]) == (py_id, model.provenance.digest, model.dof)
        ids.append(py_id)
    assert ids[0] != ids[1]


# ============================================================================================
# 2. A failure while writing: the previous set stays, nothing is left behind
# ============================================================================================

def test_folder_in_the_way_changes_nothing(tmp_path, two_arms):
    """arm.c is a folder: one line naming it, exit 2 from the CLI, the previous set untouched."""
    paths, sets = two_arms
    out = tmp_path / "out"
    _prepare(out, sets, 0)
    (out / "arm.c").unlink()
    (out / "arm.c").mkdir()
    with pytest.raises(OutputError) as caught:
        generate([paths[1]], out, ("python", "c"))
    assert_one_line(str(caught.value), f"{out / 'arm.c'}: is a folder")
    assert (out / "arm.py").read_text() == sets[0]["arm.py"] and (out / "arm.h").read_text() == sets[0]["arm.h"]
    assert stages(out) == [] and (out / "unrelated.txt").read_text() == "keep me\n"
    result = CliRunner().invoke(main, ["generate", str(paths[1]), "--lang", "python,c", "--out", str(out)])
    assert result.exit_code == 2 and result.stderr.count("\n") == 1 and "Traceback" not in result.output
    assert (out / "arm.py").read_text() == sets[0]["arm.py"]


@pytest.mark.parametrize("failing", [1, 2, 3])
def test_disk_full_while_staging_changes_nothing(tmp_path, monkeypatch, two_arms, failing):
    """No space left for the n-th new file: every previous file stays, nothing is left behind."""
    paths, sets = two_arms
    out = tmp_path / "out"
    _prepare(out, sets, 0)
    import symdyn.generate as gen
    real, calls = gen._write_new, []

    def full(path, text, mode):
        calls.append(path)
        if len(calls) == failing:
            with open(path, "w") as fh:
                fh.write(text[:100])
            raise OSError(errno.ENOSPC, "No space left on device")
        real(path, text, mode)

    monkeypatch.setattr(gen, "_write_new", full)
    with pytest.raises(OutputError, match="No space left on device"):
        generate([paths[1]], out, ("python", "c"))
    assert _which_set(out, sets) == {"arm.py": 0, "arm.h": 0, "arm.c": 0}
    assert stages(out) == [] and sorted(p.name for p in out.iterdir()) == ["arm.c", "arm.h", "arm.json", "arm.py", "unrelated.txt"]


PREVIOUS = {"planar6.py": "previous python\n", "planar6.h": "previous header\n", "planar6.c": "previous c\n"}


PLANAR6 = ROOT / "robots" / "planar6.yaml"


@pytest.fixture(scope="module")
def planar6_files():
    return render(symdyn.load_robot(PLANAR6), ("python", "c"))


def _previous(folder):
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in PREVIOUS.items():
        (folder / name).write_text(text)
    (folder / "unrelated.txt").write_text("keep me\n")


def _temporaries(folder):
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def _assert_each_file_old_or_new(folder, new):
    for name, text in PREVIOUS.items():
        now = (folder / name).read_text()
        assert now in (text, new[name]), f"{name} is neither the previous nor the complete new file"
    assert (folder / "unrelated.txt").read_text() == "keep me\n"


def test_exception_after_first_rename_keeps_previous_files(tmp_path, monkeypatch, planar6_files):
    """A rename that fails after the commit (the first file already replaced): the previous set is put back."""
    out = tmp_path / "out"
    _previous(out)
    real, calls = os.replace, []

    def failing_replace(src, dst):
        calls.append(dst)
        if len(calls) == 3:                  # 1: the commit (journal), 2: the first file, 3: the second
            raise OSError(28, "No space left on device")
        real(src, dst)

    monkeypatch.setattr("symdyn.generate.os.replace", failing_replace)
    with pytest.raises(OutputError) as caught:
        generate([PLANAR6], out, ("python", "c"))
    assert "No space left on device" in str(caught.value) and len(str(caught.value).splitlines()) == 1
    assert Path(calls[1]).parent == out                                    # a file had been replaced
    for name, text in PREVIOUS.items():
        assert (out / name).read_text() == text                            # ... and is the previous one again
    assert _temporaries(out) == [] and stages(out) == []


@pytest.mark.parametrize("error", [OSError(28, "No space left on device"), KeyboardInterrupt()])
def test_failed_write_leaves_no_temporary(tmp_path, monkeypatch, error):
    """A write that dies half-way (disk full, Ctrl-C) removes its temporary; the target is untouched."""
    out = tmp_path / "out"
    _previous(out)
    real_fdopen = os.fdopen

    class Failing:
        def __init__(self, fh):
            self.fh = fh

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.fh.close()

        def write(self, text):
            self.fh.write(text[: len(text) // 2])               # half of it reaches the disk
            raise error

    monkeypatch.setattr("symdyn.generate.os.fdopen", lambda *a, **k: Failing(real_fdopen(*a, **k)))
    with pytest.raises(OutputError if isinstance(error, OSError) else KeyboardInterrupt):
        generate([PLANAR6], out, ("python", "c"))
    for name, text in PREVIOUS.items():
        assert (out / name).read_text() == text
    assert _temporaries(out) == []


def test_cli_output_errors_are_one_line(tmp_path):
    from click.testing import CliRunner
    from symdyn.cli import main
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder\n")
    for out in (blocker, blocker / "sub"):
        result = CliRunner().invoke(main, ["generate", str(PLANAR6), "--out", str(out)])
        assert result.exit_code == 2, result.output
        lines = result.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"symdyn: error: {out}: "), result.stderr
    assert blocker.read_text() == "not a folder\n"


def test_failed_run_leaves_no_empty_output_folder(tmp_path, monkeypatch):
    path = write_yaml(tmp_path / "arm.yaml", planar_arm(2))
    import symdyn.generate as gen

    def full(*args):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(gen, "_write_new", full)
    with pytest.raises(OutputError):
        generate([path], tmp_path / "new" / "deeper" / "out", ("python",))
    assert not (tmp_path / "new").exists()
    (tmp_path / "existing").mkdir()
    with pytest.raises(OutputError):
        generate([path], tmp_path / "existing", ("python",))
    assert (tmp_path / "existing").is_dir()                        # a folder that was there stays


@posix
def test_read_only_output_file_stays_read_only(tmp_path, two_arms):
    paths, sets = two_arms
    out = tmp_path / "out"
    _prepare(out, sets, 0)
    os.chmod(out / "arm.py", 0o444)
    os.chmod(out / "arm.c", 0o640)
    generate([paths[1]], out, ("python", "c"))
    assert _which_set(out, sets) == {"arm.py": 1, "arm.h": 1, "arm.c": 1}
    assert stat.S_IMODE((out / "arm.py").stat().st_mode) == 0o444
    assert stat.S_IMODE((out / "arm.c").stat().st_mode) == 0o640


# ============================================================================================
# 3. Killed at any moment, or two runs at once: the next run finishes or undoes a set
# ============================================================================================

_ROLLBACK_DRIVER = r"""
import os, sys, time
import symdyn.generate as gen
sets_file, out = sys.argv[1:3]
import json
rendered = json.load(open(sets_file))[1]
real, calls = os.replace, []
def replace(src, dst):
    calls.append(dst)
    if len(calls) == 3:                          # the commit, the first file, then the second fails
        raise OSError(5, "Input/output error")
    real(src, dst)
os.replace = replace
def dying_rollback(*args):
    print("READY", flush=True)                   # the rollback journal is written; killed before it is done
    time.sleep(120)
gen._roll_back = dying_rollback
gen.write_all(rendered, out)
"""


_LOOP_DRIVER = r"""
import json, sys
from symdyn.generate import write_all
sets_file, out, which, count = sys.argv[1:5]
sets = json.load(open(sets_file))
print("READY", flush=True)
for i in range(int(count)):
    write_all(sets[int(which) if ":" not in which else (int(which.split(":")[1]) + i) % 2], out)
"""


def _sets_file(tmp_path, sets):
    path = tmp_path / "sets.json"
    path.write_text(json.dumps(sets))
    return path


def _start(driver, *args):
    return subprocess.Popen([sys.executable, "-c", driver, *map(str, args)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=child_env())


def _kill(proc):
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    proc.stdout.close()
    proc.stderr.close()


@posix
def test_killed_during_a_rollback_the_next_run_finishes_it(tmp_path, two_arms):
    paths, sets = two_arms
    out = tmp_path / "out"
    _prepare(out, sets, 0)
    proc = _start(_ROLLBACK_DRIVER, _sets_file(tmp_path, sets), out)
    wait_ready(proc)
    _kill(proc)
    assert _which_set(out, sets) == {"arm.py": 1, "arm.h": 0, "arm.c": 0}   # the first file had been replaced
    _settle(out)
    assert _which_set(out, sets) == {"arm.py": 0, "arm.h": 0, "arm.c": 0}
    assert stages(out) == []


_SLOW_RENAMES = """import os, time
real = os.replace
def replace(src, dst):
    real(src, dst)
    time.sleep(0.02)                             # a wider window between the renames of one set
os.replace = replace
from symdyn.generate import write_all"""


@posix
@pytest.mark.parametrize("renames", ["plain", "slow"])
def test_kill_loop_never_leaves_two_robots_side_by_side(tmp_path, two_arms, renames):
    """SIGKILL at random moments of a loop of writes that alternate between the two robots: every
    file is always complete, a mixed set is only ever seen with a committed journal beside it, and
    after the next run's recovery the three files are one robot's. ("slow": each rename is followed
    by a pause, so that many kills land between the renames of one set.)"""
    _, sets = two_arms
    sets_file = _sets_file(tmp_path, sets)
    rng = random.Random(16)
    out = tmp_path / "out"
    _prepare(out, sets, 0)
    mixed = 0
    driver = _LOOP_DRIVER if renames == "plain" else \
        _LOOP_DRIVER.replace("from symdyn.generate import write_all", _SLOW_RENAMES)
    kills = int(os.environ.get("SYMDYN_KILLS", "10"))
    current, done = 0, 0
    # "slow": on until at least two kills landed between renames (about one in three does), at most 50
    while done < kills or (renames == "slow" and mixed < 2 and done < 50):
        done += 1
        proc = _start(driver, sets_file, out, f"alternate:{1 - current}", 10 ** 6)   # first the other robot
        wait_ready(proc)
        time.sleep(rng.uniform(0.0, 0.15))
        _kill(proc)
        found = _which_set(out, sets)
        assert None not in found.values(), found                              # every file complete
        if len(set(found.values())) > 1:
            mixed += 1
            assert any((stage / JOURNAL).is_file() for stage in stages(out)), found
        _settle(out)
        found = _which_set(out, sets)
        assert len(set(found.values())) == 1 and None not in found.values(), found
        assert stages(out) == [] and (out / "unrelated.txt").read_text() == "keep me\n"
        current = found["arm.py"]
    print(f"\nkill loop ({renames} renames): {mixed} of {done} kills left a committed, unfinished set "
          "(each finished by the next run)")
    if renames == "slow":
        assert mixed > 0, "no kill landed between two renames: the test did not test recovery"


@posix
def test_concurrent_runs_take_turns(tmp_path, two_arms):
    """Two runs writing different robots into the same folder at the same time: a reader holding
    the folder lock (as load_c does) always sees one robot's set, and so does the end state."""
    _, sets = two_arms
    sets_file = _sets_file(tmp_path, sets)
    out = tmp_path / "out"
    _prepare(out, sets, 0)
    procs = [_start(_LOOP_DRIVER, sets_file, out, which, 40) for which in (0, 1)]
    for proc in procs:
        wait_ready(proc)
    seen = []
    while any(proc.poll() is None for proc in procs):
        with folder_lock(out):
            seen.append(_which_set(out, sets))
        time.sleep(0.001)
    for proc in procs:
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
    seen.append(_which_set(out, sets))
    for found in seen:
        assert len(set(found.values())) == 1 and None not in found.values(), found
    assert stages(out) == []


@posix
def test_load_c_finishes_a_set_a_killed_run_left(tmp_path, monkeypatch, two_arms):
    """Killed after the first rename: load_c completes the set before reading the pair."""
    monkeypatch.setenv("SYMDYN_CACHE", str(tmp_path / "cache"))
    _, sets = two_arms
    out = tmp_path / "out"
    _prepare(out, sets, 0)
    driver = _LOOP_DRIVER.replace("from symdyn.generate import write_all", """import os, time
real, calls = os.replace, []
def replace(src, dst):
    real(src, dst)
    calls.append(dst)
    if len(calls) == 3:                          # the commit, arm.py, arm.h: arm.c is still the 2-joint one
        print("READY", flush=True); time.sleep(120)
os.replace = replace
from symdyn.generate import write_all""").replace('print("READY", flush=True)\nfor', "for")
    proc = _start(driver, _sets_file(tmp_path, sets), out, 1, 1)
    wait_ready(proc)
    _kill(proc)
    assert _which_set(out, sets) == {"arm.py": 1, "arm.h": 1, "arm.c": 0}
    if GCC:
        module = symdyn.load_c(out / "arm.c")
        assert module.DOF == 3
        assert _which_set(out, sets) == {"arm.py": 1, "arm.h": 1, "arm.c": 1} and stages(out) == []


_KILL_DRIVER = r"""
import os, sys, time
mode, robot, out = sys.argv[1:4]
real, calls = os.replace, []
def replace(src, dst):
    calls.append(dst)
    if mode == "before_commit":                 # every new file complete in the staging folder
        print("READY", flush=True)
        time.sleep(120)
    real(src, dst)
    if mode == "after_first_rename" and len(calls) == 2:
        print("READY", flush=True)
        time.sleep(120)
os.replace = replace
from symdyn.generate import generate
if mode == "timed":
    print("READY", flush=True)
generate([robot], out, ("python", "c"))
"""


def _start_killable(mode, out):
    return subprocess.Popen([sys.executable, "-c", _KILL_DRIVER, mode, str(PLANAR6), str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=child_env())


@posix
def test_sigkill_leaves_previous_files_intact(tmp_path, planar6_files):
    """Kill -9 at three moments: every file stays the previous one or becomes the complete new one,
    and the next run in the folder makes it one set, the previous or the new."""
    runs = {}
    for mode in ("before_commit", "after_first_rename", "timed"):
        _previous(tmp_path / mode)
        runs[mode] = _start_killable(mode, tmp_path / mode)
    for mode in ("before_commit", "after_first_rename"):
        wait_ready(runs[mode])
        runs[mode].send_signal(signal.SIGKILL)
    wait_ready(runs["timed"])
    time.sleep(0.4)                                  # somewhere in tracing, rendering or writing
    runs["timed"].send_signal(signal.SIGKILL)
    for proc in runs.values():
        proc.wait(timeout=60)
        proc.stdout.close()
        proc.stderr.close()

    # killed before the commit: every target untouched; the staging folder is what a SIGKILL
    # leaves behind (nothing can clean up after -9), and the next run removes it
    out = tmp_path / "before_commit"
    for name, text in PREVIOUS.items():
        assert (out / name).read_text() == text
    assert len(stages(out)) == 1
    _settle(out)
    for name, text in PREVIOUS.items():
        assert (out / name).read_text() == text
    assert stages(out) == [] and _temporaries(out) == []

    # killed between the first and the second rename: one file new, the set committed; the next
    # run finishes it
    out = tmp_path / "after_first_rename"
    changed = [name for name, text in PREVIOUS.items() if (out / name).read_text() != text]
    assert len(changed) == 1 and (out / changed[0]).read_text() == planar6_files[changed[0]]
    _settle(out)
    for name in PREVIOUS:
        assert (out / name).read_text() == planar6_files[name]
    assert stages(out) == [] and _temporaries(out) == []

    # killed at an arbitrary moment: whatever is there is either previous or complete, and one set after recovery
    out = tmp_path / "timed"
    _assert_each_file_old_or_new(out, planar6_files)
    _settle(out)
    now = {name: (out / name).read_text() for name in PREVIOUS}
    assert now in (PREVIOUS, {name: planar6_files[name] for name in PREVIOUS})
    assert stages(out) == [] and _temporaries(out) == []
