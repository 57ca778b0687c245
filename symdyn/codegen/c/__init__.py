"""The C backend: one C99 header and source per robot (module.h.jinja, module.c.jinja beside this file).

Here the printer and the statements (with trig.py's sines and cosines); parts.py: loads, stores and long
functions in parts; batch.py: the batch plan and its lanes; tuning.py: the constants. CBackend(real="float")
writes <robot>_f32.h/.c in single precision.
"""
import math
from dataclasses import replace

import symengine as se

from ..backends import Backend, Unit, input_entries, used_symbols
from ..printer import NonFiniteError, Printer, number
from ...multibody.branches import Branches
from . import batch, branch_lanes, trig
from .parts import Dialect, constant_stores, one_piece, split
from .tuning import TUNING

#: the largest finite float
FLT_MAX = 3.4028234663852886e38


class CPrinter(Printer):
    #: libm's functions (and pow), and the module's own sd_sign
    funcs = {"sin": "sin", "cos": "cos", "sqrt": "sqrt", "tanh": "tanh", "sign": "sd_sign", "pow": "pow"}

    def power(self, base, exponent):
        return f"{self.funcs['pow']}({self._print(base)}, {self.literal(exponent)})", 2


class CFloatPrinter(CPrinter):
    """float32: float literals (the suffix f: a bare 0.5 would turn the expression into double
    arithmetic) and libm's float functions."""
    funcs = {name: c if c.startswith("sd_") else c + "f" for name, c in CPrinter.funcs.items()}

    def literal(self, value):
        text = number(value)
        if abs(float(text)) > FLT_MAX:
            raise NonFiniteError(f"the generated code would contain the constant {text}, beyond float32's range")
        return text + "f"


#: per precision: (C type, printer, suffix of the module name: a float32 module sits beside the double one)
PRECISIONS = {"double": ("double", CPrinter(), ""), "float": ("float", CFloatPrinter(), "_f32")}


class CBackend(Backend):
    name = "c"
    extensions = (".h", ".c")
    templates = ("module.h.jinja", "module.c.jinja")

    def __init__(self, real="double", tuning=TUNING):
        self.real, self.printer, self.suffix = PRECISIONS[real]
        self.tuning = tuning

    def statements(self, assignments, inputs):
        """One const per assignment; the sin and cos of one angle together by sd_sincos where the first is
        assigned, those of angles of the inputs alone in one vectorized block first when there are
        tuning.trig_block or more (trig.block). inputs: {input entry's symbol: (argument, flat index)}."""
        pairs = {}
        for s, e in assignments:
            t = trig.trig(e)
            if t:
                pairs.setdefault(t[1], {})[t[0]] = s
        defined = {str(s) for s, _ in assignments}
        early = [angle for angle in pairs if not used_symbols(angle) & defined]
        if len(early) < self.tuning.trig_block:
            early = []
        out = [trig.block(early, pairs, inputs, self.printer, self.real, self.tuning)] if early else []
        done = set(early)                             # angles whose sin and cos are computed already
        for s, e in assignments:
            t = trig.trig(e)
            if t and t[1] in done:
                continue
            if t and len(pairs[t[1]]) == 2:
                done.add(t[1])
                out.append(trig.sincos_unit(pairs[t[1]]["sin"], pairs[t[1]]["cos"], self.printer(t[1]),
                                            used_symbols(e), self.real))
                continue
            line = f"const {self.real} {s} = {self.printer(e)};"
            if t:                                     # sin or cos of an angle alone
                line = trig.TrigLine(line, trig.lane_one(str(s), t[0], self.printer(t[1]), self.real))
            out.append(Unit((str(s),), used_symbols(e), [line]))
        return out

    def prototype(self, module, name, args, outputs):
        """The C declaration of one function (no semicolon; load_c's too): input arrays, then one per output."""
        return (f"void {module}_{name}(" + "".join(f"const {self.real} *{a}, " for a in args)
                + ", ".join(f"{self.real} *{o}" for o in outputs) + ")")

    def batch_params(self, args, outputs):
        """The parameters of the batch entry: `count`, the input arrays, then the output arrays."""
        return ["long count", *(f"const {self.real} *{a}" for a in args), *(f"{self.real} *{o}" for o in outputs)]

    def batch_prototype(self, module, name, args, outputs):
        """The declaration of the batch entry: `count` states, every array of shape (count, n)."""
        return f"void {module}_{name}_batch(" + ", ".join(self.batch_params(args, outputs)) + ")"

    def lie_prototypes(self, module):
        """{name: declaration} of the configuration functions (the header's, lie.c.jinja's and load_c's)."""
        r = self.real
        return {"neutral": f"void {module}_neutral({r} *q)",
                "integrate": f"void {module}_integrate(const {r} *q, const {r} *v, {r} dt, {r} *q_out)",
                "difference": f"void {module}_difference(const {r} *q0, const {r} *q1, {r} *v)"}

    def extend(self, ctx):
        functions, module = ctx["functions"], ctx["module"]
        ctx["real"] = self.real
        ctx["lie_prototypes"] = self.lie_prototypes(module)
        branches = Branches(ctx["model"])
        groups = (branches, branches.groups(self.tuning.branch_lanes))
        for f in functions:
            outs = [o["name"] for o in f["outputs"]]
            f["prototype"] = self.prototype(module, f["name"], f["args"], outs)
            f["batch_prototype"] = self.batch_prototype(module, f["name"], f["args"], outs)
            f["batch_params"] = ", ".join(self.batch_params(f["args"], outs))
            f["arg_sizes"] = {a: math.prod(f["arg_shapes"][a]) for a in f["args"]}
            self._single_state(f, groups)
        self._batches(functions)
        helpers = set().union(*(trig.helpers(f["lines"], f["batch"].kind != batch.SINGLE) for f in functions))
        ctx["uses_sincos"], ctx["uses_sincos_n"] = "sd_sincos" in helpers, "sd_sincos_n" in helpers
        ctx["uses_lane_sincos"], ctx["uses_trig"] = "sd_sincos_lane" in helpers, bool(helpers)
        ctx["uses_sign"] = any(e.atoms(se.sign) for f in functions         # then the module needs sd_sign
                               for e in [e for _, e in f["program"].assignments] + list(f["program"].results))
        ctx["uses_lanes"] = any(f["batch"].kind != batch.SINGLE for f in functions)
        ctx["splits"] = any(f["parts"] or len(f["lane_parts"]) > 1 for f in functions)

    def _single_state(self, f, groups=(None, ())):
        """The single-state function: like branches (`groups`: (Branches, [[branch]]), none by default) as lanes
        where that pays (branch_lanes.py), else in parts (f["parts"], f["workspace"]) above tuning.split_above
        statements, else in one piece (f["body"])."""
        dialect, tuning = Dialect(self.real), self.tuning
        f["parts"], f["workspace"], f["body"] = [], 0, []
        zeros = {(o["name"], k) for o in f["outputs"] for k, value in enumerate(o["numbers"]) if value == 0}
        lanes = self._lane_form(f, groups)
        if lanes is None and tuning.split_above is not None and len(f["units"]) > tuning.split_above:
            f["parts"], f["workspace"] = split(f["units"], f["flat_inputs"], f["args"], f["placed"], tuning.part_size,
                                               dialect, lambda ready: constant_stores(ready, zeros, dialect, tuning))
            return
        read = {arg for _, arg, _ in f["flat_inputs"]}
        f["body"] = ([dialect.load_input(*entry) for entry in f["flat_inputs"]]
                     + one_piece(lanes or f["units"], f["placed"], zeros, dialect, tuning)
                     + [dialect.unused(a) for a in f["args"] if a not in read])

    def _lane_form(self, f, groups):
        """[Unit] of f with its like branches as lanes, or None: none of them, more values that something outside
        the loops reads (a load more each) than tuning.lane_loads per statement the loops save, or more statements
        (the loops' once) than one piece of loops takes (tuning.lane_piece times split_above; None: no limit)."""
        branches, groups = groups
        program, split = f["program"], self.tuning.split_above
        # the analysis costs about a trace: a function of more than split_above statements per lane of the widest
        # group is not analysed (talos_reduced's derivatives, whose lane form could not fit one piece anyway)
        if not groups or split is not None and len(program.assignments) > split * max(map(len, groups)):
            return None
        scalar = frozenset()
        for _ in range(4):      # statements in a cycle between lanes stay scalar, the lanes formed again (go2's FD: once)
            lanes = branch_lanes.Lanes(program, branches, groups, scalar)
            saved = lanes.lane_statements() - lanes.loop_statements()
            if (not saved or lanes.escaping() > self.tuning.lane_loads * saved
                    or split is not None and len(program.assignments) - saved > self.tuning.lane_piece * split):
                return None
            try:
                return branch_lanes.units(lanes, self, input_entries(program))
            except branch_lanes.Cycle as cycle:
                scalar |= cycle.symbols
        return None

    def _batches(self, functions):
        """The batch plan of every function (f["batch"]) and the lane loops it asks for (f["lane_parts"])."""
        # per function: statements, reals read and written per state, sines and cosines
        costs = [(trig.statements(f["lines"]), sum(f["arg_sizes"].values()) + sum(o["size"] for o in f["outputs"]),
                  trig.count(f["lines"])) for f in functions]
        parts = {}

        def workspace(k):
            parts[k] = batch.lanes(functions[k], batch.Batch(batch.LANE_PARTS), self.real, self.tuning)
            return parts[k][1]

        for k, (f, plan) in enumerate(zip(functions, batch.plan(costs, self.tuning, workspace))):
            f["batch"], f["lane_parts"], f["lane_workspace"] = plan, [], 0
            if plan.kind != batch.SINGLE:
                f["lane_parts"], f["lane_workspace"] = parts.get(k) or batch.lanes(f, plan, self.real, self.tuning)


C = CBackend()
C32 = CBackend(real="float")      # --precision float32 (--lang c-float32)


def render_c(model, programs, module, params_mode, split_above=TUNING.split_above, part_size=TUNING.part_size):
    """(.h text, .c text); functions of more than `split_above` statements (None: never) are cut into parts."""
    backend = CBackend(tuning=replace(TUNING, split_above=split_above, part_size=part_size))
    files = backend.render(model, programs, module, params_mode)
    return files[f"{module}.h"], files[f"{module}.c"]
