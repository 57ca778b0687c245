"""Joint types behind one interface (Featherstone's jcalc): the recursions never branch on them.

A joint k sits at the origin of link frame k. At q = 0 that frame is (A, l0) in the parent
frame; the joint moves it about / along the unit axis h (in frame k).
"""
from . import spatial as S


class Revolute:
    name = "revolute"

    @staticmethod
    def subspace(h):
        """H(k) = [h, 0]"""
        return list(h) + [0, 0, 0]

    @staticmethod
    def transform(ctx, A, l0, h, q):
        """parent_R_k = A Rot(h, q); the origin does not move."""
        s, c = ctx.bind(ctx.sin(q)), ctx.bind(ctx.cos(q))
        rotation = S.bind_matrix(ctx, S.axis_rotation(ctx, h, s, c))
        R = S.bind_matrix(ctx, S.matmul3(A, rotation))
        axis = _unit_axis(h)
        if axis is None or not _signed_permutation(A):
            return S.Transform(R, l0)
        return S.Transform(R, l0, _axis_congruence(ctx, A, axis, s, c))


class Prismatic:
    name = "prismatic"

    @staticmethod
    def subspace(h):
        """H(k) = [0, h]"""
        return [0, 0, 0] + list(h)

    @staticmethod
    def transform(ctx, A, l0, h, q):
        """parent_R_k = A; the origin slides by q along A h."""
        return A, S.bind(ctx, S.add(l0, S.scale(q, S.rot(A, h))))


def _unit_axis(h):
    """(index, sign) when h = +-e_index."""
    nonzero = [i for i, x in enumerate(h) if x != 0]
    if len(nonzero) == 1 and abs(h[nonzero[0]]) == 1:
        return nonzero[0], (1 if h[nonzero[0]] > 0 else -1)
    return None


def _signed_permutation(A):
    return all(x == 0 or abs(x) == 1 for row in A for x in row)


def _axis_congruence(ctx, A, axis, s, c):
    """R M R^T for R = A Rot(+-e_a, q), A a signed permutation: the rotation by double angles
    (spatial.plane_rotation), A for free. Inverse: R^T M R = Rot^T (A^T M A) Rot."""
    a, sign = axis
    i, j = (a + 1) % 3, (a + 2) % 3
    cache = {}

    def double_angles():
        if not cache:
            cache["c2"] = ctx.bind(c * c - s * s)
            cache["s2"] = ctx.bind(2 * s * c)
        return cache["c2"], cache["s2"]

    def rotate(ctx_, M, symmetric, inverse):
        c2, s2 = double_angles()
        sgn = -sign if inverse else sign
        if inverse:
            M = S.bind_matrix(ctx, S.matmul3(S.transpose3(A), S.matmul3(M, A)))
            return S.plane_rotation(ctx, M, i, j, c, sgn * s, c2, sgn * s2, symmetric)
        M = S.plane_rotation(ctx, M, i, j, c, sgn * s, c2, sgn * s2, symmetric)
        return S.bind_matrix(ctx, S.matmul3(A, S.matmul3(M, S.transpose3(A))))
    return rotate


JOINT_TYPES = {"revolute": Revolute, "continuous": Revolute, "prismatic": Prismatic}
