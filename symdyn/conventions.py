"""MuJoCo's coordinates as a change of coordinates at the trace boundary.

Every recursion works in symdyn's own (Pinocchio's) coordinates. A model whose `conventions` is
"mujoco" takes and returns MuJoCo's qpos, qvel, qacc and qfrc instead; the functions here map the
inputs in before a trace and the results out after it, so the tape composes the change into the
generated code and the numeric engine runs the same maps (one set of recursions).

Per joint (only the quaternion joints differ; hinge and slide are the same in both):
* ball: qpos (w, x, y, z), Pinocchio's q (x, y, z, w); the velocity is the angular velocity in the
  body's axes in both.
* free: qpos [p; (w, x, y, z)], q [p; (x, y, z, w)]; qvel = [p_dot; w] (p_dot: the rate of the
  position coordinates, world axes for a body under the world), v = [R^T p_dot; w] with R the
  rotation of the joint's quaternion (body axes). So v = T qvel, T = diag(R^T, I), orthogonal.

With T orthogonal, a generalized force maps as a velocity does (power is invariant: tau = T qfrc),
and every output axis of size nv is contracted with T (qfrc = T^T tau, M_mj = T^T M T, J_mj = J T).
T depends on q, so accelerations carry a velocity product: v_dot = T qacc + T_dot qvel with
T_dot qvel = [-w x (R^T p_dot); 0] (R_dot = R [w]x). Hence
    inverse dynamics   qfrc = T^T ID(q, T qvel, T qacc + T_dot qvel)
    forward dynamics   qacc = T^T (FD(q, T qvel, T qfrc) - T_dot qvel)
    Coriolis matrix    C_mj = T^T (C T + M T_dot)      (M_dot - 2C stays skew)
    J_dot qvel         J_dot v + J T_dot qvel.
The derivatives follow MuJoCo's tangent space (mj_integratePos: a free joint's position moves in
world axes, its quaternion in body axes): a step e of it is the step T e of symdyn's, so
d/dq_mj = (d/dq_symdyn) T, with T itself differentiated. Without a free joint the two tangent spaces
are one and the derivatives are symdyn's own. With one, they are symdyn's analytical derivatives at
(T qvel, T qacc + T_dot qvel) (forward dynamics: at (T qvel, T qfrc)) plus the terms of T's turning
with the joint's rotation (_turning, _turning_forward), then the congruence T^T (.) T; the mass
matrix's derivative and M_dot run on duals along symdyn's tangent directions (R as a dual too).
The factorizations of the tree (articulated inertias, innovations, UDU^T, diagonalized dynamics) have no
counterpart in these coordinates (T^T m is not triangular): they are not generated for a
MuJoCo-convention model with a free joint (FACTORIZATIONS); with mimic joints, the derivatives neither.
"""
from dataclasses import replace

from .multibody import spatial as S
from .multibody.joints import FreeFlyer, Spherical
from .recursions import friction, rnea_derivatives
from .scalars.scalar import exact_zero, literal_zero

CONVENTIONS = ("pinocchio", "mujoco")
MUJOCO = "mujoco"

#: not defined in MuJoCo's coordinates of a model with a free joint (see the module's doc)
FACTORIZATIONS = ("articulated_inertia", "innovations_factor", "innovations_factor_inverse", "total_rates",
                  "joint_rates", "working_moments", "applied_moments", "coriolis_nu", "coriolis_eta",
                  "diagonalized_forward_dynamics", "udu_factor")
DERIVATIVES = ("inverse_dynamics_derivatives", "forward_dynamics_derivatives", "mass_matrix_derivative",
               "mass_matrix_dot", "inverse_dynamics_derivatives_fext", "forward_dynamics_derivatives_fext")


def mujoco(model):
    return model.conventions == MUJOCO


def free_joints(model):
    """Indices of the free joints that own coordinates (their velocity changes with the conventions)."""
    return [k for k, (j, vi) in enumerate(zip(model.joints, model.v_slices)) if j.kind is FreeFlyer and vi]


def internal_configuration(model, q):
    """symdyn's q of the model's q (a list of scalars or arrays): quaternions (w, x, y, z) -> (x, y, z, w)."""
    if not mujoco(model):
        return q
    out = list(q)
    for j, qi in zip(model.joints, model.q_slices):
        if qi and j.kind in (FreeFlyer, Spherical):
            quat = qi[-4:]
            w, x, y, z = (q[i] for i in quat)
            for i, value in zip(quat, (x, y, z, w)):
                out[i] = value
    return out


class Change:
    """T = diag(R^T, I) per free joint at one configuration (X: the joint transforms)."""

    def __init__(self, ctx, chain, X):
        self.ctx, self.model = ctx, chain.model
        self.R = {}                       # free joint -> R of its quaternion (parent_R_k = A R)
        for k in free_joints(self.model):
            A = self.model.joints[k].rotation
            R = X[k][0]
            identity = all(A[r][c] == (r == c) for r in range(3) for c in range(3))
            self.R[k] = R if identity else S.bind_matrix(ctx, S.matmul3(S.transpose3(
                [[ctx.const(x) for x in row] for row in A]), R))

    def _linear(self, k):
        return list(self.model.v_slices[k][:3])

    def _map_linear(self, x, rotate):
        out = list(x)
        for k, R in self.R.items():
            lin = self._linear(k)
            for i, value in zip(lin, rotate(R, [x[i] for i in lin])):
                out[i] = value
        return out

    def velocity(self, x):
        """T x: symdyn's velocity (or force) of MuJoCo's."""
        return self._map_linear(x, lambda R, a: S.bind(self.ctx, S.rot_t(R, a)))

    def back(self, x):
        """T^T x: MuJoCo's velocity (or force) of symdyn's."""
        return self._map_linear(x, lambda R, a: S.bind(self.ctx, S.rot(R, a)))

    def drift(self, qvel):
        """T_dot qvel: [-w x (R^T p_dot); 0] per free joint, zero elsewhere."""
        out = [0] * len(qvel)
        for k, R in self.R.items():
            vi = self.model.v_slices[k]
            u = S.rot_t(R, [qvel[i] for i in vi[:3]])
            w = [qvel[i] for i in vi[3:]]
            for i, value in zip(vi[:3], S.bind(self.ctx, S.cross(u, w))):
                out[i] = value
        return out

    def acceleration(self, qacc, qvel):
        """T qacc + T_dot qvel: symdyn's acceleration of MuJoCo's."""
        return _add(self.ctx, self.velocity(qacc), self.drift(qvel))

    def acceleration_back(self, a, qvel):
        """T^T (a - T_dot qvel): MuJoCo's acceleration of symdyn's."""
        return self.back(_add(self.ctx, a, self.drift(qvel), -1))

    def contract(self, x, axes, shortcut=True):
        """T^T along each of the axes `axes` (those of size nv) of the nested list x. shortcut: a matrix
        (axes [0, 1]) goes through congruence, which calls back with shortcut=False for the other entries."""
        if not axes or not self.R:
            return x
        if axes == [0, 1] and shortcut:
            return self.congruence(x)
        if axes[0] == 0:
            rest = [a - 1 for a in axes[1:]]
            columns = [self.contract(item, rest) for item in x]
            return _transpose_apply(columns, self.back)
        return [self.contract(row, [a - 1 for a in axes]) for row in x]

    def congruence(self, x):
        """T^T x T for an nv x nv matrix x. A free joint's linear block is R B R^T (T is block diagonal);
        where B = c 1 (a mass matrix's m 1: its linear columns are the body's own axes) that is c 1
        exactly, R R^T = 1: numbers, not the products of c R R^T (tests/data/mjcf/free.xml's mass_matrix
        140 -> 50 mul). MuJoCo's own M holds m 1 there too: its free joint's linear rates are world axes."""
        scalar = [self._linear(k) for k in self.R if _scalar_block(x, self._linear(k))]
        y = [list(row) for row in x]
        for lin in scalar:               # the rest of T^T x T does not read this block: zero it
            for i in lin:
                y[i][i] = 0
        out = self.contract(y, [0, 1], shortcut=False)
        for lin in scalar:
            for i in lin:
                for j in lin:
                    out[i][j] = x[i][j]
        return out


def _scalar_block(x, lin):
    """x[lin, lin] = c 1: one diagonal value (the same symbol or number) and exact zeros elsewhere."""
    c = x[lin[0]][lin[0]]
    return all(_same(x[i][j], c) if i == j else exact_zero(x[i][j]) for i in lin for j in lin)


def _same(a, b):
    if a is b:
        return True
    try:
        return bool(a == b)           # numbers and symbols; a batch of numbers is not one value
    except (TypeError, ValueError):
        return False


def _add(ctx, a, b, sign=1):
    return [x if literal_zero(y) else ctx.bind(x + sign * y) for x, y in zip(a, b)]


def _transpose_apply(items, apply):
    """apply() along the first axis of a list of (nested) items of equal shape."""
    if not isinstance(items[0], list):
        return apply(items)
    inner = [_transpose_apply([item[i] for item in items], apply) for i in range(len(items[0]))]
    return [[inner[i][n] for i in range(len(inner))] for n in range(len(items))]


def _special(name, base):
    """The traces that need more than the generic map: base(name) is symdyn's Function of that name."""
    def nonlinear_effects(ctx, chain, X, qd):
        return in_mujoco_one(base("inverse_dynamics")).trace(ctx, chain, X, qd, [0] * chain.model.nv)

    def coriolis_matrix(ctx, chain, X, qd):
        change = Change(ctx, chain, X)
        v = change.velocity(qd)
        C = change.contract(base("coriolis_matrix").trace(ctx, chain, X, v), [1])
        if not change.R:
            return C
        M = base("mass_matrix").trace(ctx, chain, X)
        Tdot = _drift_matrix(change, qd, chain.model.nv)
        return change.contract([_add(ctx, c, m) for c, m in zip(C, S.matmul(ctx, M, Tdot))], [0])

    def bias(jacobian):
        def trace(ctx, chain, X, qd):
            change = Change(ctx, chain, X)
            result = base(name).trace(ctx, chain, X, change.velocity(qd))
            if not change.R:
                return result
            J, extra = base(jacobian).trace(ctx, chain, X), change.drift(qd)
            if name == "frame_acceleration_bias":               # (nf, 6) and (nf, 6, nv)
                return [_add(ctx, r, _matvec(ctx, Jf, extra)) for r, Jf in zip(result, J)]
            return _add(ctx, result, _matvec(ctx, J, extra))
        return trace

    specials = {"nonlinear_effects": nonlinear_effects, "coriolis_matrix": coriolis_matrix,
                "frame_acceleration_bias": bias("frame_jacobian"), "constraint_drift": bias("constraint_jacobian")}
    specials.update(_derivative_traces(base))
    return specials.get(name)


def _derivative_traces(base):
    """The derivatives in MuJoCo's tangent space (see the module's doc), by name."""
    from .scalars.dual import DualContext, along, joint_directions, tangent, tangent_transforms

    def inverse(ctx, chain, X, qd, qdd, f_ext=None):
        """symdyn's analytical derivatives at (T qvel, T qacc + T_dot qvel), with the terms of T's own turning."""
        change, extra = Change(ctx, chain, X), ([] if f_ext is None else [f_ext])
        suffix = "" if f_ext is None else "_fext"
        v, a = change.velocity(qd), change.acceleration(qdd, qd)
        dq, dv = base("inverse_dynamics_derivatives" + suffix).trace(ctx, chain, X, v, a, *extra)
        tau = _free_joint_forces(ctx, chain, X, v, a, f_ext, change.R)
        M = base("mass_matrix").trace(ctx, chain, X)
        dq, dv, turn = [list(r) for r in dq], [list(r) for r in dv], {}
        for k, R in change.R.items():
            lin, ang = change.model.v_slices[k][:3], change.model.v_slices[k][3:6]
            _turning(ctx, (dq, dv, turn), (M, R, tau, v, [qdd[i] for i in lin], [qd[i] for i in ang]), lin, ang)
        return _congruence_and_turning(ctx, change, dq, dv, turn)

    def forward(ctx, chain, X, qd, tau, f_ext=None):
        """symdyn's analytical derivatives at (T qvel, T qfrc), with the terms of T's own turning."""
        from .recursions.derivatives import accelerations
        change, extra = Change(ctx, chain, X), ([] if f_ext is None else [f_ext])
        suffix = "" if f_ext is None else "_fext"
        v, tau_s = change.velocity(qd), change.velocity(tau)
        dq, dv, Minv = base("forward_dynamics_derivatives" + suffix).trace(ctx, chain, X, v, tau_s, *extra)
        u = _add(ctx, accelerations(ctx, chain, X, v, tau_s, Minv, f_ext), change.drift(qd), -1)
        dq, dv, turn = [list(r) for r in dq], [list(r) for r in dv], {}
        for k, R in change.R.items():
            lin, ang = change.model.v_slices[k][:3], change.model.v_slices[k][3:6]
            _turning_forward(ctx, (dq, dv, turn), (Minv, R, tau_s, v, u, [qd[i] for i in ang]), lin, ang)
        return _congruence_and_turning(ctx, change, dq, dv, turn) + (change.contract(Minv, [0, 1]),)

    def mass_matrix_derivative(ctx, chain, X):
        d = DualContext(ctx)
        M = in_mujoco_one(base("mass_matrix")).trace(d, chain, tangent_transforms(d, chain, X, joint_directions(chain)))
        dM = [[[tangent(x, k) for k in range(chain.nv)] for x in row] for row in M]
        return Change(ctx, chain, X).contract(dM, [2])

    def mass_matrix_dot(ctx, chain, X, qd):
        d = DualContext(ctx)
        motion = along(chain, Change(ctx, chain, X).velocity(qd))
        M = in_mujoco_one(base("mass_matrix")).trace(d, chain, tangent_transforms(d, chain, X, motion))
        return [[tangent(x, 0) for x in row] for row in M]

    return {"inverse_dynamics_derivatives": inverse, "inverse_dynamics_derivatives_fext": inverse,
            "forward_dynamics_derivatives": forward, "forward_dynamics_derivatives_fext": forward,
            "mass_matrix_derivative": mass_matrix_derivative, "mass_matrix_dot": mass_matrix_dot}


def _congruence_and_turning(ctx, change, dq, dv, turn):
    """(T^T dq T + the outer turning `turn`, T^T dv T): the derivatives in MuJoCo's tangent space."""
    dq = change.contract(dq, [0, 1])
    for (i, j), x in turn.items():
        dq[i][j] = ctx.bind(dq[i][j] + x)
    return dq, change.contract(dv, [0, 1])


def _free_joint_forces(ctx, chain, X, v, a, f_ext, free):
    """{v index: tau} at the free joints' rows of tau = ID(q, v, a): the derivatives' composite force across each
    joint (their trace binds it already) and the joint's own forces (damping, rotor, gravcomp) at those rows."""
    F = rnea_derivatives.joint_space_forces(ctx, chain, X, v, a, f_ext)
    own = friction.joint_forces(ctx, chain, v, a, X)
    return {i: ctx.bind(S.vdot(chain.H[k][c], F[k]) + own[i]) for k in free for c, i in enumerate(chain.vi[k])}


def _turning(ctx, out, at, lin, ang):
    """The terms of one free joint's T(q) in the derivatives of qfrc = T^T ID(q, T qvel, T qacc + T_dot qvel),
    before the congruence T^T (.) T. R turns by [dth]x along the joint's angular directions dth (body axes):
    D(R^T x) = [R^T x]x dth and D(R y) = -R [y]x dth. So, with v_l = R^T p_dot, T_dot qvel = [v_l x w; 0]:
        dq[:, ang] += dID/dv[:, lin] [v_l]x + M[:, lin] ([R^T p_ddot]x - [w]x [v_l]x)
        turn[lin, ang] = -R [tau_lin]x      (the outer T^T's turning: added after the congruence)
        dv[:, lin] += -M[:, lin] [w]x,  dv[:, ang] += M[:, lin] [v_l]x      (T_dot qvel's rates, times T^T)
    out: (dq, dv, turn); at: (M, R, tau, v = T qvel, p_ddot, w)."""
    dq, dv, turn = out
    M, R, tau, v, pdd, w = at
    v_l = [v[i] for i in lin]
    a_l = S.bind(ctx, S.rot_t(R, pdd))
    Mlin, Jvlin = [[row[i] for i in lin] for row in M], [[row[i] for i in lin] for row in dv]
    wv = S.matmul(ctx, S.skew(w), S.skew(v_l))
    q_terms = _add_rows(ctx, S.matmul(ctx, Jvlin, S.skew(v_l)),
                        S.matmul(ctx, Mlin, [[x - y for x, y in zip(r, s)] for r, s in zip(S.skew(a_l), wv)]))
    every = range(len(dq))
    _add_block(ctx, dq, every, ang, q_terms)
    _add_block(ctx, dv, every, lin, S.matmul(ctx, Mlin, S.skew(w)), -1)
    _add_block(ctx, dv, every, ang, S.matmul(ctx, Mlin, S.skew(v_l)))
    turn.update(_outer_turning(ctx, R, [tau[i] for i in lin], lin, ang))


def _turning_forward(ctx, out, at, lin, ang):
    """_turning's terms for qacc = T^T (FD(q, T qvel, T qfrc) - T_dot qvel), FD's derivatives dFD/dq, dFD/dv and
    dFD/dtau = M^-1 at (v, tau_s) = (T qvel, T qfrc), before the congruence T^T (.) T:
        dq[:, ang] += dFD/dv[:, lin] [v_l]x + M^-1[:, lin] [tau_s lin]x,  dq[lin, ang] += [w]x [v_l]x
        turn[lin, ang] = -R [(FD - T_dot qvel) lin]x
        dv[lin, lin] += [w]x,  dv[lin, ang] -= [v_l]x
    out: (dq, dv, turn); at: (M^-1, R, tau_s, v, u = FD - T_dot qvel, w)."""
    dq, dv, turn = out
    Minv, R, tau_s, v, u, w = at
    v_l = [v[i] for i in lin]
    Fvlin, Mlin = [[row[i] for i in lin] for row in dv], [[row[i] for i in lin] for row in Minv]
    q_terms = _add_rows(ctx, S.matmul(ctx, Fvlin, S.skew(v_l)), S.matmul(ctx, Mlin, S.skew([tau_s[i] for i in lin])))
    _add_block(ctx, dq, range(len(dq)), ang, q_terms)
    _add_block(ctx, dq, lin, ang, S.matmul(ctx, S.skew(w), S.skew(v_l)))
    _add_block(ctx, dv, lin, lin, S.skew(w))
    _add_block(ctx, dv, lin, ang, S.skew(v_l), -1)
    turn.update(_outer_turning(ctx, R, [u[i] for i in lin], lin, ang))


def _add_block(ctx, matrix, rows, cols, block, sign=1):
    """matrix[rows[r]][cols[c]] += sign * block[r][c]."""
    for r, i in enumerate(rows):
        for c, j in enumerate(cols):
            matrix[i][j] = ctx.bind(matrix[i][j] + sign * block[r][c])


def _outer_turning(ctx, R, y, lin, ang):
    """{(row, column): entry} of -R [y]x on a free joint's (linear rows, angular columns): the outer T^T turning."""
    outer = S.matmul(ctx, R, S.skew(y))
    return {(lin[r], ang[c]): -outer[r][c] for r in range(3) for c in range(3)}


def _add_rows(ctx, A, B):
    return [_add(ctx, a, b) for a, b in zip(A, B)]


def _matvec(ctx, A, x):
    return [ctx.bind(sum((a * b for a, b in zip(row, x) if not (literal_zero(a) or literal_zero(b))), 0)) for row in A]


def _drift_matrix(change, qvel, n):
    """T_dot as a matrix (T_dot qvel = drift(qvel)): per free joint, the block -[w]x R^T on its linear rates."""
    out = [[0] * n for _ in range(n)]
    for k, R in change.R.items():
        vi = change.model.v_slices[k]
        w = [qvel[i] for i in vi[3:]]
        for c in range(3):                       # column c: -w x (R^T e_c) = -w x (row c of R)
            col = S.bind(change.ctx, S.cross([R[c][0], R[c][1], R[c][2]], w))
            for r in range(3):
                out[vi[r]][vi[c]] = col[r]
    return out


def in_mujoco_one(fn, mimic=False, free=True):
    """fn in MuJoCo's coordinates (the q reorder is Chain.transforms'; this maps velocities, forces,
    accelerations and the results' nv axes); mimic: the model has mimic joints (the functions the
    special traces build on are then the reduced ones, symdyn.recursions.mimic); free: it has a free joint.
    Without one the tangent spaces are the same: the derivatives are symdyn's own, forms included; with one,
    _special's traces (the analytical derivatives plus T(q)'s terms, in their first form)."""
    from .functions import ALL_BY_NAME, arg_dims, out_dims
    if fn.convention == MUJOCO:
        return fn
    if fn.name in DERIVATIVES and not free:
        return replace(fn, convention=MUJOCO)
    if mimic:
        from .recursions.mimic import reduced
        special = _special(fn.name, lambda n: reduced(ALL_BY_NAME[n]))
    else:
        special = _special(fn.name, ALL_BY_NAME.__getitem__)
    if special is not None:             # a trace of its own: the function's forms are not its own
        return replace(fn, trace=special, convention=MUJOCO, forms=())
    rest = fn.args[fn.args[0] == "q":]
    kinds = ["acceleration" if a == "qdd" else "rate" if arg_dims(a) == ("nv",) else None for a in rest]
    velocity_at = rest.index("qd") if "qd" in rest else None
    axes = [[i for i, d in enumerate(dims) if d == "nv"] for dims in out_dims(fn)]
    names = fn.outputs
    several = isinstance(fn.shape, tuple)

    def trace(ctx, chain, X, *inputs, **form):
        """form: the function's form (Function.forms), passed through."""
        if X is None:               # a function of no configuration (friction, base_parameters): nothing to map
            return fn.trace(ctx, chain, X, *inputs, **form)
        change = Change(ctx, chain, X)
        if not change.R:
            return fn.trace(ctx, chain, X, *inputs, **form)
        qvel = inputs[velocity_at] if velocity_at is not None else None
        mapped = [change.acceleration(x, qvel) if kind == "acceleration" else change.velocity(x) if kind else x
                  for x, kind in zip(inputs, kinds)]
        result = fn.trace(ctx, chain, X, *mapped, **form)
        parts = [change.acceleration_back(part, qvel) if name == "qdd" else change.contract(part, a)
                 for part, a, name in zip(result if several else (result,), axes, names)]
        return tuple(parts) if several else parts[0]
    return replace(fn, trace=trace, convention=MUJOCO)


def in_mujoco(functions, model):
    """The functions as a MuJoCo-convention model computes them (FACTORIZATIONS dropped with a free joint)."""
    drop = (FACTORIZATIONS if free_joints(model) else ()) + (DERIVATIVES if model.mimic else ())
    free = bool(free_joints(model))
    return tuple(in_mujoco_one(fn, bool(model.mimic), free) for fn in functions if fn.name not in drop)


def with_conventions(model, conventions):
    """The model in the coordinates `conventions` (None: as it is); its reference configuration reordered."""
    if conventions is None or conventions == model.conventions:
        return model
    if conventions not in CONVENTIONS:
        raise ValueError(f"unknown conventions {conventions!r} (expected {' or '.join(CONVENTIONS)})")
    reference = tuple(model.reference)
    if reference and conventions == "pinocchio":          # (w, x, y, z) -> (x, y, z, w)
        reference = tuple(internal_configuration(model, list(reference)))
    elif reference:
        reference = tuple(_to_mujoco(model, list(reference)))
    return replace(model, conventions=conventions, reference=reference)


def _to_mujoco(model, q):
    out = list(q)
    for j, qi in zip(model.joints, model.q_slices):
        if qi and j.kind in (FreeFlyer, Spherical):
            x, y, z, w = (q[i] for i in qi[-4:])
            for i, value in zip(qi[-4:], (w, x, y, z)):
                out[i] = value
    return out
