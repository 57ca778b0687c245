"""Operational-space compliance Lambda^-1 = J M^-1 J^T of the selected frames by the O(N)
recursion through the articulated inertias (Kreutz-Delgado, Jain & Rodriguez 1992; Lilly & Orin's
recursive algorithm), without forming M^-1.

Upsilon-(k) is the compliance of body k: a spatial force f on body k of the robot at rest
(no gravity, no joint force) gives it the spatial acceleration Upsilon-(k) f. Outward (the
Upsilon recursion of Section X, minverse.py):
    Upsilon+(k) = phi*(parent, k) Upsilon-(parent) phi(parent, k),   Upsilon+ = 0 below the roots
    Upsilon-(k) = tau_bar* Upsilon+ tau_bar + H* H / D.
A force on body j reaches an ancestor a through the articulated bodies in between as psi(a, j) f
(tau_bar(j), phi, tau_bar, ... not tau_bar(a)); the acceleration goes back out to body i as
psi(a, i)* (.). With a the deepest body common to the paths of i and j to the base:
    Omega(i, j) = psi(a, i)* Upsilon-(a) psi(a, j)        (0 when they share no moving body).
A frame's world-aligned wrench [force; torque at p_f] is the body force B_f w, so the block of
frames f, g is (psi(a, i) B_f)^T Upsilon-(a) (psi(a, j) B_g): 6 columns carried inward per frame.
"""
from ..multibody import spatial as S
from .frames import Placements, columns


def _joint(ctx, chain, ric, k):
    """(H, G, D^-1): joint k's columns of H* and of G, and its D^-1 (an nv x nv block)."""
    return columns(chain, k), list(ric.G[k]), ric.D[k].inverse()


def _upsilon_minus(ctx, chain, X, ric):
    """Upsilon- = tau_bar* Upsilon+ tau_bar + H* D^-1 H
                = Upsilon+ - u H - H* u* + H* (D^-1 + G* u) H,   u = Upsilon+ G."""
    Uminus, joints = [None] * chain.n, [None] * chain.n
    for k in chain.outward():
        p = chain.parent[k]
        H, G, Dinv = joints[k] = _joint(ctx, chain, ric, k)
        m = len(H)
        if p < 0:                            # Upsilon+ = 0: Upsilon- = H* D^-1 H
            Uminus[k] = S.symmetric(ctx, lambda i, j: sum((Dinv[a][b] * H[a][i] * H[b][j]
                                                           for a in range(m) for b in range(m)), 0))
            continue
        U = S.congruence_outward(ctx, X[k], Uminus[p])
        u = [S.bind(ctx, S.matvec(U, g)) for g in G]
        d = [[ctx.bind(Dinv[a][b] + S.vdot(G[a], u[b])) for b in range(m)] for a in range(m)]
        Uminus[k] = S.symmetric(ctx, lambda i, j: U[i][j] + sum((-u[a][i] * H[a][j] - H[a][i] * u[a][j]
                                                                 for a in range(m)), 0) +
                                sum((d[a][b] * H[a][i] * H[b][j] for a in range(m) for b in range(m)), 0))
    return Uminus, joints


def _tau_bar(ctx, joint, x):
    """tau_bar x = x - G (H x) for a force x."""
    H, G, _ = joint
    for h, g in zip(H, G):
        x = S.vsub(x, S.vscale(ctx.bind(S.vdot(h, x)), g))
    return S.bind(ctx, x)


def _wrench_map(ctx, R, d):
    """The 6 columns of B_f: body forces [moment; force] (frame k, at O_k) of unit world wrenches
    [force; torque] at the frame origin, d = p_f - p0(k) in world axes."""
    dl = S.bind(ctx, S.rot_t(R, d))
    rows = [[R[e][0], R[e][1], R[e][2]] for e in range(3)]    # R^T e = row e of R
    forces = [S.bind(ctx, S.cross(dl, r)) + r for r in rows]
    torques = [r + [0, 0, 0] for r in rows]
    return forces + torques


def operational_space_inertia_inverse(ctx, chain, X, ric, frames=None):
    """(6 nf, 6 nf): J M^-1 J^T for the LOCAL_WORLD_ALIGNED Jacobians of the frames (default FRAMES), stacked."""
    pl = Placements(ctx, chain, X, frames)
    Uminus, joints = _upsilon_minus(ctx, chain, X, ric)
    carried = []            # per frame: {body a on its path: psi(a, i) B_f (6 columns)}
    for (k, R, pf), lever in zip(pl.frames, pl.levers):
        at = {}
        if k >= 0:
            cols = _wrench_map(ctx, pl.R[k], lever)
            j = k
            while True:
                at[j] = cols
                p = chain.parent[j]
                if p < 0:
                    break
                cols = [S.force_inward(ctx, X[j], _tau_bar(ctx, joints[j], c)) for c in cols]
                j = p
        carried.append((k, at))
    nf = len(carried)
    L = [[0] * (6 * nf) for _ in range(6 * nf)]
    for f, (i, at_f) in enumerate(carried):
        for g in range(f, nf):
            j, at_g = carried[g]
            common = [a for a in pl.path(j) if a in at_f]
            if not common:
                continue
            a = common[0]
            Y = [S.bind(ctx, S.matvec(Uminus[a], c)) for c in at_g[a]]
            for r in range(6):
                for s in range(r if f == g else 0, 6):
                    L[6 * f + r][6 * g + s] = L[6 * g + s][6 * f + r] = ctx.bind(S.vdot(at_f[a][r], Y[s]))
    return L
