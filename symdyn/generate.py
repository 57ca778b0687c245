"""`symdyn generate`: robot files in, one Python (and C) module per robot out.

All robots are loaded, checked and rendered before anything is written, so a bad input writes
nothing at all (not even the output folder). The files of one robot then replace the previous
ones as a set, all or nothing (see write_all): a failed, killed or concurrent run never leaves the
.py, .h and .c of two different robot files side by side.
"""
import contextlib
import hashlib
import hmac
import os
import secrets
import shutil
import stat
import tempfile
from pathlib import Path

from .codegen import manifest
from .codegen.generator import safe_identifier, select_functions, trace_all
from .codegen.languages import with_requirements
from .codegen.printer import NonFiniteError
from .errors import OutputError, RobotFileError
from .readers.load import load_robot
from .readers.options import LoadOptions

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
    module = module_name(model.provenance.path, params_mode)
    backends = with_requirements(languages)
    return [name for backend in backends for name in backend.files(module)] + [
        stem + manifest.SUFFIX for stem in manifest.module_names(backends, module)]


#: the longest file name most file systems accept (bytes)
NAME_MAX = 255


def render(model, languages=("python",), params_mode="numeric", progress=None, functions=None):
    """{filename: text} of the modules of one robot; `functions`: the names to generate (None: all)."""
    module = module_name(model.provenance.path, params_mode)
    programs = trace_all(model, params_mode, progress, functions)
    try:
        return _render(model, programs, module, languages, params_mode)
    except NonFiniteError as exc:
        raise RobotFileError(model.provenance.path,
                             f"{exc} (numbers too small or too large for double precision)") from None


def _render(model, programs, module, languages, params_mode):
    """The files of every backend, then the manifest of each module (symdyn.codegen.manifest)."""
    files, backends = {}, with_requirements(languages)
    for backend in backends:
        files.update(backend.render(model, programs, module, params_mode))
    files.update(manifest.render(model, programs, module, params_mode, backends))
    return files


def load_all(paths, languages=("python",), params_mode="numeric", options=None):
    """Load every robot file as `options` (a LoadOptions, see load_robot) say; RobotFileError for the first
    bad one or two that would write the same file."""
    models = [load_robot(p, options) for p in paths]
    owner, unique = {}, {}
    for path, model in zip(paths, models):
        same = os.path.realpath(model.provenance.path)
        if same in unique:                        # the same file given twice is generated once
            continue
        unique[same] = model
        for name in output_names(model, languages, params_mode):
            key = name.casefold()                 # a case-insensitive file system would merge them too
            if key in owner:
                raise RobotFileError(path, f"would write {name}, as does {owner[key]} "
                                           "(rename one of the two robot files)")
            owner[key] = model.provenance.path
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

    Only stages this user's symdyn made are touched (see _ours); any other folder named like one is
    left as it is, neither used nor deleted. Call it holding folder_lock(out_dir)."""
    out = Path(out_dir)
    try:
        stages = [p for p in out.iterdir() if p.name.startswith(STAGE_PREFIX)]
    except OSError:
        return
    for stage in sorted(stages):
        if not _ours(stage):
            continue
        rollback, journal = _journal(stage, ROLLBACK), _journal(stage, JOURNAL)
        if rollback is not None:
            _roll_back(stage, out, rollback)
        elif journal is not None:
            for name in journal:
                if _plain_name(name) and (stage / name).is_file():
                    os.replace(stage / name, out / name)
            _fsync_folder(out)
        elif (stage / JOURNAL).exists() or (stage / ROLLBACK).exists():
            continue                       # a journal that is not ours (or not readable): leave it all
        shutil.rmtree(stage)


# --- whose stage ---------------------------------------------------------------------------
#
# A stage's name carries a random nonce and its HMAC under a key only this user can read (created
# once in symdyn's private cache folder), and its journal repeats them on its first line: a folder
# planted in the output folder (a downloaded project, another user's) is never taken for ours.

_TOKEN_TAG = "#symdyn-stage"
_STAGE_KEY = "stage-key"


def _stage_key():
    """This user's secret for naming stages, created on first use (mode 0600, in the cache folder,
    SYMDYN_CACHE or ~/.cache/symdyn); None where it cannot be kept (stages are then trusted on their
    owner and mode alone)."""
    folder = Path(os.environ.get("SYMDYN_CACHE") or Path.home() / ".cache" / "symdyn")
    path = folder / _STAGE_KEY
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not os.path.lexists(path):
            fd, tmp = tempfile.mkstemp(prefix=".stage-key-", dir=folder)
            try:
                os.write(fd, secrets.token_bytes(32))
            finally:
                os.close(fd)
            try:
                os.link(tmp, path)                    # all at once, and never over another one's key
            except FileExistsError:
                pass
            finally:
                os.unlink(tmp)
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        try:
            st, key = os.fstat(fd), os.read(fd, 64)
        finally:
            os.close(fd)
    except OSError:
        return None
    if hasattr(os, "geteuid") and (st.st_uid != os.geteuid() or st.st_mode & 0o077) or len(key) != 32:
        return None
    return key


def _token(nonce, key):
    mac = hmac.new(key, nonce.encode(), hashlib.sha256).hexdigest()[:32] if key else "0"
    return f"{nonce}-{mac}"


def _new_stage(out):
    """A new staging folder (mode 0700) named with a fresh token; (its path, the token)."""
    key = _stage_key()
    while True:
        token = _token(secrets.token_hex(8), key)
        stage = out / (STAGE_PREFIX + token)
        try:
            os.mkdir(stage, 0o700)
        except FileExistsError:
            continue
        os.chmod(stage, 0o700)                        # whatever the umask: _ours checks it
        return stage, token


def _ours(stage):
    """Is `stage` a staging folder this user's symdyn made: a real folder, the user's, mode 0700, its
    name's token valid under the user's key?"""
    try:
        st = os.lstat(stage)
    except OSError:
        return False
    if not stat.S_ISDIR(st.st_mode) or stat.S_IMODE(st.st_mode) != 0o700:
        return False
    if hasattr(os, "geteuid") and st.st_uid != os.geteuid():
        return False
    nonce, _, _ = stage.name[len(STAGE_PREFIX):].partition("-")
    return hmac.compare_digest(_token(nonce, _stage_key()), stage.name[len(STAGE_PREFIX):])


def _journal(stage, name):
    """The file names a journal of the stage lists, or None: no journal, not UTF-8, or a first line that
    is not the stage's token."""
    try:
        lines = (stage / name).read_bytes().decode("utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    token = stage.name[len(STAGE_PREFIX):]
    return lines[1:] if lines and lines[0] == f"{_TOKEN_TAG} {token}" else None


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


def _swap_in(stage, out, names, previous, token):
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
            _write_new(stage / (ROLLBACK + ".tmp"), "".join(line + "\n" for line in [f"{_TOKEN_TAG} {token}", *lines]),
                       0o600)
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
            stage, token = _new_stage(out)
            previous = {}
            for name in names:
                try:
                    _write_new(stage / name, rendered[name], _mode_for(out / name))
                    previous[name] = _backup(out / name, stage / _BACKUP)
                except OSError as exc:
                    raise OutputError(out / name, f"cannot write: {exc.strerror or exc}") from None
            try:
                _write_new(stage / (JOURNAL + ".tmp"), "".join(f"{name}\n" for name in [f"{_TOKEN_TAG} {token}", *names]),
                           0o600)
                _fsync_folder(stage)
                os.replace(stage / (JOURNAL + ".tmp"), stage / JOURNAL)       # the commit
                _fsync_folder(stage)
            except OSError as exc:
                raise OutputError(out, f"cannot write: {exc.strerror or exc}") from None
            try:
                _swap_in(stage, out, names, previous, token)
            except OSError as exc:
                raise OutputError(out, f"cannot replace the previous files (they are kept): {exc.strerror or exc}") \
                    from None
        except OSError as exc:                         # mkdtemp
            raise OutputError(out, f"cannot write: {exc.strerror or exc}") from None
        finally:
            if stage is not None:
                shutil.rmtree(stage, ignore_errors=True)
    return [out / name for name in names]


def generate(paths, out_dir="generated", languages=("python",), params_mode="numeric", options=None,
             functions=None, progress=None, on_warning=None, **changes):
    """Generate the modules of every robot file in `paths`, loaded as `options` (a LoadOptions: floating
    base, selection, frames, contacts, strict...; see load_robot) with `changes` (its fields by name:
    generate(paths, out, floating_base=True)) say; returns the written paths.

    Order: check the function names, load and check every input, check the output folder, render
    everything, then write. on_warning(path, message) is called for each warning of each robot (see
    load_robot) before anything is written; options.strict makes them errors. `functions`: names (a
    list or "a,b") of the functions to generate, None for the default set (functions.FUNCTIONS: the
    derivatives and energies of functions.OPTIONAL only when named); ValueError for an unknown one.
    """
    if functions is not None:
        functions = [fn.name for fn in select_functions(functions)]
    # every input is checked before any output
    models = load_all(paths, languages, params_mode, LoadOptions.of(options, **changes))
    for model in models:
        try:
            select_functions(functions, model)
        except ValueError as exc:
            raise RobotFileError(model.provenance.path, f"--functions: {exc}") from None
    for model in models:
        for message in model.provenance.warnings:
            if on_warning is not None:
                on_warning(model.provenance.path, message)
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
