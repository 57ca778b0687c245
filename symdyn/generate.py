"""`symdyn generate`: robot files in, one Python (and C) module per robot out.

All robots are loaded, checked and rendered before anything is written, so a bad input writes
nothing at all (not even the output folder); each file is written to a temporary name in the
target folder and renamed over the old one, so a failed or killed run leaves every previous file
either intact or completely replaced, never half-written. (A run killed during a write may leave
its hidden temporary `.<name>.<random>.tmp` behind; an exception never does.)
"""
import os
import tempfile
from pathlib import Path

from .codegen.backends import render_c, render_python
from .codegen.generator import safe_identifier, trace_all
from .errors import OutputError, RobotFileError
from .load import load_robot

LANGUAGES = ("python", "c")
PARAM_MODES = ("numeric", "symbolic")
EXTENSIONS = {"python": (".py",), "c": (".h", ".c")}


#: suffix of the module name in symbolic-parameter mode: its functions take one more argument, so
#: it must not replace the numeric module of the same robot (generated/ur5.py beside ur5_params.py)
PARAMS_SUFFIX = "_params"


def module_name(path, params_mode="numeric"):
    """generated/<stem>.py for robots/<stem>.urdf: the file name, made a safe identifier, with `_params`
    in symbolic-parameter mode. It names the Python module, the C files and the C functions' prefix."""
    stem = safe_identifier(Path(path).stem)
    return stem + PARAMS_SUFFIX if params_mode == "symbolic" else stem


def output_names(model, languages=("python",), params_mode="numeric"):
    """The file names `render` will produce for `model`."""
    module = module_name(model.path, params_mode)
    return [module + ext for lang in LANGUAGES if lang in languages for ext in EXTENSIONS[lang]]


def render(model, languages=("python",), params_mode="numeric", progress=None):
    """{filename: text} of the modules of one robot."""
    module = module_name(model.path, params_mode)
    programs = trace_all(model, params_mode, progress)
    files = {}
    if "python" in languages:
        files[f"{module}.py"] = render_python(model, programs, module, params_mode)
    if "c" in languages:
        files[f"{module}.h"], files[f"{module}.c"] = render_c(model, programs, module, params_mode)
    return files


def load_all(paths, languages=("python",), snap_right_angles=False, params_mode="numeric", selection=None,
             strict=False, allow_nonphysical_inertia=False, floating_base=False, frames=None):
    """Load every robot file; RobotFileError for the first bad one or two that would write the same file.
    (selection, strict, allow_nonphysical_inertia, floating_base, frames: see load_robot.)"""
    models = [load_robot(p, snap_right_angles, selection, strict=strict, allow_nonphysical_inertia=allow_nonphysical_inertia,
                         floating_base=floating_base, frames=frames) for p in paths]
    owner, unique = {}, {}
    for path, model in zip(paths, models):
        same = os.path.realpath(model.path)
        if same in unique:                        # the same file given twice is generated once
            continue
        unique[same] = model
        for name in output_names(model, languages, params_mode):
            key = name.casefold()                 # a case-insensitive file system would merge them too
            if key in owner:
                raise RobotFileError(path, f"would write {name}, as does {owner[key]} "
                                           "(rename one of the two robot files)")
            owner[key] = model.path
    return list(unique.values())


def prepare_output(out_dir):
    """Create the output folder (and its parents) if needed; OutputError if that is impossible."""
    out = Path(out_dir)
    try:
        if out.exists() and not out.is_dir():
            raise OutputError(out, "output path exists and is not a folder")
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(out, f"cannot create the output folder: {exc.strerror or exc}") from None
    if not os.access(out, os.W_OK | os.X_OK):
        raise OutputError(out, "cannot write into the output folder: permission denied")
    return out


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_atomic(path, text):
    """Write to a temporary file beside `path`, then rename it over `path`."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())                   # the rename must not overtake the data on a crash
        os.chmod(tmp, 0o666 & ~_umask())             # mkstemp's 0600 is not what a user expects
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_all(rendered, out_dir):
    """Write {filename: text} into `out_dir`, each file atomically; returns the written paths."""
    out = Path(out_dir)
    written = []
    for name, text in rendered.items():
        try:
            write_atomic(out / name, text)
        except OSError as exc:
            raise OutputError(out / name, f"cannot write: {exc.strerror or exc}") from None
        written.append(out / name)
    return written


def generate(paths, out_dir="generated", languages=("python",), params_mode="numeric", progress=None,
             snap_right_angles=False, selection=None, strict=False, allow_nonphysical_inertia=False,
             on_warning=None, floating_base=False, frames=None):
    """Generate the modules of every robot file in `paths`; returns the written paths.

    floating_base: each robot's base link becomes a free-flyer (joint root_joint, Pinocchio's conventions).

    Order: load and check every input, check the output folder, render everything, then write.
    on_warning(path, message) is called for each warning of each robot (see load_robot) before
    anything is written; strict=True makes them errors. frames: the frames that get kinematics
    (names, in order; default: the leaves of the tree).
    """
    models = load_all(paths, languages, snap_right_angles, params_mode, selection, strict,
                      allow_nonphysical_inertia, floating_base, frames)  # every input is checked before any output
    for model in models:
        for message in model.warnings:
            if on_warning is not None:
                on_warning(model.path, message)
    out = prepare_output(out_dir)
    rendered = {}
    for model in models:
        rendered.update(render(model, languages, params_mode, progress))
    return write_all(rendered, out)
