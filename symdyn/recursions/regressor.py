"""The joint-torque regressor: T = Y(q, qd, qdd) pi, linear in the standard parameters pi
(10 per body, model.PARAMETER_NAMES, about the link origin; then Fv, Fc, Fo, Ia per joint).

Newton-Euler with the body force written on its parameter structure (Atkeson, An & Hollerbach;
Khalil & Dombre Sec. 12.4). With conventional accelerations alpha = [w_dot; v_dot of O_k] (gravity
as a base acceleration, rnea.py), body k's force about O_k is linear in its parameters:

    f(k) = [ J w_dot + w x J w + h x v_dot ;  m v_dot + U h ] = Y(k) pi(k),   U = w_dot~ + w~ w~

and joint j's force collects the bodies of its subtree:  T(j) = sum_k H(j) phi(j, k) Y(k) pi(k).
The entry for (j, k) is  (phi*(j, k) H*(j)) . Y(k) pi(k): rather than carrying the 10 columns of
every Y(k) inward to each ancestor (10 force transforms per pair), the joint's axis s = H*(j) is
carried outward to each body of its subtree (one motion transform per pair) and dotted with the
columns of Y(k):

    m:        s_lin . v_dot
    h = m c:  v_dot x s_ang + U^T s_lin                (since s_ang . (h x v_dot) = h . (v_dot x s_ang))
    J:        L(w_dot)^T s_ang + L(w)^T (s_ang x w)    (J w = L(w) [Ixx Ixy Iyy Ixz Iyz Izz])

The w_a w_b products are U's own. With a = s_ang and c = a x w, the diagonal inertias are
a_i w_dot_i + c_i w_i, and the c_i w_i share three products (body_columns); each off-diagonal one is
a dot product of a with a row formed once per body (body_terms): 33 mul per pair at most
(docs/algorithms.md, Sec. 22).

Joints on other branches do not see body k: their entries are exact zeros. A joint with several
columns (free-flyer, spherical, planar) has one row per column; carrying each out costs per column,
so such a joint takes the other exact form when a count of multiplications on its number of columns
says it is cheaper (_rows): Y(k) itself carried inward to O_j at once with k's placement relative to
j, then its rows H(j)^T (block_inward; docs/perf-history.md "Regressor of floating bases").
"""
from ..multibody import spatial as S
from .friction import coulomb_sign, multi_dof, one_dof
from .rnea import accelerations


def body_terms(ctx, w, alpha, U):
    """What every pair (j, k) of body k shares: w_dot, v_dot, U, the products w_a w_b and the
    coefficients of the off-diagonal inertias (all from U's own products: no multiplication)."""
    wd, vd = alpha[:3], alpha[3:]
    w01, w02, w12 = ctx.bind(w[0] * w[1]), ctx.bind(w[0] * w[2]), ctx.bind(w[1] * w[2])
    sq = [ctx.bind(w[i] * w[i]) for i in range(3)]
    off = [[wd[1] - w02, wd[0] + w12, sq[0] - sq[1]],      # Ixy
           [wd[2] + w01, sq[2] - sq[0], wd[0] - w12],      # Ixz
           [sq[1] - sq[2], wd[2] - w01, wd[1] + w02]]      # Iyz
    return wd, vd, U, (w01, w02, w12), S.bind_matrix(ctx, off)


def body_columns(ctx, s, body):
    """s . Y(k) pi(k) as the 10 coefficients of pi(k), for a motion vector s at body k
    (body: body_terms of k)."""
    a, b = s[:3], s[3:]
    wd, vd, U, (w01, w02, w12), off = body
    m = S.dot(b, vd)
    h = S.add(S.cross(vd, a), S.rot_t(U, b))
    # the diagonal inertias share three products: with c = a x w, c_i w_i = +-p +-q +-r
    t = [ctx.bind(a[i] * wd[i]) for i in range(3)]
    p, q, r = ctx.bind(a[1] * w02), ctx.bind(a[0] * w12), ctx.bind(a[2] * w01)
    Ixy, Ixz, Iyz = (S.dot(row, a) for row in off)
    J = [t[0] + p - r, Ixy, t[1] + r - q, Ixz, Iyz, t[2] + q - p]
    return [ctx.bind(x) for x in [m] + h + J]


def block_inward(ctx, X, body):
    """phi(j, k) Y(k), body k's 6x10 block f(k) = Y(k) pi(k) carried to O_j, as its 6 rows, with
    X = (R, l) k's placement relative to j (body: body_terms of k). Y(k)'s columns are
        m: [0; v_dot]    h_i: [e_i x v_dot; U e_i]    J: [L(w_dot) + w~ L(w); 0]
    Moment row i is r_i . n + (l x R f)_i with r_i = R's row i: the first term is body_columns for the
    motion vector [r_i; 0] (its cheap J terms); only m and h have a force R f, and a moment l x R f."""
    R, l = X
    vd, U = body[1], body[2]
    F = [S.bind(ctx, S.rot(R, c)) for c in [vd] + [[U[r][c] for r in range(3)] for c in range(3)]]
    M = [S.bind(ctx, S.cross(l, f)) for f in F]
    top = [body_columns(ctx, list(R[i]) + [0, 0, 0], body) for i in range(3)]
    moment = [[ctx.bind(top[i][c] + M[c][i]) for c in range(4)] + top[i][4:] for i in range(3)]
    return moment + [[F[c][i] for c in range(4)] + [0] * 6 for i in range(3)]


def _inward_rows(ctx, chain, X, j, body):
    """{k: rows of joint j for body k's 10 parameters}, each body's block Y(k) carried inward to O_j
    at once with k's placement relative to j (composed outward), then the rows H(j)^T of it: the
    cost per body does not grow with the columns of H(j)."""
    Xj, rows = {}, {j: [body_columns(ctx, H, body[j]) for H in chain.H[j]]}
    for k in _subtree_outward(chain, j):
        p = chain.parent[k]
        Xj[k] = X[k] if p == j else Xj[p].act(ctx, X[k])      # phi(j, k)
        block = block_inward(ctx, Xj[k], body[k])
        rows[k] = [[ctx.bind(S.vdot(H, c)) for c in zip(*block)] for H in chain.H[j]]
    return rows


def _outward_rows(ctx, chain, X, j, body):
    """{k: rows of joint j for body k's 10 parameters}, each column s of H(j) carried outward to
    body k (one motion transform per column) and dotted with Y(k) (body_columns)."""
    rows = {k: [] for k in chain.subtree[j]}
    for H in chain.H[j]:
        s = {j: H}
        rows[j].append(body_columns(ctx, H, body[j]))
        for k in _subtree_outward(chain, j):
            s[k] = S.bind(ctx, S.motion_outward(ctx, X[k], s[chain.parent[k]]))
            rows[k].append(body_columns(ctx, s[k], body[k]))
    return rows


# Rough multiplications per body of j's subtree, dense rotations. Outward, per column of H(j): a
# motion transform and body_columns. Inward, once: the composed placement, R f and l x R f for the
# 4 columns with a force, and the J and h terms of 3 body_columns with b = 0 (block_inward).
OUTWARD_PER_COLUMN = 24 + 33
INWARD_PER_BODY = 36 + 4 * (9 + 6) + 3 * (15 + 6)


def _rows(ctx, chain, X, j, body):
    """Joint j's rows, in the cheaper of the two exact forms for its number of columns."""
    if len(chain.H[j]) * OUTWARD_PER_COLUMN > INWARD_PER_BODY:
        return _inward_rows(ctx, chain, X, j, body)
    return _outward_rows(ctx, chain, X, j, body)


def _subtree_outward(chain, j):
    """The bodies below joint j, parents first."""
    return chain.subtree[j][1:]


def _free_rotor_rates(ctx, chain, qd):
    """(joint, (linear entry, (w x v) of it)) of the free joints with armature."""
    joints = [k for k, j in enumerate(chain.model.joints) if j.kind.nv == 6 and j.armature]
    return [(k, (chain.vi[k][a], ctx.bind(qd[chain.vi[k][3 + b]] * qd[chain.vi[k][c]]
                                         - qd[chain.vi[k][3 + c]] * qd[chain.vi[k][b]])))
            for k in joints for a, b, c in ((0, 1, 2), (1, 2, 0), (2, 0, 1))]


def regressor(ctx, chain, X, qd, qdd):
    """Y(q, qd, qdd) as nv rows of 10 n_bodies + 4 n_joints entries (model.parameters order)."""
    n = chain.n
    nb = len(chain.params)
    w, alpha, U = accelerations(ctx, chain, X, qd, qdd)
    body = [body_terms(ctx, w[k], alpha[k], U[k]) for k in range(n)]
    Y = [[0] * (10 * nb + 4 * n) for _ in range(chain.nv)]
    for j in range(n):
        for k, rows in _rows(ctx, chain, X, j, body).items():
            for row, entries in zip(chain.vi[j], rows):
                Y[row][10 * k:10 * k + 10] = entries
    for j, i in one_dof(chain):       # friction and rotor: Fv qd, Fc sgn(qd), Fo, Ia qdd
        Y[i][10 * nb + 4 * j:10 * nb + 4 * j + 4] = [qd[i], coulomb_sign(ctx, chain, qd[i]), 1, qdd[i]]
    for j, i in multi_dof(chain, "damping"):      # a ball or free joint's Fv and Ia, where the model has them
        Y[i][10 * nb + 4 * j] = qd[i]
    for j, i in multi_dof(chain, "armature"):
        Y[i][10 * nb + 4 * j + 3] = qdd[i]
    for j, (i, wv) in _free_rotor_rates(ctx, chain, qd):     # a free joint's Ia (v_dot + w x v) (friction.py)
        Y[i][10 * nb + 4 * j + 3] = ctx.bind(qdd[i] + wv)
    return Y
