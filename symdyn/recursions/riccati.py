"""Articulated-body inertia: the Riccati recursion of the Kalman filter run from tip to base
(Rodriguez 1987, eqs. 35, 37-39, 43; Jain & Rodriguez 1995, eq. 4.7; docs/algorithms.md, Sec. 4).

    P(k)  = sum over children phi P+(child) phi* + M(k)
    D(k)  = H(k) P(k) H*(k) + Ia(k)  G(k) = P(k) H*(k) D(k)^-1

The rotor inertia (armature) Ia(k) of a 1-DoF joint adds to M's diagonal, M = H phi M phi* H* +
diag(Ia): in the filtering picture it is the measurement noise of joint k, and enters D(k) only.
    P+(k) = tau_bar(k) P(k) = P(k) - G(k) H(k) P(k)

For a joint with nv > 1 degrees of freedom D(k) is an nv x nv block, factored D = U diag(d) U^T
(U unit upper triangular). Its upper-triangular square root S = U diag(d)^1/2 (D = S S^T) takes
the place of D^1/2, so that m = [I + H phi K] S stays upper triangular, and the nv-vector d of
all joints is the diagonal of M = U' diag(d) U'^T ([I + H phi K] blockdiag(U) is unit upper
triangular). No matrix is inverted: D^-1 and S^-1 are applied by triangular substitution.
"""
from ..multibody import spatial as S
from ..multibody.joints import unit_axis
from ..scalars.scalar import exact_zero


def _unit_axis(H):
    """a if H = +-e_a (a joint about or along a frame axis), else None."""
    axis = unit_axis(H)
    return None if axis is None else axis[0]


class Block:
    """D = U diag(d) U^T for one joint, and the products with D^-1, S, S^T, S^-1, S^-T."""

    def __init__(self, ctx, D):
        n = len(D)
        b = ctx.bind
        U = [[1 if i == j else 0 for j in range(n)] for i in range(n)]
        d, inv = [None] * n, [None] * n
        # N[i][j] = U[i][j] d[j], the numerator before the division: one product per term, not two
        N = [[None] * n for _ in range(n)]
        for j in reversed(range(n)):
            d[j] = ctx.divisor(b(D[j][j] - sum((U[j][k] * N[j][k] for k in range(j + 1, n)), 0)))
            inv[j] = b(1 / d[j])
            for i in range(j):
                N[i][j] = b(D[i][j] - sum((U[i][k] * N[j][k] for k in range(j + 1, n)), 0))
                U[i][j] = b(N[i][j] * inv[j])
        self.ctx, self.n, self.U, self.d, self.inv = ctx, n, U, d, inv
        self._sqrt = None

    def sqrt(self):
        """(d^1/2, d^-1/2), computed once."""
        if self._sqrt is None:
            r = [self.ctx.bind(self.ctx.sqrt(x)) for x in self.d]
            self._sqrt = (r, [self.ctx.bind(1 / x) for x in r])
        return self._sqrt

    def _u_solve(self, y):
        """U^-1 y (back substitution)."""
        x = [None] * self.n
        for i in reversed(range(self.n)):
            x[i] = self.ctx.bind(y[i] - sum((self.U[i][j] * x[j] for j in range(i + 1, self.n)), 0))
        return x

    def _ut_solve(self, y):
        """U^-T y (forward substitution)."""
        x = [None] * self.n
        for j in range(self.n):
            x[j] = self.ctx.bind(y[j] - sum((self.U[i][j] * x[i] for i in range(j)), 0))
        return x

    def solve(self, e):
        """D^-1 e."""
        y = self._u_solve(e)
        return self._ut_solve([self.ctx.bind(y[i] * self.inv[i]) for i in range(self.n)])

    def inverse(self):
        """D^-1 = V^T diag(1/d) V with V = U^-1 (unit upper triangular), as a symmetric matrix."""
        ctx, n, U = self.ctx, self.n, self.U
        V = [[1 if i == j else 0 for j in range(n)] for i in range(n)]
        for j in range(n):
            for i in reversed(range(j)):
                V[i][j] = ctx.bind(-sum((U[i][k] * V[k][j] for k in range(i + 1, j + 1)), 0))
        Y = [[ctx.bind(self.inv[k] * V[k][j]) if j >= k else 0 for j in range(n)] for k in range(n)]
        return S.bind_entries(ctx, n, lambda i, j: sum((V[k][min(i, j)] * Y[k][max(i, j)]
                                                        for k in range(min(i, j) + 1)), 0), symmetric=True)

    def sqrt_t_mul(self, x):
        """S^T x."""
        r, _ = self.sqrt()
        x = [self.ctx.bind(v) for v in x]
        return [self.ctx.bind(r[j] * sum((self.U[i][j] * x[i] for i in range(j + 1)), 0)) for j in range(self.n)]

    def sqrt_t_solve(self, y):
        """S^-T y."""
        _, ri = self.sqrt()
        return self._ut_solve([self.ctx.bind(y[j] * ri[j]) for j in range(self.n)])

    def sqrt_mul(self, x):
        """S x."""
        r, _ = self.sqrt()
        z = [self.ctx.bind(r[j] * x[j]) for j in range(self.n)]
        return [self.ctx.bind(sum((self.U[i][j] * z[j] for j in range(i, self.n)), 0)) for i in range(self.n)]

    def sqrt_solve(self, y):
        """S^-1 y."""
        _, ri = self.sqrt()
        return [self.ctx.bind(z * ri[j]) for j, z in enumerate(self._u_solve(y))]

    def sqrt_matrix(self):
        """S, upper triangular."""
        r, _ = self.sqrt()
        return [[self.ctx.bind(self.U[i][j] * r[j]) if j >= i else 0 for j in range(self.n)] for i in range(self.n)]


class Scalar(Block):
    """D of a 1-DoF joint as a 1 x 1 Block: the same products, in the papers' scalar expressions
    (e / D, sqrt D x, y / sqrt D), with 1/D the one the gain G already computed."""

    def __init__(self, ctx, D, inv):
        self.ctx, self.n, self.U, self.d, self.inv = ctx, 1, [[1]], [D], [inv]
        self._root = None

    def root(self):
        """D^1/2, computed once."""
        if self._root is None:
            self._root = self.ctx.bind(self.ctx.sqrt(self.d[0]))
        return self._root

    def sqrt(self):
        return [self.root()], [self.ctx.bind(1 / self.root())]

    def solve(self, e):
        return [self.ctx.bind(e[0] / self.d[0])]

    def inverse(self):
        return [[self.inv[0]]]

    def sqrt_t_mul(self, x):
        return [self.ctx.bind(self.root() * x[0])]

    sqrt_mul = sqrt_t_mul

    def sqrt_t_solve(self, y):
        return [y[0] / self.root()]

    def sqrt_solve(self, y):
        return [self.ctx.bind(y[0] / self.root())]

    def sqrt_matrix(self):
        return [[self.root()]]


class Riccati:
    """P, P+, D, G (and g = P H*) for every joint, base-to-tip indexed (Pinocchio's Data of ABA).

    D[k] is a Block (its products with D^-1, D^1/2, ...: a Scalar for a 1-DoF joint, whose products
    are the papers' scalar expressions); G[k] and g[k] are lists of nv columns (6-vectors)."""

    def __init__(self, ctx, chain, X):
        n = chain.n
        self.P, self.Pplus, self.D, self.G, self.g = [None] * n, [None] * n, [None] * n, [None] * n, [None] * n
        self.ctx, self.chain = ctx, chain
        for k in chain.inward():
            P = chain.M[k]
            for c in chain.children[k]:
                P = S.matrix_add(ctx, P, S.congruence_inward(ctx, X[c], self.Pplus[c]))
            if len(chain.H[k]) == 1:
                self._scalar(k, P, chain.H[k][0])
            else:
                self._block(k, P, chain.H[k])

    def _scalar(self, k, P, H):
        ctx = self.ctx
        g = S.bind(ctx, S.matvec(P, H))
        D = ctx.divisor(ctx.bind(S.vdot(H, g) + self.chain.armature[k]))   # an exact 0 only for a singular M (warned)
        inv = ctx.bind(1 / D)
        G = S.bind(ctx, S.vscale(inv, g))
        a = _unit_axis(H)
        if a is None or not exact_zero(self.chain.armature[k]):
            Pplus = S.rank_one_downdate(ctx, P, g, G)
        else:
            # H = +-e_a: G(a) = H(a) exactly and P+ H* = 0, so row and column a of P+ vanish;
            # saying so keeps D/D and D - D from the generated code
            G[a] = H[a]
            Pplus = S.symmetric(ctx, lambda i, j: 0 if a in (i, j) else P[i][j] - g[i] * G[j])
        self.P[k], self.g[k], self.D[k], self.G[k], self.Pplus[k] = P, [g], Scalar(ctx, D, inv), [G], Pplus

    def _block(self, k, P, H):
        ctx, nv = self.ctx, len(H)
        g = [S.bind(ctx, S.matvec(P, h)) for h in H]
        D = [[None] * nv for _ in range(nv)]
        for a in range(nv):
            for b in range(a, nv):
                D[a][b] = D[b][a] = ctx.bind(S.vdot(H[a], g[b]))
        rotor = self.chain.model.joints[k].armature      # MJCF's ball and free joints: Ia on each DoF
        if rotor:
            D = [[ctx.bind(x + self.chain.armature[k]) if a == b else x for b, x in enumerate(row)]
                 for a, row in enumerate(D)]
        block = Block(ctx, D)
        Dinv = block.inverse()
        # G = g D^-1; where the columns of H are +-e_a (and no armature), H G = 1 fixes those rows of G exactly
        axes = [unit_axis(h) for h in H]
        exact = {ax[0] for ax in axes if ax is not None} if all(axes) and not rotor else set()
        G = [[H[b][i] if i in exact else ctx.bind(sum((g[a][i] * Dinv[a][b] for a in range(nv)), 0))
              for i in range(6)] for b in range(nv)]
        Pplus = S.symmetric(ctx, lambda i, j: 0 if i in exact or j in exact else
                            P[i][j] - sum((g[b][i] * G[b][j] for b in range(nv)), 0))
        self.P[k], self.g[k], self.D[k], self.G[k], self.Pplus[k] = P, g, block, G, Pplus

    def d(self, k):
        """The UDU^T diagonal entries of joint k (D itself for a 1-DoF joint)."""
        return list(self.D[k].d)

    def sqrt_D(self, k):
        """D(k)^1/2 of a 1-DoF joint, computed once."""
        return self.D[k].root()

    def columns(self, k):
        """G(k) as a list of columns."""
        return self.G[k]

    def tau_bar(self, k, x):
        """tau_bar(k) x = x - G(k) (H(k) x) for a force x."""
        ctx, out = self.ctx, x
        for h, G in zip(self.chain.H[k], self.G[k]):
            out = S.vsub(out, S.vscale(ctx.bind(S.vdot(h, x)), G))
        return S.bind(ctx, out)

    def tau_bar_star(self, k, v):
        """tau_bar*(k) v = v - H*(k) (G*(k) v) for a velocity v."""
        ctx, out = self.ctx, v
        for h, G in zip(self.chain.H[k], self.G[k]):
            out = S.vsub(out, S.vscale(ctx.bind(S.vdot(G, v)), h))
        return S.bind(ctx, out)
