"""The C backend: one C99 header and source per robot (templates/module.h.jinja, module.c.jinja)."""
from .backends import PART_SIZE, Backend, used_symbols
from .parts import Unit
from .printer import Printer, number

#: a C function of more statements than SPLIT_ABOVE is cut into parts of at most PART_SIZE (see
#: parts.py). Every function of a 7-DoF arm stays one piece (largest: 1326 statements, xarm7); gcc -O2
#: on a 50-link Coriolis matrix in parts of 250 / 500 / 1000 / 2000 statements: 6.4 / 7.8 / 11 / 15 s.
SPLIT_ABOVE = 2000


class CPrinter(Printer):
    funcs = {"sin": "sin", "cos": "cos", "sqrt": "sqrt", "tanh": "tanh", "sign": "sd_sign"}

    def power(self, base, exponent):
        return f"pow({self._print(base)}, {number(exponent)})", 2


def _trig(e):
    name = type(e).__name__
    return (name, e.args[0]) if name in ("sin", "cos") else None


class CBackend(Backend):
    name = "c"
    extensions = (".h", ".c")
    templates = ("module.h.jinja", "module.c.jinja")
    printer = CPrinter()
    split_above = SPLIT_ABOVE

    def statements(self, assignments):
        """One const double per assignment; sin and cos of the same angle become one sincos call."""
        pairs = {}
        for s, e in assignments:
            t = _trig(e)
            if t:
                pairs.setdefault(t[1], {})[t[0]] = s
        out = []
        for s, e in assignments:
            t = _trig(e)
            uses = used_symbols(e)
            if t and len(pairs[t[1]]) == 2:
                if t[0] == "sin":
                    c = pairs[t[1]]["cos"]
                    out.append(Unit((str(s), str(c)), uses,
                                    [f"double {s}, {c};", f"sd_sincos({self.printer(t[1])}, &{s}, &{c});"]))
                continue
            out.append(Unit((str(s),), uses, [f"const double {s} = {self.printer(e)};"]))
        return out

    @staticmethod
    def prototype(module, name, args, outputs):
        """The C declaration of one function (without the semicolon): input arrays, then one out
        pointer per output. load_c declares the functions of a header with it."""
        return (f"void {module}_{name}(" + "".join(f"const double *{a}, " for a in args)
                + ", ".join(f"double *{o}" for o in outputs) + ")")

    def extend(self, ctx):
        functions = ctx["functions"]
        for f in functions:
            f["prototype"] = self.prototype(ctx["module"], f["name"], f["args"], [o["name"] for o in f["outputs"]])
        ctx["uses_sincos"] = any(line.startswith("sd_sincos(") for f in functions for line in f["lines"])
        ctx["uses_sign"] = any("sd_sign(" in text for f in functions
                               for text in f["lines"] + [rhs for o in f["outputs"] for _, rhs in o["results"]])
        ctx["splits"] = any(f["parts"] for f in functions)


C = CBackend()


def render_c(model, programs, module, params_mode, split_above=SPLIT_ABOVE, part_size=PART_SIZE):
    """(.h text, .c text); functions of more than `split_above` statements are cut into parts."""
    files = C.render(model, programs, module, params_mode, split_above, part_size)
    return files[f"{module}.h"], files[f"{module}.c"]
