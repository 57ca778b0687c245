"""The two scalar worlds every recursion runs in.

A recursion never computes `sin`, `sqrt` or a fresh intermediate directly: it asks its context.
`Numeric` evaluates on floats or numpy arrays of shape (...) (a batch of states); `Tape` (in
`symdyn.codegen.tape`) records a straight-line program on symbols. Same recursion, two uses
(Pinocchio's one-algorithm-for-every-scalar, spatial_v2's ID.m on numbers and symbols).
"""
import numpy as np


class Numeric:
    """Evaluate on floats / numpy arrays; binding is the identity."""

    symbolic = False

    @staticmethod
    def bind(x):
        return x

    @staticmethod
    def divisor(x):
        """x, about to be divided by: an exact zero divides as numpy does (inf or nan, a warning)."""
        return np.float64(x) if isinstance(x, (int, float)) and x == 0 else x

    @staticmethod
    def const(x):
        return float(x)

    sin = staticmethod(np.sin)
    cos = staticmethod(np.cos)
    sqrt = staticmethod(np.sqrt)
    sign = staticmethod(np.sign)
    tanh = staticmethod(np.tanh)


NUMERIC = Numeric()
