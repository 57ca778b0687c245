"""Forward kinematics of the selected frames, by the outward recursion over the link transforms
(Featherstone & Orin, Sec. 2; seed 003, eqs. 5-9), never by differentiating symbolic kinematics.

    R0(k) = R0(parent) R(k)        p0(k) = p0(parent) + R0(parent) l(k)      (world placement of body k)
    a(k, c) = [R0(k) c_w ; R0(k) c_v]  for each column c of H*(k): joint k's motion in world axes

Everything a controller asks for is expressed in Pinocchio's LOCAL_WORLD_ALIGNED convention: at the
frame origin, in world (base) axes, rows [linear; angular]. The column of joint j in the Jacobian of
a frame at p_f is [v + w x (p_f - p0(j)) ; w] for its world motion (w, v) at O_j.

Velocities and classical accelerations of the body origins, outward (r = p0(k) - p0(parent),
(wJ, vJ) joint k's motion in world axes):
    w(k)  = w(p) + wJ                          v(k)  = v(p) + w(p) x r + vJ
    dw(k) = dw(p) + w(p) x wJ                  dv(k) = dv(p) + dw(p) x r + w(p) x (w(p) x r) + 2 w(p) x vJ + wJ x vJ
and at a frame, d = p_f - p0(k):  v_f = v + w x d,  a_f = dv + dw x d + w x (w x d).
"""
from ..multibody import spatial as S


def columns(chain, k):
    """Joint k's motion subspace H*(k) as a list of columns [w; v] in frame k (one per DoF)."""
    H = chain.H[k]
    return H if isinstance(H[0], (list, tuple)) else [H]


def rate_indices(chain, k):
    """Joint k's entries of a velocity-sized vector."""
    return chain.vi[k] if hasattr(chain, "vi") else (k,)


def nv(chain):
    return getattr(chain, "nv", chain.n)


class Placements:
    """World placements of every body, the selected frames, and every joint's motion in world axes."""

    def __init__(self, ctx, chain, X, frames=None, lazy=False):
        """frames: the Frames to place (default: the model's FRAMES). lazy: place nothing; the caller
        places the bodies (place, outward) when it needs them, and gets neither axes nor frames."""
        n, c = chain.n, ctx.const
        self.ctx, self.chain, self.X = ctx, chain, X
        self.R, self.p, self.r = [None] * n, [None] * n, [None] * n
        if lazy:
            return
        for k in chain.outward():
            self.place(k)
        self.axes = [[S.bind(ctx, S.rot(self.R[k], h[:3])) + S.bind(ctx, S.rot(self.R[k], h[3:]))
                      for h in columns(chain, k)] for k in range(n)]
        # the frames: (body, R0, p0), and each frame's lever p0(frame) - p0(body) = R0(body) translation
        self.frames, self.levers = [], []
        for f in chain.model.kinematic_frames if frames is None else frames:
            Rf = [[c(x) for x in row] for row in f.rotation]
            pf = [c(x) for x in f.translation]
            k = f.parent
            if k < 0:
                self.frames.append((k, Rf, pf))
                self.levers.append(None)
            else:
                lever = S.bind(ctx, S.rot(self.R[k], pf))
                self.frames.append((k, *S.Transform(self.R[k], self.p[k]).act(ctx, (Rf, pf), lever)))
                self.levers.append(lever)

    def place(self, k):
        """R0(k), p0(k) and r(k) = p0(k) - p0(parent) from the parent's placement."""
        ctx, (R, l), parent = self.ctx, self.X[k], self.chain.parent[k]
        if parent < 0:
            self.R[k], self.p[k], self.r[k] = [list(row) for row in R], list(l), list(l)
        else:
            self.r[k] = S.bind(ctx, S.rot(self.R[parent], l))
            self.R[k], self.p[k] = S.Transform(self.R[parent], self.p[parent]).act(ctx, self.X[k], self.r[k])

    def path(self, k):
        """Body k and its ancestors, tip to base."""
        return self.chain.supports[k] if k >= 0 else []

    def offset(self, k, point):
        """point - p0(k), bound (the lever from body k's origin)."""
        return S.bind(self.ctx, S.sub(point, self.p[k]))

    def levers_inward(self, f):
        """[(j, p0(frame f) - p0(j))] for the joints j moving frame f, tip to base: the lever grows by
        r(child) at each step (3 additions, the same as a difference of world positions, but the
        world positions themselves are never needed)."""
        k = self.frames[f][0]
        out, d = [], self.levers[f]
        for j in self.path(k):
            if out:
                d = S.bind(self.ctx, S.add(d, self.r[child]))
            out.append((j, d))
            child = j
        return out


def frame_placement(ctx, chain, X):
    """(nf, 4, 4): the homogeneous transform of each frame in the world."""
    pl = Placements(ctx, chain, X)
    return [[R[i] + [p[i]] for i in range(3)] + [[0, 0, 0, 1]] for _, R, p in pl.frames]


def frame_jacobian(ctx, chain, X, frames=None):
    """(nf, 6, nv): LOCAL_WORLD_ALIGNED Jacobians; exact zeros for joints that do not move the frame.
    frames: other Frames than FRAMES (the constraint points)."""
    pl = Placements(ctx, chain, X, frames)
    out = []
    for f in range(len(pl.frames)):
        J = [[0] * nv(chain) for _ in range(6)]
        for j, d in pl.levers_inward(f):
            for i, a in zip(rate_indices(chain, j), pl.axes[j]):
                w, v = a[:3], a[3:]
                lin = S.bind(ctx, S.add(v, S.cross(w, d)))
                for row in range(3):
                    J[row][i], J[row + 3][i] = lin[row], w[row]
        out.append(J)
    return out


def _joint_motion(chain, pl, k, v):
    """(wJ, vJ): joint k's velocity in world axes."""
    idx = rate_indices(chain, k)
    w, u = [0, 0, 0], [0, 0, 0]
    for i, a in zip(idx, pl.axes[k]):
        w, u = S.add(w, S.scale(v[i], a[:3])), S.add(u, S.scale(v[i], a[3:]))
    return w, u


def body_velocities(ctx, chain, pl, v):
    """Angular velocity w(k) and velocity of O_k, world axes, outward."""
    w, u = [None] * chain.n, [None] * chain.n
    for k in chain.outward():
        wJ, vJ = _joint_motion(chain, pl, k, v)
        p = chain.parent[k]
        if p < 0:
            w[k], u[k] = S.bind(ctx, wJ), S.bind(ctx, vJ)
        else:
            w[k] = S.bind(ctx, S.add(w[p], wJ))
            u[k] = S.bind(ctx, S.add(S.add(u[p], S.cross(w[p], pl.r[k])), vJ))
    return w, u


def frame_velocity(ctx, chain, X, v, frames=None):
    """(nf, 6): [velocity of the frame origin; angular velocity], world axes (= J v).
    frames: other Frames than FRAMES (the constraint points)."""
    pl = Placements(ctx, chain, X, frames)
    w, u = body_velocities(ctx, chain, pl, v)
    out = []
    for (k, _, _), lever in zip(pl.frames, pl.levers):
        if k < 0:
            out.append([0] * 6)
            continue
        lin = S.bind(ctx, S.add(u[k], S.cross(w[k], lever)))
        out.append(lin + w[k])
    return out


def frame_acceleration_bias(ctx, chain, X, v, frames=None):
    """(nf, 6): classical acceleration [of the frame origin; angular] at zero joint acceleration
    (J_dot v), world axes, no gravity: Pinocchio's getFrameClassicalAcceleration, LOCAL_WORLD_ALIGNED.
    frames: other Frames than FRAMES (the constraint points)."""
    pl = Placements(ctx, chain, X, frames)
    n = chain.n
    w, dw, dv = [None] * n, [None] * n, [None] * n
    for k in chain.outward():
        wJ, vJ = (S.bind(ctx, x) for x in _joint_motion(chain, pl, k, v))
        own = S.cross(wJ, vJ)
        p = chain.parent[k]
        if p < 0:
            w[k], dw[k], dv[k] = wJ, [0, 0, 0], S.bind(ctx, own)
            continue
        r = pl.r[k]
        w[k] = S.bind(ctx, S.add(w[p], wJ))
        dw[k] = S.bind(ctx, S.add(dw[p], S.cross(w[p], wJ)))
        wr = S.bind(ctx, S.cross(w[p], r))
        vrel = S.bind(ctx, S.add(S.scale(2, vJ), wr))
        # dv(p) + dw(p) x r + w(p) x (w(p) x r + 2 vJ) + wJ x vJ
        dv[k] = S.bind(ctx, S.add(S.add(dv[p], S.cross(dw[p], r)), S.add(S.cross(w[p], vrel), own)))
    out = []
    for (k, _, _), d in zip(pl.frames, pl.levers):
        if k < 0:
            out.append([0] * 6)
            continue
        wd = S.bind(ctx, S.cross(w[k], d))
        lin = S.bind(ctx, S.add(S.add(dv[k], S.cross(dw[k], d)), S.cross(w[k], wd)))
        out.append(lin + dw[k])
    return out


def body_wrenches(ctx, chain, X, f_ext, frames=None):
    """The frames' external wrenches [force; torque about the frame origin] (world axes) as spatial
    forces [moment; force] on their bodies, at O_k in frame k (None for a body without one);
    wrenches on frames of the fixed base do nothing. frames: other Frames than FRAMES."""
    pl = Placements(ctx, chain, X, frames)
    out = [None] * chain.n
    for (k, _, _), lever, wrench in zip(pl.frames, pl.levers, f_ext):
        if k < 0:
            continue
        f, n = wrench[:3], wrench[3:]
        moment = S.add(n, S.cross(lever, f))
        local = S.bind(ctx, S.rot_t(pl.R[k], moment)) + S.bind(ctx, S.rot_t(pl.R[k], f))
        out[k] = local if out[k] is None else S.bind(ctx, S.vadd(out[k], local))
    return out
