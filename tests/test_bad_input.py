"""The bad-input corpus (tests/bad_inputs/): every file is refused with one clear line.

For each file, `symdyn.load_robot` raises RobotFileError (nothing else) whose message is one
line starting with the path; `symdyn info FILE` and `symdyn generate FILE --out DIR` print
exactly one line to stderr, `symdyn: error: <path>: <problem>`, exit with code 2, show no
traceback, and `generate` leaves DIR exactly as it was (no module, no temporary file).
"""
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

import symdyn
from conftest import assert_one_line
from symdyn.cli import main
from symdyn.errors import RobotFileError

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "bad_inputs"
GOOD = ROOT / "robots" / "planar6.yaml"

#: file in tests/bad_inputs -> a fragment the one-line message must contain
BAD_INPUTS = {
    # --- symdyn YAML: syntax and encoding
    "yaml_syntax_unclosed.yaml": "YAML syntax error at line 9",
    "yaml_syntax_indent.yaml": "YAML syntax error at line 11",
    "yaml_syntax_tab.yaml": "found character '\\t' that cannot start any token",
    "yaml_two_documents.yaml": "expected a single document",
    "yaml_deep_nesting.yaml": "YAML nesting too deep",
    "yaml_python_tag.yaml": "could not determine a constructor for the tag",
    "yaml_duplicate_key.yaml": "duplicate key 'mass'",
    "yaml_empty.yaml": "file is empty",
    "yaml_blank.yaml": "file is empty",
    "yaml_comments_only.yaml": "the YAML document is empty",
    "yaml_top_list.yaml": "must be a mapping",
    "robot.yml": "must be a mapping",
    "yaml_not_utf8.yaml": "file is not UTF-8 text",
    # --- symdyn YAML: missing or mistyped fields
    "yaml_missing_name.yaml": "missing field 'name'",
    "yaml_missing_links.yaml": "missing field 'links'",
    "yaml_missing_mass.yaml": "link 'lower': missing field 'mass'",
    "yaml_missing_child.yaml": "joint 'elbow': missing field 'child'",
    "yaml_typo_field.yaml": "unknown field 'axs'",
    "yaml_typo_top_field.yaml": "unknown field 'gravty'",
    "yaml_mass_string.yaml": "mass must be a number, got 'heavy'",
    "yaml_mass_bool.yaml": "mass must be a number, got True",
    "yaml_com_short.yaml": "com must be a list of 3 numbers",
    "yaml_axis_short.yaml": "axis must be a list of 3 numbers",
    "yaml_links_mapping.yaml": "'links' must be a list",
    "yaml_name_empty.yaml": "robot name must be a non-empty string",
    # --- symdyn YAML: numbers and physics
    "yaml_integer_too_long.yaml": "integer too long to read",
    "yaml_bad_date.yaml": "cannot read '2001-13-45' as timestamp",
    "yaml_bad_tag_value.yaml": "cannot read 'heavy' as float",
    "yaml_alias_bomb.yaml": "mass must be a number, got [[",
    "yaml_mass_nan.yaml": "mass must be finite, got nan",
    "yaml_com_inf.yaml": "com must be finite, got -inf",
    "yaml_inertia_overflow.yaml": "inertia izz must be finite, got inf",
    "yaml_huge_integer.yaml": "mass must be finite, got an integer of 401 digits",
    "yaml_overflow.yaml": "inertial parameters overflow",
    "yaml_mass_negative.yaml": "mass must not be negative",
    "yaml_inertia_not_psd.yaml": "not positive semi-definite",
    "yaml_inertia_negative.yaml": "not positive semi-definite",
    "yaml_axis_zero.yaml": "axis has zero length",
    "yaml_bad_rotation.yaml": "not a proper rotation matrix",
    "yaml_rpy_and_rotation.yaml": "both 'rpy' and 'rotation'",
    # --- symdyn YAML: joints and tree structure
    "yaml_unknown_joint_type.yaml": "unknown joint type 'hinge'",
    "yaml_no_moving_joint.yaml": "no moving joints",
    "yaml_undefined_parent.yaml": "parent link 'uper' is not defined",
    "yaml_loop_to_base.yaml": "cannot be a child (kinematic loop)",
    "yaml_loop_two_parents.yaml": "already has parent joint 'elbow' (kinematic loop)",
    "yaml_loop_detached.yaml": "kinematic loop through joints",
    "yaml_self_loop.yaml": "is its own parent (kinematic loop)",
    "yaml_several_roots.yaml": "several root links ('base', 'hand')",
    "yaml_disconnected_link.yaml": "link 'spare' is not connected to any joint",
    "yaml_duplicate_link.yaml": "duplicate link name 'lower'",
    "yaml_duplicate_joint.yaml": "duplicate joint name 'elbow'",
    "yaml_base_listed.yaml": "is the base link",
    # --- Denavit-Hartenberg tables in YAML
    "dh_bad_convention.yaml": "'convention' must be one of classic, modified, got 'craig'",
    "dh_missing_convention.yaml": "'convention' must be one of classic, modified",
    "dh_not_mapping.yaml": "dh: must be a mapping",
    "dh_empty_joints.yaml": "'joints' must be a non-empty list",
    "dh_missing_alpha.yaml": "dh joint 'j1': missing field 'alpha'",
    "dh_typo_field.yaml": "unknown field 'alhpa'",
    "dh_typo_top_field.yaml": "unknown field 'gravty'",
    "dh_bad_joint_type.yaml": "must be revolute or prismatic, got 'fixed'",
    "dh_d_nan.yaml": "field 'd' must be finite",
    "dh_a_string.yaml": "field 'a' must be a number",
    "dh_link_not_mapping.yaml": "field 'link' must be a mapping",
    "dh_mass_negative.yaml": "mass must not be negative",
    "dh_with_links.yaml": "cannot be combined with top-level 'links'",
    "dh_duplicate_joint.yaml": "duplicate joint name 'j1'",
    "dh_duplicate_link.yaml": "duplicate link name 'arm'",
    # --- URDF
    "urdf_unclosed.urdf": "malformed XML: no element found",
    "urdf_mismatched_tag.urdf": "malformed XML: mismatched tag",
    "urdf_bad_attribute.urdf": "malformed XML: not well-formed",
    "urdf_xacro_macro.urdf": "malformed XML: unbound prefix",
    "urdf_empty.urdf": "file is empty",
    # --- friction and armature
    "urdf_damping_negative.urdf": "joint 'shoulder': damping must not be negative, got -0.5",
    "urdf_friction_nan.urdf": "<dynamics> friction must be finite",
    "yaml_armature_negative.yaml": "joint 'j1': armature must not be negative, got -0.1",
    "yaml_friction_not_number.yaml": "joint 'j1': friction must be a number",
    "yaml_coulomb_smoothing_negative.yaml": "coulomb_smoothing must be a number >= 0",
    "urdf_not_utf8.urdf": "file is not UTF-8 text",
    "urdf_unknown_encoding.urdf": "malformed XML: unknown encoding: utf-nine",
    "urdf_wrong_root.urdf": "root element is <robt>, expected <robot>",
    "urdf_no_name.urdf": "robot has no 'name' attribute",
    "urdf_no_links.urdf": "robot has no links",
    "urdf_mass_nan.urdf": "mass must be finite, got 'NaN'",
    "urdf_origin_inf.urdf": "xyz must be finite, got 'inf'",
    "urdf_mass_text.urdf": "non-numeric value '1,5'",
    "urdf_mass_no_value.urdf": "<mass> is missing attribute 'value'",
    "urdf_missing_inertia.urdf": "missing <inertia>",
    "urdf_mass_negative.urdf": "mass must not be negative",
    "urdf_inertia_not_psd.urdf": "not positive semi-definite",
    "urdf_axis_zero.urdf": "axis has zero length",
    "urdf_axis_two_numbers.urdf": "xyz needs 3 numbers, got 2",
    "urdf_unknown_joint_type.urdf": "unknown type 'ball'",
    "urdf_only_fixed.urdf": "no moving joints",
    "urdf_missing_child.urdf": "missing <child>",
    "urdf_undefined_link.urdf": "child link 'forearm' is not defined",
    "urdf_loop.urdf": "kinematic loop through joints",
    "urdf_two_parents.urdf": "child of two joints",
    "urdf_several_roots.urdf": "several root links ('base', 'hand')",
    "urdf_disconnected_link.urdf": "link 'spare': not connected to any joint",
    "urdf_duplicate_link.urdf": "link 'lower': defined twice",
    "urdf_duplicate_joint.urdf": "joint 'elbow': defined twice",
    # --- not robot files at all
    "robot.txt": "unknown file type '.txt'",
    "robot_no_extension": "no file extension",
    "robot.urdf.xacro": "xacro files must be expanded",
    "directory.yaml": "is a directory",
    "does_not_exist.yaml": "file not found",          # deliberately absent from the folder
}

CASES = sorted(BAD_INPUTS.items())


def _runner():
    try:
        return CliRunner(mix_stderr=False)           # click < 8.2 mixes stderr into output otherwise
    except TypeError:
        return CliRunner()


def _check_error_line(stderr, path, fragment):
    lines = stderr.splitlines()
    assert len(lines) == 1, f"expected one line on stderr, got:\n{stderr}"
    line = lines[0]
    assert line.startswith(f"symdyn: error: {path}: "), line
    assert fragment in line, line
    assert "Traceback" not in stderr


def test_corpus_is_complete():
    """Every file of the folder is in the table and the other way round; enough of each format."""
    on_disk = {p.name for p in CORPUS.iterdir()}
    listed = set(BAD_INPUTS) - {"does_not_exist.yaml"}
    assert on_disk == listed, (sorted(on_disk - listed), sorted(listed - on_disk))
    assert not (CORPUS / "does_not_exist.yaml").exists()
    assert len(BAD_INPUTS) >= 35
    for prefix, least in (("yaml_", 20), ("dh_", 8), ("urdf_", 20)):
        assert sum(name.startswith(prefix) for name in BAD_INPUTS) >= least, prefix


@pytest.mark.parametrize("name, fragment", CASES)
def test_load_robot_refuses(name, fragment):
    path = CORPUS / name
    with pytest.raises(symdyn.RobotFileError) as caught:
        symdyn.load_robot(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: "), message
    assert fragment in message, message
    assert len(message.splitlines()) == 1 and message.isprintable(), repr(message)
    assert caught.value.path == str(path)


@pytest.mark.parametrize("name, fragment", [
    ("does_not_exist.yaml", "file not found"),
    ("directory.yaml", "is a directory, not a joint-parameter file"),
    ("yaml_not_utf8.yaml", "file is not UTF-8 text (byte "),
    ("yaml_syntax_unclosed.yaml", "YAML syntax error at line 9"),
    ("yaml_deep_nesting.yaml", "YAML nesting too deep"),
    ("yaml_duplicate_key.yaml", "duplicate key 'mass'"),
    ("yaml_python_tag.yaml", "could not determine a constructor for the tag"),
    ("yaml_integer_too_long.yaml", "integer too long to read"),
    ("yaml_top_list.yaml", "a joint-parameter file must be a mapping"),
])
def test_joint_parameter_file_is_read_like_a_robot_file(name, fragment):
    """--joint-params files go through the robot files' YAML reading: the same one-line messages."""
    path = CORPUS / name
    with pytest.raises(symdyn.RobotFileError) as caught:
        symdyn.load_robot(GOOD, joint_params=path)
    message = str(caught.value)
    assert message.startswith(f"{path}: ") and fragment in message, message
    assert len(message.splitlines()) == 1 and message.isprintable(), repr(message)


@pytest.mark.parametrize("name, fragment", CASES)
def test_cli_info_refuses(name, fragment):
    path = CORPUS / name
    result = _runner().invoke(main, ["info", "--no-ops", str(path)])
    assert result.exit_code == 2, (result.output, result.exception)
    assert isinstance(result.exception, SystemExit)
    _check_error_line(result.stderr, path, fragment)
    assert result.stdout == ""


@pytest.mark.parametrize("name, fragment", CASES)
def test_cli_generate_refuses_and_writes_nothing(name, fragment, tmp_path):
    path = CORPUS / name
    out = tmp_path / "out"
    out.mkdir()
    result = _runner().invoke(main, ["generate", str(path), "--lang", "python,c", "--out", str(out)])
    assert result.exit_code == 2, (result.output, result.exception)
    assert isinstance(result.exception, SystemExit)
    _check_error_line(result.stderr, path, fragment)
    assert list(out.iterdir()) == []                 # nothing at all, not even a temporary file
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


# A few of the cases above again, through a real process: the console entry point, real stderr.
SUBPROCESS_CASES = [("info", "yaml_loop_detached.yaml"), ("generate", "dh_bad_convention.yaml"),
                    ("info", "urdf_not_utf8.urdf"), ("generate", "directory.yaml")]


def _symdyn(*args, cwd=None):
    """Start `symdyn ARGS` in a fresh interpreter (this checkout first on the path); returns the Popen."""
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.Popen([sys.executable, "-c", "from symdyn.cli import main; main()", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=cwd)


def test_cli_subprocess_refuses(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    runs = []
    for command, name in SUBPROCESS_CASES:           # all at once: each process imports numpy and symengine
        path = CORPUS / name
        args = ["info", str(path)] if command == "info" else ["generate", str(path), "--lang", "python,c", "--out", str(out)]
        runs.append((path, _symdyn(*args)))
    for path, run in runs:
        stdout, stderr = run.communicate(timeout=120)
        assert run.returncode == 2, stderr
        _check_error_line(stderr, path, BAD_INPUTS[path.name])
        assert stdout == ""
    assert list(out.iterdir()) == []


@pytest.mark.parametrize("order", ["good_first", "bad_first"])
def test_good_and_bad_together_write_nothing(order, tmp_path):
    """`symdyn generate good.yaml bad.yaml --out DIR`: everything is loaded before anything is written."""
    bad = CORPUS / "urdf_loop.urdf"
    paths = [str(GOOD), str(bad)] if order == "good_first" else [str(bad), str(GOOD)]
    out = tmp_path / "out"
    result = _runner().invoke(main, ["generate", *paths, "--lang", "python,c", "--out", str(out)])
    assert result.exit_code == 2
    _check_error_line(result.stderr, bad, BAD_INPUTS["urdf_loop.urdf"])
    assert not out.exists()                          # not even the folder

    out.mkdir()
    (out / "planar6.py").write_text("previous\n")
    result = _runner().invoke(main, ["generate", *paths, "--lang", "python,c", "--out", str(out)])
    assert result.exit_code == 2
    assert sorted(p.name for p in out.iterdir()) == ["planar6.py"]
    assert (out / "planar6.py").read_text() == "previous\n"


def test_library_generate_writes_nothing_on_bad_input(tmp_path):
    from symdyn.generate import generate
    out = tmp_path / "out"
    with pytest.raises(symdyn.RobotFileError):
        generate([GOOD, CORPUS / "yaml_mass_nan.yaml"], out, ("python", "c"))
    assert not out.exists()


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX file names")
@pytest.mark.parametrize("name", ["line\nbreak.yaml", "tab\there.yaml", "bad-\udcff-byte.yaml", "sp ace.urdf"])
def test_strange_file_names_stay_one_line(name, tmp_path):
    """A path with a line break (or a byte that is not UTF-8) is shown escaped: still one line."""
    path = tmp_path / name
    try:
        path.write_bytes((CORPUS / "yaml_mass_nan.yaml").read_bytes())
    except (OSError, UnicodeEncodeError):
        pytest.skip("the file system refuses this name")
    out = tmp_path / "out"
    for args in (["info", str(path)], ["generate", str(path), "--out", str(out)]):
        result = _runner().invoke(main, args)
        assert result.exit_code == 2
        lines = result.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("symdyn: error: "), result.stderr
        assert symdyn.errors.one_line(str(path)) in lines[0]
    assert not out.exists()


# ============================================================================================
# Hostile YAML: alias bombs are refused quickly, and every message is bounded
# ============================================================================================

def _alias_bomb():
    """9^9 'x' once expanded, in under 400 bytes."""
    parts = ["&a [x, x, x, x, x, x, x, x, x]"]
    for i, c in enumerate("bcdefghi"):
        parts.append(f"&{c} [" + ", ".join([f"*{'abcdefghi'[i]}"] * 9) + "]")
    return "[" + ", ".join(parts) + "]"


DH_BOMBS = {
    "convention": "name: bomb\ndh:\n  convention: {bomb}\n  joints: []\n",
    "type": "name: bomb\ndh:\n  convention: classic\n  joints:\n"
            "    - {{name: j, type: {bomb}, a: 0, alpha: 0, d: 0, theta: 0}}\n",
    "theta": "name: bomb\ndh:\n  convention: classic\n  joints:\n"
             "    - {{name: j, type: revolute, a: 0, alpha: 0, d: 0, theta: {bomb}}}\n",
    "gravity": "name: bomb\ngravity: {bomb}\ndh:\n  convention: classic\n  joints:\n"
               "    - {{name: j, type: revolute, a: 0, alpha: 0, d: 0, theta: 0,\n"
               "       link: {{mass: 1, com: [0, 0, 0], inertia: {{ixx: 1, iyy: 1, izz: 1, ixy: 0, ixz: 0, iyz: 0}}}}}}\n",
}


# the same bombs in a symdyn YAML file's joint type and link mass
DH_BOMBS["yaml_type"] = ("name: bomb\nlinks:\n  - {{name: l, mass: 1}}\n"
                         "joints:\n  - {{name: j, type: {bomb}, parent: base, child: l}}\n")
DH_BOMBS["yaml_mass"] = "name: bomb\nlinks:\n  - {{name: l, mass: {bomb}}}\njoints: []\n"


@pytest.mark.parametrize("field", sorted(DH_BOMBS))
def test_dh_alias_bomb_is_refused_quickly_in_one_short_line(tmp_path, field):
    path = tmp_path / "bomb.yaml"
    path.write_text(DH_BOMBS[field].format(bomb=_alias_bomb()))
    assert path.stat().st_size < 800
    start = time.perf_counter()
    with pytest.raises(RobotFileError) as caught:
        symdyn.load_robot(path)
    assert time.perf_counter() - start < 5
    message = str(caught.value)
    assert_one_line(message, f"{path}: ")
    assert len(message) < len(str(path)) + 300, message


def test_messages_are_bounded():
    huge = "x" * 10 ** 6
    assert len(str(RobotFileError("robot.yaml", f"bad name '{huge}'"))) < 2100
