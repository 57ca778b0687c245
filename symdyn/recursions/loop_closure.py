"""Closed kinematic loops: loop closures declared in YAML, and the constraint-consistent inverse dynamics
(Featherstone & Orin, seed 004 Sec. 3.4).

A mechanism with loops (a four-bar linkage, a delta robot) is modeled by a spanning tree (the robot
file's joints) and loop-closure constraints between two frames of the tree: a point ("3d", the two
frame origins coincide: a spherical or, in a plane, a revolute joint cut open) or a weld ("6d"). They
are symdyn.multibody.constraints.Constraint objects with a second frame (`other`), so constraint_jacobian,
constraint_drift, constrained_forward_dynamics(_baumgarte) and impact apply to them as to contacts.

Inverse dynamics of a closed loop: the tree's coordinates q split into the independent (actuated)
ones, q_a, and the passive ones, q_p, as many as constraint rows. Given the motion of q_a (and q, qd
that satisfy the loops), the loops fix the passive accelerations,
    J_a qdd_a + J_p qdd_p + J_dot qd = 0   =>   qdd_p = -J_p^-1 (J_a qdd_a + J_dot qd),
and the tree's inverse dynamics tau_tree = ID(q, qd, qdd) must be produced by the actuators and the
loop forces: tau_tree = S_a^T tau_a + J^T lambda. Its passive rows give lambda = J_p^-T tau_tree,p,
its actuated rows tau_a = tau_tree,a - J_a^T lambda, i.e. tau_a = G^T tau_tree with
G = d(q)/d(q_a) = [I; -J_p^-1 J_a] (the loop's null space: "method 1" of seed 004, applied to inverse
dynamics: the torques of the spanning tree projected on the independent coordinates). Only the
nc x nc matrix J_p is solved (through J_p^T J_p and J_p J_p^T, symmetric positive definite when
the passive joints are independent in the loops: checked on loading).
"""
from ..multibody.constraints import KINDS, Constraint, constraint_rows
from ..scalars.scalar import literal_zero

LOOP_KEYS = ("frame", "other", "type")


def loops_from_yaml(value):
    """The YAML `loops:` key: a list of {frame: A, other: B, type: 3d|6d} -> [Constraint]; ValueError
    (one line) for anything else."""
    if not isinstance(value, list) or not value:
        raise ValueError("'loops' must be a non-empty list of {frame: A, other: B, type: 3d|6d}")
    out = []
    for i, item in enumerate(value):
        if not isinstance(item, dict) or not set(item) <= set(LOOP_KEYS) or not all(
                isinstance(item.get(k), str) for k in ("frame", "other")):
            raise ValueError(f"loops[{i}]: expected {{frame: A, other: B, type: 3d|6d}} with two frame names")
        kind = str(item.get("type", "3d")).lower()
        if kind not in KINDS:
            raise ValueError(f"loops[{i}]: type must be 3d or 6d, got {str(item.get('type'))[:40]!r}")
        if item["frame"] == item["other"]:
            raise ValueError(f"loops[{i}]: frame '{item['frame']}' is closed on itself")
        out.append(Constraint(kind, item["frame"], item["other"]))
    return out


def with_loop_frames(model):
    """The model whose FRAMES include both frames of every loop (their placements give the closure error)."""
    from dataclasses import replace
    names = [f.name for f in model.kinematic_frames]
    extra = [n for c in model.constraints if c.other is not None and not c.is_joint
             for n in (c.frame, c.other) if n not in names]
    if not extra:
        return model
    return replace(model, frame_selection=tuple(names + list(dict.fromkeys(extra))))


def with_actuated(model, names, samples=3, tol=1e-9):
    """The model with its actuated (independent) joints; ValueError (one line) unless they are 1-DoF joints
    of the model, as many as its velocity minus the loop rows, and the loops determine the others."""
    import numpy as np
    from dataclasses import replace
    if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
        raise ValueError("'actuated' must be a non-empty list of joint names")
    if not any(c.other is not None for c in model.constraints):
        raise ValueError("'actuated' needs loop closures ('loops:')")
    joints = {j.name: j for j in model.joints}
    for name in names:
        if name not in joints or joints[name].kind.nv != 1:
            raise ValueError(f"'{name}' is not a 1-DoF joint of the robot")
    if len(set(names)) != len(names):
        raise ValueError("a joint is listed twice")
    nc = constraint_rows(model.constraints)
    if len(names) != model.nv - nc:
        raise ValueError(f"{len(names)} actuated joints, but the robot has {model.nv} degrees of freedom and "
                         f"{nc} constraint rows: {model.nv - nc} independent coordinates")
    model = replace(model, actuated=tuple(names))
    from ..engine import Engine
    engine, passive = Engine(model), passive_indices(model)
    rng = np.random.default_rng(2)
    for _ in range(samples):
        J = engine.constraint_jacobian(engine.integrate(engine.neutral(), rng.uniform(-1.5, 1.5, model.nv)))
        s = np.linalg.svd(J[:, passive], compute_uv=False)
        if s[-1] > tol * max(1.0, s[0]):
            return model
    raise ValueError(f"the loops do not determine the passive joints at any configuration tried: choose other "
                     f"actuated joints than {', '.join(names)}")


def actuated_indices(model):
    """The velocity indices of the actuated joints, in the model's joint order."""
    return [vi[0] for j, vi in zip(model.joints, model.v_slices) if j.name in model.actuated]


def passive_indices(model):
    chosen = set(actuated_indices(model))
    return [i for i in range(model.nv) if i not in chosen]


def _matvec(ctx, rows, x):
    return [ctx.bind(sum((a * b for a, b in zip(row, x) if not literal_zero(a)), 0)) for row in rows]


def _gram(ctx, A):
    """A A^T of a list of rows."""
    return [[ctx.bind(sum((x * y for x, y in zip(a, b) if not literal_zero(x)), 0)) for b in A]
            for a in A]


def loop_inverse_dynamics(ctx, chain, X, qd, qdd, inverse_dynamics):
    """(tau, lambda): tau the actuator forces (zero at the passive joints) that give the actuated joints
    the accelerations qdd[actuated] (qdd's passive entries are ignored: the loops determine them), lambda
    the loop forces (world axes, as constrained_forward_dynamics'). q, qd must satisfy the loops.
    inverse_dynamics(ctx, chain, X, qd, qdd): the tree's (with friction)."""
    from .constrained_dynamics import constraint_drift, constraint_jacobian
    from .mimic import solve_spd
    model = chain.model
    act, pas = actuated_indices(model), passive_indices(model)
    J = constraint_jacobian(ctx, chain, X)
    Ja = [[row[i] for i in act] for row in J]
    JpT = [[row[i] for row in J] for i in pas]                     # J_p^T, rows = passive joints
    rhs = [ctx.bind(a + c) for a, c in zip(_matvec(ctx, Ja, [qdd[i] for i in act]), constraint_drift(ctx, chain, X, qd))]
    # qdd_p = -J_p^-1 rhs = -(J_p^T J_p)^-1 J_p^T rhs
    y = solve_spd(ctx, _gram(ctx, JpT), [[x] for x in _matvec(ctx, JpT, rhs)])
    full = list(qdd)
    for i, x in zip(pas, y):
        full[i] = ctx.bind(-x[0])
    tau = inverse_dynamics(ctx, chain, X, qd, full)
    # lambda = J_p^-T tau_p = (J_p J_p^T)^-1 J_p tau_p
    Jp = [list(col) for col in zip(*JpT)]
    lam = [x[0] for x in solve_spd(ctx, _gram(ctx, Jp), [[x] for x in _matvec(ctx, Jp, [tau[i] for i in pas])])]
    out = [0] * chain.nv
    for k, i in enumerate(act):
        out[i] = ctx.bind(tau[i] - sum(J[r][i] * lam[r] for r in range(len(lam))))
    return out, lam
