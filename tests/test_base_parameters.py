"""Base parameters of chains whose standard-order grouping is ill-conditioned (symdyn.recursions.base_parameters).

A joint axis nearly along y in its link's frame makes the first moment along it, a_x mx + a_y my + a_z mz,
nearly my alone: keeping my and writing mz through it costs a factor 1/a_z, and these factors multiply
along a chain (a random 32-joint chain reached 1e8, the rank test then kept a column too many and the
check failed). Oracles: Pinocchio's computeJointTorqueRegressor and the numerical rank (SVD) of the
stacked regressor."""
import numpy as np
import pinocchio as pin
import pytest
import yaml
from click.testing import CliRunner
from conftest import random_states, relerr
from oracle import to_pinocchio
from random_chain import random_description

from symdyn.cli import main
from symdyn.readers.description import build_model
from symdyn.recursions import base_parameters as bp


def _tilted(n=5, tilt=1e-2):
    """A random chain whose joint axes are all (0.3 t, 1, t): nearly along y in each link's frame."""
    d = random_description(n, 5, "R")
    for joint in d["joints"]:
        joint["axis"] = [0.3 * tilt, 1.0, tilt]
    return d


@pytest.fixture(scope="module")
def tilted():
    model = build_model(_tilted(), "<tilted chain>")
    return model, bp.base_parameters(model)


def _pinocchio_columns(model, seeds):
    """Pinocchio's rigid-body regressor beside the friction and rotor columns (qd, sgn qd, 1, qdd on the
    joint's row), one random state per seed, stacked: (len(seeds) * n, p)."""
    pmodel = to_pinocchio(model)
    data = pmodel.createData()
    n = model.dof
    rows = []
    for seed in seeds:
        q, qd, qdd = (x[0] for x in random_states(n, 1, seed=seed))
        joint = np.zeros((n, 4 * n))
        for j in range(n):
            joint[j, 4 * j:4 * j + 4] = qd[j], np.sign(qd[j]), 1.0, qdd[j]
        rows.append(np.hstack([pin.computeJointTorqueRegressor(pmodel, data, q, qd, qdd), joint]))
    return np.vstack(rows)


def _check_against_pinocchio(model, base):
    """b is the numerical rank of Pinocchio's stacked regressor (a clean gap in its singular values);
    the kept columns are well conditioned; every column of Pinocchio's regressor is the kept ones times
    the grouping (base = B @ standard, so Y = Y_B B) at states the grouping was not computed from."""
    W = _pinocchio_columns(model, range(100, 100 + -(-3 * len(model.parameters) // model.dof)))
    norms = np.linalg.norm(W, axis=0)
    W = W / np.where(norms > 0, norms, 1.0)                                # columns that never move a joint stay 0
    s = np.linalg.svd(W, compute_uv=False)
    assert s[base.b - 1] > 1e-3 * s[0] and s[base.b] < 1e-12 * s[0]       # rank b, with a clean gap
    assert np.linalg.cond(W[:, list(base.kept)]) < 1e4
    Y = _pinocchio_columns(model, range(200, 204))
    assert relerr(Y[:, list(base.kept)] @ base.matrix(), Y) < 1e-10
    assert base.gap[0] > 1e-2 and base.gap[1] < 1e-13                     # kept / dropped residuals apart


def test_tilted_chain_against_pinocchio(tilted):
    """The standard order kept columns of condition 1e11 and failed its check (1.3e-6)."""
    _check_against_pinocchio(*tilted)


def _near_planar(n, tilt, seed=4):
    """n random links on revolute joints about z tilted by about `tilt`, offsets mostly along x."""
    rng = np.random.default_rng(seed)
    links = [{"name": f"l{k}", "mass": float(rng.uniform(0.5, 3.0)), "com": rng.normal(size=3).tolist(),
              "inertia": {"ixx": 0.3, "iyy": 0.2, "izz": 0.25, "ixy": 0.01, "ixz": -0.02, "iyz": 0.03}}
             for k in range(n)]
    joints = [{"name": f"j{k}", "type": "revolute", "parent": f"l{k - 1}" if k else "base", "child": f"l{k}",
               "origin": {"xyz": [0.5 if k else 0.0, 0.1 * rng.normal(), 0.0], "rpy": [0.0, 0.0, 0.0]},
               "axis": [tilt * rng.normal(), tilt * rng.normal(), 1.0]} for k in range(n)]
    return build_model({"name": f"near_planar{n}", "gravity": [0.0, -9.81, 0.0], "links": links, "joints": joints},
                       "<near-planar chain>")


def test_near_planar_chain_against_pinocchio():
    """Ten joints about z tilted by 1e-3 (a planar arm as built). The standard order: kept columns of
    condition 900, Pinocchio's regressor missed by 4e-10 (with synthetic.random_chain's inertias its
    own check failed: 8e-9)."""
    model = _near_planar(10, 1e-3)
    _check_against_pinocchio(model, bp.base_parameters(model))


def test_tilted_joint_keeps_the_large_component():
    """Joint 1's axis (0.003, 1, 0.01): of its link's first moments mz goes, not my (its coefficient
    in the group would be 1 / 0.01), and the link's base parameters are the clean 0.01, 0.003."""
    model = build_model(_tilted(3), "<tilted chain>")
    base = bp.base_parameters(model)
    names = [model.parameter_names[i] for i in base.kept]
    assert "l1.mz" in names and "l1.my" not in names
    assert "l1.mzR = -0.01*l1.my + l1.mz" in "\n".join(base.describe())


def test_cli_base_parameters_that_fail_their_check_are_one_line(tmp_path, monkeypatch):
    """When the grouping fails its check at fresh states (forced here: coefficients written to 3 digits),
    `generate` prints one line naming the robot's file, exits 2 and writes nothing (was a traceback,
    exit 1). Every module carries the base parameters' names, whatever functions are asked for."""
    robot = tmp_path / "tilted.yaml"
    robot.write_text(yaml.safe_dump(_tilted(3)))
    monkeypatch.setattr(bp, "CLEAN_TOL", 1e-3)
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["generate", str(robot), "--out", str(out), "--functions", "gravity"])
    assert result.exit_code == 2, result.output
    assert result.output.startswith(f"symdyn: error: {robot}: cannot compute the base parameters of random3_5: ")
    assert result.output.count("\n") == 1 and "Traceback" not in result.output
    assert not out.exists() or not any(out.iterdir())


def test_cli_info_base_parameters_that_fail_their_check_are_one_line(tmp_path, monkeypatch):
    robot = tmp_path / "tilted.yaml"
    robot.write_text(yaml.safe_dump(_tilted(3)))
    monkeypatch.setattr(bp, "CLEAN_TOL", 1e-3)
    result = CliRunner().invoke(main, ["info", str(robot), "--no-ops", "--base-parameters"])
    assert result.exit_code == 2, result.output
    assert result.output.startswith(f"symdyn: error: {robot}: cannot compute the base parameters of random3_5: ")
    assert result.output.count("\n") == 1
