"""MJCF <equality> constraints as symdyn loop closures (symdyn.multibody.constraints).

connect (a point of body1 on body2, or on the world) is a 3d constraint and weld (body1's frame held
at its pose relative to body2) a 6d one, between the bodies' frames; the point's placement on the
second body is taken at MuJoCo's reference configuration qpos0 (the file's poses), as MuJoCo does.
Coordinates stay MuJoCo's full ones. Joint couplings, tendons and flexes are one warning each.
"""
import numpy as np

from .mjcf import quat_matrix
from ..multibody.constraints import Constraint


def _placement(pose):
    R, p = pose
    return tuple(tuple(float(x) for x in row) for row in R), tuple(float(x) for x in p)


def equality_constraints(c, world_pose):
    """The <equality> elements' connect and weld constraints; warnings for the others."""
    from .mjcf_tree import compose, inverse
    out = []
    for equality in c.root.findall("equality"):
        for e in equality:
            a = c.attrs(e, None)
            label = f"<equality><{e.tag}{' name=' + repr(e.get('name')) if e.get('name') else ''}>"
            if e.tag not in ("connect", "weld") or a.get("body1") is None:
                what = "joint couplings" if e.tag == "joint" else f"<{e.tag}> constraints"
                c.warn(f"{label}: {what} are not supported: ignored")
                continue
            if a.get("active", "true") == "false":
                c.warn(f"{label}: inactive: ignored")
                continue
            body1, body2 = a.get("body1"), a.get("body2", "world")
            for body in (body1, body2):
                if body not in world_pose:
                    a.fail(f"unknown body '{body}'")
            point = (np.eye(3), np.array(a.vec("anchor", 3, [0.0, 0.0, 0.0])))
            relative = compose(inverse(world_pose[body2]), world_pose[body1])
            relpose = a.vec("relpose", 7) if e.tag == "weld" else None
            if relpose is not None and np.any(relpose[3:]):
                relative = inverse((quat_matrix(relpose[3:]), np.array(relpose[:3])))
            other = compose(relative, point)
            kind = "3d" if e.tag == "connect" else "6d"
            out.append(Constraint(kind, body1, None if body2 == "world" else body2, _placement(point),
                                  _placement(other)))
    return out
