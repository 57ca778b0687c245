"""Forward dynamics: Kalman filter inward, Bryson-Frazier smoother outward
(Rodriguez 1987, eqs. 35-47; docs/algorithms.md, Sec. 7). O(N); no mass matrix is formed. For a joint
with nv > 1, e and r are nv-vectors and r = D^-1 e by triangular substitution (riccati.Block)."""
from ..multibody import spatial as S
from ..multibody.chain import combine, scatter
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
        e = [ctx.bind(t - S.vdot(h, z)) for t, h in zip(chain.rates(T, k), chain.H[k])]
        r[k] = ric.D[k].solve(e)
        # z+ = z + G e + P+ a
        zplus[k] = S.bind(ctx, S.vadd(S.vadd(z, combine(e, ric.G[k])), S.matvec(ric.Pplus[k], a[k])))
    base = chain.base_acceleration if gravity else [0] * 6
    lam, qdd = [None] * chain.n, [None] * chain.n
    for k in chain.outward():                # smoother: qdd = r - G* (lambda+ + a)
        p = chain.parent[k]
        lplus = S.bind(ctx, S.vadd(S.motion_outward(ctx, X[k], lam[p] if p >= 0 else base), a[k]))
        qdd[k] = [ctx.bind(rk - S.vdot(G, lplus)) for rk, G in zip(r[k], ric.columns(k))]
        lam[k] = S.bind(ctx, S.vadd(lplus, combine(qdd[k], chain.H[k])))
    return scatter(chain, qdd)

