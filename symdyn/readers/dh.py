"""Turn a Denavit-Hartenberg table (docs/robot-format.md, section 2) into the normalized description.

Every DH joint is split into  pre (constant) . motion(q) . post (constant)  so that the joint
variable becomes a motion about/along the z axis of a frame of its own (the "joint frame",
where the description's link frame lives):

    classic   revolute   Rz(theta+q) Tz(d) Tx(a) Rx(alpha)   pre = I                        post = Rz(theta) Tz(d) Tx(a) Rx(alpha)
    classic   prismatic  Rz(theta) Tz(d+q) Tx(a) Rx(alpha)   pre = Rz(theta) Tz(d)          post = Tx(a) Rx(alpha)
    modified  revolute   Rx(alpha) Tx(a) Rz(theta+q) Tz(d)   pre = Rx(alpha) Tx(a) Rz(theta) post = Tz(d)
    modified  prismatic  Rx(alpha) Tx(a) Rz(theta) Tz(d+q)   pre = Rx(alpha) Tx(a) Rz(theta) Tz(d)   post = I

The origin of joint k in joint frame k-1 is post_{k-1} . pre_k (post_0 = I: frame 0 is the base).
The post transform of the last joint only places the tip DH frame, which nothing here needs.
"""

import math

import numpy as np

from symdyn.multibody import geometry as G
from symdyn.readers.description import _show  # bounded excerpts: a YAML alias bomb is never expanded
from symdyn.errors import RobotFileError
from symdyn.multibody.geometry import DEFAULT_GRAVITY, INERTIA_KEYS

CONVENTIONS = ("classic", "modified")
JOINT_TYPES = ("revolute", "prismatic")
ROW_KEYS = ("name", "type", "a", "alpha", "d", "theta", "link")
LINK_KEYS = ("name", "mass", "com", "inertia")
TOP_KEYS = ("name", "source", "gravity", "base", "dh")
# cos(pi/2) is 6e-17, not 0; snapping such noise lets later symbolic code fold the zeros.
SNAP = 1e-15


class _Invalid(Exception):
    """Internal: a one-line problem, turned into RobotFileError (with the path) at the top."""


def dh_to_description(data, path):
    """Description dict for the parsed YAML `data` of a DH robot; RobotFileError if invalid."""
    try:
        with np.errstate(all="ignore"):  # huge numbers overflow to inf, which the builder reports
            return _description(data)
    except _Invalid as exc:
        # names taken from the file could carry line breaks; the message must stay one line
        raise RobotFileError(path, " ".join(str(exc).splitlines())) from None


def _description(data):
    if not isinstance(data, dict):
        raise _Invalid("the file must hold a mapping")
    if "links" in data or "joints" in data:
        raise _Invalid("dh: cannot be combined with top-level 'links' or 'joints'")
    _reject_unknown(data, TOP_KEYS, "robot")
    table = data.get("dh")
    if not isinstance(table, dict):
        raise _Invalid("dh: must be a mapping with 'convention' and 'joints'")
    _reject_unknown(table, ("convention", "joints"), "dh")
    convention = table.get("convention")
    if convention not in CONVENTIONS:
        raise _Invalid(f"dh: 'convention' must be one of {', '.join(CONVENTIONS)}, got {_show(convention)}")
    rows = table.get("joints")
    if not isinstance(rows, list) or not rows:
        raise _Invalid("dh: 'joints' must be a non-empty list")
    rows = [_read_row(row, index) for index, row in enumerate(rows, start=1)]

    base = data.get("base", "base")
    joints, links = [], []
    previous_post, parent = IDENTITY, base
    for row in rows:
        pre, post = split_transform(convention, row)
        joints.append({"name": row["name"], "type": row["type"], "parent": parent,
                       "child": row["link"]["name"], "origin": _origin(G.compose(previous_post, pre)),
                       "axis": [0.0, 0.0, 1.0]})
        links.append(_link_in_joint_frame(row["link"], post))
        previous_post, parent = post, row["link"]["name"]

    gravity = data.get("gravity", DEFAULT_GRAVITY)
    description = {
        "gravity": list(gravity) if isinstance(gravity, (list, tuple)) else gravity,  # builder validates
        "base": base,
        "links": links,
        "joints": joints,
    }
    # absent stays absent, so that the builder says "missing field 'name'" rather than "got None"
    description.update({key: data[key] for key in ("name", "source") if key in data})
    return description


# --- validation -------------------------------------------------------------------------------

def _reject_unknown(mapping, allowed, owner):
    """Unknown keys are usually typos (e.g. 'alhpa'); silently ignoring them hides wrong models."""
    for key in mapping:
        if key not in allowed:
            raise _Invalid(f"{owner}: unknown field {_show(key)} (allowed: {', '.join(allowed)})")


def _number(mapping, key, owner):
    if key not in mapping:
        raise _Invalid(f"{owner}: missing field '{key}'")
    return _as_float(mapping[key], f"{owner}: field '{key}'")


def _as_float(value, what):
    # bool is an int subclass, and YAML 1.1 reads '1e-3' (no dot) as a string: reject both.
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _Invalid(f"{what} must be a number, got {_describe(value)}")
    try:
        result = float(value)
    except OverflowError:  # an integer beyond the range of a double
        digits = int(abs(int(value)).bit_length() * math.log10(2)) + 1  # str() refuses > 4300 digits
        raise _Invalid(f"{what} must be finite, got an integer of {digits} digits") from None
    if not math.isfinite(result):
        raise _Invalid(f"{what} must be finite, got {_show(value)}")
    return result


def _describe(value):
    if isinstance(value, str):
        return f"string {_show(value)}"
    if value is None:
        return "nothing"
    return type(value).__name__


def _name(mapping, default, owner):
    name = mapping.get("name", default)
    if not isinstance(name, str) or not name:
        raise _Invalid(f"{owner}: field 'name' must be a non-empty string, got {_describe(name)}")
    return name


def _read_row(row, index):
    if not isinstance(row, dict):
        raise _Invalid(f"dh joint #{index}: must be a mapping, got {_describe(row)}")
    name = _name(row, f"joint{index}", f"dh joint #{index}")
    owner = f"dh joint '{name}'"
    _reject_unknown(row, ROW_KEYS, owner)
    kind = row.get("type")
    if kind not in JOINT_TYPES:
        if "type" not in row:
            raise _Invalid(f"{owner}: missing field 'type'")
        raise _Invalid(f"{owner}: field 'type' must be revolute or prismatic, got {_show(kind)}")
    parameters = {key: _number(row, key, owner) for key in ("a", "alpha", "d", "theta")}
    if "link" not in row:
        raise _Invalid(f"{owner}: missing field 'link'")
    return {"name": name, "type": kind, **parameters, "link": _read_link(row["link"], index, owner)}


def _read_link(link, index, joint_owner):
    if not isinstance(link, dict):
        raise _Invalid(f"{joint_owner}: field 'link' must be a mapping, got {_describe(link)}")
    name = _name(link, f"link{index}", f"{joint_owner} link")
    owner = f"dh link '{name}'"
    _reject_unknown(link, LINK_KEYS, owner)
    mass = _number(link, "mass", owner)
    com = link.get("com")
    if "com" not in link:
        raise _Invalid(f"{owner}: missing field 'com'")
    if not isinstance(com, list) or len(com) != 3:
        raise _Invalid(f"{owner}: field 'com' must be a list of 3 numbers")
    com = [_as_float(value, f"{owner}: field 'com'") for value in com]
    inertia = link.get("inertia")
    if "inertia" not in link:
        raise _Invalid(f"{owner}: missing field 'inertia'")
    if not isinstance(inertia, dict):
        raise _Invalid(f"{owner}: field 'inertia' must be a mapping with {', '.join(INERTIA_KEYS)}")
    _reject_unknown(inertia, INERTIA_KEYS, f"{owner} inertia")
    inertia = {key: _number(inertia, key, f"{owner} inertia") for key in INERTIA_KEYS}
    return {"name": name, "mass": mass, "com": com, "inertia": inertia}


# --- transforms -------------------------------------------------------------------------------
# rigid transforms are (R, p) pairs of symdyn.multibody.geometry: plain floats, a fixed order of operations

IDENTITY = (G.IDENTITY, G.ZERO)


def _product(*transforms):
    out = IDENTITY
    for X in transforms:
        out = G.compose(out, X)
    return out


def split_transform(convention, row):
    """(pre, post) constant transforms around the joint motion Rz(q) or Tz(q)."""
    a, alpha, d, theta = row["a"], row["alpha"], row["d"], row["theta"]
    if convention == "classic":
        if row["type"] == "revolute":
            return IDENTITY, _product(rot_z(theta), G.trans_z(d), G.trans_x(a), rot_x(alpha))
        return _product(rot_z(theta), G.trans_z(d)), _product(G.trans_x(a), rot_x(alpha))
    # modified: Rz(theta + q) = Rz(theta) Rz(q), and Tz(d + q) = Tz(d) Tz(q)
    if row["type"] == "revolute":
        return _product(rot_x(alpha), G.trans_x(a), rot_z(theta)), G.trans_z(d)
    return _product(rot_x(alpha), G.trans_x(a), rot_z(theta), G.trans_z(d)), IDENTITY


def _snapped_rotation(R):
    """cos(pi/2) is 6e-17, not 0: snapping such noise lets later symbolic code fold the zeros."""
    return G.snap_matrix(R, SNAP)


def rot_x(angle):
    R, p = G.rot_x(angle)
    return _snapped_rotation(R), p


def rot_z(angle):
    R, p = G.rot_z(angle)
    return _snapped_rotation(R), p


def _origin(transform):
    """Joint origin as xyz + row-major rotation; snapped so that exact zeros stay exact."""
    R, p = transform
    zero = lambda x: 0.0 if abs(x) < SNAP else x + 0.0    # + 0.0 turns -0.0 into 0.0
    return {"xyz": [zero(x) for x in p], "rotation": [[zero(x) for x in row] for row in R]}


def _link_in_joint_frame(link, post):
    """Move COM and inertia from DH frame k into joint frame k (post_k maps the former into the latter)."""
    R, offset = post
    rotation = tuple(tuple(0.0 if abs(x) < SNAP else x for x in row) for row in R)
    rotated = G.congruence(rotation, G.inertia_matrix(link["inertia"]))   # still about the COM
    com = G.add(G.matvec(rotation, link["com"]), offset)
    return {"name": link["name"], "mass": link["mass"], "com": [x + 0.0 for x in com],
            "inertia": G.inertia_entries(rotated)}
