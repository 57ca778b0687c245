"""The numeric twin: every function of a generated module, evaluated by running the recursions
on numpy arrays. Arguments have shape (..., n) (any leading batch shape); so do the results,
(..., n, n) for matrices. Joint order is the model's (the user's, base to tip).

This is the reference the generated code is compared with (`symdyn compare`); Pinocchio is the
independent one.
"""
import numpy as np

from . import coriolis_matrix as _cm
from . import coriolis_nu as _cn
from . import crba, innovations, kalman_smoother, minverse, rnea
from .chain import Chain
from .riccati import Riccati
from .scalar import NUMERIC

FUNCTIONS = ("inverse_dynamics", "mass_matrix", "mass_matrix_inverse", "forward_dynamics", "gravity",
             "coriolis_matrix", "nonlinear_effects", "articulated_inertia", "innovations_factor",
             "innovations_factor_inverse", "total_rates", "joint_rates", "working_moments",
             "applied_moments", "coriolis_nu")


def _columns(x, n):
    x = np.asarray(x, dtype=float)
    if x.shape[-1:] != (n,):
        raise ValueError(f"expected an array of shape (..., {n}), got {x.shape}")
    return [x[..., i] for i in range(n)]


def _vector(values, shape):
    return np.stack([np.broadcast_to(np.asarray(v, dtype=float), shape) for v in values], axis=-1)


def _matrix(rows, shape):
    return np.stack([_vector(row, shape) for row in rows], axis=-2)


class Engine:
    """Numeric evaluation of every symdyn function for one model."""

    def __init__(self, model, params=None):
        self.model, self.n = model, model.dof
        self.chain = Chain(NUMERIC, model, params)
        self.DOF, self.JOINT_NAMES = model.dof, model.joint_names

    def _setup(self, *arrays):
        cols = [_columns(a, self.n) for a in arrays]
        shape = np.broadcast_shapes(*(np.shape(a)[:-1] for a in arrays))
        X = self.chain.transforms(cols[0])
        return shape, X, cols

    def inverse_dynamics(self, q, qd, qdd):
        shape, X, (_, v, a) = self._setup(q, qd, qdd)
        return _vector(rnea.inverse_dynamics(NUMERIC, self.chain, X, v, a), shape)

    def nonlinear_effects(self, q, qd):
        shape, X, (_, v) = self._setup(q, qd)
        return _vector(rnea.inverse_dynamics(NUMERIC, self.chain, X, v, [0.0] * self.n), shape)

    def gravity(self, q):
        shape, X, _ = self._setup(q)
        zero = [0.0] * self.n
        return _vector(rnea.inverse_dynamics(NUMERIC, self.chain, X, zero, zero), shape)

    def mass_matrix(self, q):
        shape, X, _ = self._setup(q)
        return _matrix(crba.mass_matrix(NUMERIC, self.chain, X), shape)

    def _riccati(self, q):
        shape, X, cols = self._setup(q)
        return shape, X, Riccati(NUMERIC, self.chain, X)

    def mass_matrix_inverse(self, q):
        shape, X, ric = self._riccati(q)
        return _matrix(minverse.mass_matrix_inverse(NUMERIC, self.chain, X, ric), shape)

    def forward_dynamics(self, q, qd, tau):
        shape, X, (_, v, t) = self._setup(q, qd, tau)
        ric = Riccati(NUMERIC, self.chain, X)
        return _vector(kalman_smoother.forward_dynamics(NUMERIC, self.chain, X, ric, v, t), shape)

    def coriolis_matrix(self, q, qd):
        shape, X, (_, v) = self._setup(q, qd)
        return _matrix(_cm.coriolis_matrix(NUMERIC, self.chain, X, v), shape)

    def articulated_inertia(self, q):
        shape, X, ric = self._riccati(q)
        return _vector(ric.D, shape)

    def innovations_factor(self, q):
        shape, X, ric = self._riccati(q)
        return _matrix(innovations.innovations_factor(NUMERIC, self.chain, X, ric), shape)

    def innovations_factor_inverse(self, q):
        shape, X, ric = self._riccati(q)
        return _matrix(innovations.innovations_factor_inverse(NUMERIC, self.chain, X, ric), shape)

    def _with_riccati(self, q, x):
        shape, X, (_, cols) = self._setup(q, x)
        return shape, X, Riccati(NUMERIC, self.chain, X), cols

    def total_rates(self, q, qd):
        shape, X, ric, v = self._with_riccati(q, qd)
        return _vector(innovations.total_rates(NUMERIC, self.chain, X, ric, v), shape)

    def joint_rates(self, q, nu):
        shape, X, ric, v = self._with_riccati(q, nu)
        return _vector(innovations.joint_rates(NUMERIC, self.chain, X, ric, v), shape)

    def working_moments(self, q, tau):
        shape, X, ric, t = self._with_riccati(q, tau)
        return _vector(innovations.working_moments(NUMERIC, self.chain, X, ric, t), shape)

    def applied_moments(self, q, eps):
        shape, X, ric, e = self._with_riccati(q, eps)
        return _vector(innovations.applied_moments(NUMERIC, self.chain, X, ric, e), shape)

    def coriolis_nu(self, q, nu):
        shape, X, ric, v = self._with_riccati(q, nu)
        qd = innovations.joint_rates(NUMERIC, self.chain, X, ric, v)
        return _vector(_cn.coriolis_nu(NUMERIC, self.chain, X, ric, qd), shape)

    def coriolis_eta(self, q, qd):
        """Cbar(theta, eta) of the un-normalized equations, given the joint rates qd."""
        shape, X, ric, v = self._with_riccati(q, qd)
        return _vector(_cn.coriolis_eta(NUMERIC, self.chain, X, ric, v), shape)
