"""Forward dynamics through the mass matrix: qdd = M^-1 (tau - C(q, qd) qd - g(q)), with M = L^T D L factored
over the tree's sparsity (Featherstone, Rigid Body Dynamics Algorithms, Sec. 6.5, "LTDL"): M(i, j) is nonzero
only where dof j is dof i or inward of it, and the factor keeps that pattern, so a branch never touches
another. For a chain this is a dense L^T D L of the n x n matrix (n^3/6 multiplications); the Kalman filter
(kalman_smoother.py) is the other form of the same numbers, and the generator keeps the cheaper.
"""


def dof_parents(chain):
    """lambda(i): the dof just inward of dof i, -1 for the first dof of the tree."""
    lam = [-1] * chain.nv
    for k in range(chain.n):
        p = chain.parent[k]
        while p >= 0 and not chain.vi[p]:
            p = chain.parent[p]
        for a, i in enumerate(chain.vi[k]):
            lam[i] = chain.vi[k][a - 1] if a else (chain.vi[p][-1] if p >= 0 else -1)
    return lam


def _inward(lam, i):
    """The dofs from i's parent dof down to the root."""
    out, i = [], lam[i]
    while i >= 0:
        out.append(i)
        i = lam[i]
    return out


def factor(ctx, M, lam):
    """(L, 1/D) with M = L^T D L, L unit lower triangular on lam's pattern (its entries (k, i), i inward of k)."""
    L = [list(row) for row in M]
    inverse = [None] * len(M)
    for k in reversed(range(len(M))):
        inverse[k] = ctx.bind(1 / L[k][k])
        for i in _inward(lam, k):
            a = ctx.bind(L[k][i] * inverse[k])
            for j in [i] + _inward(lam, i):
                L[i][j] = ctx.bind(L[i][j] - a * L[k][j])
            L[k][i] = a
    return L, inverse


def solve(ctx, L, inverse, lam, b):
    """x with L^T D L x = b."""
    x = list(b)
    for i in reversed(range(len(x))):
        for j in _inward(lam, i):
            x[j] = ctx.bind(x[j] - L[i][j] * x[i])
    x = [ctx.bind(v * d) for v, d in zip(x, inverse)]
    for i in range(len(x)):
        for j in _inward(lam, i):
            x[i] = ctx.bind(x[i] - L[i][j] * x[j])
    return x


def forward_dynamics(ctx, M, bias, tau, lam):
    """M^-1 (tau - bias): bias = C(q, qd) qd + g(q) (inverse dynamics at qdd = 0)."""
    L, inverse = factor(ctx, M, lam)
    return solve(ctx, L, inverse, lam, [ctx.bind(t - b) for t, b in zip(tau, bias)])
