"""No inf or nan in generated code: inertial parameters that underflow are refused in one line, the smallest
normal masses give finite constants, the printers refuse a non-finite number, and a constant that folds to
inf anyway stops generate in one line with nothing written."""
import re

import pytest
import symengine as se
from click.testing import CliRunner

import symdyn
from conftest import assert_one_line, planar_arm, write_yaml
from symdyn.cli import main
from symdyn.codegen.languages import BACKENDS
from symdyn.codegen.printer import NonFiniteError, number
from symdyn.errors import RobotFileError
from symdyn.generate import generate, render


@pytest.mark.parametrize("mass", [1.0e-320, 5e-324, 2.0e-308])
def test_subnormal_mass_is_refused(tmp_path, mass):
    path = write_yaml(tmp_path / "tiny.yaml", planar_arm(2, mass=1.0))
    text = path.read_text().replace("mass: 1.0\n", f"mass: {mass!r}\n", 1)
    path.write_text(text)
    with pytest.raises(RobotFileError) as caught:
        symdyn.load_robot(path)
    assert_one_line(str(caught.value), f"{path}: link 'link0': its inertial parameters underflow")
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["generate", str(path), "--lang", "python,c", "--out", str(out)])
    assert result.exit_code == 2 and result.stderr.count("\n") == 1 and not out.exists()


def test_smallest_normal_masses_still_work(tmp_path):
    """1e-300 kg links (normal doubles): the code is generated, with finite constants only."""
    description = planar_arm(2)
    for link in description["links"]:
        link["mass"] *= 1e-300
        link["inertia"] = {k: v * 1e-300 for k, v in link["inertia"].items()}
    path = write_yaml(tmp_path / "small.yaml", description)
    files = render(symdyn.load_robot(path), ("python", "c"))
    for text in files.values():
        assert not re.search(r"\b(inf|nan)\b", text)


@pytest.mark.parametrize("value", [float("inf"), float("-inf"), float("nan"), se.oo, -se.oo, se.zoo, se.nan])
def test_printers_cannot_emit_inf_or_nan(value):
    with pytest.raises(NonFiniteError):
        number(value)
    x = se.Symbol("x")
    for backend in (b for b in BACKENDS.values() if b.printer is not None):    # C++ prints no expression
        for expr in (x * value, x + value, se.sympify(value)):
            with pytest.raises(NonFiniteError):
                backend.printer(expr)


def test_non_finite_constant_is_a_one_line_error(tmp_path, monkeypatch):
    """Should a constant fold to inf anyway, generate says so in one line and writes nothing."""
    path = write_yaml(tmp_path / "arm.yaml", planar_arm(2))
    for backend in (b for b in BACKENDS.values() if b.printer is not None):
        monkeypatch.setattr(type(backend), "statements", lambda self, assignments, inputs: [self.printer(se.oo)])
    out = tmp_path / "out"
    with pytest.raises(RobotFileError) as caught:
        generate([path], out, ("python", "c"))
    assert_one_line(str(caught.value), f"{path}: the generated code would contain the constant inf")
    assert not out.exists()
