"""`symdyn generate`: robot files in, one Python (and C) module per robot out.

All robots are loaded, checked and rendered before anything is written, so a bad input writes
nothing at all (not even the output folder). The files of one robot then replace the previous
ones as a set, all or nothing (see write_all): a failed, killed or concurrent run never leaves the
.py, .h and .c of two different robot files side by side.
"""
import contextlib
import os
import shutil
import stat
import tempfile
from pathlib import Path

from .codegen.generator import safe_identifier, select_functions, trace_all
from .codegen.languages import with_requirements
from .codegen.printer import NonFiniteError
from .errors import OutputError, RobotFileError
from .readers.load import load_robot

try:
    import fcntl
except ImportError:                                # not POSIX: no lock (concurrent runs are not serialized)
    fcntl = None


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
    return [name for backend in with_requirements(languages) for name in backend.files(module)]


#: the longest file name most file systems accept (bytes)
NAME_MAX = 255


def render(model, languages=("python",), params_mode="numeric", progress=None, functions=None):
    """{filename: text} of the modules of one robot; `functions`: the names to generate (None: all)."""
    module = module_name(model.path, params_mode)
    programs = trace_all(model, params_mode, progress, functions)
    try:
        return _render(model, programs, module, languages, params_mode)
    except NonFiniteError as exc:
        raise RobotFileError(model.path, f"{exc} (numbers too small or too large for double precision)") from None


def _render(model, programs, module, languages, params_mode):
    files = {}
    for backend in with_requirements(languages):
        files.update(backend.render(model, programs, module, params_mode))
    return files


def load_all(paths, languages=("python",), snap_right_angles=False, params_mode="numeric", selection=None,
             strict=False, allow_nonphysical_inertia=False, floating_base=False, joint_params=None, frames=None,
             mimic="reduced", contacts=None, conventions=None):
    """Load every robot file; RobotFileError for the first bad one or two that would write the same file.
    (selection, strict, allow_nonphysical_inertia, floating_base, joint_params, frames, mimic, contacts: see
    load_robot.)"""
    models = [load_robot(p, snap_right_angles, selection, strict=strict, allow_nonphysical_inertia=allow_nonphysical_inertia,
                         floating_base=floating_base, joint_params=joint_params, frames=frames, mimic=mimic,
                         contacts=contacts, conventions=conventions)
              for p in paths]
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
            if len(name.encode("utf-8")) > NAME_MAX:
                raise RobotFileError(path, f"the output file name would be {len(name.encode('utf-8'))} characters "
                                           f"long ({name[:20]}...), more than file systems allow ({NAME_MAX}): "
                                           "rename the robot file")
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


@contextlib.contextmanager
def folder_lock(folder):
    """An exclusive lock on the output folder itself (flock of its descriptor, no lock file to leave
    behind): writers of a set, and load_c reading a .h/.c pair, take turns. Released by the kernel
    when the process dies, even by SIGKILL."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        fd = None                                  # nothing to lock (yet): the caller's reads/writes will say why
    try:
        if fd is not None and fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
            except OSError:                        # a file system without locks: runs are not serialized
                pass
        yield
    finally:
        if fd is not None:
            os.close(fd)                           # also releases the lock


def _fsync_folder(folder):
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _write_new(path, text, mode):
    """Write a new file (O_EXCL) completely and durably, with the permission bits `mode`."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())                   # the rename must not overtake the data on a crash
    os.chmod(path, mode)


def _mode_for(target):
    """A replaced file keeps its permission bits (a read-only file stays read-only); a new one gets
    what the umask allows, like any file the user creates."""
    try:
        st = os.lstat(target)
        if stat.S_ISREG(st.st_mode):
            return stat.S_IMODE(st.st_mode) & 0o777
    except OSError:
        pass
    return 0o666 & ~_umask()


# --- all-or-nothing sets ---------------------------------------------------------------------
#
# The files of one run replace the previous ones as a set. Under the folder lock, every new file is
# written completely into a staging folder `.symdyn-stage-*` inside the output folder (the same
# file system, so a rename moves it), the previous files are linked into it (for a rollback), and a
# journal naming the new files is written last: that is the commit. Then the files are renamed
# into place and the staging folder removed. An error before the commit changes nothing; an error
# after it puts the previous files back. A run killed after the commit (SIGKILL, power loss) leaves
# the journal, and the next run in the folder, or load_c reading a module from it, finishes the
# renames before anything else (recover). Each generated file also carries the set's identity
# (the robot file's digest, the DOF): a .c compiled with a .h of another set stops at an #error,
# and load_c refuses such a pair.

STAGE_PREFIX = ".symdyn-stage-"
JOURNAL = "COMMITTED"
ROLLBACK = "ROLLBACK"
_BACKUP = ".previous"


def _plain_name(name):
    return bool(name) and name == os.path.basename(name) and name not in (".", "..") and not name.startswith(".")


def recover(out_dir):
    """Finish the sets a killed run committed but did not rename, and drop the ones it did not commit.

    Call it holding folder_lock(out_dir)."""
    out = Path(out_dir)
    try:
        stages = [p for p in out.iterdir() if p.name.startswith(STAGE_PREFIX)]
    except OSError:
        return
    for stage in sorted(stages):
        if stage.is_symlink() or not stage.is_dir():
            continue
        if (stage / ROLLBACK).is_file():
            _roll_back(stage, out, (stage / ROLLBACK).read_text(encoding="utf-8").splitlines())
        elif (stage / JOURNAL).is_file():
            for name in (stage / JOURNAL).read_text(encoding="utf-8").splitlines():
                if _plain_name(name) and (stage / name).is_file():
                    os.replace(stage / name, out / name)
            _fsync_folder(out)
        shutil.rmtree(stage)


def _roll_back(stage, out, lines):
    """Put back the previous files named in `lines` ('-name': there was none: remove the new one)."""
    for line in lines:
        name = line[1:] if line.startswith("-") else line
        if not _plain_name(name):
            continue
        if line.startswith("-"):
            if os.path.lexists(out / name):
                os.unlink(out / name)
        elif os.path.lexists(stage / _BACKUP / name):
            os.replace(stage / _BACKUP / name, out / name)
    _fsync_folder(out)


def _check_targets(out, names):
    """Every target must be replaceable by a file: refuse before anything is written."""
    for name in names:
        target = out / name
        if target.is_dir() and not target.is_symlink():
            raise OutputError(target, "is a folder: cannot replace it with the generated file (nothing was written)")


def _backup(target, folder):
    """Keep the previous file (a hard link, or a copy where links are not supported)."""
    if not os.path.lexists(target):
        return None
    folder.mkdir(exist_ok=True)
    kept = folder / target.name
    try:
        os.link(target, kept, follow_symlinks=False)
    except OSError:
        shutil.copy2(target, kept, follow_symlinks=False)
    return kept


def _swap_in(stage, out, names, previous):
    """Rename the staged files into place; on an error put back the previous ones, then raise."""
    done = []
    try:
        for name in names:
            os.replace(stage / name, out / name)
            done.append(name)
    except BaseException:
        # a journal of the rollback first: killed during the rollback, recover() finishes it
        lines = [("" if previous[name] else "-") + name for name in done]
        try:
            _write_new(stage / (ROLLBACK + ".tmp"), "".join(line + "\n" for line in lines), 0o600)
            os.replace(stage / (ROLLBACK + ".tmp"), stage / ROLLBACK)
        except OSError:
            pass
        _roll_back(stage, out, lines)
        raise
    _fsync_folder(out)


def write_all(rendered, out_dir):
    """Write {filename: text} into `out_dir` as one set (all the new files or all the previous
    ones, see above); returns the written paths."""
    out = Path(out_dir)
    names = list(rendered)
    with folder_lock(out):
        try:
            recover(out)
        except OSError as exc:
            raise OutputError(out, f"cannot finish an interrupted earlier run: {exc.strerror or exc}") from None
        _check_targets(out, names)
        stage = None
        try:
            stage = Path(tempfile.mkdtemp(prefix=STAGE_PREFIX, dir=out))
            previous = {}
            for name in names:
                try:
                    _write_new(stage / name, rendered[name], _mode_for(out / name))
                    previous[name] = _backup(out / name, stage / _BACKUP)
                except OSError as exc:
                    raise OutputError(out / name, f"cannot write: {exc.strerror or exc}") from None
            try:
                _write_new(stage / (JOURNAL + ".tmp"), "".join(f"{name}\n" for name in names), 0o600)
                _fsync_folder(stage)
                os.replace(stage / (JOURNAL + ".tmp"), stage / JOURNAL)       # the commit
                _fsync_folder(stage)
            except OSError as exc:
                raise OutputError(out, f"cannot write: {exc.strerror or exc}") from None
            try:
                _swap_in(stage, out, names, previous)
            except OSError as exc:
                raise OutputError(out, f"cannot replace the previous files (they are kept): {exc.strerror or exc}") \
                    from None
        except OSError as exc:                         # mkdtemp
            raise OutputError(out, f"cannot write: {exc.strerror or exc}") from None
        finally:
            if stage is not None:
                shutil.rmtree(stage, ignore_errors=True)
    return [out / name for name in names]


def generate(paths, out_dir="generated", languages=("python",), params_mode="numeric", progress=None,
             snap_right_angles=False, selection=None, strict=False, allow_nonphysical_inertia=False,
             on_warning=None, floating_base=False, joint_params=None, functions=None, frames=None, mimic="reduced",
             contacts=None, conventions=None):
    """Generate the modules of every robot file in `paths`; returns the written paths.

    floating_base: each robot's base link becomes a free-flyer (joint root_joint, Pinocchio's conventions).

    Order: check the function names, load and check every input, check the output folder, render
    everything, then write. on_warning(path, message) is called for each warning of each robot (see
    load_robot) before anything is written; strict=True makes them errors. `functions`: names (a
    list or "a,b") of the functions to generate, None for the default set (functions.FUNCTIONS: the
    derivatives and energies of functions.OPTIONAL only when named); ValueError for an unknown one.
    frames: the frames that get kinematics (names, in order; default: the leaves of the tree).
    mimic: "reduced" (default) or "independent": how URDF <mimic> joints are loaded (load_robot).
    contacts: contacts of frames with the world ("FRAME[:3d|:6d],...", see load_robot): the constraint
    functions join the set.
    conventions: "pinocchio" | "mujoco" (None: the file's), the coordinates of the functions (symdyn.conventions).
    """
    if functions is not None:
        functions = [fn.name for fn in select_functions(functions)]
    # every input is checked before any output
    models = load_all(paths, languages, snap_right_angles, params_mode, selection, strict,
                      allow_nonphysical_inertia, floating_base, joint_params, frames, mimic, contacts, conventions)
    for model in models:
        try:
            select_functions(functions, model)
        except ValueError as exc:
            raise RobotFileError(model.path, f"--functions: {exc}") from None
    for model in models:
        for message in model.warnings:
            if on_warning is not None:
                on_warning(model.path, message)
    created = _missing_folders(out_dir)
    out = prepare_output(out_dir)
    try:
        rendered = {}
        for model in models:
            rendered.update(render(model, languages, params_mode, progress, functions))
        return write_all(rendered, out)
    except BaseException:
        for folder in created:                   # a failed run leaves no empty output folder behind
            try:
                folder.rmdir()
            except OSError:
                break
        raise


def _missing_folders(out_dir):
    """The folders prepare_output will create, deepest first."""
    missing, folder = [], Path(out_dir).absolute()
    while not folder.exists() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    return missing
