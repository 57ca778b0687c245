"""Random chains with general axes and mixed revolute / prismatic joints, for identity tests."""
import numpy as np

from symdyn.description import build_model


def random_description(n, seed, kinds="RP"):
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
                       "origin": {"xyz": rng.normal(size=3).tolist(), "rpy": rng.uniform(-3, 3, 3).tolist()},
                       "axis": rng.normal(size=3).tolist()})
        parent = f"l{k}"
    return {"name": f"random{n}_{seed}", "gravity": rng.normal(size=3).tolist(), "links": links, "joints": joints}


def random_chain(n, seed, kinds="RP"):
    return build_model(random_description(n, seed, kinds), f"<random chain {seed}>")
