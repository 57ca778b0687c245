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
"""
from . import frames as F
from . import friction as _fr
from . import kalman_smoother
from ..multibody import spatial as S
from ..multibody.constraints import constraint_points
from .riccati import Block


class Stack:
    """The constraints of a chain's model: their points (Frames), per constraint the index of the point
    on each side (None: the world), and the row slices."""

    def __init__(self, chain):
        self.constraints = chain.model.constraints
        self.points, self.sides = constraint_points(chain.model)
        self.rows = []          # (constraint, side points, row r of the point's 6) per stacked row
        for c, (i, j) in zip(self.constraints, self.sides):
            self.rows += [(i, j, r) for r in range(c.rows)]

    def combine(self, ctx, per_point):
        """Per stacked row: the point's row r minus the other point's (per_point: nested lists, one
        6-row item per point)."""
        out = []
        for i, j, r in self.rows:
            a = per_point[i][r]
            if j is None:
                out.append(a)
            elif isinstance(a, list):
                out.append([ctx.bind(x - y) for x, y in zip(a, per_point[j][r])])
            else:
                out.append(ctx.bind(a - per_point[j][r]))
        return out

    def wrenches(self, ctx, lam):
        """The world-aligned wrench [force; torque] on each point from the stacked lambda (the other
        side of a loop takes the opposite)."""
        w = [[0] * 6 for _ in self.points]
        for (i, j, r), x in zip(self.rows, lam):
            w[i][r] = w[i][r] + x
            if j is not None:
                w[j][r] = w[j][r] - x
        return w

    def compliance(self, ctx, L):
        """J M^-1 J^T of the stacked rows from the points' 6 x 6 blocks L."""
        def entry(a, b):
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
    return st.combine(ctx, F.frame_jacobian(ctx, chain, X, st.points))


def constraint_drift(ctx, chain, X, v):
    """(nc,): the constraint acceleration at zero qdd, no gravity. A point (3d) row: the classical
    acceleration of the point (J_dot v). A weld (6d): the spatial acceleration, i.e. the derivative of
    the velocity in the frame's own axes turned to the world, [a - w x v; w_dot], as Pinocchio's
    CONTACT_6D (the two agree when the contact holds, v = 0)."""
    st = Stack(chain)
    bias = F.frame_acceleration_bias(ctx, chain, X, v, st.points)
    welded = {i for c, (i, j) in zip(st.constraints, st.sides) if c.kind == "6d"} | \
        {j for c, (i, j) in zip(st.constraints, st.sides) if c.kind == "6d" and j is not None}
    if welded:
        vel = F.frame_velocity(ctx, chain, X, v, [p for i, p in enumerate(st.points) if i in welded])
        for i, vf in zip(sorted(welded), vel):
            bias[i] = S.bind(ctx, S.sub(bias[i][:3], S.cross(vf[3:], vf[:3]))) + bias[i][3:]
    return st.combine(ctx, bias)


def _matvec(ctx, J, x):
    return [ctx.bind(sum((a * b for a, b in zip(row, x) if not (isinstance(a, int) and a == 0)), 0)) for row in J]


def _solve(ctx, chain, X, ric, st, rhs):
    """lambda = (J M^-1 J^T)^-1 rhs."""
    from .operational_space import operational_space_inertia_inverse
    L = operational_space_inertia_inverse(ctx, chain, X, ric, st.points)
    return Block(ctx, st.compliance(ctx, L)).solve(rhs)


def _with_wrenches(ctx, chain, X, ric, st, v, T, lam, gravity=True):
    """M^-1 (T - b + J^T lambda) by the Kalman filter and smoother, lambda as external wrenches."""
    bodies = F.body_wrenches(ctx, chain, X, st.wrenches(ctx, lam), st.points)
    return kalman_smoother.forward_dynamics(ctx, chain, X, ric, v, T, gravity=gravity, f_ext=bodies)


def constrained_forward_dynamics(ctx, chain, X, ric, v, tau, gains=None, error=None):
    """(qdd, lambda) for joint forces tau (gravity and friction as in forward_dynamics). gains = (Kp, Kd)
    and error = phi (nc): Baumgarte's stabilization J qdd + J_dot v = -Kd J v - Kp phi."""
    st = Stack(chain)
    T = _fr.subtract_friction(ctx, chain, tau, v, X)
    free = kalman_smoother.forward_dynamics(ctx, chain, X, ric, v, T)
    J = constraint_jacobian(ctx, chain, X)
    drift = constraint_drift(ctx, chain, X, v)
    acc = [ctx.bind(a + g) for a, g in zip(_matvec(ctx, J, free), drift)]
    if gains is not None:
        kp, kd = gains
        acc = [ctx.bind(a + kd * w + kp * e) for a, w, e in zip(acc, _matvec(ctx, J, v), error)]
    lam = [ctx.bind(-x) for x in _solve(ctx, chain, X, ric, st, acc)]
    return _with_wrenches(ctx, chain, X, ric, st, v, T, lam), lam


def impact(ctx, chain, X, ric, v, restitution):
    """(v+, impulse): v+ = v - M^-1 J^T (J M^-1 J^T)^-1 (1 + e) J v, the impulse the constraints
    exert (world axes, as lambda)."""
    st = Stack(chain)
    e = restitution[0]
    Jv = _matvec(ctx, constraint_jacobian(ctx, chain, X), v)
    impulse = [ctx.bind(-x) for x in _solve(ctx, chain, X, ric, st, [ctx.bind((1 + e) * w) for w in Jv])]
    zero = [0] * chain.nv
    dv = _with_wrenches(ctx, chain, X, ric, st, zero, zero, impulse, gravity=False)
    return [ctx.bind(a + b) for a, b in zip(v, dv)], impulse
