"""The numeric twin: every function of a generated module, evaluated by running the recursions
on numpy arrays. q has shape (..., nq), the other arguments (..., nv) (any leading batch shape);
results (..., nv), (..., nv, nv) for matrices. Joint order is the model's (depth first from the
base, model.py). `integrate`, `difference` and `neutral` move configurations on the joints' Lie groups.

A function with several outputs (diagonalized_forward_dynamics) returns a tuple of arrays.

This is the reference the generated code is compared with (`symdyn compare`); Pinocchio is the
independent one.
"""
import numpy as np

from . import lie
from .chain import Chain
from .functions import FUNCTIONS
from .scalar import NUMERIC


def _vector(values, shape):
    return np.stack([np.broadcast_to(np.asarray(v, dtype=float), shape) for v in values], axis=-1)


def _array(result, shape_kind, shape):
    if shape_kind == "vector":
        return _vector(result, shape)
    return np.stack([_vector(row, shape) for row in result], axis=-2)


class Engine:
    """Numeric evaluation of every symdyn function for one model (optionally other inertial parameters)."""

    def __init__(self, model, params=None):
        self.model, self.n, self.nq = model, model.nv, model.nq
        if params is not None:
            params = np.asarray(params, dtype=float).reshape(len(model.bodies), 10).tolist()
        self.chain = Chain(NUMERIC, model, params)
        self.DOF, self.NQ, self.NV, self.JOINT_NAMES = model.nv, model.nq, model.nv, model.joint_names
        for fn in FUNCTIONS:
            setattr(self, fn.name, self._bind(fn))

    def _evaluate(self, trace, shape_kind, *arrays):
        arrays = [np.asarray(a, dtype=float) for a in arrays]
        for a, size in zip(arrays, [self.nq] + [self.n] * (len(arrays) - 1)):
            if a.shape[-1:] != (size,):
                raise ValueError(f"expected an array of shape (..., {size}), got {a.shape}")
        shape = np.broadcast_shapes(*(a.shape[:-1] for a in arrays))
        q, *others = [[a[..., i] for i in range(a.shape[-1])] for a in arrays]
        result = trace(NUMERIC, self.chain, self.chain.transforms(q), *others)
        if isinstance(shape_kind, tuple):
            return tuple(_array(r, kind, shape) for r, kind in zip(result, shape_kind))
        return _array(result, shape_kind, shape)

    def _bind(self, fn):
        def call(*arrays):
            if len(arrays) != len(fn.args):
                raise TypeError(f"{fn.name}({', '.join(fn.args)}) takes {len(fn.args)} arguments")
            return self._evaluate(fn.trace, fn.shape, *arrays)
        call.__name__, call.__doc__ = fn.name, fn.doc
        return call

    def integrate(self, q, v, dt=1.0):
        """The configuration reached from q with the constant velocity v during dt (pinocchio.integrate)."""
        return lie.integrate(self.model, q, v, dt)

    def difference(self, q0, q1):
        """The velocity that integrates q0 to q1 in unit time (pinocchio.difference)."""
        return lie.difference(self.model, q0, q1)

    def neutral(self):
        """The reference configuration: zero angles and offsets, identity quaternions."""
        return lie.neutral(self.model)
