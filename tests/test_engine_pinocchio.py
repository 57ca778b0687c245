"""The numeric engine against Pinocchio on every bundled robot and on real arms."""
import numpy as np
import pinocchio as pin
import pytest

import symdyn
from conftest import BUNDLED, ERD_ARMS, erd_path, random_states, relerr
from oracle import Pinocchio, to_pinocchio
from symdyn.functions import ALL_BY_NAME
from symdyn.oracle.pinocchio import DECLARED, PINOCCHIO_NAMES, pinocchio_constraint_functions, pinocchio_functions

TOL = 1e-10


def compare(engine, oracle, n, count=20):
    """The worst relative error of each function of the default set with a Pinocchio counterpart."""
    q, qd, qdd = random_states(n, count)
    worst = {}
    for name in PINOCCHIO_NAMES:
        args = (q, qd, qdd)[:len(ALL_BY_NAME[name].args)]       # (q), (q, qd) or (q, qd, qdd or tau)
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


def test_benchmark_robots_match_pinocchio():
    """The robots the benchmarks bundle (benchmarks/robots/: the KUKA iiwa 14) load as Pinocchio loads them."""
    from conftest import ROOT
    paths = sorted((ROOT / "benchmarks" / "robots").glob("*.urdf"))
    assert [p.stem for p in paths] == ["iiwa14"]
    for path in paths:
        model, pmodel = symdyn.load_robot(path), pin.buildModelFromUrdf(str(path))
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
    for name in PINOCCHIO_NAMES:
        args = (q, qd, qdd)[:len(ALL_BY_NAME[name].args)]
        assert relerr(getattr(dh, name)(*args), getattr(ur, name)(*args)) < TOL, name


def test_oracle_implements_exactly_the_declared_counterparts():
    """The Pinocchio adapter's functions are those whose Function declares a counterpart, no more."""
    model = symdyn.load_robot(BUNDLED[0].parent / "ur5.urdf", contacts="tool0:3d")
    pmodel = to_pinocchio(model)
    implemented = {**pinocchio_functions(pmodel, [f.name for f in model.kinematic_frames]),
                   **pinocchio_constraint_functions(pmodel, model)}
    assert set(implemented) == set(DECLARED)
    assert all(ALL_BY_NAME[name].pinocchio == DECLARED[name] for name in DECLARED)
