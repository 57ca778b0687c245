"""Explicit elements of the inverse mass matrix (Rodriguez 1987, Section X, eq. 83).

    Upsilon+(base) = 0
    outward:  Upsilon+(k) = phi*(parent, k) Upsilon-(parent) phi(parent, k)
              Minv(k,k)   = 1/D(k) + G*(k) Upsilon+(k) G(k)
              Upsilon-(k) = tau_bar* Upsilon+ tau_bar + H* H / D
    each column walks toward the tip:  alpha = Upsilon+(i) G(i) - Minv(i,i) H*(i);
              alpha <- phi* alpha;  Minv(k,i) = G*(k) alpha;  alpha <- tau_bar*(k) alpha
(Rodriguez 1987 prints H H* for H* H and drops one *; docs/algorithms.md, Sec. 8, has the checked form.)
With u = Upsilon+ G, tau_bar* Upsilon+ tau_bar + H* H / D = Upsilon+ - u H - H* u* + Minv(k,k) H* H.
No matrix is inverted: O(N^2) work for the N(N+1)/2 elements.
"""
from . import spatial as S


def mass_matrix_inverse(ctx, chain, X, ric):
    n, H = chain.n, chain.H
    Minv = [[None] * n for _ in range(n)]
    Uplus, Uminus, u = [None] * n, [None] * n, [None] * n
    for k in chain.outward():
        p = chain.parent[k]
        Uplus[k] = S.congruence_outward(ctx, X[k], Uminus[p]) if p >= 0 else S.zero6()
        u[k] = S.bind(ctx, S.matvec(Uplus[k], ric.G[k]))
        d = Minv[k][k] = ctx.bind(1 / ric.D[k] + S.vdot(ric.G[k], u[k]))
        U, uk, h = Uplus[k], u[k], H[k]
        Uminus[k] = S.symmetric(ctx, lambda i, j: U[i][j] - uk[i] * h[j] - h[i] * uk[j] + d * h[i] * h[j])
    for i in chain.outward():
        alpha = S.bind(ctx, S.vsub(u[i], S.vscale(Minv[i][i], H[i])))
        k = i
        while chain.children[k]:
            (k,) = chain.children[k]       # chains only: the builder rejects branching trees
            alpha = S.motion_outward(ctx, X[k], alpha)
            Minv[k][i] = Minv[i][k] = ctx.bind(S.vdot(ric.G[k], alpha))
            alpha = S.bind(ctx, S.vsub(alpha, S.vscale(Minv[k][i], H[k])))
    return Minv
