"""Articulated-body inertia: the Riccati recursion of the Kalman filter run from tip to base
(Rodriguez 1987, eqs. 35-40; Jain & Rodriguez, Sec. 4).

    P(k)  = sum over children phi P+(child) phi* + M(k)
    D(k)  = H(k) P(k) H*(k)          G(k) = P(k) H*(k) / D(k)
    P+(k) = tau_bar(k) P(k) = P(k) - G(k) H(k) P(k)
"""
from . import spatial as S


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
            g = S.bind(ctx, S.matvec(P, chain.H[k]))
            D = ctx.bind(S.vdot(chain.H[k], g))
            G = S.bind(ctx, S.vscale(ctx.bind(1 / D), g))
            self.P[k], self.g[k], self.D[k], self.G[k] = P, g, D, G
            self.Pplus[k] = S.rank_one_downdate(ctx, P, g, G)
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
