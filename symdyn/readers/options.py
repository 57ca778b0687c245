"""How to load a robot file: one frozen value from the command line to the readers."""
from dataclasses import dataclass, fields
from typing import Optional, Tuple


@dataclass(frozen=True)
class LoadOptions:
    """Every choice `load_robot` takes besides the file (see its doc for each field)."""
    snap_right_angles: bool = False
    selection: Optional[object] = None          # symdyn.readers.selection.Selection
    strict: bool = False
    allow_nonphysical_inertia: bool = False
    floating_base: bool = False
    joint_params: Optional[str] = None          # a joint-parameter file
    frames: Optional[Tuple[str, ...]] = None    # the frames that get kinematics; None: the leaves
    mimic: str = "reduced"                      # or "independent"
    contacts: Optional[object] = None           # "FRAME[:3d|:6d],...", or a list of those or of Constraints
    conventions: Optional[str] = None           # "pinocchio" or "mujoco"; None: the file's

    @classmethod
    def of(cls, options=None, **changes):
        """`options` (default: the defaults) with the named fields changed; TypeError for an unknown name."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(changes) - known)
        if unknown:
            raise TypeError(f"unknown load option {unknown[0]!r}")
        base = options if options is not None else cls()
        return cls(**{**{name: getattr(base, name) for name in known}, **changes})
