"""Outward sweep shared by the dynamics: link velocities and velocity-product terms.

Spatial (Featherstone) accelerations: the bias acceleration is a(k) = V(k) x H*(k) qd(k) and the
bias force b(k) = V(k) x* M(k) V(k), the same for every joint type (ALGORITHMS.md allows either
convention if used consistently).
"""
from . import spatial as S


def velocities(ctx, chain, X, qd):
    """V+(k) = phi*(parent, k) V(parent); V(k) = V+(k) + H*(k) qd(k); returns (V+, V)."""
    Vplus, V = [None] * chain.n, [None] * chain.n
    for k in chain.outward():
        p = chain.parent[k]
        Vplus[k] = S.motion_outward(ctx, X[k], V[p]) if p >= 0 else [0] * 6
        V[k] = S.bind(ctx, S.vadd(Vplus[k], S.vscale(qd[k], chain.H[k])))
    return Vplus, V


def bias_terms(ctx, chain, V, qd):
    """a(k) = V(k) x H*(k) qd(k) and b(k) = V(k) x* M(k) V(k)."""
    a, b = [None] * chain.n, [None] * chain.n
    for k in chain.outward():
        a[k] = S.bind(ctx, S.cross_motion(V[k], S.vscale(qd[k], chain.H[k])))
        b[k] = S.bind(ctx, S.cross_force(V[k], S.bind(ctx, S.matvec(chain.M[k], V[k]))))
    return a, b
