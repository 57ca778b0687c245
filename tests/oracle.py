"""Pinocchio as the independent oracle: the same Model rebuilt as a pinocchio.Model."""
import numpy as np
import pinocchio as pin


def to_pinocchio(model):
    """A pinocchio.Model with the same joints, placements and inertias (ours, base to tip)."""
    pm = pin.Model()
    pm.gravity = pin.Motion(np.array(model.gravity), np.zeros(3))  # pin.Motion(linear, angular)
    ids = []
    for joint, body in zip(model.joints, model.bodies):
        axis = np.array(joint.axis)
        jm = pin.JointModelRevoluteUnaligned(axis) if joint.type == "revolute" else pin.JointModelPrismaticUnaligned(axis)
        placement = pin.SE3(np.array(joint.rotation), np.array(joint.offset))
        parent = ids[joint.parent] if joint.parent >= 0 else 0
        jid = pm.addJoint(parent, jm, placement, joint.name)
        pm.appendBodyToJoint(jid, pin.Inertia.FromDynamicParameters(np.array(body.params)), pin.SE3.Identity())
        ids.append(jid)
    return pm


class Pinocchio:
    """The functions of a generated module, computed by Pinocchio, one state at a time."""

    def __init__(self, pmodel):
        self.model, self.data = pmodel, pmodel.createData()

    def inverse_dynamics(self, q, qd, qdd):
        return pin.rnea(self.model, self.data, q, qd, qdd).copy()

    def mass_matrix(self, q):
        M = pin.crba(self.model, self.data, q).copy()
        return np.triu(M) + np.triu(M, 1).T

    def mass_matrix_inverse(self, q):
        Mi = pin.computeMinverse(self.model, self.data, q).copy()
        return np.triu(Mi) + np.triu(Mi, 1).T

    def forward_dynamics(self, q, qd, tau):
        return pin.aba(self.model, self.data, q, qd, tau).copy()

    def gravity(self, q):
        return pin.computeGeneralizedGravity(self.model, self.data, q).copy()

    def coriolis_matrix(self, q, qd):
        return pin.computeCoriolisMatrix(self.model, self.data, q, qd).copy()

    def nonlinear_effects(self, q, qd):
        return pin.nonLinearEffects(self.model, self.data, q, qd).copy()
