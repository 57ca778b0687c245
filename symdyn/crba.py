"""Mass matrix by composite bodies (Rodriguez 1987, eq. 32; Featherstone & Orin 2000, CRBA;
docs/algorithms.md, Sec. 6)."""
from . import spatial as S


def composite_inertias(ctx, chain, X):
    """R(k) = M(k) + sum over children phi R(child) phi*: the inertia of the subtree at k."""
    R = [None] * chain.n
    for k in chain.inward():
        total = chain.M[k]
        for c in chain.children[k]:
            total = S.matrix_add(ctx, total, S.congruence_inward(ctx, X[c], R[c]))
        R[k] = total
    return R


def mass_matrix(ctx, chain, X):
    """M(q) as a list of rows, symmetric; column i walks R(i) H*(i) inward to the base.

    Joints on different branches of a tree (neither is an ancestor of the other) do not couple:
    their entries are exact zeros, which cost nothing in generated code."""
    R = composite_inertias(ctx, chain, X)
    M = [[0] * chain.n for _ in range(chain.n)]
    for i in chain.inward():
        x = S.bind(ctx, S.matvec(R[i], chain.H[i]))
        M[i][i] = ctx.bind(S.vdot(chain.H[i], x))
        k = i
        for p in chain.ancestors(i):
            x = S.force_inward(ctx, X[k], x)
            M[p][i] = M[i][p] = ctx.bind(S.vdot(chain.H[p], x))
            k = p
    return M
