"""The body tree of an MJCF file as symdyn's description (links, joints), with masses as MuJoCo computes them.

See symdyn.readers.mjcf for what is read. Poses are (R, p) numpy pairs: a frame at p with axes R in
its parent's frame.
"""
import math
import os

import numpy as np

from .mjcf import IGNORED, JOINT_TYPES, UNSUPPORTED, axis_angle_matrix, read_obj, read_stl, z_to_matrix
from ..multibody.geometry import INERTIA_KEYS

IDENTITY = (np.eye(3), np.zeros(3))


def compose(a, b):
    return a[0] @ b[0], a[0] @ b[1] + a[1]


def inverse(a):
    return a[0].T, -a[0].T @ a[1]


def matrix_quat(R):
    """The unit quaternion (w, x, y, z), w >= 0, of a rotation matrix (Shepperd's method)."""
    w2 = np.array([1 + R[0, 0] + R[1, 1] + R[2, 2], 1 + R[0, 0] - R[1, 1] - R[2, 2],
                   1 - R[0, 0] + R[1, 1] - R[2, 2], 1 - R[0, 0] - R[1, 1] + R[2, 2]])
    k = int(np.argmax(w2))
    q = np.empty(4)
    q[k] = math.sqrt(w2[k]) / 2
    pairs = {0: ((2, 1), (0, 2), (1, 0)), 1: ((2, 1), (0, 1), (0, 2)), 2: ((0, 2), (0, 1), (1, 2)),
             3: ((1, 0), (0, 2), (1, 2))}
    others = [i for i in range(4) if i != k]
    for i, (a, b) in zip(others, pairs[k]):
        q[i] = (R[a, b] - R[b, a] if k == 0 or i == 0 else R[a, b] + R[b, a]) / (4 * q[k])
    q = q / np.linalg.norm(q)
    return q if q[0] >= 0 else -q


def is_identity(pose):
    return np.array_equal(pose[0], np.eye(3)) and not np.any(pose[1])


class _Body:
    """What a body holds: its geoms and sites (pose in the body frame), joints, inertial, child bodies."""

    def __init__(self, element, name, parent, pose, childclass):
        self.element, self.name, self.parent, self.pose, self.childclass = element, name, parent, pose, childclass
        self.geoms, self.sites, self.joints, self.children, self.inertial = [], [], [], [], None


def build_description(c):
    """(description, extras) of the compiled tree: see symdyn.readers.mjcf.read_mjcf."""
    world = _Body(None, "world", None, IDENTITY, None)
    bodies = [world]
    for wb in c.root.findall("worldbody"):
        _collect(c, wb, world, IDENTITY, wb.get("childclass"), bodies)
    gravity = _gravity(c)
    _tendon_forces(c)
    c.springdamper, c.springs, c.refs, c.qpos0, c.joint_types, c.multi_dof = {}, [], {}, [], {}, {}
    links, joints, sites, world_pose, site_poses = _emit(c, bodies)
    _warn_springs(c)
    _apply_total_mass(c, links)
    ignored = sorted({e.tag for e in c.root.iter() if e.tag in IGNORED} | _frictionloss(c, bodies))
    desc = {"name": c.root.get("model", "MuJoCo Model"), "gravity": gravity, "base": "world",
            "source": f"MJCF {os.path.basename(c.path)}" + (
                f" (ignored: {', '.join(ignored)}: they do not change these dynamics)" if ignored else ""),
            "links": links, "joints": joints}
    from .mjcf_equality import equality_constraints
    return desc, {"sites": sites, "constraints": equality_constraints(c, world_pose, site_poses), "springdamper": (c.springdamper, c.refs),
                  "qpos0": c.qpos0, "multi_dof": c.multi_dof}


def _gravity(c):
    gravity = [0.0, 0.0, -9.81]
    for option in c.root.findall("option"):
        attrs = c.attrs(option, None)
        gravity = attrs.vec("gravity", 3, gravity)
        if attrs.number("density") or attrs.number("viscosity"):
            c.warn("<option density/viscosity>: MuJoCo's fluid forces are not modelled: left out")
        for flag in option.findall("flag"):
            if flag.get("gravity") == "disable":
                gravity = [0.0, 0.0, 0.0]
    return [float(g) for g in gravity]


def _tendon_forces(c):
    """Warn about tendons with springs or damping: MuJoCo passive forces symdyn does not model."""
    for tendon in c.root.iter("tendon"):
        for t in tendon:
            a = c.attrs(t, None)
            if a.number("stiffness") or a.number("damping"):
                c.warn(f"tendon '{t.get('name', '')}': its stiffness and damping (MuJoCo passive forces) are not "
                       "modelled: left out")


def multi_dof_dynamics(model, values):
    """The model whose ball and free joints have the damping and armature `values` ({joint: {field: value}}):
    MuJoCo applies each to every DoF of the joint (the description formats keep these for 1-DoF joints)."""
    from dataclasses import replace
    joints = tuple(replace(j, **values[j.name]) if values.get(j.name) else j for j in model.joints)
    return replace(model, joints=joints)


def springdamper_damping(model, springdamper, refs):
    """The model whose joints with MuJoCo's springdamper="timeconst dampratio" have MuJoCo's damping
    2 / (timeconst w0) and stiffness 1 / (w0 (timeconst dampratio)^2), w0 their diagonal entry of the inverse mass matrix (armature included) at qpos0
    (MuJoCo's dof_invweight0: the joint's effective inertia is 1 / w0)."""
    from dataclasses import replace
    from ..engine import Engine
    if not springdamper:
        return model
    q0 = np.concatenate([[refs[j.name]] if j.name in refs else j.kind.neutral() for j in model.joints])
    w0 = np.diag(np.linalg.inv(Engine(model).mass_matrix(q0)))
    joints = list(model.joints)
    for k, j in enumerate(joints):
        if j.name in springdamper:
            timeconst, dampratio = springdamper[j.name]
            inertia = 1 / w0[model.v_slices[k][0]]
            joints[k] = replace(j, damping=float(2 * inertia / timeconst),
                                stiffness=float(inertia / (timeconst * dampratio) ** 2))
    return replace(model, joints=tuple(joints))


def _frictionloss(c, bodies):
    """{'frictionloss'} when a joint has one (a constraint in MuJoCo, not a force law: ignored)."""
    return {"frictionloss"} if any(a.number("frictionloss") for b in bodies for a in b.joints) else set()


def _collect(c, element, body, pose, childclass, bodies):
    """Walk the children of a body, world body or <frame> at `pose` in `body`'s frame."""
    for child in element:
        tag = child.tag
        if tag == "body":
            attrs = c.attrs(child, childclass)
            cls = child.get("childclass", childclass)
            name = child.get("name") or f"body{len(bodies)}"
            new = _Body(child, name, body, compose(pose, _pose(c, attrs)), cls)
            bodies.append(new)
            body.children.append(new)
            _collect(c, child, new, IDENTITY, cls, bodies)
        elif tag == "frame":
            attrs = c.attrs(child, childclass)
            _collect(c, child, body, compose(pose, _pose(c, attrs)), child.get("childclass", childclass), bodies)
        elif tag in ("geom", "site"):
            attrs = c.attrs(child, childclass)
            getattr(body, tag + "s").append((attrs, compose(pose, _pose(c, attrs, fromto=True))))
        elif tag in ("joint", "freejoint"):
            if element.tag != "body":
                c.fail(f"<{tag}> must be a child of a <body>, not of <{element.tag}>", child)
            body.joints.append(c.attrs(child, childclass))
        elif tag == "inertial":
            body.inertial = c.attrs(child, childclass)
        elif tag in UNSUPPORTED:
            c.fail(f"<{tag}> is not supported (expand it into bodies first, e.g. with MuJoCo's mj_saveLastXML)", child)


def _pose(c, attrs, fromto=False):
    """(R, p) of an element's pos and orientation (or fromto: the segment's middle, z along it, pointing
    from `to` to `from` as MuJoCo turns it)."""
    if fromto and attrs.get("fromto") is not None:
        ends = np.array(attrs.vec("fromto", 6))
        direction = ends[:3] - ends[3:]
        if not np.linalg.norm(direction) > 0:
            attrs.fail("fromto has zero length")
        return z_to_matrix(direction), (ends[:3] + ends[3:]) / 2
    return c.orientation(attrs), np.array(attrs.vec("pos", 3, [0.0, 0.0, 0.0]))


# --- joints and links ----------------------------------------------------------------------

class _Names:
    """Unique names in one namespace: the file's names are reserved, derived names get a suffix."""

    def __init__(self, reserved):
        self.used = set(reserved)

    def take(self, name, owned=False):
        if owned:
            return name
        out, k = name, 1
        while out in self.used:
            k += 1
            out = f"{name}_{k}"
        self.used.add(out)
        return out


def _emit(c, bodies):
    """Links and joints (depth first, MuJoCo's body order, joints in file order) and the site names."""
    body_names = {b.name for b in bodies}
    link_names = _Names(body_names | {a.get("name") for b in bodies for a, _ in b.sites if a.get("name")})
    joint_names = _Names([a.get("name") for b in bodies for a in b.joints if a.get("name")])
    links, joints, sites, site_poses = [], [], [], {}
    world_pose = {"world": IDENTITY}
    for body in bodies[1:]:
        world_pose[body.name] = body.world = compose(world_pose[body.parent.name], body.pose)
        last, offset = _emit_joints(c, body, links, joints, link_names, joint_names)
        links.append(_link(c, body))
        if last is None:                   # no joint: welded to its parent
            joints.append(_joint(joint_names.take(body.name), "fixed", body.parent.name, body.name, body.pose))
        elif last != body.name:            # the last joint's anchor is not the body frame
            joints.append(_joint(joint_names.take(body.name), "fixed", last, body.name, offset))
    for body in bodies:
        for k, (attrs, pose) in enumerate(body.sites):
            # a site named like a body (MuJoCo keeps them apart) becomes NAME_site: the body keeps its name
            name = attrs.get("name")
            name = (link_names.take(f"{name}_site") if name in body_names else name) if name else \
                link_names.take(f"{body.name}_site{k}")
            sites.append(name)
            if attrs.get("name"):
                site_poses[attrs.get("name")] = (body.name, pose)
            links.append({"name": name, "mass": 0.0})
            joints.append(_joint(joint_names.take(name), "fixed", body.name, name, pose))
    return links, joints, sites, world_pose, site_poses


def _joint(name, jtype, parent, child, pose, **extra):
    R, p = pose
    return {"name": name, "type": jtype, "parent": parent, "child": child,
            "origin": {"xyz": [float(x) for x in p], "rotation": [[float(x) for x in row] for row in R]}, **extra}


def _emit_joints(c, body, links, joints, link_names, joint_names):
    """The chain of a body's joints: joint i at its anchor, the body frame at `offset` from the last.
    Returns (the last joint's child link or None, offset); the last joint's child is renamed by the caller."""
    previous, offset, last = body.parent.name, body.pose, None
    for i, a in enumerate(body.joints):
        jtype = "free" if a.element.tag == "freejoint" else a.get("type", "hinge")
        if jtype not in JOINT_TYPES:
            a.fail(f"unknown joint type '{jtype}' (expected hinge, slide, ball or free)")
        name = a.get("name") or joint_names.take(f"{body.name}_{jtype}")
        anchor = np.array(a.vec("pos", 3, [0.0, 0.0, 0.0]))
        axis = np.array(a.vec("axis", 3, [0.0, 0.0, 1.0]))
        if jtype in ("hinge", "slide") and not np.linalg.norm(axis) > 0:
            a.fail("axis has zero length")
        axis = axis / np.linalg.norm(axis) if np.linalg.norm(axis) > 0 else axis
        ref = a.number("ref")
        if jtype == "hinge":
            ref = c._angle(ref)
            origin = compose(offset, (axis_angle_matrix(axis, -ref), anchor))
        elif jtype == "slide":
            origin = compose(offset, (np.eye(3), anchor - ref * axis))
        elif jtype == "ball":
            origin = compose(offset, (np.eye(3), anchor))
        else:
            if a.get("align", "auto") == "true":
                a.fail("align='true' is not supported (it moves the free body's frame to its COM)")
            if body.parent.name != "world" or len(body.joints) > 1:
                a.fail(f"a free joint must be the only joint of a body of the world (body '{body.name}')")
            origin, anchor = IDENTITY, np.zeros(3)
        springdamper = a.vec("springdamper", 2)
        if springdamper is not None and min(springdamper) > 0 and jtype in ("hinge", "slide"):
            c.springdamper[name] = tuple(springdamper)     # damping set from the inertia at qpos0 (load.py)
        c.joint_types[name] = jtype
        if jtype in ("hinge", "slide"):
            c.refs[name] = ref
        c.qpos0 += [ref] if jtype in ("hinge", "slide") else [1.0, 0.0, 0.0, 0.0] if jtype == "ball" else \
            list(body.world[1]) + list(matrix_quat(body.world[0]))
        _passive(c, a, name, jtype)
        if a.get("actuatorgravcomp", "false") == "true":
            c.warn(f"joint '{name}': actuatorgravcomp: MuJoCo applies its gravcomp through the actuators (none with "
                   f"actuation off); symdyn counts it as a passive force")
        extra = {"axis": [float(x) for x in axis]} if jtype in ("hinge", "slide") else {}
        dynamics = {k: a.number(k) for k in ("damping", "armature", "stiffness") if a.number(k)}
        if jtype in ("hinge", "slide") and a.number("springref"):
            dynamics["springref"] = c._angle(a.number("springref")) if jtype == "hinge" else a.number("springref")
        if jtype in ("ball", "free"):     # damping and armature on each DoF, set on the model (load.py); springs: _passive
            c.multi_dof[name] = {k: v for k, v in dynamics.items() if k in ("damping", "armature")}
            dynamics = {}
        child = link_names.take(name) if i < len(body.joints) - 1 else body.name
        if i < len(body.joints) - 1:
            links.append({"name": child, "mass": 0.0})
        joints.append(_joint(name, JOINT_TYPES[jtype], previous, child, origin, **extra, **dynamics))
        previous, offset, last = child, (np.eye(3), -anchor), child
    if last is not None and not is_identity(offset):
        anchor_link = link_names.take(joints[-1]["name"])
        links.append({"name": anchor_link, "mass": 0.0})
        joints[-1]["child"] = anchor_link
        return anchor_link, offset
    return last, offset


def _passive(c, a, name, jtype):
    """Note the ball and free joints with springs, a MuJoCo passive force symdyn does not model yet (one
    warning in all; hinge and slide springs are modelled: symdyn.recursions.friction; a ball or free joint's
    damping and armature too: multi_dof_dynamics)."""
    if jtype in ("ball", "free") and (a.number("stiffness") or name in c.springdamper):
        c.springs.append(name)


def _warn_springs(c):
    if c.springs:
        shown = ", ".join(c.springs[:6]) + (f" and {len(c.springs) - 6} more" if len(c.springs) > 6 else "")
        c.warn(f"the stiffness of ball and free joints (and a springdamper's damping) is not modelled yet: the "
               f"generated functions leave out the spring forces of {shown}")


# --- masses --------------------------------------------------------------------------------

def _link(c, body):
    """The link entry of a body: mass, COM and inertia about the COM in the body frame."""
    mass, com, I = _mass_properties(c, body)
    mass, I = _bounded(c, mass, I)
    gravcomp = float(body.element.get("gravcomp", "0") or 0) if body.element is not None else 0.0
    return {"name": body.name, "mass": float(mass), "com": [float(x) for x in com],
            "inertia": {k: float(I["xyz".index(k[1]), "xyz".index(k[2])]) for k in INERTIA_KEYS},
            **({"gravcomp": gravcomp} if gravcomp else {})}


def _mass_properties(c, body):
    if body.inertial is not None and c.inertiafromgeom != "true":
        return _inertial(c, body.inertial)
    if c.inertiafromgeom == "false" or (body.inertial is None and not body.geoms and c.inertiafromgeom == "auto"):
        return 0.0, np.zeros(3), np.zeros((3, 3))
    parts = [p for p in (_geom_mass(c, body, a, pose) for a, pose in body.geoms) if p is not None]
    mass = sum(p[0] for p in parts)
    if not mass > 0:
        return 0.0, np.zeros(3), np.zeros((3, 3))
    com = sum(p[0] * p[1] for p in parts) / mass
    I = np.zeros((3, 3))
    for m, p, Ic in parts:
        d = p - com
        I += Ic + m * (np.dot(d, d) * np.eye(3) - np.outer(d, d))
    return mass, com, I


def _inertial(c, a):
    mass = a.number("mass")
    R = c.orientation(a)
    if a.get("fullinertia") is not None:
        xx, yy, zz, xy, xz, yz = a.vec("fullinertia", 6)
        I = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
    else:
        I = np.diag(a.vec("diaginertia", 3, [0.0, 0.0, 0.0]))
    return mass, np.array(a.vec("pos", 3, [0.0, 0.0, 0.0])), R @ I @ R.T


def _geom_mass(c, body, a, pose):
    """(mass, COM, inertia about the COM in the body frame) of a geom, or None (no volume, other group)."""
    group = int(a.number("group", 0))
    if not c.group_range[0] <= group <= c.group_range[1]:
        return None
    gtype = a.get("type", "sphere")
    if a.get("shellinertia", "false") == "true":
        a.fail("shellinertia='true' is not supported (the inertia of a hollow shell)")
    if gtype not in ("sphere", "capsule", "ellipsoid", "cylinder", "box", "mesh"):
        return None
    explicit = a.get("mass")
    if (a.number("mass") if explicit is not None else a.number("density", 1000.0)) == 0:
        return None                         # no mass (a visual mesh): its file need not be read
    if gtype != "mesh" and a.get("mesh") is not None:
        # MuJoCo sizes such a primitive from the mesh (fitscale, fitaabb): refused rather than given size 0
        a.fail(f"body '{body.name}': a {gtype} fitted to mesh '{a.get('mesh')}' is not supported where the body's "
               "inertia comes from its geoms (give the body an <inertial>)")
    if gtype == "mesh":
        volume, center, unit = _mesh(c, body, a)
        R, p = compose(pose, (np.eye(3), center))
    else:
        volume, unit = _shape(a, gtype)
        R, p = pose
    mass = a.number("mass") if explicit is not None else a.number("density", 1000.0) * volume
    return mass, p, R @ (mass * unit) @ R.T


def _shape(a, gtype):
    """(volume, inertia per unit mass about the centre in the geom frame) of a primitive (MuJoCo's formulas)."""
    size = list(a.vec("size", None, [])) + [0.0, 0.0, 0.0]
    if a.get("fromto") is not None:
        ends = np.array(a.vec("fromto", 6))
        half = float(np.linalg.norm(ends[3:] - ends[:3])) / 2
        if gtype in ("box", "ellipsoid"):     # MuJoCo: a square section of half-side size[0]
            size[1:3] = [size[0], half]
        else:
            size[1] = half
    r = size[0]
    if gtype == "sphere":
        return 4 / 3 * math.pi * r ** 3, np.eye(3) * 0.4 * r * r
    if gtype == "ellipsoid":
        x, y, z = size[:3]
        return 4 / 3 * math.pi * x * y * z, np.diag([y * y + z * z, x * x + z * z, x * x + y * y]) / 5
    if gtype == "box":
        x, y, z = size[:3]
        return 8 * x * y * z, np.diag([y * y + z * z, x * x + z * z, x * x + y * y]) / 3
    height = 2 * size[1]
    if gtype == "cylinder":
        side = (3 * r * r + height * height) / 12
        return math.pi * r * r * height, np.diag([side, side, r * r / 2])
    # capsule: a cylinder and two hemispheres whose centres of mass sit 3r/8 beyond its ends
    volume = math.pi * r * r * height + 4 / 3 * math.pi * r ** 3
    sphere = 4 * r / (4 * r + 3 * height)
    cylinder = 1 - sphere
    side = cylinder * (3 * r * r + height * height) / 12 + 0.4 * sphere * r * r + sphere * height * (3 * r + 2 * height) / 8
    return volume, np.diag([side, side, cylinder * r * r / 2 + 0.4 * sphere * r * r])


def _bounded(c, mass, I):
    """<compiler boundmass boundinertia balanceinertia> applied to the principal moments."""
    if c.boundmass > 0:
        mass = max(mass, c.boundmass)
    if c.boundinertia > 0 or c.balanceinertia:
        moments, axes = np.linalg.eigh(I)
        if c.boundinertia > 0:
            moments = np.maximum(moments, c.boundinertia)
        a, b, cc = moments
        if c.balanceinertia and (a + b < cc or a + cc < b or b + cc < a):
            moments = np.full(3, moments.sum() / 3)
        I = axes @ np.diag(moments) @ axes.T
    return mass, I


def _apply_total_mass(c, links):
    """<compiler settotalmass>: every body's mass and inertia scaled to that total."""
    total = sum(link["mass"] for link in links)
    if c.settotalmass > 0 and total > 0:
        s = c.settotalmass / total
        for link in links:
            link["mass"] *= s
            if "inertia" in link:
                link["inertia"] = {k: v * s for k, v in link["inertia"].items()}


# --- meshes --------------------------------------------------------------------------------

def _mesh(c, body, a):
    """(volume, centroid, inertia per unit mass about it) of a mesh geom's file (the divergence theorem)."""
    name = a.get("mesh")
    element = next((m for asset in c.root.findall("asset") for m in asset.findall("mesh")
                    if (m.get("name") or _stem(m.get("file", ""))) == name), None)
    if element is None:
        a.fail(f"body '{body.name}': mesh '{name}' is not defined in <asset>")
    attrs = c.attrs(element, None)
    file = element.get("file")
    if not file:
        a.fail(f"body '{body.name}': mesh '{name}' has no file (inline vertices are not supported)")
    base = os.path.dirname(c.path)
    path = os.path.join(base, c.meshdir or c.assetdir, file)
    reader = {".stl": read_stl, ".obj": read_obj}.get(os.path.splitext(path)[1].lower())
    if reader is None:
        c.fail(f"body '{body.name}': mesh file '{file}': only STL and OBJ meshes are read", element)
    try:
        triangles = reader(path)
    except OSError:
        c.fail(f"body '{body.name}': mesh file '{file}' not found ({path})", element)
    except (ValueError, IndexError):
        c.fail(f"body '{body.name}': mesh file '{file}' is not a readable {reader.__name__[5:].upper()} file "
               "(STL: binary, as MuJoCo reads it)", element)
    triangles = triangles * np.array(attrs.vec("scale", 3, [1.0, 1.0, 1.0]))
    mode = attrs.get("inertia", "legacy")
    if mode not in ("legacy", "exact"):
        c.fail(f"body '{body.name}': mesh '{name}' inertia='{mode}' is not supported (legacy, exact)", element)
    return _volume_integral(triangles, legacy=mode == "legacy")


def _stem(file):
    return os.path.splitext(os.path.basename(file))[0]


def _volume_integral(t, legacy=True):
    """Volume, centroid and central inertia per unit mass of a closed triangle mesh (MuJoCo's mesh inertia).

    exact: the divergence theorem (signed tetrahedra from any point). legacy (MuJoCo's default): tetrahedra
    from a centre to each face, each counted positive (which overestimates non-convex meshes, as MuJoCo
    does): a first pass from the surface's area-weighted centroid gives the centre of mass, a second pass
    from that point gives the volume and the inertia about it."""
    areas = np.linalg.norm(np.cross(t[:, 1] - t[:, 0], t[:, 2] - t[:, 0]), axis=1) / 2
    centre = (areas[:, None] * t.mean(axis=1)).sum(axis=0) / areas.sum()
    volume, com, C = _tetrahedra(t, centre, legacy)
    if legacy:
        centre = com
        volume, _, C = _tetrahedra(t, centre, legacy)
        com = centre
    else:
        C -= np.outer(com - centre, com - centre)
    return abs(volume), com, np.trace(C) * np.eye(3) - C


def _tetrahedra(t, centre, positive):
    """(volume, centroid, second moments about `centre` per unit mass) of the tetrahedra (centre, face)."""
    a, b, cc = t[:, 0] - centre, t[:, 1] - centre, t[:, 2] - centre
    v = np.einsum("ij,ij->i", a, np.cross(b, cc)) / 6
    v = np.abs(v) if positive else v
    volume = v.sum()
    com = (v[:, None] * (a + b + cc)).sum(axis=0) / 4 / volume
    # second moments of a tetrahedron (0, a, b, c): (a a^T + b b^T + c c^T + s s^T) / 20 times its volume
    s = a + b + cc
    C = sum(np.einsum("i,ij,ik->jk", v, x, x) for x in (a, b, cc, s)) / 20 / volume
    return volume, com + centre, C
