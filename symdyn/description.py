"""From a description (the dictionary every input format is read into) to a validated Model.

Checks what no parser can: finite numbers, physical inertias, one connected tree without loops;
merges links attached by fixed joints into their moving ancestor's body.
"""
import math

import numpy as np

from .errors import RobotFileError
from .model import Body, Joint, Model

MOVING = ("revolute", "continuous", "prismatic")
DEFAULT_GRAVITY = (0.0, 0.0, -9.81)


class _Checker:
    """Field access with one-line errors that name the file and the element."""

    def __init__(self, path):
        self.path = path

    def fail(self, message):
        raise RobotFileError(self.path, message)

    def number(self, value, where):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            self.fail(f"{where} must be a number, got {value!r}")
        if not math.isfinite(value):
            self.fail(f"{where} must be finite, got {value!r}")
        return float(value)

    def vector(self, value, where, size=3):
        if not isinstance(value, (list, tuple)) or len(value) != size:
            self.fail(f"{where} must be a list of {size} numbers, got {value!r}")
        return np.array([self.number(v, where) for v in value])

    def mapping(self, value, where):
        if not isinstance(value, dict):
            self.fail(f"{where} must be a mapping, got {type(value).__name__}")
        return value

    def field(self, record, key, where):
        if key not in record:
            self.fail(f"{where}: missing field '{key}'")
        return record[key]

    def name(self, value, where):
        if not isinstance(value, str) or not value.strip():
            self.fail(f"{where} must be a non-empty string, got {value!r}")
        return value


def rpy_matrix(r, p, y):
    """URDF's roll-pitch-yaw: Rz(y) Ry(p) Rx(r)."""
    cr, sr, cp, sp, cy, sy = math.cos(r), math.sin(r), math.cos(p), math.sin(p), math.cos(y), math.sin(y)
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])


def _origin(chk, joint, where):
    origin = joint.get("origin", {}) or {}
    chk.mapping(origin, f"{where}: origin")
    xyz = chk.vector(origin.get("xyz", [0, 0, 0]), f"{where}: origin xyz")
    if "rotation" in origin:
        rows = origin["rotation"]
        if not isinstance(rows, (list, tuple)) or len(rows) != 3:
            chk.fail(f"{where}: origin rotation must be a 3x3 matrix")
        R = np.array([chk.vector(r, f"{where}: origin rotation row") for r in rows])
        if np.abs(R @ R.T - np.eye(3)).max() > 1e-6 or np.linalg.det(R) < 0:
            chk.fail(f"{where}: origin rotation is not a proper rotation matrix")
    else:
        R = rpy_matrix(*chk.vector(origin.get("rpy", [0, 0, 0]), f"{where}: origin rpy"))
    return R, xyz


def _link_params(chk, link, where):
    """(m, m c, J about the link origin) in the link frame, checked for physical consistency."""
    mass = chk.number(chk.field(link, "mass", where), f"{where}: mass")
    if mass < 0:
        chk.fail(f"{where}: mass must not be negative, got {mass!r}")
    com = chk.vector(link.get("com", [0, 0, 0]), f"{where}: com")
    inertia = chk.mapping(link.get("inertia", {}), f"{where}: inertia")
    known = ("ixx", "iyy", "izz", "ixy", "ixz", "iyz")
    for key in inertia:
        if key not in known:
            chk.fail(f"{where}: unknown inertia entry '{key}' (expected {', '.join(known)})")
    i = {k: chk.number(inertia.get(k, 0.0), f"{where}: inertia {k}") for k in known}
    Ic = np.array([[i["ixx"], i["ixy"], i["ixz"]], [i["ixy"], i["iyy"], i["iyz"]], [i["ixz"], i["iyz"], i["izz"]]])
    moments = np.linalg.eigvalsh(Ic)
    scale = max(abs(moments).max(), 1e-300)
    if moments.min() < -1e-9 * scale:
        chk.fail(f"{where}: inertia tensor is not positive semi-definite (principal moments {_fmt(moments)})")
    a, b, c = moments
    if a + b < c - 1e-9 * scale:
        chk.fail(f"{where}: inertia violates the triangle inequality (principal moments {_fmt(moments)})")
    if mass == 0 and scale > 1e-300 and moments.max() > 0:
        chk.fail(f"{where}: zero mass with a nonzero inertia tensor")
    return mass, com, Ic


def _fmt(values):
    return "[" + ", ".join(f"{v:.6g}" for v in values) + "]"


def _moved(R, p, mass, com, Ic):
    """Inertial parameters of a body given in a frame at (R, p), as 10-vector about the new origin."""
    c = R @ com + p
    J = R @ Ic @ R.T + mass * (c @ c * np.eye(3) - np.outer(c, c))
    return np.array([mass, *(mass * c), J[0, 0], J[0, 1], J[1, 1], J[0, 2], J[1, 2], J[2, 2]])


def _snap(x):
    """Fold rounding noise of rotation matrices (cos(pi/2) = 6e-17) into exact zeros and ones."""
    x = np.where(np.abs(x) < 1e-15, 0.0, x)
    return np.where(np.abs(np.abs(x) - 1.0) < 1e-15, np.sign(x), x)


def build_model(desc, path, digest=""):
    """Validate a description dictionary and build the Model (fixed joints merged)."""
    chk = _Checker(path)
    chk.mapping(desc, "robot description")
    name = chk.name(chk.field(desc, "name", "robot"), "robot name")
    gravity = chk.vector(desc.get("gravity", list(DEFAULT_GRAVITY)), "gravity")
    base = chk.name(desc.get("base", "base"), "base link name")
    links_in = chk.field(desc, "links", "robot")
    joints_in = chk.field(desc, "joints", "robot")
    if not isinstance(links_in, list) or not isinstance(joints_in, list):
        chk.fail("'links' and 'joints' must be lists")

    links = {}
    for i, link in enumerate(links_in):
        chk.mapping(link, f"link #{i + 1}")
        lname = chk.name(chk.field(link, "name", f"link #{i + 1}"), f"link #{i + 1} name")
        if lname in links or lname == base:
            chk.fail(f"duplicate link name '{lname}'")
        links[lname] = _link_params(chk, link, f"link '{lname}'")

    joints, child_of, children = {}, {}, {}
    for i, joint in enumerate(joints_in):
        chk.mapping(joint, f"joint #{i + 1}")
        jname = chk.name(chk.field(joint, "name", f"joint #{i + 1}"), f"joint #{i + 1} name")
        where = f"joint '{jname}'"
        if jname in joints:
            chk.fail(f"duplicate joint name '{jname}'")
        jtype = chk.field(joint, "type", where)
        if jtype not in MOVING + ("fixed",):
            if jtype in ("floating", "planar"):
                chk.fail(f"{where}: type '{jtype}' is not supported (fixed-base chains only)")
            chk.fail(f"{where}: unknown joint type {jtype!r} (expected revolute, continuous, prismatic or fixed)")
        parent = chk.name(chk.field(joint, "parent", where), f"{where}: parent")
        child = chk.name(chk.field(joint, "child", where), f"{where}: child")
        for role, lname in (("parent", parent), ("child", child)):
            if lname != base and lname not in links:
                chk.fail(f"{where}: {role} link '{lname}' is not defined")
        if child == base:
            chk.fail(f"{where}: the base link '{base}' cannot be a child (kinematic loop)")
        if child in child_of:
            chk.fail(f"{where}: link '{child}' already has parent joint '{child_of[child]}' (kinematic loop)")
        R, xyz = _origin(chk, joint, where)
        axis = None
        if jtype in MOVING:
            axis = chk.vector(joint.get("axis", [1, 0, 0]), f"{where}: axis")
            norm = np.linalg.norm(axis)
            if norm < 1e-9:
                chk.fail(f"{where}: axis has zero length")
            axis = axis / norm
        joints[jname] = (jtype, parent, child, R, xyz, axis)
        child_of[child] = jname
        children.setdefault(parent, []).append(jname)

    roots = [lname for lname in links if lname not in child_of]
    if roots:
        chk.fail(f"link '{roots[0]}' is not connected to the base '{base}' (several roots or a disconnected link)")
    return _merge(chk, name, desc, path, digest, gravity, base, links, joints, children)


def _merge(chk, name, desc, path, digest, gravity, base, links, joints, children):
    """Walk the tree from the base: moving joints make bodies, fixed joints merge into the owner."""
    out_joints, body_params, body_names = [], [], []
    # per link: (owning body index or -1 for base, R and p of the link frame in the owner frame)
    frame = {base: (-1, np.eye(3), np.zeros(3))}
    stack, seen = [base], {base}
    while stack:
        lname = stack.pop()
        owner, Ro, po = frame[lname]
        for jname in children.get(lname, []):
            jtype, _, child, R, xyz, axis = joints[jname]
            if child in seen:
                chk.fail(f"joint '{jname}': link '{child}' is reached twice (kinematic loop)")
            seen.add(child)
            Rc, pc = Ro @ R, Ro @ xyz + po
            if jtype == "fixed":
                frame[child] = (owner, Rc, pc)
                if owner >= 0:
                    body_params[owner] += _moved(Rc, pc, *links[child])
            else:
                out_joints.append(Joint(jname, "prismatic" if jtype == "prismatic" else "revolute", owner,
                                        tuple(map(tuple, _snap(Rc))), tuple(_snap(pc)), tuple(_snap(axis))))
                body_params.append(_moved(np.eye(3), np.zeros(3), *links[child]))
                body_names.append(child)
                frame[child] = (len(out_joints) - 1, np.eye(3), np.zeros(3))
            stack.append(child)
    if not out_joints:
        chk.fail("the robot has no moving joints")
    counts = {}
    for j in out_joints:
        counts[j.parent] = counts.get(j.parent, 0) + 1
    for parent, count in counts.items():
        if count > 1:
            where = f"link '{body_names[parent]}'" if parent >= 0 else f"the base '{base}'"
            chk.fail(f"{where} carries {count} moving branches: branching trees are not supported yet (chains only)")
    bodies = []
    for j, lname, params in zip(out_joints, body_names, body_params):
        if params[0] <= 0:
            chk.fail(f"joint '{j.name}' moves link '{lname}', which has zero mass")
        bodies.append(Body(lname, tuple(float(x) for x in params)))
    return Model(name=name, joints=tuple(out_joints), bodies=tuple(bodies), gravity=tuple(float(g) for g in gravity),
                 source=str(desc.get("source", "")), path=str(path), digest=digest)
