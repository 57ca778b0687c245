"""Load a generated C module into Python: `symdyn.load_c("generated/panda.c")`.

The module is compiled once with the system C compiler into a cache keyed by the hash of its
source, and opened with cffi. The returned object has the functions of the Python module, numpy
in and out, with batches of states looped in C.
"""
import hashlib
import json
import os
import re
import subprocess
from pathlib import Path

import numpy as np

from .functions import FUNCTIONS, arg_dims, fext_variant, out_dims, resolve

CFLAGS = ("-O2", "-std=c99", "-fPIC", "-shared")
_BATCH = """
void {prefix}_{name}_batch(long count, {args}double *out)
{{
    for (long i = 0; i < count; ++i)
        {prefix}_{name}({calls}out + i * {size});
}}
"""


def _cache_dir():
    return Path(os.environ.get("SYMDYN_CACHE", Path.home() / ".cache" / "symdyn"))


def _signatures(header, prefix):
    """The functions the header declares, with the arguments of each."""
    found = {}
    for fn in FUNCTIONS:
        m = re.search(rf"void {prefix}_{fn.name}\(([^)]*)\);", header)
        if m:
            args = [a.strip().split("*")[-1] for a in m.group(1).split(",")]
            found[fn.name] = (fn, args[:-1])
    return found


class CModule:
    """The C functions of one generated module, callable on numpy arrays of shape (..., n)."""

    def __init__(self, path):
        import cffi
        path = Path(path)
        c_path, h_path = path.with_suffix(".c"), path.with_suffix(".h")
        prefix = path.stem
        header, source = h_path.read_text(), c_path.read_text()
        dof = re.search(rf"#define {prefix.upper()}_DOF (\d+)", header)
        if not dof:
            raise ValueError(f"{h_path}: not a symdyn header")
        self.DOF = n = int(dof.group(1))
        nq = re.search(rf"#define {prefix.upper()}_NQ (\d+)", header)
        self.NQ, self.NV = (int(nq.group(1)) if nq else n), n
        nparams = re.search(rf"#define {prefix.upper()}_NUM_PARAMS (\d+)", header)
        self._nparams = int(nparams.group(1)) if nparams else 0
        nf = re.search(rf"#define {prefix.upper()}_NF (\d+)", header)
        self._sizes = {"nv": n, "nq": self.NQ, "nf": int(nf.group(1)) if nf else 0,
                       "np": self._nparams}
        frames = re.search(r"Frames \(FRAMES\): (.*)\.\n", header)
        self.FRAMES = tuple(json.loads(f"[{frames.group(1)}]")) if frames else ()
        self._signatures = _signatures(header, prefix)
        wrapper, cdef = [f'#include "{h_path.name}"'], []
        for name, (fn, args) in self._signatures.items():
            size = int(np.prod(resolve(out_dims(fn), self._sizes), dtype=np.int64))
            decl_args = "".join(f"const double *{a}, " for a in args)
            calls = "".join(f"{a} + i * {self._size(a)}, " for a in args)
            wrapper.append(_BATCH.format(prefix=prefix, name=name, args=decl_args, calls=calls, size=size))
            cdef.append(f"void {prefix}_{name}_batch(long count, {decl_args}double *out);")
            cdef.append(f"void {prefix}_{name}({decl_args}double *out);")
        lie = "neutral" in header and f"void {prefix}_integrate(" in header
        if lie:
            cdef += [f"void {prefix}_neutral(double *q);",
                     f"void {prefix}_integrate(const double *q, const double *v, double dt, double *q_out);",
                     f"void {prefix}_difference(const double *q0, const double *q1, double *v);"]
        wrapper_text = "\n".join(wrapper)
        key = hashlib.sha256((header + source + wrapper_text + " ".join(CFLAGS)).encode()).hexdigest()[:20]
        lib_path = _cache_dir() / f"{prefix}-{key}.so"
        if not lib_path.exists():
            self._compile(c_path, wrapper_text, lib_path)
        self._ffi = cffi.FFI()
        self._ffi.cdef("\n".join(cdef))
        self._lib = self._ffi.dlopen(str(lib_path))
        self._prefix = prefix
        for name in self._signatures:
            setattr(self, name, self._make(name))
        if lie:
            self._make_lie()

    def _make_lie(self):
        """neutral(), integrate(q, v, dt), difference(q0, q1), one state at a time or looped over a batch."""
        lib, buf, p = self._lib, self._ffi.from_buffer, self._prefix

        def looped(c_fn, arrays, labels, out_size, scalar=()):
            arrays = [np.ascontiguousarray(a, dtype=float) for a in arrays]
            for a, label in zip(arrays, labels):
                size = self._size(label)
                if a.ndim == 0 or a.shape[-1] != size:
                    raise ValueError(f"{label} must have shape (..., {size}), got {a.shape}")
            batch = np.broadcast_shapes(*(a.shape[:-1] for a in arrays))
            flat = [np.ascontiguousarray(np.broadcast_to(a, batch + a.shape[-1:]).reshape(-1, a.shape[-1])) for a in arrays]
            out = np.empty((len(flat[0]), out_size))
            for i in range(len(out)):
                c_fn(*(buf("double[]", f[i]) for f in flat[:1]), *(buf("double[]", f[i]) for f in flat[1:]), *scalar,
                     buf("double[]", out[i]))
            return out.reshape(batch + (out_size,))

        def neutral():
            out = np.empty(self.NQ)
            getattr(lib, f"{p}_neutral")(buf("double[]", out))
            return out

        self.neutral = neutral
        self.integrate = lambda q, v, dt=1.0: looped(getattr(lib, f"{p}_integrate"), (q, v), ("q", "v"), self.NQ,
                                                   (float(dt),))
        self.difference = lambda q0, q1: looped(getattr(lib, f"{p}_difference"), (q0, q1), ("q0", "q1"), self.NV)

    def _shape(self, arg):
        return resolve(arg_dims("q" if arg in ("q0", "q1") else arg), self._sizes)

    def _size(self, arg):
        return int(np.prod(self._shape(arg), dtype=np.int64))

    @staticmethod
    def _compile(c_path, wrapper_text, lib_path):
        lib_path.parent.mkdir(parents=True, exist_ok=True)
        wrapper_c = lib_path.with_suffix(".wrapper.c")
        wrapper_c.write_text(wrapper_text)
        tmp = lib_path.with_suffix(f".{os.getpid()}.tmp")
        cc = os.environ.get("CC", "cc")
        cmd = [cc, *CFLAGS, f"-I{c_path.parent.resolve()}", str(c_path.resolve()), str(wrapper_c), "-o", str(tmp), "-lm"]
        result = subprocess.run(cmd, capture_output=True, text=True)
        if result.returncode != 0:
            raise RuntimeError(f"compiling {c_path} failed:\n{result.stderr}")
        os.replace(tmp, lib_path)

    def _make(self, name):
        fn, args = self._signatures[name]
        c_batch = getattr(self._lib, f"{self._prefix}_{name}_batch")
        c_single = getattr(self._lib, f"{self._prefix}_{name}")
        buf = self._ffi.from_buffer
        shapes = [self._shape(a) for a in args]
        out_shape = resolve(out_dims(fn), self._sizes)
        variant = fext_variant(name) if fext_variant(name) in self._signatures else None

        def call(*arrays, f_ext=None):
            if len(arrays) != len(args):
                raise TypeError(f"{name}({', '.join(args)}) takes {len(args)} arguments")
            if f_ext is not None:
                if variant is None:
                    raise TypeError(f"{name} takes no f_ext")
                plain = [a for a, label in zip(arrays, args) if label != "params"]
                return getattr(self, variant)(*plain, f_ext, *arrays[len(plain):])
            arrays = [np.ascontiguousarray(a, dtype=float) for a in arrays]
            for a, shape, label in zip(arrays, shapes, args):
                if a.ndim < len(shape) or a.shape[a.ndim - len(shape):] != shape:
                    raise ValueError(f"{label} must have shape (..., {', '.join(map(str, shape))}), got {a.shape}")
            out = None
            if all(a.ndim == len(shape) for a, shape in zip(arrays, shapes)):   # one state: straight to C
                out = np.empty(out_shape)
                c_single(*(buf("double[]", a) for a in arrays), buf("double[]", out))
                return out
            batch = np.broadcast_shapes(*(a.shape[:a.ndim - len(shape)] for a, shape in zip(arrays, shapes)))
            count = int(np.prod(batch, dtype=np.int64))
            flat = [np.ascontiguousarray(np.broadcast_to(a, batch + shape).reshape(count, -1))
                    for a, shape in zip(arrays, shapes)]
            out = np.empty((count,) + out_shape)
            c_batch(count, *(buf("double[]", a) for a in flat), buf("double[]", out))
            return out.reshape(batch + out_shape)
        call.__name__, call.__doc__ = name, fn.doc
        return call


def load_c(path):
    """Compile (once, cached by source hash) and load the generated C module at `path` (.c or .h)."""
    return CModule(path)
