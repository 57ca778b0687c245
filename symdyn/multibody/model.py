"""The robot model: a frozen description of a fixed-base kinematic tree.

Joints are numbered 0..n-1 depth first from the base, the joints below a link in file order
(URDF: Pinocchio's order, by name), so every joint comes after its parent and each subtree is a
contiguous range; a chain is numbered base to tip. The papers number from tip to base; the
recursions say "inward" (tip to base, the papers' k = 1..N) and "outward".
"""
import math
from dataclasses import dataclass, replace
from typing import Tuple

from .joints import JOINT_TYPES

Vec3 = Tuple[float, float, float]
Mat3 = Tuple[Vec3, Vec3, Vec3]

#: order of a link's ten inertial parameters (Pinocchio's dynamic parameters):
#: mass, first moment m*c, inertia about the link origin (not the COM)
PARAMETER_NAMES = ("m", "mx", "my", "mz", "Ixx", "Ixy", "Iyy", "Ixz", "Iyz", "Izz")
#: order of a joint's four friction and rotor parameters, after all the bodies' (symdyn.recursions.friction):
#: viscous Fv, Coulomb Fc, offset Fo, armature (rotor inertia) Ia
JOINT_PARAMETER_NAMES = ("Fv", "Fc", "Fo", "Ia")


@dataclass(frozen=True)
class Joint:
    name: str
    type: str            # a key of joints.JOINT_TYPES
    parent: int          # index of the parent joint's body, -1 for the fixed base
    rotation: Mat3       # parent_R_k at q = 0
    offset: Vec3         # O_k in the parent frame at q = 0
    axis: Vec3           # unit axis in frame k (0, 0, 0 for joints without an axis)
    damping: float = 0.0         # viscous friction Fv (N m s/rad or N s/m), URDF <dynamics damping>
    friction: float = 0.0        # Coulomb friction Fc, URDF <dynamics friction>
    friction_offset: float = 0.0  # constant offset Fo of the friction torque
    armature: float = 0.0        # rotor inertia Ia reflected to the joint (added to M's diagonal)
    stiffness: float = 0.0       # spring K: the joint force K (q - springref) (MJCF stiffness); not a parameter
    springref: float = 0.0       # the spring's rest coordinate (MJCF springref)

    @property
    def kind(self):
        return JOINT_TYPES[self.type]


@dataclass(frozen=True)
class Body:
    name: str
    params: Tuple[float, ...]   # PARAMETER_NAMES, about the link origin, in the link frame
    gravcomp: Tuple[float, ...] = ()   # (m, mx, my, mz) held up against gravity (MJCF gravcomp): () for none

    @property
    def mass(self):
        return self.params[0]


@dataclass(frozen=True)
class Frame:
    """A named frame fixed to a body: every link of the file (the links merged into a body by
    fixed joints included: tool0, panda_hand, feet), every joint, and the base link.

    kind: "link", "joint" (a moving joint: its frame is its child link's) or "fixed-joint" (a
    fixed joint: at its child link's frame). parent: the moving body it is fixed to (the index
    of the joint that moves it), -1 for the fixed base. rotation, translation: the frame in that
    body's frame (or the base link's), p_body = rotation p_frame + translation, as Pinocchio's
    frame placements."""
    name: str
    kind: str
    parent: int
    rotation: Mat3
    translation: Vec3
    leaf: bool = False   # at a moving link without child links (end effector, foot): links selected by default


@dataclass(frozen=True)
class Mimic:
    """A joint that follows another: q[joint] = multiplier * q[master] + offset (URDF <mimic>).

    It keeps its body in the tree but owns no coordinate: the model's q, v and every generated
    function are in the reduced coordinates (Pinocchio's buildModel(..., mimic=True)); symdyn.recursions.mimic."""
    joint: int           # index of the mimicking joint (1 DoF)
    master: int          # index of the joint it follows (1 DoF, not itself a mimic)
    multiplier: float = 1.0
    offset: float = 0.0


@dataclass(frozen=True)
class Provenance:
    """Where a Model comes from and what the run did to it: not physics. The generated files' header
    and manifest, the CLI's warnings and the oracles (which reread the file) read it."""
    path: str = ""               # the description file
    digest: str = ""             # sha256 of the description file
    source: str = ""             # where the data come from (free text)
    snapped: int = 0             # joint rotations snapped to right angles (snap_right_angles)
    selection: str = ""          # locked joints, root and tip (symdyn.readers.selection.Selection.describe)
    locked: Tuple[Tuple[str, float], ...] = ()   # (joint, value) made fixed by the selection
    cut: bool = False            # the selection dropped links (--root, --tip)
    warnings: Tuple[str, ...] = ()   # what the loader accepted with a warning, one line each
    joint_params: str = ""       # the joint-parameter file that overrode friction and armature (name, sha256)


@dataclass(frozen=True)
class Model:
    """The physics of a robot, and beside it (`provenance`) where it comes from."""
    name: str
    joints: Tuple[Joint, ...]
    bodies: Tuple[Body, ...]
    gravity: Vec3                # in the base frame
    frames: Tuple[Frame, ...] = ()   # every link and joint of the file, depth first (Frame)
    coulomb_smoothing: float = 0.0  # delta > 0: Coulomb friction Fc tanh(qd/delta) instead of Fc sign(qd)
    frame_selection: Tuple[str, ...] = ()   # the frames that get kinematics (FRAMES); () = the leaves
    mimic: Tuple[Mimic, ...] = ()   # joints that follow another: no coordinate of their own (reduced q, v)
    constraints: Tuple = ()      # contacts and loop closures (symdyn.multibody.constraints.Constraint)
    actuated: Tuple[str, ...] = ()   # the independent joints of closed loops (symdyn.recursions.loop_closure)
    conventions: str = "pinocchio"   # the coordinates of q, v and the results: "pinocchio" | "mujoco" (symdyn.conventions)
    reference: Tuple[float, ...] = ()   # neutral() in the model's q (MJCF: qpos0); () = each joint's neutral
    provenance: Provenance = Provenance()   # part of equality and hash: caches per model stay per file

    def with_provenance(self, **changes):
        """The same physics with the provenance's fields `changes` changed."""
        return replace(self, provenance=replace(self.provenance, **changes))

    def children(self, k):
        """The joints whose parent is joint k (-1: the fixed base), in order."""
        return tuple(i for i, j in enumerate(self.joints) if j.parent == k)

    def frame(self, name, kind="link"):
        """The Frame of a link (or, with kind="joint" / "fixed-joint", of a joint) named `name`."""
        for f in self.frames:
            if f.name == name and f.kind == kind:
                return f
        raise KeyError(f"no {kind} frame named {name!r}")

    @property
    def tree_nq(self):
        """Size of the configuration of every joint of the tree, mimic joints included (symdyn.multibody.chain)."""
        return sum(j.kind.nq for j in self.joints)

    @property
    def tree_nv(self):
        return sum(j.kind.nv for j in self.joints)

    @property
    def tree_q_slices(self):
        """Indices of each joint's entries of the tree's configuration."""
        return _slices([j.kind.nq for j in self.joints])

    @property
    def tree_v_slices(self):
        return _slices([j.kind.nv for j in self.joints])

    @property
    def mimicking(self):
        """Indices of the joints that follow another (no coordinate of their own)."""
        return frozenset(m.joint for m in self.mimic)

    @property
    def nq(self):
        """Size of a configuration q (the independent coordinates: mimic joints have none)."""
        follow = self.mimicking
        return sum(j.kind.nq for k, j in enumerate(self.joints) if k not in follow)

    @property
    def nv(self):
        """Size of a velocity, acceleration or force vector: the degrees of freedom."""
        follow = self.mimicking
        return sum(j.kind.nv for k, j in enumerate(self.joints) if k not in follow)

    @property
    def dof(self):
        return self.nv

    @property
    def q_slices(self):
        """Indices of each joint's entries of q (empty for a mimic joint)."""
        follow = self.mimicking
        return _slices([0 if k in follow else j.kind.nq for k, j in enumerate(self.joints)])

    @property
    def v_slices(self):
        """Indices of each joint's entries of a velocity-sized vector (empty for a mimic joint)."""
        follow = self.mimicking
        return _slices([0 if k in follow else j.kind.nv for k, j in enumerate(self.joints)])

    @property
    def floating(self):
        """Is the root a free-flyer?"""
        return bool(self.joints) and self.joints[0].kind.nv == 6

    @property
    def joint_names(self):
        """The joints that own coordinates, in the order of q and v."""
        follow = self.mimicking
        return tuple(j.name for k, j in enumerate(self.joints) if k not in follow)

    @property
    def parameters(self):
        """The standard parameters: 10 per body (PARAMETER_NAMES), then 4 per joint (JOINT_PARAMETER_NAMES)."""
        return tuple(x for b in self.bodies for x in b.params) + tuple(
            x for j in self.joints for x in (j.damping, j.friction, j.friction_offset, j.armature))

    @property
    def parameter_names(self):
        return tuple(f"{b.name}.{p}" for b in self.bodies for p in PARAMETER_NAMES) + tuple(
            f"{j.name}.{p}" for j in self.joints for p in JOINT_PARAMETER_NAMES)

    @property
    def kinematic_frames(self):
        """The frames of the generated kinematics (FRAMES), in order: the selection, else the leaves."""
        if self.frame_selection:
            return tuple(self.named_frame(name) for name in self.frame_selection)
        return tuple(f for f in self.frames if f.leaf and f.kind == "link")

    def named_frame(self, name):
        """The frame called `name`: a link's, else a joint's."""
        same = [f for f in self.frames if f.name == name]
        if not same:
            raise KeyError(f"no frame named {name!r}")
        return next((f for f in same if f.kind == "link"), same[0])

    @property
    def total_mass(self):
        return sum(b.mass for b in self.bodies)


def _slices(sizes):
    out, start = [], 0
    for size in sizes:
        out.append(tuple(range(start, start + size)))
        start += size
    return tuple(out)


#: a joint offset entry smaller than this (m) is the rounding noise of a composed right angle (ANYmal C's
#: 4.9e-13 m from rpy 1.57079632679): --snap-right-angles makes it 0
OFFSET_NOISE = 1e-9


def snap_right_angles(model, tol=1e-4):
    """The model with each joint's origin rotation snapped to right angles where it is within `tol` of them,
    and offsets below OFFSET_NOISE made 0.

    URDF files often write pi/2 as 1.5708, a 3.7e-6 rad tilt: honouring it makes every joint
    rotation a dense 3x3 and the generated code larger. Opt-in, since it changes the model."""
    joints = []
    for j in model.joints:
        R = _right_angles(j.rotation, tol) or j.rotation
        offset = tuple(0.0 if abs(x) < OFFSET_NOISE else x for x in j.offset)
        joints.append(replace(j, rotation=R, offset=offset) if (R, offset) != (j.rotation, j.offset) else j)
    changed = sum(a is not b for a, b in zip(joints, model.joints))
    return replace(model, joints=tuple(joints)).with_provenance(snapped=changed)


def _right_angles(R, tol):
    """R snapped, or None: a signed permutation where every entry is within tol of 0 or +-1; else a turn about
    one coordinate axis times right angles where one entry is within tol of +-1 and the rest of its row and
    column within tol of 0 (a URDF's 1.5708 composed with a genuine angle, as ANYmal C's hips): that row and
    column exact, the other 2x2 block made orthonormal without trigonometry (same bytes everywhere)."""
    near = lambda x: abs(x - round(x)) <= tol
    if all(near(x) for row in R for x in row):
        return tuple(tuple(float(round(x)) + 0.0 for x in row) for row in R)
    for i, j in ((i, j) for i in range(3) for j in range(3) if abs(abs(R[i][j]) - 1) <= tol):
        rows, cols = [r for r in range(3) if r != i], [c for c in range(3) if c != j]
        if any(abs(R[i][c]) > tol for c in cols) or any(abs(R[r][j]) > tol for r in rows):
            return None
        if abs(R[i][j]) == 1 and not any(R[i][c] for c in cols) and not any(R[r][j] for r in rows):
            return None                                  # exact already (a genuine turn about axis j)
        (a, b), (c, d) = ([R[r][k] for k in cols] for r in rows)
        sign = 1.0 if a * d - b * c > 0 else -1.0        # a rotation or a reflection of the block
        x, y = (a + sign * d) / 2, (b - sign * c) / 2
        norm = math.sqrt(x * x + y * y)
        out = [[0.0] * 3 for _ in range(3)]
        out[i][j] = 1.0 if R[i][j] > 0 else -1.0
        (out[rows[0]][cols[0]], out[rows[0]][cols[1]]), (out[rows[1]][cols[0]], out[rows[1]][cols[1]]) = \
            (x / norm, y / norm), (-sign * y / norm, sign * x / norm)
        return tuple(tuple(v + 0.0 for v in row) for row in out)
    return None


def select_frames(model, names):
    """The model whose kinematics is generated for the frames `names` (in that order).
    ValueError naming the first unknown or repeated frame."""
    known = list(dict.fromkeys(f.name for f in model.frames))
    for i, name in enumerate(names):
        if name not in known:
            shown = ", ".join(known[:12]) + (", ..." if len(known) > 12 else "")
            raise ValueError(f"unknown frame '{name}' (frames: {shown})")
        if name in names[:i]:
            raise ValueError(f"frame '{name}' is selected twice")
    if not names:
        raise ValueError("no frame selected")
    return replace(model, frame_selection=tuple(names))
