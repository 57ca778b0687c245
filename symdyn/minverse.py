"""Explicit elements of the inverse mass matrix (Rodriguez 1987, Section X, eq. 83), on trees.

    Upsilon+(base) = 0
    outward:  Upsilon+(k) = phi*(parent, k) Upsilon-(parent) phi(parent, k)
              Minv(k,k)   = 1/D(k) + G*(k) Upsilon+(k) G(k)
              Upsilon-(k) = tau_bar* Upsilon+ tau_bar + H* H / D
    each column walks toward the tips of its subtree:  alpha = Upsilon+(i) G(i) - Minv(i,i) H*(i);
              alpha <- phi* alpha;  Minv(k,i) = G*(k) alpha;  alpha <- tau_bar*(k) alpha
(Rodriguez 1987 prints H H* for H* H and drops one *; docs/algorithms.md, Sec. 8, has the checked form.)
With u = Upsilon+ G, tau_bar* Upsilon+ tau_bar + H* H / D = Upsilon+ - u H - H* u* + Minv(k,k) H* H.

Trees. Unlike M, M^-1 couples joints on different branches: a force on one branch accelerates the
common ancestors and so the other branch. From M^-1 = [I - H psi K]* D^-1 [I - H psi K], the
terms of joints i and k whose deepest common ancestor is a (a joint with several children)
share the factor psi through a, which gives
              Minv(k,i) = x(a,k)* Upsilon-(a) x(a,i),
x(a,i) = phi(a, .) tau_bar ... phi(., i) G(i): G(i) carried inward to a (tau_bar at each joint in
between, not at a), as in innovations_factor_inverse. Joints whose only common ancestor is the fixed
base do not couple (Upsilon- of the base is 0): exact zeros. No matrix is inverted: O(N^2) work.
"""
from . import spatial as S


def mass_matrix_inverse(ctx, chain, X, ric):
    n, H = chain.n, chain.H
    Minv = [[0] * n for _ in range(n)]
    Uplus, Uminus, u = [None] * n, [None] * n, [None] * n
    for k in chain.outward():
        p = chain.parent[k]
        Uplus[k] = S.congruence_outward(ctx, X[k], Uminus[p]) if p >= 0 else S.zero6()
        u[k] = S.bind(ctx, S.matvec(Uplus[k], ric.G[k]))
        d = Minv[k][k] = ctx.bind(1 / ric.D[k] + S.vdot(ric.G[k], u[k]))
        U, uk, h = Uplus[k], u[k], H[k]
        Uminus[k] = S.symmetric(ctx, lambda i, j: U[i][j] - uk[i] * h[j] - h[i] * uk[j] + d * h[i] * h[j])
    for i in chain.outward():
        _column_below(ctx, chain, X, ric, Minv, i, S.bind(ctx, S.vsub(u[i], S.vscale(Minv[i][i], H[i]))))
    _across_branches(ctx, chain, X, ric, Minv, Uminus)
    return Minv


def _column_below(ctx, chain, X, ric, Minv, i, alpha):
    """Minv(k, i) for every k in the subtree of i: alpha walks outward, depth first."""
    stack = [(c, alpha) for c in reversed(chain.children[i])]
    while stack:
        k, alpha = stack.pop()
        alpha = S.motion_outward(ctx, X[k], alpha)
        Minv[k][i] = Minv[i][k] = ctx.bind(S.vdot(ric.G[k], alpha))
        alpha = S.bind(ctx, S.vsub(alpha, S.vscale(Minv[k][i], chain.H[k])))
        stack.extend((c, alpha) for c in reversed(chain.children[k]))


def _across_branches(ctx, chain, X, ric, Minv, Uminus):
    """Minv(k, i) = x(a,k)* Upsilon-(a) x(a,i) for k and i on different branches below joint a."""
    branching = {a for a in range(chain.n) if len(chain.children[a]) > 1}
    if not branching:
        return
    x = {}                                        # (a, i) -> x(a, i)
    for i in chain.outward():
        above = [a for a in chain.ancestors(i) if a in branching]
        v, j = ric.G[i], i
        for a in chain.ancestors(i):
            if not above:
                break
            v = S.force_inward(ctx, X[j], v)
            if a == above[0]:
                x[a, i] = v
                above.pop(0)
            if above:
                v = ric.tau_bar(a, v)
            j = a
    for a in sorted(branching):
        branches = [_subtree(chain, c) for c in chain.children[a]]
        for b, nodes in enumerate(branches):
            others = [k for later in branches[b + 1:] for k in later]
            for i in nodes:
                y = S.bind(ctx, S.matvec(Uminus[a], x[a, i]))
                for k in others:
                    Minv[k][i] = Minv[i][k] = ctx.bind(S.vdot(x[a, k], y))


def _subtree(chain, k):
    """k and its descendants, depth first."""
    nodes, stack = [], [k]
    while stack:
        k = stack.pop()
        nodes.append(k)
        stack.extend(reversed(chain.children[k]))
    return nodes
