"""`symdyn compare`: the generated code against the numeric engine, the C module and Pinocchio."""
import importlib.util
from pathlib import Path

import numpy as np

from .engine import Engine
from .codegen.generator import select_functions
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


def joint_dynamics_vectors(model):
    """{field: velocity-sized array} of the joints' armature, damping, friction, friction_offset
    (zero for the entries of multi-DoF joints, which have none)."""
    out = {key: np.zeros(model.nv) for key in ("armature", "damping", "friction", "friction_offset")}
    for joint, vi in zip(model.joints, model.v_slices):
        if len(vi) == 1:
            for key in out:
                out[key][vi[0]] = getattr(joint, key)
    return out


def set_joint_dynamics(pmodel, model):
    """Pinocchio's model.armature, damping and friction from symdyn's joints."""
    values = joint_dynamics_vectors(model)
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
    if Path(model.path).suffix.lower() != ".urdf" or model.snapped or model.cut:
        return None
    import pinocchio as pin
    from .description import ROOT_JOINT
    added = model.floating and model.joints[0].name == ROOT_JOINT     # --floating-base
    pm = pin.buildModelFromUrdf(str(model.path), pin.JointModelFreeFlyer()) if added else \
        pin.buildModelFromUrdf(str(model.path))
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
    theirs = tuple(pm.names)[1:]
    if theirs != model.joint_names or pm.nv != model.dof:
        raise ValueError(f"Pinocchio's URDF parser finds the joints {', '.join(theirs)}; "
                         f"symdyn finds {', '.join(model.joint_names)}")
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


def _pinocchio(model, notes):
    """Pinocchio's functions on the same model, or None when it is not installed."""
    try:
        import pinocchio  # noqa: F401
    except ImportError:
        return None
    pmodel, how = pinocchio_reference(model)
    notes.append(f"pinocchio column: {how}")
    if model.joint_params:                 # friction and armature from a file Pinocchio did not read
        set_joint_dynamics(pmodel, model)
    return pinocchio_functions(pmodel, [f.name for f in model.kinematic_frames],
                               joint_dynamics_vectors(model)["friction_offset"], model.coulomb_smoothing)


def compare_steps(with_c=True, functions=None):
    """How many times `compare` calls progress: each function traced, the C compile, each function checked."""
    return 2 * len(select_functions(functions)) + bool(with_c)


def compare(model, states=20, seed=0, workdir=None, with_c=True, notes=None, progress=None, functions=None):
    """{function: {"python": err, "c": err, "pinocchio": err}}: largest relative differences from the engine.

    `notes` (a list), if given, receives one line saying how the Pinocchio model was built. A URDF
    file is read by Pinocchio's own parser; ValueError if it finds other joints than symdyn.
    progress(step), if given, is called after each of the `compare_steps(with_c)` steps.
    `functions`: the names to generate and compare (None: the default set)."""
    import tempfile
    from .lie import random_configuration
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
        from .cload import load_c
        generated["c"] = load_c(tmp / f"{module}.c")
        if progress:
            progress("compile C")
    engine, pino = Engine(model), _pinocchio(model, [] if notes is None else notes)
    if pino is not None:
        import pinocchio as pin
        pmodel = pinocchio_reference(model)[0]
    report = {}
    for fn in select_functions(functions):
        args = arguments(fn, q, vectors, f_ext, params)
        reference = getattr(engine, fn.name)(*args)
        row = {lang: relative_error(getattr(mod, fn.name)(*args), reference) for lang, mod in generated.items()}
        if pino is not None and fn.name in pino:
            outs = [pino[fn.name](*(a[s] for a in args)) for s in range(states)]
            theirs = tuple(map(np.stack, zip(*outs))) if isinstance(outs[0], tuple) else np.stack(outs)
            row["pinocchio"] = relative_error(reference, theirs)
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
        if pino is not None:
            row["pinocchio"] = relative_error(reference, np.stack([theirs(pmodel, s) for s in range(states)]))
        report[name] = row
    return report
