"""Load a generated C module into Python: `symdyn.load_c("generated/panda.c")`, compiled once with the system C
compiler into a private cache, opened with cffi, with the functions of the Python module (numpy in and out).

The cache runs what it finds, so it trusts nothing it did not write itself: the folder and each entry must
belong to the user and be writable by nobody else, every file is created exclusively (never through a
symbolic link), and a library is loaded only if its SHA-256, stored beside it, matches. The key covers the
header, the source, the batch wrapper, the compiler (path and `--version`), the flags and, for
`-march=native`, the processor: another build, compiler or machine never picks up a library it did not build.
"""
import contextlib
import functools
import inspect
import hashlib
import json
import math
import os
import platform
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from ... import __version__
from . import C, C32
from ...errors import CModuleError, one_line
from ...functions import arg_dims

try:
    import fcntl
except ImportError:                                # not POSIX: no lock (concurrent compiles are not serialized)
    fcntl = None

#: flags every build needs (a shared library of C99)
CFLAGS = ("-std=c99", "-fPIC", "-shared")
#: the fastest flags that keep the results: fused multiply-adds (one rounding instead of two, within the
#: tests' 1e-10), this processor's instructions (the cache key includes it), and sqrt without the errno
#: branch (never read) that would keep gcc from vectorizing a batch block
OPT_FLAGS = ("-O3", "-ffp-contract=fast", "-fno-math-errno", "-march=native")
#: for gcc: gcc 12.2's SLP vectorizer miscompiles straight-line code with AVX-512 (solo12, 1e-3 wrong; reproducer
#: tests/data/gcc12_slp_avx512.c), and turning it off costs nothing measurable (docs/perf-history.md "gcc's SLP
#: vectorizer turned off"). Every gcc gets it: the release that fixes the bug is not known
GCC_FLAGS = ("-fno-tree-slp-vectorize",)
#: a long robot name is cut in cache file names (the key makes them unique)
_NAME = 48
#: OpenMP's thread count for the calling thread, set around each batch call and put back after
_THREADS = {True: "#include <omp.h>\nint symdyn_set_threads(int n)\n{\n    const int old = omp_get_max_threads();\n"
                  "    omp_set_num_threads(n);\n    return old;\n}\n",
            False: "int symdyn_set_threads(int n)\n{\n    (void)n;\n    return 1;\n}\n"}
#: the names of the temporary build folders and files in the cache
BUILD_PREFIX = ".build-"
#: a build folder of ours untouched this long is a killed compile's (the longest module takes ~3 min)
STALE_BUILD_MINUTES = 60
#: the manifest format this loader reads (symdyn.codegen.manifest.FORMAT)
MANIFEST_FORMAT = 1
_COMPILERS = {}
_OPENMP = {}


def _notice(text):
    """A line for the person at the terminal (not a warning): through `notice_hook` (a progress bar's), else stderr."""
    line = f"symdyn: {text}"
    if notice_hook is not None:
        notice_hook(line)
    else:
        print(line, file=sys.stderr, flush=True)


#: set by a command that draws a progress bar on stderr (symdyn.cli) to print a notice on a line of its own
notice_hook = None
#: gcc's CPU seconds and GB per statement of the generated code (the manifest's counts), more in batch lanes
#: (at most TUNING.lane_budget); rough: docs/perf-history.md "Compile cost per statement"
SECONDS_PER_STATEMENT, LANE_SECONDS_PER_STATEMENT = 6e-4, 1.1e-3
GB_PER_STATEMENT, LANE_GB_PER_STATEMENT = 7e-6, 2e-5
#: an estimated compile shorter than this goes without an estimate
NOTICE_SECONDS = 15


def _compile_cost(manifest, lanes):
    """(seconds, GB) that gcc is expected to take on the module, from the manifest's statement counts."""
    from .tuning import TUNING
    statements = sum(f["statements"] for f in manifest["functions"])
    in_lanes = min(statements, TUNING.lane_budget) if lanes else 0
    return (statements * SECONDS_PER_STATEMENT + in_lanes * LANE_SECONDS_PER_STATEMENT,
            statements * GB_PER_STATEMENT + in_lanes * LANE_GB_PER_STATEMENT)


# --- the module's files ------------------------------------------------------------------------

def _read_set(c_path, h_path, m_path):
    """The texts of the .h, .c and manifest, read under the output folder's lock after completing a set that a
    killed `symdyn generate` left half-renamed (see generate.py)."""
    from ...generate import folder_lock, recover
    texts = []
    with folder_lock(c_path.parent):
        with contextlib.suppress(OSError):       # a folder we may not write: the checks below still hold
            recover(c_path.parent)
        for p in (h_path, c_path, m_path):
            try:
                texts.append(p.read_text(encoding="utf-8"))
            except FileNotFoundError:
                if p == m_path:
                    raise CModuleError(p, f"no manifest beside {c_path.name} (symdyn writes {p.name} with the "
                                          "module since format 1): regenerate the module "
                                          "(symdyn generate ROBOT --lang c)") from None
                raise CModuleError(p, "file not found") from None
            except (OSError, UnicodeDecodeError) as exc:
                raise CModuleError(p, f"cannot read: {getattr(exc, 'strerror', None) or exc}") from None
    return texts


def _manifest(text, m_path):
    """The manifest's data; CModuleError for a file that is not one symdyn wrote."""
    try:
        data = json.loads(text)
        if data.get("format") != MANIFEST_FORMAT:
            raise CModuleError(m_path, f"manifest format {data.get('format')!r}, this symdyn reads "
                                       f"{MANIFEST_FORMAT}: regenerate the module")
        for key in ("set_id", "sizes", "functions", "joint_names", "frames", "precision", "params_mode"):
            data[key]
        for f in data["functions"]:
            f["name"], f["args"], f["outputs"], f["statements"]
        return data
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise CModuleError(m_path, f"not a symdyn manifest ({one_line(exc)[:80]}): regenerate the module") from None


def _check_set(header, source, manifest, prefix, paths):
    """The .h, .c and manifest come from one run (set id and DOF agree): the .c's `#error` would stop the compiler
    too; this says it first, in one line, also for a library of the set found in the cache."""
    h_path, c_path, m_path = paths
    P, set_id, dof = prefix.upper(), manifest["set_id"], manifest["sizes"]["dof"]
    in_header = f"#define {P}_SET_ID 0x{set_id}u" in header and f"#define {P}_DOF {dof}\n" in header
    in_source = f"{P}_SET_ID != 0x{set_id}u || {P}_DOF != {dof}" in source
    if not in_header or not in_source:
        wrong = h_path if not in_header else c_path
        raise CModuleError(wrong, f"{wrong.name} and {m_path.name} ({dof} DOF, set {set_id}) come from different "
                                  "robot files or runs: regenerate the module's files together "
                                  "(symdyn generate ROBOT --lang c)")


def _declarations(header, manifest, prefix, backend, h_path):
    """The cffi declarations of the functions the manifest lists, which the header must hold (unless edited)."""
    cdef = [f"extern const {backend.real} {prefix}_parameters[{manifest['sizes']['np']}]"]
    for f in manifest["functions"]:
        args, outs = [a["name"] for a in f["args"]], [o["name"] for o in f["outputs"]]
        cdef += [backend.prototype(prefix, f["name"], args, outs), backend.batch_prototype(prefix, f["name"], args, outs)]
    cdef += list(backend.lie_prototypes(prefix).values())
    for declaration in cdef:
        if declaration + ";" not in header:
            raise CModuleError(h_path, f"does not declare {declaration.split('(')[0].split('[')[0].split()[-1]}, which its manifest "
                                       "lists: regenerate the module")
    return [d + ";" for d in cdef]


# --- the compiler ----------------------------------------------------------------------------

def _compiler(c_path):
    """(argv, identity): $CC split like a shell would (`ccache gcc`), its path and version."""
    try:
        argv = shlex.split(os.environ.get("CC") or "cc") or ["cc"]
    except ValueError as exc:
        raise CModuleError(c_path, f"cannot compile: $CC is not a valid command ({exc})") from None
    key = tuple(argv)
    if key not in _COMPILERS:
        exe = shutil.which(argv[0])
        if exe is None:
            raise CModuleError(c_path, f"cannot compile: no C compiler ('{argv[0]}' not found): install one "
                                       "(e.g. `sudo apt install gcc`, `xcode-select --install`) or set CC; "
                                       "`symdyn compare --no-c` skips the C module")
        try:
            version = subprocess.run([*argv, "--version"], capture_output=True, text=True, timeout=60).stdout
        except (OSError, subprocess.SubprocessError):
            version = ""
        _COMPILERS[key] = (argv, f"{os.path.realpath(exe)}\n{version}")
    return _COMPILERS[key]


def _is_gcc(identity):
    """Whether the compiler identified by _compiler is GCC (Apple's `gcc` is clang, and says so)."""
    return "Free Software Foundation" in identity and "clang" not in identity.lower()


def _opt_flags(identity):
    """The optimization flags for this compiler: OPT_FLAGS, and GCC_FLAGS for gcc."""
    return [*OPT_FLAGS, *(GCC_FLAGS if _is_gcc(identity) else ())]


def _openmp(argv):
    """True if the compiler builds and links OpenMP code (-fopenmp and its runtime, e.g. libgomp)."""
    key = tuple(argv)
    if key not in _OPENMP:
        with tempfile.TemporaryDirectory(prefix="symdyn-omp-") as folder:
            src = Path(folder) / "omp.c"
            src.write_text("#include <omp.h>\nint symdyn_probe(void) { return omp_get_max_threads(); }\n")
            try:
                _OPENMP[key] = subprocess.run([*argv, "-fopenmp", *CFLAGS, str(src), "-o", str(src.with_suffix(".so"))],
                                              capture_output=True, timeout=120).returncode == 0
            except (OSError, subprocess.SubprocessError):
                _OPENMP[key] = False
    return _OPENMP[key]


@functools.lru_cache(maxsize=None)
def _processor():
    """What -march=native means here: the processor's name and features."""
    text = ""
    with contextlib.suppress(OSError), open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
        text = "\n".join(line for line in fh.read().split("\n\n")[0].splitlines()
                         if line.split(":")[0].strip() in ("vendor_id", "model name", "flags", "Features", "CPU part"))
    return f"{platform.machine()} {platform.processor()}\n{text}"


# --- the cache -------------------------------------------------------------------------------

def _uid():
    """The user the cache must belong to (None where there are no POSIX owners)."""
    return os.geteuid() if hasattr(os, "geteuid") else None


def _refuse(path, problem):
    raise CModuleError(path, f"{problem}: refused as symdyn's compile cache (a library in it would run in this "
                             "process); fix it or set SYMDYN_CACHE to a private folder")


def _private_folder(path):
    """Create the cache folder (mode 0700) or check that it is the user's alone."""
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        link, st = os.lstat(path), os.stat(path)
    except OSError as exc:
        raise CModuleError(path, f"cannot create the compile cache folder: {exc.strerror or exc}") from None
    if _uid() is not None and stat.S_ISLNK(link.st_mode) and link.st_uid not in (_uid(), 0):
        _refuse(path, "a symbolic link owned by another user")
    if not stat.S_ISDIR(st.st_mode):
        _refuse(path, "not a folder")
    _check_owner(path, st)
    return path


def _entry_ok(path):
    """True if the entry is the user's own regular file, False if missing; CModuleError if others could write it."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return False
    if not stat.S_ISREG(st.st_mode):
        _refuse(path, "not a regular file")
    _check_owner(path, st)
    return True


def _check_owner(path, st):
    """Refuse a cache folder or entry (its stat `st`) that another user owns or may write."""
    if _uid() is None:
        return
    if st.st_uid != _uid():
        _refuse(path, f"owned by another user (uid {st.st_uid})")
    if st.st_mode & 0o022:
        _refuse(path, f"writable by others (mode {stat.S_IMODE(st.st_mode):04o})")


def _sha256_file(path):
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(fd, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


def _verified(lib_path, sum_path):
    """The cached library exists, is the user's, and has the content hash stored beside it."""
    if not (_entry_ok(lib_path) and _entry_ok(sum_path)):
        return False
    return sum_path.read_text(encoding="ascii", errors="replace").strip() == _sha256_file(lib_path)


def _new_file(folder, prefix, suffix, data=b""):
    """A new file created exclusively (O_EXCL: never an existing file or link), mode 0600."""
    fd, name = tempfile.mkstemp(prefix=prefix, suffix=suffix, dir=folder)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    return Path(name)


@contextlib.contextmanager
def _entry_lock(lib_path):
    """An exclusive flock of `<entry>.lock` (the user's own, left in place): concurrent loads of one module compile
    it once. The kernel releases it when the process dies, even by SIGKILL."""
    lock_path = lib_path.with_name(lib_path.name + ".lock")
    try:
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except OSError as exc:
        raise CModuleError(lock_path, f"cannot open the compile cache's lock: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or (_uid() is not None and st.st_uid != _uid()):
            _refuse(lock_path, "not a regular file of this user")
        if fcntl is not None:
            with contextlib.suppress(OSError):  # a file system without locks: compiles are not serialized
                fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _clean_builds(cache, entry):
    """Remove what killed compiles left: the user's own `.build-*` folders and files of this entry (the caller holds
    its lock: whoever made them is gone) or older than STALE_BUILD_MINUTES. The rest of the cache is kept."""
    now = time.time()
    try:
        names = [p for p in cache.iterdir() if p.name.startswith(BUILD_PREFIX)]
    except OSError:
        return
    for p in names:
        try:
            st = os.lstat(p)
        except OSError:
            continue
        done = p.name.startswith(f"{BUILD_PREFIX}{entry}-") or now - st.st_mtime > 60 * STALE_BUILD_MINUTES
        if not done or (_uid() is not None and st.st_uid != _uid()):
            continue
        if stat.S_ISDIR(st.st_mode):
            shutil.rmtree(p, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                os.unlink(p)


def _compile(c_path, texts, lib_path, sum_path, extra=(), cost=(0.0, 0.0)):
    """Compile the .h, .c and wrapper texts into lib_path, then store its hash. They are copied into a private build
    folder: the files cannot change under the compiler, and no -I lets a header named like a system one shadow it."""
    argv, identity = _compiler(c_path)
    cache, entry = lib_path.parent, lib_path.stem
    _clean_builds(cache, entry)
    build = Path(tempfile.mkdtemp(prefix=f"{BUILD_PREFIX}{entry}-", dir=cache))
    try:
        for name, text in texts.items():
            fd = os.open(build / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
        _, c_name, wrapper = list(texts)                 # .h, .c, wrapper: see CModule
        out = build / "lib.so"
        flags = _opt_flags(identity) + list(extra)
        seconds, gigabytes = cost
        expect = (f": expect about {max(10, round(seconds, -1)):.0f} s and {gigabytes:.1f} GB of memory"
                  if seconds >= NOTICE_SECONDS else "")
        _notice(f"compiling {one_line(c_path.name)} once, then cached ({' '.join(argv + flags)}){expect}")
        for retry in (True, False):
            cmd = [*argv, *flags, *CFLAGS, str(build / c_name), str(build / wrapper), "-o", str(out), "-lm"]
            try:
                result = subprocess.run(cmd, capture_output=True, text=True, cwd=build)
            except FileNotFoundError:
                raise CModuleError(c_path, f"cannot compile: no C compiler ('{argv[0]}' not found)") from None
            if not (retry and result.returncode != 0 and "-march=native" in flags and "native" in result.stderr):
                break
            flags.remove("-march=native")             # a compiler that does not know it: portable code
        if result.returncode != 0:
            errors = [line for line in result.stderr.splitlines() if "error" in line] or result.stderr.splitlines() or [""]
            raise CModuleError(c_path, f"compiling failed ({' '.join(cmd[:len(argv)])}): "
                                       f"{errors[0].replace(str(build) + os.sep, '')}", details=result.stderr)
        tmp_lib = _new_file(cache, f"{BUILD_PREFIX}{entry}-", ".so", out.read_bytes())
        tmp_sum = _new_file(cache, f"{BUILD_PREFIX}{entry}-", ".sha256", (_sha256_file(tmp_lib) + "\n").encode())
        os.replace(tmp_sum, sum_path)
        os.replace(tmp_lib, lib_path)
    except OSError as exc:
        raise CModuleError(cache, f"cannot write the compile cache: {exc.strerror or exc}") from None
    finally:
        shutil.rmtree(build, ignore_errors=True)


def _max_threads():
    """The most OpenMP threads a batch call may ask for: 4 per processor, at least 16, at most 1024
    (libgomp crashes or exits the process far above the machine's threads)."""
    return min(1024, max(16, 4 * (os.cpu_count() or 1)))


def _threads(threads):
    """`threads` checked: a whole number from 1 to _max_threads(); ValueError (one line) otherwise."""
    top = _max_threads()
    if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or not 1 <= threads <= top:
        raise ValueError(f"threads must be a whole number from 1 to {top} (4 per processor here, at least 16), "
                         f"got {one_line(repr(threads))[:40]}")
    return int(threads)


def _result_dtype(arrays, real):
    """The Python module's: float32 where an argument is float32 and none float64 (lists and numbers count for
    neither), else float64; always float32 from a float32 module."""
    kinds = [getattr(a, "dtype", None) for a in arrays]
    single = any(k == np.float32 for k in kinds) and not any(k == np.float64 for k in kinds)
    return np.dtype(np.float32 if single or real == np.float32 else np.float64)


class CModule:
    """The C functions of one generated module, callable on numpy arrays of shape (..., n): the same
    functions, arguments and constants as the Python module of the same robot (see load_c)."""

    def __init__(self, path, threads=1, lanes=None):
        if lanes is None:
            lanes = os.environ.get("SYMDYN_NO_LANES", "") in ("", "0")
        threads = _threads(threads)
        path = Path(path)
        paths = (path.with_suffix(".h"), path.with_suffix(".c"), path.with_suffix(".json"))
        prefix = path.stem
        header, source, text = _read_set(paths[1], paths[0], paths[2])
        manifest = _manifest(text, paths[2])
        _check_set(header, source, manifest, prefix, paths)
        self.manifest, self._sizes, self.SET_ID = manifest, manifest["sizes"], manifest["set_id"]
        for key in ("dof", "nq", "nv", "nc"):                  # the Python module's constants, in capitals
            setattr(self, key.upper(), self._sizes[key])
        for key in ("joint_names", "frames", "constraints", "actuated", "parameter_names", "base_parameter_names",
                    "base_parameter_groups"):
            setattr(self, key.upper(), tuple(manifest.get(key, ())))
        backend = C32 if manifest["precision"] == "float32" else C
        self._real, self.dtype = backend.real, np.dtype(np.float32 if backend.real == "float" else np.float64)
        cdef = _declarations(header, manifest, prefix, backend, paths[0])
        lib_path = self._build(paths, header, source, threads, lanes, _compile_cost(manifest, lanes))
        import cffi
        self._ffi = cffi.FFI()
        self._ffi.cdef("\n".join(cdef + ["int symdyn_set_threads(int n);"]))
        self._lib = self._ffi.dlopen(str(lib_path))
        self._prefix = prefix
        self.PARAMETERS = np.array(self._ffi.unpack(getattr(self._lib, f"{prefix}_parameters"), self._sizes["np"]))
        if manifest["params_mode"] == "symbolic":
            self.DEFAULT_PARAMS = self.PARAMETERS
        self._signatures = {f["name"]: f for f in manifest["functions"]}
        for f in manifest["functions"]:
            setattr(self, f["name"], self._make(f))
        self._make_lie()

    def _build(self, paths, header, source, threads, lanes, cost):
        """The module's library in the cache: compiled now (once, under its lock) unless a verified one is there."""
        h_path, c_path, _ = paths
        argv, compiler = _compiler(c_path)
        openmp = _openmp(argv)
        if threads > 1 and not openmp:
            _notice(f"note: {argv[0]} cannot build OpenMP code (-fopenmp, libgomp): batches run on one thread")
        self.threads = threads if openmp else 1
        # the names of the copies compiled: the .c includes the .h by its name; a '-' is in no module name
        c_name = c_path.name if len(c_path.name.encode()) < 200 else "long-name.c"
        texts = {h_path.name: header, c_name: source,
                 "batch-wrapper.c": f'#include "{h_path.name}"\n{_THREADS[openmp]}'}
        extra = (("-fopenmp",) if openmp else ()) + (() if lanes else ("-DSYMDYN_NO_LANES",))
        native = _processor() if "-march=native" in OPT_FLAGS else ""
        key_text = "\0".join([__version__, *texts, *texts.values(), *argv, compiler, *_opt_flags(compiler), *extra,
                              *CFLAGS, native])
        key = hashlib.sha256(key_text.encode("utf-8", "surrogatepass")).hexdigest()[:32]
        cache = _private_folder(Path(os.environ.get("SYMDYN_CACHE") or Path.home() / ".cache" / "symdyn"))
        lib_path = cache / f"{c_path.stem[:_NAME]}-{key}.so"
        sum_path = lib_path.with_name(lib_path.name + ".sha256")
        if not _verified(lib_path, sum_path):
            with _entry_lock(lib_path):
                if not _verified(lib_path, sum_path):        # another process may have built it meanwhile
                    _compile(c_path, texts, lib_path, sum_path, extra, cost)
            if not _verified(lib_path, sum_path):
                raise CModuleError(lib_path, "the compiled library changed before it could be loaded")
        return lib_path

    def _array(self, a, label, shape):
        """One argument as a contiguous array of the module's type, of shape (..., *shape); a number broadcasts to
        an argument of a fixed small shape (restitution, gains)."""
        given = np.shape(a)
        a = np.asarray(a, dtype=self.dtype)
        if a.ndim == 0 and all(isinstance(d, int) for d in arg_dims(label)):
            a = np.broadcast_to(a, shape)
        if a.ndim < len(shape) or a.shape[a.ndim - len(shape):] != shape:
            raise ValueError(f"{label} must have shape (..., {', '.join(map(str, shape))}), got {given}")
        return np.ascontiguousarray(a)

    @staticmethod
    def _rows(arrays, shapes):
        """(batch shape, the checked arguments broadcast to it and flattened to (count, n) rows)."""
        batch = np.broadcast_shapes(*(a.shape[:a.ndim - len(shape)] for a, shape in zip(arrays, shapes)))
        count = int(np.prod(batch, dtype=np.int64))
        return batch, [np.ascontiguousarray(np.broadcast_to(a, batch + shape).reshape(count, math.prod(shape)))
                       for a, shape in zip(arrays, shapes)]

    def _make_lie(self):
        """neutral, integrate and difference as the Python module's: one state at a time, looped in Python."""
        lib, buf, p, array_type = self._lib, self._ffi.from_buffer, self._prefix, f"{self._real}[]"
        nq, nv = (self.NQ,), (self.NV,)

        def looped(name, arrays, shapes, out_size, dtype, scalar=()):
            batch, rows = self._rows(arrays, shapes)
            out = np.empty((len(rows[0]), out_size), self.dtype)
            for i in range(len(out)):
                getattr(lib, f"{p}_{name}")(*(buf(array_type, r[i]) for r in rows), *scalar, buf(array_type, out[i]))
            return out.reshape(batch + (out_size,)).astype(dtype, copy=False)

        def neutral(like=None):
            """The reference configuration (zero angles and offsets, identity quaternions), of `like`'s dtype."""
            out = np.empty(self.NQ, self.dtype)
            getattr(lib, f"{p}_neutral")(buf(array_type, out))
            return out.astype(np.float64 if like is None else np.asarray(like).dtype, copy=False)

        def integrate(q, v, dt=1.0):
            """The configuration reached from q moving with the constant velocity v during dt (exact on the group)."""
            step = self._array(v, "v", nv) * np.asarray(dt, dtype=self.dtype)
            return looped("integrate", (self._array(q, "q", nq), step), (nq, nv), self.NQ,
                          _result_dtype((q, v), self.dtype), (1.0,))

        def difference(q0, q1):
            """The velocity that integrates q0 to q1 in unit time."""
            return looped("difference", (self._array(q0, "q0", nq), self._array(q1, "q1", nq)), (nq, nq), self.NV,
                          _result_dtype((q0, q1), self.dtype))

        self.neutral, self.integrate, self.difference = neutral, integrate, difference

    def _make(self, entry):
        """The function of one manifest entry, with the Python module's signature: its arguments, then f_ext=None or
        gains=None, error=None, which call its variant (external wrenches; stabilized)."""
        name, args = entry["name"], [a["name"] for a in entry["args"]]
        fext, stabilized = entry.get("fext"), entry.get("baumgarte")
        keyword = [*(("f_ext",) if fext else ()), *(("gains", "error") if stabilized else ())]
        P = inspect.Parameter
        signature = inspect.Signature([P(a, P.POSITIONAL_OR_KEYWORD) for a in args] +
                                      [P(k, P.POSITIONAL_OR_KEYWORD, default=None) for k in keyword])
        run = self._runner(entry)

        def call(*arguments, **named):
            try:
                given = signature.bind(*arguments, **named).arguments
            except TypeError as exc:
                raise TypeError(f"{name}{signature}: {exc}") from None
            arrays = [given[a] for a in args]
            plain = [a for a, label in zip(arrays, args) if label != "params"]
            params = arrays[len(plain):]
            if fext and given.get("f_ext") is not None:
                return getattr(self, fext)(*plain, given["f_ext"], *params)
            if stabilized and (given.get("gains") is not None or given.get("error") is not None):
                if given.get("gains") is None:
                    raise TypeError(f"{name}: error without gains (Kp, Kd)")
                error = np.zeros(self.NC) if given.get("error") is None else given["error"]
                return getattr(self, stabilized)(*plain, given["gains"], error, *params)
            return run(arrays)
        call.__name__, call.__qualname__, call.__doc__, call.__signature__ = name, name, entry.get("doc"), signature
        return call

    def _runner(self, entry):
        """The call of the C function: one state straight to C, a batch through the batch entry (on self.threads)."""
        name, args = entry["name"], [a["name"] for a in entry["args"]]
        c_batch = getattr(self._lib, f"{self._prefix}_{name}_batch")
        c_single = getattr(self._lib, f"{self._prefix}_{name}")
        array_type, buf, set_threads = f"{self._real}[]", self._ffi.from_buffer, self._lib.symdyn_set_threads
        shapes = [tuple(a["shape"]) for a in entry["args"]]
        out_shapes = [tuple(o["shape"]) for o in entry["outputs"]]

        def run(arrays):
            dtype = _result_dtype(arrays, self.dtype)
            arrays = [self._array(a, label, shape) for a, label, shape in zip(arrays, args, shapes)]
            if all(a.ndim == len(shape) for a, shape in zip(arrays, shapes)):   # one state: straight to C
                outs = [np.empty(shape, self.dtype) for shape in out_shapes]
                c_single(*(buf(array_type, a) for a in arrays), *(buf(array_type, o) for o in outs))
            else:
                batch, rows = self._rows(arrays, shapes)
                outs = [np.empty((len(rows[0]),) + shape, self.dtype) for shape in out_shapes]
                if len(rows[0]):                                 # a batch of zero states: an empty result
                    previous = set_threads(self.threads)
                    try:
                        c_batch(len(rows[0]), *(buf(array_type, r) for r in rows), *(buf(array_type, o) for o in outs))
                    finally:
                        set_threads(previous)
                outs = [o.reshape(batch + shape) for o, shape in zip(outs, out_shapes)]
            outs = [o.astype(dtype, copy=False) for o in outs]
            return tuple(outs) if len(outs) > 1 else outs[0]
        return run


def load_c(path, threads=1, lanes=None):
    """Compile (once, cached) and load the generated C module at `path` (.c or .h, with its manifest
    `<module>.json`): the functions, signatures and constants of the Python module of the same robot, on numpy
    arrays of shape (..., n); results float32 where an argument is float32 and none float64 (always from a
    float32 module), else float64. Batches run through the batch entries, over `threads` OpenMP threads;
    lanes=False (default: unless SYMDYN_NO_LANES=1) compiles those as loops of single calls (faster to compile).
    CModuleError (one line) for no compiler, no manifest, a mixed set, a shared cache folder or a failed
    compile; ValueError for a bad `threads`. In full: docs/api.md, "`load_c`: the C module from Python"."""
    return CModule(path, threads, lanes)
