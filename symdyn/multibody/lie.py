"""Configurations on the joints' Lie groups, as Pinocchio moves them (pinocchio.integrate,
difference, neutral): exact exponential and logarithm maps, arrays of any batch shape.

The group functions below are also copied verbatim (their source text) into every generated
Python module that needs them, so the engine and the generated code share one implementation.
They take the array namespace `xp` first (numpy here; in a generated module the library of the
caller's arrays: JAX, PyTorch, ... through the array API standard) and use only its functions.
Quaternions are stored (x, y, z, w); a free-flyer's velocity is [v; w] in the moving frame,
so integrate(q, v) = q * exp(v), difference(q0, q1) = log(q0^-1 q1) (right-invariant).
"""
import inspect

import numpy as np


def _cross(xp, a, b):
    return xp.stack([a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1],
                     a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2],
                     a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]], axis=-1)


def _quat_mul(xp, a, b):
    """Hamilton product of (x, y, z, w) quaternions."""
    av, aw, bv, bw = a[..., :3], a[..., 3:], b[..., :3], b[..., 3:]
    return xp.concat([aw * bv + bw * av + _cross(xp, av, bv),
                           aw * bw - xp.sum(av * bv, axis=-1, keepdims=True)], axis=-1)


def _quat_rotate(xp, q, x):
    """R(q) x for a unit quaternion q."""
    v, w = q[..., :3], q[..., 3:]
    t = 2 * _cross(xp, v, x)
    return x + w * t + _cross(xp, v, t)


def _quat_conj(xp, q):
    return xp.concat([-q[..., :3], q[..., 3:]], axis=-1)


def _normalize(xp, x):
    return x / xp.sqrt(xp.sum(x * x, axis=-1, keepdims=True))


def _so3_exp(xp, w):
    """The unit quaternion of the rotation vector w."""
    t2 = xp.sum(w * w, axis=-1, keepdims=True)
    small = t2 < 1e-8
    t = xp.sqrt(xp.where(small, 1.0, t2))      # no sqrt at 0: its infinite slope would make gradients NaN
    k = xp.where(small, 0.5 - t2 / 48, xp.sin(t / 2) / t)
    return xp.concat([k * w, xp.where(small, 1 - t2 / 8, xp.cos(t / 2))], axis=-1)


def _so3_log(xp, q):
    """The rotation vector of the unit quaternion q (the shorter of the two rotations)."""
    q = xp.where(q[..., 3:] < 0, -q, q)
    v, w = q[..., :3], q[..., 3:]
    n2 = xp.sum(v * v, axis=-1, keepdims=True)
    small = n2 < 1e-8
    n = xp.sqrt(xp.where(small, 1.0, n2))
    f = xp.where(small, 2 / w - 2 * n2 / (3 * w * w * w), 2 * xp.atan2(n, w) / n)
    return f * v


def so3_integrate(xp, q, v):
    return _normalize(xp, _quat_mul(xp, q, _so3_exp(xp, v)))


def so3_difference(xp, q0, q1):
    return _so3_log(xp, _quat_mul(xp, _quat_conj(xp, q0), q1))


def se3_integrate(xp, q, v):
    """q * exp(v): p1 = p0 + R0 V(w) u, quaternion q0 exp(w), for v = [u; w]."""
    u, w = v[..., :3], v[..., 3:]
    t2 = xp.sum(w * w, axis=-1, keepdims=True)
    small = t2 < 1e-8
    t = xp.sqrt(xp.where(small, 1.0, t2))
    a = xp.where(small, 0.5 - t2 / 24, (1 - xp.cos(t)) / (t * t))
    b = xp.where(small, 1 / 6 - t2 / 120, (t - xp.sin(t)) / (t * t * t))
    wu = _cross(xp, w, u)
    step = u + a * wu + b * _cross(xp, w, wu)
    quat = q[..., 3:]
    return xp.concat([q[..., :3] + _quat_rotate(xp, quat, step), so3_integrate(xp, quat, w)], axis=-1)


def se3_difference(xp, q0, q1):
    """log(q0^-1 q1) = [V(w)^-1 p; w] with p = R0^T (p1 - p0), w the relative rotation vector."""
    w = so3_difference(xp, q0[..., 3:], q1[..., 3:])
    p = _quat_rotate(xp, _quat_conj(xp, q0[..., 3:]), q1[..., :3] - q0[..., :3])
    t2 = xp.sum(w * w, axis=-1, keepdims=True)
    small = t2 < 1e-8
    t = xp.sqrt(xp.where(small, 1.0, t2))
    c = xp.where(small, 1 / 12 + t2 / 720, (1 - t * xp.sin(t) / (2 * (1 - xp.cos(t)))) / (t * t))
    wp = _cross(xp, w, p)
    return xp.concat([p - 0.5 * wp + c * _cross(xp, w, wp), w], axis=-1)


def se2_integrate(xp, q, v):
    """Planar q = [x, y, cos t, sin t] moved by v = [vx, vy, w] in the joint frame."""
    c0, s0, w = q[..., 2:3], q[..., 3:4], v[..., 2:3]
    safe = xp.where(xp.abs(w) < 1e-4, 1.0, w)
    alpha = xp.where(xp.abs(w) < 1e-4, 1 - w * w / 6, xp.sin(safe) / safe)
    beta = xp.where(xp.abs(w) < 1e-4, w / 2 - w * w * w / 24, (1 - xp.cos(safe)) / safe)
    tx = alpha * v[..., 0:1] - beta * v[..., 1:2]
    ty = beta * v[..., 0:1] + alpha * v[..., 1:2]
    cw, sw = xp.cos(w), xp.sin(w)
    rot = _normalize(xp, xp.concat([c0 * cw - s0 * sw, s0 * cw + c0 * sw], axis=-1))
    return xp.concat([q[..., 0:1] + c0 * tx - s0 * ty, q[..., 1:2] + s0 * tx + c0 * ty, rot], axis=-1)


def se2_difference(xp, q0, q1):
    c0, s0, c1, s1 = q0[..., 2:3], q0[..., 3:4], q1[..., 2:3], q1[..., 3:4]
    t = xp.atan2(c0 * s1 - s0 * c1, c0 * c1 + s0 * s1)
    dx, dy = q1[..., 0:1] - q0[..., 0:1], q1[..., 1:2] - q0[..., 1:2]
    px, py = c0 * dx + s0 * dy, -s0 * dx + c0 * dy
    safe = xp.where(xp.abs(t) < 1e-4, 1.0, t)
    a = xp.where(xp.abs(t) < 1e-4, 1 - t * t / 12, safe * xp.sin(safe) / (2 * (1 - xp.cos(safe))))
    return xp.concat([a * px + t / 2 * py, -t / 2 * px + a * py, t], axis=-1)


def _xyzw(xp, q):
    return xp.concat([q[..., 1:], q[..., :1]], axis=-1)


def _wxyz(xp, q):
    return xp.concat([q[..., 3:], q[..., :3]], axis=-1)


def mjquat_integrate(xp, q, v):
    """MuJoCo's quaternion (w, x, y, z) turned by the body-axes rotation vector v (mj_integratePos)."""
    return _wxyz(xp, so3_integrate(xp, _xyzw(xp, q), v))


def mjquat_difference(xp, q0, q1):
    return so3_difference(xp, _xyzw(xp, q0), _xyzw(xp, q1))


def vector_integrate(xp, q, v):
    return q + v


def vector_difference(xp, q0, q1):
    return q1 - q0


GROUPS = {"vector": (vector_integrate, vector_difference), "so3": (so3_integrate, so3_difference),
          "se3": (se3_integrate, se3_difference), "se2": (se2_integrate, se2_difference),
          "mjquat": (mjquat_integrate, mjquat_difference)}
#: the helpers each group's functions call
_HELPERS = {"vector": (), "so3": (_cross, _quat_mul, _quat_conj, _normalize, _so3_exp, _so3_log),
            "se3": (_cross, _quat_mul, _quat_rotate, _quat_conj, _normalize, _so3_exp, _so3_log,
                    so3_integrate, so3_difference),
            "se2": (_normalize,),
            "mjquat": (_cross, _quat_mul, _quat_conj, _normalize, _so3_exp, _so3_log, so3_integrate,
                       so3_difference, _xyzw, _wxyz)}


def joint_pieces(model):
    """(group, q start, q end, v start, v end) of every joint that owns coordinates. In MuJoCo's
    coordinates (model.conventions) a quaternion is (w, x, y, z) and a free joint moves as MuJoCo's
    mj_integratePos does: its position by the rate (a vector), its quaternion in body axes."""
    mujoco = model.conventions == "mujoco"
    for j, qi, vi in zip(model.joints, model.q_slices, model.v_slices):
        if not qi:                                   # a mimic joint has no coordinate
            continue
        g = j.kind.lie_group
        if mujoco and g == "se3":
            yield "vector", qi[0], qi[0] + 3, vi[0], vi[0] + 3
            yield "mjquat", qi[0] + 3, qi[-1] + 1, vi[0] + 3, vi[-1] + 1
        else:
            yield ("mjquat" if mujoco and g == "so3" else g), qi[0], qi[-1] + 1, vi[0], vi[-1] + 1


def _pieces(model):
    """(group, q slice, v slice) of every joint."""
    for g, q0, q1, v0, v1 in joint_pieces(model):
        yield g, slice(q0, q1), slice(v0, v1)


def integrate(model, q, v, dt=1.0):
    q, v = np.asarray(q, dtype=float), np.asarray(v, dtype=float) * dt
    shape = np.broadcast_shapes(q.shape[:-1], v.shape[:-1])
    q, v = np.broadcast_to(q, shape + q.shape[-1:]), np.broadcast_to(v, shape + v.shape[-1:])
    return np.concatenate([GROUPS[g][0](np, q[..., sq], v[..., sv]) for g, sq, sv in _pieces(model)], axis=-1)


def difference(model, q0, q1):
    q0, q1 = np.asarray(q0, dtype=float), np.asarray(q1, dtype=float)
    shape = np.broadcast_shapes(q0.shape[:-1], q1.shape[:-1])
    q0, q1 = np.broadcast_to(q0, shape + q0.shape[-1:]), np.broadcast_to(q1, shape + q1.shape[-1:])
    return np.concatenate([GROUPS[g][1](np, q0[..., sq], q1[..., sq]) for g, sq, _ in _pieces(model)], axis=-1)


def neutral(model):
    """The model's reference configuration (MJCF: qpos0), else each joint's neutral (identity quaternions)."""
    if model.reference:
        return np.array(model.reference, dtype=float)
    mujoco = model.conventions == "mujoco"
    return np.array([x for j, qi in zip(model.joints, model.q_slices) if qi
                     for x in (_mujoco_neutral(j.kind) if mujoco else j.kind.neutral())])


def _mujoco_neutral(kind):
    x = kind.neutral()
    return x[:-4] + x[-1:] + x[-4:-1] if kind.lie_group in ("so3", "se3") else x


def random_configuration(model, rng, count):
    """Random configurations: angles and offsets in [-pi, pi], uniformly random unit quaternions."""
    q = rng.uniform(-np.pi, np.pi, (count, model.nq))
    for j, qi in zip(model.joints, model.q_slices):
        if not qi:
            continue
        if j.kind.lie_group in ("so3", "se3"):
            q[:, qi[-4:]] = _normalize(np, rng.normal(size=(count, 4)))
        elif j.kind.lie_group == "se2":
            q[:, qi[2:]] = _normalize(np, rng.normal(size=(count, 2)))
    return q


def source(groups):
    """The source text of the functions the given groups need, for a generated Python module."""
    needed = []
    for g in sorted(groups):
        for fn in _HELPERS[g] + GROUPS[g]:
            if fn not in needed:
                needed.append(fn)
    return "\n\n".join(inspect.getsource(fn).rstrip() + "\n" for fn in needed)
