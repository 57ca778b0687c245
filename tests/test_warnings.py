"""Real vendor files: what is loaded with a warning, what is noise, what stays an error.

The warning corpus (tests/warn_inputs/): each file loads, `model.provenance.warnings` holds one line with the
expected fragment, `symdyn info` / `generate` print it as `symdyn: warning: <path>: ...` on stderr and
go on (generate writes its modules); with --strict the same line is an error (exit 2, nothing
written). Then the inertia policy in detail, and example-robot-data: every URDF Pinocchio loads
loads in symdyn, but for a short list of refusals with their reasons.
"""
import glob
import os

import numpy as np
import pinocchio as pin
import pytest
from click.testing import CliRunner

import symdyn
from conftest import ROOT, erd_path, random_states, relerr
from oracle import Pinocchio, to_pinocchio
from symdyn.cli import main
from symdyn.readers.description import build_model

CORPUS = ROOT / "tests" / "warn_inputs"
SINGULAR = "no inertia about its axis: the mass matrix is singular"

#: file in tests/warn_inputs -> a fragment of its (single) warning
WARN_INPUTS = {
    "yaml_inertia_triangle.yaml": "link 'lower': inertia violates the triangle inequality",
    "urdf_inertia_triangle.urdf": "link 'lower': inertia violates the triangle inequality",
    "dh_inertia_triangle.yaml": "link 'link2': inertia violates the triangle inequality",
    "yaml_massless_inertia.yaml": "link 'tool': zero mass with a nonzero inertia tensor",
    "yaml_mass_zero.yaml": f"joint 'elbow': the links it moves have {SINGULAR}",
    "urdf_massless_moving.urdf": f"joint 'elbow': the links it moves have {SINGULAR}",
    "yaml_singular_axis.yaml": f"joint 'elbow': the links it moves have {SINGULAR}",
    "urdf_singular_axis.urdf": f"joint 'elbow': the links it moves have {SINGULAR}",
}
CASES = sorted(WARN_INPUTS.items())


def _runner():
    try:
        return CliRunner(mix_stderr=False)           # click < 8.2 mixes stderr into output otherwise
    except TypeError:
        return CliRunner()


def test_corpus_is_complete():
    assert {p.name for p in CORPUS.iterdir()} == set(WARN_INPUTS)


@pytest.mark.parametrize("name, fragment", CASES)
def test_load_robot_warns(name, fragment):
    model = symdyn.load_robot(CORPUS / name)
    assert len(model.provenance.warnings) == 1, model.provenance.warnings
    (warning,) = model.provenance.warnings
    assert fragment in warning and str(CORPUS) not in warning
    assert len(warning.splitlines()) == 1 and warning.isprintable()


@pytest.mark.parametrize("name, fragment", CASES)
def test_strict_makes_the_warning_an_error(name, fragment):
    path = CORPUS / name
    with pytest.raises(symdyn.RobotFileError) as caught:
        symdyn.load_robot(path, strict=True)
    message = str(caught.value)
    assert message.startswith(f"{path}: ") and fragment in message and "--strict" in message


@pytest.mark.parametrize("name, fragment", CASES)
def test_cli_generate_warns_and_writes(name, fragment, tmp_path):
    path = CORPUS / name
    result = _runner().invoke(main, ["generate", str(path), "--lang", "python", "--out", str(tmp_path)])
    assert result.exit_code == 0, (result.output, result.exception)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"symdyn: warning: {path}: ") and fragment in lines[0], lines
    assert len(list(tmp_path.glob("*.py"))) == 1


@pytest.mark.parametrize("name, fragment", CASES)
def test_cli_strict_refuses_and_writes_nothing(name, fragment, tmp_path):
    path = CORPUS / name
    for command in (["info", "--no-ops"], ["generate", "--lang", "python,c", "--out", str(tmp_path / "out")]):
        result = _runner().invoke(main, [*command, "--strict", str(path)])
        assert result.exit_code == 2, (result.output, result.exception)
        lines = result.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"symdyn: error: {path}: ") and fragment in lines[0], lines
        assert "Traceback" not in result.stderr and result.stdout == ""
    assert list(tmp_path.iterdir()) == []


def test_cli_info_prints_warnings_before_the_model():
    path = CORPUS / "urdf_inertia_triangle.urdf"
    result = _runner().invoke(main, ["info", "--no-ops", str(path)])
    assert result.exit_code == 0
    assert result.stderr.startswith(f"symdyn: warning: {path}: ") and "robot '" in result.stdout


def test_cli_mimic_independent_asked_for_is_not_warned():
    """--mimic independent is the user's choice: no warning that the <mimic> is not honored (issue 24 item 8)."""
    path = ROOT / "tests" / "data" / "urdf_mimic.urdf"
    result = _runner().invoke(main, ["info", "--no-ops", "--mimic", "independent", str(path)])
    assert result.exit_code == 0 and result.stderr == "", result.stderr
    assert "3 DOF" in result.stdout


# --- the inertia policy ---------------------------------------------------------------------

def _robot(*tensors, masses=None):
    """A chain of revolute joints, one link per inertia tensor (ixx, iyy, izz, ixy, ixz, iyz)."""
    links, joints, parent = [], [], "base"
    for k, t in enumerate(tensors):
        links.append({"name": f"l{k}", "mass": 1.0 if masses is None else masses[k], "com": [0.1, 0.05, 0.2],
                      "inertia": dict(zip(("ixx", "iyy", "izz", "ixy", "ixz", "iyz"), t))})
        joints.append({"name": f"j{k}", "type": "revolute", "parent": parent, "child": f"l{k}",
                       "origin": {"xyz": [0.0, 0.0, 0.3]}, "axis": [k % 2, 1 - k % 2, 0]})
        parent = f"l{k}"
    return {"name": "policy", "links": links, "joints": joints}


def _build(desc, **options):
    warnings = []
    model = build_model(desc, "<policy>", warn=warnings.append, **options)
    return model, warnings


BIG = (1.0, 1.2, 1.5, 0.0, 0.0, 0.0)


def test_rounding_noise_relative_to_the_robot_is_silent():
    """icub: a zero tensor with +-1.4e-20 moments; a triangle missed by 1e-8 of the robot's scale."""
    noise = (1.35e-20, 1.35e-20, 1e-30, 1.35e-20, 0.0, 0.0)          # moments -1.35e-20, 0, 2.7e-20
    thin = (0.1, 0.2, 0.3 + 1e-8, 0.0, 0.0, 0.0)
    _, warnings = _build(_robot(BIG, noise, thin, masses=[1.0, 0.0, 1.0]))
    assert warnings == []


def test_negative_moment_is_an_error_unless_allowed():
    negative = (0.01, 0.01, 0.01, 0.05, 0.0, 0.0)                     # moments -0.04, 0.01, 0.06
    with pytest.raises(symdyn.RobotFileError, match="link 'l1': inertia tensor is not positive semi-definite"):
        _build(_robot(BIG, negative))
    _, warnings = _build(_robot(BIG, negative), allow_nonphysical_inertia=True)
    assert len(warnings) == 1 and "not positive semi-definite" in warnings[0] and "allow-nonphysical" in warnings[0]


def test_negative_mass_nan_and_zero_axis_stay_errors():
    desc = _robot(BIG, BIG, masses=[1.0, -0.1])
    with pytest.raises(symdyn.RobotFileError, match="mass must not be negative"):
        _build(desc)
    desc = _robot(BIG, BIG)
    desc["links"][1]["com"] = [0.0, float("nan"), 0.0]
    with pytest.raises(symdyn.RobotFileError, match="must be finite"):
        _build(desc)
    desc = _robot(BIG, BIG)
    desc["joints"][1]["axis"] = [0, 0, 0]
    with pytest.raises(symdyn.RobotFileError, match="axis has zero length"):
        _build(desc)


def test_virtual_links_anywhere():
    """Zero mass, zero inertia: a massless link between two joints (a universal joint), a massless
    tool frame, a massless moving link with mass below it. No warning; same dynamics as Pinocchio."""
    zero = (0.0,) * 6
    desc = _robot(BIG, zero, BIG, zero, masses=[1.0, 0.0, 2.0, 0.0])
    desc["links"].append({"name": "tool", "mass": 0.0})
    desc["joints"].append({"name": "tool_joint", "type": "fixed", "parent": "l3", "child": "tool"})
    desc["links"].append({"name": "below", "mass": 0.5, "com": [0.0, 0.1, 0.0],
                          "inertia": {"ixx": 0.01, "iyy": 0.01, "izz": 0.01}})
    desc["joints"].append({"name": "j4", "type": "prismatic", "parent": "tool", "child": "below", "axis": [0, 0, 1]})
    model, warnings = _build(desc)
    assert warnings == [] and model.dof == 5 and model.bodies[1].mass == 0
    engine, oracle = symdyn.Engine(model), Pinocchio(to_pinocchio(model))
    q, qd, tau = random_states(5, 5)
    for s in range(5):
        assert relerr(engine.mass_matrix(q[s]), oracle.mass_matrix(q[s])) < 1e-10
        assert relerr(engine.forward_dynamics(q[s], qd[s], tau[s]), oracle.forward_dynamics(q[s], qd[s], tau[s])) < 1e-9
    assert np.all(np.linalg.eigvalsh(engine.mass_matrix(q)) > 0)


def test_a_massless_leaf_is_singular_but_loads():
    """A zero-mass leaf on a moving joint (romeo's fingers): loaded, with the warning, as Pinocchio does."""
    _, warnings = _build(_robot(BIG, (0.0,) * 6, masses=[1.0, 0.0]))
    assert len(warnings) == 1 and "joint 'j1'" in warnings[0] and SINGULAR in warnings[0]


# --- example-robot-data -----------------------------------------------------------------------

#: the example-robot-data URDFs Pinocchio loads that symdyn refuses (fixed base), with the reason
REFUSED = {
    "hector_description/robots/quadrotor_base.urdf": "the robot has no moving joints",
    "iris_description/robots/iris_simple.urdf": "the robot has no moving joints",
    "romeo_description/urdf/romeo_laas_small.urdf": "link 'body': inertia tensor is not positive semi-definite",
}


def test_example_robot_data_loads():
    """Every URDF that Pinocchio's parser loads loads in symdyn (fixed base) with Pinocchio's joint
    order, but the few of REFUSED (at least 95% load)."""
    root = erd_path("ur_description").parent
    files = sorted(os.path.relpath(f, root) for f in glob.glob(str(root / "**" / "*.urdf"), recursive=True))
    assert len(files) >= 60
    loaded = refused = 0
    for rel in files:
        try:
            pmodel = pin.buildModelFromUrdf(str(root / rel))
        except ValueError:
            continue                                              # ur3.urdf: no robot name
        try:
            model = symdyn.load_robot(root / rel)
        except symdyn.RobotFileError as exc:
            assert rel in REFUSED and REFUSED[rel] in str(exc), (rel, str(exc))
            refused += 1
            continue
        assert rel not in REFUSED, rel
        assert tuple(pmodel.names)[1:] == tuple(j.name for j in model.joints), rel    # mimic joints included
        loaded += 1
    assert refused == len(REFUSED)
    assert loaded >= 0.95 * (loaded + refused), (loaded, refused)


def test_clearly_negative_vendor_inertia_loads_when_allowed():
    path = erd_path("romeo_description/urdf/romeo_laas_small.urdf")
    model = symdyn.load_robot(path, allow_nonphysical_inertia=True)
    assert any("link 'body': inertia tensor is not positive semi-definite" in w for w in model.provenance.warnings)
