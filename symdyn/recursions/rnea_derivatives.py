"""Analytical derivatives of inverse dynamics, dtau/dq and dtau/dv, in the structure of Carpentier &
Mansard (RSS 2018): one outward pass, one inward pass of composite quantities, then the products of each
joint with its ancestors, written once (docs/algorithms.md, "Derivatives of inverse dynamics").

Spatial vectors here are Featherstone's (spatial accelerations A, not the conventional ones of rnea.py),
each in its own link's frame, [angular; linear] at O_k. Per link k: V(k), A(k) (gravity as a base
acceleration), Vp(k) = phi*(parent, k) V(parent), Ap(k) likewise: the parent's motion at O_k;
A(k) = Ap + S qdd + Vp x S qd. The force f(k) = I A + V x* I V and its composite F(k) (RNEA's).

Moving joint j along a column s of its subspace (the tangent space, as Pinocchio) turns the subtree of j
rigidly, so its forces turn covariantly (s x* F) except for what is relative to the parent's motion:
    u = s x Vp(j),   w = s x Ap(j) - u x Vp(j)          (dq)          y = (Vp(j) + V(j)) x s      (dv)
and, with the composite inertia IC and the composite of B(k) x = V x* I x - I (V x x) + x x* (I V),
    dF(j)/dq_s = s x* F(j) - IC(j) w - BC(j) u          dF(j)/dv_s = IC(j) y + BC(j) s.
B(k) is symmetric (V x* I - I V x) plus skew ((I V) x-bar); its composite needs only a symmetric 3x3
A(j) and the composite momentum [n; p] of the subtree, and acts on the angular part x_w alone:
    BC(j) x = [A(j) x_w + x_w x n ; 2 x_w x p],     BC(j)^T s = [A(j) s_w - s_w x n + 2 p x s_v ; 0].
Entries, joint i against joint j:
    j ancestor of i or i:  dtau_i/dq_s = -r1 . w - r2 . u,   dtau_i/dv_s = r1 . y + r2 . s,
                           r1 = IC(i) S(i), r2 = BC(i)^T S(i) carried inward from i to j (the s x* F term
                           cancels against the turning of S(i));
    i an ancestor of j:    S(i) . dF(j)/dq_s, S(i) . dF(j)/dv_s, the forces carried inward from j to i.
r1, r2 come free in link i's frame (columns of IC, BC for the axis-aligned S), r2 is a pure moment.
A joint's own block (i = j) is read off the forces dF(j) its parent's rows need anyway:
S_a . dF(j)/dq_s + (s x S_a) . F(j) (the turning of S_a, zero for a = s) and S_a . dF(j)/dv_s; only
a root joint (which has no parent to need them) takes r1, r2. The rows of a joint against its
descendants come in one of two forms (FORMS): the forces carried inward, or the rows carried outward.

External wrenches (held fixed in world axes at their frames) do not turn with the links: turning a
subtree by w changes their link coordinates by [T w ; Fs~ w] (class External), which enters both kinds
of entries. Friction and rotor terms are added at the joints (their own
derivative, forward mode on one joint's scalar).
"""
import symengine as se

from ..multibody import spatial as S
from ..scalars.dual import Dual, DualContext, tangent
from . import crba, frames
from . import friction as _fr
from ..scalars.scalar import exact_zero, literal_zero


def _motions(ctx, chain, X, qd, qdd):
    """Outward: V, A (spatial), Vp, Ap (the parent's at O_k), all in link k's frame."""
    n = chain.n
    V, A, Vp, Ap = [None] * n, [None] * n, [None] * n, [None] * n
    for k in chain.outward():
        p = chain.parent[k]
        if p >= 0:
            Vp[k], Ap[k] = S.motion_outward(ctx, X[k], V[p]), S.motion_outward(ctx, X[k], A[p])
        else:
            Vp[k], Ap[k] = [0] * 6, S.motion_outward(ctx, X[k], chain.base_acceleration)
        vJ = S.bind(ctx, chain.joint_velocity(k, qd))
        V[k] = S.bind(ctx, S.vadd(Vp[k], vJ))
        bias = S.cross_motion(Vp[k], vJ)
        A[k] = S.bind(ctx, S.vadd(S.vadd(Ap[k], chain.joint_velocity(k, qdd)), bias))
    return V, A, Vp, Ap


def _inertia_times(I, x):
    """I x for I given by (m, h, J) (rigid_inertia's ten parameters): [J xw + h x xv ; m xv - h x xw]."""
    m, h = I[0], I[1:4]
    J = [[I[4], I[5], I[7]], [I[5], I[6], I[8]], [I[7], I[8], I[9]]]
    return S.add(S.rot(J, x[:3]), S.cross(h, x[3:])) + S.sub(S.scale(m, x[3:]), S.cross(h, x[:3]))


def _sym_outer(a, b):
    """a b^T + b a^T (symmetric 3x3)."""
    return [[a[i] * b[j] + b[i] * a[j] for j in range(3)] for i in range(3)]


def _is_number(x):
    return isinstance(x, (int, float)) or (isinstance(x, se.Basic) and x.is_Number)


def _twice_dot(a, b):
    """2 a . b, the 2 folded into a's entries when they are numbers (the model's: no multiplication)."""
    if all(_is_number(x) for x in a):
        return S.dot([2 * x for x in a], b)
    return 2 * S.dot(a, b)


def _times(c, x):
    """c x for a number c (1 and exact zeros fold)."""
    return x if c == 1 or literal_zero(x) else c * x


def _body_symmetric(ctx, params, V):
    """A of a link alone (ten parameters): V x* I - I V x = [[A, p~], [-p~, 0]] with
    A = -(J w~ + (J w~)^T) - (v h^T + h v^T) + 2 (h . v) 1."""
    I = params
    J, h = [[I[4], I[5], I[7]], [I[5], I[6], I[8]], [I[7], I[8], I[9]]], I[1:4]
    w, v = V[:3], V[3:]
    Jw = [S.rot(J, S.cross(w, e)) for e in ([1, 0, 0], [0, 1, 0], [0, 0, 1])]     # columns of J w~
    hv = _sym_outer(v, h)
    hv2 = ctx.bind(_twice_dot(h, v))
    # the diagonal's -2 (J w~)_ii with the 2 folded into J's numbers: -(J w~ + (J w~)^T)_ii
    diag = [ctx.bind(S.dot([-2 * x for x in J[i]], S.cross(w, e)) if all(_is_number(x) for x in J[i])
                     else -2 * ctx.bind(Jw[i][i])) for i, e in enumerate(([1, 0, 0], [0, 1, 0], [0, 0, 1]))]
    Jw = [[ctx.bind(Jw[j][i]) for j in range(3)] for i in range(3)]
    # off the diagonal, (J w~)_ij + (J w~)_ji = (J_i x w)_j + (J_j x w)_i: with J's numbers, one combination
    # of w (3 products, not 4)
    numeric = all(_is_number(x) for row in J for x in row)
    off = [[-(S.cross(J[i], w)[j] + S.cross(J[j], w)[i]) if numeric else -(Jw[i][j] + Jw[j][i]) for j in range(3)]
           for i in range(3)]
    return [[(diag[i] if i == j else off[i][j]) - hv[i][j] + (hv2 if i == j else 0) for j in range(3)]
            for i in range(3)]



class Gyroscopic:
    """The composite of B(k) x = V x* I x - I (V x x) + x x* (I V) over each subtree, as the composite
    momentum Hm = [n; p] (and 2p) and the symmetric 3x3 A: BC x = [A xw + xw x n ; 2 xw x p]. `momentum`:
    each link's own I V. `scale`: every inertia times this number (coriolis_matrix's B is half of this;
    a number times the model's numbers folds)."""

    def __init__(self, ctx, chain, X, V, scale=1):
        n = chain.n
        params = [[_times(scale, p) for p in chain.params[k]] for k in range(n)]
        self.momentum = [S.bind(ctx, _inertia_times(params[k], V[k])) for k in range(n)]
        self.Hm, self.A, self.p2 = [None] * n, [None] * n, [None] * n
        for k in chain.inward():
            hk, A = self.momentum[k], _body_symmetric(ctx, params[k], V[k])
            for c in chain.children[k]:
                hc = S.force_inward(ctx, X[c], self.Hm[c])
                hk = S.vadd(hk, hc)
                A = S.add3(A, _shifted(ctx, X[c], self.A[c], hc[3:]))
            self.Hm[k] = S.bind(ctx, hk)
            self.p2[k] = S.bind(ctx, S.scale(2, self.Hm[k][3:]))
            self.A[k] = S.bind_entries(ctx, 3, lambda i, j: A[i][j], symmetric=True)

    def bc(self, k, x):
        """BC(k) x = [A xw + xw x n ; 2 xw x p]."""
        xw, n = x[:3], self.Hm[k][:3]
        return S.add(S.rot(self.A[k], xw), S.cross(xw, n)) + S.cross(xw, self.p2[k])

    def bc_t(self, k, s):
        """BC(k)^T s = [A sw - sw x n + 2 p x sv ; 0]."""
        sw, sv, n = s[:3], s[3:], self.Hm[k][:3]
        return S.add(S.sub(S.rot(self.A[k], sw), S.cross(sw, n)), S.cross(self.p2[k], sv)) + [0, 0, 0]


class Composites(Gyroscopic):
    """Inward: composite forces F (with the external wrenches, when given), IC's parameters, and the
    gyroscopic composites."""

    def __init__(self, ctx, chain, X, V, Acc, wrenches=None):
        super().__init__(ctx, chain, X, V)
        self.IC = crba.composite_parameters(ctx, chain, X)
        self.F = [None] * chain.n
        for k in chain.inward():
            force = S.vadd(_inertia_times(chain.params[k], Acc[k]), S.cross_force(V[k], self.momentum[k]))
            if wrenches is not None and wrenches[k] is not None:
                force = S.vsub(force, wrenches[k])
            for c in chain.children[k]:
                force = S.vadd(force, S.force_inward(ctx, X[c], self.F[c]))
            self.F[k] = S.bind(ctx, force)

    def inertia(self, k, x):
        return _inertia_times(self.IC[k], x)


def _congruence(ctx, X, M, symmetric):
    """R M R^T of the transform X (its joint's cheaper product when it has one)."""
    return (X if isinstance(X, S.Transform) else S.Transform(*X)).congruence3(ctx, M, symmetric)


def _shifted(ctx, X, A, p):
    """A child's symmetric block in its parent's frame: R A R^T - (l~ p~ + p~ l~), p the child's linear
    momentum in parent axes; l~ p~ + p~ l~ = p l^T + l p^T - 2 (l . p) 1."""
    R, l = X
    RA = _congruence(ctx, X, A, True)
    lp = _sym_outer(l, p)
    lp2 = _twice_dot(l, p)
    return [[RA[i][j] - lp[i][j] + (lp2 if i == j else 0) for j in range(3)] for i in range(3)]


def _columns(ctx, chain, k, V, Vp, Ap):
    """For each column s of joint k (frame k): (s, u, w, y)."""
    out = []
    vsum = S.vadd(Vp[k], V[k])
    for s in chain.H[k]:
        u = S.bind(ctx, S.cross_motion(s, Vp[k]))
        w = S.bind(ctx, S.vsub(S.cross_motion(s, Ap[k]), S.cross_motion(u, Vp[k])))
        y = S.bind(ctx, S.cross_motion(vsum, s))
        out.append((s, u, w, y))
    return out


def _outer_minus_dot(a, b):
    """a b^T - (a . b) 1, which is b~ a~."""
    d = S.dot(a, b)
    return [[a[i] * b[j] - (d if i == j else 0) for j in range(3)] for i in range(3)]


class External:
    """External wrenches [force; torque about the frame origin], world axes, held fixed in the world as
    the links turn. Per link: the wrench at O_k in link axes (`wrench`), the sum of its subtree's forces
    Fs(k) and T(k) = sum over the subtree's frames of t~ + p~ f~ (t, f in link axes, p the frame origin
    from O_k): turning the link by w changes the wrenches' link coordinates by [T w ; Fs~ w]."""

    def __init__(self, ctx, chain, X, f_ext):
        n = chain.n
        self.ctx = ctx
        placements = frames.Placements(ctx, chain, X, lazy=True)
        for k in chain.outward():
            placements.place(k)
        self.wrench, T, Fs = [None] * n, [None] * n, [None] * n
        for frame, w in zip(chain.model.kinematic_frames, f_ext):
            k = frame.parent
            if k < 0:
                continue
            R0 = placements.R[k]
            force, torque = S.bind(ctx, S.rot_t(R0, w[:3])), S.bind(ctx, S.rot_t(R0, w[3:]))
            c = [ctx.const(x) for x in frame.translation]
            local = S.add(torque, S.cross(c, force)) + force
            tk = S.add3(S.skew(torque), _outer_minus_dot(force, c))      # t~ + c~ f~ = t~ + f c^T - (c . f) 1
            self.wrench[k] = local if self.wrench[k] is None else S.vadd(self.wrench[k], local)
            T[k] = tk if T[k] is None else S.add3(T[k], tk)
            Fs[k] = force if Fs[k] is None else S.add(Fs[k], force)
        for k in chain.inward():
            for c in chain.children[k]:
                if T[c] is None:
                    continue
                R, l = X[c]
                f = S.bind(ctx, S.rot(R, Fs[c]))
                moved = S.add3(_congruence(ctx, X[c], T[c], False), _outer_minus_dot(f, l))  # + l~ f~
                T[k] = moved if T[k] is None else S.add3(T[k], moved)
                Fs[k] = f if Fs[k] is None else S.add(Fs[k], f)
            if T[k] is not None:
                T[k], Fs[k] = S.bind_matrix(ctx, T[k]), S.bind(ctx, Fs[k])
            if self.wrench[k] is not None:
                self.wrench[k] = S.bind(ctx, self.wrench[k])
        self.T, self.Fs = T, Fs

    def turned(self, k, w):
        """The change of the subtree's wrenches (composite at O_k) when it turns by w: [T w ; Fs~ w]."""
        if self.T[k] is None:
            return None
        return S.rot(self.T[k], w) + S.cross(self.Fs[k], w)

    def row(self, k, h):
        """r3 with h . turned(k, w) = r3 . w: T^T h_w + h_v x Fs (a free vector)."""
        if self.T[k] is None:
            return None
        return S.bind(self.ctx, S.add(S.rot_t(self.T[k], h[:3]), S.cross(h[3:], self.Fs[k])))


#: the two forms of the entries of a joint i against its descendants j (the same numbers): "inward", the
#: forces dF(j) carried inward to i (a force transform per pair, two forces per column); "outward", the
#: rows S(i) carried outward to j (a motion transform per pair, one per row) where no joint above has
#: several rows. Which is cheaper depends on the geometry's zeros (a right-angled arm's force transforms
#: are cheap): the generator traces both and keeps the cheaper (Function.forms); the engine the first.
FORMS = ("inward", "outward")


def inverse_dynamics_derivatives(ctx, chain, X, qd, qdd, f_ext=None, form=FORMS[0]):
    """(dtau/dq, dtau/dv), each (nv, nv), of tau = ID(q, v, qdd) with friction and rotor inertias;
    f_ext: external wrenches at the frames, world axes (held fixed in the world as q moves); form: one
    of FORMS."""
    ext, (V, Acc, Vp, Ap), comp = _passes(ctx, chain, X, qd, qdd, f_ext)
    # outward: the rows of chain.top only (a joint below a multi-DoF one would carry one motion per row
    # of that joint: its forces come inward)
    entries = _Entries(ctx, chain, X, comp, [_columns(ctx, chain, k, V, Vp, Ap) for k in range(chain.n)], ext,
                       chain.top if form == "outward" else frozenset())
    for i in range(chain.n):
        entries.ancestors(i)
        entries.descendants(i)
        entries.outward(i)
    _add_friction(ctx, chain, qd, entries.dv)
    _add_springs(ctx, chain, entries.dq)
    _add_gravity_compensation(ctx, chain, X, entries.dq, form)
    return entries.dq, entries.dv


def joint_space_forces(ctx, chain, X, qd, qdd, f_ext=None):
    """F(k), the force across each joint (RNEA's, with the external wrenches), as the derivatives compute it
    (the same passes): a program that traces both gets these entries of tau without a second inverse dynamics."""
    return _passes(ctx, chain, X, qd, qdd, f_ext)[2].F


def _passes(ctx, chain, X, qd, qdd, f_ext):
    """(the external wrenches or None, _motions' outward pass, the inward Composites)."""
    ext = None if f_ext is None else External(ctx, chain, X, f_ext)
    motions = _motions(ctx, chain, X, qd, qdd)
    return ext, motions, Composites(ctx, chain, X, motions[0], motions[1], None if ext is None else ext.wrench)


class _Entries:
    """dtau/dq, dtau/dv filled joint by joint from the composites `comp`, each joint's columns (s, u, w, y)
    and the external wrenches `ext` (None without)."""

    def __init__(self, ctx, chain, X, comp, cols, ext, outward_joints=()):
        self.ctx, self.chain, self.X, self.comp, self.cols, self.ext = ctx, chain, X, comp, cols, ext
        self.outward_joints = outward_joints
        self.dq = [[0] * chain.nv for _ in range(chain.nv)]
        self.dv = [[0] * chain.nv for _ in range(chain.nv)]
        self._forces = {}

    def ancestors(self, i):
        """Rows of joint i against the columns of i and of its ancestors j: r1, r2 (and the wrenches' r3)
        carried inward."""
        ctx, chain, comp, ext = self.ctx, self.chain, self.comp, self.ext
        rows = [(S.bind(ctx, comp.inertia(i, s)), S.bind(ctx, comp.bc_t(i, s)), ext and ext.row(i, s))
                for s in chain.H[i]]
        j = i
        if chain.parent[i] >= 0:        # its own block from its forces, formed anyway for its parent's rows
            self.own(i)
        while True:
            for a, (r1, r2, r3) in enumerate(rows if j != i or chain.parent[i] < 0 else ()):
                row = chain.vi[i][a]
                for c, (s, u, w, y) in enumerate(self.cols[j]):
                    q_entry = -(S.vdot(r1, w) + S.vdot(r2, u))
                    if r3 is not None:
                        q_entry = q_entry - S.dot(r3, s[:3])
                    self.dq[row][chain.vi[j][c]] = ctx.bind(q_entry)
                    self.dv[row][chain.vi[j][c]] = ctx.bind(S.vdot(r1, y) + S.vdot(r2, s))
            if chain.parent[j] < 0:
                return
            X, R = self.X[j], self.X[j][0]
            rows = [(S.force_inward(ctx, X, r1), S.bind(ctx, S.rot(R, r2[:3])) + [0, 0, 0],
                     r3 and S.bind(ctx, S.rot(R, r3))) for r1, r2, r3 in rows]
            j = chain.parent[j]

    def descendants(self, j):
        """Columns of joint j against its strict ancestors i that take them inward: dF(j)/dq_s, dF(j)/dv_s
        carried inward from j (the rest come outward, `outward`)."""
        ctx, chain = self.ctx, self.chain
        forces, k = None, j
        while chain.parent[k] >= 0 and chain.parent[k] not in self.outward_joints:
            forces = [(col, S.force_inward(ctx, self.X[k], fq), S.force_inward(ctx, self.X[k], fv))
                      for col, fq, fv in (forces or self.forces(j))]
            k = chain.parent[k]
            for a, h in enumerate(chain.H[k]):
                for col, fq, fv in forces:
                    self.dq[chain.vi[k][a]][col] = ctx.bind(S.vdot(h, fq))
                    self.dv[chain.vi[k][a]][col] = ctx.bind(S.vdot(h, fv))

    def outward(self, i):
        """Rows of joint i against the columns of its strict descendants, taken outward: each row h of
        S(i) carried out to the descendant j (one motion transform per body) and dotted with dF(j)/dq_s,
        dF(j)/dv_s at O_j (no force transform per pair)."""
        if i not in self.outward_joints:
            return
        ctx, chain = self.ctx, self.chain
        rows = {i: chain.H[i]}
        for k in chain.subtree[i][1:]:
            rows[k] = [S.bind(ctx, S.motion_outward(ctx, self.X[k], h)) for h in rows[chain.parent[k]]]
            for a, h in enumerate(rows[k]):
                for col, fq, fv in self.forces(k):
                    self.dq[chain.vi[i][a]][col] = ctx.bind(S.vdot(h, fq))
                    self.dv[chain.vi[i][a]][col] = ctx.bind(S.vdot(h, fv))

    def own(self, i):
        """Joint i's own block, S(i) . dF(i)/dq_s and S(i) . dF(i)/dv_s with the turning of S(i):
        d(S_a . F)/dq_s = S_a . dF/dq_s + (s x S_a) . F (zero for a = s)."""
        ctx, chain = self.ctx, self.chain
        for a, h in enumerate(chain.H[i]):
            for (col, fq, fv), s in zip(self.forces(i), chain.H[i]):
                self.dq[chain.vi[i][a]][col] = ctx.bind(S.vdot(h, fq) + S.vdot(S.cross_motion(s, h), self.comp.F[i]))
                self.dv[chain.vi[i][a]][col] = ctx.bind(S.vdot(h, fv))

    def forces(self, j):
        """Joint j's columns as (column, dF(j)/dq_s, dF(j)/dv_s) at O_j, formed once."""
        if j not in self._forces:
            ctx, chain, comp, ext = self.ctx, self.chain, self.comp, self.ext
            forces = []
            for c, (s, u, w, y) in enumerate(self.cols[j]):
                fq = S.vsub(S.vsub(S.cross_force(s, comp.F[j]), comp.inertia(j, w)), comp.bc(j, u))
                turned = ext and ext.turned(j, s[:3])
                if turned is not None:
                    fq = S.vsub(fq, turned)
                fv = S.vadd(comp.inertia(j, y), comp.bc(j, s))
                forces.append((chain.vi[j][c], S.bind(ctx, fq), S.bind(ctx, fv)))
            self._forces[j] = forces
        return self._forces[j]


def form_applies(model, form):
    """False where `form` is FORMS[0]'s program on the model: "outward" without a root joint of one column
    (a floating base), where no joint takes it."""
    return form == FORMS[0] or any(j.parent < 0 and j.kind.nv == 1 for j in model.joints)


def _add_friction(ctx, chain, qd, dv):
    """The joints' own friction: d(Fv qd + Fc sgn(qd) + Fo)/dqd on the diagonal (forward mode on each
    joint's scalar; the rotors' Ia qdd does not depend on q or qd)."""
    d = DualContext(ctx)
    for k, i in _fr.one_dof(chain):
        rates = list(qd)
        rates[i] = Dual(qd[i], {0: 1})
        extra = tangent(_fr.joint_friction(d, chain, rates, k, i), 0)
        if not exact_zero(extra):
            dv[i][i] = ctx.bind(dv[i][i] + extra)
    for k, i in _fr.multi_dof(chain, "damping"):      # Fv qd on each DoF of a ball or free joint
        dv[i][i] = ctx.bind(dv[i][i] + chain.viscous[k])
    for Ia, lin, ang in _fr.free_rotors(chain):       # d(Ia w x v)/d(v, w) = Ia (w~, -v~)
        for a, i in enumerate(lin):
            b, c = (a + 1) % 3, (a + 2) % 3
            for j, x in ((lin[c], qd[ang[b]]), (lin[b], -qd[ang[c]]), (ang[b], qd[lin[c]]), (ang[c], -qd[lin[b]])):
                dv[i][j] = ctx.bind(dv[i][j] + Ia * x)


def _add_springs(ctx, chain, dq):
    """The joints' springs: d(K (q - q_ref))/dq = K on the diagonal."""
    for k, i in _fr.one_dof(chain):
        if not exact_zero(chain.stiffness[k]):
            dq[i][i] = ctx.bind(dq[i][i] + chain.stiffness[k])


def _add_gravity_compensation(ctx, chain, X, dq, form):
    """MuJoCo's gravcomp, -g_c(q): minus d/dq of the gravity torques of the compensated masses."""
    tree = _fr.compensated_tree(chain)
    if tree is None:
        return
    zeros = [0] * chain.nv
    held, _ = inverse_dynamics_derivatives(ctx, tree, X, zeros, zeros, form=form)
    for i, row in enumerate(held):
        for j, x in enumerate(row):
            if not exact_zero(x):
                dq[i][j] = ctx.bind(dq[i][j] - x)


__all__ = ["inverse_dynamics_derivatives", "Composites", "Gyroscopic", "FORMS", "form_applies"]
