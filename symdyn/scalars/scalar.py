"""The two scalar worlds every recursion runs in.

A recursion never computes `sin`, `sqrt` or a fresh intermediate directly: it asks its context.
`Numeric` evaluates on floats or numpy arrays of shape (...) (a batch of states); `Tape` (in
`symdyn.codegen.tape`) records a straight-line program on symbols. Same recursion, two uses
(Pinocchio's one-algorithm-for-every-scalar, spatial_v2's ID.m on numbers and symbols).
"""
import numpy as np


# Two tests of zero, for two questions (the recursions skip a term on either):
def literal_zero(x):
    """The int 0 a recursion writes for an absent term: decided by the program, never by a value, so the
    numeric engine multiplies whatever the generated code multiplies (a computed 0.0 times inf is nan in both)."""
    return type(x) is int and x == 0


def exact_zero(x):
    """A number equal to zero: a literal or a folded symbolic number (a model parameter, a tangent that
    need not be carried), never a symbol, a dual or a batch of values."""
    if isinstance(x, (int, float)):
        return x == 0
    return getattr(x, "is_Number", False) is True and x.is_zero is True       # 0.0 == 0 is False in symengine


class Numeric:
    """Evaluate on floats / numpy arrays; binding is the identity."""

    symbolic = False

    @staticmethod
    def bind(x):
        return x

    @staticmethod
    def divisor(x):
        """x, about to be divided by: an exact zero divides as numpy does (inf or nan, a warning)."""
        return np.float64(x) if exact_zero(x) else x

    @staticmethod
    def const(x):
        return float(x)

    sin = staticmethod(np.sin)
    cos = staticmethod(np.cos)
    sqrt = staticmethod(np.sqrt)
    sign = staticmethod(np.sign)
    tanh = staticmethod(np.tanh)


NUMERIC = Numeric()
