"""Forward dynamics: Kalman filter inward, Bryson-Frazier smoother outward
(Rodriguez 1987, eqs. 41-47). O(N); no mass matrix is formed."""
from . import spatial as S
from .kinematics import bias_acceleration, bias_forces, bias_terms


def forward_dynamics(ctx, chain, X, ric, qd, T, gravity=True, f_ext=None):
    """Joint accelerations for joint forces T (gravity as a base acceleration) and optional external
    spatial forces f_ext[k] on the bodies (at O_k in frame k, None for none): they enter as -b."""
    w, c, a_local = bias_terms(ctx, chain, X, qd)
    b = bias_forces(ctx, chain, w)
    if f_ext is not None:
        b = [b[k] if f_ext[k] is None else S.bind(ctx, S.vsub(b[k], f_ext[k])) for k in range(chain.n)]
    a = [bias_acceleration(ctx, X[k], c[k], a_local[k]) for k in range(chain.n)]
    zplus, r = [None] * chain.n, [None] * chain.n
    for k in chain.inward():                 # filter: z = sum phi z+ + b; e = T - H z
        z = b[k]
        for c in chain.children[k]:
            z = S.vadd(z, S.force_inward(ctx, X[c], zplus[c]))
        z = S.bind(ctx, z)
        e = ctx.bind(T[k] - S.vdot(chain.H[k], z))
        r[k] = ctx.bind(e / ric.D[k])
        # z+ = z + G e + P+ a
        zplus[k] = S.bind(ctx, S.vadd(S.vadd(z, S.vscale(e, ric.G[k])), S.matvec(ric.Pplus[k], a[k])))
    base = chain.base_acceleration if gravity else [0] * 6
    lam, qdd = [None] * chain.n, [None] * chain.n
    for k in chain.outward():                # smoother: qdd = r - G* (lambda+ + a)
        p = chain.parent[k]
        lplus = S.bind(ctx, S.vadd(S.motion_outward(ctx, X[k], lam[p] if p >= 0 else base), a[k]))
        qdd[k] = ctx.bind(r[k] - S.vdot(ric.G[k], lplus))
        lam[k] = S.bind(ctx, S.vadd(lplus, S.vscale(qdd[k], chain.H[k])))
    return qdd
