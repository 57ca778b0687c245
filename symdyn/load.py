"""Read a robot file of any supported format into a validated Model."""
import hashlib
from pathlib import Path

import yaml

from .description import build_model
from .errors import RobotFileError


def load_robot(path):
    """Load `path` (.yaml/.yml: symdyn YAML or DH table; .urdf: URDF) as a Model."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise RobotFileError(path, "file not found") from None
    except OSError as exc:
        raise RobotFileError(path, f"cannot read file: {exc.strerror or exc}") from None
    digest = hashlib.sha256(raw).hexdigest()
    suffix = path.suffix.lower()
    if suffix == ".urdf":
        from .urdf import read_urdf
        desc = read_urdf(path)
    elif suffix in (".yaml", ".yml"):
        desc = _read_yaml(path, raw)
    else:
        raise RobotFileError(path, f"unknown file type '{suffix}' (expected .yaml, .yml or .urdf)")
    return build_model(desc, path, digest)


def _read_yaml(path, raw):
    try:
        data = yaml.safe_load(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise RobotFileError(path, "file is not UTF-8 text") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise RobotFileError(path, f"YAML syntax error{where}: {problem}") from None
    if not isinstance(data, dict):
        raise RobotFileError(path, "the YAML document must be a mapping with 'name', 'links' and 'joints' (or 'dh')")
    if "dh" in data:
        from .dh import dh_to_description
        return dh_to_description(data, path)
    return data
