"""Outward sweeps shared by the dynamics: link velocities and velocity-product terms.

`velocities` gives full spatial velocities V(k) (the diagonalized recursions and the Coriolis
matrix need them). Inverse and forward dynamics need less: with conventional accelerations
alpha = [w_dot; v_dot of O_k] (Rodriguez 1987, Jain & Rodriguez 1995; docs/algorithms.md, Sec. 5) the linear velocities never
enter, only the angular ones:

    a(k) = [ w+ x wJ ;  R^T (w1 x (w1 x l)) + 2 w+ x vJ ]        b(k) = [ w x J w ;  w x (w x h) ]

with H*(k) qd(k) = [wJ; vJ] (one of the two is zero for a 1-DoF joint), w1 the parent's angular
velocity in its frame, w+ = R^T w1, J about O_k and h = m c. A joint that both turns and slides
(free-flyer, planar) moves its vJ, given in frame k, with frame k: its a(k) gains wJ x vJ.
"""
from ..multibody import spatial as S


def velocities(ctx, chain, X, qd):
    """V+(k) = phi*(parent, k) V(parent); V(k) = V+(k) + H*(k) qd(k); returns (V+, V)."""
    Vplus, V = [None] * chain.n, [None] * chain.n
    for k in chain.outward():
        p = chain.parent[k]
        Vplus[k] = S.motion_outward(ctx, X[k], V[p]) if p >= 0 else [0] * 6
        V[k] = S.bind(ctx, S.vadd(Vplus[k], chain.joint_velocity(k, qd)))
    return Vplus, V


def bias_terms(ctx, chain, X, qd):
    """Angular velocities w(k) and the bias accelerations a(k), conventional accelerations.

    a(k) comes in two parts, a(k) = phi*(parent, k) [0; c(k)] + a_local(k), with the centripetal
    c = w1 x (w1 x l) in the parent frame: inverse dynamics adds c before its own phi* and
    so rotates once per link instead of twice."""
    n = chain.n
    w, c, a = [None] * n, [None] * n, [None] * n
    for k in chain.outward():
        R, l = X[k]
        p = chain.parent[k]
        vJoint = chain.joint_velocity(k, qd)
        wJ, vJ = vJoint[:3], vJoint[3:]
        if p >= 0:
            w1 = w[p]
            wplus = S.bind(ctx, S.rot_t(R, w1))
            c[k] = S.bind(ctx, S.cross(w1, S.bind(ctx, S.cross(w1, l))))
        else:
            wplus, c[k] = [0, 0, 0], [0, 0, 0]
        w[k] = S.bind(ctx, S.add(wplus, wJ))
        linear = S.scale(2, S.cross(wplus, vJ))
        if len(chain.H[k]) > 1:
            linear = S.add(linear, S.cross(wJ, vJ))
        a[k] = S.bind(ctx, S.cross(wplus, wJ) + linear)
    return w, c, a


def bias_forces(ctx, chain, w):
    """b(k) = [w x J w ; w x (w x h)]."""
    return [S.bind(ctx, S.cross(w[k], S.bind(ctx, S.rot(chain.J[k], w[k]))) +
                   S.cross(w[k], S.bind(ctx, S.cross(w[k], chain.h[k])))) for k in range(chain.n)]


def bias_acceleration(ctx, X, c, a_local):
    """a(k) = phi*(parent, k) [0; c] + a_local."""
    R, _ = X
    return S.bind(ctx, S.vadd([0, 0, 0] + S.rot_t(R, c), a_local))
