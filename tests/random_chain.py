"""Random chains and trees for the identity tests: see symdyn.multibody.synthetic."""
import numpy as np

from symdyn.multibody.synthetic import (random_chain, random_description, random_tree,  # noqa: F401
                                        random_tree_description)


def with_joint_dynamics(model, seed, friction=True, armature=True):
    """The model with random rotor inertias and (optionally) viscous, Coulomb and offset friction on its
    1-DoF joints (the same draws whatever the joint types)."""
    from dataclasses import replace
    rng = np.random.default_rng(1000 + seed)
    joints = []
    for j in model.joints:
        values = {}
        if armature:
            values["armature"] = float(rng.uniform(0.05, 0.5))
        if friction:
            values.update(damping=float(rng.uniform(0.1, 1.0)), friction=float(rng.uniform(0.1, 1.0)),
                          friction_offset=float(rng.normal()))
        # a multi-DoF joint keeps none (its damping and armature are MuJoCo's: test_mjcf, test_identification)
        joints.append(replace(j, **values) if j.kind.nv == 1 else j)
    return replace(model, joints=tuple(joints))


def chain_with(kinds, n=5, seed=3):
    """A random chain with the given joint types at the given positions ({position: type})."""
    from symdyn.readers.description import build_model
    d = random_description(n, seed)
    for pos, kind in kinds.items():
        d["joints"][pos]["type"] = kind
    return build_model(d, f"<chain {kinds}>")
