"""Spatial algebra on plain lists of scalars, in Rodriguez's notation.

Scalars are whatever the context computes with (floats, numpy arrays, symbols); every
non-trivial result is passed through `ctx.bind`, so that under a `Tape` no expression ever
nests more than one operation deep and shared terms are computed once.

- 3-vectors are lists of 3, 3x3 matrices lists of 3 rows, spatial vectors lists of 6
  (angular / moment first), spatial matrices lists of 6 rows.
- A link transform X = Transform(R, l) stands for phi(parent, k) = [[R, l~R], [0, R]]: R = parent_R_k,
  l = O_k seen from the parent origin, in parent coordinates. phi moves forces inward (to the
  parent); its adjoint phi* moves velocities outward (to the child).
"""
from ..scalars.scalar import literal_zero


def bind(ctx, v):
    return [ctx.bind(x) for x in v]


def bind_matrix(ctx, m):
    return [[ctx.bind(x) for x in row] for row in m]


def bind_entries(ctx, n, entry, symmetric=False):
    """The n x n matrix of the bound entries entry(i, j), row by row; symmetric: only the upper
    triangle is computed, and mirrored."""
    out = [[None] * n for _ in range(n)]
    for i in range(n):
        for j in range(i if symmetric else 0, n):
            out[i][j] = ctx.bind(entry(i, j))
            if symmetric:
                out[j][i] = out[i][j]
    return out


# ---------------------------------------------------------------------------- 3-D
def add(a, b):
    return [a[0] + b[0], a[1] + b[1], a[2] + b[2]]


def sub(a, b):
    return [a[0] - b[0], a[1] - b[1], a[2] - b[2]]


def scale(s, a):
    return [s * a[0], s * a[1], s * a[2]]


def dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def cross(a, b):
    return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]


def rot(R, v):
    """R v"""
    return [R[i][0] * v[0] + R[i][1] * v[1] + R[i][2] * v[2] for i in range(3)]


def rot_t(R, v):
    """R^T v"""
    return [R[0][i] * v[0] + R[1][i] * v[1] + R[2][i] * v[2] for i in range(3)]


def matmul3(A, B):
    return [[A[i][0] * B[0][j] + A[i][1] * B[1][j] + A[i][2] * B[2][j] for j in range(3)] for i in range(3)]


def skew(a):
    """a~: the matrix of a x ."""
    return [[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]]


def matmul(ctx, A, B):
    """A B for matrices of any size as lists of rows, each entry bound; products with an exact zero left out."""
    return [[ctx.bind(sum((a * b for a, b in zip(row, col) if not (literal_zero(a) or literal_zero(b))), 0))
             for col in zip(*B)] for row in A]


def transpose3(A):
    return [[A[j][i] for j in range(3)] for i in range(3)]


def axis_rotation(ctx, axis, s, c):
    """Rodrigues' formula, Rot(h, q) = I + sin q h~ + (1 - cos q) h~^2; exact zeros of h fold away."""
    x, y, z = axis
    v = 1 - c
    return [[c + x * x * v, x * y * v - z * s, x * z * v + y * s],
            [x * y * v + z * s, c + y * y * v, y * z * v - x * s],
            [x * z * v - y * s, y * z * v + x * s, c + z * z * v]]


def add3(A, B):
    return [[A[i][j] + B[i][j] for j in range(3)] for i in range(3)]


def _times(c, x):
    """c x, with c = 1 (a float 2 * 0.5 that symbolic algebra keeps as 1.0) folded away."""
    if (isinstance(c, (int, float)) or getattr(c, "is_Number", False)) and float(c) == 1.0:
        return x
    return c * x


def shifted_inertia(ctx, l, m, hc, RJ):
    """A body's rotational inertia about a point l away from its origin (parent axes), given its mass
    m, first moment hc and rotational inertia RJ about its origin, all in the parent's axes:
        RJ + m (|l|^2 1 - l l^T) + 2 (l . hc) 1 - l hc^T - hc l^T.
    |l|^2 and 2 (l . hc) are bound when they serve several entries (l not on an axis, or moving)."""
    ll, lh2 = dot(l, l), sum(_times(2 * l[i], hc[i]) for i in range(3))
    if ctx.symbolic:
        moving = any(getattr(x, "free_symbols", True) for x in l)       # a prismatic joint's l
        if moving:
            ll = ctx.bind(ll)
        if moving or sum(1 for x in l if x != 0) > 1:
            lh2 = ctx.bind(lh2)
    return [[RJ[i][j] - m * l[i] * l[j] - l[i] * hc[j] - hc[i] * l[j] + (m * ll + lh2 if i == j else 0)
             for j in range(3)] for i in range(3)]


# ---------------------------------------------------------------------------- spatial vectors
def vadd(a, b):
    return [x + y for x, y in zip(a, b)]


def vsub(a, b):
    return [x - y for x, y in zip(a, b)]


def vscale(s, a):
    return [s * x for x in a]


def vdot(a, b):
    total = 0
    for x, y in zip(a, b):
        total = total + x * y
    return total


def matvec(P, v):
    return [vdot(row, v) for row in P]


def matvec_t(P, v):
    return [vdot([P[i][j] for i in range(6)], v) for j in range(6)]


def cross_motion(V, U):
    """V x U for motions: [w x wu ; v x wu + w x vu]."""
    w, v = V[:3], V[3:]
    return cross(w, U[:3]) + add(cross(v, U[:3]), cross(w, U[3:]))


def cross_force(V, F):
    """V x* F for forces: [w x n + v x f ; w x f]."""
    w, v = V[:3], V[3:]
    return add(cross(w, F[:3]), cross(v, F[3:])) + cross(w, F[3:])


def force_inward(ctx, X, f):
    """phi(parent, k) f: a force at O_k (frame k) moved to O_parent (parent frame)."""
    R, l = X
    F = bind(ctx, rot(R, f[3:]))
    n = bind(ctx, rot(R, f[:3]))
    return bind(ctx, add(n, cross(l, F))) + F


def motion_outward(ctx, X, v):
    """phi*(parent, k) v: a velocity of the parent frame seen at O_k in frame k."""
    R, l = X
    w = v[:3]
    u = bind(ctx, add(v[3:], cross(w, l)))
    return bind(ctx, rot_t(R, w)) + bind(ctx, rot_t(R, u))


def inverse_transform(ctx, X):
    """phi(k, parent) = phi(parent, k)^-1 (X.inverse)."""
    return X.inverse(ctx)


# ---------------------------------------------------------------------------- spatial matrices
def blocks(P):
    return ([row[:3] for row in P[:3]], [row[3:] for row in P[:3]],
            [row[:3] for row in P[3:]], [row[3:] for row in P[3:]])


def assemble(A, B, C, D):
    return [A[i] + B[i] for i in range(3)] + [C[i] + D[i] for i in range(3)]


def _cross_cols(l, M):
    """l~ M: every column of M crossed with l."""
    cols = [cross(l, [M[0][j], M[1][j], M[2][j]]) for j in range(3)]
    return [[cols[j][i] for j in range(3)] for i in range(3)]


class Transform(tuple):
    """(R, l) of phi(parent, k), what every joint returns (Pinocchio's SE3): unpacks as R, l.

    `congruence3(ctx, M, symmetric)` forms R M R^T, the product the inertia recursions spend most of
    their multiplications on. A joint whose R = A Rot(axis, q) has a structure worth exploiting gives
    `turn(ctx, M, symmetric, backwards)`, which does it cheaper (joints._axis_congruence); without it
    the generic product is used. The inverse transform runs the same structure backwards. `act(ctx, X)`
    composes two transforms (generic products: a composition has no turn)."""

    def __new__(cls, R, l, turn=None, backwards=False):
        obj = tuple.__new__(cls, (R, l))
        obj.turn, obj.backwards = turn, backwards
        return obj

    @property
    def R(self):
        return self[0]

    @property
    def l(self):
        return self[1]

    def act(self, ctx, X, lever=None):
        """phi(a, c) = phi(a, b) phi(b, c) of self = phi(a, b) and X = phi(b, c) (Pinocchio's SE3::act on
        an SE3): R R_X and l + R l_X. lever: R l_X bound by a caller that keeps it (Placements.r),
        else it is summed within l's entries."""
        R, l = self
        Rx, lx = X
        lever = rot(R, lx) if lever is None else lever
        return Transform(bind_matrix(ctx, matmul3(R, Rx)), bind(ctx, add(l, lever)))

    def inverse(self, ctx):
        """phi(k, parent): R^T and -R^T l."""
        R, l = self
        return Transform(transpose3(R), bind(ctx, scale(-1, rot_t(R, l))), self.turn, not self.backwards)

    def congruence3(self, ctx, M, symmetric):
        """R M R^T, upper triangle mirrored when M is symmetric."""
        if self.turn is not None:
            return self.turn(ctx, M, symmetric, self.backwards)
        R = self[0]
        RM = bind_matrix(ctx, matmul3(R, M))
        return bind_entries(ctx, 3, lambda i, j: RM[i][0] * R[j][0] + RM[i][1] * R[j][1] + RM[i][2] * R[j][2],
                            symmetric)

    def congruence3_once(self, ctx, J):
        """R J R^T for one symmetric J that shares the rotation with no other product: the joint's
        single-matrix form where it has one (joints.AxisTurn.once), else congruence3."""
        once = None if self.turn is None or self.backwards else self.turn.once
        if once is None:
            return self.congruence3(ctx, J, True)
        M = once(ctx, J, self[0])
        return bind_entries(ctx, 3, lambda i, j: M[i][j], True)


def plane_rotation(ctx, M, plane, angle, symmetric):
    """Rot M Rot^T for the rotation by q in the plane of axes plane = (i, j); angle = (c, s, ss, sc, c2, s2):
    c, s of q, ss = s s, sc = s c, and c2, s2 of 2q.

    The 2x2 part [[a, b1], [b2, e]] keeps its trace and its antisymmetric part b1 - b2, so two entries
    follow from the other two without a product (d = a - e, p = b1 + b2):
        a' = a - ss d - sc p     b1' = b1 - ss p + sc d     e' = a + e - a'     b2' = b1' - b1 + b2
    and for a symmetric one (b1 = b2 = b) a' = a - ss d - s2 b, b' = sc d + c2 b: 4 multiplications,
    the column of the axis t 4 more (8 for a symmetric 3x3, 12 for a general one)."""
    (i, j), (c, s, ss, sc, c2, s2) = plane, angle
    t = 3 - i - j
    out = [[None] * 3 for _ in range(3)]
    a, e = M[i][i], M[j][j]
    d = ctx.bind(a - e)
    if symmetric:
        out[i][i] = ctx.bind(a - ss * d - s2 * M[i][j])
        out[i][j] = out[j][i] = ctx.bind(sc * d + c2 * M[i][j])
    else:
        b1, b2 = M[i][j], M[j][i]
        p = ctx.bind(b1 + b2)
        out[i][i] = ctx.bind(a - ss * d - sc * p)
        out[i][j] = ctx.bind(b1 - ss * p + sc * d)
        out[j][i] = ctx.bind(out[i][j] - b1 + b2)
    out[j][j] = ctx.bind(a + e - out[i][i])
    out[t][t] = M[t][t]
    out[i][t] = ctx.bind(c * M[i][t] - s * M[j][t])
    out[j][t] = ctx.bind(s * M[i][t] + c * M[j][t])
    if symmetric:
        out[t][i], out[t][j] = out[i][t], out[j][t]
    else:
        out[t][i] = ctx.bind(c * M[t][i] - s * M[t][j])
        out[t][j] = ctx.bind(s * M[t][i] + c * M[t][j])
    return out


def congruence_inward(ctx, X, P, symmetric=True):
    """phi P phi*: a force-from-motion map (inertia) at O_k moved to O_parent.

    phi = T diag(R, R) with T = [[I, l~], [0, I]]: rotate the four blocks, then shift by l
    (cross products instead of 6x6 products)."""
    l = X[1]
    A, B, C, D = blocks(P)
    A, D = X.congruence3(ctx, A, symmetric), X.congruence3(ctx, D, symmetric)
    B = X.congruence3(ctx, B, False)
    C = transpose3(B) if symmetric else X.congruence3(ctx, C, False)
    B2 = bind_matrix(ctx, [[B[i][j] + x for j, x in enumerate(row)] for i, row in enumerate(_cross_cols(l, D))])
    LC = _cross_cols(l, C)
    # (B + l~D) l~^T = (l~ (B + l~D)^T)^T
    BLt = transpose3(_cross_cols(l, transpose3(B2)))
    A2 = bind_entries(ctx, 3, lambda i, j: A[i][j] + LC[i][j] + BLt[i][j], symmetric)
    if symmetric:
        C2 = transpose3(B2)
    else:
        C2 = bind_matrix(ctx, [[C[i][j] + x for j, x in enumerate(row)] for i, row in enumerate(transpose3(_cross_cols(l, transpose3(D))))])
    return assemble(A2, B2, C2, D)


def _swap(P):
    A, B, C, D = blocks(P)
    return assemble(D, C, B, A)


def congruence_outward(ctx, X, Y, symmetric=True):
    """phi* Y phi: a motion-from-force map at O_parent moved to O_k.

    phi* is phi(k, parent) with its blocks swapped, so this is congruence_inward of the
    inverse transform between two block swaps."""
    return _swap(congruence_inward(ctx, X.inverse(ctx), _swap(Y), symmetric))


def symmetric(ctx, entry):
    """The symmetric 6x6 matrix with upper-triangle entries entry(i, j), each bound once."""
    return bind_entries(ctx, 6, entry, symmetric=True)


def rank_one_downdate(ctx, P, g, G):
    """P - g G^T (the Riccati update tau_bar P = P - G H P, with g = P H*), symmetric."""
    return symmetric(ctx, lambda i, j: P[i][j] - g[i] * G[j])


def matrix_add(ctx, P, Q, symmetric=True):
    return bind_entries(ctx, 6, lambda i, j: P[i][j] + Q[i][j], symmetric)


def rigid_inertia(params):
    """Spatial inertia about O_k from (m, m c, J at O_k) = [m, hx, hy, hz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz].

    M = [[J, h~], [-h~, m 1]] with h = m c (the layout of Pinocchio's dynamic parameters)."""
    m, hx, hy, hz, ixx, ixy, iyy, ixz, iyz, izz = params
    return [[ixx, ixy, ixz, 0, -hz, hy],
            [ixy, iyy, iyz, hz, 0, -hx],
            [ixz, iyz, izz, -hy, hx, 0],
            [0, hz, -hy, m, 0, 0],
            [-hz, 0, hx, 0, m, 0],
            [hy, -hx, 0, 0, 0, m]]


def zero6():
    return [[0] * 6 for _ in range(6)]
