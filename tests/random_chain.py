"""Random chains with general axes and mixed revolute / prismatic joints, for identity tests."""
import numpy as np

from symdyn.description import build_model


def random_description(n, seed, kinds="RP", aligned=False):
    """aligned: axes along +-x, y or z and origins rotated by multiples of pi/2 (the structured path)."""
    rng = np.random.default_rng(seed)
    links, joints = [], []
    parent = "base"
    for k in range(n):
        # a physical inertia (triangle inequality holds): a cloud of point masses about its centre
        pts = rng.normal(size=(6, 3)) * rng.uniform(0.1, 0.6, 3)
        pts -= pts.mean(axis=0)
        J = sum(p @ p * np.eye(3) - np.outer(p, p) for p in pts) / 6 + 1e-3 * np.eye(3)
        links.append({"name": f"l{k}", "mass": float(rng.uniform(0.5, 3.0)), "com": rng.normal(size=3).tolist(),
                      "inertia": {"ixx": J[0, 0], "iyy": J[1, 1], "izz": J[2, 2], "ixy": J[0, 1], "ixz": J[0, 2], "iyz": J[1, 2]}})
        kind = kinds[rng.integers(len(kinds))]
        joints.append({"name": f"j{k}", "type": "revolute" if kind == "R" else "prismatic", "parent": parent, "child": f"l{k}",
                       "origin": {"xyz": rng.normal(size=3).tolist(),
                                  "rpy": (rng.integers(-2, 3, 3) * np.pi / 2 if aligned else rng.uniform(-3, 3, 3)).tolist()},
                       "axis": (np.eye(3)[rng.integers(3)] * rng.choice([-1, 1]) if aligned else rng.normal(size=3)).tolist()})
        parent = f"l{k}"
    return {"name": f"random{n}_{seed}", "gravity": rng.normal(size=3).tolist(), "links": links, "joints": joints}


def random_chain(n, seed, kinds="RP", aligned=False):
    return build_model(random_description(n, seed, kinds, aligned), f"<random chain {seed}>")
