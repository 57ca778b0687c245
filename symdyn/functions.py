"""The function set of a generated module, defined once for the numeric engine and the generator.

Each function is a trace: given a context, the robot's Chain, the transforms X(q) and the other
input vectors, it runs the recursions and returns a vector or a matrix of scalars, or, for a function
with several outputs (shape a tuple), a tuple of them.
"""
from dataclasses import dataclass
from typing import Callable, Tuple

from . import coriolis_matrix as _cm
from . import coriolis_nu as _cn
from . import crba, diagonalized_dynamics, innovations, kalman_smoother, minverse, rnea, udu
from .riccati import Riccati


@dataclass(frozen=True)
class Function:
    name: str
    args: Tuple[str, ...]        # "q" first, shape (..., nq); the others (..., nv)
    shape: object                # "vector" (..., nv) or "matrix" (..., nv, nv); a tuple of them: several outputs
    trace: Callable
    doc: str
    gravity: bool = False        # does the result include gravity?

    @property
    def shapes(self):
        """One shape per output."""
        return self.shape if isinstance(self.shape, tuple) else (self.shape,)


def _zeros(chain):
    return [0] * chain.nv


def _diagonalized(fn):
    """A trace that needs the Riccati quantities."""
    return lambda ctx, chain, X, *v: fn(ctx, chain, X, Riccati(ctx, chain, X), *v)


FUNCTIONS = (
    Function("inverse_dynamics", ("q", "qd", "qdd"), "vector",
             lambda ctx, chain, X, qd, qdd: rnea.inverse_dynamics(ctx, chain, X, qd, qdd),
             "Joint forces tau = M(q) qdd + C(q, qd) qd + g(q) (recursive Newton-Euler).", gravity=True),
    Function("mass_matrix", ("q",), "matrix",
             lambda ctx, chain, X: crba.mass_matrix(ctx, chain, X),
             "Joint-space mass matrix M(q), symmetric (composite bodies, Rodriguez 1987 eq. 32)."),
    Function("mass_matrix_inverse", ("q",), "matrix",
             _diagonalized(lambda ctx, chain, X, ric: minverse.mass_matrix_inverse(ctx, chain, X, ric)),
             "M(q)^-1 from its explicit elements (Rodriguez 1987, Section X, eq. 83): no linear solve."),
    Function("forward_dynamics", ("q", "qd", "tau"), "vector",
             _diagonalized(lambda ctx, chain, X, ric, qd, tau: kalman_smoother.forward_dynamics(ctx, chain, X, ric, qd, tau)),
             "Joint accelerations qdd = M^-1 (tau - C(q, qd) qd - g(q)) (Kalman filter, Bryson-Frazier smoother).",
             gravity=True),
    Function("gravity", ("q",), "vector",
             lambda ctx, chain, X: rnea.inverse_dynamics(ctx, chain, X, _zeros(chain), _zeros(chain)),
             "Generalized gravity g(q): the joint forces that hold the arm still.", gravity=True),
    Function("coriolis_matrix", ("q", "qd"), "matrix",
             lambda ctx, chain, X, qd: _cm.coriolis_matrix(ctx, chain, X, qd),
             "Coriolis matrix C(q, qd) in Christoffel form: C qd = velocity products, M_dot - 2C skew."),
    Function("nonlinear_effects", ("q", "qd"), "vector",
             lambda ctx, chain, X, qd: rnea.inverse_dynamics(ctx, chain, X, qd, _zeros(chain)),
             "Bias forces C(q, qd) qd + g(q) (inverse dynamics at zero acceleration).", gravity=True),
    Function("articulated_inertia", ("q",), "vector",
             _diagonalized(lambda ctx, chain, X, ric: [d for k in range(chain.n) for d in ric.d(k)]),
             "D(k) = H P H*: articulated inertia about each joint axis (Riccati recursion); D = diag of M's UDU^T."),
    Function("innovations_factor", ("q",), "matrix",
             _diagonalized(lambda ctx, chain, X, ric: innovations.innovations_factor(ctx, chain, X, ric)),
             "m = [I + H phi K] D^1/2, with M = m m* (upper triangular: a joint comes after its parent)."),
    Function("innovations_factor_inverse", ("q",), "matrix",
             _diagonalized(lambda ctx, chain, X, ric: innovations.innovations_factor_inverse(ctx, chain, X, ric)),
             "l = m^-1 = D^-1/2 [I - H psi K], with M^-1 = l* l."),
    Function("total_rates", ("q", "qd"), "vector",
             _diagonalized(lambda ctx, chain, X, ric, qd: innovations.total_rates(ctx, chain, X, ric, qd)),
             "Total joint rates nu = m* qd (kinetic energy = nu . nu / 2)."),
    Function("joint_rates", ("q", "nu"), "vector",
             _diagonalized(lambda ctx, chain, X, ric, nu: innovations.joint_rates(ctx, chain, X, ric, nu)),
             "Joint rates qd = l* nu (inverse of total_rates)."),
    Function("working_moments", ("q", "tau"), "vector",
             _diagonalized(lambda ctx, chain, X, ric, tau: innovations.working_moments(ctx, chain, X, ric, tau)),
             "Working moments eps = l tau. Gravity is not included: with gravity, pass tau - gravity(q)."),
    Function("applied_moments", ("q", "eps"), "vector",
             _diagonalized(lambda ctx, chain, X, ric, eps: innovations.applied_moments(ctx, chain, X, ric, eps)),
             "Joint forces tau = m eps (inverse of working_moments)."),
    Function("coriolis_nu", ("q", "nu"), "vector",
             _diagonalized(lambda ctx, chain, X, ric, nu: _cn.coriolis_nu(
                 ctx, chain, X, ric, innovations.joint_rates(ctx, chain, X, ric, nu))),
             "C(theta, nu) of the diagonalized equations nu_dot + C(theta, nu) = l (tau - g(q)) "
             "(Jain & Rodriguez, Alg. 7.1); nu . C(theta, nu) = 0."),
    Function("coriolis_eta", ("q", "eta"), "vector",
             _diagonalized(lambda ctx, chain, X, ric, eta: _cn.coriolis_eta(
                 ctx, chain, X, ric, diagonalized_dynamics.rates_from_eta(ctx, chain, X, ric, eta))),
             "Cbar(theta, eta) of the un-normalized equations D eta_dot + Cbar(theta, eta) = eps_bar, "
             "eta = D^-1/2 nu, eps_bar = D^1/2 l (tau - g(q)) (Jain & Rodriguez, Lemma 7.3, Alg. 7.10)."),
    Function("diagonalized_forward_dynamics", ("q", "nu", "tau"), ("vector", "vector"),
             _diagonalized(lambda ctx, chain, X, ric, nu, tau: diagonalized_dynamics.forward_dynamics(
                 ctx, chain, X, ric, nu, tau)),
             "(qd, nu_dot): qd = l* nu and nu_dot = l (tau - g(q)) - C(theta, nu), one Riccati recursion and "
             "two sweeps (Jain & Rodriguez, Alg. 8.1).", gravity=True),
    Function("udu_factor", ("q",), "matrix",
             _diagonalized(lambda ctx, chain, X, ric: udu.udu_factor(ctx, chain, X, ric)),
             "U, unit upper triangular, with M = U diag(d) U^T and d = articulated_inertia(q) (Saha 1997)."),
)

BY_NAME = {f.name: f for f in FUNCTIONS}
