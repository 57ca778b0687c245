"""Saha's decomposition of the mass matrix, M = U diag(d) U^T (Saha 1997, eq. 13; docs/algorithms.md, Sec. 10).

U is unit upper triangular in base-to-tip order and d is the articulated inertia D(k) of the Riccati
recursion: U = [I + H phi K] of the innovations factorization (Jain & Rodriguez, Sec. 4), so
m = U D^1/2. Entry (i, k), i inward of k: U(i, k) = H(i) phi(i, k) G(k), one force moved inward.
"""
from . import spatial as S


def udu_factor(ctx, chain, X, ric):
    """U with M = U diag(D) U^T: unit diagonal, U(i, k) = H(i) phi(i, k) G(k) for i an ancestor of k."""
    n = chain.n
    U = [[0] * n for _ in range(n)]
    for k in chain.outward():
        U[k][k] = 1
        x, j = ric.G[k], k
        for i in chain.ancestors(k):
            x = S.force_inward(ctx, X[j], x)
            U[i][k] = ctx.bind(S.vdot(chain.H[i], x))
            j = i
    return U
