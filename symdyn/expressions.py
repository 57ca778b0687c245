"""Closed-form sympy expressions of a generated function, for small robots: teaching, papers, checking
by hand (`symdyn.expressions`, `symdyn latex`).

They are built from the same straight-line programs as the generated code (codegen/tape.py): the
bound intermediates x0, x1, ... are substituted back, in order, until each result is an expression
of the inputs alone. That undoes the binding which keeps the generated code small, so the size of
the result grows about geometrically with the number of joints (ENGINE.md): the size of every
result is computed first, without building it, and a function whose expressions would exceed
`max_size` nodes is refused with one line instead of running out of memory.
"""
import math

import symengine as se

from .errors import SymdynError, one_line
from .functions import BY_NAME, arg_dims, resolve, sizes
from .multibody.model import JOINT_PARAMETER_NAMES, Model, PARAMETER_NAMES

#: default largest number of expression-tree nodes (operations, symbols and numbers) of one function;
#: a 2-link arm's mass matrix has a few hundred, a 3-link spatial arm's inverse dynamics several thousand
MAX_SIZE = 20000

#: LaTeX of the input vectors' symbols (subscript: the joint's index in q, from 0 as in the code)
INPUT_LATEX = {"q": "q", "qd": r"\dot{q}", "qdd": r"\ddot{q}", "tau": r"\tau", "nu": r"\nu", "eps": r"\epsilon",
               "f_ext": r"f^{\mathrm{ext}}"}
#: LaTeX of each function's result (the left-hand side); functions not listed print as \mathrm{name}
RESULT_LATEX = {"inverse_dynamics": r"\tau", "mass_matrix": "M(q)", "mass_matrix_inverse": "M(q)^{-1}",
                "forward_dynamics": r"\ddot{q}", "gravity": "g(q)", "coriolis_matrix": r"C(q, \dot{q})",
                "nonlinear_effects": r"C(q, \dot{q})\,\dot{q} + g(q)", "articulated_inertia": "D(q)",
                "innovations_factor": "m(q)", "innovations_factor_inverse": r"\ell(q)",
                "total_rates": r"\nu", "joint_rates": r"\dot{q}", "working_moments": r"\epsilon",
                "applied_moments": r"\tau", "coriolis_nu": r"C(\theta, \nu)"}
#: LaTeX of the parameters (symbolic-parameter mode) of link k: mass, first moment h = m c, inertia about the origin
PARAMETER_LATEX = {"m": "m_{{{k}}}", "mx": "h_{{x,{k}}}", "my": "h_{{y,{k}}}", "mz": "h_{{z,{k}}}",
                   "Ixx": "I_{{xx,{k}}}", "Ixy": "I_{{xy,{k}}}", "Iyy": "I_{{yy,{k}}}", "Ixz": "I_{{xz,{k}}}",
                   "Iyz": "I_{{yz,{k}}}", "Izz": "I_{{zz,{k}}}",
                   "Fv": "F_{{v,{k}}}", "Fc": "F_{{c,{k}}}", "Fo": "F_{{o,{k}}}", "Ia": "I_{{a,{k}}}"}


class ExpressionTooLarge(SymdynError, ValueError):
    """The expanded expressions of a function would be too large to build (one line, names the file)."""


def _function(name):
    try:
        return BY_NAME[name]
    except KeyError:
        raise ValueError(f"unknown function {name!r} (expected one of: {', '.join(BY_NAME)})") from None


def _model(robot):
    if isinstance(robot, Model):
        return robot
    from .readers.load import load_robot
    return load_robot(robot)


def expanded_sizes(program):
    """Tree size (nodes) of each result with every intermediate substituted, computed without
    substituting: an intermediate counts as often as it is used."""
    sizes = {}

    def size(e):
        if not isinstance(e, se.Basic):
            return 1
        if e.is_Symbol:
            return sizes.get(e, 1)
        return 1 + sum(size(a) for a in e.args)

    for symbol, expr in program.assignments:
        sizes[symbol] = size(expr)
    return [size(r) for r in program.results]


def _substituted(program):
    """The results as symengine expressions of the inputs only."""
    values = {}
    for symbol, expr in program.assignments:
        used = {s: values[s] for s in expr.free_symbols if s in values}
        values[symbol] = expr.xreplace(used) if used else expr
    out = []
    for r in program.results:
        if isinstance(r, se.Basic):
            used = {s: values[s] for s in r.free_symbols if s in values}
            r = r.xreplace(used) if used else r
        out.append(r)
    return out


def expressions(robot, function, params="numeric", simplify=False, max_size=MAX_SIZE):
    """sympy Matrix of `function` (a generated function's name, e.g. "mass_matrix") of `robot` (a Model
    or a robot file), in the symbols q0, q1, ... (and qd0, ..., qdd0, ..., tau0, nu0, eps0 as the
    function takes them; with params="symbolic" also p0, p1, ... in the generated modules' parameter
    layout). A vector is a column (n x 1), a matrix n x n, a frame function's result has its last
    axis as columns ((nf, 6, n) is (6 nf) x n); a function with several outputs gives a tuple.
    Numbers are floats, as in the generated code.

    simplify: apply sympy.simplify to each entry (slow beyond two or three joints).
    Raises ExpressionTooLarge when the expressions would have more than `max_size` nodes in all.
    """
    import sympy                                   # imported here: it takes a second, and only this needs it
    from .codegen.generator import trace
    fn = _function(function)
    model = _model(robot)
    program = trace(model, fn, params)
    size = sum(expanded_sizes(program))
    if size > max_size:
        raise ExpressionTooLarge(model.provenance.path or model.name,
                                 f"{function} of this {model.dof}-joint robot expands to {size:.3g} expression nodes "
                                 f"(limit {max_size}): closed forms are for small robots (2-3 joints); the generated "
                                 f"code computes the same with {program.ops['mul']} mul by sharing intermediates")
    entries = [sympy.sympify(e) for e in _substituted(program)]
    if simplify:
        entries = [sympy.simplify(e) for e in entries]
    matrices, start = [], 0
    for _, shape, results in program.outputs():      # a function with several outputs gives a tuple
        part = entries[start:start + len(results)]
        start += len(results)
        *rows, cols = shape                            # a vector is a column; (nf, 6, n) is (nf * 6) x n
        matrices.append(sympy.Matrix(len(part) // cols, cols, part) if rows else sympy.Matrix(cols, 1, part))
    return tuple(matrices) if len(matrices) > 1 else matrices[0]


def symbol_latex(model, function, params="numeric"):
    """{sympy.Symbol: LaTeX} for the symbols of `expressions(model, function, params)`."""
    import sympy
    fn = _function(function)
    count = {a: math.prod(resolve(arg_dims(a), sizes(model))) for a in fn.args}
    names = {sympy.Symbol(f"{a}{i}"): f"{INPUT_LATEX.get(a, a)}_{{{i}}}" for a in fn.args for i in range(count[a])}
    if params == "symbolic" or "params" in fn.args:
        nb = len(model.bodies)
        names.update({sympy.Symbol(f"p{10 * k + i}"): PARAMETER_LATEX[p].format(k=k)
                      for k in range(nb) for i, p in enumerate(PARAMETER_NAMES)})
        names.update({sympy.Symbol(f"p{10 * nb + 4 * k + i}"): PARAMETER_LATEX[p].format(k=k)
                      for k in range(len(model.joints)) for i, p in enumerate(JOINT_PARAMETER_NAMES)})
    return names


def latex(robot, function, params="numeric", simplify=False, max_size=MAX_SIZE):
    """LaTeX of `function`'s expressions: a comment naming the robot and the symbols, then one equation."""
    import sympy
    model = _model(robot)
    matrix = expressions(model, function, params, simplify, max_size)
    body = sympy.latex(matrix, symbol_names=symbol_latex(model, function, params), mat_delim="(")
    lhs = RESULT_LATEX.get(function, rf"\mathrm{{{function}}}".replace("_", r"\_"))
    where = model.provenance.path or "in memory"
    comment = one_line(f"{function} of robot {model.name!r} ({where}), generated by symdyn; "
                       f"{_index_legend(model)}")
    return f"% {comment}\n{lhs} = {body}\n"


def _index_legend(model):
    """Which indices of the formula's symbols belong to which joint: one index per joint while q and the
    velocities line up; else (a free-flyer's quaternion, a planar joint's cos/sin) the configuration
    indices of q and the velocity indices of qd, qdd, tau, ... apart."""
    def span(indices):
        return f"{indices[0]}" if len(indices) == 1 else f"{indices[0]}-{indices[-1]}"
    owned = [(j.name, qs, vs) for j, qs, vs in zip(model.joints, model.q_slices, model.v_slices) if qs]
    if all(qs == vs for _, qs, vs in owned):
        return "joint indices from 0 (" + ", ".join(f"{span(qs)}: {name}" for name, qs, _ in owned) + ")"
    return ("indices from 0, of q (configuration) and of the velocity-sized vectors (qd, qdd, tau, ...): " +
            "; ".join(f"{name}: q {span(qs)}, velocity {span(vs)}" for name, qs, vs in owned))
