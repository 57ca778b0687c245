"""Read a MuJoCo MJCF file (root element <mujoco>) into symdyn's robot description, as MuJoCo compiles it.

What changes the rigid-body dynamics is read: the <worldbody> tree (pos and quat, axisangle, euler,
xyaxes or zaxis; <frame>), <compiler angle eulerseq inertiafromgeom inertiagrouprange boundmass
boundinertia balanceinertia settotalmass meshdir assetdir>, <default> classes (nested, childclass),
<include file>, hinge, slide, ball and free joints (several in one body), joint ref, armature and
damping (of a ball or free joint: on each of its DoFs, mjcf_tree.multi_dof_dynamics), <inertial> or the geoms' mass and inertia (MuJoCo's formulas; meshes from STL files),
<option gravity> and <site>s (the default FRAMES). <equality connect/weld> become loop closures and
<equality joint> with a linear polycoef a joint coupling (symdyn.readers.mjcf_equality).

A body with joints J1..Jn is a chain: each MuJoCo joint moves the body frame about its anchor (its
`pos` in the body frame), one after the other (mj_kinematics); joint i becomes a symdyn joint whose
frame sits at the anchor, with a massless link between joints, and the body frame hangs from the
last one. The zero of a hinge or slide is shifted by its `ref` (MuJoCo's qpos0), so symdyn's q of a
hinge or slide joint is MuJoCo's qpos. A free joint moves its body frame in world coordinates.
Ball and free joints keep symdyn's (Pinocchio's) quaternion and velocity layout.

Joint stiffness (springs about springref, springdamper) of hinge and slide joints and body gravcomp
are read (MuJoCo's passive forces: symdyn.recursions.friction); the stiffness of ball and free joints
is not modelled yet (a warning names the joints). frictionloss, actuators, tendons, sensors,
contacts and visuals do not change these dynamics: ignored (listed in the model's source line).
"""
import math
import os
import re
import struct
import xml.etree.ElementTree as ET
import xml.parsers.expat

import numpy as np

from ..errors import RobotFileError, one_line

#: nested <include> files deeper than this are refused (a cycle is refused at once)
MAX_INCLUDE_DEPTH = 16
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
#: elements of the body tree the reader does not expand: refused rather than silently left out
UNSUPPORTED = ("replicate", "attach", "composite", "flexcomp")
JOINT_TYPES = {"hinge": "revolute", "slide": "prismatic", "ball": "spherical", "free": "floating"}
#: what the reader leaves out, by element: none of it changes M, the bias forces or the kinematics
IGNORED = ("actuator", "tendon", "sensor", "contact", "visual", "keyframe", "custom", "extension", "statistic")


class MjcfError(Exception):
    """A one-line problem in `path` (the main file or an included one)."""

    def __init__(self, path, message):
        super().__init__(message)
        self.path = path


def is_mjcf(raw):
    """Is the root element of these bytes <mujoco>? (any extension)"""
    head = raw[:65536].decode("utf-8", "replace")
    head = re.sub(r"<\?.*?\?>|<!--.*?-->", "", head, flags=re.S)
    head = re.sub(r"<!DOCTYPE[^\[>]*(\[.*?\])?\s*>", "", head, flags=re.S)
    return re.match(r"\s*<mujoco[\s>/]", head) is not None


def read_mjcf(path, raw, warn=None):
    """(description, extras) of the MJCF file at `path` with bytes `raw`; extras: {"sites": [names],
    "constraints": [Constraint]}. Every problem is a one-line RobotFileError naming the file."""
    warn = warn or (lambda message: None)
    try:
        root = _expand(str(path), raw, ())
        with np.errstate(all="ignore"):
            return _Compiler(str(path), root, warn).run()
    except MjcfError as exc:
        raise RobotFileError(exc.path, " ".join(str(exc).split())) from None


# --- XML and <include> ---------------------------------------------------------------------

def _parse(path, raw):
    """The root element of `raw`; DTDs and entities refused (XML bombs, external entities)."""
    def refuse(*args):
        raise MjcfError(path, f"line {scan.CurrentLineNumber}: <!DOCTYPE>/<!ENTITY> declarations are refused "
                              "(XML bomb or external entity)")
    scan = xml.parsers.expat.ParserCreate()
    scan.StartDoctypeDeclHandler = refuse
    scan.EntityDeclHandler = refuse
    try:
        scan.Parse(raw, True)
        root = ET.fromstring(raw)
    except (xml.parsers.expat.ExpatError, ET.ParseError) as exc:
        raise MjcfError(path, f"malformed XML: {one_line(exc)}") from None
    except (ValueError, LookupError, RecursionError) as exc:
        raise MjcfError(path, f"malformed XML: {one_line(exc)}") from None
    if root.tag != "mujoco":
        raise MjcfError(path, f"root element is <{root.tag}>, expected <mujoco>")
    return root


def _expand(path, raw, stack):
    """The tree of `path` with every <include file> replaced by the children of the included <mujoco>."""
    root = _parse(path, raw)
    root.set("_file", path)
    _replace_includes(root, path, stack + (os.path.realpath(path),))
    return root


def _replace_includes(element, path, stack):
    for index, child in enumerate(list(element)):
        if child.tag != "include":
            _replace_includes(child, path, stack)
            continue
        name = child.get("file")
        if not name:
            raise MjcfError(path, "<include> without a 'file'")
        target = os.path.join(os.path.dirname(path), name)
        if os.path.realpath(target) in stack:
            raise MjcfError(path, f"<include file='{name}'> includes itself (an include cycle)")
        if len(stack) > MAX_INCLUDE_DEPTH:
            raise MjcfError(path, f"<include file='{name}'>: includes nested deeper than {MAX_INCLUDE_DEPTH}")
        try:
            with open(target, "rb") as handle:
                data = handle.read()
        except OSError as exc:
            raise MjcfError(path, f"<include file='{name}'>: cannot read {target}: {exc.strerror or exc}") from None
        included = _expand(target, data, stack)
        position = list(element).index(child)
        element.remove(child)
        for offset, grandchild in enumerate(list(included)):
            _mark_file(grandchild, target)
            element.insert(position + offset, grandchild)


def _mark_file(element, path):
    """Remember which file an element comes from (mesh files are relative to the main file's meshdir)."""
    for e in element.iter():
        e.set("_file", e.get("_file", path))


# --- numbers and orientations --------------------------------------------------------------

def _numbers(path, element, name, count=None, default=None):
    text = element.get(name)
    if text is None:
        return default
    tokens = text.split()
    if count is not None and len(tokens) != count:
        raise MjcfError(path, f"<{element.tag}{_label(element)}> {name} needs {count} numbers, got {len(tokens)}")
    out = []
    for token in tokens:
        if not _NUMBER.fullmatch(token) or not math.isfinite(float(token)):
            raise MjcfError(path, f"<{element.tag}{_label(element)}> {name}: '{token[:40]}' is not a finite number")
        out.append(float(token))
    return out


def _label(element):
    name = element.get("name")
    return f" name='{name}'" if name else ""


def quat_matrix(q):
    """Rotation of the quaternion (w, x, y, z) (normalized first, as MuJoCo does)."""
    q = np.asarray(q, dtype=float)
    w, x, y, z = q / np.linalg.norm(q)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def axis_angle_matrix(axis, angle):
    a = np.asarray(axis, dtype=float)
    a = a / np.linalg.norm(a)
    return quat_matrix([math.cos(angle / 2)] + list(math.sin(angle / 2) * a))


def z_to_matrix(vec):
    """MuJoCo's mjuu_z2quat: the shortest rotation of (0, 0, 1) onto `vec`."""
    v = np.asarray(vec, dtype=float)
    v = v / np.linalg.norm(v)
    axis = np.cross([0.0, 0.0, 1.0], v)
    s = np.linalg.norm(axis)
    axis = np.array([1.0, 0.0, 0.0]) if s < 1e-10 else axis / s
    return axis_angle_matrix(axis, math.atan2(s, v[2]))


class _Compiler:
    """The <compiler> settings and the walk of the tree (one per file read)."""

    def __init__(self, path, root, warn):
        self.path, self.root, self.warn = path, root, warn
        self.angle, self.eulerseq = "degree", "xyz"
        self.inertiafromgeom, self.group_range = "auto", (0, 5)
        self.boundmass = self.boundinertia = self.settotalmass = 0.0
        self.balanceinertia = False
        self.meshdir = self.assetdir = ""
        for compiler in root.iter("compiler"):
            self._read_compiler(compiler)
        self.defaults = {}
        for default in root.findall("default"):
            self._read_defaults(default, "main", {})
        self.meshes = {}
        self.names = set()

    def fail(self, message, element=None):
        raise MjcfError(element.get("_file", self.path) if element is not None else self.path, message)

    def _read_compiler(self, c):
        self.angle = c.get("angle", self.angle)
        if self.angle not in ("degree", "radian"):
            self.fail(f"<compiler angle='{self.angle}'>: expected degree or radian", c)
        self.eulerseq = c.get("eulerseq", self.eulerseq)
        if len(self.eulerseq) != 3 or any(ch not in "xyzXYZ" for ch in self.eulerseq):
            self.fail(f"<compiler eulerseq='{self.eulerseq}'>: expected 3 letters of xyzXYZ", c)
        self.inertiafromgeom = c.get("inertiafromgeom", self.inertiafromgeom)
        if self.inertiafromgeom not in ("auto", "true", "false"):
            self.fail(f"<compiler inertiafromgeom='{self.inertiafromgeom}'>: expected auto, true or false", c)
        rng = _numbers(self.path, c, "inertiagrouprange", 2)
        self.group_range = tuple(int(x) for x in rng) if rng else self.group_range
        for key in ("boundmass", "boundinertia", "settotalmass"):
            value = _numbers(self.path, c, key, 1)
            if value:
                setattr(self, key, value[0])
        self.balanceinertia = c.get("balanceinertia", "false" if not self.balanceinertia else "true") == "true"
        self.meshdir = c.get("meshdir", self.meshdir)
        self.assetdir = c.get("assetdir", self.assetdir)
        if c.get("alignfree", "false") == "true":
            self.fail("<compiler alignfree='true'> is not supported (it moves free bodies' frames to their COM)", c)
        if c.get("coordinate", "local") != "local":
            self.fail("<compiler coordinate='global'> is not supported (MuJoCo 3 removed it)", c)

    # --- defaults ---

    def _read_defaults(self, element, name, inherited):
        """Class -> {tag: attributes}, each class starting from its parent's (nested <default class>)."""
        name = element.get("class", name)
        own = {tag: dict(attrs) for tag, attrs in self.defaults.get(name, inherited).items()}
        for child in element:
            if child.tag != "default":
                own.setdefault(child.tag, {}).update({k: v for k, v in child.attrib.items() if k != "_file"})
        self.defaults[name] = own
        for child in element:
            if child.tag == "default":
                if not child.get("class"):
                    self.fail("a nested <default> needs a 'class'", child)
                self._read_defaults(child, child.get("class"), own)

    def attrs(self, element, childclass):
        """The element's attributes over its class's defaults (its own class, else the childclass in force)."""
        cls = element.get("class") or childclass or "main"
        if cls not in self.defaults and cls != "main":
            self.fail(f"<{element.tag}{_label(element)}>: unknown default class '{cls}'", element)
        tag = {"freejoint": "joint", "fixed": "tendon", "spatial": "tendon"}.get(element.tag, element.tag)
        merged = dict(self.defaults.get(cls, {}).get(tag, {}))
        if element.tag == "freejoint":
            merged = {}                     # a <freejoint> takes no class defaults
        merged.update(element.attrib)
        return _Attrs(self, element, merged)

    # --- orientations ---

    def orientation(self, a):
        """The rotation of an element's quat / axisangle / euler / xyaxes / zaxis (identity if none)."""
        given = [k for k in ("quat", "axisangle", "euler", "xyaxes", "zaxis") if a.get(k) is not None]
        if len(given) > 1:
            a.fail(f"more than one orientation ({', '.join(given)})")
        if not given:
            return np.eye(3)
        key = given[0]
        if key == "quat":
            q = a.vec("quat", 4)
            return quat_matrix(q) if np.linalg.norm(q) > 0 else a.fail("quat has zero length")
        if key == "axisangle":
            v = a.vec("axisangle", 4)
            return axis_angle_matrix(v[:3], self._angle(v[3]))
        if key == "zaxis":
            return z_to_matrix(a.vec("zaxis", 3))
        if key == "xyaxes":
            v = np.array(a.vec("xyaxes", 6))
            x = v[:3] / np.linalg.norm(v[:3])
            y = v[3:] - x * np.dot(x, v[3:])
            y = y / np.linalg.norm(y)
            return np.column_stack([x, y, np.cross(x, y)])
        return self._euler(a.vec("euler", 3))

    def _angle(self, value):
        return math.radians(value) if self.angle == "degree" else value

    def _euler(self, angles):
        """MuJoCo's euler: lowercase letters rotate about the moving axes, uppercase about the fixed ones."""
        R = np.eye(3)
        for letter, angle in zip(self.eulerseq, angles):
            step = axis_angle_matrix(np.eye(3)["xyz".index(letter.lower())], self._angle(angle))
            R = R @ step if letter.islower() else step @ R
        return R

    def run(self):
        from .mjcf_tree import build_description
        return build_description(self)


class _Attrs:
    """An element's resolved attributes, with typed access and errors naming the element."""

    def __init__(self, compiler, element, values):
        self.compiler, self.element, self.values = compiler, element, values

    def get(self, key, default=None):
        return self.values.get(key, default)

    def fail(self, message):
        self.compiler.fail(f"<{self.element.tag}{_label(self.element)}>: {message}", self.element)

    def vec(self, key, count=None, default=None):
        text = self.values.get(key)
        if text is None:
            return default
        probe = ET.Element(self.element.tag, {key: text, **({"name": self.element.get("name")}
                                                            if self.element.get("name") else {})})
        return _numbers(self.element.get("_file", self.compiler.path), probe, key, count)

    def number(self, key, default=0.0):
        value = self.vec(key, 1)
        return default if value is None else value[0]


def read_stl(path):
    """Triangles (n, 3, 3) of a binary STL file (MuJoCo reads no ASCII STL); OSError or ValueError."""
    with open(path, "rb") as handle:
        data = handle.read()
    count = struct.unpack("<I", data[80:84])[0] if len(data) >= 84 else -1
    if count <= 0 or 84 + 50 * count != len(data):
        raise ValueError("not a binary STL file")
    rows = np.frombuffer(data, dtype=np.dtype([("n", "<f4", 3), ("v", "<f4", (3, 3)), ("a", "<u2")]),
                         count=count, offset=84)
    return rows["v"].astype(float)


def read_obj(path):
    """Triangles (n, 3, 3) of a Wavefront OBJ file's faces (polygons split into fans); OSError or ValueError."""
    with open(path, "rb") as handle:
        lines = handle.read().decode("utf-8", "replace").splitlines()
    vertices, faces = [], []
    for line in lines:
        parts = line.split()
        if parts[:1] == ["v"]:
            vertices.append([float(x) for x in parts[1:4]])
        elif parts[:1] == ["f"]:
            index = [int(p.split("/")[0]) for p in parts[1:]]
            index = [i - 1 if i > 0 else len(vertices) + i for i in index]
            faces += [(index[0], index[k], index[k + 1]) for k in range(1, len(index) - 1)]
    if not faces:
        raise ValueError("no faces")
    # MuJoCo keeps mesh vertices in single precision: so does this, for the same masses
    return np.array(vertices, dtype=np.float32).astype(float)[np.array(faces)]
