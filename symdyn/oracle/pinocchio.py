"""Pinocchio as the oracle of symdyn's functions: the same Model rebuilt as a pinocchio.Model, and
Pinocchio's counterpart of each function that declares one (`Function.pinocchio` in symdyn.functions: the
one list that `symdyn compare` and the tests check against)."""
from pathlib import Path

import numpy as np

from ..functions import FUNCTIONS, KINEMATICS, counterparts

#: symdyn function -> the Pinocchio algorithm it is checked against, every function that declares one
#: (the keys of pinocchio_functions, _derivative_functions and pinocchio_constraint_functions)
DECLARED = counterparts("pinocchio")
#: the frame functions, with Pinocchio's counterparts when it is given the frames (pinocchio_functions)
FRAME_COUNTERPARTS = counterparts("pinocchio", KINEMATICS)
#: the other functions of the default set
COUNTERPARTS = {name: c for name, c in counterparts("pinocchio", FUNCTIONS).items() if name not in FRAME_COUNTERPARTS}
PINOCCHIO_NAMES = tuple(COUNTERPARTS)
PINOCCHIO_FRAME_NAMES = tuple(FRAME_COUNTERPARTS)


class JointsDisagree(ValueError):
    """Pinocchio's URDF parser finds other joints than symdyn (the only ValueError `compare` reports as
    Pinocchio's: any other exception is a crash of symdyn)."""


def pinocchio_model(model):
    """The same Model rebuilt as a pinocchio.Model (joints, placements, inertias, gravity, rotor inertias
    in model.armature, viscous and Coulomb friction in model.damping and model.friction)."""
    import pinocchio as pin
    pm = pin.Model()
    pm.gravity = pin.Motion(np.array(model.gravity), np.zeros(3))      # pin.Motion(linear, angular)
    ids = []
    for joint, body in zip(model.joints, model.bodies):
        jid = pm.addJoint(ids[joint.parent] if joint.parent >= 0 else 0, joint.kind.pinocchio(joint.axis),
                          pin.SE3(np.array(joint.rotation), np.array(joint.offset)), joint.name)
        pm.appendBodyToJoint(jid, _pinocchio_inertia(body.params), pin.SE3.Identity())
        ids.append(jid)
    for f in model.frames:
        if not pm.existFrame(f.name):
            pm.addFrame(pin.Frame(f.name, ids[f.parent] if f.parent >= 0 else 0,
                                  pin.SE3(np.array(f.rotation), np.array(f.translation)), pin.FrameType.OP_FRAME))
    set_joint_dynamics(pm, model)
    return pm


def joint_dynamics_vectors(model, tree=False):
    """{field: velocity-sized array} of the joints' armature, damping, friction, friction_offset
    (a multi-DoF joint's damping and armature on each of its entries; it has no other); tree=True: of every joint of the tree
    (mimic joints included)."""
    nv, slices = (model.tree_nv, model.tree_v_slices) if tree else (model.nv, model.v_slices)
    out = {key: np.zeros(nv) for key in ("armature", "damping", "friction", "friction_offset")}
    for joint, vi in zip(model.joints, slices):
        if len(vi) == 1:
            for key in out:
                out[key][vi[0]] = getattr(joint, key)
        else:                           # MJCF's ball and free joints: their one value on each DoF
            out["damping"][list(vi)], out["armature"][list(vi)] = joint.damping, joint.armature
    return out


def passive_forces(model, tree=False):
    """(force(q), d force/dq (q)) of the joint springs K (q - q_ref) minus MuJoCo's gravcomp g_c(q)
    (symdyn.recursions.friction), which Pinocchio has no field for, in symdyn's q and tangent space (tree=True:
    the tree's configuration, mimic joints included); None when the model has neither."""
    import pinocchio as pin
    q_slices, v_slices = (model.tree_q_slices, model.tree_v_slices) if tree else (model.q_slices, model.v_slices)
    nv = model.tree_nv if tree else model.nv
    springs = [(qi[0], vi[0], j.stiffness, j.springref)
               for j, qi, vi in zip(model.joints, q_slices, v_slices) if len(vi) == 1 and j.stiffness]
    held = _compensated_model(model) if any(b.gravcomp for b in model.bodies) else None
    if not springs and held is None:
        return None
    data = held.createData() if held is not None else None
    c = pinocchio_configuration(held) if held is not None else None
    K = np.zeros((nv, nv))
    for _, i, k, _ in springs:
        K[i, i] = k

    def force(q):
        out = np.zeros(nv)
        for qi, vi, k, ref in springs:
            out[vi] = k * (q[qi] - ref)
        return out if held is None else out - pin.computeGeneralizedGravity(held, data, c(q))

    def derivative(q):
        return K if held is None else K - pin.computeGeneralizedGravityDerivatives(held, data, c(q))
    return force, derivative


def _compensated_model(model):
    """Pinocchio's model whose bodies have the masses and first moments MuJoCo's gravcomp holds up."""
    import pinocchio as pin
    pm = pinocchio_model(model)
    for k, body in enumerate(model.bodies):
        m, h = (body.gravcomp[0], np.array(body.gravcomp[1:4])) if body.gravcomp else (0.0, np.zeros(3))
        pm.inertias[k + 1] = pin.Inertia(m, h / m if m else np.zeros(3), np.zeros((3, 3)))
    return pm


def set_joint_dynamics(pmodel, model):
    """Pinocchio's model.armature, damping and friction from symdyn's joints."""
    values = joint_dynamics_vectors(model, tree=bool(model.mimic))   # per joint of the tree
    pmodel.armature[:] = values["armature"]
    pmodel.damping[:] = values["damping"]
    pmodel.friction[:] = values["friction"]


def _frame_functions(pmodel, data, frames, c):
    """Pinocchio's kinematics, centroidal maps and dynamics with wrenches at the frames named `frames`."""
    import pinocchio as pin
    ids = _frame_ids(pmodel, frames)
    world = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED

    def placements(q):
        pin.framesForwardKinematics(pmodel, data, c(q))
        return np.array([data.oMf[i].homogeneous for i in ids])

    def jacobians(q):
        pin.computeJointJacobians(pmodel, data, c(q))
        pin.updateFramePlacements(pmodel, data)
        return np.array([pin.getFrameJacobian(pmodel, data, i, world) for i in ids])

    def velocities(q, v):
        pin.forwardKinematics(pmodel, data, c(q), v)
        return np.array([pin.getFrameVelocity(pmodel, data, i, world).vector for i in ids])

    def bias(q, v):
        pin.forwardKinematics(pmodel, data, c(q), v, np.zeros(pmodel.nv))
        return np.array([pin.getFrameClassicalAcceleration(pmodel, data, i, world).vector for i in ids])

    def joint_forces(q, f_ext):
        """World wrenches [f; n] at the frames -> Pinocchio's fext: one Force per joint, local axes."""
        pin.framesForwardKinematics(pmodel, data, c(q))
        out = [pin.Force.Zero() for _ in range(pmodel.njoints)]
        for i, w in zip(ids, np.asarray(f_ext)):
            j = pmodel.frames[i].parentJoint
            oMj = data.oMi[j]
            lever = data.oMf[i].translation - oMj.translation
            out[j] += pin.Force(oMj.rotation.T @ w[:3], oMj.rotation.T @ (w[3:] + np.cross(lever, w[:3])))
        return out

    def inverse_inertia(q):
        Minv = pin.computeMinverse(pmodel, data, c(q))
        Minv = np.triu(Minv) + np.triu(Minv, 1).T
        J = np.concatenate(list(jacobians(q)))
        return J @ Minv @ J.T

    return {"frame_placement": placements, "frame_jacobian": jacobians, "frame_velocity": velocities,
            "frame_acceleration_bias": bias,
            "center_of_mass": lambda q: pin.centerOfMass(pmodel, data, c(q)).copy(),
            "com_jacobian": lambda q: pin.jacobianCenterOfMass(pmodel, data, c(q)).copy(),
            "centroidal_momentum_matrix": lambda q: pin.ccrba(pmodel, data, c(q), np.zeros(pmodel.nv)).copy(),
            "centroidal_momentum": lambda q, v: pin.computeCentroidalMomentum(pmodel, data, c(q), v).vector.copy(),
            "operational_space_inertia_inverse": inverse_inertia,
            "inverse_dynamics_fext": lambda q, v, a, f: pin.rnea(pmodel, data, c(q), v, a, joint_forces(q, f)).copy(),
            "forward_dynamics_fext": lambda q, v, t, f: pin.aba(pmodel, data, c(q), v, t, joint_forces(q, f)).copy()}


def _frame_ids(pmodel, names):
    """Pinocchio's frame index of each name: a body's frame first, then an operational, a fixed-joint
    and a joint frame (a URDF link and the joint into it share the name)."""
    import pinocchio as pin
    kinds = (pin.FrameType.BODY, pin.FrameType.OP_FRAME, pin.FrameType.FIXED_JOINT, pin.FrameType.JOINT)
    return [next(i for i in (pmodel.getFrameId(name, t) for t in kinds) if i < pmodel.nframes) for name in names]


def _pinocchio_inertia(params):
    """pin.Inertia of the ten parameters; a massless (virtual) body has no centre of mass to divide
    by: its inertia about the origin is all there is."""
    import pinocchio as pin
    if params[0] != 0:
        return pin.Inertia.FromDynamicParameters(np.array(params))
    _, _, _, _, Ixx, Ixy, Iyy, Ixz, Iyz, Izz = params
    return pin.Inertia(0.0, np.zeros(3), np.array([[Ixx, Ixy, Ixz], [Ixy, Iyy, Iyz], [Ixz, Iyz, Izz]]))


def pinocchio_urdf_model(model):
    """Pinocchio's own URDF parser on the model's file, fixed base: the independent check of the
    reading too (docs/validation.md, section 4). None when the model was not read from a URDF file
    as is (YAML, DH, snapped right angles)."""
    read = model.provenance
    if not _urdf_as_read(read) or (model.mimic and read.locked):
        return None                        # (locked joints of a mimic model: Pinocchio's reduction has no mimic)
    import pinocchio as pin
    from ..readers.description import ROOT_JOINT
    added = model.floating and model.joints[0].name == ROOT_JOINT     # --floating-base
    mimic = bool(model.mimic)              # reduced coordinates: Pinocchio's JointModelMimic
    pm = pin.buildModelFromUrdf(read.path, pin.JointModelFreeFlyer(), mimic=mimic) if added else \
        pin.buildModelFromUrdf(read.path, mimic=mimic)
    if read.locked:                        # --lock: Pinocchio's own reduction of its own model
        q_ref = pin.neutral(pm)
        for name, value in read.locked:
            joint = pm.joints[pm.getJointId(name)]
            q_ref[joint.idx_q:joint.idx_q + joint.nq] = (value,) if joint.nq == 1 else (np.cos(value), np.sin(value))
        pm = pin.buildReducedModel(pm, [pm.getJointId(name) for name, _ in read.locked], q_ref)
    pm.gravity = pin.Motion(np.array(model.gravity), np.zeros(3))
    return pm


def _urdf_as_read(provenance):
    """Is the model its URDF file as read (no right angles snapped, no links cut away)? Pinocchio's parser
    can then read the same file."""
    return Path(provenance.path).suffix.lower() == ".urdf" and not provenance.snapped and not provenance.cut


def pinocchio_reference(model):
    """(pinocchio.Model, how it was built): Pinocchio's URDF parser for a URDF file, else symdyn's
    Model rebuilt joint by joint. JointsDisagree when the parser finds other joints or another order."""
    try:
        pm = pinocchio_urdf_model(model)
    except ValueError as exc:              # urdfdom is stricter (e.g. <limit> required on revolute joints)
        return pinocchio_model(model), f"symdyn's model rebuilt in Pinocchio; its URDF parser refuses the file ({exc})"
    if pm is None:
        return pinocchio_model(model), "symdyn's model rebuilt in Pinocchio"
    theirs, ours = tuple(pm.names)[1:], tuple(j.name for j in model.joints)
    if theirs != ours or pm.nv != model.dof:
        raise JointsDisagree(f"Pinocchio's URDF parser finds the joints {', '.join(theirs)}; "
                         f"symdyn finds {', '.join(ours)}")
    locked = ", joints locked by its buildReducedModel" if model.provenance.locked else ""
    return pm, "Pinocchio's own URDF parser" + locked


def pinocchio_configuration(pmodel):
    """q in symdyn's convention (one angle per 1-DoF joint) -> Pinocchio's q: a continuous joint
    (RevoluteUnbounded, nq 2) is (cos q, sin q) there; multi-DoF joints share the convention."""
    if pmodel.nq == pmodel.nv:
        return lambda q: np.asarray(q, dtype=float)
    pieces, start = [], 0         # (Pinocchio's q index, symdyn's q index, Pinocchio's nq, angle?)
    for joint in pmodel.joints[1:]:
        angle = joint.nv == 1 and joint.nq == 2
        pieces.append((joint.idx_q, start, joint.nq, angle))
        start += 1 if angle else joint.nq

    def convert(q):
        q = np.asarray(q, dtype=float)
        out = np.empty(pmodel.nq)
        for iq, sq, nq, angle in pieces:
            out[iq:iq + nq] = (np.cos(q[sq]), np.sin(q[sq])) if angle else q[sq:sq + nq]
        return out
    return convert


def pinocchio_functions(pmodel, frames=(), offset=None, smoothing=0.0, passive=None):
    """Pinocchio's counterparts of the generated functions, one state at a time, full matrices,
    taking symdyn's q (pinocchio_configuration); with `frames` (names), also those of the frame
    kinematics, centroidal maps and external wrenches.

    Pinocchio's crba, aba, rnea and computeMinverse include model.armature; its model.damping and
    model.friction are data only, so the joint friction Fv v + Fc sign(v) (+ the offset, which
    Pinocchio has no field for) is added here, term by term. The regressor is
    computeJointTorqueRegressor (rigid bodies) beside the friction and armature columns. passive: the
    (force(q), derivative(q)) of passive_forces, added as the friction is (not to the regressor)."""
    import pinocchio as pin
    data = pmodel.createData()
    c = pinocchio_configuration(pmodel)
    offset = np.zeros(pmodel.nv) if offset is None else np.asarray(offset, dtype=float)
    sgn = (lambda v: np.tanh(v / smoothing)) if smoothing else np.sign
    fric_v = lambda v: pmodel.damping * v + pmodel.friction * sgn(v) + offset
    spring = passive[0] if passive else (lambda q: 0.0)
    fric = lambda v, q: fric_v(v) + spring(q)
    sym = lambda A: np.triu(A) + np.triu(A, 1).T        # crba and computeMinverse fill the upper triangle

    def udu(q):                                          # M = U D U^T (pinocchio.cholesky)
        pin.crba(pmodel, data, c(q))
        pin.cholesky.decompose(pmodel, data)
        return data.U.copy(), data.D.copy()

    def regressor(q, v, a):
        joints = np.zeros((pmodel.nv, 4 * (pmodel.njoints - 1)))
        for k, joint in enumerate(pmodel.joints[1:]):
            if joint.nv == 1:
                i = joint.idx_v
                joints[i, 4 * k:4 * k + 4] = v[i], sgn(v[i]), 1.0, a[i]
            else:                       # a ball or free joint's Fv and Ia, where the model has them
                i = slice(joint.idx_v, joint.idx_v + joint.nv)
                joints[i, 4 * k] = v[i] if pmodel.damping[i].any() else 0.0
                joints[i, 4 * k + 3] = a[i] if pmodel.armature[i].any() else 0.0
        return np.hstack([pin.computeJointTorqueRegressor(pmodel, data, c(q), v, a), joints])

    extra = _frame_functions(pmodel, data, frames, c) if frames else {}
    if frames:          # the f_ext variants include the joint friction too
        rnea_f, aba_f = extra["inverse_dynamics_fext"], extra["forward_dynamics_fext"]
        extra["inverse_dynamics_fext"] = lambda q, v, a, w: rnea_f(q, v, a, w) + fric(v, q)
        extra["forward_dynamics_fext"] = lambda q, v, t, w: aba_f(q, v, t - fric(v, q), w)
    return {**extra,
            "inverse_dynamics": lambda q, v, a: pin.rnea(pmodel, data, c(q), v, a) + fric(v, q),
            "mass_matrix": lambda q: sym(pin.crba(pmodel, data, c(q))),
            "mass_matrix_inverse": lambda q: sym(pin.computeMinverse(pmodel, data, c(q))),
            "forward_dynamics": lambda q, v, t: pin.aba(pmodel, data, c(q), v, t - fric(v, q)).copy(),
            "gravity": lambda q: pin.computeGeneralizedGravity(pmodel, data, c(q)).copy(),
            "coriolis_matrix": lambda q, v: pin.computeCoriolisMatrix(pmodel, data, c(q), v).copy(),
            "nonlinear_effects": lambda q, v: pin.nonLinearEffects(pmodel, data, c(q), v) + fric(v, q),
            "articulated_inertia": lambda q: udu(q)[1], "udu_factor": lambda q: udu(q)[0],
            "regressor": regressor, **_derivative_functions(pmodel, data, c, fric, sym, passive)}


def _derivative_functions(pmodel, data, c, fric, sym, passive=None):
    """Pinocchio's derivatives and energies. Its damping is data only: the viscous friction's diag(Fv)
    enters dtau/dv, and -M^-1 diag(Fv) ddq/dv (aba runs on tau - friction(v)). The kinetic energy is
    the bodies' (computeKineticEnergy on the model without armature: Pinocchio 4.1 counts the armature
    of some joint types there and not of others) plus the rotors' 1/2 Ia v^2."""
    import pinocchio as pin
    rigid = pin.Model(pmodel)
    rigid.armature[:] = 0.0
    rigid_data = rigid.createData()

    spring_dq = passive[1] if passive else (lambda q: np.zeros((pmodel.nv, pmodel.nv)))

    def rnea_derivatives(q, v, a):
        dq, dv, _ = pin.computeRNEADerivatives(pmodel, data, c(q), v, a)
        return dq + spring_dq(q), dv + np.diag(pmodel.damping)

    def aba_derivatives(q, v, tau):
        dq, dv, Minv = pin.computeABADerivatives(pmodel, data, c(q), v, tau - fric(v, q))
        Minv = sym(Minv)
        return dq - Minv @ spring_dq(q), dv - Minv @ np.diag(pmodel.damping), Minv

    return {"inverse_dynamics_derivatives": rnea_derivatives, "forward_dynamics_derivatives": aba_derivatives,
            "kinetic_energy": lambda q, v: pin.computeKineticEnergy(rigid, rigid_data, c(q), v)
            + 0.5 * float(pmodel.armature @ (v * v)),
            "potential_energy": lambda q: pin.computePotentialEnergy(pmodel, data, c(q))}


def coupling_matrix(model):
    """G of the mimic joints (tree rates = G v), built from model.mimic alone: the oracle's own."""
    tree = [i for vi in model.tree_v_slices for i in vi]
    G = np.zeros((len(tree), model.nv))
    own = [t for vt, vi in zip(model.tree_v_slices, model.v_slices) for t, _ in zip(vt, vi)]
    G[own, np.arange(model.nv)] = 1.0
    for m in model.mimic:
        G[model.tree_v_slices[m.joint][0]] = m.multiplier * G[model.tree_v_slices[m.master][0]]
    return G


def tree_configuration(model, q):
    """The tree's configuration (symdyn's convention) of coordinates q: mimic joints from their masters."""
    q = np.asarray(q, dtype=float)
    out = np.zeros(q.shape[:-1] + (model.tree_nq,))
    for qt, qi in zip(model.tree_q_slices, model.q_slices):
        if qi:
            out[..., list(qt)] = q[..., list(qi)]
    for m in model.mimic:
        out[..., model.tree_q_slices[m.joint][0]] = m.multiplier * out[..., model.tree_q_slices[m.master][0]] + m.offset
    return out


def _mimic_functions(model, pmodel):
    """The counterparts in reduced coordinates: Pinocchio's model of the whole tree (every mimic joint
    independent) with the coupling applied, q_tree = G q + c: tau = G^T tau_tree(G v, G a),
    M = G^T M_tree G, C = G^T C_tree G, J = J_tree G, M^-1 and forward dynamics by solving with
    G^T M_tree G. (Pinocchio 4.1's own mimic=True model agrees on rnea but not on crba when a mimic
    joint has children, nor on computeCoriolisMatrix: tests/test_mimic.py.)"""
    import pinocchio as pin
    path = model.provenance.path
    if model.provenance.locked or not _urdf_as_read(model.provenance):
        pmodel = pinocchio_model(model)    # symdyn's tree rebuilt joint by joint (the mimic joints as joints)
    else:
        pmodel = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer()) if model.floating and \
            model.joints[0].name == "root_joint" else pin.buildModelFromUrdf(path)
        pmodel.gravity = pin.Motion(np.array(model.gravity), np.zeros(3))
    values = joint_dynamics_vectors(model, tree=True)
    pmodel.armature[:], pmodel.damping[:], pmodel.friction[:] = values["armature"], values["damping"], values["friction"]
    full = pinocchio_functions(pmodel, [f.name for f in model.kinematic_frames], values["friction_offset"],
                               model.coulomb_smoothing, passive_forces(model, tree=True))
    G, t = coupling_matrix(model), lambda q: tree_configuration(model, q)
    M = lambda q: G.T @ full["mass_matrix"](t(q)) @ G
    b = lambda q, v: G.T @ full["nonlinear_effects"](t(q), G @ v)
    out = {"inverse_dynamics": lambda q, v, a: G.T @ full["inverse_dynamics"](t(q), G @ v, G @ a),
           "mass_matrix": M, "mass_matrix_inverse": lambda q: np.linalg.inv(M(q)),
           "forward_dynamics": lambda q, v, tau: np.linalg.solve(M(q), tau - b(q, v)),
           "gravity": lambda q: G.T @ full["gravity"](t(q)),
           "coriolis_matrix": lambda q, v: G.T @ full["coriolis_matrix"](t(q), G @ v) @ G,
           "nonlinear_effects": b,
           "regressor": lambda q, v, a: G.T @ full["regressor"](t(q), G @ v, G @ a)}
    out.update(_mimic_derivatives(full, G, t, out))
    if model.kinematic_frames:
        for name in ("frame_placement", "center_of_mass"):
            out[name] = (lambda f: lambda q: f(t(q)))(full[name])
        for name in ("frame_jacobian", "com_jacobian", "centroidal_momentum_matrix"):
            out[name] = (lambda f: lambda q: f(t(q)) @ G)(full[name])
        for name in ("frame_velocity", "frame_acceleration_bias", "centroidal_momentum"):
            out[name] = (lambda f: lambda q, v: f(t(q), G @ v))(full[name])
        jac = lambda q: np.concatenate(list(full["frame_jacobian"](t(q)) @ G))
        out["operational_space_inertia_inverse"] = lambda q: jac(q) @ np.linalg.inv(M(q)) @ jac(q).T
        fext = full["inverse_dynamics_fext"]
        out["inverse_dynamics_fext"] = lambda q, v, a, w: G.T @ fext(t(q), G @ v, G @ a, w)
        out["forward_dynamics_fext"] = lambda q, v, tau, w: np.linalg.solve(
            M(q), tau - G.T @ fext(t(q), G @ v, 0 * (G @ v), w))
    return out


def _mimic_derivatives(full, G, t, reduced):
    """The derivatives in reduced coordinates from the tree's computeRNEADerivatives (G constant):
    dtau = G^T dtau_tree G at (G q + c, G v, G a), and the forward dynamics' -M^-1 dtau at its qdd with the
    reduced M^-1 (differentiating ID(q, v, FD(q, v, tau)) = tau)."""
    def inverse(q, v, a):
        return tuple(G.T @ d @ G for d in full["inverse_dynamics_derivatives"](t(q), G @ v, G @ a))

    def forward(q, v, tau):
        Minv = reduced["mass_matrix_inverse"](q)
        dq, dv = inverse(q, v, reduced["forward_dynamics"](q, v, tau))
        return -Minv @ dq, -Minv @ dv, Minv
    return {"inverse_dynamics_derivatives": inverse, "forward_dynamics_derivatives": forward}


def pinocchio_constraint_functions(pmodel, model, friction=None):
    """Pinocchio's counterparts of the constraint functions for the model's contacts (RigidConstraintModel
    CONTACT_3D / CONTACT_6D at the frame, LOCAL_WORLD_ALIGNED), one state at a time, symdyn's q:
    constraintDynamics (proximal iterations to convergence), impulseDynamics (no regularization, exact),
    and for point contacts its Baumgarte corrector, the anchors placed at p(q) - error so that its
    position error is ours. friction(v): subtracted from tau as in forward_dynamics. {} when a
    constraint is a loop closure (symdyn.multibody.constraints: not compared here)."""
    import pinocchio as pin
    contacts = model.constraints
    if not contacts or any(not k.is_contact for k in contacts):
        return {}
    data, c = pmodel.createData(), pinocchio_configuration(pmodel)
    friction = friction or (lambda v: 0.0)
    ids = _frame_ids(pmodel, [k.frame for k in contacts])
    constraints = _contact_models(pmodel, data, contacts, ids)
    plain = constraints()
    converged, exact = pin.ProximalSettings(1e-14, 1e-12, 20), pin.ProximalSettings(1e-14, 0.0, 1)

    def forward(q, v, tau, pair=None):
        models, datas = pair or plain
        a = pin.constraintDynamics(pmodel, data, c(q), v, tau - friction(v), models, datas, converged).copy()
        return a, data.lambda_c.copy()

    def baumgarte(q, v, tau, gains, error):
        pin.framesForwardKinematics(pmodel, data, c(q))
        anchors = [data.oMf[i].translation - e for i, e in zip(ids, np.reshape(error, (-1, 3)))]
        return forward(q, v, tau, constraints(anchors, gains))

    def impact(q, v, e):
        vplus = pin.impulseDynamics(pmodel, data, c(q), v, *plain, float(e[0]), exact).copy()
        return vplus, data.impulse_c.copy()

    out = {**_contact_kinematics(pmodel, data, c, contacts, ids), "constrained_forward_dynamics": forward,
           "impact": impact}
    if all(k.kind == "3d" for k in contacts):       # a 6-D anchor's error is a log6 in Pinocchio
        out["constrained_forward_dynamics_baumgarte"] = baumgarte
    return out


def _contact_models(pmodel, data, contacts, ids):
    """constraints(anchors=None, gains=None) -> (models, datas): Pinocchio's RigidConstraintModels of the
    contacts at the frames `ids`, initialized for constraintDynamics; with anchors (one point per contact,
    world) and Baumgarte gains (Kp, Kd), the contacts hold the frames to those points."""
    import pinocchio as pin
    kinds = {"3d": pin.ContactType.CONTACT_3D, "6d": pin.ContactType.CONTACT_6D}
    world = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED

    def constraints(anchors=None, gains=None):
        models, datas = pin.StdVec_RigidConstraintModel(), pin.StdVec_RigidConstraintData()
        for n, (k, i) in enumerate(zip(contacts, ids)):
            frame = pmodel.frames[i]
            cm = pin.RigidConstraintModel(kinds[k.kind], pmodel, frame.parentJoint, frame.placement, world)
            if anchors is not None:
                cm.joint2_placement = pin.SE3(np.eye(3), anchors[n])
                corrector = cm.m_baumgarte_parameters
                corrector.Kp, corrector.Kd = float(gains[0]), float(gains[1])
                cm.m_baumgarte_parameters = corrector
            models.append(cm)
        for cm in models:
            datas.append(cm.createData())
        pin.initConstraintDynamics(pmodel, data, models, datas)
        return models, datas
    return constraints


def _contact_kinematics(pmodel, data, c, contacts, ids):
    """Pinocchio's constraint_jacobian and constraint_drift: the contact frames' Jacobian and classical (point)
    or spatial (6-D) acceleration at zero qdd, the rows each contact constrains, LOCAL_WORLD_ALIGNED."""
    import pinocchio as pin
    world = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED

    def rows(stacked):
        return np.concatenate([x[:k.rows] for x, k in zip(stacked, contacts)])

    def jacobian(q):
        pin.computeJointJacobians(pmodel, data, c(q))
        pin.updateFramePlacements(pmodel, data)
        return rows([pin.getFrameJacobian(pmodel, data, i, world) for i in ids])

    def drift(q, v):
        pin.forwardKinematics(pmodel, data, c(q), v, np.zeros(pmodel.nv))
        return rows([(pin.getFrameClassicalAcceleration if k.kind == "3d" else pin.getFrameAcceleration)(
            pmodel, data, i, world).vector for k, i in zip(contacts, ids)])
    return {"constraint_jacobian": jacobian, "constraint_drift": drift}
