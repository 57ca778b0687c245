"""A joint-parameter file: friction, springs and rotor inertias that override the robot file's.

    # arm_friction.yaml
    coulomb_smoothing: 0.01        # optional: Fc tanh(qd / 0.01) instead of Fc sign(qd)
    joints:
      panda_joint1: {damping: 0.2, friction: 0.5, friction_offset: 0.0, armature: 0.1}
      panda_joint2: {armature: 0.1, stiffness: 5.0, springref: 0.3}

Fields left out keep the robot file's value (URDF <dynamics damping friction>, YAML joint fields,
else 0). Every problem is a one-line RobotFileError naming this file.
"""
import hashlib
import os
from dataclasses import replace
from pathlib import Path

from .description import JOINT_DYNAMICS, _Checker, _show, check_joint_dynamics, coulomb_smoothing
from .load import read_file, read_yaml
from ..errors import RobotFileError

FILE_KEYS = ("joints", "coulomb_smoothing")
#: the largest joint-parameter file read (checked before parsing: a 50 MB file took 214 s and 5 GB to refuse)
MAX_BYTES = 1_000_000


def read_joint_parameters(path, raw):
    """{"joints": {name: {field: value}}, "coulomb_smoothing": delta or None} from `raw`, the bytes of the
    file at `path`."""
    data = read_yaml(path, raw)
    chk = _Checker(path)
    if not isinstance(data, dict):
        chk.fail("a joint-parameter file must be a mapping with 'joints' (and optionally 'coulomb_smoothing')")
    chk.known(data, FILE_KEYS, "joint-parameter file")
    joints = {}
    for name, fields in chk.mapping(data.get("joints") or {}, "joints").items():
        where = f"joint {_show(name)}"
        if not isinstance(name, str):
            chk.fail(f"joints: {where} must be named by a string")
        chk.known(chk.mapping(fields, where), tuple(JOINT_DYNAMICS), where)
        values = {key: chk.number(value, f"{where}: {key}") for key, value in fields.items()}
        check_joint_dynamics(chk.fail, values, where)
        joints[name] = values
    delta = data.get("coulomb_smoothing")
    return {"joints": joints, "coulomb_smoothing": None if delta is None else coulomb_smoothing(chk.fail, delta)}


def apply_joint_parameters(model, path):
    """The model with the file's friction and armature values."""
    try:
        size = os.stat(path).st_size if os.path.isfile(path) else 0
    except OSError:
        size = 0                                          # read_file says why
    if size > MAX_BYTES:
        raise RobotFileError(path, f"{size / 1e6:.1f} MB: a joint-parameter file is at most {MAX_BYTES / 1e6:g} MB "
                                   "(a line or two per joint)")
    raw = read_file(path, "joint-parameter file")
    overrides = read_joint_parameters(path, raw)
    moving = tuple(j.name for j in model.joints)         # mimic joints included: they have their own friction
    for name in overrides["joints"]:
        if name not in moving:
            raise RobotFileError(path, f"unknown joint {_show(name)} (the moving joints of {model.name!r} are "
                                       f"{', '.join(moving)})")
    for j in model.joints:
        if j.kind.nv != 1 and any(overrides["joints"].get(j.name, {}).values()):
            raise RobotFileError(path, f"joint {_show(j.name)}: friction and armature are for 1-DoF joints, "
                                       f"not {j.type} joints")
    joints = tuple(replace(j, **overrides["joints"].get(j.name, {})) for j in model.joints)
    delta = overrides["coulomb_smoothing"]
    digest = hashlib.sha256(raw).hexdigest()[:16]
    return replace(model, joints=joints, coulomb_smoothing=model.coulomb_smoothing if delta is None else delta
                   ).with_provenance(joint_params=f"{Path(path).name} (sha256 {digest})")
