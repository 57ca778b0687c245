"""Mimic joints: the dynamics in reduced coordinates (URDF <mimic>, Pinocchio's buildModel(mimic=True)).

A mimic joint keeps its body in the tree but follows its master, q_m = a q_master + b, so the tree's
coordinates are an affine map of the independent ones: q_tree = G q + c, v_tree = G v, with G
constant (identity rows for the independent joints, `a` in the master's column for a mimic joint).
Every recursion runs on the whole tree (symdyn.multibody.chain); this module maps the model's coordinates
in and the results out:

* functions covariant in the velocities: tau = G^T tau_tree(G qd, G qdd), M = G^T M_tree G,
  C = G^T C_tree G (still the Christoffel form, G being constant), Jacobians J_tree G, the
  regressor G^T Y;
* forward dynamics and M^-1 without forming G^T M G: the coupling is the constraint
  J v_tree = 0 with one row e_m - a e_master per mimic joint, solved by method 2 of Featherstone &
  Orin (seed 004, Sec. 3.4), M^-1 J^T by one more Kalman filter and smoother pass per mimic joint
  (forward dynamics) or from the tree's explicit inverse (Rodriguez 1987, Sec. X; M^-1 itself):
  qdd_tree = qdd_0 - M^-1 J^T (J M^-1 J^T)^-1 J qdd_0 (J constant: no J_dot v term), and
  G (G^T M G)^-1 G^T = M^-1 - M^-1 J^T (J M^-1 J^T)^-1 J M^-1, whose independent rows and columns
  are the reduced inverse. J M^-1 J^T is as small as the number of mimic joints.

The base parameters are those of the reduced regressor G^T Y (symdyn.recursions.base_parameters samples it),
so mimic couplings group more parameters. The factorizations of the tree (articulated inertias,
innovations factors, UDU^T, the diagonalized dynamics) have no counterpart in the reduced
coordinates: those functions are not generated for a model with mimic joints (UNSUPPORTED).
"""
from dataclasses import replace

from . import derivatives, frames, kalman_smoother, minverse
from . import friction as _fr
from .riccati import Riccati
from ..multibody import spatial as S
from ..scalars.scalar import literal_zero

#: functions that need the tree's own factorization or parameter grouping
UNSUPPORTED = ("articulated_inertia", "innovations_factor", "innovations_factor_inverse", "total_rates",
               "joint_rates", "working_moments", "applied_moments", "coriolis_nu", "coriolis_eta",
               "diagonalized_forward_dynamics", "udu_factor",
               # contacts and loops of a model with mimic joints are refused on loading (symdyn.readers.load)
               "constrained_forward_dynamics", "constrained_forward_dynamics_baumgarte", "impact")


def tree_configuration(chain, q):
    """The tree's configuration from the model's: each mimic joint's angle from its master's."""
    model = chain.model
    out = [None] * chain.nq
    for qt, qi in zip(chain.qi, model.q_slices):
        for t, i in zip(qt, qi):
            out[t] = q[i]
    for m in model.mimic:
        master = out[chain.qi[m.master][0]]
        out[chain.qi[m.joint][0]] = chain.ctx.bind(m.multiplier * master + m.offset) if (
            m.multiplier != 1 or m.offset != 0) else master
    return out


def _coordinate_index(chain):
    """For each independent coordinate, its index in the tree's velocity-sized vectors."""
    return [t for vt, vi in zip(chain.vi, chain.model.v_slices) for t, _ in zip(vt, vi)]


def tree_rates(chain, v):
    """G v: the tree's velocity-sized vector of the model's."""
    model = chain.model
    out = [0] * chain.nv
    for t, x in zip(_coordinate_index(chain), v):
        out[t] = x
    for m in model.mimic:
        x = out[chain.vi[m.master][0]]
        out[chain.vi[m.joint][0]] = chain.ctx.bind(m.multiplier * x) if m.multiplier != 1 else x
    return out


def _columns(chain):
    """G by columns: for each coordinate, [(tree index, factor)]."""
    index = _coordinate_index(chain)
    column = {t: [(t, 1)] for t in index}
    for m in chain.model.mimic:
        column[chain.vi[m.master][0]].append((chain.vi[m.joint][0], m.multiplier))
    return [column[t] for t in index]


def _project(ctx, chain, x, axes):
    """Contract the axes `axes` of the nested list x (tree-sized) with G: G^T along each of them."""
    if not axes:
        return x
    if axes[0] == 0:
        rest = [a - 1 for a in axes[1:]]
        return [_project(ctx, chain, _combine(ctx, [(x[t], f) for t, f in col]), rest) for col in _columns(chain)]
    return [_project(ctx, chain, row, [a - 1 for a in axes]) for row in x]


def _combine(ctx, terms):
    """sum f * x over (x, f) for nested lists of equal shape."""
    first = terms[0][0]
    if isinstance(first, list):
        return [_combine(ctx, [(x[i], f) for x, f in terms]) for i in range(len(first))]
    if len(terms) == 1 and terms[0][1] == 1:
        return first
    total = 0
    for x, f in terms:
        total = total + (x if f == 1 else f * x)
    return ctx.bind(total)


def _gather(values, index):
    return [values[t] for t in index]


# --- the coupling as a constraint (method 2 of seed 004, Sec. 3.4) -----------------------------

def _rows(chain):
    """J: one sparse row per mimic joint, [(tree index, coefficient)]: v_m - a v_master = 0."""
    return [[(chain.vi[m.joint][0], 1), (chain.vi[m.master][0], -m.multiplier)] for m in chain.model.mimic]


def _row_times(ctx, row, matrix_rows):
    """(J row) @ matrix for a sparse row and a matrix given by its rows."""
    return [ctx.bind(sum(c * matrix_rows[t][j] for t, c in row)) for j in range(len(matrix_rows[0]))]


def solve_spd(ctx, A, B):
    """X = A^-1 B for a small symmetric positive-definite A (list of rows) and B (list of rows) by
    L D L^T without pivoting (A = J M^-1 J^T is positive definite when the rows of J are independent)."""
    n = len(A)
    L = [[0] * n for _ in range(n)]
    D = [0] * n
    for i in range(n):
        for j in range(i):
            L[i][j] = ctx.bind((A[i][j] - sum(L[i][k] * L[j][k] * D[k] for k in range(j))) / ctx.divisor(D[j]))
        D[i] = ctx.bind(A[i][i] - sum(L[i][k] ** 2 * D[k] for k in range(i)))
    out = []
    for b in zip(*B):                                 # one column of B at a time
        y = []
        for i in range(n):
            y.append(ctx.bind(b[i] - sum(L[i][k] * y[k] for k in range(i))))
        x = [0] * n
        for i in reversed(range(n)):
            x[i] = ctx.bind(y[i] / ctx.divisor(D[i]) - sum(L[k][i] * x[k] for k in range(i + 1, n)))
        out.append(x)
    return [list(r) for r in zip(*out)]


class Coupling:
    """The mimic constraint on the tree: W = J M^-1 (nm x nv_tree), A = W J^T. With full=True, from the
    explicit M^-1 (Section X, for M^-1 itself); else each row of W = M^-1 J^T row by one more pass of the
    Kalman filter and smoother at zero velocity without gravity (O(N) per mimic joint, for the
    forward dynamics)."""

    def __init__(self, ctx, chain, X, ric, full=True, form=minverse.FORMS[0]):
        self.ctx, self.chain = ctx, chain
        self.rows = _rows(chain)
        if full:
            self.Minv = minverse.mass_matrix_inverse(ctx, chain, X, ric, form)
            self.W = [_row_times(ctx, row, self.Minv) for row in self.rows]
        else:
            zero = [0] * chain.nv
            self.W = []
            for row in self.rows:
                force = list(zero)
                for t, c in row:
                    force[t] = c
                self.W.append(kalman_smoother.forward_dynamics(ctx, chain, X, ric, zero, force, gravity=False))
        self.A = [[ctx.bind(sum(c * w[t] for t, c in row)) for row in self.rows] for w in self.W]

    def correct(self, qdd0):
        """qdd0 - W^T A^-1 J qdd0: the accelerations that keep the coupling."""
        ctx = self.ctx
        r = [[ctx.bind(sum(c * qdd0[t] for t, c in row))] for row in self.rows]
        lam = [x[0] for x in solve_spd(ctx, self.A, r)]
        return [ctx.bind(qdd0[j] - sum(w[j] * l for w, l in zip(self.W, lam))) for j in range(self.chain.nv)]

    def projected_inverse(self):
        """M^-1 - W^T A^-1 W = G (G^T M G)^-1 G^T (tree-sized)."""
        ctx, nv = self.ctx, self.chain.nv
        Z = solve_spd(ctx, self.A, self.W)           # A^-1 W
        return [[ctx.bind(self.Minv[i][j] - sum(w[i] * z[j] for w, z in zip(self.W, Z))) for j in range(nv)]
                for i in range(nv)]


def _forward_dynamics(ctx, chain, X, qd, tau, wrenches=None):
    ric = Riccati(ctx, chain, X)
    qd_tree = tree_rates(chain, qd)
    tau_tree = [0] * chain.nv
    for t, x in zip(_coordinate_index(chain), tau):
        tau_tree[t] = x
    qdd0 = kalman_smoother.forward_dynamics(ctx, chain, X, ric, qd_tree,
                                            _fr.subtract_friction(ctx, chain, tau_tree, qd_tree, X), f_ext=wrenches)
    return _gather(Coupling(ctx, chain, X, ric, full=False).correct(qdd0), _coordinate_index(chain))


def _mass_matrix_inverse(ctx, chain, X, form=minverse.FORMS[0]):
    P = Coupling(ctx, chain, X, Riccati(ctx, chain, X), form=form).projected_inverse()
    index = _coordinate_index(chain)
    return [_gather(P[i], index) for i in index]


def _operational_space_inertia_inverse(ctx, chain, X, form=minverse.FORMS[0]):
    """J_f G (G^T M G)^-1 G^T J_f^T = J_f P J_f^T with the stacked frame Jacobians J_f of the tree."""
    P = Coupling(ctx, chain, X, Riccati(ctx, chain, X), form=form).projected_inverse()
    J = [row for Jf in frames.frame_jacobian(ctx, chain, X) for row in Jf]
    JP = [[ctx.bind(sum(a * P[t][j] for t, a in enumerate(row) if not literal_zero(a))) for j in range(chain.nv)]
          for row in J]
    return [[ctx.bind(sum(a * b for a, b in zip(r, row) if not literal_zero(b))) for row in J] for r in JP]


def _forward_dynamics_derivatives(ctx, chain, X, qd, tau, f_ext=None):
    """(dqdd/dq, dqdd/dv, M^-1) in the reduced coordinates. The tree's are not G^T (.) G of them, but the reduced
    inverse dynamics G^T ID(G q + c, G qd, G qdd) inverts the reduced forward dynamics, so differentiating
    ID(q, qd, FD(q, qd, tau)) = tau gives -M^-1 dtau here too, with dtau = G^T dtau_tree G (G constant) at
    qdd = FD and the reduced M^-1."""
    wrenches = None if f_ext is None else frames.body_wrenches(ctx, chain, X, f_ext)
    qdd = _forward_dynamics(ctx, chain, X, qd, tau, wrenches)
    Minv = _mass_matrix_inverse(ctx, chain, X)
    dq, dv = derivatives.inverse_dynamics_derivatives(ctx, chain, X, tree_rates(chain, qd), tree_rates(chain, qdd),
                                                      f_ext)
    negative = [[-x for x in row] for row in Minv]
    return S.matmul(ctx, negative, _project(ctx, chain, dq, [0, 1])), \
        S.matmul(ctx, negative, _project(ctx, chain, dv, [0, 1])), Minv


#: the SPECIAL functions built on the explicit M^-1 (its forms: Function.forms)
FULL_INVERSE = ("mass_matrix_inverse", "operational_space_inertia_inverse")
SPECIAL = {
    "forward_dynamics": _forward_dynamics,
    "forward_dynamics_fext": lambda ctx, chain, X, qd, tau, f_ext: _forward_dynamics(
        ctx, chain, X, qd, tau, frames.body_wrenches(ctx, chain, X, f_ext)),
    "mass_matrix_inverse": _mass_matrix_inverse,
    "operational_space_inertia_inverse": _operational_space_inertia_inverse,
    "forward_dynamics_derivatives": _forward_dynamics_derivatives,
    "forward_dynamics_derivatives_fext": _forward_dynamics_derivatives,
}


def reduced(fn):
    """fn in the model's coordinates: velocity-sized arguments mapped by G, results contracted with
    G along their nv axes, or the constrained solution (SPECIAL)."""
    from ..functions import arg_dims, out_dims
    if fn.name in SPECIAL:
        special = SPECIAL[fn.name]
        forms = minverse.FORMS if fn.name in FULL_INVERSE else ()
        return replace(fn, trace=lambda *a, **form: special(*a, **form), reduced=True, forms=forms,
                       form_applies=minverse.form_applies)
    rates = [arg_dims(a) == ("nv",) for a in fn.args[fn.args[0] == "q":]]
    axes = [[i for i, d in enumerate(dims) if d == "nv"] for dims in out_dims(fn)]
    several = isinstance(fn.shape, tuple)

    def trace(ctx, chain, X, *inputs, **form):
        inputs = [tree_rates(chain, x) if r else x for x, r in zip(inputs, rates)]
        result = fn.trace(ctx, chain, X, *inputs, **form)
        parts = [_project(ctx, chain, part, a) for part, a in zip(result if several else (result,), axes)]
        return tuple(parts) if several else parts[0]
    return replace(fn, trace=trace, reduced=True)
