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
        return [Unit((str(s),), used_symbols(e), [f"{s} = {self.printer(e)}"]) for s, e in assignments]

    def extend(self, ctx):
        """The Lie-group helpers of the joints beyond the vector ones, as Python source."""
        ctx["lie_source"] = lie.source({p[0] for p in ctx["lie"]} - {"vector"})


PYTHON = PythonBackend()
