"""Pinocchio as the independent oracle: the same Model rebuilt as a pinocchio.Model."""
from symdyn.oracle.pinocchio import pinocchio_functions, pinocchio_model

to_pinocchio = pinocchio_model


class Pinocchio:
    """The functions of a generated module, computed by Pinocchio, one state at a time."""

    def __init__(self, pmodel):
        for name, fn in pinocchio_functions(pmodel).items():
            setattr(self, name, fn)
