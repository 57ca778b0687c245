"""`symdyn compare`: the generated code against the numeric engine, the C module and Pinocchio (MuJoCo for a
model in MuJoCo's coordinates, symdyn.oracle.mujoco)."""
import importlib.util
from pathlib import Path

import numpy as np

from .engine import Engine
from .codegen.generator import select_functions
from .errors import one_line
from .functions import arg_dims, arguments, resolve, sizes
from .generate import module_name, render

PINOCCHIO_NAMES = ("inverse_dynamics", "mass_matrix", "mass_matrix_inverse", "forward_dynamics", "gravity",
                   "coriolis_matrix", "nonlinear_effects", "articulated_inertia", "udu_factor", "regressor")
#: the frame functions, with Pinocchio's counterparts when it is given the frames (pinocchio_functions)
PINOCCHIO_FRAME_NAMES = ("frame_placement", "frame_jacobian", "frame_velocity", "frame_acceleration_bias",
                         "center_of_mass", "com_jacobian", "centroidal_momentum_matrix", "centroidal_momentum",
                         "operational_space_inertia_inverse", "inverse_dynamics_fext", "forward_dynamics_fext")


def import_module_file(path, name=None):
    spec = importlib.util.spec_from_file_location(name or Path(path).stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def relative_error(a, b):
    if isinstance(b, tuple):            # several outputs: the worst of them
        return max(relative_error(x, y) for x, y in zip(a, b))
    return float(np.abs(np.asarray(a) - np.asarray(b)).max() / max(1.0, float(np.abs(b).max())))


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
    (zero for the entries of multi-DoF joints, which have none); tree=True: of every joint of the tree
    (mimic joints included)."""
    nv, slices = (model.tree_nv, model.tree_v_slices) if tree else (model.nv, model.v_slices)
    out = {key: np.zeros(nv) for key in ("armature", "damping", "friction", "friction_offset")}
    for joint, vi in zip(model.joints, slices):
        if len(vi) == 1:
            for key in out:
                out[key][vi[0]] = getattr(joint, key)
    return out


def set_joint_dynamics(pmodel, model):
    """Pinocchio's model.armature, damping and friction from symdyn's joints."""
    values = joint_dynamics_vectors(model, tree=bool(model.mimic))   # per joint of the tree
    pmodel.armature[:] = values["armature"]
    pmodel.damping[:] = values["damping"]
    pmodel.friction[:] = values["friction"]


def _frame_functions(pmodel, data, frames, c):
    """Pinocchio's kinematics, centroidal maps and dynamics with wrenches at the frames named `frames`."""
    import pinocchio as pin
    kinds = (pin.FrameType.BODY, pin.FrameType.OP_FRAME, pin.FrameType.FIXED_JOINT, pin.FrameType.JOINT)
    ids = [next(i for i in (pmodel.getFrameId(name, t) for t in kinds) if i < pmodel.nframes) for name in frames]
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
    if Path(model.path).suffix.lower() != ".urdf" or model.snapped or model.cut or (model.mimic and model.locked):
        return None                        # (locked joints of a mimic model: Pinocchio's reduction has no mimic)
    import pinocchio as pin
    from .readers.description import ROOT_JOINT
    added = model.floating and model.joints[0].name == ROOT_JOINT     # --floating-base
    mimic = bool(model.mimic)              # reduced coordinates: Pinocchio's JointModelMimic
    pm = pin.buildModelFromUrdf(str(model.path), pin.JointModelFreeFlyer(), mimic=mimic) if added else \
        pin.buildModelFromUrdf(str(model.path), mimic=mimic)
    if model.locked:                       # --lock: Pinocchio's own reduction of its own model
        q_ref = pin.neutral(pm)
        for name, value in model.locked:
            joint = pm.joints[pm.getJointId(name)]
            q_ref[joint.idx_q:joint.idx_q + joint.nq] = (value,) if joint.nq == 1 else (np.cos(value), np.sin(value))
        pm = pin.buildReducedModel(pm, [pm.getJointId(name) for name, _ in model.locked], q_ref)
    pm.gravity = pin.Motion(np.array(model.gravity), np.zeros(3))
    return pm


def pinocchio_reference(model):
    """(pinocchio.Model, how it was built): Pinocchio's URDF parser for a URDF file, else symdyn's
    Model rebuilt joint by joint. ValueError when the parser finds other joints or another order."""
    try:
        pm = pinocchio_urdf_model(model)
    except ValueError as exc:              # urdfdom is stricter (e.g. <limit> required on revolute joints)
        return pinocchio_model(model), f"symdyn's model rebuilt in Pinocchio; its URDF parser refuses the file ({exc})"
    if pm is None:
        return pinocchio_model(model), "symdyn's model rebuilt in Pinocchio"
    theirs, ours = tuple(pm.names)[1:], tuple(j.name for j in model.joints)
    if theirs != ours or pm.nv != model.dof:
        raise ValueError(f"Pinocchio's URDF parser finds the joints {', '.join(theirs)}; "
                         f"symdyn finds {', '.join(ours)}")
    return pm, "Pinocchio's own URDF parser" + (", joints locked by its buildReducedModel" if model.locked else "")


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


def pinocchio_functions(pmodel, frames=(), offset=None, smoothing=0.0):
    """Pinocchio's counterparts of the generated functions, one state at a time, full matrices,
    taking symdyn's q (pinocchio_configuration); with `frames` (names), also those of the frame
    kinematics, centroidal maps and external wrenches.

    Pinocchio's crba, aba, rnea and computeMinverse include model.armature; its model.damping and
    model.friction are data only, so the joint friction Fv v + Fc sign(v) (+ the offset, which
    Pinocchio has no field for) is added here, term by term. The regressor is
    computeJointTorqueRegressor (rigid bodies) beside the friction and armature columns."""
    import pinocchio as pin
    data = pmodel.createData()
    c = pinocchio_configuration(pmodel)
    offset = np.zeros(pmodel.nv) if offset is None else np.asarray(offset, dtype=float)
    sgn = (lambda v: np.tanh(v / smoothing)) if smoothing else np.sign
    fric = lambda v: pmodel.damping * v + pmodel.friction * sgn(v) + offset
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
        return np.hstack([pin.computeJointTorqueRegressor(pmodel, data, c(q), v, a), joints])

    extra = _frame_functions(pmodel, data, frames, c) if frames else {}
    if frames:          # the f_ext variants include the joint friction too
        rnea_f, aba_f = extra["inverse_dynamics_fext"], extra["forward_dynamics_fext"]
        extra["inverse_dynamics_fext"] = lambda q, v, a, w: rnea_f(q, v, a, w) + fric(v)
        extra["forward_dynamics_fext"] = lambda q, v, t, w: aba_f(q, v, t - fric(v), w)
    return {**extra,
            "inverse_dynamics": lambda q, v, a: pin.rnea(pmodel, data, c(q), v, a) + fric(v),
            "mass_matrix": lambda q: sym(pin.crba(pmodel, data, c(q))),
            "mass_matrix_inverse": lambda q: sym(pin.computeMinverse(pmodel, data, c(q))),
            "forward_dynamics": lambda q, v, t: pin.aba(pmodel, data, c(q), v, t - fric(v)).copy(),
            "gravity": lambda q: pin.computeGeneralizedGravity(pmodel, data, c(q)).copy(),
            "coriolis_matrix": lambda q, v: pin.computeCoriolisMatrix(pmodel, data, c(q), v).copy(),
            "nonlinear_effects": lambda q, v: pin.nonLinearEffects(pmodel, data, c(q), v) + fric(v),
            "articulated_inertia": lambda q: udu(q)[1], "udu_factor": lambda q: udu(q)[0],
            "regressor": regressor, **_derivative_functions(pmodel, data, c, fric, sym)}


def _derivative_functions(pmodel, data, c, fric, sym):
    """Pinocchio's derivatives and energies. Its damping is data only: the viscous friction's diag(Fv)
    enters dtau/dv, and -M^-1 diag(Fv) ddq/dv (aba runs on tau - friction(v)). The kinetic energy is
    the bodies' (computeKineticEnergy on the model without armature: Pinocchio 4.1 counts the armature
    of some joint types there and not of others) plus the rotors' 1/2 Ia v^2."""
    import pinocchio as pin
    rigid = pin.Model(pmodel)
    rigid.armature[:] = 0.0
    rigid_data = rigid.createData()

    def rnea_derivatives(q, v, a):
        dq, dv, _ = pin.computeRNEADerivatives(pmodel, data, c(q), v, a)
        return dq.copy(), dv + np.diag(pmodel.damping)

    def aba_derivatives(q, v, tau):
        dq, dv, Minv = pin.computeABADerivatives(pmodel, data, c(q), v, tau - fric(v))
        Minv = sym(Minv)
        return dq.copy(), dv - Minv @ np.diag(pmodel.damping), Minv

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
    if model.locked or model.cut or model.snapped or Path(model.path).suffix.lower() != ".urdf":
        pmodel = pinocchio_model(model)    # symdyn's tree rebuilt joint by joint (the mimic joints as joints)
    else:
        pmodel = pin.buildModelFromUrdf(str(model.path), pin.JointModelFreeFlyer()) if model.floating and \
            model.joints[0].name == "root_joint" else pin.buildModelFromUrdf(str(model.path))
        pmodel.gravity = pin.Motion(np.array(model.gravity), np.zeros(3))
    values = joint_dynamics_vectors(model, tree=True)
    pmodel.armature[:], pmodel.damping[:], pmodel.friction[:] = values["armature"], values["damping"], values["friction"]
    full = pinocchio_functions(pmodel, [f.name for f in model.kinematic_frames], values["friction_offset"],
                               model.coulomb_smoothing)
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
    kinds = {"3d": pin.ContactType.CONTACT_3D, "6d": pin.ContactType.CONTACT_6D}
    world = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED
    frame_types = (pin.FrameType.BODY, pin.FrameType.OP_FRAME, pin.FrameType.FIXED_JOINT, pin.FrameType.JOINT)
    ids = [next(i for i in (pmodel.getFrameId(k.frame, t) for t in frame_types) if i < pmodel.nframes)
           for k in contacts]

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

    plain = constraints()
    converged, exact = pin.ProximalSettings(1e-14, 1e-12, 20), pin.ProximalSettings(1e-14, 0.0, 1)

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

    out = {"constraint_jacobian": jacobian, "constraint_drift": drift, "constrained_forward_dynamics": forward,
           "impact": impact}
    if all(k.kind == "3d" for k in contacts):       # a 6-D anchor's error is a log6 in Pinocchio
        out["constrained_forward_dynamics_baumgarte"] = baumgarte
    return out


def _pinocchio(model, notes):
    """Pinocchio's functions on the same model, or None when it is not installed."""
    try:
        import pinocchio  # noqa: F401
    except ImportError:
        return None
    pmodel, how = pinocchio_reference(model)
    notes.append(f"pinocchio column: {how}")
    if model.mimic:
        notes.append("mimic joints: Pinocchio's model of the whole tree with the coupling applied (G^T M G, ...)")
        return _mimic_functions(model, pmodel)
    if model.joint_params:                 # friction and armature from a file Pinocchio did not read
        set_joint_dynamics(pmodel, model)
    functions = pinocchio_functions(pmodel, [f.name for f in model.kinematic_frames],
                                    joint_dynamics_vectors(model)["friction_offset"], model.coulomb_smoothing)
    if model.constraints:            # the joint friction as pinocchio_functions adds it
        offset, s = joint_dynamics_vectors(model)["friction_offset"], model.coulomb_smoothing
        sgn = (lambda v: np.tanh(v / s)) if s else np.sign
        functions.update(pinocchio_constraint_functions(
            pmodel, model, lambda v: pmodel.damping * v + pmodel.friction * sgn(v) + offset))
    return functions


def _mujoco(model, notes):
    """MuJoCo's functions (symdyn.oracle.mujoco) for a model in its coordinates, or None when it is not
    installed or cannot load the file (a note says which oracle was used)."""
    from .oracle import mujoco as oracle
    if not oracle.available():
        notes.append("mujoco column: none (MuJoCo is not installed: pip install mujoco)")
        return None
    try:
        functions = oracle.functions(model)
    except Exception as exc:       # MuJoCo's own loading errors, or other joints than symdyn's (ValueError)
        notes.append(f"mujoco column: none (MuJoCo {oracle.version()}: {one_line(str(exc))[:200]})")
        return None
    try:
        functions["frame_placement"](functions["neutral"]())
    except ValueError as exc:      # a frame MuJoCo has no site or body for
        functions = {k: f for k, f in functions.items() if not k.startswith("frame_")}
        notes.append(f"mujoco column: no frames ({exc})")
    notes.append(f"mujoco column: MuJoCo {oracle.version()} loading the file itself (constraints and actuation off)")
    return functions


def compare_steps(with_c=True, functions=None, model=None):
    """How many times `compare` calls progress: each function traced, the C compile, each function checked."""
    return 2 * len(select_functions(functions, model)) + bool(with_c)


def compare(model, states=20, seed=0, workdir=None, with_c=True, notes=None, progress=None, functions=None):
    """{function: {"python": err, "c": err, "pinocchio": err}}: largest relative differences from the engine.

    `notes` (a list), if given, receives one line saying how the Pinocchio model was built. A URDF
    file is read by Pinocchio's own parser; ValueError if it finds other joints than symdyn.
    progress(step), if given, is called after each of the `compare_steps(with_c)` steps.
    `functions`: the names to generate and compare (None: the default set)."""
    import tempfile
    from .multibody.lie import random_configuration
    rng = np.random.default_rng(seed)
    size = sizes(model)
    q = random_configuration(model, rng, states)
    vectors = [rng.normal(size=(states, size["nv"])) for _ in range(2)]
    f_ext = rng.normal(size=(states,) + resolve(arg_dims("f_ext"), size))
    standard = np.array(model.parameters)
    params = standard * rng.uniform(0.5, 2.0, (states, len(standard)))
    tmp = Path(workdir or tempfile.mkdtemp(prefix="symdyn-compare-"))
    langs = ("python", "c") if with_c else ("python",)
    module = module_name(model.path)
    for name, text in render(model, langs, progress=progress, functions=functions).items():
        (tmp / name).write_text(text)
    generated = {"python": import_module_file(tmp / f"{module}.py", f"_symdyn_cmp_{module}")}
    if with_c:
        from .codegen.cload import load_c
        generated["c"] = load_c(tmp / f"{module}.c")
        if progress:
            progress("compile C")
    mujoco = getattr(model, "conventions", "") == "mujoco"      # MuJoCo's coordinates: MuJoCo is the oracle
    column = "mujoco" if mujoco else "pinocchio"
    engine, pino = Engine(model), (_mujoco if mujoco else _pinocchio)(model, [] if notes is None else notes)
    if pino is not None and not mujoco:
        import pinocchio as pin
        pmodel = pinocchio_reference(model)[0]
    report = {}
    extra = {"gains": np.column_stack([rng.uniform(10, 100, states), rng.uniform(1, 20, states)]),
             "error": rng.normal(size=(states, size["nc"])) * 0.01, "restitution": rng.uniform(0, 1, (states, 1))}
    for fn in select_functions(functions, model):
        args = arguments(fn, q, vectors, f_ext, params, extra)
        reference = getattr(engine, fn.name)(*args)
        row = {lang: relative_error(getattr(mod, fn.name)(*args), reference) for lang, mod in generated.items()}
        if pino is not None and fn.name in pino:
            theirs = [pino[fn.name](*(a[s] for a in args)) for s in range(states)]
            theirs = tuple(map(np.stack, zip(*theirs))) if isinstance(theirs[0], tuple) else np.stack(theirs)
            row[column] = relative_error(reference, theirs)
        report[fn.name] = row
        if progress:
            progress(fn.name)
    q1 = random_configuration(model, rng, states)
    lie_calls = {"integrate": (lambda m, s: m.integrate(q[s], vectors[0][s], 0.3),
                               lambda pm, s: pin.integrate(pm, q[s], 0.3 * vectors[0][s])),
                 "difference": (lambda m, s: m.difference(q[s], q1[s]),
                                lambda pm, s: pin.difference(pm, q[s], q1[s])),
                 "neutral": (lambda m, s: m.neutral(), lambda pm, s: pin.neutral(pm))}
    for name, (ours, theirs) in lie_calls.items():
        reference = np.stack([ours(engine, s) for s in range(states)])
        row = {lang: relative_error(np.stack([ours(mod, s) for s in range(states)]), reference)
               for lang, mod in generated.items()}
        if pino is not None and mujoco:
            args = {"integrate": lambda s: (q[s], vectors[0][s], 0.3), "difference": lambda s: (q[s], q1[s]),
                    "neutral": lambda s: ()}[name]
            row[column] = relative_error(reference, np.stack([pino[name](*args(s)) for s in range(states)]))
        elif pino is not None and pmodel.nq == model.nq:     # (a mimic model rebuilt as its whole tree: not comparable)
            row["pinocchio"] = relative_error(reference, np.stack([theirs(pmodel, s) for s in range(states)]))
        report[name] = row
    return report
