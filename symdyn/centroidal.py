"""Centre of mass and centroidal momentum (Orin & Goswami's centroidal momentum matrix, as
Pinocchio's ccrba), from the world placements of frames.Placements and one inward sum.

Everything is taken about the world origin O, in world axes, where the subtree sums are plain
additions (no transform per link): for body i, its mass m, first moment s = m p0 + R0 h and its
rotational inertia about O
    I_O = R0 J R0^T + m (|p|^2 1 - p p^T) + 2 (p . h0) 1 - p h0^T - h0 p^T      (p = p0, h0 = R0 h).
A motion with angular velocity w and velocity u of the point at O gives the subtree the momentum
    P = m u + w x s          L_O = I_O w + s x u,
so a joint column (w, v at O_j; u = v + p0(j) x w) of the Jacobians needs only the subtree sums
(m, s, I_O) of its joint:
    com_jacobian column = (w x (s - m p0(j)) + m v) / M_total
    centroidal column   = [P ; L_O - c x P],  c = s_total / M_total (about the centre of mass).
"""
from . import spatial as S
from .frames import Placements, body_velocities, columns, nv, rate_indices


def _sym3(ctx, A):
    return [[ctx.bind(A[i][j]) if j >= i else None for j in range(3)] for i in range(3)]


class Moments:
    """Per body and per subtree: mass, first moment and rotational inertia about O, world axes."""

    def __init__(self, ctx, chain, X, pl=None, inertia=True):
        n = chain.n
        self.pl = pl = pl or Placements(ctx, chain, X)
        self.m, self.s, self.I = [None] * n, [None] * n, [None] * n
        for k in range(n):
            m, h = chain.params[k][0], chain.h[k]
            R, p = pl.R[k], pl.p[k]
            h0 = S.bind(ctx, S.rot(R, h))
            self.m[k] = m
            self.s[k] = S.bind(ctx, S.add(S.scale(m, p), h0))
            if inertia:
                RJ = S.bind_matrix(ctx, S.matmul3(R, chain.J[k]))
                pp, ph = ctx.bind(S.dot(p, p)), ctx.bind(S.dot(p, h0))
                diag = ctx.bind(m * pp + 2 * ph)
                self.I[k] = _full(_sym3(ctx, [[S.dot(RJ[i], R[j]) - m * p[i] * p[j] - p[i] * h0[j] - h0[i] * p[j] +
                                               (diag if i == j else 0) for j in range(3)] for i in range(3)]))
        # subtree sums, inward
        self.msub, self.ssub, self.Isub = list(self.m), list(self.s), list(self.I)
        for k in chain.inward():
            kids = chain.children[k]
            if not kids:
                continue
            self.msub[k] = ctx.bind(self.m[k] + sum(self.msub[c] for c in kids))
            self.ssub[k] = S.bind(ctx, [self.s[k][i] + sum(self.ssub[c][i] for c in kids) for i in range(3)])
            if inertia:
                self.Isub[k] = _full(_sym3(ctx, [[self.I[k][i][j] + sum(self.Isub[c][i][j] for c in kids)
                                                  for j in range(3)] for i in range(3)]))
        roots = [k for k in range(n) if chain.parent[k] < 0]
        self.mass = ctx.bind(sum(self.msub[k] for k in roots))
        self.first = S.bind(ctx, [sum(self.ssub[k][i] for k in roots) for i in range(3)])
        inv = ctx.bind(1 / self.mass)
        self.com = S.bind(ctx, S.scale(inv, self.first))
        self.inv_mass = inv


def _full(U):
    """Mirror an upper triangle."""
    return [[U[i][j] if j >= i else U[j][i] for j in range(3)] for i in range(3)]


def center_of_mass(ctx, chain, X):
    """(3,): the centre of mass in the world."""
    return Moments(ctx, chain, X, inertia=False).com


def com_jacobian(ctx, chain, X):
    """(3, nv): d com / dt = Jcom v."""
    mo = Moments(ctx, chain, X, inertia=False)
    pl = mo.pl
    J = [[0] * nv(chain) for _ in range(3)]
    for k in range(chain.n):
        lever = S.bind(ctx, S.sub(mo.ssub[k], S.scale(mo.msub[k], pl.p[k])))
        for i, a in zip(rate_indices(chain, k), pl.axes[k]):
            col = S.bind(ctx, S.scale(mo.inv_mass, S.add(S.cross(a[:3], lever), S.scale(mo.msub[k], a[3:]))))
            for row in range(3):
                J[row][i] = col[row]
    return J


def _momentum(ctx, m, s, I, w, u, com):
    """[P; L about the centre of mass] of a subtree moving with (w, u at O)."""
    P = S.bind(ctx, S.add(S.scale(m, u), S.cross(w, s)))
    L = S.add(S.rot(I, w), S.cross(s, u))
    return P + S.bind(ctx, S.sub(L, S.cross(com, P)))


def centroidal_momentum_matrix(ctx, chain, X):
    """(6, nv): Ag, the centroidal momentum [linear; angular about the CoM] = Ag v (Pinocchio's ccrba)."""
    mo = Moments(ctx, chain, X)
    pl = mo.pl
    A = [[0] * nv(chain) for _ in range(6)]
    for k in range(chain.n):
        for i, a in zip(rate_indices(chain, k), pl.axes[k]):
            w = a[:3]
            u = S.bind(ctx, S.add(a[3:], S.cross(pl.p[k], w)))
            col = _momentum(ctx, mo.msub[k], mo.ssub[k], mo.Isub[k], w, u, mo.com)
            for row in range(6):
                A[row][i] = col[row]
    return A


def centroidal_momentum(ctx, chain, X, v):
    """(6,): hg = Ag v, by one outward sweep of body velocities (O(N))."""
    mo = Moments(ctx, chain, X)
    pl = mo.pl
    w, vo = body_velocities(ctx, chain, pl, v)
    total = [0] * 6
    for k in range(chain.n):
        u = S.bind(ctx, S.add(vo[k], S.cross(pl.p[k], w[k])))
        P = S.add(S.scale(mo.m[k], u), S.cross(w[k], mo.s[k]))
        L = S.add(S.rot(mo.I[k], w[k]), S.cross(mo.s[k], u))
        total = S.vadd(total, P + L)
    P = S.bind(ctx, total[:3])
    return P + S.bind(ctx, S.sub(total[3:], S.cross(mo.com, P)))
