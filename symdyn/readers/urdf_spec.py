"""What the URDF specification defines inside <robot>, <link>, <joint> and <inertial>, and a check
that warns about anything else (a typo such as <orign> would otherwise be ignored silently: every
URDF parser, Pinocchio's too, skips what it does not know, and the model changes without a word).

Known extensions are not warned about: whole elements (<gazebo>, <transmission>, <ros2_control>,
<sensor>, <mujoco>, Gazebo's and PyBullet's link properties, anything in an XML namespace such as
drake:), and vendor attributes of <dynamics> and <limit> unless they look like a misspelled URDF
attribute (`dampng`). The contents of <visual>, <collision>, <material> and of the extensions are
not checked: they do not change the dynamics.
"""
import difflib
import xml.parsers.expat

from symdyn.multibody.geometry import INERTIA_KEYS

_ROBOT_CHILDREN = {"link", "joint", "material", "transmission", "gazebo", "ros2_control", "sensor", "mujoco"}
#: link children of simulators (Gazebo's <gravity>, <kinematic>, ...; PyBullet's <contact>)
_LINK_EXTENSIONS = {"contact", "gravity", "kinematic", "surface", "self_filter", "collision_checking"}

#: tag -> (attributes, child elements, open): an open element takes vendor attributes (only near misses
#: of its own are warned about); elements not listed here are not looked into
SPEC = {
    "robot": ({"name", "version"}, _ROBOT_CHILDREN, False),
    "link": ({"name", "type"}, {"inertial", "visual", "collision"} | _LINK_EXTENSIONS, False),
    "joint": ({"name", "type", "dont_collapse"},
              {"origin", "parent", "child", "axis", "calibration", "dynamics", "limit", "mimic", "safety_controller"},
              False),
    "inertial": (set(), {"origin", "mass", "inertia"}, False),
    "origin": ({"xyz", "rpy"}, set(), False),
    "mass": ({"value"}, set(), False),
    "inertia": (set(INERTIA_KEYS), set(), False),
    "axis": ({"xyz"}, set(), False),
    "parent": ({"link"}, set(), False),
    "child": ({"link"}, set(), False),
    "calibration": ({"rising", "falling", "reference_position"}, set(), False),
    "mimic": ({"joint", "multiplier", "offset"}, set(), False),
    "safety_controller": ({"soft_lower_limit", "soft_upper_limit", "k_position", "k_velocity"}, set(), False),
    "dynamics": ({"damping", "friction"}, set(), True),
    "limit": ({"lower", "upper", "effort", "velocity"}, set(), True),
}

#: how close a vendor attribute of an open element must be to a URDF one to be taken for a typo
_NEAR_MISS = 0.8


def unknown_markup(root, raw):
    """One line per element or attribute below `root` (the <robot>) that URDF does not define:
    'line N: <orign> in joint 'j' is not URDF: ignored (did you mean <origin>?)'. `raw`: the file's
    bytes, parsed again for the line numbers only when there is something to say."""
    found = []                                  # (index of the element in document order, message)
    elements = list(root.iter())
    index = {id(e): k for k, e in enumerate(elements)}
    namespace = root.tag[:root.tag.index("}") + 1] if root.tag.startswith("{") else ""   # a default xmlns
    _check(root, "robot", f"robot '{root.get('name')}'", (index, namespace), found)
    if not found:
        return []
    lines = _start_lines(raw, len(elements))
    return [(f"line {lines[k]}: " if lines else "") + message for k, message in found]


def _check(element, tag, owner, where, found):
    index, namespace = where
    attributes, children, vendor = SPEC[tag]
    for name in element.attrib:
        if "}" in name or name in attributes:
            continue                            # namespaced attributes are extensions
        guess = difflib.get_close_matches(name, sorted(attributes), 1, _NEAR_MISS if vendor else 0.6)
        if vendor and not guess:
            continue
        hint = f" (did you mean '{guess[0]}'?)" if guess else ""
        found.append((index[id(element)], f"attribute '{name}' of <{tag}> in {owner} is not URDF: ignored{hint}"))
    for child in element:
        name = child.tag if isinstance(child.tag, str) else "}"
        name = name[len(namespace):] if namespace and name.startswith(namespace) else name
        if "}" in name:
            continue                            # comments; elements in a namespace (drake:, xacro:) are extensions
        if name not in children:
            guess = difflib.get_close_matches(name, sorted(children), 1, 0.6)
            hint = f" (did you mean <{guess[0]}>?)" if guess else ""
            found.append((index[id(child)], f"<{name}> in {owner} is not URDF: ignored{hint}"))
        elif name in SPEC:
            _check(child, name, _owner(child, name, owner), where, found)


def _owner(element, tag, owner):
    if tag in ("link", "joint"):
        return f"{tag} '{element.get('name')}'"
    return f"{owner} <{tag}>" if tag == "inertial" else owner


def _start_lines(raw, count):
    """The line of each element's start tag, in document order (ElementTree keeps no positions), or
    None if this second parse does not see the same elements."""
    lines = []
    parser = xml.parsers.expat.ParserCreate()
    parser.StartElementHandler = lambda name, attributes: lines.append(parser.CurrentLineNumber)
    try:
        parser.Parse(raw, True)
    except (xml.parsers.expat.ExpatError, ValueError, LookupError):
        return None
    return lines if len(lines) == count else None
