"""From a description (the dictionary every input format is read into) to a validated Model.

Checks what no parser can: known fields only (a typo is an error, not a default), finite numbers
that do not overflow, physical inertias, one connected tree without loops, and no joint whose
moving links have no inertia about its axis (a singular mass matrix); merges links attached by
fixed joints into their moving ancestor's body, keeping their frames. Every problem is a one-line
RobotFileError.

Inertias of real vendor files (the policy of docs/robot-format.md), with S the robot's inertia
scale (the largest principal moment of any link):
- a defect below NOISE * S (a principal moment of -1e-20, a triangle inequality missed by 1e-9 S)
  is rounding noise: accepted silently;
- a tensor that is positive semi-definite but no rigid body's (the triangle inequality broken,
  zero mass with a nonzero tensor) and a joint whose moving links have no inertia about its axis
  (zero-mass leaves: M singular) are warnings: the dynamics are defined, the model is loaded as is;
- a clearly negative principal moment is an error (M may be indefinite), a warning when the caller
  allows non-physical inertias.
Warnings go to the `warn` callable given to build_model (load_robot collects them on the Model).
"""
import math
import numbers
import reprlib
import sys
from dataclasses import replace

import numpy as np

from ..multibody import geometry as G
from ..errors import RobotFileError
from ..multibody.geometry import DEFAULT_GRAVITY, INERTIA_KEYS
from ..multibody.joints import JOINT_TYPES
from ..multibody.model import Body, Frame, Joint, Mimic, Model, Provenance
from .singular_links import undone_by_children

MOVING = tuple(JOINT_TYPES)
# contacts, loops and actuated are read by load.py (symdyn.multibody.constraints, symdyn.recursions.loop_closure)
ROBOT_KEYS = ("name", "source", "gravity", "base", "base_link", "links", "joints", "coulomb_smoothing",
              "contacts", "loops", "actuated")
#: the free-flyer that --floating-base puts between the world and the base link (Pinocchio's name)
ROOT_JOINT = "root_joint"
LINK_KEYS = ("name", "mass", "com", "inertia", "gravcomp")
JOINT_KEYS = ("name", "type", "parent", "child", "origin", "axis") + (
    "damping", "friction", "friction_offset", "armature", "stiffness", "springref", "mimic")
MIMIC_KEYS = ("joint", "multiplier", "offset")
#: the largest mimic multiplier and offset (gear ratios are far smaller; beyond, M's entries, which hold
#: the multiplier's square, overflow to inf near 1e155)
MIMIC_LIMIT = 1e6
#: how a joint with a "mimic" entry (URDF <mimic>) is loaded: coupled to its master (reduced
#: coordinates, Pinocchio's mimic=True) or as an independent joint (asked for: no warning)
MIMIC_MODES = ("reduced", "independent")
#: the friction and rotor fields of a joint (model.Joint), and whether they must be >= 0
JOINT_DYNAMICS = {"damping": True, "friction": True, "friction_offset": False, "armature": True, "stiffness": True,
                  "springref": False}
ORIGIN_KEYS = ("xyz", "rpy", "rotation")
#: a revolute joint whose moving links have less inertia about its axis than this fraction of
#: their inertia about its origin makes the mass matrix singular (numerically) at q = 0
SINGULAR = 1e-12
#: inertia defects below this fraction of the robot's inertia scale are rounding noise: URDF files
#: write inertias with about 6 significant digits, so relative to the robot's largest principal
#: moment the numbers carry no more (icub: moments of +-1.4e-20 from a zero tensor; tiago: an
#: antenna of 1e-6 kg whose smallest moment is -6e-8 of the robot's scale)
NOISE = 1e-6


class _Checker:
    """Field access with one-line errors that name the file and the element."""

    def __init__(self, path, warn=None):
        self.path = path
        self._warn = warn

    def fail(self, message):
        raise RobotFileError(self.path, message)

    def warn(self, message):
        """A problem the model can live with: reported through the caller's `warn`, loading goes on."""
        if self._warn is not None:
            self._warn(message)

    def number(self, value, where):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
            self.fail(f"{where} must be a number, got {_show(value)}")
        try:
            result = float(value)
        except OverflowError:                 # an integer beyond the range of a double
            self.fail(f"{where} must be finite, got an integer of {_digits(value)} digits")
        if not math.isfinite(result):
            self.fail(f"{where} must be finite, got {value!r}")
        return result

    def vector(self, value, where, size=3):
        if isinstance(value, np.ndarray):
            value = value.tolist()
        if not isinstance(value, (list, tuple)) or len(value) != size:
            self.fail(f"{where} must be a list of {size} numbers, got {_show(value)}")
        return tuple(self.number(v, where) for v in value)

    def known(self, record, allowed, where):
        """Unknown keys are usually typos ('axs', 'intertia'): silently ignoring them hides a wrong model."""
        for key in record:
            if key not in allowed:
                self.fail(f"{where}: unknown field {_show(key)} (allowed: {', '.join(allowed)})")

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
            self.fail(f"{where} must be a non-empty string, got {_show(value)}")
        return value


def _digits(integer):
    """Decimal digits of a (huge) integer, without str(): Python refuses to print more than 4300."""
    return int(abs(int(integer)).bit_length() * math.log10(2)) + 1


_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxstring, _REPR.maxother = 3, 40, 40
_REPR.maxlist = _REPR.maxtuple = _REPR.maxdict = _REPR.maxset = _REPR.maxfrozenset = 4


def _show(value, limit=60):
    """repr of a value from the file, bounded: a message must stay one readable line, and a YAML
    alias bomb (lists of aliases of lists...) must not be expanded in full."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 200:
        return f"an integer of {_digits(value)} digits"
    try:
        text = _REPR.repr(value)
    except (RecursionError, ValueError):
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[:limit] + "..."


def _origin(chk, joint, where):
    origin = joint.get("origin")
    if origin is None:                  # absent, or "origin:" with nothing after it
        origin = {}
    chk.mapping(origin, f"{where}: origin")
    chk.known(origin, ORIGIN_KEYS, f"{where}: origin")
    xyz = chk.vector(origin.get("xyz", [0, 0, 0]), f"{where}: origin xyz")
    if "rotation" in origin:
        if "rpy" in origin:
            chk.fail(f"{where}: origin gives both 'rpy' and 'rotation' (give one)")
        rows = origin["rotation"]
        if not isinstance(rows, (list, tuple)) or len(rows) != 3:
            chk.fail(f"{where}: origin rotation must be a 3x3 matrix (a list of 3 rows)")
        R = tuple(chk.vector(r, f"{where}: origin rotation row") for r in rows)
        if not G.is_rotation(R):
            chk.fail(f"{where}: origin rotation is not a proper rotation matrix")
    else:
        R = G.rpy_matrix(*chk.vector(origin.get("rpy", [0, 0, 0]), f"{where}: origin rpy"))
    return R, xyz


def _link_params(chk, link, where):
    """(m, m c, J about the link origin) in the link frame, checked for physical consistency."""
    chk.known(link, LINK_KEYS, where)
    mass = chk.number(chk.field(link, "mass", where), f"{where}: mass")
    chk.number(link.get("gravcomp", 0.0), f"{where}: gravcomp")        # read by _merge
    if mass < 0:
        chk.fail(f"{where}: mass must not be negative, got {mass!r}")
    com = link.get("com")
    com = chk.vector([0, 0, 0] if com is None and "com" not in link else com, f"{where}: com")
    inertia = link.get("inertia")
    inertia = chk.mapping({} if inertia is None and "inertia" not in link else inertia, f"{where}: inertia")
    for key in inertia:
        if key not in INERTIA_KEYS:
            chk.fail(f"{where}: unknown inertia entry {_show(key)} (expected {', '.join(INERTIA_KEYS)})")
    i = {k: chk.number(inertia.get(k, 0.0), f"{where}: inertia {k}") for k in INERTIA_KEYS}
    Ic = G.inertia_matrix(i)
    try:
        moments = G.principal_moments(Ic)
    except (OverflowError, ValueError):
        moments = (math.nan,) * 3
    if not all(math.isfinite(x) and abs(x) <= 1e300 for x in moments):
        chk.fail(f"{where}: inertia tensor is too large to be represented")
    return mass, com, Ic, moments


def _check_inertias(chk, links, allow_nonphysical):
    """The inertia policy (module docstring), relative to the robot's inertia scale."""
    scale = max([max(abs(x) for x in link[3]) for link in links.values()] + [1e-300])
    noise = NOISE * scale
    for lname, (mass, _, _, moments) in links.items():
        where, shown = f"link '{lname}'", _fmt(moments)
        a, b, c = moments
        if a < -noise:
            problem = f"{where}: inertia tensor is not positive semi-definite (principal moments {shown})"
            if not allow_nonphysical:
                chk.fail(problem)
            chk.warn(f"{problem}: loaded as is (--allow-nonphysical-inertia)")
        elif a + b < c - noise:
            chk.warn(f"{where}: inertia violates the triangle inequality (principal moments {shown}): "
                     "no rigid body has it; loaded as is")
        elif mass == 0 and c > noise:
            chk.warn(f"{where}: zero mass with a nonzero inertia tensor (principal moments {shown}): "
                     "no rigid body has it; loaded as is")


def _fmt(values):
    return "[" + ", ".join(f"{v:.6g}" for v in values) + "]"


def build_model(desc, path, digest="", warn=None, allow_nonphysical_inertia=False, floating_base=False,
                mimic="reduced"):
    """Validate a description dictionary and build the Model (fixed joints merged).

    warn: called with each warning (a one-line message without the path), e.g. list.append;
    allow_nonphysical_inertia: a clearly negative principal moment is a warning, not an error;
    floating_base: the base link floats, joined to the world by a free-flyer named root_joint
    (Pinocchio's buildModel(..., JointModelFreeFlyer())); its inertia is 'base_link' when given;
    mimic: "reduced" (a joint's "mimic" entry couples it to its master: symdyn.recursions.mimic) or "independent"."""
    with np.errstate(all="ignore"):          # overflow is reported as a message, not a warning
        return _build(desc, path, digest, warn, allow_nonphysical_inertia, floating_base, mimic)


class _Tree:
    """The kinematic tree as read: joints by name, (type, parent, child, R, xyz, axis, dynamics) in the order of the
    joint list; each child link's parent joint; each link's child joints; the links' parameters; the base link."""

    def __init__(self, base, links):
        self.base, self.links = base, links
        self.joints, self.child_of, self.children = {}, {}, {}

    def add(self, jname, entry):
        self.joints[jname] = entry
        self.child_of[entry[2]] = jname
        self.children.setdefault(entry[1], []).append(jname)


def _build(desc, path, digest, warn=None, allow_nonphysical=False, floating_base=False, mimic="reduced"):
    chk = _Checker(path, warn)
    name, gravity, base, links_in, joints_in = _robot_fields(chk, desc)
    tree = _Tree(base, _read_links(chk, links_in, base, allow_nonphysical))
    base_link = _base_link(chk, desc.get("base_link"), base)
    if floating_base:
        _float_base(chk, tree, base_link, allow_nonphysical)
    mimics = {}
    for i, joint in enumerate(joints_in):
        jname, entry, mimic_entry = _read_joint(chk, joint, f"joint #{i + 1}", tree, floating_base)
        if mimic_entry is not None:
            mimics[jname] = mimic_entry        # mimic="independent": asked for, no warning
        tree.add(jname, entry)

    _check_tree(chk, tree)
    joints, bodies, frames = _merge(chk, tree, desc)
    source = desc.get("source")
    model = Model(name=name, joints=joints, bodies=bodies, gravity=tuple(float(g) for g in gravity), frames=frames,
                  coulomb_smoothing=coulomb_smoothing(chk.fail, desc.get("coulomb_smoothing", 0.0)),
                  provenance=Provenance(path=str(path), digest=digest, source="" if source is None else str(source)))
    return _couple(chk, model, mimics) if mimic == "reduced" and mimics else model


def _robot_fields(chk, desc):
    """The robot's name, gravity and base link name, and its lists of links and joints (not yet read)."""
    chk.mapping(desc, "robot description")
    chk.known(desc, ROBOT_KEYS, "robot")
    name = chk.name(chk.field(desc, "name", "robot"), "robot name")
    source = desc.get("source")
    if source is not None and (isinstance(source, bool) or not isinstance(source, (str, int, float))):
        chk.fail(f"source must be a text, got {type(source).__name__}")
    gravity = chk.vector(desc.get("gravity", list(DEFAULT_GRAVITY)), "gravity")
    base = chk.name(desc.get("base", "base"), "base link name")
    links_in = chk.field(desc, "links", "robot")
    joints_in = chk.field(desc, "joints", "robot")
    for key, value in (("links", links_in), ("joints", joints_in)):
        if not isinstance(value, list):
            chk.fail(f"'{key}' must be a list, got {_show(value)}")
    return name, gravity, base, links_in, joints_in


def _read_links(chk, links_in, base, allow_nonphysical):
    """Each link's (m, m c, J about its origin, principal moments) by name, under the inertia policy."""
    links = {}
    for i, link in enumerate(links_in):
        chk.mapping(link, f"link #{i + 1}")
        lname = chk.name(chk.field(link, "name", f"link #{i + 1}"), f"link #{i + 1} name")
        if lname == base:
            chk.fail(f"link '{lname}' is the base link: it must not be listed in 'links'")
        if lname in links:
            chk.fail(f"duplicate link name '{lname}'")
        links[lname] = _link_params(chk, link, f"link '{lname}'")
    _check_inertias(chk, links, allow_nonphysical)
    return links


def _base_link(chk, base_link, base):
    """The base link's inertial fields ('base_link', used by --floating-base), without its name."""
    if base_link is None:
        return None
    chk.mapping(base_link, "base_link")
    if base_link.get("name", base) != base:
        chk.fail(f"base_link: name {_show(base_link['name'])} is not the base '{base}'")
    return {k: v for k, v in base_link.items() if k != "name"}


def _float_base(chk, tree, base_link, allow_nonphysical):
    """--floating-base: the base becomes a link (massless unless 'base_link' gives its inertia), joined by a
    free-flyer to a new base, the world (a name no link has)."""
    world = "world"
    while world in tree.links or world == tree.base:
        world += "_"
    tree.links[tree.base] = _link_params(chk, base_link if base_link is not None else {"mass": 0},
                                         f"link '{tree.base}'")
    _check_inertias(chk, tree.links, allow_nonphysical)
    tree.add(ROOT_JOINT, ("floating", world, tree.base, G.IDENTITY, G.ZERO, None, {}))
    tree.base = world


def _read_joint(chk, joint, label, tree, floating_base):
    """One entry of 'joints' (`label`: 'joint #k'), checked against the tree read so far: its name, its
    (type, parent, child, R, xyz, axis, dynamics) and its mimic entry (None without one or on a fixed joint)."""
    chk.mapping(joint, label)
    jname = chk.name(chk.field(joint, "name", label), f"{label} name")
    where = f"joint '{jname}'"
    if jname in tree.joints:
        chk.fail(f"duplicate joint name '{jname}'" + (" (--floating-base adds it)" if jname == ROOT_JOINT and floating_base else ""))
    chk.known(joint, JOINT_KEYS, where)
    jtype = chk.field(joint, "type", where)
    if not isinstance(jtype, str) or jtype not in MOVING + ("fixed",):
        chk.fail(f"{where}: unknown joint type {_show(jtype)} (expected {', '.join(MOVING)} or fixed)")
    if floating_base and jtype == "floating":
        chk.fail(f"{where}: the robot already has a floating joint (drop --floating-base)")
    parent, child = _joint_links(chk, joint, where, tree)
    R, xyz = _origin(chk, joint, where)
    axis = _axis(chk, joint, where) if jtype in MOVING and JOINT_TYPES[jtype].has_axis else None
    dynamics = {key: chk.number(joint[key], f"{where}: {key}") for key in JOINT_DYNAMICS if key in joint}
    check_joint_dynamics(chk.fail, dynamics, where)
    mimic = _mimic_entry(chk, joint["mimic"], where) if "mimic" in joint and jtype != "fixed" else None
    return jname, (jtype, parent, child, R, xyz, axis, dynamics), mimic


def _joint_links(chk, joint, where, tree):
    """A joint's parent and child links: defined, and no loop with the joints read so far."""
    parent = chk.name(chk.field(joint, "parent", where), f"{where}: parent")
    child = chk.name(chk.field(joint, "child", where), f"{where}: child")
    for role, lname in (("parent", parent), ("child", child)):
        if lname != tree.base and lname not in tree.links:
            chk.fail(f"{where}: {role} link '{lname}' is not defined")
    if child == parent:
        chk.fail(f"{where}: link '{child}' is its own parent (kinematic loop)")
    if child == tree.base:
        chk.fail(f"{where}: the base link '{tree.base}' cannot be a child (kinematic loop)")
    if child in tree.child_of:
        chk.fail(f"{where}: link '{child}' already has parent joint '{tree.child_of[child]}' (kinematic loop)")
    return parent, child


def _axis(chk, joint, where):
    """The unit axis of a joint that has one ([1, 0, 0] when the field is absent, as in URDF)."""
    axis = joint.get("axis")
    axis = chk.vector([1, 0, 0] if axis is None and "axis" not in joint else axis, f"{where}: axis")
    length = G.norm(axis)
    if not length >= 1e-9:
        chk.fail(f"{where}: axis has zero length")
    biggest = max(abs(x) for x in axis)   # scale first: [1e200, 1e200, 0] must not overflow
    axis = G.scale(1 / biggest, axis)
    return G.scale(1 / G.norm(axis), axis)


def _mimic_entry(chk, value, where):
    """(master joint name, multiplier, offset) of a joint's mimic entry."""
    chk.mapping(value, f"{where}: mimic")
    chk.known(value, MIMIC_KEYS, f"{where}: mimic")
    master = chk.name(chk.field(value, "joint", f"{where}: mimic"), f"{where}: mimic joint")
    return (master, chk.number(value.get("multiplier", 1.0), f"{where}: mimic multiplier"),
            chk.number(value.get("offset", 0.0), f"{where}: mimic offset"))


def _couple(chk, model, mimics):
    """The model whose mimic joints follow their masters (reduced coordinates, model.Mimic). A mimic
    of a mimic follows the first independent joint up the line (multipliers and offsets composed);
    a mimic of a joint the robot does not have as a moving joint (a vendor file's slip, a locked or
    fixed joint) is loaded as an independent joint, with a warning."""
    index = {j.name: k for k, j in enumerate(model.joints)}
    for jname, (master, _, _) in list(mimics.items()):
        if master not in index or master == jname:
            chk.warn(f"joint '{jname}': <mimic> follows '{master}', which is not " +
                     ("another joint" if master == jname else "a moving joint of the robot") +
                     ": loaded as an independent joint")
            del mimics[jname]

    def resolve(jname, seen):
        master, a, b = mimics[jname]
        if master not in mimics:
            return master, a, b
        if master in seen:
            chk.fail(f"joint '{jname}': <mimic> joints follow each other in a cycle ({', '.join(seen)})")
        top, a2, b2 = resolve(master, seen + (master,))
        return top, a * a2, a * b2 + b

    out = []
    for jname in mimics:
        master, multiplier, offset = resolve(jname, (jname,))
        if not (abs(multiplier) <= MIMIC_LIMIT and abs(offset) <= MIMIC_LIMIT):
            chk.fail(f"joint '{jname}': <mimic> multiplier {multiplier:g} and offset {offset:g} (composed along "
                     f"the mimics it follows) must lie within +-{MIMIC_LIMIT:g}: the dynamics hold their squares")
        k, m = index[jname], index[master]
        if model.joints[k].kind.nv != 1 or model.joints[m].kind.nv != 1:
            chk.fail(f"joint '{jname}': <mimic> couples 1-DoF joints only ('{master}' is {model.joints[m].type}, "
                     f"'{jname}' is {model.joints[k].type})")
        out.append(Mimic(k, m, float(multiplier), float(offset)))
    return replace(model, mimic=tuple(sorted(out, key=lambda x: x.joint)))


def check_joint_dynamics(fail, values, where):
    """Friction and armature: finite (checked by the caller) and, but for the offset, not negative."""
    for key, value in values.items():
        if JOINT_DYNAMICS[key] and value < 0:
            fail(f"{where}: {key} must not be negative, got {value!r}")


def coulomb_smoothing(fail, value, where="coulomb_smoothing"):
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(float(value)) \
            or float(value) < 0:
        fail(f"{where} must be a number >= 0 (0: sign(qd); delta > 0: tanh(qd/delta)), got {_show(value)}")
    if 0 < float(value) < sys.float_info.min:   # subnormal: 1/delta overflows to inf in the generated code
        fail(f"{where} must be 0 or at least {sys.float_info.min:.3g} (qd/delta overflows below), got {_show(value)}")
    return float(value)


def _check_tree(chk, tree):
    """One tree hanging from the base: no second root, no lonely link, no loop."""
    base, links, joints, child_of = tree.base, tree.links, tree.joints, tree.child_of
    used = {joints[j][1] for j in joints} | set(child_of)
    lonely = [lname for lname in links if lname not in used]
    if lonely:
        chk.fail(f"link '{lonely[0]}' is not connected to any joint")
    roots = [lname for lname in links if lname not in child_of]
    if roots:
        names = ", ".join(f"'{r}'" for r in [base] + roots)
        chk.fail(f"several root links ({names}): only the base '{base}' may lack a parent joint")
    reached, stack = {base}, [base]
    while stack:
        for jname in tree.children.get(stack.pop(), []):
            child = joints[jname][2]
            reached.add(child)
            stack.append(child)
    stray = [lname for lname in links if lname not in reached]
    if stray:
        # every link has one parent joint, so a link the walk from the base missed hangs off a cycle
        cycle, link, seen = [], stray[0], set()
        while link not in seen:
            seen.add(link)
            cycle.append(child_of[link])
            link = joints[child_of[link]][1]
        start = next(k for k, j in enumerate(cycle) if joints[j][2] == link)
        chk.fail("kinematic loop through joints " + " -> ".join(f"'{j}'" for j in cycle[start:]) +
                 f" (not connected to the base '{base}')")


class _Bodies:
    """What _merge builds as it walks the tree: the moving joints and, per body, its link's name, its inertial
    parameters and the part of them gravity compensation holds up; the frames; and per link its owner body
    (-1: the base) and the placement (R, p) of its frame in the owner's frame."""

    def __init__(self, base, links, gravcomp):
        self.links, self.gravcomp = links, gravcomp
        self.joints, self.names, self.params, self.compensated = [], [], [], []
        self.frames = [Frame(base, "link", -1, G.IDENTITY, G.ZERO)]
        self.placement = {base: (-1, G.IDENTITY, G.ZERO)}

    def merge(self, jname, child, owner, R, p, has_children):
        """A link on a fixed joint: its parameters join its owner body's; the joint and the link become frames."""
        params = self.links[child][:3]
        self.placement[child] = (owner, R, p)
        if owner >= 0:
            self.params[owner] = G.add_parameters(self.params[owner], G.moved_parameters(R, p, *params))
            self.compensated[owner] = _compensated(self.compensated[owner], self.gravcomp.get(child, 0.0), R, p, params)
        placement = (G.snap_matrix(R), G.snap_vector(p))
        leaf = owner >= 0 and not has_children     # a moving link without child links
        self.frames += [Frame(jname, "fixed-joint", owner, *placement, leaf), Frame(child, "link", owner, *placement, leaf)]

    def add(self, joint, child, has_children):
        """A link on a moving joint: a new body, whose frame is the link's."""
        params = self.links[child][:3]
        self.joints.append(joint)
        self.params.append(G.moved_parameters(G.IDENTITY, G.ZERO, *params))
        self.compensated.append(_compensated((0.0,) * 4, self.gravcomp.get(child, 0.0), G.IDENTITY, G.ZERO, params))
        self.names.append(child)
        k = len(self.joints) - 1
        self.placement[child] = (k, G.IDENTITY, G.ZERO)
        leaf = not has_children
        self.frames += [Frame(joint.name, "joint", k, G.IDENTITY, G.ZERO, leaf),
                        Frame(child, "link", k, G.IDENTITY, G.ZERO, leaf)]


def _merge(chk, tree, desc):
    """Walk the tree from the base depth first, children in the order of the joint list (Pinocchio's
    order, so that q vectors are interchangeable): moving joints make bodies, fixed joints merge
    into the owner. Every link and joint keeps its frame, placed in its owner body's frame.
    Returns the moving joints, the bodies and the frames."""
    gravcomp = {link.get("name"): float(link.get("gravcomp", 0.0)) for link in desc.get("links") or ()}
    walk = _Bodies(tree.base, tree.links, gravcomp)
    stack = list(reversed(tree.children.get(tree.base, [])))
    with np.errstate(all="ignore"):          # overflow is reported below, as a message
        while stack:
            jname = stack.pop()
            jtype, lname, child, R, xyz, axis, dynamics = tree.joints[jname]
            owner, Ro, po = walk.placement[lname]
            Rc, pc = G.compose((Ro, po), (R, xyz))
            has_children = bool(tree.children.get(child))
            if jtype == "fixed":
                walk.merge(jname, child, owner, Rc, pc, has_children)
            else:
                if JOINT_TYPES[jtype].nv != 1 and any(dynamics.values()):
                    chk.fail(f"joint '{jname}': friction and armature are for 1-DoF joints, not {jtype} joints")
                walk.add(Joint(jname, JOINT_TYPES[jtype].name, owner, G.snap_matrix(Rc), G.snap_vector(pc),
                               (0.0, 0.0, 0.0) if axis is None else G.snap_vector(axis), **dynamics), child, has_children)
            stack.extend(reversed(tree.children.get(child, [])))
    if not walk.joints:
        chk.fail("the robot has no moving joints")
    bodies = _checked_bodies(chk, walk)
    _check_axes(chk, walk.joints, bodies)
    return tuple(walk.joints), tuple(bodies), tuple(walk.frames)


def _checked_bodies(chk, walk):
    """The Body of each moving joint; parameters or frame positions that overflow, or parameters that
    underflow, are refused."""
    bodies = []
    for j, lname, params, gc in zip(walk.joints, walk.names, walk.params, walk.compensated):
        if not all(math.isfinite(x) and abs(x) <= 1e300 for x in params + j.offset):
            chk.fail(f"link '{lname}': its inertial parameters overflow (numbers too large)")
        params = _flush_noise(params)
        if any(0.0 < abs(x) < sys.float_info.min for x in params):   # subnormal: 1/m would be inf in the code
            chk.fail(f"link '{lname}': its inertial parameters underflow (a mass, first moment or inertia below "
                     f"{sys.float_info.min:.3g} in magnitude): use other units")
        bodies.append(Body(lname, tuple(float(x) for x in params), tuple(float(x) for x in gc) if any(gc) else ()))
    for f in walk.frames:
        if not all(math.isfinite(x) and abs(x) <= 1e300 for x in f.translation):
            chk.fail(f"link '{f.name}': its position overflows (numbers too large)")
    return bodies


def _compensated(total, fraction, R, p, params):
    """total + fraction (m, m c) of a link at (R, p): the mass and first moment whose weight MuJoCo's
    gravcomp holds up (Body.gravcomp)."""
    if not fraction:
        return total
    return G.add_parameters(total, tuple(fraction * x for x in G.moved_parameters(R, p, *params)[:4]))


def _flush_noise(params):
    """The body's parameters with a subnormal first moment or inertia entry that is below the rounding
    noise of its largest parameter set to zero: what a rotation by a tiny angle (--lock j=1e-320) leaves
    in a merged link, not a value in the wrong units (a subnormal mass stays, and is refused)."""
    noise = sys.float_info.epsilon * max(abs(x) for x in params)
    return [params[0]] + [0.0 if 0.0 < abs(x) < min(noise, sys.float_info.min) else x for x in params[1:]]


def _check_axes(chk, joints, bodies):
    """Warn about a joint whose moving links have no inertia about (revolute) or no mass along
    (prismatic) its axis, and about a free-flyer whose own link is massless while joints below it
    move (what they do can undo any motion of the massless link: zero kinetic energy, M singular).

    Its articulated inertia D(k) is then zero at q = 0 (D(k) is at most the inertia of the links
    it moves, locked together, about its axis), so the mass matrix is singular and the forward
    dynamics divide by zero: e.g. a last link that is a point mass on its own joint axis, or a
    massless (virtual) leaf link, which Pinocchio loads too.
    """
    R, p, com, Ic, mass = [], [], [], [], []
    for j, b in zip(joints, bodies):
        Rp, pp = (R[j.parent], p[j.parent]) if j.parent >= 0 else (G.IDENTITY, G.ZERO)
        R.append(G.matmul(Rp, j.rotation))
        p.append(G.add(pp, G.matvec(Rp, j.offset)))
        m = b.params[0]
        c = G.scale(1 / m, b.params[1:4]) if m > 0 else G.ZERO
        Ixx, Ixy, Iyy, Ixz, Iyz, Izz = b.params[4:]
        cc = G.dot(c, c)
        J = tuple(tuple(x - m * ((cc if r == s else 0.0) - c[r] * c[s]) for s, x in enumerate(row))
                  for r, row in enumerate(((Ixx, Ixy, Ixz), (Ixy, Iyy, Iyz), (Ixz, Iyz, Izz))))
        com.append(G.add(p[-1], G.matvec(R[-1], c)))
        Ic.append(G.congruence(R[-1], J))
        mass.append(m)
    subtree = [[k] for k in range(len(joints))]
    for k in reversed(range(len(joints))):
        if joints[k].parent >= 0:
            subtree[joints[k].parent] += subtree[k]
    for k, j in enumerate(joints):
        if j.kind.nv > 1 and len(subtree[k]) > 1 and not any(bodies[k].params) and undone_by_children(k, joints):
            chk.warn(f"joint '{j.name}': its link '{bodies[k].name}' has no mass and no inertia, and the joints "
                     "below it can undo a motion of it (a massless floating base): the mass matrix is singular "
                     "(forward dynamics, mass_matrix_inverse and the diagonalized functions divide by zero)")
            continue
        if j.type != "revolute":
            if sum(mass[i] for i in subtree[k]) <= 0:
                chk.warn(f"joint '{j.name}': the links it moves have no mass: the mass matrix is singular "
                         "(forward dynamics, mass_matrix_inverse and the diagonalized functions divide by zero)")
            continue
        a, o = G.matvec(R[k], j.axis), p[k]
        about_axis = about_origin = 0.0
        for i in subtree[k]:
            arm = G.sub(com[i], o)
            lever = G.cross(arm, a)
            about_axis += G.dot(a, G.matvec(Ic[i], a)) + mass[i] * G.dot(lever, lever)
            about_origin += (Ic[i][0][0] + Ic[i][1][1] + Ic[i][2][2]) / 2 + mass[i] * G.dot(arm, arm)
        if not (math.isfinite(about_axis) and math.isfinite(about_origin)):
            chk.fail(f"joint '{j.name}': the inertia of the links it moves overflows (numbers too large)")
        if about_axis <= SINGULAR * about_origin:
            chk.warn(f"joint '{j.name}': the links it moves have no inertia about its axis: the mass matrix is "
                     "singular (forward dynamics, mass_matrix_inverse and the diagonalized functions divide by zero)")
