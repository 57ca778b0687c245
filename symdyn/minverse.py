"""Explicit elements of the inverse mass matrix from the inverse of the tree's factor of M
(Jain & Rodriguez, the innovations factorization: M^-1 = [I - H psi K]* D^-1 [I - H psi K];
Rodriguez 1987, Sec. X, eqs. 70-72, reads the same kernels off a^1(k); Saha's M = U D U^T, udu.py).

U = [I + H phi K] (block unit upper triangular in base-to-tip order), so M^-1 = U^-T D^-1 U^-1 with
U^-1 = I - H psi K (psi: phi with tau_bar = I - G H at each joint passed). U^-1 keeps the tree's ancestor sparsity: its
block (a, k), a a strict ancestor of k, is

    R(a, k) = -H(a) x(a, k),    x(a, k) = G(k) carried inward to a: phi at each step, tau_bar at each
                                          joint in between (not at k, not at a),
and, joint by joint,
    M^-1(i, j) = sum over the common ancestors a of i and j (i, j themselves included)
                 R(a, i)* D(a)^-1 R(a, j),      R(a, a) = I.

Joints about a frame axis make R(a, k) an entry of x(a, k) and each term one multiplication; a
free-flyer (H = I) gives R = -x and one 6-vector dot product per entry. Joints that share no
ancestor (different branches of the fixed base) do not couple: exact zeros. No matrix is inverted
except the nv x nv blocks D(a) (riccati.Block). O(N * depth) vectors carried, O(N^2 * depth) scalar
terms for the N(N+1)/2 entries.

Section X's explicit elements (eq. 83: Upsilon+ outward, Upsilon- = tau_bar* Upsilon+ tau_bar + H* H/D,
each column walked toward the tips) are the same sums grouped by the deepest common ancestor; that
form costs the 6x6 Upsilon recursion on top of the same vectors and was 1.3-1.7 times the
multiplications on every robot counted (docs/algorithms.md, Sec. 8; benchmarks/RESULTS.md). The
Upsilon recursion itself remains in operational_space.py.

Joints with nv > 1: D(a), R(a, k) and the diagonal blocks are nv x nv blocks.
"""
from . import spatial as S
from .chain import combine


def mass_matrix_inverse(ctx, chain, X, ric):
    Dinv = [[[ctx.bind(1 / ric.D[a])]] if ric.block[a] is None else ric.block[a].inverse() for a in range(chain.n)]
    R, DR = _inverse_factor(ctx, chain, X, ric, Dinv)
    Minv = [[0] * chain.nv for _ in range(chain.nv)]
    path = [[k] + list(chain.ancestors(k)) for k in range(chain.n)]
    for i in range(chain.n):
        mine = set(path[i])
        for j in range(i, chain.n):
            common = [a for a in path[j] if a in mine]
            if common:
                _put(Minv, chain, i, j, _entry(ctx, chain, i, j, common, R, DR, Dinv))
    return Minv


def _inverse_factor(ctx, chain, X, ric, Dinv):
    """R(a, k) = -H(a) x(a, k) (the blocks of U^-1 above the diagonal) and D(a)^-1 R(a, k), for every
    joint k and each strict ancestor a: {(a, k): nv(a) x nv(k)}."""
    R, DR = {}, {}
    for k in chain.outward():
        xs, j = ric.columns(k), k
        for a in chain.ancestors(k):
            xs = [S.force_inward(ctx, X[j], x) for x in xs]
            r = R[a, k] = [[ctx.bind(-S.vdot(h, x)) for x in xs] for h in chain.H[a]]
            DR[a, k] = _matmul(ctx, Dinv[a], r)
            if chain.parent[a] >= 0:
                # tau_bar(a) x = x - G(a) (H(a) x), H(a) x = -r read back
                xs = [S.bind(ctx, S.vsub(x, combine([-row[c] for row in r], ric.columns(a)))) for c, x in enumerate(xs)]
            j = a
    return R, DR


def _matmul(ctx, A, B):
    return [[ctx.bind(sum((A[r][t] * B[t][c] for t in range(len(B))), 0)) for c in range(len(B[0]))]
            for r in range(len(A))]


def _entry(ctx, chain, i, j, common, R, DR, Dinv):
    """The block M^-1(i, j): the terms R(a, i)* D(a)^-1 R(a, j) of the common ancestors a."""
    block = [[0] * len(chain.H[j]) for _ in chain.H[i]]
    for a in common:
        right = Dinv[a] if a == j else DR[a, j]
        for r, row in enumerate(block):
            for c in range(len(row)):
                row[c] += right[r][c] if a == i else sum((R[a, i][s][r] * right[s][c] for s in range(len(right))), 0)
    return [[ctx.bind(x) for x in row] for row in block]


def _put(Minv, chain, k, i, block):
    for a, r in enumerate(chain.vi[k]):
        for b, c in enumerate(chain.vi[i]):
            Minv[r][c] = Minv[c][r] = block[a][b]
