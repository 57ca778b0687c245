"""Choosing the part of a robot you want: locked joints and the sub-tree between two links.

Both act on a validated description (the dictionary of symdyn.readers.description), before the model is
built, so the recursions never see them:

- `lock`: {joint: value}. The joint becomes `fixed` at that value (rad or m; default 0): its motion
  is folded into its origin, so the links it moved are merged into the parent body with their
  mass. The usual way to drop a gripper's fingers.
- `root`: a link that becomes the fixed base. Everything above it is dropped; gravity is turned
  into its frame at the configuration of the dropped joints (zero, or their --lock values).
- `tip`: keep only the path from the root to this link (KDL's chain): moving branches that leave
  the path are dropped with their sub-trees; links rigidly attached to a kept link (fixed joints:
  tool flanges, cameras) are kept. The dropped branches' mass is not carried: lock them instead to
  keep it.
"""
from dataclasses import dataclass, field
from typing import Dict, Optional

from ..multibody import geometry as G
from ..errors import RobotFileError
from ..multibody.joints import JOINT_TYPES


@dataclass(frozen=True)
class Selection:
    lock: Dict[str, float] = field(default_factory=dict)
    root: Optional[str] = None
    tip: Optional[str] = None

    def __bool__(self):
        return bool(self.lock) or self.root is not None or self.tip is not None

    def describe(self):
        """One line for the generated header, e.g. `lock finger1=0.04; root base_link; tip tool0`."""
        parts = []
        if self.lock:
            parts.append("lock " + ", ".join(f"{name}={value!r}" for name, value in self.lock.items()))
        if self.root is not None:
            parts.append(f"root {self.root}")
        if self.tip is not None:
            parts.append(f"tip {self.tip}")
        return "; ".join(parts)


def parse_lock(text):
    """`JOINT[=VALUE],...` -> {joint: value}; ValueError with a one-line message."""
    out = {}
    for item in (x.strip() for x in text.split(",")):
        if not item:
            continue
        name, _, value = item.partition("=")
        name = name.strip()
        if not name:
            raise ValueError(f"--lock: empty joint name in {item!r}")
        try:
            number = float(value) if value.strip() else 0.0
        except ValueError:
            raise ValueError(f"--lock: {name}: {value.strip()!r} is not a number") from None
        if number != number or number in (float("inf"), float("-inf")):
            raise ValueError(f"--lock: {name}: the value must be finite")
        if name in out:
            raise ValueError(f"--lock: joint {name!r} given twice")
        out[name] = number
    return out


def select(desc, selection, path):
    """The description with `selection` applied (a new dictionary; `desc` is left unchanged)."""
    joints = [dict(j) for j in desc["joints"]]
    links = {link["name"]: link for link in desc["links"]}
    base = desc.get("base", "base")
    by_name = {j["name"]: j for j in joints}
    for name, value in selection.lock.items():
        if name not in by_name:
            raise RobotFileError(path, f"--lock: no joint named {_quote(name)}")
        if by_name[name]["type"] == "fixed":
            raise RobotFileError(path, f"--lock: joint {_quote(name)} is already fixed")
        kind = JOINT_TYPES.get(by_name[name]["type"])
        if kind is None or kind.nv != 1:
            raise RobotFileError(path, f"--lock: joint {_quote(name)} is {by_name[name]['type']}: only joints "
                                       "with one degree of freedom can be locked at a value")
        _lock(by_name[name], value)
    gravity = tuple(desc.get("gravity", G.DEFAULT_GRAVITY))
    if selection.root is not None and selection.root != base:
        joints, gravity = _reroot(joints, links, base, selection.root, gravity, path)
        base = selection.root
    if selection.tip is not None:
        joints = _chain(joints, links, base, selection.tip, path)
    kept = {j["child"] for j in joints}
    out = dict(desc, base=base, gravity=list(gravity), joints=joints,
               links=[link for name, link in links.items() if name in kept])
    if base != desc.get("base", "base"):            # the new base's own inertia (it counts if the base floats)
        out["base_link"] = links[base]
    return out


def _quote(name):
    text = repr(name)
    return text if len(text) <= 60 else text[:60] + "..."


def _origin(joint):
    """(R, p) of a validated joint origin."""
    origin = joint.get("origin") or {}
    p = tuple(float(x) for x in origin.get("xyz", (0, 0, 0)))
    if "rotation" in origin:
        return tuple(tuple(float(x) for x in row) for row in origin["rotation"]), p
    return G.rpy_matrix(*(float(x) for x in origin.get("rpy", (0, 0, 0)))), p


def _axis(joint):
    axis = tuple(float(x) for x in joint.get("axis") or (1.0, 0.0, 0.0))
    return G.scale(1 / G.norm(axis), axis)


def _lock(joint, value):
    """Fold the joint's motion at `value` into its origin and make it fixed."""
    R, p = _origin(joint)
    h = _axis(joint)
    if joint["type"] == "prismatic":
        p = G.add(p, G.matvec(R, G.scale(value, h)))
    else:
        R = G.matmul(R, G.axis_rotation(h, value))
    joint["type"] = "fixed"
    joint["origin"] = {"xyz": list(p), "rotation": [list(row) for row in R]}
    joint.pop("axis", None)


def _parent_joint(joints):
    return {j["child"]: j for j in joints}


def _path_to(joints, base, link, role, path, known=()):
    """Joints from the base down to `link`."""
    parent_joint = _parent_joint(joints)
    if link != base and link not in parent_joint:
        if link in known:
            raise RobotFileError(path, f"--{role}: link {_quote(link)} is not below the base {_quote(base)}")
        raise RobotFileError(path, f"--{role}: no link named {_quote(link)}")
    chain = []
    while link != base:
        chain.append(parent_joint[link])
        link = parent_joint[link]["parent"]
    return chain[::-1]


def _reroot(joints, links, base, root, gravity, path):
    """Keep the sub-tree below `root`; gravity in root's frame at the dropped joints' (locked) values."""
    above = _path_to(joints, base, root, "root", path, links)
    R = G.IDENTITY
    for joint in above:
        R = G.matmul(R, _origin(joint)[0])     # moving joints at zero: a locked one is already fixed
    gravity = tuple(x + 0.0 for x in G.matvec(G.transpose(R), gravity))
    keep = _subtree(joints, root)
    return [j for j in joints if j["name"] in keep], gravity


def _subtree(joints, link):
    """Names of the joints below `link`."""
    children = {}
    for j in joints:
        children.setdefault(j["parent"], []).append(j)
    found, stack = set(), [link]
    while stack:
        for j in children.get(stack.pop(), []):
            found.add(j["name"])
            stack.append(j["child"])
    return found


def _chain(joints, links, base, tip, path):
    """The path from the base to `tip`, with what is rigidly attached to it."""
    on_path = {j["name"] for j in _path_to(joints, base, tip, "tip", path, links)}
    path_links = {base} | {j["child"] for j in joints if j["name"] in on_path}
    children = {}
    for j in joints:
        children.setdefault(j["parent"], []).append(j)
    keep, stack = set(on_path), list(path_links)
    while stack:             # fixed joints hanging off kept links, and off those, and so on
        for j in children.get(stack.pop(), []):
            if j["name"] not in keep and j["type"] == "fixed":
                keep.add(j["name"])
                stack.append(j["child"])
    return [j for j in joints if j["name"] in keep]
