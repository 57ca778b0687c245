"""Joint types behind one interface (Featherstone's jcalc): the recursions never branch on them.

A joint k sits at the origin of link frame k. At q = 0 (the neutral configuration) that frame
is (A, l0) in the parent frame; the joint moves it by its own motion, taken from its slice of
q (nq entries). Its velocity is H*(k) qd(k) with the nv columns of `subspace` (spatial vectors
[angular; linear] in frame k, constant in that frame for every type here). Each type also says
how it is called in a URDF file, which Pinocchio joint it is (the oracle of the tests and of
`symdyn compare`) and how configurations move on its Lie group (`symdyn.multibody.lie`).

Pinocchio orders spatial vectors [linear; angular]; its free-flyer velocity is
[v of the origin; w], both in the body frame, and its quaternions are stored (x, y, z, w).
"""
from . import spatial as S


class JointType:
    name = ""
    nq = nv = 1
    urdf_names = ()
    lie_group = "vector"      # symdyn.multibody.lie: vector | so3 | se3 | se2
    has_axis = False
    #: parent_R_k H(k) = A H(k): the joint's motion leaves its own axis alone, so its columns in the
    #: parent's axes are constants (revolute, prismatic)
    keeps_axis = False

    @staticmethod
    def turned_axis(A, h):
        """A h when the joint turns about the constant parent-frame axis A h (a revolute joint), else None."""
        return None

    @classmethod
    def neutral(cls):
        return [0.0] * cls.nq


class Revolute(JointType):
    name = "revolute"
    urdf_names = ("revolute", "continuous")
    has_axis = True
    keeps_axis = True

    @staticmethod
    def turned_axis(A, h):
        return S.rot(A, h)

    @staticmethod
    def subspace(h):
        """H(k) = [h, 0]"""
        return [list(h) + [0, 0, 0]]

    @staticmethod
    def transform(ctx, A, l0, h, q):
        """parent_R_k = A Rot(h, q); the origin does not move."""
        s, c = ctx.bind(ctx.sin(q[0])), ctx.bind(ctx.cos(q[0]))
        rotation = S.bind_matrix(ctx, S.axis_rotation(ctx, h, s, c))
        R = S.bind_matrix(ctx, S.matmul3(A, rotation))
        axis = unit_axis(h)
        if axis is None or not _signed_permutation(A):
            return S.Transform(R, l0)
        return S.Transform(R, l0, AxisTurn(ctx, A, axis, s, c, single=True))

    @staticmethod
    def pinocchio(h):
        import numpy as np
        import pinocchio as pin
        return pin.JointModelRevoluteUnaligned(np.array(h, dtype=float))


class Prismatic(JointType):
    name = "prismatic"
    urdf_names = ("prismatic",)
    has_axis = True
    keeps_axis = True

    @staticmethod
    def subspace(h):
        """H(k) = [0, h]"""
        return [[0, 0, 0] + list(h)]

    @staticmethod
    def transform(ctx, A, l0, h, q):
        """parent_R_k = A; the origin slides by q along A h."""
        return S.Transform(A, S.bind(ctx, S.add(l0, S.scale(q[0], S.rot(A, h)))))

    @staticmethod
    def pinocchio(h):
        import numpy as np
        import pinocchio as pin
        return pin.JointModelPrismaticUnaligned(np.array(h, dtype=float))


def _quaternion_rotation(ctx, x, y, z, w):
    """The rotation of the unit quaternion (x, y, z, w) (Eigen's toRotationMatrix)."""
    b = ctx.bind
    xx, yy, zz = b(x * x), b(y * y), b(z * z)
    xy, xz, yz, wx, wy, wz = b(x * y), b(x * z), b(y * z), b(w * x), b(w * y), b(w * z)
    return S.bind_matrix(ctx, [[1 - 2 * (yy + zz), 2 * (xy - wz), 2 * (xz + wy)],
                               [2 * (xy + wz), 1 - 2 * (xx + zz), 2 * (yz - wx)],
                               [2 * (xz - wy), 2 * (yz + wx), 1 - 2 * (xx + yy)]])


class Spherical(JointType):
    """A ball joint: q the unit quaternion (x, y, z, w) of parent_R_k / A, qd the angular
    velocity in frame k (Pinocchio's JointModelSpherical). YAML only (URDF has no ball joint)."""
    name = "spherical"
    nq, nv = 4, 3
    lie_group = "so3"

    @staticmethod
    def subspace(h):
        return [[1, 0, 0, 0, 0, 0], [0, 1, 0, 0, 0, 0], [0, 0, 1, 0, 0, 0]]

    @staticmethod
    def transform(ctx, A, l0, h, q):
        return S.Transform(S.bind_matrix(ctx, S.matmul3(A, _quaternion_rotation(ctx, *q))), l0)

    @staticmethod
    def pinocchio(h):
        import pinocchio as pin
        return pin.JointModelSpherical()

    @classmethod
    def neutral(cls):
        return [0.0, 0.0, 0.0, 1.0]


class FreeFlyer(JointType):
    """Six degrees of freedom (Pinocchio's JointModelFreeFlyer): q = [x, y, z, qx, qy, qz, qw], the
    origin of frame k and its orientation (unit quaternion) relative to (A, l0); qd = [v; w], the
    velocity of the origin and the angular velocity, both in frame k."""
    name = "floating"
    nq, nv = 7, 6
    urdf_names = ("floating",)
    lie_group = "se3"

    @staticmethod
    def subspace(h):
        # Pinocchio's [linear; angular] order of qd, symdyn's [angular; linear] spatial vectors
        return [[0, 0, 0, 1, 0, 0], [0, 0, 0, 0, 1, 0], [0, 0, 0, 0, 0, 1],
                [1, 0, 0, 0, 0, 0], [0, 1, 0, 0, 0, 0], [0, 0, 1, 0, 0, 0]]

    @staticmethod
    def transform(ctx, A, l0, h, q):
        return S.Transform(A, l0).act(ctx, (_quaternion_rotation(ctx, *q[3:]), q[:3]))

    @staticmethod
    def pinocchio(h):
        import pinocchio as pin
        return pin.JointModelFreeFlyer()

    @classmethod
    def neutral(cls):
        return [0.0] * 6 + [1.0]


class Planar(JointType):
    """Motion in the xy plane of the joint frame (Pinocchio's JointModelPlanar, which its URDF parser
    uses whatever the axis): q = [x, y, cos t, sin t], qd = [vx, vy, wz] in frame k."""
    name = "planar"
    nq, nv = 4, 3
    urdf_names = ("planar",)
    lie_group = "se2"

    @staticmethod
    def subspace(h):
        return [[0, 0, 0, 1, 0, 0], [0, 0, 0, 0, 1, 0], [0, 0, 1, 0, 0, 0]]

    @staticmethod
    def transform(ctx, A, l0, h, q):
        x, y, c, s = q
        rotation = S.bind_matrix(ctx, S.axis_rotation(ctx, [0, 0, 1], s, c))
        R, l = S.Transform(A, l0).act(ctx, (rotation, [x, y, 0]))
        if not _signed_permutation(A):
            return S.Transform(R, l)
        return S.Transform(R, l, AxisTurn(ctx, A, (2, 1), s, c))

    @staticmethod
    def pinocchio(h):
        import pinocchio as pin
        return pin.JointModelPlanar()

    @classmethod
    def neutral(cls):
        return [0.0, 0.0, 1.0, 0.0]


def unit_axis(h):
    """(index, sign) when h = +-e_index."""
    nonzero = [i for i, x in enumerate(h) if x != 0]
    if len(nonzero) == 1 and abs(h[nonzero[0]]) == 1:
        return nonzero[0], (1 if h[nonzero[0]] > 0 else -1)
    return None


def _signed_permutation(A):
    return all(x == 0 or abs(x) == 1 for row in A for x in row)


class AxisTurn:
    """R M R^T for R = A Rot(+-e_a, q), A a signed permutation (Transform.turn): the rotation by double
    angles (spatial.plane_rotation), A for free, the double angles computed once and shared by every
    matrix the transform turns. Backwards (the inverse transform): R^T M R = Rot^T (A^T M A) Rot.
    `single`: the joint's own cheaper form for one symmetric matrix (once)."""

    def __init__(self, ctx, A, axis, s, c, single=False):
        self.ctx, self.A, self.s, self.c = ctx, A, s, c
        a, self.sign = axis
        self.t, self.i, self.j = a, (a + 1) % 3, (a + 2) % 3
        self._double = None
        if single:
            self.once = self._once

    def double_angles(self):
        """(ss, sc, c2, s2): s s, s c and c, s of 2q, bound once (a product nobody uses is dead code)."""
        if self._double is None:
            ctx, s, c = self.ctx, self.s, self.c
            ss, sc = ctx.bind(s * s), ctx.bind(s * c)
            self._double = (ss, sc, ctx.bind((c - s) * (c + s)), ctx.bind(2 * sc))
        return self._double

    def __call__(self, ctx, M, symmetric, backwards):
        A, c, s = self.A, self.c, self.s
        ss, sc, c2, s2 = self.double_angles()
        sgn = -self.sign if backwards else self.sign
        angle = (c, sgn * s, ss, sgn * sc, c2, sgn * s2)
        if backwards:
            M = S.bind_matrix(ctx, S.matmul3(S.transpose3(A), S.matmul3(M, A)))
            return S.plane_rotation(ctx, M, (self.i, self.j), angle, symmetric)
        M = S.plane_rotation(ctx, M, (self.i, self.j), angle, symmetric)
        return S.bind_matrix(ctx, S.matmul3(A, S.matmul3(M, S.transpose3(A))))

    once = None

    def _once(self, ctx, J, R):
        """R J R^T for one symmetric J, with Rot a plane rotation by c, s in the plane of axes i, j:
            J'ii = Jii - u    J'jj = Jjj + u    J'ij = sc (Jii - Jjj) + (c - s)(c + s) Jij
            u = ss (Jii - Jjj) + 2 sc Jij       (ss = s s, sc = s c)
        and the column of the axis t by c and s: 11 multiplications, 12 by the double angles (which
        pay where several matrices share them: the Riccati and CRBA recursions)."""
        A, t, i, j = self.A, self.t, self.i, self.j
        Rot = S.matmul3(S.transpose3(A), R)        # exact: A is a signed permutation
        c, s = Rot[i][i], Rot[j][i]
        ss, sc, diff = ctx.bind(s * s), ctx.bind(s * c), ctx.bind(J[i][i] - J[j][j])
        u = ctx.bind(ss * diff + 2 * ctx.bind(sc * J[i][j]))
        M = [[None] * 3 for _ in range(3)]
        M[i][i], M[j][j], M[t][t] = ctx.bind(J[i][i] - u), ctx.bind(J[j][j] + u), J[t][t]
        M[i][j] = M[j][i] = ctx.bind(sc * diff + ctx.bind((c - s) * (c + s)) * J[i][j])
        M[i][t] = M[t][i] = ctx.bind(c * J[i][t] - s * J[j][t])
        M[j][t] = M[t][j] = ctx.bind(s * J[i][t] + c * J[j][t])
        return S.matmul3(A, S.matmul3(M, S.transpose3(A)))


#: every joint type by the name a model uses (continuous is a revolute joint without limits)
JOINT_TYPES = {"revolute": Revolute, "continuous": Revolute, "prismatic": Prismatic,
               "spherical": Spherical, "floating": FreeFlyer, "planar": Planar}
#: URDF joint type -> model type ("fixed" joints are merged by the builder)
URDF_TYPES = {u: t.name for t in (Revolute, Prismatic, FreeFlyer, Planar) for u in t.urdf_names}
