"""Load a generated C module into Python: `symdyn.load_c("generated/panda.c")`.

The module is compiled once with the system C compiler into a private cache and opened with cffi.
The returned object has the functions of the Python module, numpy in and out, with batches of
states looped in C. A function with several outputs (C: one out pointer each) returns a tuple
of arrays, as in Python.

The cache runs what it finds, so it trusts nothing it did not write itself: the folder and each
entry must belong to the user and be writable by nobody else, every file is created exclusively
(never through a symbolic link), and a library is loaded only if its SHA-256, stored beside it,
matches. The key covers the header, the source, the batch wrapper, the compiler (its path and
`--version`), the flags and, for `-march=native`, the processor, so a sanitizer build, another
compiler or another machine sharing the home folder never picks up a library it did not build.
"""
import functools
import hashlib
import json
import math
import os
import platform
import re
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from .. import __version__
from .c import C, C32
from ..errors import CModuleError, one_line
from ..functions import ALL_BY_NAME, PARAM_MODES, arg_dims, baumgarte_variant, fext_variant, out_dims, resolve

#: flags every build needs (a shared library of C99)
CFLAGS = ("-std=c99", "-fPIC", "-shared")
#: the fastest flags that keep the results: floating-point contraction (fused multiply-adds: one
#: rounding instead of two, within the tests' 1e-10) and the instructions of this processor (the
#: cache is per machine: the key includes the processor);
#: -fno-math-errno: sqrt without the branch that sets errno for a negative argument (the generated
#: code never reads errno), which would keep gcc from vectorizing a batch block
OPT_FLAGS = ("-O3", "-ffp-contract=fast", "-fno-math-errno", "-march=native")
#: added for gcc: gcc 12.2's SLP vectorizer (basic-block vectorization, -ftree-slp-vectorize, on at
#: -O2) miscompiles straight-line code with 512-bit AVX-512 vectors (-march=native on a Zen 4
#: processor, which gcc 12 calls znver3 + AVX-512): one part of solo12's constrained forward dynamics
#: (floating base, 4 contacts) stored two wrong values, relative error 1e-3 instead of 1e-14, in a
#: function that reads and writes nothing but its own double array (no undefined behaviour; clang,
#: -O1 and -fno-tree-slp-vectorize get it right). Turning the pass off costs nothing measurable
#: on the Panda's functions (docs/perf-history.md "gcc's SLP vectorizer turned off"). Every gcc gets it: which release
#: fixes the bug is not known, and a wrong result is worse than a vector instruction less. A
#: standalone reproducer: tests/data/gcc12_slp_avx512.c.
GCC_FLAGS = ("-fno-tree-slp-vectorize",)
#: a long robot name is cut in cache file names (the key makes them unique)
_NAME = 48
#: the batch loop of a module generated before batch entries were (symdyn < 0.x wrote no _batch)
_BATCH = """
{prototype}
{{
    for (long i = 0; i < count; ++i)
        {prefix}_{name}({calls}{out_calls});
}}
"""
#: OpenMP's thread count for the calling thread, set around each batch call and put back after
_THREADS = {True: """#include <omp.h>
int symdyn_set_threads(int n)
{
    const int old = omp_get_max_threads();
    omp_set_num_threads(n);
    return old;
}
""", False: """int symdyn_set_threads(int n)
{
    (void)n;
    return 1;
}
"""}
_COMPILERS = {}
_OPENMP = {}


def _cache_dir():
    return Path(os.environ.get("SYMDYN_CACHE") or Path.home() / ".cache" / "symdyn")


def _signatures(header, prefix, backend=C):
    """{name: (Function, its arguments)} of the functions the header declares: the C backend's own
    declaration of each function of the table, in numeric or symbolic-parameter mode, looked up
    as it is written (no parsing of C)."""
    found = {}
    for fn in ALL_BY_NAME.values():
        for mode in PARAM_MODES:
            args = fn.signature(mode)
            if backend.prototype(prefix, fn.name, args, fn.outputs) + ";" in header:
                found[fn.name] = (fn, list(args))
                break
    return found


def _warn_if_slow(c_path, source):
    """Announce a long compile on stderr rather than freeze the terminal without a word. gcc with load_c's
    flags on generated code whose large functions are split into parts (batch lanes included): about 9 s
    and 70 MB per MB of C (talos_reduced floating's full set, 11.0 MB: 99 s of CPU and 0.77 GB; 9.2 MB
    without lanes in parts: 82 s, 0.51 GB; docs/perf-history.md "Batch lanes in parts"); 19 MB of unsplit functions
    (older symdyn) did not finish at -O2 in 13 min and 18 GB."""
    size = len(source) / 1e6
    bodies = (chunk.rpartition("\n{\n") for chunk in source.split("\n}\n"))
    largest = max(len(body) if brace else 0 for _, brace, body in bodies) / 1e6
    if largest > 1.0:
        print(f"symdyn: warning: {one_line(c_path)}: a single C function of {largest:.1f} MB: gcc's time and memory grow "
              "faster than linearly with it (6 MB took more than 13 min and 18 GB); regenerate the module (large "
              "functions are then split into parts) or generate only the functions you need (--functions)",
              file=sys.stderr, flush=True)
    elif size > 2.0:
        print(f"symdyn: warning: {one_line(c_path)}: compiling {size:.1f} MB of C once (then cached): expect about "
              f"{max(10, round(9 * size, -1)):.0f} s and {0.07 * size:.1f} GB of memory", file=sys.stderr, flush=True)


# --- the pair .h/.c --------------------------------------------------------------------------

def _set_of(header, source, prefix, h_path, c_path):
    """(DOF, NUM_PARAMS) of a .h/.c pair; CModuleError if they come from different robots or runs.

    The .c's `#if ... #error` would stop the compiler too; this says it before, in one line, and
    also for a library of the pair that would be found in the cache."""
    defines = _defines(header, prefix)
    if "DOF" not in defines:
        raise CModuleError(h_path, "not a symdyn header (no #define " + prefix.upper() + "_DOF)")
    P = re.escape(prefix.upper())
    check = re.search(rf"^#if !defined\({P}_SET_ID\) \|\| {P}_SET_ID != 0x([0-9a-f]+)u \|\| {P}_DOF != (\d+)",
                      source, re.M)
    h_set = re.fullmatch(r"0x([0-9a-f]+)u", defines.get("SET_ID", ""))
    h_id, c_id = h_set.group(1) if h_set else None, check.group(1) if check else None
    if (h_id or c_id) and (h_id != c_id or int(check.group(2)) != int(defines["DOF"])):
        c_dof = f"{check.group(2)} DOF" if check else "an older symdyn"
        raise CModuleError(c_path, f"{c_path.name} ({c_dof}, set {c_id or '-'}) and {h_path.name} ({defines['DOF']} DOF, "
                                   f"set {h_id or '-'}) come from different robot files or runs: regenerate both "
                                   "together (symdyn generate ROBOT --lang c)")
    return int(defines["DOF"]), int(defines.get("NUM_PARAMS", 0))


def _defines(header, prefix):
    """{NAME: value text} of the header's `#define <PREFIX>_NAME value` lines: the module's sizes and
    flags, as the C compiler sees them."""
    P = re.escape(prefix.upper())
    return dict(re.findall(rf"^#define {P}_(\w+) (.+)$", header, re.M))


def _read_pair(c_path, h_path):
    """The texts of the .h and .c, read together: under the output folder's lock, after completing
    a set that a killed `symdyn generate` left half-renamed (see generate.py)."""
    from ..generate import folder_lock, recover
    texts = []
    with folder_lock(c_path.parent):
        try:
            recover(c_path.parent)
        except OSError:                          # a folder we may not write: the check below still holds
            pass
        for p in (h_path, c_path):
            try:
                texts.append(p.read_text(encoding="utf-8"))
            except FileNotFoundError:
                raise CModuleError(p, "file not found") from None
            except (OSError, UnicodeDecodeError) as exc:
                raise CModuleError(p, f"cannot read: {getattr(exc, 'strerror', None) or exc}") from None
    return texts


# --- the compiler ----------------------------------------------------------------------------

def _compiler(c_path):
    """(argv, identity): $CC split like a shell would (`ccache gcc`), its path and version."""
    text = os.environ.get("CC") or "cc"
    try:
        argv = shlex.split(text)
    except ValueError as exc:
        raise CModuleError(c_path, f"cannot compile: $CC is not a valid command ({exc})") from None
    if not argv:
        argv = ["cc"]
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
                result = subprocess.run([*argv, "-fopenmp", *CFLAGS, str(src), "-o", str(Path(folder) / "omp.so")],
                                        capture_output=True, timeout=120)
                _OPENMP[key] = result.returncode == 0
            except (OSError, subprocess.SubprocessError):
                _OPENMP[key] = False
    return _OPENMP[key]


@functools.lru_cache(maxsize=None)
def _processor():
    """What -march=native means here: the processor's name and features."""
    text = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            text = fh.read().split("\n\n")[0]
        text = "\n".join(line for line in text.splitlines()
                         if line.split(":")[0].strip() in ("vendor_id", "model name", "flags", "Features", "CPU part"))
    except OSError:
        pass
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
    uid = _uid()
    if uid is None:
        return path
    if stat.S_ISLNK(link.st_mode) and link.st_uid not in (uid, 0):
        _refuse(path, "a symbolic link owned by another user")
    if not stat.S_ISDIR(st.st_mode):
        _refuse(path, "not a folder")
    if st.st_uid != uid:
        _refuse(path, f"owned by another user (uid {st.st_uid})")
    if st.st_mode & 0o022:
        _refuse(path, f"writable by others (mode {stat.S_IMODE(st.st_mode):04o})")
    return path


def _entry_ok(path):
    """True if the cache entry is the user's own regular file; CModuleError if someone else could
    have written it; False if it is missing."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return False
    if not stat.S_ISREG(st.st_mode):
        _refuse(path, "not a regular file")
    if _uid() is None:
        return True
    if st.st_uid != _uid():
        _refuse(path, f"owned by another user (uid {st.st_uid})")
    if st.st_mode & 0o022:
        _refuse(path, f"writable by others (mode {stat.S_IMODE(st.st_mode):04o})")
    return True


def _sha256_file(path):
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(fd, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


def _verified(lib_path, sum_path):
    """The cached library exists, is the user's, and has the content hash stored beside it."""
    if not (_entry_ok(lib_path) and _entry_ok(sum_path)):
        return False
    return sum_path.read_text(encoding="ascii", errors="replace").strip() == _sha256_file(lib_path)


def _new_file(folder, suffix, data=b""):
    """A new file created exclusively (O_EXCL: never an existing file or link), mode 0600."""
    fd, name = tempfile.mkstemp(prefix=".build-", suffix=suffix, dir=folder)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    return Path(name)


def _compile(c_path, texts, lib_path, sum_path, extra=()):
    """Compile the .h, .c and wrapper texts (copies in a private build folder: the files beside the
    robot cannot change under the compiler, and no -I of the output folder lets a generated header
    named like a system one, e.g. features.h, shadow it) into lib_path, then store its hash."""
    argv, identity = _compiler(c_path)
    cache = lib_path.parent
    build = Path(tempfile.mkdtemp(prefix=".build-", dir=cache))
    try:
        for name, text in texts.items():
            fd = os.open(build / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
        _, c_name, wrapper = list(texts)                 # .h, .c, wrapper: see CModule
        out = build / "lib.so"
        flags = _opt_flags(identity) + list(extra)
        print(f"symdyn: compiling {c_path.name} ({' '.join(argv + flags)}; once, cached in {cache}) ...",
              file=sys.stderr, flush=True)
        while True:
            cmd = [*argv, *flags, *CFLAGS, str(build / c_name), str(build / wrapper), "-o", str(out), "-lm"]
            try:
                result = subprocess.run(cmd, capture_output=True, text=True, cwd=build)
            except FileNotFoundError:
                raise CModuleError(c_path, f"cannot compile: no C compiler ('{argv[0]}' not found)") from None
            if result.returncode != 0 and "-march=native" in flags and "native" in result.stderr:
                flags.remove("-march=native")         # a compiler that does not know it: portable code
                continue
            break
        if result.returncode != 0:
            errors = [line for line in result.stderr.splitlines() if "error" in line] or result.stderr.splitlines() or [""]
            raise CModuleError(c_path, f"compiling failed ({' '.join(cmd[:len(argv)])}): "
                                       f"{errors[0].replace(str(build) + os.sep, '')}", details=result.stderr)
        tmp_lib = _new_file(cache, ".so", out.read_bytes())
        tmp_sum = _new_file(cache, ".sha256", (_sha256_file(tmp_lib) + "\n").encode())
        os.replace(tmp_sum, sum_path)
        os.replace(tmp_lib, lib_path)
    except OSError as exc:
        raise CModuleError(cache, f"cannot write the compile cache: {exc.strerror or exc}") from None
    finally:
        shutil.rmtree(build, ignore_errors=True)


class CModule:
    """The C functions of one generated module, callable on numpy arrays of shape (..., n)."""

    def __init__(self, path, threads=1, lanes=None):
        import cffi
        if lanes is None:
            lanes = os.environ.get("SYMDYN_NO_LANES", "") in ("", "0")
        if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
            raise ValueError(f"threads must be a positive integer, got {threads!r}")
        path = Path(path)
        c_path, h_path = path.with_suffix(".c"), path.with_suffix(".h")
        prefix = path.stem
        header, source = _read_pair(c_path, h_path)
        n, self._nparams = _set_of(header, source, prefix, h_path, c_path)
        self.DOF = n
        defines = _defines(header, prefix)
        size = lambda name, default=0: int(defines.get(name, default))  # noqa: E731
        self.NQ, self.NV = size("NQ", n), n
        self._sizes = {"nv": n, "nq": self.NQ, "nf": size("NF"), "np": self._nparams, "b": size("NUM_BASE_PARAMS"),
                       "nc": size("NC")}
        self.NC = self._sizes["nc"]
        constraints = re.search(r"Constraints \(CONSTRAINTS, nc = \d+ rows\): (.*)\.\n", header)
        self.CONSTRAINTS = tuple(json.loads(f"[{constraints.group(1)}]")) if constraints else ()
        frames = re.search(r"Frames \(FRAMES\): (.*)\.\n", header)
        self.FRAMES = tuple(json.loads(f"[{frames.group(1)}]")) if frames else ()
        # a float32 module (--precision float32): float arrays in and out
        backend = C32 if defines.get("FLOAT32") == "1" else C
        real, self.dtype = backend.real, np.dtype(np.float32 if backend is C32 else np.float64)
        self._real = real
        self._signatures = _signatures(header, prefix, backend)
        argv, compiler = _compiler(c_path)
        openmp = _openmp(argv)
        if threads > 1 and not openmp:
            print(f"symdyn: note: {argv[0]} cannot build OpenMP code (-fopenmp, libgomp): batches run on one thread",
                  file=sys.stderr, flush=True)
        self.threads = threads if openmp else 1
        wrapper, cdef = [f'#include "{h_path.name}"', _THREADS[openmp]], ["int symdyn_set_threads(int n);"]
        for name, (fn, args) in self._signatures.items():
            sizes = [math.prod(resolve(d, self._sizes)) for d in out_dims(fn)]
            outs = [f"out{i}" for i in range(len(sizes))]
            batch = backend.batch_prototype(prefix, name, args, outs)
            calls = "".join(f"{a} + i * {self._size(a)}, " for a in args)
            out_calls = ", ".join(f"out{i} + i * {size}" for i, size in enumerate(sizes))
            if backend.batch_prototype(prefix, name, args, fn.outputs) + ";" not in header:     # an older module
                wrapper.append(_BATCH.format(prototype=batch, prefix=prefix, name=name, calls=calls,
                                             out_calls=out_calls))
            cdef += [batch + ";", backend.prototype(prefix, name, args, outs) + ";"]
        lie_prototypes = backend.lie_prototypes(prefix)
        lie = lie_prototypes["integrate"] + ";" in header
        if lie:
            cdef += [declaration + ";" for declaration in lie_prototypes.values()]
        # the names of the copies compiled: the .c includes the .h by its name; a '-' is in no module name
        c_name = c_path.name if len(c_path.name.encode()) < 200 else "long-name.c"
        texts = {h_path.name: header, c_name: source, "batch-wrapper.c": "\n".join(wrapper)}
        extra = (("-fopenmp",) if openmp else ()) + (() if lanes else ("-DSYMDYN_NO_LANES",))
        native = _processor() if "-march=native" in OPT_FLAGS else ""
        key_text = "\0".join([__version__, *texts, *texts.values(), *argv, compiler, *_opt_flags(compiler), *extra,
                              *CFLAGS, native])
        key = hashlib.sha256(key_text.encode("utf-8", "surrogatepass")).hexdigest()[:32]
        cache = _private_folder(_cache_dir())
        lib_path = cache / f"{prefix[:_NAME]}-{key}.so"
        sum_path = cache / f"{prefix[:_NAME]}-{key}.so.sha256"
        if not _verified(lib_path, sum_path):
            _warn_if_slow(c_path, source)
            _compile(c_path, texts, lib_path, sum_path, extra)
            if not _verified(lib_path, sum_path):
                raise CModuleError(lib_path, "the compiled library changed before it could be loaded")
        self._ffi = cffi.FFI()
        self._ffi.cdef("\n".join(cdef))
        self._lib = self._ffi.dlopen(str(lib_path))
        self._prefix = prefix
        for name in self._signatures:
            setattr(self, name, self._make(name))
        if lie:
            self._make_lie()

    def _shape(self, arg):
        return resolve(arg_dims("q" if arg in ("q0", "q1") else arg), self._sizes)

    def _size(self, arg):
        return math.prod(self._shape(arg))

    def _make_lie(self):
        """neutral(), integrate(q, v, dt), difference(q0, q1), one state at a time or looped over a batch."""
        lib, buf, p = self._lib, self._ffi.from_buffer, self._prefix
        array_type = f"{self._real}[]"

        def looped(c_fn, arrays, labels, out_size, scalar=()):
            arrays = [np.ascontiguousarray(a, dtype=self.dtype) for a in arrays]
            for a, label in zip(arrays, labels):
                size = self._size(label)
                if a.ndim == 0 or a.shape[-1] != size:
                    raise ValueError(f"{label} must have shape (..., {size}), got {a.shape}")
            batch = np.broadcast_shapes(*(a.shape[:-1] for a in arrays))
            flat = [np.ascontiguousarray(np.broadcast_to(a, batch + a.shape[-1:]).reshape(-1, a.shape[-1])) for a in arrays]
            out = np.empty((len(flat[0]), out_size), self.dtype)
            for i in range(len(out)):
                c_fn(*(buf(array_type, f[i]) for f in flat[:1]), *(buf(array_type, f[i]) for f in flat[1:]), *scalar,
                     buf(array_type, out[i]))
            return out.reshape(batch + (out_size,))

        def neutral():
            out = np.empty(self.NQ, self.dtype)
            getattr(lib, f"{p}_neutral")(buf(array_type, out))
            return out

        self.neutral = neutral
        self.integrate = lambda q, v, dt=1.0: looped(getattr(lib, f"{p}_integrate"), (q, v), ("q", "v"), self.NQ,
                                                   (float(dt),))
        self.difference = lambda q0, q1: looped(getattr(lib, f"{p}_difference"), (q0, q1), ("q0", "q1"), self.NV)

    def _make(self, name):
        fn, args = self._signatures[name]
        c_batch = getattr(self._lib, f"{self._prefix}_{name}_batch")
        c_single = getattr(self._lib, f"{self._prefix}_{name}")
        array_type = f"{self._real}[]"
        set_threads = self._lib.symdyn_set_threads
        buf = self._ffi.from_buffer
        shapes = [self._shape(a) for a in args]
        out_shapes = [resolve(d, self._sizes) for d in out_dims(fn)]
        several = len(out_shapes) > 1
        variant = fext_variant(name) if fext_variant(name) in self._signatures else None
        stabilized = baumgarte_variant(name) if baumgarte_variant(name) in self._signatures else None

        def call(*arrays, f_ext=None, gains=None, error=None):
            if len(arrays) != len(args):
                raise TypeError(f"{name}({', '.join(args)}) takes {len(args)} arguments")
            if gains is not None or error is not None:
                if stabilized is None or gains is None:
                    raise TypeError(f"{name} takes no gains" if stabilized is None else
                                    f"{name}: error without gains (Kp, Kd)")
                plain = [a for a, label in zip(arrays, args) if label != "params"]
                error = np.zeros(self._sizes["nc"]) if error is None else error
                return getattr(self, stabilized)(*plain, gains, error, *arrays[len(plain):])
            if f_ext is not None:
                if variant is None:
                    raise TypeError(f"{name} takes no f_ext")
                plain = [a for a, label in zip(arrays, args) if label != "params"]
                return getattr(self, variant)(*plain, f_ext, *arrays[len(plain):])
            arrays = [np.ascontiguousarray(a, dtype=self.dtype) for a in arrays]
            for a, shape, label in zip(arrays, shapes, args):
                if a.ndim < len(shape) or a.shape[a.ndim - len(shape):] != shape:
                    raise ValueError(f"{label} must have shape (..., {', '.join(map(str, shape))}), got {a.shape}")
            if all(a.ndim == len(shape) for a, shape in zip(arrays, shapes)):   # one state: straight to C
                outs = [np.empty(shape, self.dtype) for shape in out_shapes]
                c_single(*(buf(array_type, a) for a in arrays), *(buf(array_type, o) for o in outs))
                return tuple(outs) if several else outs[0]
            batch = np.broadcast_shapes(*(a.shape[:a.ndim - len(shape)] for a, shape in zip(arrays, shapes)))
            count = int(np.prod(batch, dtype=np.int64))
            outs = [np.empty((count,) + shape, self.dtype) for shape in out_shapes]
            if count:                                        # a batch of zero states: an empty result
                flat = [np.ascontiguousarray(np.broadcast_to(a, batch + shape).reshape(count, -1))
                        for a, shape in zip(arrays, shapes)]
                previous = set_threads(self.threads)
                try:
                    c_batch(count, *(buf(array_type, a) for a in flat), *(buf(array_type, o) for o in outs))
                finally:
                    set_threads(previous)
            outs = [o.reshape(batch + shape) for o, shape in zip(outs, out_shapes)]
            return tuple(outs) if several else outs[0]
        call.__name__, call.__doc__ = name, fn.doc
        return call


def load_c(path, threads=1, lanes=None):
    """Compile (once, cached) and load the generated C module at `path` (.c or .h).

    Batches of states (arrays of shape (..., n)) go through the module's batch entries, several
    states per vector instruction, and over `threads` OpenMP threads (one, with a note on stderr,
    if the compiler cannot build OpenMP code). lanes=False (default: True unless the environment sets
    SYMDYN_NO_LANES=1) compiles the batch entries as loops of single calls (-DSYMDYN_NO_LANES): the
    same results to about 1e-16, several times slower on batches, but about 8x faster to compile.

    CModuleError (one line) if there is no C compiler, if the .h and .c come from different
    robots or runs, if the cache folder is not private, or if the compilation fails."""
    return CModule(path, threads, lanes)
