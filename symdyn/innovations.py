"""The innovations factorization M = [I + H phi K] D [I + H phi K]* and its inverse
(Jain & Rodriguez 1995, Sec. 4, eqs. 5.1-5.4, Tables 2-3; docs/algorithms.md, Secs. 3 and 9): m = [I + H phi K] D^1/2, l = m^-1 = D^-1/2 [I - H psi K],
so that M = m m* and M^-1 = l* l.

Four O(N) recursions apply them without forming a matrix:
    nu  = m* qd   (total joint rates)        qd = l* nu
    eps = l T     (working moments)          T  = m eps
"""
from . import spatial as S


def total_rates(ctx, chain, X, ric, qd):
    """nu(k) = sqrt D(k) [qd(k) + G*(k) V+(k)], outward."""
    nu, V = [None] * chain.n, [None] * chain.n
    for k in chain.outward():
        p = chain.parent[k]
        Vplus = S.motion_outward(ctx, X[k], V[p]) if p >= 0 else [0] * 6
        nu[k] = ctx.bind(ric.sqrt_D(k) * (qd[k] + S.vdot(ric.G[k], Vplus)))
        V[k] = S.bind(ctx, S.vadd(Vplus, S.vscale(qd[k], chain.H[k])))
    return nu


def joint_rates(ctx, chain, X, ric, nu):
    """qd(k) = nu(k) / sqrt D(k) - G*(k) V+(k), outward."""
    qd, V = [None] * chain.n, [None] * chain.n
    for k in chain.outward():
        p = chain.parent[k]
        Vplus = S.motion_outward(ctx, X[k], V[p]) if p >= 0 else [0] * 6
        qd[k] = ctx.bind(nu[k] / ric.sqrt_D(k) - S.vdot(ric.G[k], Vplus))
        V[k] = S.bind(ctx, S.vadd(Vplus, S.vscale(qd[k], chain.H[k])))
    return qd


def _inward_z(ctx, chain, X, zplus, k):
    z = [0] * 6
    for c in chain.children[k]:
        z = S.vadd(z, S.force_inward(ctx, X[c], zplus[c]))
    return S.bind(ctx, z)


def working_moments(ctx, chain, X, ric, T):
    """eps(k) = [T(k) - H(k) z(k)] / sqrt D(k); z+ = z + G y, inward."""
    eps, zplus = [None] * chain.n, [None] * chain.n
    for k in chain.inward():
        z = _inward_z(ctx, chain, X, zplus, k)
        y = ctx.bind(T[k] - S.vdot(chain.H[k], z))
        eps[k] = ctx.bind(y / ric.sqrt_D(k))
        zplus[k] = S.bind(ctx, S.vadd(z, S.vscale(y, ric.G[k])))
    return eps


def applied_moments(ctx, chain, X, ric, eps):
    """T(k) = sqrt D(k) eps(k) + H(k) z(k); z+ = z + G sqrt D eps, inward."""
    T, zplus = [None] * chain.n, [None] * chain.n
    for k in chain.inward():
        z = _inward_z(ctx, chain, X, zplus, k)
        y = ctx.bind(ric.sqrt_D(k) * eps[k])
        T[k] = ctx.bind(y + S.vdot(chain.H[k], z))
        zplus[k] = S.bind(ctx, S.vadd(z, S.vscale(y, ric.G[k])))
    return T


def innovations_factor(ctx, chain, X, ric):
    """m = [I + H phi K] D^1/2; entry (i, k), i inward of k: H(i) phi(i, k) G(k) sqrt D(k)."""
    n = chain.n
    m = [[0] * n for _ in range(n)]
    for k in chain.outward():
        m[k][k] = ric.sqrt_D(k)
        x = S.bind(ctx, S.vscale(ric.sqrt_D(k), ric.G[k]))
        j = k
        for i in chain.ancestors(k):
            x = S.force_inward(ctx, X[j], x)
            m[i][k] = ctx.bind(S.vdot(chain.H[i], x))
            j = i
    return m


def innovations_factor_inverse(ctx, chain, X, ric):
    """l = D^-1/2 [I - H psi K]; entry (i, k), i inward of k: -H(i) psi(i, k+1) phi(k+1, k) G(k) / sqrt D(i)."""
    n = chain.n
    ell = [[0] * n for _ in range(n)]
    for k in chain.outward():
        ell[k][k] = ctx.bind(1 / ric.sqrt_D(k))
        x, j = ric.G[k], k
        for i in chain.ancestors(k):
            x = S.force_inward(ctx, X[j], x)
            Hx = ctx.bind(S.vdot(chain.H[i], x))
            ell[i][k] = ctx.bind(-Hx / ric.sqrt_D(i))
            x = S.bind(ctx, S.vsub(x, S.vscale(Hx, ric.G[i])))     # tau_bar(i) x
            j = i
    return ell
