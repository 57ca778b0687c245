"""The Coriolis term of the diagonalized Lagrangian equations (Jain & Rodriguez 1995, Secs. 6-7,
eqs. 7.1-7.3 and 7.9-7.10; docs/algorithms.md, Secs. 11-12).

    normalized (Algorithm 7.1):      nu_dot + C(theta, nu) = eps,        nu = m* qd, eps = l T
    un-normalized (Algorithm 7.10):  D eta_dot + Cbar(theta, eta) = eps_bar,  eta = D^-1/2 nu

Both run inward with the time derivative Lambda_dot of the articulated inertia P (Algorithm 6.1):
    X(k)           = dOmega~(k) P(k)
    Lambda_dot(k)  = psi(k, c) Lambda_dot(c) psi*(k, c) + X + X*          (c: the child, k-1 in the paper)
Gravity is not part of C(theta, nu): with gravity, eps = l (T - g(q)).

Prismatic joints, which the paper leaves out: the derivation only needs the rate of the joint
transform, d/dt phi(k+1,k) = phi(k+1,k) (dV(k) x*), with the joint's relative velocity
dV(k) = H*(k) qd(k) and the force cross product [w; v] x* = [[w~, v~], [0, w~]]. For a revolute joint
dV = [h qd; 0] and dV x* = blockdiag(h~, h~) qd is the paper's dOmega~. For a prismatic joint
dV = [0; h qd] gives dV x* = [[0, h~ qd], [0, 0]] (not the motion cross product, which differs from it
only for prismatic joints). So X(k) := (H*(k) qd(k)) x* P(k) covers both; the tests check the result
against the definition C = l C(theta, qd) - m_dot* qd on chains with mixed joints.
"""
from . import spatial as S
from .kinematics import velocities


def _relative_cross_P(ctx, chain, ric, k, qd):
    """X = (H* qd) x* P(k), column by column."""
    vJ = S.vscale(qd[k], chain.H[k])
    cols = [S.bind(ctx, S.cross_force(vJ, [ric.P[k][i][j] for i in range(6)])) for j in range(6)]
    return [[cols[j][i] for j in range(6)] for i in range(6)]


def _tau_bar_congruence(ctx, chain, ric, k, L):
    """tau_bar(k) L tau_bar*(k) = L - G w* - w G* + (H w) G G*, with w = L H*."""
    w = S.bind(ctx, S.matvec(L, chain.H[k]))
    s = ctx.bind(S.vdot(chain.H[k], w))
    G = ric.G[k]
    return S.symmetric(ctx, lambda i, j: L[i][j] - G[i] * w[j] - w[i] * G[j] + s * G[i] * G[j])


def _sweep(ctx, chain, X, ric, qd, normalized):
    Vplus, V = velocities(ctx, chain, X, qd)
    n = chain.n
    Ldot, y, out = [None] * n, [None] * n, [None] * n
    for k in chain.inward():
        Xm = _relative_cross_P(ctx, chain, ric, k, qd)
        inboard = S.zero6()
        carried = [0] * 6                       # psi y(c) (+ Y V(c) when normalized)
        for c in chain.children[k]:
            inboard = S.matrix_add(ctx, inboard, S.congruence_inward(ctx, X[c], _tau_bar_congruence(ctx, chain, ric, c, Ldot[c])))
            yc = S.vadd(y[c], S.matvec(Ldot[c], V[c])) if normalized else y[c]
            carried = S.vadd(carried, S.force_inward(ctx, X[c], ric.tau_bar(c, S.bind(ctx, yc))))
        Ldot[k] = S.symmetric(ctx, lambda i, j: inboard[i][j] + Xm[i][j] + Xm[j][i])
        MV = S.bind(ctx, S.matvec(chain.M[k], V[k]))
        gyro = S.bind(ctx, S.cross_force(V[k], MV))       # V x* M V = -V~* M V
        XV = S.bind(ctx, S.matvec(Xm, V[k]))
        if normalized:
            XtV = S.bind(ctx, S.matvec_t(Xm, V[k]))
            LtV = S.bind(ctx, S.matvec(Ldot[k], ric.tau_bar_star(k, Vplus[k])))
            # y = psi y(c) + Y V(c) - [2 V~* M + X - X*] V - Lambda_dot tau_bar* V+
            y[k] = S.bind(ctx, [carried[i] + 2 * gyro[i] - XV[i] + XtV[i] - LtV[i] for i in range(6)])
            out[k] = ctx.bind(S.vdot(chain.H[k], y[k]) / (2 * ric.sqrt_D(k)))
        else:
            eta = ctx.bind(qd[k] + S.vdot(ric.G[k], Vplus[k]))
            LH = S.matvec(Ldot[k], chain.H[k])
            # y = psi y(c) + Lambda_dot H* eta - [V~* M + X] V
            y[k] = S.bind(ctx, [carried[i] + LH[i] * eta + gyro[i] - XV[i] for i in range(6)])
            out[k] = ctx.bind(S.vdot(chain.H[k], y[k]))
    return out


def coriolis_nu(ctx, chain, X, ric, qd):
    """C(theta, nu) of nu_dot + C(theta, nu) = eps (Algorithm 7.1), for the rates qd = l* nu."""
    return _sweep(ctx, chain, X, ric, qd, normalized=True)


def coriolis_eta(ctx, chain, X, ric, qd):
    """Cbar(theta, eta) of D eta_dot + Cbar(theta, eta) = eps_bar (Algorithm 7.10), for the rates qd."""
    return _sweep(ctx, chain, X, ric, qd, normalized=False)
