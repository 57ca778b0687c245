"""Kinematic constraints: contacts of a frame with the world, and loop closures between two frames.

One object for both (seed 003 Sec. 3, seed 004 Sec. 3.4): a Constraint holds a point (kind "3d":
3 rows, the points coincide, Pinocchio's CONTACT_3D) or a weld (kind "6d": 6 rows, the frames
coincide, CONTACT_6D) between `frame` and `other`, two frames of the model, each with a placement
(the constraint point and axes in that frame). `other` None is the world: a contact. A loop
closure is the same object with a second frame. A joint coupling (kind "joint": 1 row, MuJoCo's
<equality joint>) holds q[frame] = offset + scale q[other] between two 1-dof joints named by `frame`
and `other` (other None: q[frame] = offset): its row is e_frame - scale e_other, constant, and its
lambda is the generalized force on joint `frame` (-scale lambda on `other`).

Rows of the constraint Jacobian (Pinocchio's LOCAL_WORLD_ALIGNED, world axes): for a contact, the
rows of `frame`'s Jacobian at the point, [linear] ("3d") or [linear; angular] ("6d"); for a loop,
frame's minus other's. The constraint forces lambda are in the same axes: the force (and torque
about the point) the world, or `other`, exerts on `frame`: M qdd + b = tau + J^T lambda.

Sizes: nc, the number of constraint rows (3 per point, 6 per weld), names the size of lambda,
of the drift J_dot v and of the rows of J.
"""
from dataclasses import dataclass, replace
from typing import Optional, Tuple

from . import geometry as G

KINDS = {"3d": 3, "6d": 6}      # the kinds of contacts and loops (a joint coupling: 1 row)
#: the identity placement (rotation, translation)
IDENTITY = (G.IDENTITY, G.ZERO)


@dataclass(frozen=True)
class Constraint:
    kind: str                    # "3d" (point) or "6d" (weld)
    frame: str                   # a frame of the model (model.frames): link, joint or fixed-joint name
    other: Optional[str] = None  # the second frame; None: the world (a contact)
    placement: Tuple = IDENTITY          # (R, p) of the constraint point in `frame`
    other_placement: Tuple = IDENTITY    # (R, p) in `other` (in the world for a contact: its anchor)
    scale: float = 0.0           # kind "joint": q[frame] = offset + scale q[other]
    offset: float = 0.0

    @property
    def rows(self):
        return 1 if self.is_joint else KINDS[self.kind]

    @property
    def is_joint(self):
        return self.kind == "joint"

    @property
    def is_contact(self):
        return self.other is None and not self.is_joint

    def describe(self):
        """'FRAME:3d' for a contact, 'FRAME-OTHER:6d' for a loop closure, 'A-B:joint' or 'A:joint' for a
        joint coupling (headers, info)."""
        return f"{self.frame}{'' if self.other is None else '-' + self.other}:{self.kind}"

    def relation(self):
        """A joint coupling as an equation: 'q[A] = offset + scale q[B]'."""
        rest = f" {'-' if self.scale < 0 else '+'} {abs(self.scale):.12g} q[{self.other}]" if self.other else ""
        return f"q[{self.frame}] = {self.offset:.12g}{rest}"


def constraint_rows(constraints):
    """nc: the number of rows of the stacked constraints."""
    return sum(c.rows for c in constraints)


def point_frame(model, name, placement=IDENTITY):
    """The Frame of the constraint point: model frame `name` composed with `placement`, fixed to the
    same body (a Frame as frames.Placements takes them)."""
    f = model.named_frame(name)
    if placement == IDENTITY:
        return f
    R, p = G.compose((f.rotation, f.translation), placement)
    return replace(f, name=f"{name}@constraint", rotation=R, translation=p)


def constraint_points(model, constraints=None):
    """The distinct constraint points as Frames, and per constraint the index of its point on `frame`
    and on `other` (None: the world)."""
    constraints = model.constraints if constraints is None else constraints
    points, index, sides = [], {}, []
    for c in constraints:
        if c.is_joint:                 # no point: its row is constant
            sides.append((None, None))
            continue
        pair = []
        for name, placement in ((c.frame, c.placement), (c.other, c.other_placement)):
            if name is None:
                pair.append(None)
                continue
            key = (name, placement)
            if key not in index:
                index[key] = len(points)
                points.append(point_frame(model, name, placement))
            pair.append(index[key])
        sides.append(tuple(pair))
    return points, sides


def parse_contacts(text):
    """'FRAME[:3d|:6d],...' -> [Constraint]; ValueError (one line) for a bad item."""
    items = [x.strip() for x in (text.split(",") if isinstance(text, str) else text)]
    out = []
    for item in items:
        if not item:
            continue
        name, sep, kind = item.rpartition(":")
        if not sep or kind.lower() not in KINDS:
            name, kind = item, "3d"
        if not name:
            raise ValueError(f"contact {item!r}: no frame name")
        out.append(Constraint(kind.lower(), name))
    if not out:
        raise ValueError("no contact frame given")
    return out


def contacts_from_yaml(value):
    """The YAML `contacts:` key: a list of frame names, 'FRAME:6d' strings or {frame: F, type: 3d|6d}
    mappings -> [Constraint]; ValueError (one line) for anything else."""
    if not isinstance(value, list) or not value:
        raise ValueError("'contacts' must be a non-empty list of frames (FRAME, FRAME:6d or {frame: F, type: 6d})")
    out = []
    for i, item in enumerate(value):
        if isinstance(item, str):
            out += parse_contacts([item])
        elif isinstance(item, dict) and set(item) <= {"frame", "type"} and isinstance(item.get("frame"), str):
            kind = str(item.get("type", "3d")).lower()
            if kind not in KINDS:
                raise ValueError(f"contacts[{i}]: type must be 3d or 6d, got {str(item.get('type'))[:40]!r}")
            out.append(Constraint(kind, item["frame"]))
        else:
            raise ValueError(f"contacts[{i}]: expected a frame name or {{frame: F, type: 3d|6d}}")
    return out


def attach(model, constraints):
    """The model with `constraints` (checked: known frames, or 1-dof joints for a coupling, no repeat,
    not on the fixed base, the stacked Jacobian of full row rank somewhere); a contact frame joins the
    frames of the kinematics (FRAMES) if it is not there. ValueError (one line) for a bad set."""
    seen = set()
    for c in constraints:
        (_check_coupling if c.is_joint else _check_points)(model, c)
        key = (c.frame, c.other, c.is_joint)
        if key in seen:
            raise ValueError(f"constraint on '{c.frame}' given twice")
        seen.add(key)
    model = replace(model, constraints=tuple(model.constraints) + tuple(constraints))
    names = [f.name for f in model.kinematic_frames]
    missing = [c.frame for c in constraints if c.is_contact and c.frame not in names]
    if missing:
        model = replace(model, frame_selection=tuple(names + list(dict.fromkeys(missing))))
    _check_rank(model)
    return model


def _check_points(model, c):
    """A contact or loop: known frames, not both on the same body."""
    known = {f.name for f in model.frames}
    for name in (c.frame, c.other):
        if name is not None and name not in known:
            names = list(dict.fromkeys(f.name for f in model.frames))
            shown = ", ".join(names[:12]) + (", ..." if len(names) > 12 else "")
            raise ValueError(f"unknown frame '{name}' (frames: {shown})")
    body = model.named_frame(c.frame).parent
    other = -1 if c.other is None else model.named_frame(c.other).parent
    if body == other:
        where = "the fixed base" if body < 0 else f"the same body (joint '{model.joints[body].name}')"
        raise ValueError(f"constraint '{c.describe()}': both sides are on {where}: it constrains nothing")


def _check_coupling(model, c):
    """A joint coupling: two distinct 1-dof joints of the model (or one)."""
    joints = {j.name: j for j in model.joints}
    for name in (c.frame, c.other):
        if name is not None and (name not in joints or joints[name].kind.nv != 1):
            raise ValueError(f"constraint '{c.describe()}': '{name}' is not a 1-dof joint of the model")
    if c.frame == c.other:
        raise ValueError(f"constraint '{c.describe()}': a joint coupled to itself")


def joint_row(model, c):
    """A joint coupling's row of the constraint Jacobian: ((v index, coefficient), ...)."""
    index = {j.name: s[0] for j, s in zip(model.joints, model.tree_v_slices)}
    own = ((index[c.frame], 1.0),)
    return own if c.other is None or c.scale == 0 else own + ((index[c.other], -float(c.scale)),)


def _check_rank(model, samples=3, tol=1e-9):
    """A constraint set whose Jacobian loses rank at every configuration (e.g. more contacts than the
    robot can satisfy independently) makes J M^-1 J^T singular: refuse it. Checked at a few random
    configurations numerically (rank at one of them suffices)."""
    import numpy as np
    from ..engine import Engine
    rng = np.random.default_rng(1)
    engine = Engine(model)
    nc, nv = constraint_rows(model.constraints), model.nv
    if nc > nv:
        raise ValueError(f"the constraints have {nc} rows but the robot has {nv} degrees of freedom: "
                         "they are redundant at every configuration")
    for _ in range(samples):
        q = engine.integrate(engine.neutral(), rng.uniform(-1.5, 1.5, nv))
        s = np.linalg.svd(engine.constraint_jacobian(q), compute_uv=False)
        if s[-1] > tol * max(1.0, s[0]):
            return
    raise ValueError(f"the constraints ({', '.join(c.describe() for c in model.constraints)}) are redundant: "
                     "their Jacobian loses rank at every configuration tried")
