"""Forward dynamics in the diagonalized coordinates (Jain & Rodriguez 1995, Algorithm 8.1, eqs. 8.1-8.3;
docs/algorithms.md, Sec. 13), and the rates of the un-normalized form (Lemma 7.3).

State (q, nu), nu = m* qd the total joint rates; gravity included (the paper folds it into the bias
forces), and joint friction, an applied force like gravity: T = tau - friction(qd) once qd is known
(the armature is in D). One Riccati recursion and two sweeps:

outward (Table 2 with nu):  qd = l* nu, with the link velocities V+, V         (innovations.joint_rates)
inward  (eq. 8.3):          Lambda_dot (Algorithm 6.1) and one force recursion w that carries the
                            working moments and the un-normalized Coriolis term together:
    w(k)  = sum phi w+(child) + M(k) alpha_g(k) + Lambda_dot(k) H*(k) eta(k) - [V~*(k) M(k) + X(k)] V(k)
    s(k)  = T(k) - H(k) w(k)                  = D eta_dot = eps_bar - Cbar   (Lemma 7.3, eq. 7.9)
    w+(k) = w(k) + G(k) s(k)
    nu_dot(k) = [s(k) + D_dot(k) eta(k) / 2] / sqrt D(k),   D_dot = H Lambda_dot H*,  eta = nu / sqrt D
w is the sum of the working-moment filter's state (eps_bar = T - H z) and the Coriolis recursion's y
(Cbar = H y) of Algorithm 7.10: psi y = phi (y - G Cbar) and phi z+ = phi (z + G eps_bar) share one
force transform. Gravity: g(q) = H f_g with f_g(k) = sum phi f_g(child) + M(k) alpha_g(k), so adding
f_g to z costs one M(k) alpha_g(k) per link, not a second Newton-Euler sweep; alpha_g(k) = [0; a(k)],
a(k) = R^T a(parent), a(base) = -gravity (an upward base acceleration), and M [0; a] = [h x a; m a].
The last line converts the paper's eta_dot to nu_dot: nu = D^1/2 eta, so nu_dot = D^1/2 eta_dot + D_dot eta / (2 D^1/2).

The fused sweep rests on H X = 0, true for joints with one degree of freedom; with a free-flyer,
spherical or planar joint, nu_dot = l (T - g(q)) - C(theta, nu) is computed by its parts instead
(working moments, inverse dynamics at rest, coriolis_nu), still O(N).
"""
from ..multibody import spatial as S
from ..multibody.chain import combine, scatter
from .coriolis_nu import _relative_cross_P, _tau_bar_congruence, coriolis_nu
from .friction import subtract_friction
from .innovations import joint_rates, working_moments
from .kinematics import velocities
from .rnea import inverse_dynamics


def _gravity_accelerations(ctx, chain, X):
    """a(k): the base's upward acceleration -gravity seen in frame k (linear part of alpha_g(k))."""
    a = [None] * chain.n
    for k in chain.outward():
        p = chain.parent[k]
        R, _ = X[k]
        a[k] = S.bind(ctx, S.rot_t(R, a[p] if p >= 0 else chain.base_acceleration[3:]))
    return a


def forward_dynamics(ctx, chain, X, ric, nu, T):
    """(q_dot, nu_dot) of the diagonalized equations of motion, gravity and friction included (Alg. 8.1)."""
    n = chain.n
    qd = joint_rates(ctx, chain, X, ric, nu)
    T = subtract_friction(ctx, chain, T, qd, X)
    if any(len(H) > 1 for H in chain.H):
        g = inverse_dynamics(ctx, chain, X, [0] * chain.nv, [0] * chain.nv)
        eps = working_moments(ctx, chain, X, ric, [ctx.bind(t - x) for t, x in zip(T, g)])
        C = coriolis_nu(ctx, chain, X, ric, qd)
        return qd, [ctx.bind(e - c) for e, c in zip(eps, C)]
    _, V = velocities(ctx, chain, X, qd)          # the same V as joint_rates' (one computation on a Tape)
    a = _gravity_accelerations(ctx, chain, X)
    Ldot, wplus, nu_dot = [None] * n, [None] * n, [None] * n
    for k in chain.inward():
        Xm = _relative_cross_P(ctx, chain, ric, k, qd)
        inboard = S.zero6()
        w = S.cross(chain.h[k], a[k]) + S.scale(chain.params[k][0], a[k])      # M(k) [0; a(k)]
        for c in chain.children[k]:
            inboard = S.matrix_add(ctx, inboard, S.congruence_inward(ctx, X[c], _tau_bar_congruence(ctx, chain, ric, c, Ldot[c])))
            w = S.vadd(w, S.force_inward(ctx, X[c], wplus[c]))
        Ldot[k] = S.symmetric(ctx, lambda i, j: inboard[i][j] + Xm[i][j] + Xm[j][i])
        eta = ctx.bind(nu[k] / ric.sqrt_D(k))
        H = chain.H[k][0]
        LH = S.bind(ctx, S.matvec(Ldot[k], H))
        MV = S.bind(ctx, S.matvec(chain.M[k], V[k]))
        gyro = S.bind(ctx, S.cross_force(V[k], MV))        # V x* M V = -V~* M V
        XV = S.bind(ctx, S.matvec(Xm, V[k]))
        w = S.bind(ctx, [w[i] + LH[i] * eta + gyro[i] - XV[i] for i in range(6)])
        s = ctx.bind(T[k] - S.vdot(H, w))
        Ddot = ctx.bind(S.vdot(H, LH))
        nu_dot[k] = ctx.bind((s + Ddot * eta / 2) / ric.sqrt_D(k))
        wplus[k] = S.bind(ctx, S.vadd(w, S.vscale(s, ric.G[k][0])))
    return qd, nu_dot


def rates_from_eta(ctx, chain, X, ric, eta):
    """qd = [I + H phi K]^-* eta: qd(k) = eta(k) - G*(k) V+(k), outward (no square roots)."""
    qd, V = [None] * chain.n, [None] * chain.n
    for k in chain.outward():
        p = chain.parent[k]
        Vplus = S.motion_outward(ctx, X[k], V[p]) if p >= 0 else [0] * 6
        qd[k] = [ctx.bind(e - S.vdot(G, Vplus)) for e, G in zip(chain.rates(eta, k), ric.columns(k))]
        V[k] = S.bind(ctx, S.vadd(Vplus, combine(qd[k], chain.H[k])))
    return scatter(chain, qd)
