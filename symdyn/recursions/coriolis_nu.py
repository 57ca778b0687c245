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

Joints with nv > 1 (free-flyer, spherical, planar). The paper's derivation uses H(k) X(k) = 0,
true for one degree of freedom only. What carries over: Lambda_dot(k) - X(k) - X*(k) is the rate
P_dot(k) of P(k) in frame k, with X(k) = (H* eta(k)) x* P(k) for such a joint (H* eta = H* qd for
one degree of freedom, since G* V+ then only scales h), and the rate joint c passes inward is
tau_bar P_dot tau_bar* + Y + Y*, Y = (H* qd) x* P+ (tau_bar Lambda_dot tau_bar* when H X = 0). The
y recursion does not: Cbar comes from its definition instead, term by term in O(N)
(_cbar_by_definition). With D = S S^T (S upper triangular, riccati.Block), nu = S^T eta and
eps = S^-1 eps_bar then give the normalized term
    C(k) = S^-1 Cbar(k) - W^T nu(k),    W = Phi(S^-1 D_dot S^-T),    D_dot = H P_dot H*
where Phi keeps the upper triangle and halves the diagonal (S_dot = S W, the derivative of the
triangular square root). Models whose joints all have one degree of freedom keep Algorithm 7.1.
The tests check P_dot and C against finite differences along pinocchio-style integrate.
"""
from ..multibody import spatial as S
from ..multibody.chain import combine, scatter
from .kinematics import velocities


def _relative_cross_P(ctx, chain, ric, k, qd):
    """X = (H* qd) x* P(k), column by column."""
    vJ = chain.joint_velocity(k, qd)
    cols = [S.bind(ctx, S.cross_force(vJ, [ric.P[k][i][j] for i in range(6)])) for j in range(6)]
    return [[cols[j][i] for j in range(6)] for i in range(6)]


def _tau_bar_congruence(ctx, chain, ric, k, L):
    """tau_bar(k) L tau_bar*(k) = L - G w* - w G* + (H w) G G*, with w = L H*."""
    H = chain.H[k]
    w = [S.bind(ctx, S.matvec(L, h)) for h in H]
    s = [[ctx.bind(S.vdot(h, x)) for x in w] for h in H]
    G, m = ric.G[k], len(H)
    return S.symmetric(ctx, lambda i, j: L[i][j] + sum(
        (-G[a][i] * w[a][j] - w[a][i] * G[a][j] + sum((s[a][b] * G[a][i] * G[b][j] for b in range(m)), 0)
         for a in range(m)), 0))


def _cross_P(ctx, v, P):
    """(v x*) P, column by column."""
    cols = [S.bind(ctx, S.cross_force(v, [P[i][j] for i in range(6)])) for j in range(6)]
    return [[cols[j][i] for j in range(6)] for i in range(6)]


def _passed_rate(ctx, chain, ric, c, L, Xc, qd):
    """The rate of P+(c) that joint c passes inward: tau_bar Lambda_dot tau_bar* for one degree of
    freedom; for more, tau_bar (Lambda_dot - X - X*) tau_bar* + Y + Y*, Y = (H* qd) x* P+."""
    if len(chain.H[c]) == 1:
        return _tau_bar_congruence(ctx, chain, ric, c, L)
    body = S.symmetric(ctx, lambda i, j: L[i][j] - Xc[i][j] - Xc[j][i])
    T = _tau_bar_congruence(ctx, chain, ric, c, body)
    Y = _cross_P(ctx, chain.joint_velocity(c, qd), ric.Pplus[c])
    return S.symmetric(ctx, lambda i, j: T[i][j] + Y[i][j] + Y[j][i])


def _sweep(ctx, chain, X, ric, qd, normalized):
    """(per joint: C(theta, nu) or Cbar(theta, eta), Lambda_dot, eta)."""
    Vplus, V = velocities(ctx, chain, X, qd)
    n = chain.n
    Ldot, y, out, etas, Xs = [None] * n, [None] * n, [None] * n, [None] * n, [None] * n
    for k in chain.inward():
        if len(chain.H[k]) == 1:
            Xm = Xs[k] = _relative_cross_P(ctx, chain, ric, k, qd)
        else:       # (H* eta) x* P: the joint's own rate and what the articulated body adds, G* V+
            etas[k] = [ctx.bind(x + S.vdot(G, Vplus[k])) for x, G in zip(chain.rates(qd, k), ric.columns(k))]
            Xm = Xs[k] = _cross_P(ctx, combine(etas[k], chain.H[k]), ric.P[k])
        inboard = S.zero6()
        carried = [0] * 6                       # psi y(c) (+ Y V(c) when normalized)
        for c in chain.children[k]:
            inboard = S.matrix_add(ctx, inboard, S.congruence_inward(ctx, X[c], _passed_rate(ctx, chain, ric, c, Ldot[c], Xs[c], qd)))
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
            if etas[k] is None:
                etas[k] = [ctx.bind(x + S.vdot(G, Vplus[k])) for x, G in zip(chain.rates(qd, k), ric.columns(k))]
            eta = etas[k]
            LH = combine(eta, [S.matvec(Ldot[k], h) for h in H])
            # y = psi y(c) + Lambda_dot H* eta - [V~* M + X] V
            y[k] = S.bind(ctx, [carried[i] + LH[i] + gyro[i] - XV[i] for i in range(6)])
            out[k] = [ctx.bind(S.vdot(h, y[k])) for h in H]
    return out, Ldot, etas, Xs


def _normalized_block(ctx, chain, ric, k, Cbar, Pdot, eta):
    """C(k) = S^-1 Cbar - W^T nu(k) from the un-normalized terms of joint k (see the module doc)."""
    H = chain.H[k]
    m = len(H)
    Ddot = [[ctx.bind(S.vdot(H[a], S.matvec(Pdot, H[b]))) for b in range(m)] for a in range(m)]
    if m == 1:
        return [ctx.bind((Cbar[0] - 0.5 * Ddot[0][0] * eta[0]) / ric.sqrt_D(k))]
    B = ric.D[k]
    half = [B.sqrt_solve([Ddot[a][b] for a in range(m)]) for b in range(m)]        # columns of S^-1 Ddot
    Q = [B.sqrt_solve([half[b][a] for b in range(m)]) for a in range(m)]           # (S^-1 Ddot S^-T)^T = itself
    W = [[(Q[j][i] if j > i else 0.5 * Q[i][i] if i == j else 0) for j in range(m)] for i in range(m)]
    nu = B.sqrt_t_mul(eta)
    first = B.sqrt_solve(Cbar)
    return [ctx.bind(first[i] - sum((W[a][i] * nu[a] for a in range(m)), 0)) for i in range(m)]


def _cbar_by_definition(ctx, chain, X, ric, qd):
    """Cbar = [I - H psi K] C(q, qd) qd - D [I + H phi K]_dot* qd, each term by an O(N) sweep:

        [I + H phi K]* qd = eta,  eta(k) = qd(k) + G*(k) V+(k),  so at qdd = 0
        [I + H phi K]_dot* qd = G_dot* V+ + G* V+_dot,  D G_dot* = H P_dot tau_bar*,  D G* = H P,
        V+_dot(k) = phi* A(parent) + V+ x H* qd(k) = A(k) at qdd = 0 (spatial accelerations),
        P_dot(k) = Lambda_dot(k) - X(k) - X*(k) (the rate of P(k) in frame k),
    giving Cbar(k) = eps_bar(k) - H(k) [P_dot(k) tau_bar*(k) V+(k) + P(k) A(k)], with eps_bar the
    working moments of C(q, qd) qd without the D^-1/2 (inverse dynamics at zero acceleration, no
    gravity). Returns (Cbar, P_dot, eta) per joint."""
    from .rnea import inverse_dynamics
    _, Ldot, etas, Xs = _sweep(ctx, chain, X, ric, qd, normalized=False)
    Vplus, _ = velocities(ctx, chain, X, qd)
    bias = inverse_dynamics(ctx, chain, X, qd, [0] * chain.nv, gravity=False)
    A, eps_bar, zplus = [None] * chain.n, [None] * chain.n, [None] * chain.n
    for k in chain.outward():
        p = chain.parent[k]
        inboard = S.motion_outward(ctx, X[k], A[p]) if p >= 0 else [0] * 6
        A[k] = S.bind(ctx, S.vadd(inboard, S.cross_motion(Vplus[k], chain.joint_velocity(k, qd))))
    for k in chain.inward():
        z = [0] * 6
        for c in chain.children[k]:
            z = S.vadd(z, S.force_inward(ctx, X[c], zplus[c]))
        z = S.bind(ctx, z)
        eps_bar[k] = [ctx.bind(t - S.vdot(h, z)) for t, h in zip(chain.rates(bias, k), chain.H[k])]
        zplus[k] = S.bind(ctx, S.vadd(z, combine(eps_bar[k], ric.columns(k))))
    Pdot = [S.symmetric(ctx, lambda i, j: L[i][j] - Xk[i][j] - Xk[j][i]) for L, Xk in zip(Ldot, Xs)]
    Cbar = []
    for k in range(chain.n):
        w = S.bind(ctx, S.vadd(S.matvec(Pdot[k], ric.tau_bar_star(k, Vplus[k])), S.matvec(ric.P[k], A[k])))
        Cbar.append([ctx.bind(e - S.vdot(h, w)) for e, h in zip(eps_bar[k], chain.H[k])])
    return Cbar, Pdot, etas


def coriolis_nu(ctx, chain, X, ric, qd):
    """C(theta, nu) of nu_dot + C(theta, nu) = eps (Algorithm 7.1), for the rates qd = l* nu."""
    if all(len(H) == 1 for H in chain.H):
        return scatter(chain, _sweep(ctx, chain, X, ric, qd, normalized=True)[0])
    Cbar, Pdot, eta = _cbar_by_definition(ctx, chain, X, ric, qd)
    return scatter(chain, [_normalized_block(ctx, chain, ric, k, Cbar[k], Pdot[k], eta[k]) for k in range(chain.n)])


def coriolis_eta(ctx, chain, X, ric, qd):
    """Cbar(theta, eta) of D eta_dot + Cbar(theta, eta) = eps_bar (Algorithm 7.10), for the rates qd."""
    if any(len(H) > 1 for H in chain.H):
        return scatter(chain, _cbar_by_definition(ctx, chain, X, ric, qd)[0])
    return scatter(chain, _sweep(ctx, chain, X, ric, qd, normalized=False)[0])
