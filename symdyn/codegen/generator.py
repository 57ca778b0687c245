"""Trace every function of the set on a Tape, optimize it once, and hand it to the backends.

The core does the work for all languages: symbolic execution with binding (tape), common
subexpressions (hash-consing on the tape), constant folding (exact zeros and ones of the
geometry), dead-code elimination; the backends (templates) only format.
"""
import json
import keyword
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Tuple

import symengine as se

from .. import __version__
from ..chain import Chain
from ..functions import FUNCTIONS, arg_dims, fext_variant, flatten, nest, out_dims, resolve, sizes
from ..model import PARAMETER_NAMES
from .printer import count_ops
from .tape import Tape, live_program

#: the C name of each function's result
OUTPUT_NAMES = {"inverse_dynamics": "tau", "mass_matrix": "M", "mass_matrix_inverse": "Minv",
                "forward_dynamics": "qdd", "gravity": "g", "coriolis_matrix": "C", "nonlinear_effects": "b",
                "articulated_inertia": "D", "innovations_factor": "m", "innovations_factor_inverse": "ell",
                "total_rates": "nu", "joint_rates": "qd", "working_moments": "eps", "applied_moments": "tau",
                "coriolis_nu": "Cnu", "frame_placement": "oMf", "frame_jacobian": "J", "frame_velocity": "vf",
                "frame_acceleration_bias": "af", "center_of_mass": "com", "com_jacobian": "Jcom",
                "centroidal_momentum_matrix": "Ag", "centroidal_momentum": "hg",
                "operational_space_inertia_inverse": "Linv", "inverse_dynamics_fext": "tau",
                "forward_dynamics_fext": "qdd"}
PARAMS = "params"


@dataclass
class Program:
    """One generated function as straight-line code."""
    name: str
    doc: str
    args: Tuple[str, ...]               # includes "params" in symbolic-parameter mode
    shape: Tuple[int, ...]              # of the result
    output: str
    inputs: Dict[str, List]             # arg -> its element symbols, flat (row-major)
    assignments: List                   # [(Symbol, Expr)], live only
    results: List                       # flat, row-major
    ops: Dict[str, int] = field(default_factory=dict)
    gravity: bool = False
    arg_shapes: Dict[str, Tuple[int, ...]] = field(default_factory=dict)
    fext: str = None                    # the variant taking f_ext, if any


def safe_identifier(name):
    """A C and Python identifier for a robot or joint name."""
    ident = re.sub(r"\W", "_", name, flags=re.ASCII).strip("_") or "robot"
    if ident[0].isdigit():
        ident = "r_" + ident
    if keyword.iskeyword(ident) or ident in C_KEYWORDS or ident in SHADOWED:
        ident += "_"
    return ident


#: module names that would hide a standard C header (-I of the output folder) or a Python module
SHADOWED = {"assert", "complex", "ctype", "errno", "fenv", "float", "inttypes", "iso646", "limits", "locale", "math",
            "setjmp", "signal", "stdalign", "stdarg", "stdatomic", "stdbool", "stddef", "stdint", "stdio", "stdlib",
            "stdnoreturn", "string", "tgmath", "threads", "time", "uchar", "wchar", "wctype",
            "numpy", "np", "symdyn", "sys", "os", "cffi", "builtins", "typing", "types", "abc", "io", "json"}

C_KEYWORDS = {"auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum", "extern",
              "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return", "short", "signed",
              "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void", "volatile", "while",
              "_Bool", "_Complex", "_Imaginary"}


def trace(model, fn, params_mode="numeric"):
    """The straight-line program of one function."""
    size = sizes(model)
    tape = Tape()
    shapes = {a: resolve(arg_dims(a), size) for a in fn.args}
    inputs = {a: [se.Symbol(f"{a}{i}") for i in range(_count(shapes[a]))] for a in fn.args}
    params = None
    args = fn.args
    if params_mode == "symbolic":
        nb = len(model.bodies)
        shapes[PARAMS] = (10 * nb,)
        inputs[PARAMS] = [se.Symbol(f"p{i}") for i in range(10 * nb)]
        params = [inputs[PARAMS][10 * k:10 * k + 10] for k in range(nb)]
        args = args + (PARAMS,)
    chain = Chain(tape, model, params)
    X = chain.transforms(inputs["q"])
    result = fn.trace(tape, chain, X, *(nest(inputs[a], shapes[a]) for a in fn.args[1:]))
    flat = [se.sympify(x) for x in flatten(result)]
    live = live_program(tape.assignments, flat)
    program = Program(fn.name, fn.doc, args, resolve(out_dims(fn), size), OUTPUT_NAMES[fn.name], inputs, live, flat,
                      gravity=fn.gravity, arg_shapes=shapes, fext=fext_variant(fn.name))
    program.ops = count_ops([e for _, e in live] + [e for e in flat if not e.is_Atom])
    return program


def _count(shape):
    count = 1
    for d in shape:
        count *= d
    return count


def trace_all(model, params_mode="numeric", progress=None):
    programs = []
    for fn in FUNCTIONS:
        programs.append(trace(model, fn, params_mode))
        if progress:
            progress(fn.name)
    return programs


def parameter_layout(model):
    """Names of the entries of the parameter vector (symbolic-parameter mode)."""
    return [f"{body.name}.{p}" for body in model.bodies for p in PARAMETER_NAMES]


def quoted(name):
    """A name as a JSON string that cannot end a C comment or a Python docstring."""
    return json.dumps(name).replace("*/", "*\\/")


def _joint_order(model):
    names = ", ".join(quoted(n) for n in model.joint_names)
    parents = [j.parent for j in model.joints]
    if parents == list(range(-1, model.dof - 1)):
        return f"Joint order (base to tip): {names}."
    return (f"Joint order (depth first from the base): {names}. "
            f"Parent of each joint (-1: the base): {', '.join(map(str, parents))}.")


def header_lines(model, params_mode):
    source = Path(model.path).name if model.path else "<memory>"
    return [f"Generated by symdyn {__version__} from {quoted(source)} (sha256 {model.digest[:16]}). Do not edit.",
            f"Robot {quoted(model.name)}, {model.dof} DOF, parameters: {params_mode}." if model.nq == model.nv else
            f"Robot {quoted(model.name)}, {model.nv} DOF (nq {model.nq}, nv {model.nv}), parameters: {params_mode}.",
            _joint_order(model),
            "Frames (FRAMES): " + ", ".join(quoted(f.name) for f in model.kinematic_frames) + "."] + (
        [f"{model.snapped} joint origin rotation(s) snapped to exact right angles (--snap-right-angles)."]
        if model.snapped else []) + (
        [f"Part of the robot: {quoted(model.selection)} (--lock, --root, --tip)."] if model.selection else [])
