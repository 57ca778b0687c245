"""The Coriolis matrix C(q, qd) of M qdd + C qd + g = T in Christoffel form,
C(i,j) = sum_k Gamma_ijk qd(k), so that M_dot - 2C is skew-symmetric (Zefran & Bullo, Lagrangian dynamics, 2005,
eqs. 13-14 and property ii; docs/algorithms.md, Sec. 14).

Following the factorization C = sum_k J_k* [M(k) J_dot_k + B_k J_k] with the body term
    B(V) = 1/2 [ V x* M - M V x + (M V) xbar* ],   (f xbar*) u := u x* f,
which gives the Christoffel-consistent C. In link coordinates the columns of J_k are the maps
H*(j) of the joints j inward of k, and their rates are S_dot(j) = V(j) x H*(j). Summing over
the subtree of the outer joint leaves composite quantities Ic (CRBA's R) and Bc, so each element is
    C(i, j) = H(i) phi(i, j) [Ic(j) S_dot(j) + Bc(j) H*(j)]                    i inward of j
    C(j, i) = [phi(i, j) Ic(j) H*(j)] . S_dot(i) + [phi(i, j) Bc*(j) H*(j)] . H*(i)
O(N^2), no Christoffel symbol is formed. On a tree, M(i, j) vanishes for every q when i and j are
on different branches (neither an ancestor of the other), and so do the partial derivatives that
make C(i, j): those entries are exact zeros.
"""
from ..multibody import spatial as S
from .crba import column_inward, composite_inertias
from .kinematics import velocities
from .rnea_derivatives import Gyroscopic


def body_coriolis(ctx, V, J, h, m):
    """B(V) = 1/2 [V x* M - M V x + (M V) xbar*] for M = [[J, h~], [-h~, m 1]] and V = [w; v].

    Worked out by blocks, with f = m v + w x h and n = J w + h x v (the momentum M V):
        B = [[ sym(w~ J) - sym(h v^T) + (v.h) 1 - n~/2 , 0 ],
             [ -f~                                     , 0 ]]
    where sym(A) = (A + A^T)/2; its right column of blocks vanishes (and stays zero through
    every congruence phi B phi*), so B costs ~60 multiplications, not a general 6x6 product."""
    w, v = V[:3], V[3:]
    n = S.bind(ctx, S.add(S.rot(J, w), S.cross(h, v)))
    f = S.bind(ctx, S.add(S.scale(m, v), S.cross(w, h)))
    wJ = S.bind_matrix(ctx, S.matmul3(S.skew(w), J))
    vh = ctx.bind(S.dot(v, h))
    top = [[ctx.bind(0.5 * (wJ[i][j] + wJ[j][i] - h[i] * v[j] - v[i] * h[j]) + (vh if i == j else 0)
                     - 0.5 * S.skew(n)[i][j]) for j in range(3)] for i in range(3)]
    bottom = [[-x for x in row] for row in S.skew(f)]
    return [top[i] + [0, 0, 0] for i in range(3)] + [bottom[i] + [0, 0, 0] for i in range(3)]


def coriolis_matrix(ctx, chain, X, qd):
    n, H = chain.n, chain.H
    _, V = velocities(ctx, chain, X, qd)
    turned = [None] * n
    Ic = composite_inertias(ctx, chain, X, turned)      # by ten parameters, as in crba
    # Bc = 1/2 the gyroscopic composite: a symmetric 3x3 and the subtree's momentum, not a 6x6 congruence
    gyro = Gyroscopic(ctx, chain, X, V, scale=0.5)
    Sdot = [[S.bind(ctx, S.cross_motion(V[k], h)) for h in H[k]] for k in range(n)]
    C = [[0] * chain.nv for _ in range(chain.nv)]
    vi = chain.vi
    for j in chain.outward():
        for b, hj in enumerate(H[j]):
            c = vi[j][b]
            F = S.bind(ctx, S.vadd(S.matvec(Ic[j], Sdot[j][b]), gyro.bc(j, hj)))
            f1 = S.bind(ctx, S.matvec(Ic[j], hj))
            f2 = S.bind(ctx, gyro.bc_t(j, hj))
            for a, h in enumerate(H[j]):
                C[vi[j][a]][c] = ctx.bind(S.vdot(h, F))
            k = j
            for i in chain.ancestors(j):
                F, f2 = (S.force_inward(ctx, X[k], f) for f in (F, f2))
                f1 = column_inward(ctx, chain, X, turned, k, [f1])[0] if k == j else S.force_inward(ctx, X[k], f1)
                for a, h in enumerate(H[i]):
                    C[vi[i][a]][c] = ctx.bind(S.vdot(h, F))
                    C[c][vi[i][a]] = ctx.bind(S.vdot(f1, Sdot[i][a]) + S.vdot(f2, h))
                k = i
    _free_rotors(ctx, chain, qd, C)
    return C


def _free_rotors(ctx, chain, qd, C):
    """A free joint's armature: Ia w x v (symdyn.recursions.friction.translating_rotors) as Ia w~ v, so that
    M_dot - 2C stays skew-symmetric (M's Ia on the diagonal is constant)."""
    from .friction import free_rotors
    for Ia, lin, ang in free_rotors(chain):
        for a, i in enumerate(lin):
            b, c = (a + 1) % 3, (a + 2) % 3
            C[i][lin[c]] = ctx.bind(C[i][lin[c]] + Ia * qd[ang[b]])
            C[i][lin[b]] = ctx.bind(C[i][lin[b]] - Ia * qd[ang[c]])
