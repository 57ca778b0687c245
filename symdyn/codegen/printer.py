"""Print straight-line symengine expressions in the languages of the backends, and count their operations.

Powers become products (x**2 -> x*x, as SymForce does), x**-1 a division, x**(1/2) sqrt; terms
and factors are printed in a sorted order, so the output is the same bytes on every run.
"""
import math
from collections import Counter

import symengine as se

_INFINITE = {"Infinity": math.inf, "NegativeInfinity": -math.inf}
#: the functions of one argument that the printers write (each printer's `funcs` names them)
FUNCTIONS = ("sin", "cos", "tanh", "sign")


def float_value(x):
    """float(x), also for symengine's oo, -oo, zoo and nan (which float() does not convert)."""
    try:
        return float(x)
    except RuntimeError:
        return _INFINITE.get(type(x).__name__, math.nan)


class NonFiniteError(ValueError):
    """A constant that is not a finite double: no literal in C or Python stands for it."""


def number(value):
    """A float literal: repr is the shortest string that reads back to the same double.

    inf and nan have no literal (C has no `inf`, the generated Python has no name for it):
    NonFiniteError rather than code that neither compiles nor imports."""
    value = float_value(value)
    if not math.isfinite(value):
        raise NonFiniteError(f"the generated code would contain the constant {value!r}")
    text = repr(value)
    return text if ("." in text or "e" in text or "n" in text) else text + ".0"


class Printer:
    """What every language shares; a language's printer (codegen/python/, codegen/c/) names its
    functions and writes the powers it cannot turn into products."""
    #: the printed name of each function: sin, cos, sqrt, tanh, sign
    funcs = {}

    def power(self, base, exponent):
        """(text, precedence) of base**exponent, exponent a float other than +-0.5 and small integers."""
        raise NotImplementedError

    def literal(self, value):
        """A constant as this language writes it (a float32 printer adds its suffix)."""
        return number(value)

    def __call__(self, expr):
        return self._print(expr)

    # precedence: 0 sum, 1 product, 2 atom
    def _print(self, e, parent=0):
        text, prec = self._node(e)
        return f"({text})" if prec < parent else text

    def _node(self, e):
        if isinstance(e, (int, float)) or e.is_Number:
            return self.literal(e), (2 if float_value(e) >= 0 else 0)
        if e.is_Symbol:
            return str(e), 2
        if e.is_Add:
            return self._add(e), 0
        if e.is_Mul:
            return self._mul(e)
        if e.is_Pow:
            return self._pow(e)
        name = type(e).__name__
        if name in FUNCTIONS:
            return f"{self.funcs[name]}({self._print(e.args[0])})", 2
        raise TypeError(f"cannot print {name}: {e}")

    def _add(self, e):
        terms = sorted((self._signed(t) for t in e.args), key=lambda st: (st[1], st[0]))
        text = "".join(f" - {t}" if negative else f" + {t}" for negative, t in terms)
        return ("-" if terms[0][0] else "") + text[3:]

    def _signed(self, t):
        """(is it subtracted, its printed magnitude) of a term of a sum."""
        if t.is_Number and float_value(t) < 0:
            return True, self.literal(-float_value(t))
        if t.is_Mul:
            coeff, rest = split_coeff(t)
            if coeff < 0:
                return True, self._print(_rebuild(-coeff, rest), 1)
        return False, self._print(t, 1)

    def _mul(self, e):
        coeff, num, den = _fraction(e)
        num_text = sorted(self._print(f, 2) for f in num)
        if abs(coeff) != 1:
            num_text.insert(0, self.literal(abs(coeff)))
        text = "*".join(num_text) if num_text else self.literal(1.0)
        if den:
            den_text = sorted(self._print(f, 2) for f in den)
            text += "/" + (den_text[0] if len(den_text) == 1 else "(" + "*".join(den_text) + ")")
        if coeff < 0:
            return "-" + text, 0
        return text, 1

    def _pow(self, e):
        base, exp = e.args
        x = float(exp)
        if x == 0.5:
            return f"{self.funcs['sqrt']}({self._print(base)})", 2
        if x == -0.5:
            return f"{self.literal(1.0)}/{self.funcs['sqrt']}({self._print(base)})", 1
        if x.is_integer() and 0 < x <= 4:
            return "*".join([self._print(base, 2)] * int(x)), 1
        if x.is_integer() and -4 <= x < 0:
            return self.literal(1.0) + "/" + self._print(base ** int(-x), 2), 1
        return self.power(base, x)


def split_coeff(m):
    """(numeric coefficient, [other factors]) of a product."""
    return math.prod((float_value(f) for f in m.args if f.is_Number), start=1.0), [f for f in m.args if not f.is_Number]


def _rebuild(coeff, factors):
    out = se.Integer(int(coeff)) if float(coeff).is_integer() else se.RealDouble(coeff)
    return math.prod(factors, start=out)


def _fraction(m):
    """(coefficient, numerator factors, denominator factors as printed) of a product."""
    coeff, factors = split_coeff(m)
    reciprocal = [f.is_Pow and f.args[1].is_Number and float(f.args[1]) < 0 for f in factors]
    return (coeff, [f for f, r in zip(factors, reciprocal) if not r],
            [f.args[0] ** (-f.args[1]) for f, r in zip(factors, reciprocal) if r])


def count_ops(exprs):
    """mul, add, div, sqrt, trig of expressions as they will be printed."""
    c = Counter()
    for e in exprs:
        _count(e, c)
    return {k: c[k] for k in ("mul", "add", "div", "sqrt", "trig")}


def _count(e, c):
    if not isinstance(e, se.Basic) or e.is_Atom:
        return
    if e.is_Add:
        c["add"] += len(e.args) - 1
        for a in e.args:
            _count(a, c)
    elif e.is_Mul:
        coeff, num, den = _fraction(e)
        c["mul"] += max(len(num) + (abs(coeff) != 1) - 1, 0) + max(len(den) - 1, 0)
        c["div"] += bool(den)
        for f in num + den:
            _count(f, c)
    elif e.is_Pow:
        base, exp = e.args
        x = float(exp)
        if x in (0.5, -0.5):
            c["sqrt"] += 1
            c["div"] += x < 0
        elif x.is_integer():
            c["mul"] += int(abs(x)) - 1
            c["div"] += x < 0
        else:
            c["trig"] += 1                           # pow(): as costly as a transcendental
        _count(base, c)
    elif type(e).__name__ in ("sin", "cos", "tanh"):
        c["trig"] += 1
        _count(e.args[0], c)
    elif type(e).__name__ == "sign":                 # two comparisons, no arithmetic
        _count(e.args[0], c)
    else:
        raise TypeError(f"cannot count {type(e).__name__}")
