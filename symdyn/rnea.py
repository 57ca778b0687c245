"""Inverse dynamics: the recursive Newton-Euler algorithm (Rodriguez 1987, Sec. VII;
Featherstone & Orin, RNEA). T = M(q) qdd + C(q, qd) + g(q), gravity as a base acceleration."""
from . import spatial as S
from .kinematics import bias_terms, velocities


def inverse_dynamics(ctx, chain, X, qd, qdd, gravity=True):
    """Joint forces T(k) for the motion (qd, qdd) at the configuration with transforms X."""
    _, V = velocities(ctx, chain, X, qd)
    a, b = bias_terms(ctx, chain, V, qd)
    base = chain.base_acceleration if gravity else [0] * 6
    alpha = [None] * chain.n
    for k in chain.outward():                      # alpha(k) = phi* alpha(parent) + H* qdd + a
        p = chain.parent[k]
        inboard = S.motion_outward(ctx, X[k], alpha[p] if p >= 0 else base)
        alpha[k] = S.bind(ctx, S.vadd(S.vadd(inboard, S.vscale(qdd[k], chain.H[k])), a[k]))
    f, T = [None] * chain.n, [None] * chain.n
    for k in chain.inward():                       # f(k) = sum phi f(child) + M alpha + b
        total = S.vadd(S.matvec(chain.M[k], alpha[k]), b[k])
        for c in chain.children[k]:
            total = S.vadd(total, S.force_inward(ctx, X[c], f[c]))
        f[k] = S.bind(ctx, total)
        T[k] = ctx.bind(S.vdot(chain.H[k], f[k]))
    return T
