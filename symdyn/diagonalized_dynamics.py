"""Forward dynamics in the diagonalized coordinates (Jain & Rodriguez, Algorithm 8.1; docs/algorithms.md,
"Diagonalized forward dynamics"), and the rates of the un-normalized form (Lemma 7.3).

State (q, nu), nu = m* qd the total joint rates. With gravity (the paper folds it into the bias forces):

    q_dot  = l* nu                                   (outward)
    nu_dot = l (T - g(q)) - C(theta, nu)             (inward)

One Riccati recursion and two sweeps. The outward sweep is `innovations.joint_rates`, whose link
velocities V, V+ are the ones `coriolis_nu` needs (on a Tape they are the same symbols, so they are
computed once). The inward sweep runs Algorithm 7.1 for C(theta, nu) beside the working-moment
filter eps = l (T - g), in which gravity costs one M(k) alpha_g(k) per link instead of a second
Newton-Euler inward sweep:

    g(q) = H f_g,  f_g(k) = sum phi f_g(child) + M(k) alpha_g(k),  alpha_g(k) = phi* alpha_g(parent)
    z'(k) = z(k) + f_g(k) = sum phi z'+(child) + M(k) alpha_g(k)
    y = T(k) - H(k) z'(k);  eps(k) = y / sqrt D(k);  z'+(k) = z'(k) + G(k) y
(alpha_g(base) = -gravity, an upward base acceleration; at zero velocity alpha_g = [0; a] is pure
linear, a(k) = R^T a(parent), and M [0; a] = [h x a; m a].)
"""
from . import spatial as S
from .coriolis_nu import coriolis_nu
from .innovations import joint_rates


def _gravity_accelerations(ctx, chain, X):
    """a(k): the base's upward acceleration -gravity seen in frame k (linear part of alpha_g(k))."""
    a = [None] * chain.n
    for k in chain.outward():
        p = chain.parent[k]
        R, _ = X[k]
        a[k] = S.bind(ctx, S.rot_t(R, a[p] if p >= 0 else chain.base_acceleration[3:]))
    return a


def working_moments_with_gravity(ctx, chain, X, ric, T):
    """eps = l (T - g(q)), gravity folded into the filter's state (z' = z + f_g), inward."""
    a = _gravity_accelerations(ctx, chain, X)
    eps, zplus = [None] * chain.n, [None] * chain.n
    for k in chain.inward():
        h, m = chain.h[k], chain.params[k][0]
        z = S.cross(h, a[k]) + S.scale(m, a[k])                    # M(k) [0; a(k)]
        for c in chain.children[k]:
            z = S.vadd(z, S.force_inward(ctx, X[c], zplus[c]))
        z = S.bind(ctx, z)
        y = ctx.bind(T[k] - S.vdot(chain.H[k], z))
        eps[k] = ctx.bind(y / ric.sqrt_D(k))
        zplus[k] = S.bind(ctx, S.vadd(z, S.vscale(y, ric.G[k])))
    return eps


def forward_dynamics(ctx, chain, X, ric, nu, T):
    """(q_dot, nu_dot) of the diagonalized equations of motion, gravity included (Algorithm 8.1)."""
    qd = joint_rates(ctx, chain, X, ric, nu)
    C = coriolis_nu(ctx, chain, X, ric, qd)
    eps = working_moments_with_gravity(ctx, chain, X, ric, T)
    return qd, [ctx.bind(eps[k] - C[k]) for k in range(chain.n)]


def rates_from_eta(ctx, chain, X, ric, eta):
    """qd = [I + H phi K]^-* eta: qd(k) = eta(k) - G*(k) V+(k), outward (no square roots)."""
    qd, V = [None] * chain.n, [None] * chain.n
    for k in chain.outward():
        p = chain.parent[k]
        Vplus = S.motion_outward(ctx, X[k], V[p]) if p >= 0 else [0] * 6
        qd[k] = ctx.bind(eta[k] - S.vdot(ric.G[k], Vplus))
        V[k] = S.bind(ctx, S.vadd(Vplus, S.vscale(qd[k], chain.H[k])))
    return qd
