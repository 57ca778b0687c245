"""Base parameters (Gautier & Khalil 1990; Gautier 1991): the minimal set of combinations of the
standard parameters that the joint forces depend on.

The regressor Y (nv x p) is rank deficient: some parameters never move a joint (the mass of a
first link turning about a vertical axis), others only in fixed combinations (a link's mass acts
like a point mass added to its parent at the joint). Sampling Y at random states and walking its
columns in the standard order, a column is kept when it is independent of the columns kept before
it (Gram-Schmidt, the numerical equivalent of QR with column pivoting restricted to the standard
order), else written as a combination of them, Y_d = Y_B beta_d. Then

    Y pi = Y_B (pi_B + sum_d beta_d pi_d)        base parameter i = pi_i + sum_d beta_(d,i) pi_d

Keeping the earlier (inboard) columns reproduces Khalil's grouping rules: the mass and first
moment along the axis of link j+1 fold into link j, YY into XX, and so on. Within a body (or a
joint's friction group) a column that is only barely independent waits for the others (_Basis):
of a nearly dependent pair the better conditioned column is kept, so the coefficients stay moderate
along long chains (the standard order alone reached 1e8 on a random 32-joint chain).

Deterministic by construction: the samples come from Python's Mersenne twister, the sines and
cosines are correctly rounded (geometry.cos_sin), the arithmetic is elementwise IEEE (numpy
ufuncs, no BLAS) and every dot product is math.fsum (exactly rounded). Each coefficient is then
written as the shortest decimal within 1e-11 of it (0.316^2 comes out as 0.099856), and the
cleaned combination is checked against fresh samples.
"""
import functools
import math
import random
from dataclasses import dataclass
from typing import Tuple

import numpy as np

from ..errors import RobotFileError
from ..multibody import geometry as G
from ..multibody.chain import Tree
from ..scalars.scalar import Numeric

#: a column whose part independent of the kept ones is below this fraction of its norm is dependent
RANK_TOL = 1e-8
#: a column whose independent part is below this fraction waits for the rest of its group (_Basis)
DEFER_TOL = 0.1
#: relative accuracy of the written coefficients (and the drop threshold of the dimensionless ones)
CLEAN_TOL = 1e-11


class _Deterministic(Numeric):
    """numpy arrays, but correctly rounded sin/cos/tanh: the same numbers on every machine."""

    @staticmethod
    def sin(x):
        return np.array([G.cos_sin(float(v))[1] for v in np.ravel(x)]).reshape(np.shape(x))

    @staticmethod
    def cos(x):
        return np.array([G.cos_sin(float(v))[0] for v in np.ravel(x)]).reshape(np.shape(x))

    @staticmethod
    def tanh(x):
        return np.array([float(G._MP.tanh(G._MP.mpf(float(v)))) for v in np.ravel(x)]).reshape(np.shape(x))


@dataclass(frozen=True)
class BaseParameters:
    names: Tuple[str, ...]                       # the standard parameter names, p of them
    kept: Tuple[int, ...]                        # the standard parameters that head a base parameter
    groups: Tuple[Tuple[Tuple[int, float], ...], ...]   # per base parameter: (standard index, coefficient)
    gap: Tuple[float, float]                     # (smallest kept, largest dropped) relative residual

    @property
    def b(self):
        return len(self.kept)

    def matrix(self):
        """B (b x p) with base = B @ standard."""
        B = np.zeros((self.b, len(self.names)))
        for i, group in enumerate(self.groups):
            for j, c in group:
                B[i, j] = c
        return B

    def apply(self, ctx, params):
        """The base parameters as scalars of `ctx` from the standard ones."""
        out = []
        for group in self.groups:
            total = 0
            for j, c in group:
                total = total + (params[j] if c == 1 else ctx.const(c) * params[j])
            out.append(ctx.bind(total))
        return out

    def describe(self):
        """One line per base parameter: its name = the combination of standard ones."""
        return [f"{self.names[self.kept[i]]}R = " + _combination(self.names, group) if len(group) > 1
                else self.names[self.kept[i]] for i, group in enumerate(self.groups)]

    def labels(self):
        """Short names: the leading standard parameter, with R when others are grouped into it."""
        return [self.names[self.kept[i]] + ("R" if len(g) > 1 else "") for i, g in enumerate(self.groups)]


def _combination(names, group):
    text = ""
    for j, c in group:
        sign = "-" if c < 0 else "+"
        mag = "" if abs(c) == 1 else f"{_decimal(abs(c))}*"
        text += (f"{'-' if sign == '-' else ''}" if not text else f" {sign} ") + mag + names[j]
    return text


def _decimal(x):
    return repr(float(x))


def samples(model, count, seed):
    """Regressor rows at `count` random states: (count * nv, p), deterministic."""
    from .regressor import regressor
    rng = random.Random(seed)
    n = model.nv
    q = _configurations(model, rng, count)
    qd, qdd = ([[lo + (hi - lo) * rng.random() for _ in range(count)] for _ in range(n)]
               for lo, hi in ((-2.0, 2.0), (-2.0, 2.0)))
    ctx = _Deterministic()
    chain = Tree(ctx, model)
    arrays = [[np.array(x) for x in v] for v in (q, qd, qdd)]
    if model.mimic:                          # the regressor of the reduced coordinates, G^T Y (symdyn.recursions.mimic)
        from ..functions import BY_NAME, for_model
        trace = for_model([BY_NAME["regressor"]], model)[0].trace
        Y = trace(ctx, chain, chain.transforms(arrays[0]), arrays[1], arrays[2])
    else:
        Y = regressor(ctx, chain, chain.transforms(arrays[0]), arrays[1], arrays[2])
    p = len(model.parameters)
    W = np.zeros((count * n, p))
    for j in range(n):
        for i in range(p):
            W[j::n, i] = np.broadcast_to(np.asarray(Y[j][i], dtype=float), (count,))
    return W


def _configurations(model, rng, count):
    """nq lists of `count` random coordinates: angles and offsets in [-pi, pi], unit quaternions
    (free-flyer, spherical) and unit complex numbers (planar), in plain Python floats."""
    q = [[-math.pi + 2 * math.pi * rng.random() for _ in range(count)] for _ in range(model.nq)]
    for joint, qi in zip(model.joints, model.q_slices):
        group = joint.kind.lie_group
        unit = {"so3": 4, "se3": 4, "se2": 2}.get(group)
        if unit:
            for s in range(count):
                x = [rng.random() * 2 - 1 for _ in range(unit)]
                norm = math.sqrt(math.fsum(v * v for v in x))
                for i, v in zip(qi[-unit:], x):
                    q[i][s] = v / norm
    return q


def _dot(a, b):
    return math.fsum(a * b)


def _shortest(x, tol):
    """The decimal with the fewest significant digits within tol * |x| of x."""
    if x == 0:
        return 0.0
    for digits in range(1, 18):
        y = float(f"{x:.{digits - 1}e}")
        if abs(y - x) <= tol * abs(x):
            return y
    return x


@functools.lru_cache(maxsize=64)
def base_parameters(model):
    """The BaseParameters of a model (cached per model). Raises RobotFileError (one line naming the
    robot's file) when the grouping cannot be computed to the accuracy the generated code needs."""
    p = len(model.parameters)
    count = max(8, -(-3 * p // model.dof))
    W = samples(model, count, seed=20260101)
    norms = np.array([math.sqrt(_dot(W[:, i], W[:, i])) for i in range(p)])
    basis = _Basis(W, norms)
    for group in _groups(model):
        basis.add_group(group)
    order = sorted(range(len(basis.kept)), key=basis.kept.__getitem__)   # the base parameters in standard order
    groups = [[(basis.kept[k], 1.0)] for k in range(len(basis.kept))]
    for d, r in basis.dependent:
        if not r:
            continue
        beta = _back_substitute(basis.R, r)         # normalized columns: W_d/|W_d| = sum beta_k W_k/|W_k|
        for k, bk in enumerate(beta):
            if abs(bk) <= CLEAN_TOL:
                continue
            groups[k].append((d, _shortest(bk * norms[d] / norms[basis.kept[k]], CLEAN_TOL)))
    result = BaseParameters(model.parameter_names, tuple(basis.kept[k] for k in order),
                            tuple(tuple(sorted(groups[k])) for k in order), (basis.smallest_kept, basis.largest_dropped))
    _verify(model, result)
    return result


def _groups(model):
    """The standard parameters by body (10 each), then by joint (4 each): the units whose columns
    may be taken out of the standard order (_Basis.add_group)."""
    nb, nj = len(model.bodies), len(model.joints)
    groups = [range(10 * b, 10 * b + 10) for b in range(nb)] + [range(10 * nb + 4 * j, 10 * nb + 4 * j + 4)
                                                                for j in range(nj)]
    assert sum(map(len, groups)) == len(model.parameters)     # model.parameters' layout
    return groups


class _Basis:
    """Gram-Schmidt on the normalized columns of W, a group of columns at a time.

    In a group, the columns are walked in the standard order; one clearly independent of the kept
    ones (residual above DEFER_TOL) is kept at once, one nearly dependent waits for the end of the
    group, where the waiting ones are kept largest residual first while they stay independent. A
    relation a_x mx + a_y my + a_z mz = (parent's columns) with a small a_z (a joint axis nearly
    along y in its link's frame) thus drops my, not mz: the kept columns stay well conditioned and
    the coefficients moderate (1 / a_z would otherwise appear, and such factors multiply along a
    chain: on a random 32-joint chain they reached 1e8, and their rounding, 1e-16 * 1e8, put truly
    dependent columns above RANK_TOL).
    """

    def __init__(self, W, norms):
        self.W, self.norms, self.scale = W, norms, norms.max()
        self.Q, self.R, self.kept, self.dependent = [], [], [], []
        self.smallest_kept, self.largest_dropped = math.inf, 0.0

    def _residual(self, i):
        v = self.W[:, i] / self.norms[i]
        r = [0.0] * len(self.Q)
        for _ in range(2):                           # twice is enough (Kahan, Parlett)
            for k, qk in enumerate(self.Q):
                c = _dot(qk, v)
                r[k] += c
                v = v - c * qk
        return v, r, math.sqrt(_dot(v, v))

    def _keep(self, i, v, r, residual):
        self.smallest_kept = min(self.smallest_kept, residual)
        self.Q.append(v / residual)
        self.R.append(r + [residual])
        self.kept.append(i)

    def _drop(self, i, r, residual):
        self.largest_dropped = max(self.largest_dropped, residual)
        self.dependent.append((i, r))

    def add_group(self, columns):
        waiting = []
        for i in columns:
            if self.norms[i] <= 1e-13 * self.scale:
                self.dependent.append((i, []))       # never moves a joint
                continue
            v, r, residual = self._residual(i)
            if residual > DEFER_TOL:
                self._keep(i, v, r, residual)
            elif residual > RANK_TOL:
                waiting.append(i)
            else:
                self._drop(i, r, residual)
        while waiting:                               # the largest residual first (ties: the standard order)
            best = max(((self._residual(i), i) for i in waiting), key=lambda x: (x[0][2], -x[1]))
            (v, r, residual), i = best
            waiting.remove(i)
            if residual > RANK_TOL:
                self._keep(i, v, r, residual)
            else:
                self._drop(i, r, residual)


def _back_substitute(R, r):
    """x with sum_k R[k][i] x_k... : solve U x = r for the upper-triangular U whose column k is R[k]."""
    m = len(r)
    x = [0.0] * m
    for i in reversed(range(m)):
        s = math.fsum([r[i]] + [-R[k][i] * x[k] for k in range(i + 1, m)])
        x[i] = s / R[i][i]
    return x


def _verify(model, base):
    """The cleaned grouping reproduces the regressor at states it was not built from."""
    W = samples(model, 6, seed=7)
    pi = np.array([1.0 + 0.1 * k for k in range(len(model.parameters))])
    full = np.array([_dot(row, pi) for row in W])
    reduced = np.array([_dot(row, base.matrix() @ pi) for row in W[:, list(base.kept)]])
    err = np.abs(full - reduced).max() / max(1.0, np.abs(full).max())
    if not err < 1e-9:
        raise RobotFileError(model.provenance.path,
                             f"cannot compute the base parameters of {model.name}: the grouping does not reproduce "
                             f"the regressor at fresh states (relative error {err:.1e}): nearly dependent columns, "
                             f"beyond double precision")
