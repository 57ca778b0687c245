"""The numeric engine against Pinocchio on every bundled robot and on real arms."""
import numpy as np
import pinocchio as pin
import pytest

import symdyn
from conftest import BUNDLED, ERD_ARMS, erd_path, random_states, relerr
from oracle import Pinocchio, to_pinocchio

TOL = 1e-10
FUNCTIONS = ("inverse_dynamics", "mass_matrix", "mass_matrix_inverse", "forward_dynamics", "gravity",
             "coriolis_matrix", "nonlinear_effects")
ARGS = {"inverse_dynamics": 3, "forward_dynamics": 3, "coriolis_matrix": 2, "nonlinear_effects": 2}


def compare(engine, oracle, n, count=20):
    q, qd, qdd = random_states(n, count)
    worst = {}
    for name in FUNCTIONS:
        args = (q, qd, qdd)[:ARGS.get(name, 1)]
        ours = getattr(engine, name)(*args)                 # the whole batch in one call
        theirs = np.stack([getattr(oracle, name)(*(a[s] for a in args)) for s in range(count)])
        worst[name] = max(relerr(ours[s], theirs[s]) for s in range(count))
    return worst


@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: p.name)
def test_bundled_robot_matches_pinocchio(path):
    model = symdyn.load_robot(path)
    worst = compare(symdyn.Engine(model), Pinocchio(to_pinocchio(model)), model.dof)
    assert max(worst.values()) < TOL, worst


@pytest.mark.parametrize("path", [p for p in BUNDLED if p.suffix == ".urdf"], ids=lambda p: p.name)
def test_bundled_urdf_matches_pinocchio_parser(path):
    """Our URDF reader against Pinocchio's own parser of the same file."""
    model = symdyn.load_robot(path)
    worst = compare(symdyn.Engine(model), Pinocchio(pin.buildModelFromUrdf(str(path))), model.dof)
    assert max(worst.values()) < TOL, worst


@pytest.mark.parametrize("name", sorted(ERD_ARMS))
def test_example_robot_data_arm_matches_pinocchio(name):
    path = erd_path(ERD_ARMS[name])
    model = symdyn.load_robot(path)
    pmodel = pin.buildModelFromUrdf(str(path))
    assert pmodel.nq == model.dof
    assert list(pmodel.names[1:]) == list(model.joint_names)
    worst = compare(symdyn.Engine(model), Pinocchio(pmodel), model.dof)
    assert max(worst.values()) < TOL, worst


def test_dh_robot_equals_its_urdf():
    """PUMA 560 from its DH table and from a hand-converted URDF: same dynamics."""
    from conftest import ROOT
    dh = symdyn.Engine(symdyn.load_robot(ROOT / "robots" / "puma560.yaml"))
    urdf_model = symdyn.load_robot(ROOT / "tests" / "data" / "puma560_equivalent.urdf")
    ur = symdyn.Engine(urdf_model)
    q, qd, qdd = random_states(6, 20, seed=3)
    for name in FUNCTIONS:
        args = (q, qd, qdd)[:ARGS.get(name, 1)]
        assert relerr(getattr(dh, name)(*args), getattr(ur, name)(*args)) < TOL, name
