"""The robot model: a frozen description of a fixed-base chain, in the user's joint order.

Joints are numbered 0..n-1 from base to tip, as written in the robot file. The papers number
from tip to base; the recursions say "inward" (tip to base, the papers' k = 1..N) and "outward".
"""
from dataclasses import dataclass
from typing import Tuple

from .joints import JOINT_TYPES

Vec3 = Tuple[float, float, float]
Mat3 = Tuple[Vec3, Vec3, Vec3]

#: order of a link's ten inertial parameters (Pinocchio's dynamic parameters):
#: mass, first moment m*c, inertia about the link origin (not the COM)
PARAMETER_NAMES = ("m", "mx", "my", "mz", "Ixx", "Ixy", "Iyy", "Ixz", "Iyz", "Izz")


@dataclass(frozen=True)
class Joint:
    name: str
    type: str            # "revolute" | "prismatic"
    parent: int          # index of the parent joint's body, -1 for the fixed base
    rotation: Mat3       # parent_R_k at q = 0
    offset: Vec3         # O_k in the parent frame at q = 0
    axis: Vec3           # unit axis in frame k

    @property
    def kind(self):
        return JOINT_TYPES[self.type]


@dataclass(frozen=True)
class Body:
    name: str
    params: Tuple[float, ...]   # PARAMETER_NAMES, about the link origin, in the link frame

    @property
    def mass(self):
        return self.params[0]


@dataclass(frozen=True)
class Model:
    name: str
    joints: Tuple[Joint, ...]
    bodies: Tuple[Body, ...]
    gravity: Vec3                # in the base frame
    source: str = ""             # where the data come from (free text)
    path: str = ""               # the description file
    digest: str = ""             # sha256 of the description file

    @property
    def dof(self):
        return len(self.joints)

    @property
    def joint_names(self):
        return tuple(j.name for j in self.joints)

    @property
    def total_mass(self):
        return sum(b.mass for b in self.bodies)
