"""Explicit elements of the inverse mass matrix (Rodriguez 1987, Section X, eq. 83).

    Upsilon+(base) = 0
    outward:  Upsilon+(k) = phi*(parent, k) Upsilon-(parent) phi(parent, k)
              Minv(k,k)   = D(k)^-1 + G*(k) Upsilon+(k) G(k)
              Upsilon-(k) = tau_bar* Upsilon+ tau_bar + H* D^-1 H
    each column walks toward the tip:  alpha = Upsilon+(i) G(i) - H*(i) Minv(i,i);
              alpha <- phi* alpha;  Minv(k,i) = G*(k) alpha;  alpha <- tau_bar*(k) alpha
(The seed prints H H* for H* H and drops one *; ALGORITHMS.md has the checked form.)
With u = Upsilon+ G, tau_bar* Upsilon+ tau_bar + H* D^-1 H = Upsilon+ - u H - H* u* + H* Minv(k,k) H.
No matrix is inverted: O(N^2) work for the N(N+1)/2 elements. For a joint with nv > 1, D(k),
Minv(k,k) are nv x nv blocks, G, H, u and alpha have nv columns (D^-1 from its UDU^T factors).
"""
from . import spatial as S
from .chain import combine


def mass_matrix_inverse(ctx, chain, X, ric):
    n, nv, vi = chain.n, chain.nv, chain.vi
    Minv = [[None] * nv for _ in range(nv)]
    H = chain.H
    G = [ric.columns(k) for k in range(n)]
    Uplus, Uminus, u, diag = [None] * n, [None] * n, [None] * n, [None] * n
    for k in chain.outward():
        p = chain.parent[k]
        Uplus[k] = S.congruence_outward(ctx, X[k], Uminus[p]) if p >= 0 else S.zero6()
        u[k] = [S.bind(ctx, S.matvec(Uplus[k], g)) for g in G[k]]
        if len(H[k]) == 1:
            d = diag[k] = [[ctx.bind(1 / ric.D[k] + S.vdot(G[k][0], u[k][0]))]]
        else:
            Dinv, m = ric.block[k].inverse(), len(H[k])
            d = diag[k] = [[None] * m for _ in range(m)]
            for a in range(m):
                for b in range(a, m):
                    d[a][b] = d[b][a] = ctx.bind(Dinv[a][b] + S.vdot(G[k][a], u[k][b]))
        for a, i in enumerate(vi[k]):
            for b, j in enumerate(vi[k]):
                Minv[i][j] = d[a][b]
        U, uk, h, m = Uplus[k], u[k], H[k], len(H[k])
        Uminus[k] = S.symmetric(ctx, lambda i, j: U[i][j] + sum(
            (-uk[a][i] * h[a][j] - h[a][i] * uk[a][j] + sum((d[a][b] * h[a][i] * h[b][j] for b in range(m)), 0)
             for a in range(m)), 0)) if m > 1 else \
            S.symmetric(ctx, lambda i, j: U[i][j] - uk[0][i] * h[0][j] - h[0][i] * uk[0][j] + d[0][0] * h[0][i] * h[0][j])
    for i in chain.outward():
        m = len(H[i])
        alpha = [S.bind(ctx, S.vsub(u[i][b], combine([diag[i][a][b] for a in range(m)], H[i]))) for b in range(m)]
        stack = [(c, alpha) for c in reversed(chain.children[i])]
        while stack:                       # every descendant k of i, depth first
            k, alpha = stack.pop()
            alpha = [S.motion_outward(ctx, X[k], x) for x in alpha]
            block = [[ctx.bind(S.vdot(g, x)) for x in alpha] for g in G[k]]
            for a, r in enumerate(vi[k]):
                for b, c in enumerate(vi[i]):
                    Minv[r][c] = Minv[c][r] = block[a][b]
            alpha = [S.bind(ctx, S.vsub(x, combine([block[a][b] for a in range(len(H[k]))], H[k])))
                     for b, x in enumerate(alpha)]
            stack.extend((c, alpha) for c in reversed(chain.children[k]))
    return Minv

