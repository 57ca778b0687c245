"""What every backend shares: the Backend class, the template environment and the templates' context, which is
data: every statement comes from the backend (Backend.statements, its printer). A language is one package
(codegen/python/, codegen/c/, ...) with its Backend and templates; codegen/languages.py lists them.
"""
import itertools
import sys
from dataclasses import dataclass
from pathlib import Path

import jinja2

from ..functions import sizes
from .generator import PARAMS, header_lines, python_string, set_id
from .printer import float_value, number
from ..multibody import lie


@dataclass
class Unit:
    """One statement of a backend (or a few that define their symbols together, as C's sincos pair):
    the symbols it defines and uses, and its lines."""
    defs: tuple
    uses: frozenset
    lines: list


class Backend:
    """One output language: its name (--lang), the files of a module (one template per extension),
    the printer of its expressions and the statements of its straight-line code."""
    name = None
    extensions = ()            # the files of one module, in the order `render` returns them
    templates = ()             # the template of each of them
    printer = None             # a Printer: one expression as text in this language
    requires = ()              # the languages whose files this one's files include
    real = "double"            # the reals of its arrays (the C backend takes "float" too)
    suffix = ""                # of the module's name (a float32 C module sits beside the double one)

    def statements(self, assignments, inputs):
        """[Unit] of the straight-line code of one function's assignments [(Symbol, Expr)]; `inputs`:
        {name of an input entry's symbol: (its argument array, flat index)} (see input_entries)."""
        raise NotImplementedError

    def extend(self, ctx):
        """Add what this language's templates need beyond the shared context."""

    def files(self, module):
        return [module + self.suffix + ext for ext in self.extensions]

    def render(self, model, programs, module, params_mode):
        """{file name: text} of the module."""
        ctx = _context(model, programs, module + self.suffix, params_mode, self)
        self.extend(ctx)
        env = environment(self)
        return {name: env.get_template(template).render(**ctx)
                for name, template in zip(self.files(module), self.templates)}


def environment(backend):
    """The jinja2 environment of a backend: its templates sit in the folder of the module that defines
    its class (package data of an installed symdyn; any folder for a backend defined elsewhere)."""
    folder = Path(sys.modules[type(backend).__module__].__file__).parent
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(folder)), undefined=jinja2.StrictUndefined,
                             trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    env.filters["python_string"] = python_string
    return env


def _indices(shape):
    """(numpy index "i, j", flat index) of every entry, row-major."""
    return [(", ".join(map(str, idx)), flat) for flat, idx in enumerate(itertools.product(*map(range, shape)))]


def _variant_call(program, extra):
    """The arguments of a variant (f_ext; gains, error) as the base function passes them on: its own,
    then `extra`, then the parameters."""
    plain = [a for a in program.args if a != PARAMS]
    return ", ".join(plain + list(extra) + [a for a in program.args if a == PARAMS])


def input_entries(program):
    """{name of the symbol of an input entry: (argument, flat index)}: where the function reads each."""
    return {str(sym): (arg, flat) for arg, symbols in program.inputs.items() for flat, sym in enumerate(symbols)}


def _function_context(program, backend, names=None):
    """The template's dict of one function; it forwards f_ext (gains) to its variant if generated too (in `names`;
    None: all are)."""
    printer = backend.printer
    units = backend.statements(program.assignments, input_entries(program))
    outputs = [{"name": name, "shape": shape, "size": len(values),
                "results": [(idx, printer(values[flat])) for idx, flat in _indices(shape)],
                # the value of each entry that is a constant, else None
                "numbers": [float_value(e) if e.is_Number else None for e in values]}
               for name, shape, values in program.outputs()]
    result_uses = [used_symbols(e) for e in program.results]     # the outputs one after the other
    used = frozenset().union(*(u.uses for u in units), *result_uses)
    inputs = [(str(program.inputs[arg][flat]), arg, idx, flat) for arg in program.inputs
              for idx, flat in _indices(program.arg_shapes[arg]) if str(program.inputs[arg][flat]) in used]
    present = {key: getattr(program, key) if names is None or getattr(program, key) in names else None
               for key in ("fext", "baumgarte")}
    context = {"name": program.name, "doc": program.doc, "args": program.args, "outputs": outputs,
               "arg_shapes": program.arg_shapes, **present, "fext_call": _variant_call(program, ["f_ext"]),
               "baumgarte_call": _variant_call(program, ["gains", "error"]), "inputs": inputs,
               "lines": [line for u in units for line in u.lines], "program": program, "units": units,
               "ops": ", ".join(f"{v} {k}" for k, v in program.ops.items())}
    # (output, flat index, expression, symbols it uses) of every output entry
    placed = [(o["name"], k, rhs) for o in outputs for k, (_, rhs) in enumerate(o["results"])]
    context["placed"] = [entry + (uses,) for entry, uses in zip(placed, result_uses)]
    context["flat_inputs"] = [(sym, arg, flat) for sym, arg, _, flat in inputs]
    return context


def _context(model, programs, module, params_mode, backend):
    from ..recursions.base_parameters import base_parameters
    base = base_parameters(model)
    names = [p.name for p in programs]
    return dict(header=header_lines(model, params_mode, names), set_id=set_id(model, params_mode, names),
                model=model, module=module, dof=model.dof, joint_names=model.joint_names,
                frames=[f.name for f in model.kinematic_frames],
                constraints=[c.describe() for c in model.constraints], nc=sizes(model)["nc"],
                actuated=list(model.actuated),
                nq=model.nq, nv=model.nv, lie=_lie_pieces(model),
                neutral=[number(x) for x in lie.neutral(model)],
                params_mode=params_mode, parameter_layout=list(model.parameter_names),
                num_params=len(model.parameters), num_base=base.b,
                default_params=[number(v) for v in model.parameters],
                base_names=base.labels(), base_groups=base.describe(),
                functions=[_function_context(p, backend, names) for p in programs])


def used_symbols(e):
    """The names of the symbols an expression reads."""
    return frozenset(str(x) for x in getattr(e, "free_symbols", ()))


def _lie_pieces(model):
    """(group, q start, q end, v start, v end) per joint, runs of vector joints merged."""
    pieces = []
    for g, q0, q1, v0, v1 in lie.joint_pieces(model):
        if g == "vector" and pieces and pieces[-1][0] == "vector":
            pieces[-1] = ("vector", pieces[-1][1], q1, pieces[-1][3], v1)
        else:
            pieces.append((g, q0, q1, v0, v1))
    return pieces
