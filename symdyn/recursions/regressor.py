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
              = K(k) s_ang, the 6 x 3 map K formed once per body (inertia_map)

Joints on other branches do not see body k: their entries are exact zeros. A joint with several
columns (free-flyer, spherical, planar) has one row per column, each carried out the same way.
"""
from ..multibody import spatial as S
from .friction import coulomb_sign, one_dof
from .rnea import accelerations


def _l_transpose(w, x):
    """L(w)^T x: the coefficients of (Ixx, Ixy, Iyy, Ixz, Iyz, Izz) in x . (J w)."""
    return [w[0] * x[0], w[1] * x[0] + w[0] * x[1], w[1] * x[1],
            w[2] * x[0] + w[0] * x[2], w[2] * x[1] + w[1] * x[2], w[2] * x[2]]


def inertia_map(ctx, w, wd):
    """K (6 x 3) with K s_ang = L(w_dot)^T s_ang + L(w)^T (s_ang x w), the coefficients of the rotational
    inertia, for every s of body k: linear in s_ang, so formed once per body (3 mul per coefficient and
    pair instead of 4)."""
    unit = ([1, 0, 0], [0, 1, 0], [0, 0, 1])
    columns = [[a + b for a, b in zip(_l_transpose(wd, e), _l_transpose(w, S.cross(e, w)))] for e in unit]
    return [[ctx.bind(columns[a][c]) for a in range(3)] for c in range(6)]


def body_columns(ctx, s, w, alpha, U, K=None):
    """s . Y(k) pi(k) as the 10 coefficients of pi(k), for a motion vector s at body k
    (K: inertia_map of the body, if already formed)."""
    sa, sl = s[:3], s[3:]
    wd, vd = alpha[:3], alpha[3:]
    m = S.dot(sl, vd)
    h = S.add(S.cross(vd, sa), S.rot_t(U, sl))
    J = [S.dot(row, sa) for row in (K or inertia_map(ctx, w, wd))]
    return [ctx.bind(x) for x in [m] + h + J]


def _subtree_outward(chain, j):
    """(body, its parent) for the bodies below joint j, parents first."""
    stack = list(reversed(chain.children[j]))
    while stack:
        k = stack.pop()
        yield k
        stack.extend(reversed(chain.children[k]))


def regressor(ctx, chain, X, qd, qdd):
    """Y(q, qd, qdd) as nv rows of 10 n_bodies + 4 n_joints entries (model.parameters order)."""
    n = chain.n
    nb = len(chain.params)
    w, alpha, U = accelerations(ctx, chain, X, qd, qdd)
    K = [inertia_map(ctx, w[k], alpha[k][:3]) for k in range(n)]
    Y = [[0] * (10 * nb + 4 * n) for _ in range(chain.nv)]
    for j in range(n):
        below = list(_subtree_outward(chain, j))
        for row, H in zip(chain.vi[j], chain.H[j]):
            s = {j: H}
            Y[row][10 * j:10 * j + 10] = body_columns(ctx, H, w[j], alpha[j], U[j], K[j])
            for k in below:
                s[k] = S.bind(ctx, S.motion_outward(ctx, X[k], s[chain.parent[k]]))
                Y[row][10 * k:10 * k + 10] = body_columns(ctx, s[k], w[k], alpha[k], U[k], K[k])
    for j, i in one_dof(chain):       # friction and rotor: Fv qd, Fc sgn(qd), Fo, Ia qdd
        Y[i][10 * nb + 4 * j:10 * nb + 4 * j + 4] = [qd[i], coulomb_sign(ctx, chain, qd[i]), 1, qdd[i]]
    return Y
