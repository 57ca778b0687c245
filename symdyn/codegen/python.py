"""The Python backend: one numpy module per robot (templates/module.py.jinja)."""
from .. import lie
from .backends import Backend, used_symbols
from .parts import Unit
from .printer import Printer, number


class PythonPrinter(Printer):
    funcs = {"sin": "np.sin", "cos": "np.cos", "sqrt": "np.sqrt", "tanh": "np.tanh", "sign": "np.sign"}

    def power(self, base, exponent):
        return f"{self._print(base, 2)}**{number(exponent)}", 2


class PythonBackend(Backend):
    name = "python"
    extensions = (".py",)
    templates = ("module.py.jinja",)
    printer = PythonPrinter()

    def statements(self, assignments):
        """One assignment per line: numpy evaluates each on the whole batch."""
        return [Unit((str(s),), used_symbols(e), [f"{s} = {self.printer(e)}"]) for s, e in assignments]

    def extend(self, ctx):
        """The Lie-group helpers of the joints beyond the vector ones, as Python source."""
        ctx["lie_source"] = lie.source({p[0] for p in ctx["lie"]} - {"vector"})


PYTHON = PythonBackend()
