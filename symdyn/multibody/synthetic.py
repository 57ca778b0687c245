"""Synthetic robots for benchmarks and scaling tests (descriptions built in code, not read from files):
uniform planar and spatial chains, and random chains and trees (general axes, mixed revolute and
prismatic joints, full inertias; trees like spatial_v2's autoTree) for the identity tests."""
import math

import numpy as np

from ..readers.description import build_model


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


def _inertia(rng):
    """A physical inertia (the triangle inequality holds): a cloud of point masses about its centre.
    numpy only draws the numbers (and scales them elementwise); the sums are plain Python, not BLAS
    (the same bytes on every CPU)."""
    pts = (rng.normal(size=(6, 3)) * rng.uniform(0.1, 0.6, 3)).tolist()
    centre = [sum(p[i] for p in pts) / 6 for i in range(3)]
    pts = [[p[i] - centre[i] for i in range(3)] for p in pts]
    J = [[sum((sum(x * x for x in p) if i == j else 0.0) - p[i] * p[j] for p in pts) / 6 + (1e-3 if i == j else 0.0)
          for j in range(3)] for i in range(3)]
    return {"ixx": J[0][0], "iyy": J[1][1], "izz": J[2][2], "ixy": J[0][1], "ixz": J[0][2], "iyz": J[1][2]}


def _link(rng, name):
    inertia = _inertia(rng)
    return {"name": name, "mass": float(rng.uniform(0.5, 3.0)), "com": rng.normal(size=3).tolist(), "inertia": inertia}


def _joint(rng, name, kind, parent, child, aligned):
    types = {"R": "revolute", "P": "prismatic", "F": "fixed"}
    joint = {"name": name, "type": types[kind], "parent": parent, "child": child,
             "origin": {"xyz": rng.normal(size=3).tolist(),
                        "rpy": (rng.integers(-2, 3, 3) * np.pi / 2 if aligned else rng.uniform(-3, 3, 3)).tolist()}}
    if kind != "F":
        joint["axis"] = (np.eye(3)[rng.integers(3)] * rng.choice([-1, 1]) if aligned else rng.normal(size=3)).tolist()
    return joint


def random_description(n, seed, kinds="RP", aligned=False):
    """aligned: axes along +-x, y or z and origins rotated by multiples of pi/2 (the structured path)."""
    rng = np.random.default_rng(seed)
    links, joints = [], []
    parent = "base"
    for k in range(n):
        links.append(_link(rng, f"l{k}"))
        joints.append(_joint(rng, f"j{k}", kinds[rng.integers(len(kinds))], parent, f"l{k}", aligned))
        parent = f"l{k}"
    return {"name": f"random{n}_{seed}", "gravity": rng.normal(size=3).tolist(), "links": links, "joints": joints}


def random_chain(n, seed, kinds="RP", aligned=False):
    """A random chain of n joints (kinds: letters R, P), axes general or, aligned, along frame axes."""
    return build_model(random_description(n, seed, kinds, aligned), f"<random chain {seed}>")


def random_tree_description(n, seed, kinds="RP", aligned=False, branching=2.0, fixed=0.3):
    """A random kinematic tree of n moving joints, like spatial_v2's autoTree: link k hangs from a link
    about k / branching levels up (random), so the tree branches, with fixed joints (a fraction
    `fixed` of extra links: fixed leaves, fixed links in the middle of a branch, whole fixed subtrees)
    and the joints listed in a shuffled order (the model numbers them depth first)."""
    rng = np.random.default_rng(seed)
    links, joints, names = [], [], ["base"]
    moving = 0
    while moving < n:
        k = len(links)
        parent = names[int(rng.integers(max(0, int((len(names) - 1) / branching)), len(names)))]
        kind = "F" if rng.uniform() < fixed else kinds[rng.integers(len(kinds))]
        links.append(_link(rng, f"l{k}"))
        joints.append(_joint(rng, f"j{k}", kind, parent, f"l{k}", aligned))
        names.append(f"l{k}")
        moving += kind != "F"
    order = rng.permutation(len(joints))
    return {"name": f"tree{n}_{seed}", "gravity": rng.normal(size=3).tolist(), "links": links,
            "joints": [joints[i] for i in order]}


def random_tree(n, seed, kinds="RP", aligned=False, **options):
    """A random tree of n moving joints (random_tree_description)."""
    return build_model(random_tree_description(n, seed, kinds, aligned, **options), f"<random tree {seed}>")
