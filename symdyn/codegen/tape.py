"""Customized symbolic evaluation: a straight-line program built while the recursion runs.

Every non-trivial intermediate is replaced, as soon as it is computed, by a fresh symbol, and
(symbol, small expression) is appended to the tape (SYMORO's and SymPyBotics' way). Expressions
therefore never nest more than one recursion step deep and nothing is ever expanded. Binding the
same expression twice returns the same symbol (hash-consing), which is common-subexpression
elimination at the granularity of the recursions' operations. Zeros and ones of the geometry
enter as exact integers and fold on construction.
"""
import symengine as se

from ..scalars.scalar import exact_zero


class Tape:
    symbolic = True

    def __init__(self, prefix="x"):
        self.prefix = prefix
        self.assignments = []            # [(Symbol, Expr)]
        self._memo = {}

    def bind(self, expr):
        if not isinstance(expr, se.Basic):
            return expr                  # python numbers of the recursions' literals
        if expr.is_Atom or (expr.is_Mul and len(expr.args) == 2 and expr.args[0] == -1 and expr.args[1].is_Atom):
            return expr                  # numbers, symbols and -x stay inline: they cost nothing
        symbol = self._memo.get(expr)
        if symbol is None:
            symbol = se.Symbol(f"{self.prefix}{len(self.assignments)}")
            self.assignments.append((symbol, expr))
            self._memo[expr] = symbol
        return symbol

    def divisor(self, x):
        """x, about to be divided by. An exact zero (a zero-mass leaf: a singular mass matrix, which
        the loader warns about) becomes a variable set to 0.0, so that the generated code divides at
        run time (inf or nan, as Pinocchio) instead of the generator failing on 1/0."""
        if exact_zero(x):
            symbol = se.Symbol(f"{self.prefix}{len(self.assignments)}")
            self.assignments.append((symbol, se.RealDouble(0.0)))
            return symbol
        return x

    @staticmethod
    def const(x):
        x = float(x)
        if x.is_integer() and abs(x) < 2 ** 52:
            return se.Integer(int(x))
        return se.RealDouble(x)

    sin = staticmethod(se.sin)
    cos = staticmethod(se.cos)
    sqrt = staticmethod(se.sqrt)
    sign = staticmethod(se.sign)
    tanh = staticmethod(se.tanh)


def live_program(assignments, outputs):
    """Dead-code elimination: the assignments the outputs depend on, in order."""
    needed = set()
    for out in outputs:
        if isinstance(out, se.Basic):
            needed |= out.free_symbols
    kept = []
    for symbol, expr in reversed(assignments):
        if symbol in needed:
            kept.append((symbol, expr))
            needed |= expr.free_symbols
    kept.reverse()
    return kept
