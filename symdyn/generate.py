"""`symdyn generate`: robot files in, one Python (and C) module per robot out.

All robots are loaded and all code is rendered before anything is written; each file is written
to a temporary name in the target folder and renamed, so a failed or killed run leaves the
previous files intact and never a half-written one.
"""
import os
import tempfile
from pathlib import Path

from .codegen.backends import render_c, render_python
from .codegen.generator import safe_identifier, trace_all
from .load import load_robot

LANGUAGES = ("python", "c")
PARAM_MODES = ("numeric", "symbolic")


def module_name(path):
    """generated/<stem>.py for robots/<stem>.urdf: the file name, made a safe identifier."""
    return safe_identifier(Path(path).stem)


def render(model, languages=("python",), params_mode="numeric", progress=None):
    """{filename: text} of the modules of one robot."""
    module = module_name(model.path)
    programs = trace_all(model, params_mode, progress)
    files = {}
    if "python" in languages:
        files[f"{module}.py"] = render_python(model, programs, module, params_mode)
    if "c" in languages:
        files[f"{module}.h"], files[f"{module}.c"] = render_c(model, programs, module, params_mode)
    return files


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
        os.chmod(tmp, 0o666 & ~_umask())             # mkstemp's 0600 is not what a user expects
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def generate(paths, out_dir="generated", languages=("python",), params_mode="numeric", progress=None):
    """Generate the modules of every robot file in `paths`; returns the written paths."""
    models = [load_robot(p) for p in paths]           # every input is checked before any output
    rendered = {}
    for model in models:
        for name, text in render(model, languages, params_mode, progress).items():
            if name in rendered:
                raise ValueError(f"two robots would both write {name}")
            rendered[name] = text
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in rendered.items():
        write_atomic(out / name, text)
        written.append(out / name)
    return written
