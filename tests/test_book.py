"""symdyn's structured recursions (the numeric engine and the generated code's trace) against the
book's dense RNEA, CRBA and ABA (tests/book.py) on robots of revolute and prismatic joints."""
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import symdyn
from book import aba, crba, rnea
from random_chain import random_chain, random_tree

ROOT = Path(__file__).resolve().parent.parent
TOL = 1e-10


def _without_joint_dynamics(model):
    """The book has no friction and no rotor inertia."""
    joints = tuple(replace(j, damping=0.0, friction=0.0, friction_offset=0.0, armature=0.0) for j in model.joints)
    return replace(model, joints=joints)


ROBOTS = {
    "panda": lambda: symdyn.load_robot(ROOT / "robots" / "panda.urdf"),
    "puma560": lambda: symdyn.load_robot(ROOT / "robots" / "puma560.yaml"),
    "stanford": lambda: symdyn.load_robot(ROOT / "robots" / "stanford.yaml"),
    "chain7": lambda: random_chain(7, 4),
    "tree9": lambda: random_tree(9, 6),
}


def relerr(a, b):
    return np.max(np.abs(a - b)) / max(1.0, np.max(np.abs(b)))


@pytest.mark.parametrize("name", sorted(ROBOTS))
def test_fast_forms_equal_the_book(name):
    model = _without_joint_dynamics(ROBOTS[name]())
    assert all(j.type in ("revolute", "continuous", "prismatic") for j in model.joints)
    engine = symdyn.Engine(model)
    rng = np.random.default_rng(7)
    n = model.dof
    for _ in range(3):
        q, qd, qdd = rng.uniform(-2, 2, n), rng.normal(size=n), rng.normal(size=n)
        tau = rnea(model, q, qd, qdd)
        assert relerr(engine.inverse_dynamics(q, qd, qdd), tau) < TOL
        assert relerr(engine.mass_matrix(q), crba(model, q)) < TOL
        assert relerr(engine.forward_dynamics(q, qd, tau), aba(model, q, qd, tau)) < TOL
        assert relerr(aba(model, q, qd, tau), qdd) < 1e-8       # the book's own ABA inverts its RNEA


def test_the_book_is_not_graded_by_itself():
    """A wrong reference fails: the book's RNEA with the gravity's sign flipped differs from the engine."""
    model = _without_joint_dynamics(ROBOTS["puma560"]())
    flipped = replace(model, gravity=tuple(-g for g in model.gravity))
    q, z = np.full(model.dof, 0.3), np.zeros(model.dof)
    assert relerr(symdyn.Engine(model).inverse_dynamics(q, z, z), rnea(flipped, q, z, z)) > 1e-3
