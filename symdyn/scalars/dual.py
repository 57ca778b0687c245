"""Forward-mode differentiation through the scalar contexts: dual numbers for every recursion.

A `Dual` is a value with its tangents, one per direction of differentiation, {direction: scalar}.
`DualContext` wraps a context of scalar.py (Numeric or the Tape): the recursions run unchanged on
duals, and binding a dual binds its value and each tangent with the inner context. Under a Tape the
tangents therefore become intermediates of the same straight-line program, shared with the values
and with each other (hash-consing), never expanded: the derivative of a program of n operations in
d directions costs at most about 3 n d operations, and much less where tangents are exact zeros
(a link's quantities do not depend on the joints outboard of it): those are absent from the dict,
and a dual whose tangents all vanish becomes its plain value again.

Configurations move on the joints' Lie groups; as Pinocchio, a derivative with respect to q is taken
along the tangent space: d/de f(integrate(q, e)) at e = 0. For every joint type the transform
X = (R, l) then moves, along the direction of a motion-subspace column [w; u] (frame k), by
    dR = R w~        dl = R u
(revolute: dR = R h~; prismatic: dl = A h; free-flyer and spherical: Pinocchio's right-multiplied
exponential), so `tangent_transforms` needs X and the joint map H only, not the parametrization of q.
"""
from ..multibody import spatial as S
from .scalar import exact_zero


def _dual(value, tangent):
    """A dual, or the plain value when no tangent is left."""
    return Dual(value, tangent) if tangent else value


def _scaled(t, s):
    """{k: s x} of a tangent t."""
    if exact_zero(s):
        return {}
    return {k: s * x for k, x in t.items()}


def _sum(a, b, sign=1):
    """The tangent a + sign b."""
    out = dict(a)
    for k, x in b.items():
        y = x if sign > 0 else -x
        out[k] = out[k] + y if k in out else y
    return out


class Dual:
    """value + sum over directions k of tangent[k] e_k, e_k^2 = e_k e_j = 0."""

    __slots__ = ("value", "tangent")
    __array_ufunc__ = None              # numpy arrays hand an operation with a dual back to the dual

    def __init__(self, value, tangent):
        self.value, self.tangent = value, tangent

    def __add__(self, other):
        if isinstance(other, Dual):
            return _dual(self.value + other.value, _sum(self.tangent, other.tangent))
        return Dual(self.value + other, self.tangent)

    __radd__ = __add__

    def __sub__(self, other):
        if isinstance(other, Dual):
            return _dual(self.value - other.value, _sum(self.tangent, other.tangent, -1))
        return Dual(self.value - other, self.tangent)

    def __rsub__(self, other):
        return Dual(other - self.value, _scaled(self.tangent, -1))

    def __neg__(self):
        return Dual(-self.value, _scaled(self.tangent, -1))

    def __mul__(self, other):
        if isinstance(other, Dual):
            return _dual(self.value * other.value,
                         _sum(_scaled(self.tangent, other.value), _scaled(other.tangent, self.value)))
        if exact_zero(other):
            return other * self.value
        return _dual(self.value * other, _scaled(self.tangent, other))

    __rmul__ = __mul__

    def __truediv__(self, other):
        if isinstance(other, Dual):
            quotient = self.value / other.value
            inv = 1 / other.value
            return _dual(quotient, _scaled(_sum(self.tangent, _scaled(other.tangent, quotient), -1), inv))
        return _dual(self.value / other, _scaled(self.tangent, 1 / other))

    def __rtruediv__(self, other):
        """other / self: d(1/x) = -dx / x^2."""
        inv = 1 / self.value
        return _dual(other * inv, _scaled(self.tangent, -other * inv * inv))


class DualContext:
    """A scalar context (scalar.Numeric, codegen.tape.Tape) lifted to duals."""

    def __init__(self, inner):
        self.inner = inner
        self.symbolic = inner.symbolic
        self.const = inner.const

    def bind(self, x):
        if not isinstance(x, Dual):
            return self.inner.bind(x)
        b = self.inner.bind
        tangent = {}
        for k, t in x.tangent.items():
            t = b(t)
            if not exact_zero(t):
                tangent[k] = t
        return _dual(b(x.value), tangent)

    def divisor(self, x):
        if isinstance(x, Dual):
            return Dual(self.inner.divisor(x.value), x.tangent)
        return self.inner.divisor(x)

    def _chain_rule(self, f, x, derivative):
        """f(x) with tangents derivative(f(x) bound, x) * dx."""
        if not isinstance(x, Dual):
            return f(x)
        fx = self.inner.bind(f(x.value))
        return _dual(fx, _scaled(x.tangent, self.inner.bind(derivative(fx, x.value))))

    def sin(self, x):
        return self._chain_rule(self.inner.sin, x, lambda _, v: self.inner.cos(v))

    def cos(self, x):
        return self._chain_rule(self.inner.cos, x, lambda _, v: -self.inner.sin(v))

    def sqrt(self, x):
        return self._chain_rule(self.inner.sqrt, x, lambda r, _: 0.5 / r)

    def tanh(self, x):
        return self._chain_rule(self.inner.tanh, x, lambda t, _: 1 - t * t)

    def sign(self, x):
        """sign has a zero derivative (away from 0, where Coulomb friction has none)."""
        return self.inner.sign(x.value if isinstance(x, Dual) else x)


def value(x):
    return x.value if isinstance(x, Dual) else x


def tangent(x, k):
    """The tangent of x along direction k (0 when x does not depend on it)."""
    return x.tangent.get(k, 0) if isinstance(x, Dual) else 0


def seeded(x, k):
    """x as a dual with tangent 1 along direction k."""
    return Dual(x, {k: 1})


def _skew_product(R, w):
    """R w~: column j is R (w x e_j)."""
    cols = [S.rot(R, S.cross(w, e)) for e in ([1, 0, 0], [0, 1, 0], [0, 0, 1])]
    return [[cols[j][i] for j in range(3)] for i in range(3)]


def tangent_transforms(ctx, chain, X, directions):
    """The transforms X as duals: directions[k] lists (direction, [w; u]) moving joint k by the spatial
    velocity [w; u] (frame k), dR = R w~, dl = R u (see the module's docstring). `ctx` is the DualContext;
    the structured rotation of X (the `turn` of a Transform) is dropped: duals take the generic product."""
    inner = ctx.inner
    out = []
    for k, (R, l) in enumerate(X):
        dR, dl = {}, {}
        for direction, column in directions[k]:
            w, u = column[:3], column[3:]
            dR[direction] = S.bind_matrix(inner, _skew_product(R, w))
            dl[direction] = S.bind(inner, S.rot(R, u))
        Rd = [[ctx.bind(Dual(R[i][j], {d: m[i][j] for d, m in dR.items()})) for j in range(3)] for i in range(3)]
        ld = [ctx.bind(Dual(l[i], {d: v[i] for d, v in dl.items()})) for i in range(3)]
        out.append(S.Transform(Rd, ld))
        out[-1].coordinates = _moved_coordinates(ctx, chain, X[k], k, directions[k])
    return out


def _moved_coordinates(ctx, chain, x, k, directions):
    """The 1-DoF joint k's q as a dual (the springs of friction.py read it): a direction along the joint's
    column h moves q by its coefficient (1 for h itself)."""
    q = getattr(x, "coordinates", None)
    if q is None or len(chain.H[k]) != 1:
        return q
    h = chain.H[k][0]
    j = max(range(6), key=lambda i: abs(float(h[i])))
    rates = {d: 1 if column is h else column[j] / h[j] for d, column in directions}
    return [ctx.bind(Dual(q[0], rates))]


def joint_directions(chain, offset=0):
    """One direction per velocity entry: entry i of joint k along column H(k)[i] (direction offset + i)."""
    return [[(offset + i, column) for i, column in zip(chain.vi[k], chain.H[k])] for k in range(chain.n)]


def along(chain, v, direction=0):
    """One direction, the motion with joint rates v: joint k moves by H*(k) v(k)."""
    return [[(direction, chain.joint_velocity(k, v))] for k in range(chain.n)]


def jacobian(outputs, directions):
    """[[d output_i / d direction_j]]: the tangents as a matrix (rows: outputs)."""
    return [[tangent(y, d) for d in directions] for y in outputs]


__all__ = ["Dual", "DualContext", "value", "tangent", "seeded", "tangent_transforms", "joint_directions", "along",
           "jacobian"]
