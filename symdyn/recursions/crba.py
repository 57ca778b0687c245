"""Mass matrix by composite bodies (Rodriguez 1987, eq. 32; Featherstone & Orin 2000, CRBA;
docs/algorithms.md, Sec. 6)."""
from ..multibody import spatial as S


def composite_inertias(ctx, chain, X):
    """R(k) = M(k) + sum over children phi R(child) phi*: the inertia of the subtree at k."""
    R = [None] * chain.n
    for k in chain.inward():
        total = chain.M[k]
        for c in chain.children[k]:
            total = S.matrix_add(ctx, total, S.congruence_inward(ctx, X[c], R[c]))
        R[k] = total
    return R


def put_block(out, rows, cols, block, symmetric=True):
    """out[rows, cols] = block (and its transpose at [cols, rows])."""
    for a, i in enumerate(rows):
        for b, j in enumerate(cols):
            out[i][j] = block[a][b]
            if symmetric:
                out[j][i] = block[a][b]


def mass_matrix(ctx, chain, X):
    """M(q) as a list of rows, symmetric; column i walks R(i) H*(i) inward to the base.

    Joints on different branches of a tree (neither is an ancestor of the other) do not couple:
    their entries are exact zeros, which cost nothing in generated code."""
    R = composite_inertias(ctx, chain, X)
    M = [[0] * chain.nv for _ in range(chain.nv)]
    vi = chain.vi
    for i in chain.inward():
        xs = [S.bind(ctx, S.matvec(R[i], h)) for h in chain.H[i]]
        H = chain.H[i]
        put_block(M, vi[i], vi[i], [[ctx.bind(S.vdot(H[a], xs[b])) if a <= b else None for b in range(len(H))]
                                    for a in range(len(H))], symmetric=False)
        for a in range(len(H)):             # H R H* is symmetric: the lower triangle of the block
            for b in range(a):
                M[vi[i][a]][vi[i][b]] = M[vi[i][b]][vi[i][a]]
        k = i
        for p in chain.ancestors(i):
            xs = [S.force_inward(ctx, X[k], x) for x in xs]
            put_block(M, vi[p], vi[i], [[ctx.bind(S.vdot(h, x)) for x in xs] for h in chain.H[p]])
            k = p
    return M
