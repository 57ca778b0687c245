"""Derivatives of the dynamics and the energies.

dtau/dq and dtau/dv are the analytical recursions of rnea_derivatives.py. Their forward-mode version
(inverse_dynamics_derivatives_forward_mode, symdyn.scalars.dual) stays as the independent check: Newton-Euler with one direction per joint coordinate (along the
tangent space, as Pinocchio's computeRNEADerivatives) and one per joint rate gives dtau/dq and
dtau/dv together; a direction costs O(N), so both cost O(N^2) (less on a chain: the quantities of a
link do not depend on the joints outboard of it and their tangents are exact zeros, never carried).

Forward dynamics, as Carpentier & Mansard's ABA derivatives (and Pinocchio's computeABADerivatives):
at qdd = FD(q, v, tau), tau = ID(q, v, qdd) holds identically, so
    dqdd/dq = -M^-1 dtau/dq,    dqdd/dv = -M^-1 dtau/dv,    dqdd/dtau = M^-1,
with dtau/dq, dtau/dv the derivatives of inverse dynamics at that qdd and M^-1 from its explicit
elements (minverse.py, no solve). A free-flyer's base-rotation and linear-velocity columns are known
in closed form (_free_flyer_columns): neither their product nor their dtau columns are computed.

dM/dq (Jain & Rodriguez, eq. 6.14, there by the operator algebra) is the composite-body recursion
run on duals; M_dot(q, v) = sum_k dM/dq_k v_k, one direction: the motion along v.
Kinetic energy 1/2 v^T M v = sum over bodies 1/2 V(k) . M(k) V(k) + 1/2 Ia v^2 (rotors);
potential energy -g . (sum of m c in the world): O(N) each.
"""
from . import crba, frames, kinematics, minverse, rnea, rnea_derivatives
from . import friction as _fr
from ..multibody import spatial as S
from .centroidal import Composite
from ..scalars.dual import Dual, DualContext, along, jacobian, joint_directions, tangent, tangent_transforms
from .frames import Placements
from ..multibody.joints import FreeFlyer
from .riccati import Riccati
from ..scalars.scalar import exact_zero


def _wrenches(ctx, chain, X, f_ext):
    return None if f_ext is None else frames.body_wrenches(ctx, chain, X, f_ext)


#: the forms of the analytical recursions (rnea_derivatives.FORMS: the generator keeps the cheaper)
FORMS = rnea_derivatives.FORMS
form_applies = rnea_derivatives.form_applies
#: forward dynamics' forms: those, and "outward" with M^-1's factor rows of the top region walked outward
#: too (minverse.FORMS' third). One form more, not all four pairs: the pair (outward, outward) was the
#: cheapest of the four wherever the outward factor rows paid (UR5 2067 -> 1980 mul), "inward" alone
#: elsewhere; "outward" alone stays for arms where only the derivatives' walk pays (an xArm7)
FD_FORMS = FORMS + ("outward_factors",)


def fd_form_applies(model, form):
    """FD_FORMS' forms that can differ from the first on the model (form_applies, minverse.form_applies)."""
    if form == "outward_factors":
        return minverse.form_applies(model, "from_factors_outward")
    return form_applies(model, form)


def inverse_dynamics_derivatives(ctx, chain, X, qd, qdd, f_ext=None, form=FORMS[0]):
    """(dtau/dq, dtau/dv), each (nv, nv), of tau = ID(q, v, qdd) with friction and rotor inertias;
    f_ext: external wrenches at the frames, world axes (held fixed in the world as q moves). The
    analytical recursions of rnea_derivatives.py (what the generated functions compute), in one of FORMS."""
    return rnea_derivatives.inverse_dynamics_derivatives(ctx, chain, X, qd, qdd, f_ext, form)


def inverse_dynamics_derivatives_forward_mode(ctx, chain, X, qd, qdd, f_ext=None):
    """The same by forward-mode duals through Newton-Euler (about 2 nv RNEA tangents): the independent
    check of the analytical recursions in the tests."""
    nv = chain.nv
    d = DualContext(ctx)
    Xd = tangent_transforms(d, chain, X, joint_directions(chain))
    v = [Dual(x, {nv + i: 1}) for i, x in enumerate(qd)]
    tau = rnea.inverse_dynamics(d, chain, Xd, v, qdd, f_ext=_wrenches(d, chain, Xd, f_ext))
    tau = _fr.add_joint_forces(d, chain, tau, v, qdd, Xd)
    return jacobian(tau, range(nv)), jacobian(tau, range(nv, 2 * nv))


def forward_dynamics_derivatives(ctx, chain, X, qd, tau, f_ext=None, form=FD_FORMS[0]):
    """(dqdd/dq, dqdd/dv, dqdd/dtau = M^-1), each (nv, nv); form: one of FD_FORMS."""
    ric = Riccati(ctx, chain, X)
    outward = form == "outward_factors"
    factors = minverse.inverse_factors(ctx, chain, X, ric, outward)
    Minv = minverse.from_factors(ctx, chain, X, ric, factors)
    qdd = accelerations(ctx, chain, X, qd, tau, Minv, f_ext)
    dq, dv = inverse_dynamics_derivatives(ctx, chain, X, qd, qdd, f_ext, "outward" if outward else form)
    negative = [[-x for x in row] for row in Minv]
    known_q, known_v = _free_flyer_columns(ctx, chain, X, qd, f_ext)
    solver = _FactorSolve(ctx, chain, factors)
    return _times(ctx, negative, dq, known_q, solver), _times(ctx, negative, dv, known_v, solver), Minv


def accelerations(ctx, chain, X, qd, tau, Minv, f_ext=None):
    """qdd = M^-1 (T - bias) from an M^-1 formed anyway (no Kalman filter: its chain of divisions); T: tau less
    friction, bias: RNEA at qdd = 0 (with the external wrenches f_ext, nf x 6)."""
    bias = rnea.inverse_dynamics(ctx, chain, X, qd, [0] * chain.nv, f_ext=_wrenches(ctx, chain, X, f_ext))
    r = [ctx.bind(t - b) for t, b in zip(_fr.subtract_friction(ctx, chain, tau, qd, X), bias)]
    return [ctx.bind(sum((m * x for m, x in zip(row, r) if not exact_zero(m)), 0)) for row in Minv]


def _times(ctx, A, B, known, solver):
    """A B = -M^-1 B (A = -M^-1), except the columns given in `known` ({column: its nv entries}), which B's
    are not used for. Column by column, the cheaper of the product with A and the solve through M^-1's
    factors (solver), both counted on the exact zeros (a tie keeps the product). The entries are written
    row by row, as the whole product was: the order of the generated statements changed the Panda's C
    time by 1.6x at equal counts."""
    out = [[0] * len(B[0]) for _ in A]
    entries = {}
    for j in range(len(B[0])):
        if j in known:
            for i, x in enumerate(known[j]):
                out[i][j] = x
            continue
        b = [row[j] for row in B]
        plan = solver.plan(b)
        products = sum(not (exact_zero(x) or exact_zero(y)) for row in A for x, y in zip(row, b))
        entries[j] = solver.solve(plan) if solver.cost(plan) < products else \
            [sum((x * y for x, y in zip(row, b) if not (exact_zero(x) or exact_zero(y))), 0) for row in A]
    for i in range(len(A)):
        for j, column in entries.items():
            out[i][j] = ctx.bind(column[i])
    return out


def _is_one(x):
    """The literal 1 a plan puts for y(k) itself (entries may be arrays in the numeric engine)."""
    return isinstance(x, int) and x == 1


class _FactorSolve:
    """-M^-1 b = -R* (D^-1 b + sum over k of DR(a, k) b(k)), R = U^-1 (minverse._inverse_factor), the
    terms planned on the exact zeros first: y(a) = D(a)^-1 b(a) + DR(a, k) b(k) over a's descendants k,
    x(k) = y(k) + R(a, k)* y(a) over k's ancestors a. The tree's sparsity: O(nnz(R)) per column
    instead of nv times b's non-zeros."""

    def __init__(self, ctx, chain, factors):
        self.ctx, self.chain = ctx, chain
        self.Dinv, self.R, self.DR = factors

    def _pairs(self, matrix, vector):
        return [[(x, v) for x, v in zip(row, vector) if not (exact_zero(x) or exact_zero(v))] for row in matrix]

    def plan(self, b):
        """(terms of y, terms of x): for each joint, each of its rows, the non-zero products as (factor,
        value) for y (values of b) and (factor, (joint, row) of y) for x, the y that are zero left out."""
        chain, vi = self.chain, self.chain.vi
        part = [[b[i] for i in vi[k]] for k in range(chain.n)]
        ys = [self._pairs(self.Dinv[a], part[a]) for a in range(chain.n)]
        for k in range(chain.n):
            for a in chain.ancestors(k):
                for r, terms in enumerate(self._pairs(self.DR[a, k], part[k])):
                    ys[a][r] += terms
        nonzero = [[bool(t) for t in rows] for rows in ys]
        xs = [[[(1, (k, c))] if nonzero[k][c] else [] for c in range(len(vi[k]))] for k in range(chain.n)]
        for k in range(chain.n):
            for a in chain.ancestors(k):
                R = self.R[a, k]
                for c in range(len(vi[k])):
                    xs[k][c] += [(R[r][c], (a, r)) for r in range(len(vi[a]))
                                 if nonzero[a][r] and not exact_zero(R[r][c])]
        return ys, xs

    @staticmethod
    def cost(plan):
        """Multiplications of the planned terms (x's y(k) itself is free)."""
        ys, xs = plan
        return sum(len(t) for rows in ys for t in rows) + sum(not _is_one(x) for rows in xs for t in rows for x, _ in t)

    def solve(self, plan):
        """-M^-1 b, nv entries (y bound, the entries not yet), from its plan."""
        ctx, ys, xs = self.ctx, plan[0], plan[1]
        y = [[ctx.bind(sum((f * v for f, v in t), 0)) for t in rows] for rows in ys]
        out = [0] * self.chain.nv
        for k, rows in enumerate(xs):
            for c, terms in enumerate(rows):
                out[self.chain.vi[k][c]] = -sum((f * y[a][r] for f, (a, r) in terms), 0)
        return out


def _free_flyer_columns(ctx, chain, X, qd, f_ext):
    """Columns of dqdd/dq and dqdd/dv known without M^-1, for each free-flyer under the world (nv entries
    each, non-zero on its linear rows only); qdd(linear) is the rate of the body-frame velocity v.
    - Turning the base by theta (body frame) changes nothing but gravity seen from it, the base
      acceleration a = R^T (-g), which enters tau as the base's linear qdd does: dtau/dtheta =
      M[:, linear] [a]x, so dqdd/dtheta = -E_linear [a]x. Not with world-fixed external wrenches (they turn),
      nor with MuJoCo's gravcomp (world-fixed forces too: friction.py), nor with the free joint's armature
      (in M[:, linear], but gravity does not pull it).
    - Galilean invariance: adding u to v (a uniform world velocity R u of every body) leaves every world
      acceleration, joint acceleration and force as they were; only v's rate turns with the base:
      d(v)/dt = R^T a_world - w x v, so dqdd/dv(linear) = -E_linear [w]x.
      Not with the free joint's damping (MuJoCo's, a force against the world velocity).
    The translation columns of dqdd/dq are exact zeros anyway (nothing depends on where the base is)."""
    known_q, known_v = {}, {}
    for k in range(chain.n):
        if chain.parent[k] >= 0 or chain.model.joints[k].kind is not FreeFlyer:
            continue
        linear, angular = chain.vi[k][:3], chain.vi[k][3:]
        # MuJoCo's damping of a free joint (on its world velocity) is not Galilean invariant
        terms = [] if chain.model.joints[k].damping else [(known_v, linear, [qd[i] for i in angular])]
        if f_ext is None and chain.compensated is None and not chain.model.joints[k].armature:
            terms.append((known_q, angular, S.bind(ctx, S.rot_t(X[k][0], chain.base_acceleration[3:]))))
        for known, columns, a in terms:
            skew = S.skew(a)
            for b, j in enumerate(columns):
                known[j] = [0] * chain.nv
                for r, i in enumerate(linear):
                    known[j][i] = -skew[r][b]
    return known_q, known_v


def mass_matrix_derivative(ctx, chain, X):
    """dM/dq (nv, nv, nv): entry [i][j][k] = d M[i][j] / d q_k (tangent space)."""
    d = DualContext(ctx)
    M = crba.mass_matrix(d, chain, tangent_transforms(d, chain, X, joint_directions(chain)))
    return [[[tangent(x, k) for k in range(chain.nv)] for x in row] for row in M]


def mass_matrix_dot(ctx, chain, X, qd):
    """M_dot(q, v) (nv, nv): the derivative of M along the motion v."""
    d = DualContext(ctx)
    M = crba.mass_matrix(d, chain, tangent_transforms(d, chain, X, along(chain, qd)))
    return [[tangent(x, 0) for x in row] for row in M]


def kinetic_energy(ctx, chain, X, qd):
    """1/2 v^T M v: the bodies' 1/2 V . M V in their frames, and the rotors' 1/2 Ia v^2."""
    _, V = kinematics.velocities(ctx, chain, X, qd)
    total = 0
    for k in range(chain.n):
        total = total + ctx.bind(S.vdot(V[k], S.bind(ctx, S.matvec(chain.M[k], V[k]))))
    for k, i in _fr.rotors(chain):
        if not exact_zero(chain.armature[k]):
            total = total + ctx.bind(chain.armature[k] * qd[i] * qd[i])
    return ctx.bind(0.5 * total)


def potential_energy(ctx, chain, X):
    """-g . sum of m c over the bodies, world frame (zero at the world origin, as Pinocchio's)."""
    placements, composite = Placements(ctx, chain, X), Composite(ctx, chain, X, inertia=False)
    first = [0, 0, 0]
    for k in range(chain.n):
        if chain.parent[k] < 0:
            first = S.add(first, S.add(S.scale(composite.m[k], placements.p[k]),
                                       S.rot(placements.R[k], composite.h[k])))
    # the base acceleration is -g (gravity enters as an upward acceleration of the base)
    return ctx.bind(S.dot(chain.base_acceleration[3:], S.bind(ctx, first)))
