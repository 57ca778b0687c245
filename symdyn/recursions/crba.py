"""Mass matrix by composite bodies (Rodriguez 1987, eq. 32; Featherstone & Orin 2000, CRBA;
docs/algorithms.md, Sec. 6)."""
from ..multibody import spatial as S


def composite_inertias(ctx, chain, X, turned=None, once=False):
    """R(k) = M(k) + sum over children phi R(child) phi*, the inertia of the subtree at k, as a 6x6
    matrix over the ten parameters of composite_parameters (mass_matrix and coriolis_matrix)."""
    return [S.rigid_inertia(p) for p in composite_parameters(ctx, chain, X, turned, once)]


def composite_parameters(ctx, chain, X, turned=None, once=False):
    """(m, h, J) of every subtree about its joint's origin, as rigid_inertia's ten parameters
    (and in `turned`, when given, each non-root subtree's first moment R h in its parent's axes).

    `once`: the caller's program turns no other matrix by X, so each R J R^T takes the joint's
    single-matrix form (Transform.congruence3_once: 11 multiplications for a revolute joint on a
    coordinate axis, not 8 plus s s, s c and the double angles). Callers that also turn other matrices by X
    (coriolis_matrix's and rnea_derivatives' gyroscopic terms) share the double angles instead: with
    `once` there, coriolis_matrix cost solo12 (floating) 2257 mul instead of 2233 (docs/perf-history.md
    "Composite inertias").

    A child's (m, h, J) reaches its parent through (R, l) as m, R h + m l and R J R^T plus the
    parallel-axis terms (spatial.shifted_inertia): with the joint's structured rotation about 30
    multiplications, where the 6x6 congruence phi R phi* costs about 43."""
    n = chain.n
    m, h, J = [None] * n, [None] * n, [None] * n
    for k in chain.inward():
        mk, hk, Jk = chain.params[k][0], list(chain.h[k]), chain.J[k]
        for c in chain.children[k]:
            R, l = X[c]
            hc = S.bind(ctx, S.rot(R, h[c]))                    # the child's first moment, parent axes
            if turned is not None:
                turned[c] = hc
            mk = mk + m[c]
            hk = S.add(hk, S.add(hc, S.scale(m[c], l)))
            RJ = X[c].congruence3_once(ctx, J[c]) if once else X[c].congruence3(ctx, J[c], True)
            Jk = S.add3(Jk, S.shifted_inertia(ctx, l, m[c], hc, RJ))
        m[k] = ctx.bind(mk)
        h[k] = S.bind(ctx, hk)
        J[k] = [[ctx.bind(Jk[i][j]) if j >= i else None for j in range(3)] for i in range(3)]
        for i in range(3):
            for j in range(i):
                J[k][i][j] = J[k][j][i]
    return [[m[k], *h[k], J[k][0][0], J[k][0][1], J[k][1][1], J[k][0][2], J[k][1][2], J[k][2][2]]
            for k in range(n)]


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
    turned = [None] * chain.n
    R = composite_inertias(ctx, chain, X, turned, once=True)
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
            xs = column_inward(ctx, chain, X, turned, k, xs) if k == i else [S.force_inward(ctx, X[k], x) for x in xs]
            put_block(M, vi[p], vi[i], [[ctx.bind(S.vdot(h, x)) for x in xs] for h in chain.H[p]])
            k = p
    return M


def column_inward(ctx, chain, X, turned, k, xs):
    """phi(parent, k) xs for the columns xs = R(k) H*(k) of joint k's composite inertia (the first
    step of a column of M, and of coriolis_matrix's R(k) H*(k)), with the linear part read off the
    composite's turned first moment where _turned_axis allows it. The angular part R n is bound on its
    own, as force_inward does: its entries are then the ones the parent's composite already computed
    (bound only with l x f added, solo12's floating mass matrix cost 436 mul instead of 392)."""
    axis = _turned_axis(chain, k)
    if axis is None:
        return [S.force_inward(ctx, X[k], x) for x in xs]
    f = S.cross(axis, turned[k])            # a coordinate axis: entries of R c, no product
    rot, l = X[k]
    return [S.bind(ctx, S.add(S.bind(ctx, S.rot(rot, xs[0][:3])), S.cross(l, f))) + f]


def _turned_axis(chain, k):
    """A h for a revolute joint k (R = A Rot(h, q) turns its axis h to the constant A h), else None.

    Then the force of the column R(k) H*(k) = [J h; h x c] (c: the composite's first moment) reaches
    the parent with the linear part R (h x c) = (A h) x (R c), and R c is the composite's own term."""
    A, _, h, kind = chain.geometry[k]
    axis = kind.turned_axis(A, h)
    return axis if axis is not None and sum(1 for x in axis if x != 0) == 1 else None
