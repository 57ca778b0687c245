"""MJCF <equality> constraints as symdyn loop closures (symdyn.multibody.constraints).

connect (a point of body1 on body2, or on the world) is a 3d constraint and weld (body1's frame held
at its pose relative to body2) a 6d one, between the bodies' frames; the point's placement on the
second body is taken at MuJoCo's reference configuration qpos0 (the file's poses), as MuJoCo does.
A joint equality with a linear polycoef is a joint coupling (kind "joint"): MuJoCo's
y - y0 = c0 + c1 (x - x0), y and x the qpos of joint1 and joint2 and y0, x0 their qpos0 (without
joint2: y = y0 + c0). Coordinates stay MuJoCo's full ones. A nonlinear polycoef, a joint equality of
ball or free joints, tendons and flexes are one warning each.
"""
import numpy as np

from .mjcf import quat_matrix
from ..multibody.constraints import Constraint


def _placement(pose):
    R, p = pose
    return tuple(tuple(float(x) for x in row) for row in R), tuple(float(x) for x in p)


def equality_constraints(c, world_pose, sites):
    """The <equality> elements' connect and weld constraints; warnings for the others.
    world_pose: body name -> its pose at qpos0; sites: site name -> (body name, pose in the body)."""
    out = []
    for equality in c.root.findall("equality"):
        for e in equality:
            a = c.attrs(e, None)
            label = f"<equality><{e.tag}{' name=' + repr(e.get('name')) if e.get('name') else ''}>"
            if e.tag not in ("connect", "weld", "joint"):
                c.warn(f"{label}: <{e.tag}> constraints are not supported: ignored")
            elif a.get("active", "true") == "false":
                c.warn(f"{label}: inactive: ignored")
            elif e.tag == "joint":
                out += _coupling(c, a, label)
            else:
                out.append(_by_sites(a, e.tag, sites) if a.get("site1") is not None else
                           _by_bodies(a, e.tag, world_pose))
    return out


def _coupling(c, a, label):
    """[the joint coupling q[joint1] = y0 + c0 + c1 (q[joint2] - x0)], or [] and a warning where it is
    not linear or not between hinge and slide joints."""
    names = [n for n in (a.get("joint1"), a.get("joint2")) if n is not None]
    if a.get("joint1") is None:
        a.fail("joint1 is missing")
    for name in names:
        if name not in c.joint_types:
            a.fail(f"unknown joint '{name}'")
    kinds = sorted({c.joint_types[n] for n in names} - {"hinge", "slide"})
    if kinds:
        c.warn(f"{label}: joint couplings of {' and '.join(kinds)} joints are not supported: ignored")
        return []
    coef = [float(x) for x in a.vec("polycoef", 5, [0.0, 1.0, 0.0, 0.0, 0.0])]
    if any(coef[2:]):
        c.warn(f"{label}: a nonlinear polycoef (c2, c3 or c4 not 0) is not supported: ignored")
        return []
    y0 = c.refs[names[0]]
    if len(names) == 1:
        return [Constraint("joint", names[0], offset=y0 + coef[0])]
    return [Constraint("joint", names[0], names[1], scale=coef[1], offset=y0 + coef[0] - coef[1] * c.refs[names[1]])]


def _by_bodies(a, tag, world_pose):
    """connect: body1's `anchor` on body2 (or the world) where it is at qpos0; weld: body1's frame at
    `anchor` held at its qpos0 pose relative to body2 (or at `relpose`)."""
    from .mjcf_tree import compose, inverse
    body1, body2 = a.get("body1"), a.get("body2", "world")
    for body in (body1, body2):
        if body not in world_pose:
            a.fail(f"unknown body '{body}'")
    point = (np.eye(3), np.array(a.vec("anchor", 3, [0.0, 0.0, 0.0])))
    relative = compose(inverse(world_pose[body2]), world_pose[body1])
    relpose = a.vec("relpose", 7) if tag == "weld" else None
    if relpose is not None and np.any(relpose[3:]):
        relative = inverse((quat_matrix(relpose[3:]), np.array(relpose[:3])))
    other = compose(relative, point)
    kind = "3d" if tag == "connect" else "6d"
    return Constraint(kind, body1, None if body2 == "world" else body2, _placement(point), _placement(other))


def _by_sites(a, tag, sites):
    """connect: site1's origin on site2's; weld: site1's frame on site2's."""
    ends = []
    for key in ("site1", "site2"):
        name = a.get(key)
        if name not in sites:
            a.fail(f"unknown site '{name}'")
        ends.append(sites[name])
    (body1, pose1), (body2, pose2) = ends
    if tag == "connect":
        pose1, pose2 = (np.eye(3), pose1[1]), (np.eye(3), pose2[1])
    kind = "3d" if tag == "connect" else "6d"
    return Constraint(kind, body1, None if body2 == "world" else body2, _placement(pose1), _placement(pose2))
