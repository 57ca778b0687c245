"""Synthetic chains for benchmarks and scaling tests (descriptions built in code, not read from files)."""
import math

from .description import build_model


def _rod(name, length, mass):
    return {"name": name, "mass": mass, "com": [length / 2, 0.0, 0.0],
            "inertia": {"ixx": 1e-3, "iyy": mass * length ** 2 / 12, "izz": mass * length ** 2 / 12,
                        "ixy": 0.0, "ixz": 0.0, "iyz": 0.0}}


def planar_chain(n, length=0.5, mass=1.0):
    """Rodriguez 1987 Sec. XII: n uniform rods, revolute about z, in the x-y plane, gravity in the plane."""
    links = [_rod(f"link{k}", length, mass) for k in range(n)]
    joints = [{"name": f"joint{k}", "type": "revolute", "parent": "base" if k == 0 else f"link{k - 1}",
               "child": f"link{k}", "origin": {"xyz": [0.0 if k == 0 else length, 0.0, 0.0], "rpy": [0.0, 0.0, 0.0]},
               "axis": [0.0, 0.0, 1.0]} for k in range(n)]
    return build_model({"name": f"planar{n}", "gravity": [0.0, -9.81, 0.0], "links": links, "joints": joints},
                       f"<planar chain {n}>")


def spatial_chain(n, length=0.3, mass=1.0):
    """n rods whose revolute axes alternate between z and y (x-axis twists of pi/2): a 3-D arm."""
    links = [_rod(f"link{k}", length, mass) for k in range(n)]
    joints = [{"name": f"joint{k}", "type": "revolute", "parent": "base" if k == 0 else f"link{k - 1}",
               "child": f"link{k}",
               "origin": {"xyz": [0.0 if k == 0 else length, 0.0, 0.0], "rpy": [0.0 if k == 0 else math.pi / 2, 0.0, 0.0]},
               "axis": [0.0, 0.0, 1.0]} for k in range(n)]
    return build_model({"name": f"spatial{n}", "gravity": [0.0, 0.0, -9.81], "links": links, "joints": joints},
                       f"<spatial chain {n}>")
