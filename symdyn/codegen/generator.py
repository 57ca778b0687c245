"""Trace every function of the set on a Tape, optimize it once, and hand it to the backends.

The core does the work for all languages: symbolic execution with binding (tape), common
subexpressions (hash-consing on the tape), constant folding (exact zeros and ones of the
geometry), dead-code elimination; the backends (templates) only format.
"""
import hashlib
import json
import keyword
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Tuple

import symengine as se

from .. import __version__
from ..multibody.chain import Chain
from ..functions import (ALL, ALL_BY_NAME, FUNCTIONS, PARAMS, arg_dims, available_for, baumgarte_variant, fext_variant,
                         flatten, for_model, functions_for, nest, out_dims, resolve, sizes)
from .printer import count_ops
from .reserved import shadows
from .tape import Tape, live_program


@dataclass
class Program:
    """One generated function as straight-line code."""
    name: str
    doc: str
    args: Tuple[str, ...]               # includes "params" in symbolic-parameter mode
    shape: object                       # "vector" | "matrix" | "nf,6,nv"..., or a tuple of them (several outputs)
    output: object                      # its name, or a tuple of names
    inputs: Dict[str, List]             # arg -> its element symbols, flat (row-major)
    assignments: List                   # [(Symbol, Expr)], live only
    results: List                       # flat, row-major, the outputs one after the other
    ops: Dict[str, int] = field(default_factory=dict)
    form: str = ""                      # the form chosen among the function's alternatives (Function.forms)
    gravity: bool = False
    arg_shapes: Dict[str, Tuple[int, ...]] = field(default_factory=dict)
    fext: str = None                    # the variant taking f_ext, if any
    baumgarte: str = None               # the stabilized variant taking (gains, error), if any
    dims: List = field(default_factory=list)   # each output's shape, as a tuple of ints

    def outputs(self):
        """[(name, its shape as a tuple of ints, its slice of results)] for each output."""
        names = self.output if isinstance(self.output, tuple) else (self.output,)
        out, start = [], 0
        for name, shape in zip(names, self.dims):
            size = math.prod(shape)
            out.append((name, shape, self.results[start:start + size]))
            start += size
        return out


def safe_identifier(name):
    """A C and Python identifier for a robot or joint name."""
    ident = re.sub(r"\W", "_", name, flags=re.ASCII).strip("_") or "robot"
    if ident[0].isdigit():
        ident = "r_" + ident
    if keyword.iskeyword(ident) or ident in C_KEYWORDS or shadows(ident):
        ident += "_"
    return ident


C_KEYWORDS = set("""auto break case char const continue default do double else enum extern float for goto if inline int
long register restrict return short signed sizeof static struct switch typedef union unsigned void volatile while
_Bool _Complex _Imaginary""".split())


def trace(model, fn, params_mode="numeric"):
    """The straight-line program of one function; of alternative forms (Function.forms) the one of fewest
    multiplications, then additions (a tie keeps the first), recorded as program.form; a form that would repeat
    the first's program on the model (Function.form_applies) is not traced."""
    if (model.mimic and not fn.reduced) or (model.conventions == "mujoco" and fn.convention != "mujoco"):
        own = for_model([fn], model)
        if not own:
            raise _undefined(model, fn.name)
        fn = own[0]
    if not fn.forms:
        return _trace(model, fn, params_mode)
    forms = [f for i, f in enumerate(fn.forms) if i == 0 or fn.form_applies is None or fn.form_applies(model, f)]
    programs = [_trace(model, fn.in_form(form), params_mode) for form in forms]
    best = min(range(len(programs)), key=lambda i: (programs[i].ops["mul"], programs[i].ops["add"], i))
    programs[best].form = forms[best]
    return programs[best]


def _trace(model, fn, params_mode):
    size, tape, args = sizes(model), Tape(), fn.signature(params_mode)
    shapes = {a: resolve(arg_dims(a), size) for a in args}
    inputs = {a: [se.Symbol(f"{'p' if a == PARAMS else a}{i}") for i in range(math.prod(shapes[a]))] for a in args}
    chain = Chain(tape, model, inputs.get(PARAMS))                  # symbolic parameters if an argument
    X = chain.transforms(inputs["q"]) if fn.args[0] == "q" else None
    result = fn.trace(tape, chain, X, *(nest(inputs[a], shapes[a]) for a in fn.args[fn.args[0] == "q":]))
    flat = [se.sympify(x) for x in flatten(result)]
    live = live_program(tape.assignments, flat)
    program = Program(fn.name, fn.doc, args, fn.shape, fn.output, inputs, live, flat, gravity=fn.gravity,
                      arg_shapes=shapes, fext=fext_variant(fn.name), dims=[resolve(d, size) for d in out_dims(fn)],
                      baumgarte=baumgarte_variant(fn.name))
    program.ops = count_ops([e for _, e in live] + [e for e in flat if not e.is_Atom])
    return program


def select_functions(names=None, model=None):
    """The functions called `names` (None: the default set, or a model's: with its constraint functions), in the
    table's order; ValueError for an unknown name or a constraint function of a model without constraints. Of a
    model with mimic joints or MuJoCo's coordinates, the functions as it computes them (functions.for_model);
    RobotFileError for one named that it does not define. (Fewer functions: less compile time.)"""
    chosen = _select(names, model)
    if model is None or not (model.mimic or model.conventions == "mujoco"):
        return chosen
    own = for_model(chosen, model)
    if len(own) < len(chosen) and names is not None:
        raise _undefined(model, "--functions: " + next(fn.name for fn in chosen if fn.name not in {f.name for f in own}))
    return own


def _undefined(model, name):
    """The error for a function that the model's coordinates (mimic joints, MuJoCo's) do not define."""
    from ..errors import RobotFileError
    return RobotFileError(model.provenance.path, f"{name} is not defined in the reduced coordinates of mimic joints "
                                      "(use --mimic independent)" if model.mimic else
                          f"{name} is not defined in MuJoCo's coordinates of a free joint (use --conventions pinocchio)")


def _select(names, model):
    pool = available_for(model) if model is not None else ALL
    if names is None:
        return functions_for(model) if model is not None else FUNCTIONS
    if isinstance(names, str):
        names = names.split(",")
    names = [n.strip() for n in names if n.strip()]
    unknown = [n for n in names if n not in ALL_BY_NAME]
    if unknown or not names:
        shown = ", ".join(quoted(n[:60]) for n in unknown[:3]) + (", ..." if len(unknown) > 3 else "")
        raise ValueError(f"unknown function {shown} (expected some of: {', '.join(ALL_BY_NAME)})" if unknown
                         else f"no function named (expected some of: {', '.join(ALL_BY_NAME)})")
    unconstrained = [n for n in names if n not in {fn.name for fn in pool}]
    if unconstrained:
        raise ValueError(f"function {quoted(unconstrained[0])} needs constraints: declare contacts "
                         "(--contact FRAME,... or the robot file's 'contacts:')")
    return tuple(fn for fn in pool if fn.name in names)


def trace_all(model, params_mode="numeric", progress=None, functions=None):
    """The programs of the functions named in `functions` (None: the whole set)."""
    programs = []
    for fn in select_functions(functions, model):
        programs.append(trace(model, fn, params_mode))
        if progress:
            progress(fn.name)
    return programs


def quoted(name):
    """A name as a JSON string that can neither open nor end a C comment (-Wcomment) nor end a Python docstring."""
    return json.dumps(name).replace("*/", "*\\/").replace("/*", "/\\u002a")


def python_string(name):
    """A double-quoted, ASCII-only Python literal of `name` (not JSON's: its surrogate pairs are two characters)."""
    return '"' + "".join(json.dumps(ch)[1:-1] if ord(ch) < 0x10000 else "\\U%08x" % ord(ch) for ch in name) + '"'


def set_id(model, params_mode, names=None):
    """The identity of the files of one run, in each (64 bits of the SHA-256 of the robot file's digest, symdyn's
    version and the options): a .c compiled with another set's .h stops at an #error; load_c refuses the pair."""
    read = model.provenance
    text = f"{read.digest}|{__version__}|{params_mode}|{read.snapped}|{model.dof}"
    if model.mimic:                     # reduced coordinates (the default for a file with <mimic>)
        text += "|mimic"
    if model.conventions != "pinocchio":   # other coordinates, same file
        text += f"|{model.conventions}"
    if read.joint_params:               # friction and armature from a file beside the robot's
        text += f"|{read.joint_params}"
    if model.constraints:               # contacts from the command line change the functions
        text += "|" + ",".join(c.describe() for c in model.constraints)
    if _subset(names, model):           # a .h of other functions than its .c
        text += "|" + ",".join(names)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _joint_order(model):
    if model.mimic:
        follows = "; ".join(f"{quoted(model.joints[m.joint].name)} = {m.multiplier!r} * "
                            f"{quoted(model.joints[m.master].name)} + {m.offset!r}" for m in model.mimic)
        return (f"Coordinates (q, v): {', '.join(quoted(n) for n in model.joint_names)}. Mimic joints (no coordinate "
                f"of their own, reduced coordinates): {follows}.")
    names = ", ".join(quoted(n) for n in model.joint_names)
    parents = [j.parent for j in model.joints]
    if parents == list(range(-1, model.dof - 1)):
        return f"Joint order (base to tip): {names}."
    return (f"Joint order (depth first from the base): {names}. "
            f"Parent of each joint (-1: the base): {', '.join(map(str, parents))}.")


def header_lines(model, params_mode, names=None):
    """The comment lines at the top of every generated file; `names`: the functions it holds."""
    read = model.provenance
    source = Path(read.path).name if read.path else "<memory>"
    return [f"Generated by symdyn {__version__} from {quoted(source)} (sha256 {read.digest[:16]}). Do not edit.",
            f"Robot {quoted(model.name)}, {model.dof} DOF, parameters: {params_mode}." if model.nq == model.nv else
            f"Robot {quoted(model.name)}, {model.nv} DOF (nq {model.nq}, nv {model.nv}), parameters: {params_mode}.",
            _joint_order(model),
            "Frames (FRAMES): " + ", ".join(quoted(f.name) for f in model.kinematic_frames) + "."] + (
        ["Constraints (CONSTRAINTS, nc = " + str(sizes(model)["nc"]) + " rows): " +
         ", ".join(quoted(c.describe()) for c in model.constraints) + "."] if model.constraints else []) + (
        ["Actuated joints of the loops (ACTUATED): " + ", ".join(quoted(n) for n in model.actuated) + "."]
        if model.actuated else []) + (
        [f"{read.snapped} joint origin(s) snapped to exact right angles (--snap-right-angles)."]
        if read.snapped else []) + (
        [f"Part of the robot: {quoted(read.selection)} (--lock, --root, --tip)."] if read.selection else []) + (
        [f"Friction and armature from {quoted(read.joint_params)} (--joint-params)."] if read.joint_params else []) + (
        [f"Coulomb friction smoothed: Fc tanh(qd / {model.coulomb_smoothing!r})."] if model.coulomb_smoothing else []) + (
        [f"Functions: {', '.join(names)} (--functions)" + ("; the rest of the set is not generated."
                                                           if {fn.name for fn in FUNCTIONS} - set(names) else ".")]
        if _subset(names, model) else []) + (
        ["Not generated: the tree's factorizations (articulated inertias, innovations, UDU^T, diagonalized "
         "dynamics), which have no counterpart in the reduced coordinates of mimic joints."] if model.mimic else []) + (
        [_mujoco_line(model)] if model.conventions == "mujoco" else [])


def _mujoco_line(model):
    from ..conventions import free_joints
    line = ("MuJoCo's coordinates (--conventions mujoco): q = qpos (quaternions w, x, y, z), v = qvel (free joint: "
            "[linear velocity in world axes, angular velocity in body axes]), qacc, qfrc; integrate = mj_integratePos.")
    if free_joints(model):
        line += (" Not generated: the tree's factorizations and the derivatives, which have no counterpart in "
                 "these coordinates of a free joint.")
    return line


def _subset(names, model=None):
    """Are `names` (None: all) only some of the functions of the set (of `model`'s set)?"""
    if names is None:
        return False
    full = for_model(functions_for(model), model) if model is not None else FUNCTIONS
    return set(names) != {fn.name for fn in full}

