"""Inverse dynamics: the recursive Newton-Euler algorithm (Rodriguez 1987, Sec. VII, eqs. 16-21;
Featherstone & Orin 2000, RNEA; docs/algorithms.md, Sec. 5). T = M(q) qdd + C(q, qd) + g(q), gravity as a base acceleration,
conventional accelerations alpha = [w_dot; v_dot of O_k] (see kinematics.bias_terms).

Outward:  alpha(k) = phi*(parent, k) alpha(parent) + H*(k) qdd(k) + a(k)
Inward:   f(k) = M(k) alpha(k) + b(k) + sum over children phi f(child);  T(k) = H(k) f(k)

The terms w_dot x x + w x (w x x) occur twice per link, for the lever l of the next joint and for
the first moment h; as in Khalil's customized Newton-Euler they share one matrix
U = w_dot~ + w~ w~ (6 products), and each use costs a matrix-vector product.
"""
from ..multibody import spatial as S
from ..multibody.chain import project, scatter
from .kinematics import bias_terms


def _u_matrix(ctx, wd, w):
    """U = w_dot~ + w w^T - |w|^2 I, so that U x = w_dot x x + w x (w x x)."""
    xx, yy, zz = (ctx.bind(w[i] * w[i]) for i in range(3))
    xy, xz, yz = ctx.bind(w[0] * w[1]), ctx.bind(w[0] * w[2]), ctx.bind(w[1] * w[2])
    return S.bind_matrix(ctx, [[-(yy + zz), xy - wd[2], xz + wd[1]],
                               [xy + wd[2], -(xx + zz), yz - wd[0]],
                               [xz - wd[1], yz + wd[0], -(xx + yy)]])


def accelerations(ctx, chain, X, qd, qdd, gravity=True):
    """Outward: w(k), alpha(k) = [w_dot; v_dot of O_k] (gravity as a base acceleration) and U(k)."""
    n = chain.n
    w, _, a = bias_terms(ctx, chain, X, qd)
    base = chain.base_acceleration if gravity else [0] * 6
    alpha, U = [None] * n, [None] * n
    for k in chain.outward():
        R, l = X[k]
        p = chain.parent[k]
        if p >= 0:          # v_dot of O_k, parent frame: v_dot(parent) + U(parent) l
            wd_p, vd_p = alpha[p][:3], S.bind(ctx, S.add(alpha[p][3:], S.rot(U[p], l)))
        else:
            wd_p, vd_p = base[:3], base[3:]
        inboard = S.bind(ctx, S.rot_t(R, wd_p)) + S.bind(ctx, S.rot_t(R, vd_p))
        alpha[k] = S.bind(ctx, S.vadd(S.vadd(inboard, chain.joint_velocity(k, qdd)), a[k]))
        U[k] = _u_matrix(ctx, alpha[k][:3], w[k])
    return w, alpha, U


def inverse_dynamics(ctx, chain, X, qd, qdd, gravity=True, f_ext=None):
    """Joint forces T(k) for the motion (qd, qdd) at the configuration with transforms X; f_ext[k]
    (optional, None for none) is an external spatial force on body k, at O_k in frame k."""
    n = chain.n
    w, alpha, U = accelerations(ctx, chain, X, qd, qdd, gravity)
    f, T = [None] * n, [None] * n
    for k in chain.inward():
        J, h, m = chain.J[k], chain.h[k], chain.params[k][0]
        wd, vd = alpha[k][:3], alpha[k][3:]
        # f = [J w_dot + w x J w + h x v_dot ;  m v_dot + w_dot x h + w x (w x h)]
        moment = S.add(S.add(S.rot(J, wd), S.cross(w[k], S.bind(ctx, S.rot(J, w[k])))), S.cross(h, vd))
        force = S.add(S.scale(m, vd), S.rot(U[k], h))
        total = moment + force
        if f_ext is not None and f_ext[k] is not None:
            total = S.vsub(total, f_ext[k])
        for c in chain.children[k]:
            total = S.vadd(total, S.force_inward(ctx, X[c], f[c]))
        f[k] = S.bind(ctx, total)
        T[k] = project(ctx, chain.H[k], f[k])
    return scatter(chain, T)
