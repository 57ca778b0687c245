"""The command line on good input: generate, compare, info."""
import importlib.util
import subprocess
import sys

from click.testing import CliRunner

from conftest import ROOT
from symdyn.cli import main


def test_generate_writes_importable_modules(tmp_path):
    result = CliRunner().invoke(main, ["generate", str(ROOT / "robots" / "planar6.yaml"), "--out", str(tmp_path),
                                       "--lang", "python,c"])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["planar6.c", "planar6.h", "planar6.json", "planar6.py"]
    spec = importlib.util.spec_from_file_location("planar6_cli", tmp_path / "planar6.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.DOF == 6


def test_generate_rejects_unknown_language(tmp_path):
    result = CliRunner().invoke(main, ["generate", str(ROOT / "robots" / "planar6.yaml"), "--out", str(tmp_path), "--lang", "rust"])
    assert result.exit_code == 2
    assert list(tmp_path.iterdir()) == []


def test_compare_passes_and_reports_every_function():
    result = subprocess.run([sys.executable, "-m", "symdyn.cli", "compare", str(ROOT / "robots" / "stanford.yaml"), "--states", "5"],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    for name in ("inverse_dynamics", "coriolis_nu", "mass_matrix_inverse", "coriolis_eta", "diagonalized_forward_dynamics",
                 "udu_factor"):
        assert name in result.stdout
    assert "pinocchio" in result.stdout
    udu = next(line for line in result.stdout.splitlines() if "udu_factor" in line).split()
    assert len(udu) == 4 and "-" not in udu                  # checked by C, Pinocchio and Python


def test_compare_fails_past_tolerance():
    """An impossible tolerance must fail: the comparison is not a formality."""
    result = subprocess.run([sys.executable, "-m", "symdyn.cli", "compare", str(ROOT / "robots" / "planar6.yaml"), "--states", "3",
                             "--tol", "0", "--no-c"], capture_output=True, text=True)
    assert result.returncode == 1


def test_info_prints_operation_counts():
    result = CliRunner().invoke(main, ["info", str(ROOT / "robots" / "puma560.yaml")])
    assert result.exit_code == 0
    assert "6 DOF" in result.output and "coriolis_matrix" in result.output and "mul" in result.output
    assert "diagonalized_forward_dynamics" in result.output and "udu_factor" in result.output


def test_symbolic_parameter_modules_have_their_own_name(tmp_path):
    """--params symbolic writes planar6_params.{py,h,c} (C prefix planar6_params_) beside planar6.py,
    never over it: their functions take one more argument."""
    robot = str(ROOT / "robots" / "planar6.yaml")
    assert CliRunner().invoke(main, ["generate", robot, "--out", str(tmp_path)]).exit_code == 0
    numeric = (tmp_path / "planar6.py").read_text()
    result = CliRunner().invoke(main, ["generate", robot, "--out", str(tmp_path), "--params", "symbolic", "--lang", "python,c"])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["planar6.json", "planar6.py", "planar6_params.c",
                                                          "planar6_params.h", "planar6_params.json",
                                                          "planar6_params.py"]
    assert (tmp_path / "planar6.py").read_text() == numeric
    assert "void planar6_params_mass_matrix(const double *q, const double *params, double *M);" in \
        (tmp_path / "planar6_params.h").read_text()
    spec = importlib.util.spec_from_file_location("planar6_params_cli", tmp_path / "planar6_params.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.DEFAULT_PARAMS.shape == (84,)          # 10 per link, then Fv, Fc, Fo, Ia per joint


def test_python_dash_m_symdyn():
    result = subprocess.run([sys.executable, "-m", "symdyn", "--help"], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0 and "Usage: symdyn " in result.stdout and "generate" in result.stdout


def test_compare_last_line_says_pass_or_fail():
    ok = CliRunner().invoke(main, ["compare", str(ROOT / "robots" / "planar6.yaml"), "--states", "2", "--no-c"])
    assert ok.exit_code == 0 and ok.output.splitlines()[-1].endswith(": PASS"), ok.output
    bad = CliRunner().invoke(main, ["compare", str(ROOT / "robots" / "planar6.yaml"), "--states", "2", "--no-c", "--tol", "0"])
    assert bad.exit_code == 1 and bad.output.splitlines()[-1].endswith(": FAIL"), bad.output
