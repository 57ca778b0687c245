"""Backends only format: they print the optimized programs through jinja2 templates."""
import itertools
from pathlib import Path

import jinja2

from .generator import PARAMS, header_lines, parameter_layout, python_string, set_id
from .parts import Unit, split
from .printer import Printer, number
from .. import lie

#: a C function of more statements than SPLIT_ABOVE is cut into parts of at most PART_SIZE (see
#: parts.py). Every function of a 7-DoF arm stays one piece (largest: 1326 statements, xarm7); gcc -O2
#: on a 50-link Coriolis matrix in parts of 250 / 500 / 1000 / 2000 statements: 6.4 / 7.8 / 11 / 15 s.
SPLIT_ABOVE = 2000
PART_SIZE = 250


def _template_dir():
    """templates/ beside the package in a checkout (so that each checkout renders its own), else the
    installed package symdyn.templates."""
    checkout = Path(__file__).resolve().parents[2] / "templates"
    if (checkout / "module.py.jinja").exists():
        return checkout
    from importlib.resources import files
    return Path(str(files("symdyn.templates")))


def environment():
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(_template_dir())), undefined=jinja2.StrictUndefined,
                             trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    env.filters["python_string"] = python_string
    env.tests["literal"] = _is_literal
    return env


def _is_literal(text):
    """Is the printed expression a number (a constant entry of an output)?"""
    try:
        float(text)
    except ValueError:
        return False
    return True


def _ops_text(ops):
    return ", ".join(f"{v} {k}" for k, v in ops.items())


def _indices(shape):
    """(numpy index "i, j", flat index) of every entry, row-major."""
    return [(", ".join(map(str, idx)), flat) for flat, idx in enumerate(itertools.product(*map(range, shape)))]


def _fext_call(program):
    """The arguments of the f_ext variant, as the base function passes them on."""
    plain = [a for a in program.args if a != PARAMS]
    return ", ".join(plain + ["f_ext"] + [a for a in program.args if a == PARAMS])


def _function_context(program, printer, split_above=None, part_size=PART_SIZE):
    units = _units(program.assignments, printer)
    outputs = [{"name": name, "shape": shape, "dims": shape, "size": len(values),
                "results": [(idx, printer(values[flat])) for idx, flat in _indices(shape)],
                # an output that is mostly exact zeros (the regressor) starts from zeros in Python
                "sparse": sum(e == 0 for e in values) > len(values) // 2}
               for name, shape, values in program.outputs()]
    result_uses = [_names(e) for e in program.results]          # the outputs one after the other
    used = frozenset().union(*(u.uses for u in units), *result_uses)
    inputs = [(str(program.inputs[arg][flat]), arg, idx, flat) for arg in program.inputs
              for idx, flat in _indices(program.arg_shapes[arg]) if str(program.inputs[arg][flat]) in used]
    context = {"name": program.name, "doc": program.doc, "args": program.args, "outputs": outputs,
               "arg_shapes": program.arg_shapes, "fext": program.fext, "fext_call": _fext_call(program),
               "inputs": inputs, "lines": [line for u in units for line in u.lines], "ops": _ops_text(program.ops),
               "gravity": program.gravity, "parts": [], "workspace": 0}
    if split_above is not None and len(units) > split_above:
        placed = [(o["name"], k, rhs) for o in outputs for k, (_, rhs) in enumerate(o["results"])]
        placed = [(name, k, rhs, uses) for (name, k, rhs), uses in zip(placed, result_uses)]
        flat_inputs = [(sym, arg, flat) for sym, arg, _, flat in inputs]
        context["parts"], context["workspace"] = split(units, flat_inputs, program.args, placed,
                                                       [o["name"] for o in outputs], part_size)
    return context


def _context(model, programs, module, params_mode, lang, split_above=None, part_size=PART_SIZE):
    from ..base_parameters import base_parameters
    printer = Printer(lang)
    base = base_parameters(model)
    names = [p.name for p in programs]
    return dict(header=header_lines(model, params_mode, names), set_id=set_id(model, params_mode, names),
                module=module, dof=model.dof, joint_names=model.joint_names,
                frames=[f.name for f in model.kinematic_frames],
                nq=model.nq, nv=model.nv, nparams=10 * len(model.bodies), lie=_lie_pieces(model),
                neutral=[number(x) for x in lie.neutral(model)],
                params_mode=params_mode, parameter_layout=parameter_layout(model),
                num_params=len(model.parameters), num_base=base.b,
                default_params=[number(v) for v in model.parameters],
                base_names=base.labels(), base_groups=base.describe(),
                functions=[_function_context(p, printer, split_above, part_size) for p in programs])


def _names(e):
    return frozenset(str(x) for x in getattr(e, "free_symbols", ()))


def _lie_pieces(model):
    """(group, q start, q end, v start, v end) per joint, runs of vector joints merged."""
    pieces = []
    for j, qi, vi in zip(model.joints, model.q_slices, model.v_slices):
        g = j.kind.lie_group
        if g == "vector" and pieces and pieces[-1][0] == "vector":
            pieces[-1] = ("vector", pieces[-1][1], qi[-1] + 1, pieces[-1][3], vi[-1] + 1)
        else:
            pieces.append((g, qi[0], qi[-1] + 1, vi[0], vi[-1] + 1))
    return pieces


def _trig(e):
    name = type(e).__name__
    return (name, e.args[0]) if name in ("sin", "cos") else None


def _units(assignments, printer):
    """One statement per assignment; in C, sin and cos of the same angle become one sincos call."""
    if printer.lang == "python":
        return [Unit((str(s),), _names(e), [f"{s} = {printer(e)}"]) for s, e in assignments]
    pairs = {}
    for s, e in assignments:
        t = _trig(e)
        if t:
            pairs.setdefault(t[1], {})[t[0]] = s
    out = []
    for s, e in assignments:
        t = _trig(e)
        uses = _names(e)
        if t and len(pairs[t[1]]) == 2:
            if t[0] == "sin":
                c = pairs[t[1]]["cos"]
                out.append(Unit((str(s), str(c)), uses,
                                [f"double {s}, {c};", f"sd_sincos({printer(t[1])}, &{s}, &{c});"]))
            continue
        out.append(Unit((str(s),), uses, [f"const double {s} = {printer(e)};"]))
    return out


def render_python(model, programs, module, params_mode):
    ctx = _context(model, programs, module, params_mode, "python")
    ctx["lie_source"] = lie.source({p[0] for p in ctx["lie"]} - {"vector"})
    return environment().get_template("module.py.jinja").render(**ctx)


def render_c(model, programs, module, params_mode, split_above=SPLIT_ABOVE, part_size=PART_SIZE):
    """(.h text, .c text); functions of more than `split_above` statements are cut into parts."""
    ctx = _context(model, programs, module, params_mode, "c", split_above, part_size)
    ctx["uses_sincos"] = any(line.startswith("sd_sincos(") for f in ctx["functions"] for line in f["lines"])
    ctx["uses_sign"] = any("sd_sign(" in text for f in ctx["functions"]
                           for text in f["lines"] + [rhs for o in f["outputs"] for _, rhs in o["results"]])
    ctx["splits"] = any(f["parts"] for f in ctx["functions"])
    env = environment()
    return env.get_template("module.h.jinja").render(**ctx), env.get_template("module.c.jinja").render(**ctx)
