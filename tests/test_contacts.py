"""Contacts: constraint Jacobian and drift, constrained forward dynamics and impacts, against
Pinocchio's constraintDynamics / impulseDynamics (RigidConstraintModel CONTACT_3D / CONTACT_6D,
LOCAL_WORLD_ALIGNED) on solo12 with a floating base and on a held-out random tree, and against
identities (J qdd + J_dot v = 0, the equations of motion, J v+ = -e J v, kinetic energy, the
M-closest velocity), in the engine and the generated Python and C."""
import numpy as np
import pinocchio as pin
import pytest

import symdyn
from conftest import erd_path, relerr
from random_chain import random_tree
from symdyn import lie
from symdyn.compare import pinocchio_model
from symdyn.constraints import attach, parse_contacts

TOL = 1e-9
FEET = ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")
SOLO = "solo_description/robots/solo12.urdf"


def _pinocchio_constraints(pmodel, contacts):
    """Pinocchio's RigidConstraintModels of our contacts (frame origin, LOCAL_WORLD_ALIGNED) and datas."""
    models, datas = pin.StdVec_RigidConstraintModel(), pin.StdVec_RigidConstraintData()
    kinds = {"3d": pin.ContactType.CONTACT_3D, "6d": pin.ContactType.CONTACT_6D}
    for c in contacts:
        frame = pmodel.frames[pmodel.getFrameId(c.frame)]
        models.append(pin.RigidConstraintModel(kinds[c.kind], pmodel, frame.parentJoint, frame.placement,
                                               pin.ReferenceFrame.LOCAL_WORLD_ALIGNED))
    for m in models:
        datas.append(m.createData())
    return models, datas


class Oracle:
    """Pinocchio's constrained dynamics and impacts for one model and its contacts."""

    def __init__(self, pmodel, contacts):
        self.pm, self.pd = pmodel, pmodel.createData()
        self.models, self.datas = _pinocchio_constraints(pmodel, contacts)
        pin.initConstraintDynamics(self.pm, self.pd, self.models, self.datas)
        self.prox = pin.ProximalSettings(1e-14, 1e-12, 20)   # iterated to convergence (1 iteration: 1e-8 off)
        self.exact = pin.ProximalSettings(1e-14, 0.0, 1)     # impulseDynamics does not iterate: no regularization

    def forward(self, q, v, tau):
        a = pin.constraintDynamics(self.pm, self.pd, q, v, tau, self.models, self.datas, self.prox).copy()
        return a, self.pd.lambda_c.copy()

    def impact(self, q, v, e):
        vplus = pin.impulseDynamics(self.pm, self.pd, q, v, self.models, self.datas, e, self.exact).copy()
        return vplus, self.pd.impulse_c.copy()


def _states(model, count, seed):
    rng = np.random.default_rng(seed)
    return lie.random_configuration(model, rng, count), rng.normal(size=(count, model.nv)), \
        rng.normal(size=(count, model.nv)) * 3


@pytest.fixture(scope="module")
def solo():
    """solo12, floating, on its 4 feet (point contacts), with Pinocchio's own parse of the URDF."""
    path = erd_path(SOLO)
    model = symdyn.load_robot(path, floating_base=True, contacts=",".join(FEET))
    return model, pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())


def _tree():
    """A held-out fixed-base tree (14 revolute and prismatic joints) with point contacts on two leaves."""
    return attach(random_tree(14, 43, "RP", fixed=0.3), parse_contacts("l18,l15"))


def _against_pinocchio(engine, oracle, model, q, v, tau, e=0.4):
    fric = engine.friction(v)
    worst = {}
    for s in range(len(q)):
        a, lam = oracle.forward(q[s], v[s], tau[s] - fric[s])
        qdd, ours = engine.constrained_forward_dynamics(q[s], v[s], tau[s])
        worst["qdd"] = max(worst.get("qdd", 0), relerr(qdd, a))
        worst["lambda"] = max(worst.get("lambda", 0), relerr(ours, lam))
        vplus, impulse = oracle.impact(q[s], v[s], e)
        vp, P = engine.impact(q[s], v[s], [e])
        worst["v_plus"] = max(worst.get("v_plus", 0), relerr(vp, vplus))
        worst["impulse"] = max(worst.get("impulse", 0), relerr(P, impulse))
    return worst


def test_solo12_engine_equals_pinocchio(solo):
    model, pm = solo
    engine = symdyn.Engine(model)
    assert engine.CONSTRAINTS == tuple(f"{f}:3d" for f in FEET)
    worst = _against_pinocchio(engine, Oracle(pm, model.constraints), model, *_states(model, 5, 1))
    assert max(worst.values()) < TOL, worst


def test_solo12_6d_contacts_equal_pinocchio():
    """Two welded feet (CONTACT_6D): Pinocchio constrains the spatial acceleration of the frame."""
    path = erd_path(SOLO)
    model = symdyn.load_robot(path, floating_base=True, contacts="FL_FOOT:6d,HR_FOOT:6d")
    pm = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
    worst = _against_pinocchio(symdyn.Engine(model), Oracle(pm, model.constraints), model, *_states(model, 4, 2))
    assert max(worst.values()) < TOL, worst


def test_random_tree_engine_equals_pinocchio():
    model = _tree()
    worst = _against_pinocchio(symdyn.Engine(model), Oracle(pinocchio_model(model), model.constraints), model,
                               *_states(model, 5, 3))
    assert max(worst.values()) < TOL, worst


def test_jacobian_and_drift_are_the_frames(solo):
    """J is the feet's linear Jacobian rows; J_dot v their classical acceleration at qdd = 0; and
    d/dt (J v) along a motion = J qdd + J_dot v (finite differences)."""
    model, _ = solo
    engine = symdyn.Engine(model)
    q, v, qdd = _states(model, 1, 4)
    q, v, qdd = q[0], v[0], qdd[0]
    J = engine.constraint_jacobian(q)
    assert J.shape == (12, model.nv)
    assert np.array_equal(J, engine.frame_jacobian(q)[:, :3].reshape(12, -1))
    assert np.array_equal(engine.constraint_drift(q, v), engine.frame_acceleration_bias(q, v)[:, :3].ravel())
    h = 1e-6
    def vel(t):
        return engine.constraint_jacobian(engine.integrate(q, v + t * qdd / 2, t)) @ (v + t * qdd)
    numeric = (vel(h) - vel(-h)) / (2 * h)
    assert relerr(numeric, J @ qdd + engine.constraint_drift(q, v)) < 1e-6
