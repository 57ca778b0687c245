"""Load a generated C module into Python: `symdyn.load_c("generated/panda.c")`.

The module is compiled once with the system C compiler into a cache keyed by the hash of its
source, and opened with cffi. The returned object has the functions of the Python module, numpy
in and out, with batches of states looped in C. A function with several outputs (C: one out pointer
each) returns a tuple of arrays, as in Python.
"""
import hashlib
import os
import re
import subprocess
from pathlib import Path

import numpy as np

from .functions import FUNCTIONS

CFLAGS = ("-O2", "-std=c99", "-fPIC", "-shared")
_BATCH = """
void {prefix}_{name}_batch(long count, {args}{outs})
{{
    for (long i = 0; i < count; ++i)
        {prefix}_{name}({calls}{out_calls});
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
            found[fn.name] = (fn, args[:-len(fn.shapes)])
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
        nparams = re.search(rf"#define {prefix.upper()}_NUM_PARAMS (\d+)", header)
        self._nparams = int(nparams.group(1)) if nparams else 0
        self._signatures = _signatures(header, prefix)
        wrapper, cdef = [f'#include "{h_path.name}"'], []
        for name, (fn, args) in self._signatures.items():
            sizes = [n * n if shape == "matrix" else n for shape in fn.shapes]
            decl_args = "".join(f"const double *{a}, " for a in args)
            calls = "".join(f"{a} + i * {self._nparams if a == 'params' else n}, " for a in args)
            outs = ", ".join(f"double *out{i}" for i in range(len(sizes)))
            out_calls = ", ".join(f"out{i} + i * {size}" for i, size in enumerate(sizes))
            wrapper.append(_BATCH.format(prefix=prefix, name=name, args=decl_args, calls=calls, outs=outs,
                                         out_calls=out_calls))
            cdef.append(f"void {prefix}_{name}_batch(long count, {decl_args}{outs});")
            cdef.append(f"void {prefix}_{name}({decl_args}{outs});")
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
        n = self.DOF
        c_batch = getattr(self._lib, f"{self._prefix}_{name}_batch")
        c_single = getattr(self._lib, f"{self._prefix}_{name}")
        buf = self._ffi.from_buffer
        sizes = [self._nparams if a == "params" else n for a in args]
        out_shapes = [(n, n) if shape == "matrix" else (n,) for shape in fn.shapes]
        several = len(out_shapes) > 1

        def call(*arrays):
            if len(arrays) != len(args):
                raise TypeError(f"{name}({', '.join(args)}) takes {len(args)} arguments")
            arrays = [np.ascontiguousarray(a, dtype=float) for a in arrays]
            for a, size, label in zip(arrays, sizes, args):
                if a.ndim == 0 or a.shape[-1] != size:
                    raise ValueError(f"{label} must have shape (..., {size}), got {a.shape}")
            if all(a.ndim == 1 for a in arrays):            # one state: straight to the C function
                outs = [np.empty(shape) for shape in out_shapes]
                c_single(*(buf("double[]", a) for a in arrays), *(buf("double[]", o) for o in outs))
                return tuple(outs) if several else outs[0]
            batch = np.broadcast_shapes(*(a.shape[:-1] for a in arrays))
            count = int(np.prod(batch, dtype=np.int64))
            flat = [np.ascontiguousarray(np.broadcast_to(a, batch + a.shape[-1:]).reshape(count, -1)) for a in arrays]
            outs = [np.empty((count,) + shape) for shape in out_shapes]
            c_batch(count, *(buf("double[]", a) for a in flat), *(buf("double[]", o) for o in outs))
            outs = [o.reshape(batch + shape) for o, shape in zip(outs, out_shapes)]
            return tuple(outs) if several else outs[0]
        call.__name__, call.__doc__ = name, fn.doc
        return call


def load_c(path):
    """Compile (once, cached by source hash) and load the generated C module at `path` (.c or .h)."""
    return CModule(path)
