"""Singular models (issue 24, items 3 and 10): one behaviour everywhere. A model whose mass matrix is
singular (a massless moving leaf, a massless floating base whose joints below can undo its motion)
loads with one warning (an error with --strict); the generated Python and C then give inf or nan
where they divide by zero, batched as single, never an exception; `compare` compares where the
numeric engine's values are finite and shows a crash of the generated code as a crash."""
import re

import numpy as np
import pytest
from click.testing import CliRunner

import symdyn
from conftest import ROOT
from random_chain import chain_with
from symdyn.cli import main
from symdyn.compare import import_module_file
from symdyn.engine import Engine
from symdyn.generate import module_name, render
from symdyn.multibody.lie import random_configuration

WARN = ROOT / "tests" / "warn_inputs" / "urdf_massless_moving.urdf"
FLOATING_SINGULAR = "its link 'base' has no mass and no inertia, and the joints below it can undo a motion of it"
FACTORS = ["innovations_factor", "innovations_factor_inverse", "articulated_inertia", "mass_matrix_inverse",
           "forward_dynamics", "operational_space_inertia_inverse"]

#: the functions that divide by the singular pivot
DIVIDE = ("innovations_factor_inverse", "mass_matrix_inverse", "forward_dynamics")


def _planar_planar(tmp_path):
    """Two planar joints in one plane, the first link massless: singular (tests/data/yaml_planar_joint.yaml)."""
    text = (ROOT / "tests" / "data" / "yaml_planar_joint.yaml").read_text().replace("type: revolute", "type: planar")
    text = text.replace("mass: 1.0\n    com: [0.25, 0, 0]\n    inertia: {ixx: 0.001, iyy: 0.02, izz: 0.02,",
                        "mass: 0.0\n    com: [0, 0, 0]\n    inertia: {ixx: 0, iyy: 0, izz: 0,")
    path = tmp_path / "planar_planar.yaml"
    path.write_text(text)
    return path


def _module(model, tmp_path, languages=("python",), functions=FACTORS):
    names = [f for f in functions if f in symdyn.functions.BY_NAME]
    for name, text in render(model, languages, functions=names).items():
        (tmp_path / name).write_text(text)
    return tmp_path / module_name(model.provenance.path)


def _args(model, count, seed=0):
    rng = np.random.default_rng(seed)
    q = random_configuration(model, rng, count)
    return {"q": q, "qd": rng.normal(size=(count, model.nv)), "tau": rng.normal(size=(count, model.nv))}


def _call(module, name, args, s=None):
    fn = symdyn.functions.BY_NAME[name]
    return getattr(module, name)(*(args[a] if s is None else args[a][s] for a in fn.args))


MODELS = {
    "floating_planar": lambda tmp: symdyn.load_robot(ROOT / "tests" / "data" / "yaml_planar_joint.yaml",
                                                     floating_base=True),
    "planar_planar": lambda tmp: symdyn.load_robot(_planar_planar(tmp)),
    "massless_leaf": lambda tmp: symdyn.load_robot(WARN),
    "floating_planar2": lambda tmp: symdyn.load_robot(ROOT / "robots" / "planar2.yaml", floating_base=True),
}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_python_batches_as_single_states(name, tmp_path):
    """The batch crashed ('inhomogeneous shape') and single states raised ZeroDivisionError: the zero
    divisor was a Python 0.0 in the generated code."""
    model = MODELS[name](tmp_path)
    assert any("singular" in w for w in model.provenance.warnings), model.provenance.warnings
    module = import_module_file(str(_module(model, tmp_path)) + ".py", f"_singular_{name}")
    args = _args(model, 3)
    with np.errstate(all="ignore"):
        for fn in FACTORS:
            batch = _call(module, fn, args)
            single = np.stack([_call(module, fn, args, s) for s in range(3)])
            np.testing.assert_array_equal(batch, single)        # (nan at the same places)
            assert batch.shape[0] == 3
            if fn in DIVIDE:
                assert not np.isfinite(batch).all(), fn
            reference = _call(Engine(model), fn, args)          # where the engine's values are defined
            finite = np.isfinite(reference)
            assert np.allclose(batch[finite], reference[finite], rtol=1e-9, atol=1e-9), fn


def test_nonsingular_planar_below_planar_batches(tmp_path):
    model = chain_with({0: "planar", 2: "planar"}, n=4)
    model = model.with_provenance(path=str(tmp_path / "pp.yaml"))
    assert model.provenance.warnings == ()
    module = import_module_file(str(_module(model, tmp_path, functions=FACTORS[:2])) + ".py", "_singular_pp")
    args = _args(model, 3)
    for fn in FACTORS[:2]:
        batch = _call(module, fn, args)
        assert np.isfinite(batch).all()
        np.testing.assert_allclose(batch, _call(Engine(model), fn, args), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("path, floating, singular", [
    ("tests/data/mimic_gripper.urdf", True, True),
    ("robots/planar2.yaml", True, True),
    ("tests/data/two_branches.yaml", True, True),
    ("tests/data/tree_order.urdf", True, False),         # two legs of other axes: the base cannot move alone
    ("tests/data/urdf_floating_joint.urdf", False, False),
    ("robots/ur5.urdf", True, False),
])
def test_massless_floating_base_warns_exactly_when_singular(path, floating, singular):
    model = symdyn.load_robot(ROOT / path, floating_base=floating)
    warned = [w for w in model.provenance.warnings if FLOATING_SINGULAR in w]
    assert len(warned) == int(singular), model.provenance.warnings
    M = Engine(model).mass_matrix(random_configuration(model, np.random.default_rng(2), 3))
    eig = np.linalg.eigvalsh(M)
    assert (np.abs(eig[:, 0]).max() < 1e-12 * eig[:, -1].min()) == singular
    if singular:
        assert warned[0].startswith("joint 'root_joint': ")
        with pytest.raises(symdyn.RobotFileError, match=re.escape(FLOATING_SINGULAR)):
            symdyn.load_robot(ROOT / path, floating_base=True, strict=True)


def test_cli_warns_about_a_massless_floating_base():
    run = CliRunner().invoke(main, ["info", "--floating-base", str(ROOT / "robots" / "planar2.yaml")])
    assert run.exit_code == 0 and FLOATING_SINGULAR in run.output
    run = CliRunner().invoke(main, ["info", "--floating-base", "--strict", str(ROOT / "robots" / "planar2.yaml")])
    assert run.exit_code == 2 and FLOATING_SINGULAR in run.output and "Traceback" not in run.output


def test_c_gives_what_python_gives(tmp_path):
    """--lang c refused the massless leaf ('would contain the constant inf'); now C and Python agree,
    inf and nan included."""
    from symdyn.codegen.c.loader import load_c
    model = symdyn.load_robot(WARN)
    stem = _module(model, tmp_path, ("python", "c"))
    python, c = import_module_file(str(stem) + ".py", "_singular_c"), load_c(str(stem) + ".c")
    args = _args(model, 3)
    with np.errstate(all="ignore"):
        for fn in FACTORS:
            np.testing.assert_allclose(_call(c, fn, args), _call(python, fn, args), rtol=1e-12, atol=1e-14)
            np.testing.assert_allclose(_call(c, fn, args, 0), _call(python, fn, args, 0), rtol=1e-12, atol=1e-14)


def test_compare_on_a_singular_model():
    """No traceback; compared where the engine's values are finite; PASS."""
    run = CliRunner().invoke(main, ["compare", "--no-c", "--states", "3", "--functions",
                                    ",".join(FACTORS + ["inverse_dynamics"]), str(WARN)])
    assert run.exception is None or isinstance(run.exception, SystemExit), run.exception
    assert "compared where the numeric engine's values are finite" in run.output
    assert "PASS" in run.output and run.exit_code == 0


def test_compare_shows_a_crash_as_a_crash(monkeypatch):
    """A generated function that raises (ValueError too) is symdyn's crash, not Pinocchio's parser."""
    import symdyn.compare as compare

    real = compare.import_module_file

    def broken(path, name=None):
        module = real(path, name)

        def crash(*args):
            raise ValueError("setting an array element with a sequence")
        module.mass_matrix = crash
        return module
    monkeypatch.setattr(compare, "import_module_file", broken)
    run = CliRunner().invoke(main, ["compare", "--no-c", "--states", "2", "--functions", "mass_matrix,gravity",
                                    str(ROOT / "robots" / "planar2.yaml")])
    assert "Pinocchio's URDF parser" not in run.output
    assert "CRASH: the generated python mass_matrix raised ValueError: setting an array element" in run.output
    assert "FAIL" in run.output and run.exit_code == 1
