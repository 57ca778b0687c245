"""Hardening: nasty names, atomic output, deterministic output, fuzzed input, extreme robots.

(The bad-input corpus is tests/test_bad_input.py.)
"""
import copy
import importlib.util
import math
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import time
import warnings
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import symdyn
from conftest import BUNDLED, ROOT
from symdyn.codegen.generator import safe_identifier, trace
from symdyn.codegen.python import PYTHON
from symdyn.readers.description import build_model
from symdyn.readers.dh import dh_to_description
from symdyn.errors import OutputError
from symdyn.functions import BY_NAME, FUNCTIONS
from symdyn.generate import generate, module_name, render

GCC = shutil.which("gcc")
STRICT_C = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic"]
EPS = np.finfo(float).eps


def _env():
    """Environment for a child interpreter that imports this checkout's symdyn."""
    return dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))


def _import(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _chain_description(n, name="chain", joint_names=None, prismatic_every=0, planar=False):
    """A spatial chain of n links: axes alternate between z and y (x twists of pi/2), offsets along x.

    planar: every axis along z, no twist (much less code: for tests about names, not dynamics).
    """
    links, joints = [], []
    for k in range(n):
        links.append({"name": f"link{k}", "mass": 1.0 + 0.01 * k, "com": [0.1, 0.01, 0.0],
                      "inertia": {"ixx": 0.002, "iyy": 0.01, "izz": 0.01, "ixy": 1e-4, "ixz": 0.0, "iyz": 0.0}})
        prismatic = prismatic_every and k % prismatic_every == prismatic_every - 1
        joints.append({"name": joint_names[k] if joint_names else f"joint{k}",
                       "type": "prismatic" if prismatic else "revolute",
                       "parent": "base" if k == 0 else f"link{k - 1}", "child": f"link{k}",
                       "origin": {"xyz": [0.2 if k else 0.0, 0.0, 0.0],
                                  "rpy": [0.0, 0.0, 0.0] if planar else [math.pi / 2 if k % 2 else 0.0, 0.0, 0.1 * (k % 3)]},
                       "axis": [0, 0, 1]})
    return {"name": name, "gravity": [0.0, 0.0, -9.81], "links": links, "joints": joints}


def _write_yaml(path, description):
    path.write_text(yaml.safe_dump(description, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return path


# ============================================================================================
# 2. Names that are not identifiers or collide with C / Python keywords and builtins
# ============================================================================================

NASTY_JOINT_NAMES = [
    ["int", "class", "sum", "q0", "x1"],
    ["2nd joint", "élbow", "None", "double", "qd0"],
    ["main", "np", "DOF", "JOINT_NAMES", "tau"],
    ["it's", 'say "hi"', "new\nline", "tab\there", "semi;colon // not a comment"],
]
NASTY_STEMS = ["class", "my-robot 2", "2nd", "élan"]


def _generate_and_check(tmp_path, stem, joint_names, robot_name="robot"):
    """Generate Python and C for a chain with these joint names; import, compile, link, run."""
    path = _write_yaml(tmp_path / f"{stem}.yaml", _chain_description(len(joint_names), robot_name, joint_names, planar=True))
    out = tmp_path / "out"
    written = generate([path], out, languages=("python", "c"))
    module = safe_identifier(Path(stem).stem)
    assert module.isidentifier() and module == module_name(path)
    assert sorted(p.name for p in written) == sorted(f"{module}{ext}" for ext in (".py", ".h", ".c", ".json"))

    generated = _import(out / f"{module}.py", f"nasty_{abs(hash((stem, tuple(joint_names))))}")
    assert generated.JOINT_NAMES == tuple(joint_names)
    assert generated.DOF == len(joint_names)
    model = symdyn.load_robot(path)
    q = np.linspace(-1.0, 1.0, len(joint_names))
    np.testing.assert_allclose(generated.mass_matrix(q), symdyn.Engine(model).mass_matrix(q), rtol=1e-12, atol=1e-12)

    if GCC:
        main_c = tmp_path / "main.c"
        main_c.write_text(f'#include <stdio.h>\n#include "{module}.h"\n'
                          f"int main(void) {{ double q[{module.upper()}_DOF] = {{0}}; double M[{module.upper()}_DOF * "
                          f"{module.upper()}_DOF]; {module}_mass_matrix(q, M); printf(\"%.17g\\n\", M[0]); return 0; }}\n")
        exe = tmp_path / "main"
        build = subprocess.run([GCC, *STRICT_C, f"-I{out}", str(out / f"{module}.c"), str(main_c), "-o", str(exe), "-lm"],
                               capture_output=True, text=True)
        assert build.returncode == 0, build.stderr
        run = subprocess.run([str(exe)], capture_output=True, text=True, check=True)
        assert float(run.stdout) == pytest.approx(symdyn.Engine(model).mass_matrix(np.zeros(len(joint_names)))[0, 0],
                                                  rel=1e-12)
    return out / f"{module}.py", out / f"{module}.c", out / f"{module}.h"


@pytest.mark.parametrize("stem, joint_names", list(zip(NASTY_STEMS, NASTY_JOINT_NAMES)), ids=NASTY_STEMS)
def test_nasty_names_generate_import_and_compile(tmp_path, stem, joint_names):
    _generate_and_check(tmp_path, stem, joint_names, robot_name=f"robot {stem} 'v2' \"beta\"")


def test_safe_identifier():
    for raw, expected in (("class", "class_"), ("my-robot 2", "my_robot_2"), ("2nd", "r_2nd"), ("int", "int_"),
                          ("", "robot"), ("---", "robot"), ("sum", "sum")):
        assert safe_identifier(raw) == expected
    for raw in ("élan", "日本", "a.b.c", " ", "while", "None", "True", "_Bool", "__x__"):
        ident = safe_identifier(raw)
        assert ident.isidentifier() and ident.isascii() and not ident.startswith("_"), (raw, ident)


def test_two_stems_with_the_same_module_name_are_refused(tmp_path):
    """'my-robot.yaml' and 'my_robot.yaml' would both write my_robot.py: one line, nothing written."""
    a = _write_yaml(tmp_path / "my-robot.yaml", _chain_description(2))
    b = _write_yaml(tmp_path / "my_robot.yaml", _chain_description(2))
    out = tmp_path / "out"
    with pytest.raises(symdyn.RobotFileError, match="would write my_robot.py, as does"):
        generate([a, b], out, ("python", "c"))
    assert not out.exists()


# Names that once broke the C header comment and the Python module docstring (now quoted).
COMMENT_BREAKING_NAMES = {
    "c_comment_close_joint": ("c1", ["a*/b"], "robot"),
    "c_comment_close_robot": ("c2", ["j"], "*/ robot"),
    "py_docstring_close": ("p1", ['a"""b'], "robot"),
    "py_docstring_escape": ("p2", ["a\\N{x"], "robot"),
}


@pytest.mark.parametrize("case", sorted(COMMENT_BREAKING_NAMES))
def test_names_that_break_comments(tmp_path, case):
    stem, names, robot_name = COMMENT_BREAKING_NAMES[case]
    _generate_and_check(tmp_path, stem, names, robot_name)


@pytest.mark.skipif(not GCC, reason="no gcc")
def test_stem_named_like_a_c_header(tmp_path):
    _generate_and_check(tmp_path, "math", ["j0", "j1"])


# ============================================================================================
# 3. Atomic output
# ============================================================================================

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


def _stages(folder):
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(".symdyn-stage-"))


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
    assert _temporaries(out) == [] and _stages(out) == []


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
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env())


def _wait_ready(proc, timeout=120):
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    assert ready, "the child never got ready"
    line = proc.stdout.readline()
    assert line.strip() == "READY", (line, proc.stderr.read())


def _recover(out):
    """What the next run in the folder (or load_c) does first."""
    from symdyn.generate import folder_lock, recover
    with folder_lock(out):
        recover(out)


@pytest.mark.skipif(os.name != "posix", reason="SIGKILL")
def test_sigkill_leaves_previous_files_intact(tmp_path, planar6_files):
    """Kill -9 at three moments: every file stays the previous one or becomes the complete new one,
    and the next run in the folder makes it one set, the previous or the new."""
    runs = {}
    for mode in ("before_commit", "after_first_rename", "timed"):
        _previous(tmp_path / mode)
        runs[mode] = _start_killable(mode, tmp_path / mode)
    for mode in ("before_commit", "after_first_rename"):
        _wait_ready(runs[mode])
        runs[mode].send_signal(signal.SIGKILL)
    _wait_ready(runs["timed"])
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
    assert len(_stages(out)) == 1
    _recover(out)
    for name, text in PREVIOUS.items():
        assert (out / name).read_text() == text
    assert _stages(out) == [] and _temporaries(out) == []

    # killed between the first and the second rename: one file new, the set committed; the next
    # run finishes it
    out = tmp_path / "after_first_rename"
    changed = [name for name, text in PREVIOUS.items() if (out / name).read_text() != text]
    assert len(changed) == 1 and (out / changed[0]).read_text() == planar6_files[changed[0]]
    _recover(out)
    for name in PREVIOUS:
        assert (out / name).read_text() == planar6_files[name]
    assert _stages(out) == [] and _temporaries(out) == []

    # killed at an arbitrary moment: whatever is there is either previous or complete, and one set after recovery
    out = tmp_path / "timed"
    _assert_each_file_old_or_new(out, planar6_files)
    _recover(out)
    now = {name: (out / name).read_text() for name in PREVIOUS}
    assert now in (PREVIOUS, {name: planar6_files[name] for name in PREVIOUS})
    assert _stages(out) == [] and _temporaries(out) == []


# ============================================================================================
# 4. Determinism: same bytes whatever the hash seed
# ============================================================================================

_GENERATE_ALL = r"""
import sys
from symdyn.generate import generate
out, robots = sys.argv[1], sys.argv[2:]
generate(robots, out, ("python", "c"))
"""


def test_generation_is_deterministic_across_hash_seeds(tmp_path):
    procs = []
    for seed in ("0", "12345"):
        env = dict(_env(), PYTHONHASHSEED=seed)
        procs.append(subprocess.Popen([sys.executable, "-c", _GENERATE_ALL, str(tmp_path / seed), *map(str, BUNDLED)],
                                      env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    for proc in procs:
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
    a, b = tmp_path / "0", tmp_path / "12345"
    files_a = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    files_b = sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    assert files_a == files_b
    assert len([f for f in files_a if f.parent == Path(".")]) == 4 * len(BUNDLED)      # .py, .h, .c, .json
    for rel in files_a:
        assert (a / rel).read_bytes() == (b / rel).read_bytes(), f"{rel} differs between hash seeds"


# ============================================================================================
# 5. Fuzzing: only RobotFileError (or success) comes out of load_robot
# ============================================================================================

YAML_SEEDS = [p for p in BUNDLED if p.suffix == ".yaml"]
URDF_SEEDS = [p for p in BUNDLED if p.suffix == ".urdf"]
# full-line comments dropped: mutating the bundled files' long headers would test little, slowly
YAML_TEXTS = ["\n".join(line for line in p.read_text(encoding="utf-8").splitlines() if not line.lstrip().startswith("#"))
              for p in YAML_SEEDS]
YAML_TREES = [yaml.safe_load(text) for text in YAML_TEXTS]
URDF_TEXTS = [re.sub(r"<!--.*?-->", "", p.read_text(encoding="utf-8"), flags=re.S) for p in URDF_SEEDS]
DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
NUMBER = re.compile(r"-?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?")
REPLACEMENTS = ["nan", ".nan", ".inf", "-.inf", "inf", "-1", "0", "-0.0", "1e999", "1e-320", "1e300", "-1e300",
                "abc", "[]", "{}", "~", "null", "true", "'1'", "1" + "0" * 400, "0x1F", "1_000", "[1, 2]", "*x",
                "&a", "!!binary aGk=", "\t", ":", "- ", "\"", "'", "#", "\\", "\x00", "\u2028", "é", "",
                "9" * 5000, "2001-13-45", "2001-02-03", "!!float x", "!!bool x", "!!int x", "!!timestamp x", "!!set {a}",
                "<<: 5", "1:30", "0o9", "0x_", "1e-3", ".5e+3"]
# SYMDYN_FUZZ_EXAMPLES=5000 for a long run; the suite keeps it short
FUZZ = settings(max_examples=int(os.environ.get("SYMDYN_FUZZ_EXAMPLES", "150")), deadline=None,
                suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(scope="module")
def fuzz_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz")


def _load_checked(path):
    """load_robot may succeed or raise RobotFileError (one line, starting with the path); nothing else."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")               # a RuntimeWarning would be a second line on stderr
        try:
            model = symdyn.load_robot(path)
        except symdyn.RobotFileError as exc:
            message = str(exc)
            assert message.startswith(f"{path}: "), message
            assert len(message) > len(f"{path}: ") and message.isprintable(), repr(message)
            assert len(message.splitlines()) == 1
            return None
    assert model.dof >= 1
    assert all(math.isfinite(v) for body in model.bodies for v in body.params)
    assert all(body.mass >= 0 for body in model.bodies)          # 0: a virtual link (a warning if singular)
    assert all(len(w.splitlines()) == 1 and w.isprintable() for w in model.provenance.warnings)
    return model


def _mutate_text(data, text, replacements=REPLACEMENTS):
    """A few random edits of a text: numbers replaced, lines deleted/duplicated/swapped, garbage inserted."""
    lines = text.split("\n")
    for _ in range(data.draw(st.integers(1, 4), label="edits")):
        kind = data.draw(st.sampled_from(["number", "number", "delete", "duplicate", "swap", "insert", "indent",
                                          "truncate"]), label="kind")
        i = data.draw(st.integers(0, len(lines) - 1), label="line")
        if kind == "number":
            spans = [m.span() for m in NUMBER.finditer(lines[i])]
            if spans:
                a, b = data.draw(st.sampled_from(spans), label="span")
                new = data.draw(st.sampled_from(replacements) | st.from_regex(NUMBER, fullmatch=True), label="value")
                lines[i] = lines[i][:a] + new + lines[i][b:]
        elif kind == "delete":
            del lines[i]
        elif kind == "duplicate":
            lines.insert(i, lines[i])
        elif kind == "swap":
            j = data.draw(st.integers(0, len(lines) - 1), label="other")
            lines[i], lines[j] = lines[j], lines[i]
        elif kind == "insert":
            at = data.draw(st.integers(0, len(lines[i])), label="at")
            lines[i] = lines[i][:at] + data.draw(st.text(max_size=8) | st.sampled_from(replacements), label="junk") + \
                lines[i][at:]
        elif kind == "indent":
            lines[i] = data.draw(st.sampled_from(["", " ", "   ", "\t"]), label="indent") + lines[i].lstrip()
        else:
            lines = lines[:i]
        if not lines:
            lines = [""]
    return "\n".join(lines)


@FUZZ
@given(text=st.text(max_size=300), suffix=st.sampled_from([".yaml", ".urdf"]))
def test_fuzz_random_text(fuzz_dir, text, suffix):
    path = fuzz_dir / f"random{suffix}"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    _load_checked(path)


@FUZZ
@given(raw=st.binary(max_size=300), suffix=st.sampled_from([".yaml", ".yml", ".urdf"]))
def test_fuzz_random_bytes(fuzz_dir, raw, suffix):
    path = fuzz_dir / f"bytes{suffix}"
    path.write_bytes(raw)
    _load_checked(path)


@FUZZ
@given(data=st.data(), seed=st.sampled_from(range(len(YAML_TEXTS))))
def test_fuzz_mutated_yaml_text(fuzz_dir, data, seed):
    path = fuzz_dir / "mutated.yaml"
    path.write_text(_mutate_text(data, YAML_TEXTS[seed]), encoding="utf-8", errors="surrogatepass")
    _load_checked(path)


YAML_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-10, 10) | st.integers(min_value=10 ** 300) |
    st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=6) | st.sampled_from(["revolute", "fixed", "base"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6)


def _paths(tree, prefix=()):
    """Every (container path, key) of a nested dict/list tree."""
    items = tree.items() if isinstance(tree, dict) else enumerate(tree) if isinstance(tree, list) else ()
    for key, value in items:
        yield prefix, key
        yield from _paths(value, prefix + (key,))


@FUZZ
@given(data=st.data(), seed=st.sampled_from(range(len(YAML_TEXTS))))
def test_fuzz_mutated_yaml_tree(fuzz_dir, data, seed):
    """Structural edits: delete a key or list entry, replace a value by any other type, duplicate an entry."""
    tree = copy.deepcopy(YAML_TREES[seed])
    for _ in range(data.draw(st.integers(1, 3), label="edits")):
        paths = list(_paths(tree))
        if not paths:
            break
        prefix, key = data.draw(st.sampled_from(paths), label="where")
        parent = tree
        for step in prefix:
            parent = parent[step]
        kind = data.draw(st.sampled_from(["delete", "replace", "replace", "duplicate", "swap_type"]), label="kind")
        if kind == "delete":
            del parent[key]
        elif kind == "duplicate" and isinstance(parent, list):
            parent.insert(key, copy.deepcopy(parent[key]))
        elif kind == "swap_type":
            value = parent[key]
            parent[key] = [value] if not isinstance(value, list) else (value[0] if value else {})
        else:
            parent[key] = data.draw(YAML_VALUES, label="value")
    path = fuzz_dir / "tree.yaml"
    path.write_text(yaml.dump(tree, Dumper=DUMPER, allow_unicode=True), encoding="utf-8", errors="surrogatepass")
    _load_checked(path)


URDF_ATTRIBUTE = re.compile(r'="([^"]*)"')
URDF_REPLACEMENTS = REPLACEMENTS + ["revolute", "floating", "planar", "continuous", "fixed", "base_link",
                                    "0 0 0", "1 0", "0 0 1 0", "nan 0 0", "1e400 0 0", "&amp;", "&bogus;", "<", "&#0;"]


@FUZZ
@given(data=st.data(), seed=st.sampled_from(range(len(URDF_TEXTS))))
def test_fuzz_mutated_urdf_text(fuzz_dir, data, seed):
    """Attribute values replaced, lines deleted or swapped, garbage inserted, text truncated."""
    text = URDF_TEXTS[seed]
    for _ in range(data.draw(st.integers(1, 3), label="attribute edits")):
        spans = [m.span(1) for m in URDF_ATTRIBUTE.finditer(text)]
        a, b = data.draw(st.sampled_from(spans), label="attribute")
        text = text[:a] + data.draw(st.sampled_from(URDF_REPLACEMENTS), label="value") + text[b:]
    text = _mutate_text(data, text, URDF_REPLACEMENTS)
    path = fuzz_dir / "mutated.urdf"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    _load_checked(path)


@FUZZ
@given(data=st.data(), seed=st.sampled_from(range(len(URDF_TEXTS))))
def test_fuzz_mutated_urdf_tree(fuzz_dir, data, seed):
    """Element edits: remove an element, drop or change an attribute, rename a tag, move an element."""
    root = ET.fromstring(URDF_TEXTS[seed])
    for _ in range(data.draw(st.integers(1, 3), label="edits")):
        parents = [(parent, child) for parent in root.iter() for child in parent]
        parent, element = data.draw(st.sampled_from(parents), label="element")
        kind = data.draw(st.sampled_from(["remove", "attribute", "drop_attribute", "rename", "move"]), label="kind")
        if kind == "remove":
            parent.remove(element)
        elif kind == "attribute" and element.attrib:
            key = data.draw(st.sampled_from(sorted(element.attrib)), label="key")
            element.set(key, data.draw(st.sampled_from(URDF_REPLACEMENTS) | st.text(max_size=6), label="value"))
        elif kind == "drop_attribute" and element.attrib:
            del element.attrib[data.draw(st.sampled_from(sorted(element.attrib)), label="key")]
        elif kind == "rename":
            element.tag = data.draw(st.sampled_from(["link", "joint", "inertial", "origin", "axis", "mass", "robot",
                                                     "child", "parent", "bogus"]), label="tag")
        elif kind == "move":
            parent.remove(element)
            target = data.draw(st.sampled_from([e for e in root.iter()]), label="target")
            target.append(element)
    path = fuzz_dir / "tree.urdf"
    path.write_bytes(ET.tostring(root, encoding="utf-8"))
    _load_checked(path)


# ============================================================================================
# 6. Extreme robots
# ============================================================================================

def _description_of(path):
    data = yaml.safe_load(Path(path).read_text())
    return dh_to_description(data, path) if "dh" in data else data


def _scaled(description, length=1.0, mass=1.0):
    """The same robot in other units: lengths times `length`, masses times `mass`."""
    d = copy.deepcopy(description)
    d["gravity"] = [g * length for g in d.get("gravity", [0.0, 0.0, -9.81])]
    for link in d["links"]:
        link["mass"] *= mass
        link["com"] = [c * length for c in link.get("com", [0, 0, 0])]
        link["inertia"] = {k: v * mass * length ** 2 for k, v in link.get("inertia", {}).items()}
    for joint in d["joints"]:
        origin = joint.get("origin") or {}
        if "xyz" in origin:
            origin["xyz"] = [x * length for x in origin["xyz"]]
    return d


def _every_function(engine, q, rng):
    """Evaluate every function of the set at q (other inputs random); all must be finite."""
    n = engine.n
    values = {}
    for fn in FUNCTIONS:
        args = [q if a == "q" else engine.PARAMETERS if a == "params" else
                rng.normal(size=(len(engine.FRAMES), 6) if a == "f_ext" else n) for a in fn.args]
        values[fn.name] = getattr(engine, fn.name)(*args)
        assert np.isfinite(values[fn.name]).all(), fn.name
    return values


def _check_consistent(model, qs, seed=0, factor=100.0):
    """D(k) > 0, every function finite, M M^-1 = I and ABA(RNEA(qdd)) = qdd within factor * cond(M) * eps."""
    engine = symdyn.Engine(model)
    rng = np.random.default_rng(seed)
    n = model.dof
    for q in qs:
        q = np.asarray(q, dtype=float)
        _every_function(engine, q, rng)
        D = engine.articulated_inertia(q)
        assert (D > 0).all(), D
        M, Minv = engine.mass_matrix(q), engine.mass_matrix_inverse(q)
        cond = np.linalg.cond(M)
        assert np.isfinite(cond)
        tol = factor * cond * EPS
        assert np.abs(M @ Minv - np.eye(n)).max() <= tol
        assert np.abs(Minv @ M - np.eye(n)).max() <= tol
        qd, qdd = rng.normal(size=n), rng.normal(size=n)
        tau = engine.inverse_dynamics(q, qd, qdd)
        assert np.abs(engine.forward_dynamics(q, qd, tau) - qdd).max() <= tol * max(1.0, np.abs(qdd).max())
        # the UDU^T factorization: prod D(k) = det M
        assert np.prod(D) == pytest.approx(np.linalg.det(M), rel=max(1e-9, tol))
    return engine


PUMA = ROOT / "robots" / "puma560.yaml"
STANFORD = ROOT / "robots" / "stanford.yaml"
# PUMA 560 singular poses: wrist (q5 = 0: axes 4 and 6 aligned), elbow (arm stretched), shoulder
# (wrist centre on the axis of joint 1), and all of them at once (q = 0)
PUMA_SINGULAR = [np.zeros(6), [0.3, -0.4, 0.2, 0.5, 0.0, -0.7], [0.0, 0.0, -np.pi / 2, 0.0, 0.5, 0.0],
                 [0.0, np.pi / 2, -np.pi / 2, 0.0, 0.0, 0.0], [1.0, 0.2, np.pi / 2, -1.0, 1e-12, 2.0]]


def test_fifty_link_chain_traces(capsys):
    """A 50-link chain (revolute and prismatic) traces without recursion errors; the code is right."""
    model = build_model(_chain_description(50, prismatic_every=7), "<chain 50>")
    assert model.dof == 50
    names = ("inverse_dynamics", "forward_dynamics", "articulated_inertia", "gravity", "total_rates", "coriolis_nu")
    limit = sys.getrecursionlimit()
    start = time.perf_counter()
    programs = {name: trace(model, BY_NAME[name]) for name in names}
    elapsed = time.perf_counter() - start
    assert sys.getrecursionlimit() == limit
    with capsys.disabled():
        print(f"\n50-link chain: traced {', '.join(names)} in {elapsed:.2f} s")

    engine = symdyn.Engine(model)
    rng = np.random.default_rng(1)
    printer = PYTHON.printer
    for name, program in programs.items():
        inputs = {arg: rng.uniform(-1, 1, 50) for arg in BY_NAME[name].args}
        env = {"xp": np}
        for arg, symbols in program.inputs.items():
            env.update({str(s): inputs[arg][i] for i, s in enumerate(symbols)})
        for symbol, expr in program.assignments:
            env[str(symbol)] = eval(printer(expr), env)  # noqa: S307 (our own straight-line code)
        got = np.array([eval(printer(e), env) for e in program.results], dtype=float)  # noqa: S307
        want = getattr(engine, name)(*(inputs[a] for a in BY_NAME[name].args)).ravel()
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9 * max(1.0, np.abs(want).max()))
    _check_consistent(model, [rng.uniform(-np.pi, np.pi, 50)])


def test_puma_singular_poses():
    model = symdyn.load_robot(PUMA)
    _check_consistent(model, PUMA_SINGULAR)


def test_puma_generated_code_at_singular_poses(tmp_path):
    """The generated module agrees with the engine at the singular poses and stays finite."""
    model = symdyn.load_robot(PUMA)
    (tmp_path / "puma560.py").write_text(render(model, ("python",))["puma560.py"])
    generated = _import(tmp_path / "puma560.py", "puma560_singular")
    engine = symdyn.Engine(model)
    rng = np.random.default_rng(2)
    for q in PUMA_SINGULAR:
        for fn in FUNCTIONS:
            args = [np.asarray(q, dtype=float) if a == "q" else engine.PARAMETERS if a == "params" else
                    rng.normal(size=(len(engine.FRAMES), 6) if a == "f_ext" else 6) for a in fn.args]
            got, want = getattr(generated, fn.name)(*args), getattr(engine, fn.name)(*args)
            assert np.isfinite(got).all(), fn.name
            np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9 * max(1.0, np.abs(want).max()), err_msg=fn.name)


@pytest.mark.parametrize("where", ["wrist", "tip", "every_other"])
def test_tiny_masses(where):
    """Links of 1e-6 kg (inertia scaled alike) keep D(k) > 0 and every function finite."""
    description = _description_of(PUMA)
    chosen = {"wrist": [3, 4, 5], "tip": [5], "every_other": [1, 3, 5]}[where]
    for k in chosen:
        link = description["links"][k]
        ratio = 1e-6 / link["mass"]
        link["mass"] = 1e-6
        link["inertia"] = {key: v * ratio for key, v in link["inertia"].items()}
    _check_consistent(build_model(description, f"<puma tiny {where}>"), PUMA_SINGULAR)


def test_tiny_mass_planar_chain():
    description = _chain_description(8)
    for link in description["links"][::2]:
        link["mass"] = 1e-6
        link["inertia"] = {k: v * 1e-6 for k, v in link["inertia"].items()}
    rng = np.random.default_rng(3)
    _check_consistent(build_model(description, "<tiny chain>"), [np.zeros(8), rng.uniform(-3, 3, 8)])


@pytest.mark.parametrize("robot", [PUMA, STANFORD, ROOT / "robots" / "planar6.yaml"], ids=lambda p: p.stem)
@pytest.mark.parametrize("length, mass", [(1e3, 1e3), (1e2, 1e6), (1e-3, 1e-3), (1.0, 1e9)],
                         ids=["mm_g", "large", "small", "heavy"])
def test_other_units(robot, length, mass):
    """The same robot in mm and g (or much larger or smaller): identities hold, M scales as it must."""
    base = build_model(_description_of(robot), str(robot))
    scaled = build_model(_scaled(_description_of(robot), length, mass), str(robot))
    rng = np.random.default_rng(4)
    qs = [np.zeros(base.dof), rng.uniform(-1, 1, base.dof)]
    _check_consistent(scaled, qs)
    # joint-space inertia: mass * length^2 for two revolute joints, mass * length for mixed, mass for prismatic
    powers = np.array([1.0 if j.type == "revolute" else 0.0 for j in base.joints])
    factor = mass * length ** (powers[:, None] + powers[None, :])
    for q in qs:
        q_scaled = np.where(powers == 0.0, q * length, q)     # a prismatic coordinate is a length
        expected = symdyn.Engine(base).mass_matrix(q) * factor
        np.testing.assert_allclose(symdyn.Engine(scaled).mass_matrix(q_scaled), expected, rtol=1e-9,
                                   atol=1e-12 * np.abs(expected).max())
