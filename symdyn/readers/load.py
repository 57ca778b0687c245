"""Read a robot file of any supported format into a validated Model.

Whatever is wrong with the file, the only exception that comes out is RobotFileError, whose
message is one line: `<path>: <problem>`.
"""
import hashlib
import re
from dataclasses import replace
from pathlib import Path

import yaml

from .description import build_model
from .options import LoadOptions
from ..errors import RobotFileError, one_line

SUFFIXES = (".yaml", ".yml", ".urdf")


def load_robot(path, options=None, **changes):
    """Load `path` (.yaml/.yml: symdyn YAML or DH table; .urdf: URDF; any file whose root is <mujoco>: MJCF)
    as a Model, as `options` (a
    LoadOptions) with `changes` (its fields by name: load_robot(path, floating_base=True)) say.

    What the loader accepts but the user should know (a non-physical inertia of a vendor file, a
    singular mass matrix, a <mimic> not honored) is in `model.provenance.warnings`, one line each, without the
    path; `symdyn` prints them as `symdyn: warning: <path>: <warning>`.
    snap_right_angles: see model.snap_right_angles (opt-in: it changes the model slightly).
    selection: a symdyn.readers.selection.Selection (locked joints, root and tip links) or None.
    strict: every warning is a RobotFileError instead.
    allow_nonphysical_inertia: a clearly negative principal moment is a warning, not an error.
    floating_base: the base link becomes a free-flyer named root_joint (description.build_model).
    joint_params: a joint-parameter file (symdyn.readers.joint_params) whose friction and armature override the robot's.
    frames: names of the frames that get kinematics (FRAMES), in order; None: the leaves.
    mimic: "reduced" (URDF <mimic> joints follow their masters: reduced coordinates, symdyn.recursions.mimic) or
    "independent" (each is a degree of freedom of its own, with a warning).
    contacts: contacts of frames with the world, "FRAME[:3d|:6d],..." or a list of those or of
    symdyn.multibody.constraints.Constraint; they come after the file's (YAML `contacts:`). A contact frame
    joins FRAMES if it is not there.
    conventions: "pinocchio" or "mujoco", the coordinates of the generated functions (symdyn.conventions);
    None: the file's (MuJoCo's for MJCF, Pinocchio's for the others)."""
    o = LoadOptions.of(options, **changes)
    warnings = []        # names from the file may hold line breaks: each warning is escaped to one line
    model, file_contacts = _load(path, o.selection, lambda message: warnings.append(one_line(message)),
                                 o.allow_nonphysical_inertia, o.floating_base, o.mimic)
    if o.strict and warnings:
        raise RobotFileError(path, f"{warnings[0]} (an error with --strict)")
    model = model.with_provenance(warnings=tuple(warnings))
    if o.snap_right_angles:
        from ..multibody.model import snap_right_angles as snap
        model = snap(model)
    if file_contacts.get("multi_dof"):
        from .mjcf_tree import multi_dof_dynamics
        model = multi_dof_dynamics(model, file_contacts["multi_dof"])
    if file_contacts.get("springdamper"):
        from .mjcf_tree import springdamper_damping
        model = springdamper_damping(model, *file_contacts["springdamper"])
    if o.joint_params:
        from .joint_params import apply_joint_parameters
        model = apply_joint_parameters(model, o.joint_params)
    frames = o.frames
    if frames is None and file_contacts.get("sites"):
        frames = file_contacts["sites"]
    if frames is not None:
        from ..multibody.model import select_frames
        try:
            model = select_frames(model, tuple(frames))
        except ValueError as exc:
            raise RobotFileError(path, f"--frames: {exc}") from None
    if file_contacts.get("mjcf"):        # MuJoCo's coordinates and qpos0 (the reader's, in MuJoCo's order)
        qpos0 = tuple(float(x) for x in file_contacts.get("qpos0") or ())
        model = replace(model, conventions="mujoco", reference=qpos0 if len(qpos0) == model.nq else ())
    if o.conventions is not None:
        from ..conventions import with_conventions
        try:
            model = with_conventions(model, o.conventions)
        except ValueError as exc:
            raise RobotFileError(path, f"--conventions: {exc}") from None
    return _constrain(model, path, file_contacts, o.contacts)


def _constrain(model, path, file_contacts, contacts):
    """The model with the file's `contacts:` and `loops:` and then the given contacts, and the file's
    `actuated:` joints (one-line RobotFileError for a bad set)."""
    from ..multibody.constraints import Constraint, attach, contacts_from_yaml, parse_contacts
    from ..recursions.loop_closure import loops_from_yaml, with_actuated, with_loop_frames
    label = "contacts"
    try:
        found = contacts_from_yaml(file_contacts["contacts"]) if file_contacts.get("contacts") is not None else []
        found += list(file_contacts.get("constraints") or [])
        if file_contacts.get("loops") is not None:
            label = "loops"
            found += loops_from_yaml(file_contacts["loops"])
        if contacts is not None:
            label = "--contact"
            items = contacts.split(",") if isinstance(contacts, str) else list(contacts)
            found += [c if isinstance(c, Constraint) else parse_contacts([c])[0] for c in items if c != ""]
        if found and model.mimic:
            raise ValueError("constraints on a robot with mimic joints are not supported: load it with "
                             "--mimic independent")
        model = with_loop_frames(attach(model, found)) if found else model
        if file_contacts.get("actuated") is not None:
            label = "actuated"
            model = with_actuated(model, file_contacts["actuated"])
        return model
    except ValueError as exc:
        raise RobotFileError(path, f"{label}: {exc}") from None


def read_file(path, kind="robot file"):
    """The bytes of the file at `path` (a robot file, or the `kind` of file named), or a one-line RobotFileError."""
    try:
        return Path(path).read_bytes()
    except FileNotFoundError:
        raise RobotFileError(path, "file not found") from None
    except IsADirectoryError:
        raise RobotFileError(path, f"is a directory, not a {kind}") from None
    except PermissionError:
        raise RobotFileError(path, "cannot read file: permission denied") from None
    except OSError as exc:
        raise RobotFileError(path, f"cannot read file: {exc.strerror or exc}") from None


def _load(path, selection=None, warn=None, allow_nonphysical_inertia=False, floating_base=False, mimic="reduced"):
    path = Path(path)
    raw = read_file(path)
    digest = hashlib.sha256(raw).hexdigest()
    suffix = path.suffix.lower()
    extras = {}
    from .mjcf import is_mjcf, read_mjcf
    mjcf = is_mjcf(raw)
    if not mjcf and suffix not in SUFFIXES:
        raise RobotFileError(path, _unknown_suffix(path, suffix))
    if not raw.strip():
        raise RobotFileError(path, "file is empty")
    if mjcf:
        desc, extras = read_mjcf(path, raw, warn)
        extras = {**extras, "mjcf": True}
    elif suffix == ".urdf":
        from .urdf import read_urdf
        desc = read_urdf(path, raw, warn)
    else:
        desc = _read_yaml(path, raw)
    contacts = {key: desc.get(key) for key in ("contacts", "loops", "actuated")} if isinstance(desc, dict) else {}
    contacts.update(extras)                # MJCF: its sites (the default FRAMES) and <equality> constraints
    # the whole file is checked, then the part chosen; the warnings are those of the part (and the reader's)
    part = selection is not None and bool(selection)
    model = build_model(desc, path, digest, None if part else warn, allow_nonphysical_inertia, floating_base, mimic)
    if part and mimic == "reduced":
        selection = _lock_followers(desc, selection)
    if part:
        from .selection import select
        model = build_model(select(desc, selection, path), path, digest, warn, allow_nonphysical_inertia,
                            floating_base, mimic).with_provenance(
            selection=selection.describe(), locked=tuple(selection.lock.items()),
            cut=selection.root is not None or selection.tip is not None)
    return model, contacts


def _lock_followers(desc, selection):
    """--lock of a joint that others mimic locks them too, at multiplier * value + offset (their own
    --lock value, if given, wins): a locked gripper finger takes its twin with it."""
    from dataclasses import replace as replace_selection
    lock = dict(selection.lock)
    changed = True
    while changed:                         # a mimic of a mimic follows through
        changed = False
        for joint in desc.get("joints", []) if isinstance(desc, dict) else []:
            follows = joint.get("mimic") if isinstance(joint, dict) else None
            if isinstance(follows, dict) and follows.get("joint") in lock and joint.get("name") not in lock:
                try:
                    value = float(follows.get("multiplier", 1.0)) * lock[follows["joint"]] + float(follows.get("offset", 0.0))
                except (TypeError, ValueError):
                    return selection       # a malformed entry: the builder reports it
                lock[joint["name"]] = value
                changed = True
    return selection if lock == selection.lock else replace_selection(selection, lock=lock)


def _unknown_suffix(path, suffix):
    if suffix == ".xacro":
        return "xacro files must be expanded to URDF first (xacro robot.urdf.xacro > robot.urdf)"
    if not suffix:
        return "no file extension: cannot tell the format (expected .yaml, .yml or .urdf)"
    return f"unknown file type '{suffix}' (expected .yaml, .yml or .urdf)"


# --- YAML -------------------------------------------------------------------------------------

#: a robot file nests 5 levels deep; PyYAML recurses per level (and slowly: a few thousand "["
#: take seconds before the RecursionError), so deeper documents are refused early
MAX_DEPTH = 64


class _TooDeep(yaml.YAMLError):
    def __init__(self, mark):
        super().__init__(f"nesting deeper than {MAX_DEPTH} levels")
        self.mark = mark


class _Loader(yaml.SafeLoader):
    """SafeLoader that refuses duplicate keys and deep nesting, and reads YAML 1.2 floats such as 1e-3.

    PyYAML keeps the last of two equal keys without a word (a silently wrong robot) and, following
    YAML 1.1, reads 1e-3 (no dot) as a string, which users then see rejected as "not a number".
    """

    _depth = 0

    def compose_node(self, parent, index):
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise _TooDeep(self.peek_event().start_mark)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_mapping(self, node, deep=False):
        if isinstance(node, yaml.MappingNode):
            self.flatten_mapping(node)
            seen = {}
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=deep)
                try:
                    duplicate = key in seen
                except TypeError:          # unhashable key: the base class reports it
                    continue
                if duplicate:
                    raise yaml.constructor.ConstructorError(
                        "while constructing a mapping", node.start_mark,
                        f"duplicate key {key!r} (first at line {seen[key].line + 1})", key_node.start_mark)
                seen[key] = key_node.start_mark
        return super().construct_mapping(node, deep)


    def construct_object(self, node, deep=False):
        """PyYAML's scalar constructors let ValueError, KeyError... escape ('!!bool x', 2001-13-45, an
        integer of 5000 digits): make them YAML errors with a position like every other."""
        try:
            return super().construct_object(node, deep)
        except (yaml.YAMLError, RecursionError):
            raise
        except (ValueError, KeyError, AttributeError, TypeError, ArithmeticError) as exc:
            kind = str(node.tag).rsplit(":", 1)[-1]
            value = node.value if isinstance(node.value, str) else ""
            if "limit" in str(exc) and "digits" in str(exc):
                problem = f"integer too long to read ({len(value)} characters)"
            else:
                shown = value if len(value) <= 40 else value[:40] + "..."
                detail = f" ({exc})" if isinstance(exc, ValueError) and str(exc) else ""
                problem = f"cannot read {shown!r} as {kind}{detail}"
            raise yaml.constructor.ConstructorError(None, None, problem, node.start_mark) from None


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _Loader.construct_mapping)
_Loader.yaml_implicit_resolvers = {k: list(v) for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()}
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?[eE][-+]?[0-9]+$"),
    list("-+0123456789"))


def read_yaml(path, raw):
    """The YAML document in `raw`, the bytes of the file at `path` (read by _Loader), or a one-line RobotFileError."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RobotFileError(path, f"file is not UTF-8 text (byte {exc.start + 1} is invalid)") from None
    try:
        return yaml.load(text, Loader=_Loader)  # noqa: S506 (a SafeLoader subclass)
    except yaml.YAMLError as exc:
        raise RobotFileError(path, _yaml_message(exc)) from None
    except RecursionError:
        raise RobotFileError(path, "YAML nesting too deep") from None


def _read_yaml(path, raw):
    """A robot's YAML file as a description (a DH table converted)."""
    data = read_yaml(path, raw)
    if data is None:
        raise RobotFileError(path, "the YAML document is empty (only comments or blank lines)")
    if not isinstance(data, dict):
        raise RobotFileError(path, "the YAML document must be a mapping with 'name', 'links' and 'joints' (or 'dh'), "
                                   f"got {_kind(data)}")
    if "dh" in data:
        from .dh import dh_to_description
        return dh_to_description(data, path)
    return data


def _yaml_message(exc):
    if isinstance(exc, _TooDeep):
        return f"YAML nesting too deep at line {exc.mark.line + 1}, column {exc.mark.column + 1} " \
               f"(more than {MAX_DEPTH} levels)"
    mark = getattr(exc, "problem_mark", None)
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
    problem = getattr(exc, "problem", None) or (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    context = getattr(exc, "context", None)
    if context and not context.startswith("while "):   # e.g. "expected a single document in the stream"
        problem = f"{context}, {problem}"
    if isinstance(exc, yaml.constructor.ConstructorError):
        return f"YAML error{where}: {problem}"
    return f"YAML syntax error{where}: {problem}"


def _kind(value):
    kinds = {list: "a list", str: "a string", int: "a number", float: "a number", bool: "a boolean"}
    return kinds.get(type(value), f"a value of type {type(value).__name__}")
