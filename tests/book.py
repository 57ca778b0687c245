"""The book's RNEA, CRBA and ABA (Featherstone, Rigid Body Dynamics Algorithms, ch. 5-7; spatial_v2's
ID.m, HandC.m, FDab.m), in plain numpy and the book's names, for revolute and prismatic joints.

A reference for the tests only: dense 6x6 matrices, no structure exploited, nothing shared with
symdyn's recursions but the model's numbers. Spatial vectors are [angular; linear] (as symdyn's);
Xup[i] is the motion transform from the parent's frame to frame i.
"""
import numpy as np


def skew(v):
    return np.array([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])


def crm(v):
    """v x (motion cross product)."""
    out = np.zeros((6, 6))
    out[:3, :3] = out[3:, 3:] = skew(v[:3])
    out[3:, :3] = skew(v[3:])
    return out


def crf(v):
    """v x* (force cross product)."""
    return -crm(v).T


def rotation(axis, q):
    """Rodrigues: the rotation by q about the unit axis."""
    K = skew(axis)
    return np.eye(3) + np.sin(q) * K + (1 - np.cos(q)) * K @ K


def plux(E, r):
    """The motion transform of a frame rotated by E (child from parent) at r (parent coordinates)."""
    X = np.zeros((6, 6))
    X[:3, :3] = X[3:, 3:] = E
    X[3:, :3] = -E @ skew(r)
    return X


def mcI(params):
    """Spatial inertia about the link origin from [m, m c, J at the origin] (symdyn's parameters)."""
    m, h, J = params[0], np.array(params[1:4]), params[4:]
    I = np.zeros((6, 6))
    I[:3, :3] = [[J[0], J[1], J[3]], [J[1], J[2], J[4]], [J[3], J[4], J[5]]]
    I[:3, 3:], I[3:, :3], I[3:, 3:] = skew(h), -skew(h), m * np.eye(3)
    return I


def jcalc(joint, q):
    """(XJ-and-tree transform Xup, S) of one revolute or prismatic joint."""
    A, l0, h = np.array(joint.rotation, float), np.array(joint.offset, float), np.array(joint.axis, float)
    if joint.type in ("revolute", "continuous"):
        return plux((A @ rotation(h, q)).T, l0), np.concatenate([h, np.zeros(3)])
    assert joint.type == "prismatic", joint.type
    return plux(A.T, l0 + q * A @ h), np.concatenate([np.zeros(3), h])


def _tree(model, q):
    parent = [j.parent for j in model.joints]
    XS = [jcalc(j, qi) for j, qi in zip(model.joints, q)]
    I = [mcI(b.params) for b in model.bodies]
    a_grav = np.concatenate([np.zeros(3), np.array(model.gravity, float)])
    return parent, [x for x, _ in XS], [s for _, s in XS], I, a_grav


def rnea(model, q, qd, qdd):
    """ID.m: tau = M qdd + C qd + g."""
    parent, Xup, S, I, a_grav = _tree(model, q)
    n = len(parent)
    v, a, f = [None] * n, [None] * n, [None] * n
    for i in range(n):
        vJ = S[i] * qd[i]
        vp, ap = (v[parent[i]], a[parent[i]]) if parent[i] >= 0 else (np.zeros(6), -a_grav)
        v[i] = Xup[i] @ vp + vJ
        a[i] = Xup[i] @ ap + S[i] * qdd[i] + crm(v[i]) @ vJ
        f[i] = I[i] @ a[i] + crf(v[i]) @ I[i] @ v[i]
    tau = np.zeros(n)
    for i in reversed(range(n)):
        tau[i] = S[i] @ f[i]
        if parent[i] >= 0:
            f[parent[i]] = f[parent[i]] + Xup[i].T @ f[i]
    return tau


def crba(model, q):
    """HandC.m's composite-rigid-body half: H."""
    parent, Xup, S, I, _ = _tree(model, q)
    n = len(parent)
    IC = [x.copy() for x in I]
    for i in reversed(range(n)):
        if parent[i] >= 0:
            IC[parent[i]] = IC[parent[i]] + Xup[i].T @ IC[i] @ Xup[i]
    H = np.zeros((n, n))
    for i in range(n):
        fh = IC[i] @ S[i]
        H[i, i] = S[i] @ fh
        j = i
        while parent[j] >= 0:
            fh = Xup[j].T @ fh
            j = parent[j]
            H[i, j] = H[j, i] = S[j] @ fh
    return H


def aba(model, q, qd, tau):
    """FDab.m: qdd by articulated bodies."""
    parent, Xup, S, I, a_grav = _tree(model, q)
    n = len(parent)
    v, c, IA, pA = [None] * n, [None] * n, [None] * n, [None] * n
    for i in range(n):
        vJ = S[i] * qd[i]
        v[i] = (Xup[i] @ v[parent[i]] if parent[i] >= 0 else 0) + vJ
        c[i] = crm(v[i]) @ vJ
        IA[i] = I[i].copy()
        pA[i] = crf(v[i]) @ I[i] @ v[i]
    U, d, u = [None] * n, [None] * n, [None] * n
    for i in reversed(range(n)):
        U[i] = IA[i] @ S[i]
        d[i] = S[i] @ U[i]
        u[i] = tau[i] - S[i] @ pA[i]
        if parent[i] >= 0:
            Ia = IA[i] - np.outer(U[i] / d[i], U[i])
            pa = pA[i] + Ia @ c[i] + U[i] * u[i] / d[i]
            IA[parent[i]] = IA[parent[i]] + Xup[i].T @ Ia @ Xup[i]
            pA[parent[i]] = pA[parent[i]] + Xup[i].T @ pa
    a, qdd = [None] * n, np.zeros(n)
    for i in range(n):
        ap = a[parent[i]] if parent[i] >= 0 else -a_grav
        a[i] = Xup[i] @ ap + c[i]
        qdd[i] = (u[i] - U[i] @ a[i]) / d[i]
        a[i] = a[i] + S[i] * qdd[i]
    return qdd
