"""Centre of mass and centroidal momentum (Orin & Goswami's centroidal momentum matrix, as
Pinocchio's ccrba) from composite-body parameters, inward, and the world rotations of
frames.Placements, outward.

The subtree of joint k as one rigid body, in frame k about O_k: its mass m, first moment h and
rotational inertia J (the ten dynamic parameters of a composite body). X(k) = (R, l) moves them
into the parent's axes, hp = R h and Jp = R J R^T (by the joint's structured rotation, as in the
Riccati recursion), and the parent sums
    h' = hp + m l        J' = Jp + m (|l|^2 1 - l l^T) + 2 (l . hp) 1 - l hp^T - hp l^T.
A column [w; v] of joint k's motion subspace moves its subtree with the momentum, at O_k in the
parent's axes, (Rw, Rv = R w, R v: constants for a revolute or prismatic joint, whose rotation
leaves its axis alone)
    P = m Rv + Rw x hp            L = Jp Rw - Rv x hp,
and about the centre of mass c, L_G = L + d x P with d = p0(k) - c in the parent's axes, carried
outward as d(k) = e(parent) + l, e(k) = R^T d(k) (for a root, d = p0(root) - c in world axes).
R0(parent) turns [P; L_G] into world axes: a body needs its world rotation only if it has children,
and no body needs its world position but the roots, for c = (sum over roots of m p0 + hp) / M.
The column of Ag is [P; L_G]. (A revolute joint's column on a coordinate axis: P and L are
entries of hp and Jp, no product; 4 for d x P, 15 to turn both into the world.) Jcom's column is
P / M, kept in the first version's form P = R0(k) (m v + w x h) (see com_jacobian).
"""
from ..multibody import spatial as S
from .frames import Placements, columns, nv, rate_indices


class Composite:
    """Mass, first moment and (optionally) rotational inertia of every subtree, in its joint's frame
    (m, h, J), and the same first moment and inertia in its parent's axes (hp, and Jp where the joint
    has a parent), which the parent sums and the centroidal columns read."""

    def __init__(self, ctx, chain, X, inertia=True):
        n = chain.n
        self.m, self.h, self.J = [None] * n, [None] * n, [None] * n
        self.hp, self.Jp = [None] * n, [None] * n
        for k in chain.inward():
            m, h, J = chain.params[k][0], list(chain.h[k]), chain.J[k]
            for c in chain.children[k]:
                l = X[c][1]
                m = m + self.m[c]
                h = S.add(h, S.add(self.hp[c], S.scale(self.m[c], l)))
                if inertia:
                    J = S.add3(J, S.shifted_inertia(ctx, l, self.m[c], self.hp[c], self.Jp[c]))
            self.m[k] = ctx.bind(m)
            self.h[k] = S.bind(ctx, h)
            self.hp[k] = S.bind(ctx, S.rot(X[k][0], self.h[k]))
            if inertia:
                self.J[k] = S.bind_entries(ctx, 3, lambda i, j: J[i][j], symmetric=True)
                if chain.parent[k] >= 0:
                    self.Jp[k] = X[k].congruence3_once(ctx, self.J[k])



def _center(ctx, chain, pl, comp):
    """(1 / M, c): the inverse total mass and the centre of mass in the world."""
    roots = _roots(chain)
    mass = ctx.bind(sum(comp.m[k] for k in roots))
    first = [0, 0, 0]
    for k in roots:
        first = S.add(first, S.add(S.scale(comp.m[k], pl.p[k]), comp.hp[k]))
    inv = ctx.bind(1 / mass)
    return inv, S.bind(ctx, S.scale(inv, S.bind(ctx, first)))


def _roots(chain):
    return [k for k in range(chain.n) if chain.parent[k] < 0]


def center_of_mass(ctx, chain, X):
    """(3,): the centre of mass in the world."""
    comp = Composite(ctx, chain, X, inertia=False)
    return _center(ctx, chain, _placed_roots(ctx, chain, X), comp)[1]


def _placed_roots(ctx, chain, X):
    pl = Placements(ctx, chain, X, lazy=True)
    for k in _roots(chain):
        pl.place(k)
    return pl


def _parent_columns(chain, X, k):
    """[(w, R w, R v)]: joint k's columns [w; v], the angular part w as it is and both parts turned
    into the parent's axes: constants for a revolute or prismatic joint (its rotation leaves its
    axis alone), else the columns of R."""
    A, _, _, kind = chain.geometry[k]
    R = A if kind.keeps_axis else X[k][0]
    return [(col[:3], S.rot(R, col[:3]), S.rot(R, col[3:])) for col in columns(chain, k)]


def _momenta(ctx, chain, X, comp):
    """Outward: (pl, 1 / M, [(i, P, L_G)]): the linear momentum P of joint k's subtree moved by
    column i of H*(k), and its angular momentum L_G about the centre of mass, world axes.

    A column is formed in the parent's axes from the composite pass's hp and Jp,
        P = m Rv + Rw x hp        L = Jp Rw - Rv x hp        L_G = L + d x P
    (for a root, Jp Rw = R J w), with d = p0(k) - c in the parent's axes, carried outward as
    e(k) = R^T (e(parent) + l); then turned into the world by R0(parent). So no body needs its own
    world rotation unless it has children, nor its world position. The bodies are placed as the
    columns go: in the compiled C a world rotation lives only from its body to its children, not
    through the whole inward pass.

    With a single root (every robot but one with several chains on a fixed base), c = p0 + hp / M,
    so d(root) = -hp / M and a column of the root that only translates (w = 0: a free-flyer's
    linear ones) has L_G = -Rv x hp - (m / M) hp x Rv = 0, set exactly."""
    pl = _placed_roots(ctx, chain, X)
    inv, c = _center(ctx, chain, pl, comp)
    single = len(_roots(chain)) == 1
    e = [None] * chain.n
    out = []
    for k in chain.outward():
        p, (R, l), hp = chain.parent[k], X[k], comp.hp[k]
        d = S.bind(ctx, S.sub(pl.p[k], c) if p < 0 else S.add(e[p], l))
        if chain.children[k]:
            e[k] = S.bind(ctx, S.rot_t(R, d))
        for i, (w, Rw, Rv) in zip(rate_indices(chain, k), _parent_columns(chain, X, k)):
            # Rw x hp and Rv x hp bound alone: a free-flyer's linear and angular columns share them
            P = S.bind(ctx, S.add(S.scale(comp.m[k], Rv), S.bind(ctx, S.cross(Rw, hp))))
            if p < 0 and single and all(x == 0 for x in w):
                L = [0, 0, 0]
            else:
                Jw = S.rot(comp.Jp[k], Rw) if p >= 0 else S.rot(R, S.rot(comp.J[k], w))
                L = S.bind(ctx, S.add(S.sub(Jw, S.bind(ctx, S.cross(Rv, hp))), S.cross(d, P)))
            if p >= 0:
                P = S.bind(ctx, S.rot(pl.R[p], P))
                L = S.bind(ctx, S.rot(pl.R[p], L))
            out.append((i, P, L))
        if p >= 0 and chain.children[k]:
            pl.place(k)
    return pl, inv, out


def com_jacobian(ctx, chain, X):
    """(3, nv): d com / dt = Jcom v. Each column P / M with P = R0(k) (m v + w x h), in the
    world rotations of every body: the parent-axes columns of _momenta save about 15% of the
    multiplications here, but the compiled C ran 2-6% slower (docs/perf-history.md "Kinematics speed, issue 11, second
    pass")."""
    pl, comp = Placements(ctx, chain, X), Composite(ctx, chain, X, inertia=False)
    inv, _ = _center(ctx, chain, pl, comp)
    J = [[0] * nv(chain) for _ in range(3)]
    for k in range(chain.n):
        for i, col in zip(rate_indices(chain, k), columns(chain, k)):
            w, v = col[:3], col[3:]
            P = S.bind(ctx, S.rot(pl.R[k], S.bind(ctx, S.add(S.scale(comp.m[k], v), S.cross(w, comp.h[k])))))
            for row in range(3):
                J[row][i] = ctx.bind(inv * P[row])
    return J


def _columns_of_ag(ctx, chain, X):
    _, _, cols = _momenta(ctx, chain, X, Composite(ctx, chain, X))
    return [(i, P + L) for i, P, L in cols]


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
