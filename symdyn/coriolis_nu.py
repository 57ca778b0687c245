"""The Coriolis term of the diagonalized Lagrangian equations (Jain & Rodriguez, Secs. 6-7).

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

Joints with nv > 1 (free-flyer, spherical, planar): the un-normalized sweep holds block by block,
with eta(k), Cbar(k) = H(k) y(k) nv-vectors and D(k) a block. With D = S S^T (S upper triangular,
riccati.Block), nu = S^T eta and eps = S^-1 eps_bar give the normalized term
    C(k) = S^-1 Cbar(k) - W^T nu(k),    W = Phi(S^-1 D_dot S^-T),    D_dot = H Lambda_dot H*
where Phi keeps the upper triangle and halves the diagonal (S_dot = S W, the derivative of the
triangular square root). For a 1-DoF joint this is (Cbar - D_dot eta / 2) / sqrt D; models whose
joints all have one degree of freedom keep Algorithm 7.1 itself.

Limit: this is checked against the definition for a multi-DoF joint at the root (free-flyer,
planar or spherical base) only. Further out, H(k) X(k) != 0 and the paper's derivation (which
uses H X = 0) does not carry over as is; such models raise Unsupported (the generator leaves
coriolis_nu out of their modules).
"""
from . import spatial as S
from .chain import combine, scatter
from .kinematics import velocities


class Unsupported(ValueError):
    """C(theta, nu) of a model with a multi-DoF joint away from the root (see the module doc)."""


def _check_supported(chain):
    for k in range(chain.n):
        if len(chain.H[k]) > 1 and chain.parent[k] >= 0:
            raise Unsupported(f"coriolis_nu: joint '{chain.model.joints[k].name}' has {len(chain.H[k])} degrees "
                              "of freedom and is not the root (not supported yet)")


def _relative_cross_P(ctx, chain, ric, k, qd):
    """X = (H* qd) x* P(k), column by column."""
    vJ = chain.joint_velocity(k, qd)
    cols = [S.bind(ctx, S.cross_force(vJ, [ric.P[k][i][j] for i in range(6)])) for j in range(6)]
    return [[cols[j][i] for j in range(6)] for i in range(6)]


def _tau_bar_congruence(ctx, chain, ric, k, L):
    """tau_bar(k) L tau_bar*(k) = L - G w* - w G* + (H w) G G*, with w = L H*."""
    H = chain.H[k]
    if len(H) == 1:
        w = S.bind(ctx, S.matvec(L, H[0]))
        s = ctx.bind(S.vdot(H[0], w))
        G = ric.G[k]
        return S.symmetric(ctx, lambda i, j: L[i][j] - G[i] * w[j] - w[i] * G[j] + s * G[i] * G[j])
    w = [S.bind(ctx, S.matvec(L, h)) for h in H]
    s = [[ctx.bind(S.vdot(h, x)) for x in w] for h in H]
    G, m = ric.G[k], len(H)
    return S.symmetric(ctx, lambda i, j: L[i][j] + sum(
        (-G[a][i] * w[a][j] - w[a][i] * G[a][j] + sum((s[a][b] * G[a][i] * G[b][j] for b in range(m)), 0)
         for a in range(m)), 0))


def _sweep(ctx, chain, X, ric, qd, normalized):
    """(per joint: C(theta, nu) or Cbar(theta, eta), Lambda_dot, eta)."""
    Vplus, V = velocities(ctx, chain, X, qd)
    n = chain.n
    Ldot, y, out, etas, Xs = [None] * n, [None] * n, [None] * n, [None] * n, [None] * n
    for k in chain.inward():
        Xm = Xs[k] = _relative_cross_P(ctx, chain, ric, k, qd)
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
            out[k] = [ctx.bind(S.vdot(chain.H[k][0], y[k]) / (2 * ric.sqrt_D(k)))]
        else:
            H = chain.H[k]
            eta = etas[k] = [ctx.bind(x + S.vdot(G, Vplus[k])) for x, G in zip(chain.rates(qd, k), ric.columns(k))]
            LH = combine(eta, [S.matvec(Ldot[k], h) for h in H])
            # y = psi y(c) + Lambda_dot H* eta - [V~* M + X] V
            y[k] = S.bind(ctx, [carried[i] + LH[i] + gyro[i] - XV[i] for i in range(6)])
            out[k] = [ctx.bind(S.vdot(h, y[k])) for h in H]
    return out, Ldot, etas, Xs


def _normalized_block(ctx, chain, ric, k, Cbar, Ldot, eta, Xm):
    """C(k) = S^-1 Cbar - W^T nu(k) from the un-normalized terms of joint k (see the module doc)."""
    H = chain.H[k]
    m = len(H)
    # Lambda_dot is the rate of P(k) seen across joint k: D_dot = H (Lambda_dot - X - X*) H*
    # (H X H* = 0 for one degree of freedom)
    if m == 1:
        Ddot = [[ctx.bind(S.vdot(H[0], S.matvec(Ldot, H[0])))]]
    else:
        Ddot = [[ctx.bind(S.vdot(H[a], S.matvec(Ldot, H[b])) - S.vdot(H[a], S.matvec(Xm, H[b]))
                          - S.vdot(H[b], S.matvec(Xm, H[a]))) for b in range(m)] for a in range(m)]
    if m == 1:
        return [ctx.bind((Cbar[0] - 0.5 * Ddot[0][0] * eta[0]) / ric.sqrt_D(k))]
    B = ric.block[k]
    half = [B.sqrt_solve([Ddot[a][b] for a in range(m)]) for b in range(m)]        # columns of S^-1 Ddot
    Q = [B.sqrt_solve([half[b][a] for b in range(m)]) for a in range(m)]           # (S^-1 Ddot S^-T)^T = itself
    W = [[(Q[j][i] if j > i else 0.5 * Q[i][i] if i == j else 0) for j in range(m)] for i in range(m)]
    nu = B.sqrt_t_mul(eta)
    first = B.sqrt_solve(Cbar)
    return [ctx.bind(first[i] - sum((W[a][i] * nu[a] for a in range(m)), 0)) for i in range(m)]


def coriolis_nu(ctx, chain, X, ric, qd):
    """C(theta, nu) of nu_dot + C(theta, nu) = eps (Algorithm 7.1), for the rates qd = l* nu."""
    if all(len(H) == 1 for H in chain.H):
        return scatter(chain, _sweep(ctx, chain, X, ric, qd, normalized=True)[0])
    _check_supported(chain)
    Cbar, Ldot, eta, Xs = _sweep(ctx, chain, X, ric, qd, normalized=False)
    return scatter(chain, [_normalized_block(ctx, chain, ric, k, Cbar[k], Ldot[k], eta[k], Xs[k]) for k in range(chain.n)])


def coriolis_eta(ctx, chain, X, ric, qd):
    """Cbar(theta, eta) of D eta_dot + Cbar(theta, eta) = eps_bar (Algorithm 7.10), for the rates qd."""
    _check_supported(chain)
    return scatter(chain, _sweep(ctx, chain, X, ric, qd, normalized=False)[0])
