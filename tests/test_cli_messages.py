"""Messages a person reads (issue 24 item 8): one line per kind of warning, the nearest names for a misspelt
function, and no 60,000-character LaTeX line on the terminal."""
import pytest
from click.testing import CliRunner

import symdyn.cli as cli
from conftest import ROOT, erd_path
from symdyn.cli import main

TRIANGLE = ROOT / "tests" / "warn_inputs" / "yaml_inertia_triangle.yaml"


def _runner():
    try:
        return CliRunner(mix_stderr=False)
    except TypeError:                              # click >= 8.2 keeps stderr apart by default
        return CliRunner()


def test_the_same_warning_about_several_links_is_one_line(tmp_path):
    """Two links whose inertias break the triangle inequality: one warning line naming both (their own numbers
    dropped), on info and on generate; one such link keeps its full message."""
    text = TRIANGLE.read_text().replace("inertia: {ixx: 0.001, iyy: 0.02, izz: 0.02,",
                                        "inertia: {ixx: 0.001, iyy: 0.02, izz: 0.5,")
    two = tmp_path / "two.yaml"
    two.write_text(text)
    for command in (["info", "--no-ops"], ["generate", "--functions", "gravity", "--out", str(tmp_path / "out")]):
        result = _runner().invoke(main, [*command, str(two)])
        assert result.exit_code == 0, (result.output, result.exception)
        lines = result.stderr.splitlines()
        assert lines == [f"symdyn: warning: {two}: 2 links (upper, lower): inertia violates the triangle "
                         "inequality: no rigid body has it; loaded as is"], lines
    one = _runner().invoke(main, ["info", "--no-ops", str(TRIANGLE)]).stderr.splitlines()
    assert len(one) == 1 and "link 'lower': inertia violates the triangle inequality (principal moments [" in one[0]


def test_allegro_hand_warns_once():
    pytest.importorskip("pinocchio")
    path = erd_path("allegro_hand_description/urdf/allegro_right_hand.urdf")
    if not path.exists():
        pytest.skip("example-robot-data not installed")
    lines = _runner().invoke(main, ["info", "--no-ops", str(path)]).stderr.splitlines()
    assert len(lines) == 1 and "4 links (link_3.0, link_15.0, link_7.0, link_11.0)" in lines[0], lines


@pytest.mark.parametrize("given, says", [
    ("mass_matrx", "unknown function 'mass_matrx': did you mean mass_matrix or"),
    ("gravity,forward_dynamic", "unknown function 'forward_dynamic': did you mean forward_dynamics"),
    ("zzz", "unknown function 'zzz': `symdyn info ROBOT` lists the functions"),
    (",", "no function named (e.g. inverse_dynamics,mass_matrix)"),
])
def test_unknown_function_names_the_nearest(given, says, tmp_path):
    result = _runner().invoke(main, ["generate", str(ROOT / "robots" / "planar2.yaml"), "--functions", given,
                                     "--out", str(tmp_path / "out")])
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr == f"symdyn: error: --functions: {says}" + result.stderr.split(says, 1)[1], result.stderr
    assert result.stderr.count("\n") == 1 and len(result.stderr) < 160, result.stderr
    assert not (tmp_path / "out").exists()


def test_latex_unknown_function_is_short():
    result = _runner().invoke(main, ["latex", str(ROOT / "robots" / "planar2.yaml"), "gravty"])
    assert result.exit_code == 2
    assert result.stderr == "symdyn: error: unknown function 'gravty': did you mean gravity?\n"


def test_latex_too_long_for_the_terminal_says_its_size_and_takes_out(tmp_path, monkeypatch):
    """Above LATEX_PRINT_LIMIT characters, one line with the size and the way out (--out FILE, a smaller
    function); --out writes the whole equation, byte for byte what the terminal would have shown."""
    robot = str(ROOT / "robots" / "planar2.yaml")
    full = _runner().invoke(main, ["latex", robot, "mass_matrix"])
    assert full.exit_code == 0 and full.stdout.startswith("% mass_matrix of robot 'planar2'")
    monkeypatch.setattr(cli, "LATEX_PRINT_LIMIT", len(full.stdout) - 1)
    refused = _runner().invoke(main, ["latex", robot, "mass_matrix"])
    assert refused.exit_code == 2 and refused.stdout == ""
    assert refused.stderr == (f"symdyn: error: {robot}: mass_matrix is {len(full.stdout):,} characters of LaTeX "
                              f"(limit {len(full.stdout) - 1:,} on the terminal): write it with --out FILE, or ask "
                              "for a smaller function (e.g. gravity) or robot\n")
    out = tmp_path / "M.tex"
    written = _runner().invoke(main, ["latex", robot, "mass_matrix", "--out", str(out)])
    assert written.exit_code == 0 and written.stdout == f"wrote {out} ({len(full.stdout):,} characters)\n"
    assert out.read_text() == full.stdout
    bad = _runner().invoke(main, ["latex", robot, "mass_matrix", "--out", str(tmp_path / "no" / "M.tex")])
    assert bad.exit_code == 2 and bad.stderr.count("\n") == 1 and "cannot write it" in bad.stderr


@pytest.mark.parametrize("option, value", [("--states", "0"), ("--states", "-1"), ("--tol", "-1e-10")])
def test_compare_needs_a_state_and_a_tolerance(option, value):
    """`compare --states 0`, a negative count (a numpy traceback before) or a negative tolerance (every function
    failed; 0 asks for equality): click's one-line usage error, exit 2."""
    result = _runner().invoke(main, ["compare", str(ROOT / "robots" / "planar2.yaml"), option, value])
    assert result.exit_code == 2, result.output
    assert f"'{option}'" in result.output + result.stderr and "Traceback" not in result.output + result.stderr
