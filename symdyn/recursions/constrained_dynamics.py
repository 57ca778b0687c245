"""Constrained dynamics and impacts on the explicit inverse mass matrix (seed 004 Sec. 3.4 method 2,
seed 003 Sec. 3-4), for the constraints of symdyn.multibody.constraints (contacts, loop closures):

    J qdd + J_dot v = a_ref                      (a_ref = 0, or Baumgarte's -Kd J v - Kp phi)
    M qdd + b = tau + J^T lambda                 (lambda in world axes at the constraint points)
    =>  (J M^-1 J^T) lambda = a_ref - J qdd_free - J_dot v,   qdd = M^-1 (tau - b + J^T lambda)

qdd_free = M^-1 (tau - b) and M^-1 (tau - b + J^T lambda) are the Kalman filter and smoother of
forward dynamics (kalman_smoother.py; the second with lambda as external wrenches: its velocity
terms are those of the first and are shared by the tape), J M^-1 J^T the O(N) operational-space
recursion through the articulated inertias (operational_space.py); only the nc x nc system is
factored (U D U^T, riccati.Block): no mass matrix and no dense KKT system is formed.

Impact (seed 003 eqs. 29-31): the impulse P = -(J M^-1 J^T)^-1 (1 + e) J v and v+ = v + M^-1 J^T P,
M^-1 J^T P by the same smoother at zero velocity, without gravity. e = 0 is the plastic impact (J v+ = 0,
v+ the M-orthogonal projection of v on the constraint's null space).

Loop closures (a Constraint with a second frame): Stack already stacks the rows as frame minus other,
puts -lambda on the other frame and combines the 6 x 6 blocks of both points in J M^-1 J^T; what is
checked against Pinocchio here is contacts only (other = None). A loop's drift and position error
may need Pinocchio's own conventions (the axes of the relative motion) where they differ.

Joint couplings (kind "joint", MuJoCo's <equality joint>): a constant row J_k = e_a - s e_b, no drift;
its lambda is a joint force J_k^T lambda_k added to tau. Its column M^-1 J_k^T is one more smoother
pass (zero velocity, no gravity), from which its entries of J M^-1 J^T are J M^-1 J_k^T.
"""
from dataclasses import dataclass

from . import frames as F
from . import friction as _fr
from . import kalman_smoother
from ..multibody import spatial as S
from ..multibody.constraints import constraint_points, joint_row
from .riccati import Block
from ..scalars.scalar import literal_zero


@dataclass(frozen=True)
class _Tree:
    """What every pass of the smoother takes: the tape, the chain, its joint transforms, the factored
    articulated inertias."""
    ctx: object
    chain: object
    X: list
    ric: object


class Stack:
    """The constraints of a chain's model: their points (Frames), per constraint the index of the point
    on each side (None: the world), and the row slices."""

    def __init__(self, chain):
        self.constraints = chain.model.constraints
        self.points, self.sides = constraint_points(chain.model)
        self.rows = []          # per stacked row: (point, other point, row r of the point's 6), or a joint row
        for c, (i, j) in zip(self.constraints, self.sides):
            self.rows += [joint_row(chain.model, c)] if c.is_joint else [(i, j, r) for r in range(c.rows)]
        self.nv = chain.nv

    @staticmethod
    def is_joint(row):
        """A joint row is ((v index, coefficient), ...), a point's row (i, j, r)."""
        return isinstance(row[0], tuple)

    def combine(self, ctx, per_point, joint):
        """Per stacked row: the point's row r minus the other point's (per_point: nested lists, one
        6-row item per point); joint(row) for a joint coupling's row."""
        out = []
        for row in self.rows:
            if self.is_joint(row):
                out.append(joint(row))
                continue
            i, j, r = row
            a = per_point[i][r]
            if j is None:
                out.append(a)
            elif isinstance(a, list):
                out.append([ctx.bind(x - y) for x, y in zip(a, per_point[j][r])])
            else:
                out.append(ctx.bind(a - per_point[j][r]))
        return out

    def joint_vector(self, row, x=1):
        """x J_k^T: the velocity-sized vector of joint row k times x."""
        out = [0] * self.nv
        for i, coefficient in row:
            out[i] = x if coefficient == 1.0 else coefficient * x
        return out

    def wrenches(self, ctx, lam):
        """The world-aligned wrench [force; torque] on each point from the stacked lambda (the other
        side of a loop takes the opposite)."""
        w = [[0] * 6 for _ in self.points]
        for row, x in zip(self.rows, lam):
            if self.is_joint(row):
                continue
            i, j, r = row
            w[i][r] = w[i][r] + x
            if j is not None:
                w[j][r] = w[j][r] - x
        return w

    def joint_forces(self, ctx, T, lam):
        """T + the joint couplings' J_k^T lambda_k."""
        T = list(T)
        for row, x in zip(self.rows, lam):
            if self.is_joint(row):
                T = [t if literal_zero(f) else ctx.bind(t + f)
                     for t, f in zip(T, self.joint_vector(row, x))]
        return T

    def compliance(self, ctx, L, J, U):
        """J M^-1 J^T of the stacked rows from the points' 6 x 6 blocks L, the stacked J and, per joint
        row a, U[a] = M^-1 J_a^T."""
        def entry(a, b):
            if a in U or b in U:                    # J_b M^-1 J_a^T (or with a, b swapped)
                a, b = (a, b) if a in U else (b, a)
                return _matvec(ctx, [J[b]], U[a])[0]
            (i, j, r), (k, m, s) = self.rows[a], self.rows[b]
            x = L[6 * i + r][6 * k + s]
            if m is not None:
                x = x - L[6 * i + r][6 * m + s]
            if j is not None:
                x = x - L[6 * j + r][6 * k + s]
                if m is not None:
                    x = x + L[6 * j + r][6 * m + s]
            return ctx.bind(x)
        n = len(self.rows)
        A = [[None] * n for _ in range(n)]
        for a in range(n):
            for b in range(a, n):
                A[a][b] = A[b][a] = entry(a, b)
        return A


def constraint_jacobian(ctx, chain, X):
    """(nc, nv): the stacked constraint Jacobian, LOCAL_WORLD_ALIGNED rows (see constraints.py)."""
    st = Stack(chain)
    per_point = F.frame_jacobian(ctx, chain, X, st.points) if st.points else []
    return st.combine(ctx, per_point, st.joint_vector)


def constraint_drift(ctx, chain, X, v):
    """(nc,): the constraint acceleration at zero qdd, no gravity. A point (3d) row: the classical
    acceleration of the point (J_dot v). A weld (6d): the spatial acceleration, i.e. the derivative of
    the velocity in the frame's own axes turned to the world, [a - w x v; w_dot], as Pinocchio's
    CONTACT_6D (the two agree when the contact holds, v = 0). A joint coupling: 0 (a constant row)."""
    st = Stack(chain)
    if not st.points:
        return st.combine(ctx, [], lambda row: 0)
    bias = F.frame_acceleration_bias(ctx, chain, X, v, st.points)
    welded = {i for c, (i, j) in zip(st.constraints, st.sides) if c.kind == "6d"} | \
        {j for c, (i, j) in zip(st.constraints, st.sides) if c.kind == "6d" and j is not None}
    if welded:
        vel = F.frame_velocity(ctx, chain, X, v, [p for i, p in enumerate(st.points) if i in welded])
        for i, vf in zip(sorted(welded), vel):
            bias[i] = S.bind(ctx, S.sub(bias[i][:3], S.cross(vf[3:], vf[:3]))) + bias[i][3:]
    return st.combine(ctx, bias, lambda row: 0)


def _matvec(ctx, J, x):
    return [ctx.bind(sum((a * b for a, b in zip(row, x) if not literal_zero(a)), 0)) for row in J]


def _solve(tree, st, J, rhs):
    """lambda = (J M^-1 J^T)^-1 rhs: the points' blocks by the operational-space recursion, a joint
    row's column M^-1 J_k^T by the smoother."""
    from .operational_space import operational_space_inertia_inverse
    ctx, zero = tree.ctx, [0] * tree.chain.nv
    L = operational_space_inertia_inverse(ctx, tree.chain, tree.X, tree.ric, st.points) if st.points else None
    U = {a: kalman_smoother.forward_dynamics(ctx, tree.chain, tree.X, tree.ric, zero, st.joint_vector(row),
                                             gravity=False)
         for a, row in enumerate(st.rows) if st.is_joint(row)}
    return Block(ctx, st.compliance(ctx, L, J, U)).solve(rhs)


def _with_wrenches(tree, st, v, T, lam, gravity=True):
    """M^-1 (T - b + J^T lambda) by the Kalman filter and smoother, lambda as external wrenches (points)
    and joint forces (joint couplings)."""
    ctx = tree.ctx
    bodies = F.body_wrenches(ctx, tree.chain, tree.X, st.wrenches(ctx, lam), st.points) if st.points else None
    return kalman_smoother.forward_dynamics(ctx, tree.chain, tree.X, tree.ric, v, st.joint_forces(ctx, T, lam),
                                            gravity=gravity, f_ext=bodies)


def constrained_forward_dynamics(ctx, chain, X, ric, v, tau, gains=None, error=None):
    """(qdd, lambda) for joint forces tau (gravity and friction as in forward_dynamics). gains = (Kp, Kd)
    and error = phi (nc): Baumgarte's stabilization J qdd + J_dot v = -Kd J v - Kp phi."""
    st, tree = Stack(chain), _Tree(ctx, chain, X, ric)
    T = _fr.subtract_friction(ctx, chain, tau, v, X)
    free = kalman_smoother.forward_dynamics(ctx, chain, X, ric, v, T)
    J = constraint_jacobian(ctx, chain, X)
    drift = constraint_drift(ctx, chain, X, v)
    acc = [ctx.bind(a + g) for a, g in zip(_matvec(ctx, J, free), drift)]
    if gains is not None:
        kp, kd = gains
        acc = [ctx.bind(a + kd * w + kp * e) for a, w, e in zip(acc, _matvec(ctx, J, v), error)]
    lam = [ctx.bind(-x) for x in _solve(tree, st, J, acc)]
    return _with_wrenches(tree, st, v, T, lam), lam


def impact(ctx, chain, X, ric, v, restitution):
    """(v+, impulse): v+ = v - M^-1 J^T (J M^-1 J^T)^-1 (1 + e) J v, the impulse the constraints
    exert (world axes, as lambda)."""
    st, tree = Stack(chain), _Tree(ctx, chain, X, ric)
    e = restitution[0]
    J = constraint_jacobian(ctx, chain, X)
    Jv = _matvec(ctx, J, v)
    impulse = [ctx.bind(-x) for x in _solve(tree, st, J, [ctx.bind((1 + e) * w) for w in Jv])]
    zero = [0] * chain.nv
    dv = _with_wrenches(tree, st, zero, zero, impulse, gravity=False)
    return [ctx.bind(a + b) for a, b in zip(v, dv)], impulse
