"""The Python backend: one module per robot on any array library (module.py.jinja beside this file)."""
from ...multibody import lie
from ..backends import Backend, Unit, used_symbols
from ..printer import Printer, number


class PythonPrinter(Printer):
    #: the functions of the array namespace `xp` of the arguments (the array API standard's names)
    funcs = {"sin": "xp.sin", "cos": "xp.cos", "sqrt": "xp.sqrt", "tanh": "xp.tanh", "sign": "xp.sign"}

    def power(self, base, exponent):
        return f"{self._print(base, 2)}**{number(exponent)}", 2


class PythonBackend(Backend):
    name = "python"
    extensions = (".py",)
    templates = ("module.py.jinja",)
    printer = PythonPrinter()

    def statements(self, assignments, inputs):
        """One assignment per line: the array library evaluates each on the whole batch."""
        args = {arg for arg, _ in inputs.values()}
        return [Unit((str(s),), used_symbols(e), [f"{s} = {self._value(e, args)}"]) for s, e in assignments]

    def _value(self, expr, args):
        """A constant (a singular model's zero divisor, Tape.divisor) as an array of the batch's shape: a Python 0.0
        would make what follows a scalar (1.0/0.0 raises; _stack breaks) where the answer is inf or nan."""
        if expr.is_Number and "q" in args:
            return f"xp.zeros_like(q[..., 0]) + {self.printer(expr)}"
        return self.printer(expr)

    def extend(self, ctx):
        """The Lie-group helpers of the joints beyond the vector ones, as Python source."""
        ctx["lie_source"] = lie.source({p[0] for p in ctx["lie"]} - {"vector"})


PYTHON = PythonBackend()
