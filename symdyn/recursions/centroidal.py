"""Centre of mass and centroidal momentum (Orin & Goswami's centroidal momentum matrix, as
Pinocchio's ccrba) from composite-body parameters, inward, and the world placements of
frames.Placements.

The subtree of joint k as one rigid body, in frame k about O_k: its mass m, first moment h and
rotational inertia J (the ten dynamic parameters of a composite body). Inward, a child's
parameters move into its parent's frame by X = (R, l):
    h' = R h + m l        J' = R J R^T + m (|l|^2 1 - l l^T) + 2 (l . R h) 1 - l (R h)^T - (R h) l^T
(R J R^T by the joint's structured rotation, as in the Riccati recursion). A column [w; v] of
joint k's motion subspace moves its subtree with the momentum, at O_k in frame k,
    P = m v + w x h            L = J w + h x v,
which R0(k) turns into world axes, and L_G = L + (p0(k) - c) x P takes about the centre of mass
c = (sum over roots of m p0 + R0 h) / M. The column of Ag is [P; L_G]; Jcom's is P / M.
"""
from ..multibody import spatial as S
from .frames import Placements, columns, nv, rate_indices


class Composite:
    """Mass, first moment and (optionally) rotational inertia of every subtree, in its joint's frame."""

    def __init__(self, ctx, chain, X, inertia=True):
        n = chain.n
        self.m, self.h, self.J = [None] * n, [None] * n, [None] * n
        for k in chain.inward():
            m, h, J = chain.params[k][0], list(chain.h[k]), chain.J[k]
            for c in chain.children[k]:
                R, l = X[c]
                hc = S.bind(ctx, S.rot(R, self.h[c]))
                m = m + self.m[c]
                h = S.add(h, S.add(hc, S.scale(self.m[c], l)))
                if inertia:
                    J = _add3(J, _shifted(ctx, X[c], self.m[c], hc, self.J[c]))
            self.m[k] = ctx.bind(m)
            self.h[k] = S.bind(ctx, h)
            if inertia:
                self.J[k] = _bind_sym(ctx, J)


def _add3(A, B):
    return [[A[i][j] + B[i][j] for j in range(3)] for i in range(3)]


def _bind_sym(ctx, A):
    out = [[None] * 3 for _ in range(3)]
    for i in range(3):
        for j in range(i, 3):
            out[i][j] = out[j][i] = ctx.bind(A[i][j])
    return out


def _shifted(ctx, X, m, hc, J):
    """A child's rotational inertia about its parent's origin, in the parent's axes."""
    R, l = X
    RJ = S._rotate(ctx, R, J, True, X)
    ll, lh = ctx.bind(S.dot(l, l)), ctx.bind(S.dot(l, hc))
    diag = ctx.bind(m * ll + 2 * lh)
    return [[RJ[i][j] - m * l[i] * l[j] - l[i] * hc[j] - hc[i] * l[j] + (diag if i == j else 0)
             for j in range(3)] for i in range(3)]


def _center(ctx, chain, pl, comp):
    """(1 / M, c): the inverse total mass and the centre of mass in the world."""
    roots = [k for k in range(chain.n) if chain.parent[k] < 0]
    mass = ctx.bind(sum(comp.m[k] for k in roots))
    first = [0, 0, 0]
    for k in roots:
        first = S.add(first, S.add(S.scale(comp.m[k], pl.p[k]), S.rot(pl.R[k], comp.h[k])))
    inv = ctx.bind(1 / mass)
    return inv, S.bind(ctx, S.scale(inv, S.bind(ctx, first)))


def center_of_mass(ctx, chain, X):
    """(3,): the centre of mass in the world."""
    return _center(ctx, chain, Placements(ctx, chain, X), Composite(ctx, chain, X, inertia=False))[1]


def _linear(ctx, comp, k, col):
    """P = m v + w x h of subtree k moved by the column [w; v], frame k."""
    w, v = col[:3], col[3:]
    return S.bind(ctx, S.add(S.scale(comp.m[k], v), S.cross(w, comp.h[k])))


def com_jacobian(ctx, chain, X):
    """(3, nv): d com / dt = Jcom v."""
    pl, comp = Placements(ctx, chain, X), Composite(ctx, chain, X, inertia=False)
    inv, _ = _center(ctx, chain, pl, comp)
    J = [[0] * nv(chain) for _ in range(3)]
    for k in range(chain.n):
        for i, col in zip(rate_indices(chain, k), columns(chain, k)):
            P = S.bind(ctx, S.rot(pl.R[k], _linear(ctx, comp, k, col)))
            for row in range(3):
                J[row][i] = ctx.bind(inv * P[row])
    return J


def _columns_of_ag(ctx, chain, X):
    pl, comp = Placements(ctx, chain, X), Composite(ctx, chain, X)
    _, c = _center(ctx, chain, pl, comp)
    out = []
    for k in range(chain.n):
        lever = S.bind(ctx, S.sub(pl.p[k], c))
        for i, col in zip(rate_indices(chain, k), columns(chain, k)):
            w, v = col[:3], col[3:]
            P = S.bind(ctx, S.rot(pl.R[k], _linear(ctx, comp, k, col)))
            L = S.bind(ctx, S.add(S.rot(comp.J[k], w), S.cross(comp.h[k], v)))
            out.append((i, P + S.bind(ctx, S.add(S.rot(pl.R[k], L), S.cross(lever, P)))))
    return out


def centroidal_momentum_matrix(ctx, chain, X):
    """(6, nv): Ag, the centroidal momentum [linear; angular about the CoM] = Ag v (Pinocchio's ccrba)."""
    A = [[0] * nv(chain) for _ in range(6)]
    for i, col in _columns_of_ag(ctx, chain, X):
        for row in range(6):
            A[row][i] = col[row]
    return A


def centroidal_momentum(ctx, chain, X, v):
    """(6,): hg = Ag v."""
    total = [0] * 6
    for i, col in _columns_of_ag(ctx, chain, X):
        total = S.vadd(total, S.vscale(v[i], col))
    return S.bind(ctx, total)
