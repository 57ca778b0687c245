"""Names: robot, joint and file names that are not identifiers, collide with keywords, builtins, C headers or
Python modules, would close a comment or a docstring, lie outside the BMP, hold terminal escapes or are long.

Module names are safe identifiers that shadow nothing (two files that would write the same module are
refused); the generated Python imports, the C compiles strictly and links, and the names round-trip into
JOINT_NAMES; `symdyn info` escapes them; an output name too long for the file system is refused before
anything is written."""
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import symdyn
from conftest import (GCC, assert_one_line, child_env, import_file, needs_gcc, planar_arm, spatial_chain, stages,
                      write_yaml)
from symdyn.cli import main
from symdyn.codegen.generator import safe_identifier
from symdyn.codegen.reserved import C_HEADERS, PYTHON_MODULES
from symdyn.errors import RobotFileError
from symdyn.generate import generate, module_name


STRICT_C = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic"]


# ============================================================================================
# 1. Names that are not identifiers or collide with C / Python keywords and builtins
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
    path = write_yaml(tmp_path / f"{stem}.yaml", spatial_chain(len(joint_names), robot_name, joint_names, planar=True))
    out = tmp_path / "out"
    written = generate([path], out, languages=("python", "c"))
    module = safe_identifier(Path(stem).stem)
    assert module.isidentifier() and module == module_name(path)
    assert sorted(p.name for p in written) == sorted(f"{module}{ext}" for ext in (".py", ".h", ".c", ".json"))

    generated = import_file(out / f"{module}.py", f"nasty_{abs(hash((stem, tuple(joint_names))))}")
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
    a = write_yaml(tmp_path / "my-robot.yaml", spatial_chain(2))
    b = write_yaml(tmp_path / "my_robot.yaml", spatial_chain(2))
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


@needs_gcc
def test_stem_named_like_a_c_header(tmp_path):
    _generate_and_check(tmp_path, "math", ["j0", "j1"])


# ============================================================================================
# 2. Module names that would shadow a C header or a Python module
# ============================================================================================

@pytest.mark.parametrize("stem", ["features", "inspect", "ast", "numbers", "textwrap", "re", "functools",
                                  "collections", "pathlib", "stdio", "Math", "alloca", "numpy"])
def test_shadowing_stems_are_renamed(stem):
    assert safe_identifier(stem) == stem + "_"


def test_stdlib_modules_are_all_reserved():
    public = {name for name in sys.stdlib_module_names if not name.startswith("_")}
    assert public <= PYTHON_MODULES, sorted(public - PYTHON_MODULES)


@needs_gcc
def test_headers_included_by_the_c_library_are_reserved(tmp_path):
    """Every top-level header that <math.h>, <stdio.h>, <stdlib.h> or <string.h> pull in here."""
    src = tmp_path / "probe.c"
    src.write_text("#include <math.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n"
                   "#include <stdint.h>\n#include <stddef.h>\n")
    result = subprocess.run([GCC, "-std=c99", "-H", "-E", str(src), "-o", os.devnull], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    included = re.findall(r"^\.+ (\S+)$", result.stderr, re.M)
    top = {Path(h).stem.replace("-", "_") for h in included if Path(h).parent.name == "include"}
    assert top and top <= C_HEADERS, sorted(top - C_HEADERS)


@needs_gcc
def test_a_robot_named_features_does_not_break_its_neighbours(tmp_path, monkeypatch):
    """features.yaml beside arm.yaml: arm.c still compiles with -I of the folder, load_c works for both."""
    monkeypatch.setenv("SYMDYN_CACHE", str(tmp_path / "cache"))
    robots = [write_yaml(tmp_path / "robots" / f"{stem}.yaml", planar_arm(2, name=stem)) for stem in ("features", "arm")]
    out = tmp_path / "out"
    written = generate(robots, out, ("python", "c"))
    assert {p.name for p in written} >= {"features_.h", "features_.c", "features_.py"}
    result = subprocess.run([GCC, "-std=c99", "-Wall", "-Werror", f"-I{out}", "-c", str(out / "arm.c"),
                             "-o", str(tmp_path / "arm.o")], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert symdyn.load_c(out / "arm.c").DOF == 2 and symdyn.load_c(out / "features_.c").DOF == 2


def test_a_module_named_like_the_stdlib_does_not_break_numpy(tmp_path):
    robot = write_yaml(tmp_path / "robots" / "inspect.yaml", planar_arm(2, name="inspect"))
    out = tmp_path / "out"
    generate([robot], out, ("python",))
    assert not (out / "inspect.py").exists()
    check = "import numpy, inspect, inspect_; assert inspect_.DOF == 2 and hasattr(inspect, 'signature')"
    result = subprocess.run([sys.executable, "-c", check], cwd=out, capture_output=True, text=True, env=child_env())
    assert result.returncode == 0, result.stderr


# ============================================================================================
# 3. Names outside the BMP, with comment openings or terminal escapes, and long names
# ============================================================================================

def test_names_outside_the_bmp_round_trip(tmp_path):
    names = ["wrist_😀", "𝔼lbow", "\U0010fffd"]
    path = write_yaml(tmp_path / "emoji.yaml", planar_arm(3, name="robot 🤖", joint_names=names))
    out = tmp_path / "out"
    generate([path], out, ("python",))
    text = (out / "emoji.py").read_text(encoding="utf-8")
    assert text.isascii() or "\\ud83d" not in text
    from symdyn.compare import import_module_file
    module = import_module_file(out / "emoji.py", "emoji_names")
    assert module.JOINT_NAMES == tuple(names) and "wrist_😀" in module.JOINT_NAMES
    assert all(not any(0xD800 <= ord(c) <= 0xDFFF for c in n) for n in module.JOINT_NAMES)


@needs_gcc
def test_comment_opening_in_a_name_compiles_with_werror(tmp_path):
    names = ["a/*b", "/*/", "c*//*d", "e//f"]
    path = write_yaml(tmp_path / "slash.yaml", planar_arm(4, name="robot /* x", joint_names=names))
    out = tmp_path / "out"
    generate([path], out, ("python", "c"))
    for flags in (["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic"],):
        result = subprocess.run([GCC, *flags, "-c", str(out / "slash.c"), "-o", str(tmp_path / "slash.o")],
                                capture_output=True, text=True)
        assert result.returncode == 0, result.stderr
    from symdyn.compare import import_module_file
    assert import_module_file(out / "slash.py", "slash_names").JOINT_NAMES == tuple(names)


def test_info_escapes_names():
    """Escape sequences and line breaks in names never reach the terminal raw."""
    with CliRunner().isolated_filesystem():
        names = ["j\x1b[31mred", "j\nnewline", "j\rcr"]
        write_yaml(Path("evil.yaml"), planar_arm(3, name="robot\x1b]0;title\x07", joint_names=names))
        result = CliRunner().invoke(main, ["info", "evil.yaml", "--no-ops"])
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.output and "\r" not in result.output and "\x07" not in result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("robot 'robot\\x1b]0;title\\x07'")
    joints = lines[-3:]              # the joint tree, one line per joint
    assert "\\x1b[31mred" in joints[0] and "\\nnewline" in joints[1] and "\\rcr" in joints[2]


@pytest.mark.parametrize("length", [225, 240, 250])
def test_long_stems(tmp_path, monkeypatch, length):
    """Stems of up to 250 characters (the longest a .yaml file can have): generated and loaded."""
    monkeypatch.setenv("SYMDYN_CACHE", str(tmp_path / "cache"))
    stem = "a" * length
    path = write_yaml(tmp_path / f"{stem}.yaml", planar_arm(2))
    out = tmp_path / "out"
    written = generate([path], out, ("python", "c"))
    assert sorted(p.name for p in written) == sorted(stem + ext for ext in (".py", ".h", ".c", ".json"))
    assert stages(out) == []
    if GCC:
        assert symdyn.load_c(out / f"{stem}.c").DOF == 2


def test_too_long_output_name_is_refused_before_anything_is_written(tmp_path):
    """'1aaa...yml' (255 characters) would become 'r_1aaa...py' (256): one line, no output folder."""
    path = write_yaml(tmp_path / ("1" + "a" * 250 + ".yml"), planar_arm(2))
    out = tmp_path / "out"
    with pytest.raises(RobotFileError) as caught:
        generate([path], out, ("python",))
    assert_one_line(str(caught.value), f"{path}: the output file name would be 256 characters long")
    assert not out.exists()
