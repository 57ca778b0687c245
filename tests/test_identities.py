"""The identities of docs/algorithms.md on random chains and random trees: general axes, mixed revolute and
prismatic joints, full inertias; trees with branches, fixed joints and fixed subtrees."""
import numpy as np
import pytest

import symdyn
from conftest import random_states, relerr
from random_chain import random_chain, random_tree

CHAINS = [(1, 1, "RP", False), (2, 2, "P", False), (4, 3, "RP", False), (6, 4, "RP", False), (7, 5, "R", False),
          (5, 6, "P", False), (6, 7, "RP", True), (7, 8, "R", True)]
#: trees: (moving joints, seed, joint kinds, aligned axes, branching factor)
TREES = [(5, 1, "RP", False, 1.5), (8, 2, "RP", False, 3.0), (9, 3, "R", True, 2.0), (7, 4, "P", False, 2.0),
         (10, 5, "RP", True, 1.2)]
MODELS = ([("chain", c) for c in CHAINS] + [("tree", t) for t in TREES])
IDS = ([f"n{n}-{kinds}-{seed}{'-aligned' if aligned else ''}" for n, seed, kinds, aligned in CHAINS] +
       [f"tree-n{n}-{kinds}-{seed}-bf{bf}{'-aligned' if aligned else ''}" for n, seed, kinds, aligned, bf in TREES])


def random_model(kind, spec):
    if kind == "chain":
        return random_chain(*spec)
    n, seed, kinds, aligned, bf = spec
    return random_tree(n, seed, kinds, aligned, branching=bf)


@pytest.fixture(params=MODELS, ids=IDS)
def engine(request):
    return symdyn.Engine(random_model(*request.param))


@pytest.mark.parametrize("spec", TREES, ids=IDS[len(CHAINS):])
def test_random_trees_branch(spec):
    """The tree fixtures are trees: numbered depth first (parents first, each subtree contiguous), with
    a joint of several children, and fixed links merged."""
    model = random_model("tree", spec)
    parents = [j.parent for j in model.joints]
    assert all(p < k for k, p in enumerate(parents))
    for k in range(model.dof):                       # depth first: the subtree of k is k+1 .. k+size
        below = [i for i in range(k + 1, model.dof) if k in _ancestors(parents, i)]
        assert below == list(range(k + 1, k + 1 + len(below)))
    assert max(parents.count(p) for p in set(parents) if p >= 0) > 1     # a moving joint with several children


def _ancestors(parents, i):
    out = []
    while parents[i] >= 0:
        i = parents[i]
        out.append(i)
    return out


def test_mass_matrix_and_its_inverse(engine):
    q, _, _ = random_states(engine.n, 10)
    M, Mi = engine.mass_matrix(q), engine.mass_matrix_inverse(q)
    eye = np.broadcast_to(np.eye(engine.n), M.shape)
    assert relerr(M @ Mi, eye) < 1e-10
    assert relerr(M, np.swapaxes(M, -1, -2)) < 1e-14
    assert np.all(np.linalg.eigvalsh(M) > 0)


def test_innovations_factors(engine):
    q, qd, tau = random_states(engine.n, 10)
    m, ell, M = engine.innovations_factor(q), engine.innovations_factor_inverse(q), engine.mass_matrix(q)
    mT = np.swapaxes(m, -1, -2)
    assert relerr(m @ mT, M) < 1e-10                                   # M = m m*
    assert relerr(ell @ m, np.broadcast_to(np.eye(engine.n), M.shape)) < 1e-10
    assert relerr(np.swapaxes(ell, -1, -2) @ ell, engine.mass_matrix_inverse(q)) < 1e-10
    assert np.allclose(np.tril(m, -1), 0)                                # upper triangular, base to tip
    assert relerr(np.diagonal(m, axis1=-2, axis2=-1) ** 2, engine.articulated_inertia(q)) < 1e-10
    # the four recursions equal the matrices and invert each other
    nu = engine.total_rates(q, qd)
    assert relerr(nu, np.einsum("...ji,...j->...i", m, qd)) < 1e-10
    assert relerr(engine.joint_rates(q, nu), qd) < 1e-10
    eps = engine.working_moments(q, tau)
    assert relerr(eps, np.einsum("...ij,...j->...i", ell, tau)) < 1e-10
    assert relerr(engine.applied_moments(q, eps), tau) < 1e-10


def test_saha_udut_is_the_innovations_factor(engine):
    """[I + H phi K] is the unit factor of M = U D U^T, unique, computed here by plain linear algebra."""
    q, _, _ = random_states(engine.n, 1)
    M = engine.mass_matrix(q[0])
    # UDU^T by reverse Gaussian elimination (Saha): Cholesky of the row/column-reversed matrix
    Lr = np.linalg.cholesky(M[::-1, ::-1])
    U = Lr[::-1, ::-1]
    D = np.diag(U) ** 2
    assert relerr(engine.articulated_inertia(q[0]), D) < 1e-10
    assert relerr(engine.innovations_factor(q[0]), U) < 1e-10


def test_forward_dynamics_inverts_inverse_dynamics(engine):
    q, qd, qdd = random_states(engine.n, 10)
    tau = engine.inverse_dynamics(q, qd, qdd)
    assert relerr(engine.forward_dynamics(q, qd, tau), qdd) < 1e-9
    M = engine.mass_matrix(q)
    assert relerr(tau, np.einsum("...ij,...j->...i", M, qdd) + engine.nonlinear_effects(q, qd)) < 1e-10


def _directional(f, q, v, h=1e-6):
    return (f(q + h * v) - f(q - h * v)) / (2 * h)


def test_coriolis_matrix(engine):
    q, qd, _ = random_states(engine.n, 5)
    C = engine.coriolis_matrix(q, qd)
    c = engine.nonlinear_effects(q, qd) - engine.gravity(q)
    assert relerr(np.einsum("...ij,...j->...i", C, qd), c) < 1e-10      # C qd = velocity products
    Mdot = _directional(engine.mass_matrix, q, qd)
    S = Mdot - 2 * C
    assert relerr(S, -np.swapaxes(S, -1, -2)) < 1e-6                     # M_dot - 2C skew (finite differences)
    # Christoffel form: C(i,j) = sum_k Gamma_ijk qd_k from the partial derivatives of M
    n = engine.n
    for s in range(len(q)):
        dM = [_directional(engine.mass_matrix, q[s], np.eye(n)[k]) for k in range(n)]
        Gamma = 0.5 * (np.stack(dM, axis=-1) + np.stack(dM, axis=-1).transpose(0, 2, 1) - np.stack(dM, axis=0))
        assert relerr(C[s], Gamma @ qd[s]) < 1e-6


def test_coriolis_nu_against_its_definition(engine):
    """C(theta, nu) = l C(theta, qd) - m_dot* qd and nu . C = 0 (prismatic joints included)."""
    q, qd, _ = random_states(engine.n, 5)
    nu = engine.total_rates(q, qd)
    Cnu = engine.coriolis_nu(q, nu)
    assert np.abs(np.einsum("...i,...i->...", nu, Cnu)).max() < 1e-10 * max(1, np.abs(nu).max() * np.abs(Cnu).max())
    c = engine.nonlinear_effects(q, qd) - engine.gravity(q)
    ell = engine.innovations_factor_inverse(q)
    mdot = _directional(engine.innovations_factor, q, qd)
    definition = np.einsum("...ij,...j->...i", ell, c) - np.einsum("...ji,...j->...i", mdot, qd)
    assert relerr(Cnu, definition) < 1e-6


def test_coriolis_eta_against_its_definition(engine):
    """Cbar(theta, eta) = [I + H phi K]^-1 C(theta, qd) - D [I + H phi K]_dot* qd."""
    q, qd, _ = random_states(engine.n, 5)
    unit = lambda t: engine.innovations_factor(t) / np.sqrt(engine.articulated_inertia(t))[..., None, :]
    L, D = unit(q), engine.articulated_inertia(q)
    c = engine.nonlinear_effects(q, qd) - engine.gravity(q)
    Ldot = _directional(unit, q, qd)
    definition = np.linalg.solve(L, c[..., None])[..., 0] - D * np.einsum("...ji,...j->...i", Ldot, qd)
    eta = engine.total_rates(q, qd) / np.sqrt(D)
    assert relerr(engine.coriolis_eta(q, eta), definition) < 1e-6


def test_coriolis_eta_from_coriolis_nu_and_its_power(engine):
    """With nu = D^1/2 eta: Cbar = D^1/2 C(theta, nu) + D_dot eta / 2, and eta . Cbar = eta . D_dot eta / 2,
    so that d/dt (eta . D eta / 2) = eta . eps_bar (= qd . (tau - g), the power of the applied forces)."""
    q, qd, tau = random_states(engine.n, 5)
    D, nu = engine.articulated_inertia(q), engine.total_rates(q, qd)
    eta = nu / np.sqrt(D)
    Cbar = engine.coriolis_eta(q, eta)
    Ddot = _directional(engine.articulated_inertia, q, qd)
    assert relerr(Cbar, np.sqrt(D) * engine.coriolis_nu(q, nu) + 0.5 * Ddot * eta) < 1e-6
    scale = max(1.0, np.abs(eta).max() * np.abs(Cbar).max())
    assert np.abs((eta * Cbar).sum(-1) - 0.5 * (Ddot * eta * eta).sum(-1)).max() < 1e-6 * scale
    eps_bar = np.sqrt(D) * engine.working_moments(q, tau)
    assert relerr((eta * eps_bar).sum(-1), (qd * tau).sum(-1)) < 1e-10
    # the un-normalized equations give the same motion: D eta_dot = eps_bar - Cbar, nu = D^1/2 eta
    qd_, nu_dot = engine.diagonalized_forward_dynamics(q, nu, tau + engine.gravity(q))
    eta_dot = (eps_bar - Cbar) / D
    assert relerr(nu_dot, np.sqrt(D) * eta_dot + 0.5 * Ddot / np.sqrt(D) * eta) < 1e-6


def test_diagonalized_forward_dynamics(engine):
    """(qd, nu_dot) = (l* nu, l (tau - g) - C(theta, nu)), and nu_dot = d/dt (m* qd) along the motion
    that forward_dynamics gives for the same tau."""
    q, qd, tau = random_states(engine.n, 5)
    nu = engine.total_rates(q, qd)
    rates, nu_dot = engine.diagonalized_forward_dynamics(q, nu, tau)
    assert relerr(rates, qd) < 1e-10
    chained = engine.working_moments(q, tau - engine.gravity(q)) - engine.coriolis_nu(q, nu)
    assert relerr(nu_dot, chained) < 1e-10
    qdd = engine.forward_dynamics(q, qd, tau)
    m, mdot = engine.innovations_factor(q), _directional(engine.innovations_factor, q, qd)
    expected = np.einsum("...ji,...j->...i", m, qdd) + np.einsum("...ji,...j->...i", mdot, qd)
    assert relerr(nu_dot, expected) < 1e-6
    # power: d/dt (nu . nu / 2) = qd . (tau - g)
    assert relerr((nu * nu_dot).sum(-1), (qd * (tau - engine.gravity(q))).sum(-1)) < 1e-9


def test_udu_factor(engine):
    """Saha: M = U diag(d) U^T, U unit upper triangular (base to tip), d = articulated_inertia, U = m D^-1/2."""
    q, _, _ = random_states(engine.n, 10)
    U, d, M = engine.udu_factor(q), engine.articulated_inertia(q), engine.mass_matrix(q)
    assert relerr(U @ (d[..., :, None] * np.swapaxes(U, -1, -2)), M) < 1e-10
    assert np.array_equal(np.tril(U, -1), np.zeros_like(U))
    assert np.array_equal(np.diagonal(U, axis1=-2, axis2=-1), np.ones_like(d))
    assert relerr(U, engine.innovations_factor(q) / np.sqrt(d)[..., None, :]) < 1e-10


def test_saha_three_solves_are_forward_dynamics(engine):
    """U phi_hat = phi, D phi_tilde = phi_hat, U^T qdd = phi_tilde (docs/algorithms.md, Sec. 10), and the first
    solve is the working-moment recursion without its square roots: phi_hat = D^1/2 l phi."""
    q, qd, tau = random_states(engine.n, 5)
    U, d = engine.udu_factor(q), engine.articulated_inertia(q)
    phi = tau - engine.nonlinear_effects(q, qd)
    phi_hat = np.linalg.solve(U, phi[..., None])[..., 0]
    assert relerr(phi_hat, np.sqrt(d) * engine.working_moments(q, phi)) < 1e-10
    qdd = np.linalg.solve(np.swapaxes(U, -1, -2), (phi_hat / d)[..., None])[..., 0]
    assert relerr(qdd, engine.forward_dynamics(q, qd, tau)) < 1e-9


def test_kinetic_energy_is_half_nu_squared(engine):
    q, qd, _ = random_states(engine.n, 10)
    nu = engine.total_rates(q, qd)
    KE = 0.5 * np.einsum("...i,...ij,...j->...", qd, engine.mass_matrix(q), qd)
    assert relerr(0.5 * (nu * nu).sum(-1), KE) < 1e-10
