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
        return S.bind_matrix(ctx, S.matmul3(A, rotation)), l0


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


JOINT_TYPES = {"revolute": Revolute, "continuous": Revolute, "prismatic": Prismatic}
