"""Saha's decomposition of the mass matrix, M = U diag(d) U^T (Saha 1997, eq. 13; docs/algorithms.md, Sec. 10).

U is unit upper triangular in base-to-tip order and d is the articulated inertia D(k) of the Riccati
recursion: U = [I + H phi K] of the innovations factorization (Jain & Rodriguez, Sec. 4), so
m = U D^1/2. Entry (i, k), i inward of k: U(i, k) = H(i) phi(i, k) G(k), one force moved inward.
For a joint with nv > 1, D(k) = U_k diag(d_k) U_k^T (riccati.Block) and U = [I + H phi K] blockdiag(U_k):
its diagonal block is U_k and its entries (i, k) are H(i) phi(i, k) G(k) U_k.
"""
from ..multibody import spatial as S
from ..multibody.chain import combine


def udu_factor(ctx, chain, X, ric):
    """U with M = U diag(d) U^T: unit diagonal, U(i, k) = H(i) phi(i, k) G(k) for i an ancestor of k."""
    U = [[0] * chain.nv for _ in range(chain.nv)]
    for k in chain.outward():
        block = ric.D[k]
        m = block.n
        xs = [S.bind(ctx, combine([block.U[a][b] for a in range(m)], ric.G[k])) for b in range(m)]
        for a, r in enumerate(chain.vi[k]):
            for b, c in enumerate(chain.vi[k]):
                U[r][c] = block.U[a][b]
        j = k
        for i in chain.ancestors(k):
            xs = [S.force_inward(ctx, X[j], x) for x in xs]
            for a, r in enumerate(chain.vi[i]):
                for b, c in enumerate(chain.vi[k]):
                    U[r][c] = ctx.bind(S.vdot(chain.H[i][a], xs[b]))
            j = i
    return U
