"""The numeric twin: every function of a generated module, evaluated by running the recursions
on numpy arrays. q has shape (..., nq), the other arguments (..., nv) (any leading batch shape);
results (..., nv), (..., nv, nv) for matrices. Joint order is the model's (depth first from the
base, model.py). `integrate`, `difference` and `neutral` move configurations on the joints' Lie groups.

A function with several outputs (diagonalized_forward_dynamics) returns a tuple of arrays.

This is the reference the generated code is compared with (`symdyn compare`); Pinocchio is the
independent one.
"""
import numpy as np

from .multibody import lie
from .multibody.chain import Tree
from .functions import (arg_dims, available_for, baumgarte_variant, fext_variant, flatten, for_model, nest, out_dims,
                        resolve, sizes)
from .scalars.scalar import NUMERIC


def _vector(values, shape):
    return np.stack([np.broadcast_to(np.asarray(v, dtype=float), shape) for v in values], axis=-1)


class Engine:
    """Numeric evaluation of every symdyn function for one model (optionally other parameters:
    10 per body, or the p of model.parameters with friction and armature)."""

    def __init__(self, model, params=None):
        self.model, self.n, self.nq = model, model.nv, model.nq
        if params is not None:
            params = np.asarray(params, dtype=float).ravel().tolist()
        self.chain = Tree(NUMERIC, model, params)
        self.PARAMETER_NAMES, self.PARAMETERS = model.parameter_names, np.array(model.parameters)
        self.DOF, self.NQ, self.NV, self.JOINT_NAMES = model.nv, model.nq, model.nv, model.joint_names
        self.FRAMES = tuple(f.name for f in model.kinematic_frames)
        self.CONSTRAINTS = tuple(c.describe() for c in model.constraints)
        self.ACTUATED = tuple(model.actuated)
        self._sizes = sizes(model)
        for fn in for_model(available_for(model), model):
            setattr(self, fn.name, self._bind(fn))

    def _evaluate(self, trace, dims, *arrays, args=None, multiple=False):
        """dims: the named sizes of each output; multiple: return a tuple of them."""
        args = args or ("q",) + ("qd",) * (len(arrays) - 1)
        args = args + ("qd",) * (len(arrays) - len(args))
        arrays = [np.asarray(a, dtype=float) for a in arrays]
        inputs, batch = [], []
        for a, name in zip(arrays, args):
            shape = resolve(arg_dims(name), self._sizes)
            if a.shape[a.ndim - len(shape):] != shape:
                raise ValueError(f"expected an array of shape (..., {', '.join(map(str, shape))}), got {a.shape}")
            batch.append(a.shape[:a.ndim - len(shape)])
            flat = a.reshape(a.shape[:a.ndim - len(shape)] + (-1,))
            inputs.append(nest([flat[..., i] for i in range(flat.shape[-1])], shape))
        batch = np.broadcast_shapes(*batch)
        X = self.chain.transforms(inputs.pop(0)) if args[0] == "q" else None
        result = trace(NUMERIC, self.chain, X, *inputs)
        parts = [_vector(flatten(part), batch).reshape(batch + resolve(d, self._sizes))
                 for part, d in zip(result if multiple else (result,), dims)]
        return tuple(parts) if multiple else parts[0]

    def _bind(self, fn):
        variant, stabilized = fext_variant(fn.name), baumgarte_variant(fn.name)

        def call(*arrays, f_ext=None, gains=None, error=None):
            if len(arrays) != len(fn.args):
                raise TypeError(f"{fn.name}({', '.join(fn.args)}) takes {len(fn.args)} arguments")
            if (gains is not None or error is not None) and stabilized:
                if gains is None:
                    raise TypeError(f"{fn.name}: error without gains (Kp, Kd)")
                error = np.zeros(self._sizes["nc"]) if error is None else error
                return getattr(self, stabilized)(*arrays, gains, error)
            if gains is not None or error is not None:
                raise TypeError(f"{fn.name} takes no gains")
            if f_ext is not None and variant:
                return getattr(self, variant)(*arrays, f_ext)
            if f_ext is not None:
                raise TypeError(f"{fn.name} takes no f_ext")
            return self._evaluate(fn.trace, out_dims(fn), *arrays, args=fn.args, multiple=isinstance(fn.shape, tuple))
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
