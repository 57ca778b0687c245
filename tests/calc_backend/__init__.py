"""A backend defined outside symdyn, as docs/contributing.md describes: "calc", straight-line text of one
assignment per line that tests/test_contributing.py runs with a small interpreter."""
from symdyn.codegen.backends import Backend, Unit, used_symbols
from symdyn.codegen.printer import Printer


class CalcPrinter(Printer):
    funcs = {"sin": "sin", "cos": "cos", "sqrt": "sqrt", "tanh": "tanh", "sign": "sign"}

    def power(self, base, exponent):
        return f"pow({self._print(base)}, {self.literal(exponent)})", 2


class CalcBackend(Backend):
    name = "calc"
    extensions = (".calc",)
    templates = ("module.calc.jinja",)      # beside this file
    printer = CalcPrinter()

    def statements(self, assignments, inputs):
        return [Unit((str(s),), used_symbols(e), [f"{s} = {self.printer(e)}"]) for s, e in assignments]


CALC = CalcBackend()
