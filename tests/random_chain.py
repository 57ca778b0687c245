"""Random chains and trees with general axes, mixed revolute / prismatic joints and full inertias,
for identity tests."""
import numpy as np

from symdyn.description import build_model


def _inertia(rng):
    """A physical inertia (the triangle inequality holds): a cloud of point masses about its centre."""
    pts = rng.normal(size=(6, 3)) * rng.uniform(0.1, 0.6, 3)
    pts -= pts.mean(axis=0)
    J = sum(p @ p * np.eye(3) - np.outer(p, p) for p in pts) / 6 + 1e-3 * np.eye(3)
    return {"ixx": J[0, 0], "iyy": J[1, 1], "izz": J[2, 2], "ixy": J[0, 1], "ixz": J[0, 2], "iyz": J[1, 2]}


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
    return build_model(random_tree_description(n, seed, kinds, aligned, **options), f"<random tree {seed}>")
