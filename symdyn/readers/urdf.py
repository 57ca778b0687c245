"""Read a URDF file into symdyn's normalized robot description (see docs/robot-format.md).

Only the kinematic tree and the inertial data are read. Elements and attributes URDF does not define
(but known extensions) get a warning (urdf_spec). Everything that does not change the
rigid-body dynamics is ignored: <visual>, <collision>, <limit>, <safety_controller>,
<calibration>, <transmission>, <gazebo>, <material>. A joint's <dynamics damping friction> is read
as its viscous and Coulomb friction (as Pinocchio's model.damping and model.friction). <mimic joint
multiplier offset> is read as the joint's "mimic" entry (the builder couples it, or with
--mimic independent loads it as an independent joint with a warning).

Validation here is structural (is this a well-formed tree of links and joints with finite
numbers?); physical checks (mass > 0, positive-definite inertia) belong to the builder.
"""

import math
import os
import re
import xml.etree.ElementTree as ET

import numpy as np

from symdyn.multibody import geometry as G
from symdyn.errors import RobotFileError
from symdyn.multibody.geometry import DEFAULT_GRAVITY, INERTIA_KEYS
from symdyn.multibody.joints import URDF_TYPES
from symdyn.readers.urdf_spec import unknown_markup

SUPPORTED_JOINT_TYPES = tuple(URDF_TYPES) + ("fixed",)

# A plain decimal number. float() alone would also accept "1_000", "nan" and "infinity".
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_NON_FINITE = re.compile(r"[+-]?(?:nan|inf|infinity)", re.IGNORECASE)


class _Invalid(Exception):
    """Internal: a one-line problem, turned into RobotFileError (with the path) at the top."""


def read_urdf(path, raw=None, warn=None):
    """Parse the URDF at `path` (or its bytes `raw`); return the description dict or raise RobotFileError.

    warn: called with a one-line message for what is read but not honored (<mimic>) and for each
    element or attribute URDF does not define (urdf_spec: a typo would change the model silently)."""
    warn = warn or (lambda message: None)
    try:
        if raw is None:
            raw = _read(path)
        root = _parse_xml(path, raw)
        for message in unknown_markup(root, raw):
            warn(message)
        with np.errstate(all="ignore"):  # huge numbers overflow to inf, which the builder reports
            return _description(root, os.path.basename(str(path)), warn)
    except _Invalid as exc:
        # names taken from the file could carry line breaks; the message must stay one line
        raise RobotFileError(path, " ".join(str(exc).splitlines())) from None


# --- XML --------------------------------------------------------------------------------------

def _read(path):
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as exc:
        raise _Invalid(f"cannot read file: {exc.strerror or exc}") from None


def _parse_xml(path, text):
    if not text.strip():
        raise _Invalid("file is empty")
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        not_utf8 = _not_utf8(text)
        if not_utf8:
            raise _Invalid(not_utf8) from None
        raise _Invalid(f"malformed XML: {_one_line(str(exc))}") from None
    except LookupError as exc:  # <?xml encoding="..."?> names an encoding Python does not know
        raise _Invalid(f"malformed XML: {_one_line(str(exc))}") from None
    except (ValueError, RecursionError) as exc:  # e.g. text that cannot be decoded at all
        raise _Invalid(f"malformed XML: {_one_line(str(exc))}") from None
    if _tag(root) != "robot":
        raise _Invalid(f"root element is <{_tag(root)}>, expected <robot>")
    return root


def _not_utf8(data):
    """The reason a file that fails to parse is not UTF-8 (unless it declares another encoding), or ''."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")) or re.match(rb"<\?xml[^>]*encoding=", data):
        declared = re.match(rb"<\?xml[^>]*encoding=[\"']([A-Za-z0-9._-]+)", data)
        if not declared or declared.group(1).lower().replace(b"_", b"-") not in (b"utf-8", b"utf8"):
            return ""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"file is not UTF-8 text (byte {exc.start + 1} is invalid)"
    return ""


def _one_line(text):
    return " ".join(str(text).split())


def _tag(element):
    """Tag without an XML namespace, so that a default xmlns on <robot> does not hide elements."""
    tag = element.tag
    if not isinstance(tag, str):  # comments / processing instructions (not kept by default)
        return ""
    return tag.rsplit("}", 1)[-1]


def _children(element, tag):
    return [child for child in element if _tag(child) == tag]


def _only_child(element, tag, owner, required):
    """The single <tag> child; duplicates are an error because URDF parsers disagree on which wins."""
    found = _children(element, tag)
    if len(found) > 1:
        raise _Invalid(f"{owner}: more than one <{tag}>")
    if not found:
        if required:
            raise _Invalid(f"{owner}: missing <{tag}>")
        return None
    return found[0]


def _attribute(element, name, owner):
    value = element.get(name)
    if value is None:
        raise _Invalid(f"{owner}: <{_tag(element)}> is missing attribute '{name}'")
    return value


def _numbers(text, count, what):
    """Exactly `count` finite numbers from a whitespace-separated attribute value."""
    tokens = text.split()
    if len(tokens) != count:
        raise _Invalid(f"{what} needs {count} number{'s' if count > 1 else ''}, got {len(tokens)}")
    values = []
    for token in tokens:
        if _NON_FINITE.fullmatch(token):
            raise _Invalid(f"{what} must be finite, got '{token}'")
        if not _NUMBER.fullmatch(token):
            raise _Invalid(f"{what} has a non-numeric value '{token}'")
        values.append(float(token))
    if not all(math.isfinite(v) for v in values):  # overflow such as 1e999
        raise _Invalid(f"{what} must be finite, got '{text.strip()}'")
    return values


def _vector_attribute(element, name, owner, default):
    """A 3-vector attribute; `default` is used when the attribute is absent (None = required)."""
    text = element.get(name)
    if text is None:
        if default is None:
            raise _Invalid(f"{owner}: <{_tag(element)}> is missing attribute '{name}'")
        return list(default)
    return _numbers(text, 3, f"{owner}: <{_tag(element)}> {name}")


def _origin(element, owner):
    """xyz and rpy of an optional <origin>; URDF defaults both to zero."""
    origin = _only_child(element, "origin", owner, required=False)
    if origin is None:
        return [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]
    xyz = _vector_attribute(origin, "xyz", owner, default=(0.0, 0.0, 0.0))
    rpy = _vector_attribute(origin, "rpy", owner, default=(0.0, 0.0, 0.0))
    return xyz, rpy


# --- links and joints -------------------------------------------------------------------------

def _description(root, filename, warn):
    name = root.get("name")
    if name is None:
        raise _Invalid("robot has no 'name' attribute")
    # Only direct children: <transmission> also contains <joint name=...> elements.
    links = _read_links(root)
    joints = _read_joints(root, links, warn)
    base, order = _walk_tree(links, joints)
    return {
        "name": name,
        "source": f"URDF {filename}",
        "gravity": list(DEFAULT_GRAVITY),
        "base": base,
        "base_link": links[base],          # its inertia counts when the base floats
        "links": [links[joints[j]["child"]] for j in order],
        "joints": [joints[j] for j in order],
    }


def _named(root, tag):
    """(name, element) of each <tag> of the robot, in document order; _Invalid for one without a name
    or with the name of an earlier one."""
    seen = set()
    for index, element in enumerate(_children(root, tag), start=1):
        name = element.get("name")
        if name is None:
            raise _Invalid(f"{tag} #{index}: <{tag}> is missing attribute 'name'")
        if name in seen:
            raise _Invalid(f"{tag} '{name}': defined twice")
        seen.add(name)
        yield name, element


def _read_links(root):
    """Link name -> link entry (insertion order = document order)."""
    links = {}
    for name, element in _named(root, "link"):
        links[name] = _read_link(element, name)
    if not links:
        raise _Invalid("robot has no links")
    return links


def _read_link(element, name):
    owner = f"link '{name}'"
    inertial = _only_child(element, "inertial", owner, required=False)
    if inertial is None:  # a massless frame (e.g. "world", tool frames)
        return {"name": name, "mass": 0.0, "com": [0.0, 0.0, 0.0],
                "inertia": {key: 0.0 for key in INERTIA_KEYS}}
    owner = f"link '{name}' inertial"
    mass_element = _only_child(inertial, "mass", owner, required=True)
    mass = _numbers(_attribute(mass_element, "value", owner), 1, f"{owner}: mass")[0]
    inertia_element = _only_child(inertial, "inertia", owner, required=True)
    inertia = {key: _numbers(_attribute(inertia_element, key, owner), 1, f"{owner}: {key}")[0]
               for key in INERTIA_KEYS}
    com, rpy = _origin(inertial, owner)
    return {"name": name, "mass": mass, "com": com, "inertia": _rotate_inertia(inertia, rpy)}


def _rotate_inertia(inertia, rpy):
    """Express an inertia given in the <inertial> origin's axes in link-frame axes: R I R^T."""
    if not any(rpy):
        return inertia  # keep the file's exact numbers (no rounding from a trivial product)
    rotated = G.congruence(G.rpy_matrix(*rpy), G.inertia_matrix(inertia))
    return G.inertia_entries(rotated)


def _read_joints(root, links, warn):
    """Joint name -> joint entry (document order), with parent/child links checked to exist."""
    joints = {}
    for name, element in _named(root, "joint"):
        joints[name] = _read_joint(element, name, links)
        mimic = _only_child(element, "mimic", f"joint '{name}'", required=False)
        if mimic is not None and joints[name]["type"] != "fixed":
            joints[name]["mimic"] = _read_mimic(mimic, name)
    return joints


def _read_mimic(element, name):
    """{joint, multiplier, offset} of <mimic>: q = multiplier * q[joint] + offset (URDF defaults 1 and 0)."""
    owner = f"joint '{name}'"
    out = {"joint": element.get("joint")}
    for key, default in (("multiplier", 1.0), ("offset", 0.0)):
        text = element.get(key)
        out[key] = default if text is None else _numbers(text, 1, f"{owner}: <mimic> {key}")[0]
    return out


def _read_joint(element, name, links):
    owner = f"joint '{name}'"
    kind = element.get("type")
    if kind is None:
        raise _Invalid(f"{owner}: <joint> is missing attribute 'type'")
    if kind not in SUPPORTED_JOINT_TYPES:
        raise _Invalid(f"{owner}: unknown type '{kind}' "
                       f"(expected one of {', '.join(SUPPORTED_JOINT_TYPES)})")
    ends = {}
    for end in ("parent", "child"):
        link = _attribute(_only_child(element, end, owner, required=True), "link", owner)
        if link not in links:
            raise _Invalid(f"{owner}: {end} link '{link}' is not defined")
        ends[end] = link
    xyz, rpy = _origin(element, owner)
    axis = [1.0, 0.0, 0.0]  # URDF default; normalizing (and rejecting zero length) is the builder's job
    axis_element = _only_child(element, "axis", owner, required=False)
    if axis_element is not None:
        axis = _vector_attribute(axis_element, "xyz", owner, default=None)
    joint = {"name": name, "type": URDF_TYPES.get(kind, kind), "parent": ends["parent"], "child": ends["child"],
             "origin": {"xyz": xyz, "rpy": rpy}, "axis": axis}
    dynamics = _only_child(element, "dynamics", owner, required=False)
    if dynamics is not None:
        for key in ("damping", "friction"):
            text = dynamics.get(key)
            if text is not None:
                joint[key] = _numbers(text, 1, f"{owner}: <dynamics> {key}")[0]
    return joint


# --- tree structure ---------------------------------------------------------------------------

def _walk_tree(links, joints):
    """Check that links and joints form one tree; return (root link, joint names depth first)."""
    parent_joint = {}  # child link -> the joint that moves it
    for joint in joints.values():
        child = joint["child"]
        if child in parent_joint:
            raise _Invalid(f"link '{child}': child of two joints "
                           f"('{parent_joint[child]}' and '{joint['name']}')")
        parent_joint[child] = joint["name"]
    root = _single_root(links, joints, parent_joint)

    # Pinocchio's order: depth first, the joints below a link sorted by name (urdfdom keeps them in
    # a std::map, byte-wise order), so that q vectors are interchangeable with pinocchio's
    child_joints = {name: [] for name in links}
    for joint in sorted(joints.values(), key=lambda j: j["name"].encode("utf-8", "surrogatepass")):
        child_joints[joint["parent"]].append(joint["name"])
    order = []
    stack = list(reversed(child_joints[root]))  # explicit stack: deep chains must not hit recursion limits
    while stack:
        name = stack.pop()
        order.append(name)
        stack.extend(reversed(child_joints[joints[name]["child"]]))

    if len(order) != len(joints):
        # Every link but the root has one parent joint, so whatever was not reached hangs off a cycle.
        reached = {joints[name]["child"] for name in order} | {root}
        stray = next(link for link in links if link not in reached)
        raise _Invalid(_loop_message(stray, joints, parent_joint))
    return root, order


def _single_root(links, joints, parent_joint):
    roots = [name for name in links if name not in parent_joint]
    if not roots:
        first = next(iter(links))
        raise _Invalid(_loop_message(first, joints, parent_joint))
    if len(roots) > 1:
        used = {j["parent"] for j in joints.values()} | set(parent_joint)
        lonely = [name for name in roots if name not in used]
        if lonely:
            raise _Invalid(f"link '{lonely[0]}': not connected to any joint")
        names = ", ".join(f"'{name}'" for name in roots)
        raise _Invalid(f"several root links ({names}): the links must form one tree")
    return roots[0]


def _loop_message(link, joints, parent_joint):
    """Walk up parent joints from `link` until a link repeats; name the joints of the cycle."""
    path, seen = [], {}
    while link not in seen:
        seen[link] = len(path)
        joint = parent_joint[link]
        path.append(joint)
        link = joints[joint]["parent"]
    cycle = " -> ".join(f"'{name}'" for name in path[seen[link]:])
    return f"kinematic loop through joints {cycle}"
