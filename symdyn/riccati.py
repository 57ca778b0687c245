"""Articulated-body inertia: the Riccati recursion of the Kalman filter run from tip to base
(Rodriguez 1987, eqs. 35-40; Jain & Rodriguez, Sec. 4).

    P(k)  = sum over children phi P+(child) phi* + M(k)
    D(k)  = H(k) P(k) H*(k)          G(k) = P(k) H*(k) / D(k)
    P+(k) = tau_bar(k) P(k) = P(k) - G(k) H(k) P(k)
"""
from . import spatial as S


def _unit_axis(H):
    """a if H = +-e_a (a joint about or along a frame axis), else None."""
    nonzero = [i for i, h in enumerate(H) if h != 0]
    if len(nonzero) == 1 and abs(H[nonzero[0]]) == 1:
        return nonzero[0]
    return None


class Riccati:
    """P, P+, D, G (and g = P H*, 1/D, sqrt D) for every joint, base-to-tip indexed."""

    def __init__(self, ctx, chain, X):
        n = chain.n
        self.P, self.Pplus, self.D, self.G, self.g = [None] * n, [None] * n, [None] * n, [None] * n, [None] * n
        self.ctx, self.chain = ctx, chain
        for k in chain.inward():
            P = chain.M[k]
            for c in chain.children[k]:
                P = S.matrix_add(ctx, P, S.congruence_inward(ctx, X[c], self.Pplus[c]))
            H = chain.H[k]
            g = S.bind(ctx, S.matvec(P, H))
            D = ctx.divisor(ctx.bind(S.vdot(H, g)))     # an exact 0 only for a singular M (warned)
            G = S.bind(ctx, S.vscale(ctx.bind(1 / D), g))
            a = _unit_axis(H)
            if a is None:
                Pplus = S.rank_one_downdate(ctx, P, g, G)
            else:
                # H = +-e_a: G(a) = H(a) exactly and P+ H* = 0, so row and column a of P+ vanish;
                # saying so keeps D/D and D - D from the generated code
                G[a] = H[a]
                Pplus = S.symmetric(ctx, lambda i, j: 0 if a in (i, j) else P[i][j] - g[i] * G[j])
            self.P[k], self.g[k], self.D[k], self.G[k], self.Pplus[k] = P, g, D, G, Pplus
        self._sqrt = [None] * n

    def sqrt_D(self, k):
        """D(k)^1/2, computed once."""
        if self._sqrt[k] is None:
            self._sqrt[k] = self.ctx.bind(self.ctx.sqrt(self.D[k]))
        return self._sqrt[k]

    def tau_bar(self, k, x):
        """tau_bar(k) x = x - G(k) (H(k) x) for a force x."""
        return S.bind(self.ctx, S.vsub(x, S.vscale(self.ctx.bind(S.vdot(self.chain.H[k], x)), self.G[k])))

    def tau_bar_star(self, k, v):
        """tau_bar*(k) v = v - H*(k) (G*(k) v) for a velocity v."""
        return S.bind(self.ctx, S.vsub(v, S.vscale(self.ctx.bind(S.vdot(self.G[k], v)), self.chain.H[k])))
