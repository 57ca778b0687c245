"""Explicit elements of the inverse mass matrix, in three forms of the same sums; each robot's generated
code gets the cheaper (FORMS; docs/algorithms.md, Sec. 8).

1. From the inverse of the tree's factor of M (Jain & Rodriguez, the innovations factorization:
M^-1 = [I - H psi K]* D^-1 [I - H psi K]; Saha's M = U D U^T, udu.py). U = [I + H phi K] is block unit
upper triangular in base-to-tip order and U^-1 = I - H psi K (psi: phi with tau_bar = I - G H at each
joint passed) keeps the tree's ancestor sparsity: its block (a, k), a a strict ancestor of k, is

    R(a, k) = -H(a) x(a, k),    x(a, k) = G(k) carried inward to a: phi at each step, tau_bar at each
                                          joint in between (not at k, not at a),
and, joint by joint,
    M^-1(i, j) = sum over the common ancestors a of i and j (i, j themselves included)
                 R(a, i)* D(a)^-1 R(a, j),      R(a, a) = I.

Joints about a frame axis make R(a, k) an entry of x(a, k) and each term one multiplication; a
free-flyer (H = I) gives R = -x and one 6-vector dot product per entry. Joints that share no
ancestor (different branches of the fixed base) do not couple: exact zeros. No 6x6 recursion:
O(N * depth) vectors carried, one term per common ancestor and entry. The terms grow with the
depth: on long chains form 2 is cheaper (FORMS: the generator counts each).

1'. The same with the rows R(a, .) of the 1-DoF joints a with only 1-DoF joints above them (on a
fixed base) walked outward: v = H(a)* carried down a's subtree (phi* at each step, tau_bar* at each
joint in between), R(a, k) = -G(k)* v (_inverse_factor). Cheaper where the joint rotations are
general (UR5 335 -> 262 mul), dearer where they are right angles (the Panda): a third form, traced
only where it can differ.

2. Section X of Rodriguez 1987 (eq. 83) groups the terms by the deepest common ancestor, at the
price of a 6x6 recursion (Upsilon- of a joint: the sum of its ancestors' terms), 6 mul per entry:

    Upsilon+(base) = 0
    outward:  Upsilon+(k) = phi*(parent, k) Upsilon-(parent) phi(parent, k)
              Minv(k,k)   = 1/D(k) + G*(k) Upsilon+(k) G(k)
              Upsilon-(k) = tau_bar* Upsilon+ tau_bar + H* H / D
    each column walks toward the tips of its subtree:  alpha = Upsilon+(i) G(i) - Minv(i,i) H*(i);
              alpha <- phi* alpha;  Minv(k,i) = G*(k) alpha;  alpha <- tau_bar*(k) alpha
(Rodriguez 1987 prints H H* for H* H and drops one *; docs/algorithms.md, Sec. 8, has the checked form.)
With u = Upsilon+ G, tau_bar* Upsilon+ tau_bar + H* H / D = Upsilon+ - u H - H* u* + Minv(k,k) H* H.

Trees. Unlike M, M^-1 couples joints on different branches: a force on one branch accelerates the
common ancestors and so the other branch. From M^-1 = [I - H psi K]* D^-1 [I - H psi K], the
terms of joints i and k whose deepest common ancestor is a (a joint with several children)
share the factor psi through a, which gives
              Minv(k,i) = x(a,k)* Upsilon-(a) x(a,i),
x(a,i) = phi(a, .) tau_bar ... phi(., i) G(i): G(i) carried inward to a (tau_bar at each joint in
between, not at a), as in innovations_factor_inverse. Joints whose only common ancestor is the fixed
base do not couple (Upsilon- of the base is 0): exact zeros. No matrix is inverted: O(N^2) work.

The column walk outward from i is the same product read the other way: Minv(k,i) = x(i,k)* alpha(i).
Where G(k) is carried inward anyway (below a joint that branches, or below a joint with several DoF,
whose nv(i) columns would each need their own walk: a free-flyer's 6), every entry below i is one
dot product with alpha(i); the walks remain only on chains of 1-DoF joints (the Panda: unchanged).
On top of the fixed base Upsilon+(a) = 0, so Upsilon-(a) x(a,i) = -H* Minv(a,i): already computed.

Joints with nv > 1: D(k), Minv(k,k) are nv x nv blocks (D^-1 from its UDU^T factors), and G, H, u,
alpha and x have nv columns.
"""
from ..multibody import spatial as S
from ..multibody.chain import combine


#: the forms of M^-1: the numeric engine takes the first (all are the same numbers); the generator
#: traces each on its own tape and keeps the one with fewer operations for the robot (Function.forms):
#: their costs depend on the depth (terms per entry), the axes (frame-aligned joints make R(a, k) an
#: entry) and the branching, which no fixed threshold follows (one at 10 terms per entry took the
#: dearer form by 7% on a 35-joint chain of general axes and by 10% on a 60-joint floating tree);
#: "from_factors_outward": form 1' (form_applies: not on a floating base, where no row walks outward)
FORMS = ("from_factors", "section_x", "from_factors_outward")


def mass_matrix_inverse(ctx, chain, X, ric, form=FORMS[0]):
    """M^-1 by one of FORMS."""
    return {"from_factors": from_factors, "section_x": section_x,
            "from_factors_outward": from_factors_outward}[form](ctx, chain, X, ric)


def form_applies(model, form):
    """False where `form` is FORMS[0]'s program on the model: the outward walk without a 1-DoF joint on
    the fixed base that has children (a floating base: no row walks outward)."""
    return form != "from_factors_outward" or any(
        j.parent < 0 and j.kind.nv == 1 and model.children(k) for k, j in enumerate(model.joints))


def from_factors_outward(ctx, chain, X, ric):
    """Form 1 with the rows of the 1-DoF top region walked outward (_inverse_factor)."""
    return from_factors(ctx, chain, X, ric, inverse_factors(ctx, chain, X, ric, outward=True))


def from_factors(ctx, chain, X, ric, factors=None):
    """The sums over common ancestors (module docstring, first part); `factors`: inverse_factors'
    (Dinv, R, DR) when the caller has them."""
    Dinv, R, DR = factors or inverse_factors(ctx, chain, X, ric)
    Minv = [[0] * chain.nv for _ in range(chain.nv)]
    path = chain.supports
    for i in range(chain.n):
        mine = set(path[i])
        for j in range(i, chain.n):
            common = [a for a in path[j] if a in mine]
            if common:
                _put(Minv, chain, i, j, _entry(ctx, chain, i, j, common, R, DR, Dinv))
    return Minv


def inverse_factors(ctx, chain, X, ric, outward=False):
    """(D(a)^-1 per joint, R, DR): M^-1 = R* D^-1 R with R = U^-1 unit upper triangular (_inverse_factor);
    outward: the rows of the 1-DoF top region by the outward walk."""
    Dinv = [ric.D[a].inverse() for a in range(chain.n)]
    return (Dinv,) + _inverse_factor(ctx, chain, X, ric, Dinv, chain.top if outward else frozenset())


def _inverse_factor(ctx, chain, X, ric, Dinv, down=frozenset()):
    """R(a, k) = -H(a) x(a, k) (the blocks of U^-1 above the diagonal) and D(a)^-1 R(a, k), for every
    joint k and each strict ancestor a: {(a, k): nv(a) x nv(k)}; the rows of the joints in `down` by
    the outward walk, the others' by the inward.

    Two walks give the same R(a, k). Inward from k, G(k) carried up (x(a, k); R an entry of it where
    H(a) is a frame axis): what a joint below a multi-DoF joint (a free-flyer) needs anyway, x(top, k)
    carried up to that joint. Outward from a 1-DoF joint a with no multi-DoF joint above it, H(a)*
    walked down its subtree (R(a, k) = -G(k)* v): the first step moves a unit axis, nearly free, where
    the inward walk moves a dense G(k), and tau_bar* costs nothing (G* v is the R just formed); but
    the inward walk needs no tau_bar at the top. Which is cheaper depends on the transforms (general
    rotations favour the outward walk, right-angled ones the inward): two of FORMS."""
    R, DR = {}, {}
    for k in chain.outward():
        xs, j = ric.columns(k), k
        for a in chain.ancestors(k):
            if a in down:
                break
            xs = [S.force_inward(ctx, X[j], x) for x in xs]
            r = R[a, k] = [[ctx.bind(-S.vdot(h, x)) for x in xs] for h in chain.H[a]]
            DR[a, k] = _matmul(ctx, Dinv[a], r)
            if chain.parent[a] >= 0:
                # tau_bar(a) x = x - G(a) (H(a) x), H(a) x = -r read back
                xs = [S.bind(ctx, S.vsub(x, combine([-row[c] for row in r], ric.columns(a)))) for c, x in enumerate(xs)]
            j = a
    for a in sorted(down):
        _row_outward(ctx, chain, X, ric, Dinv, a, R, DR)
    return R, DR


def _row_outward(ctx, chain, X, ric, Dinv, a, R, DR):
    """R(a, k) for every k below a: v = H(a)* carried outward (phi* at each step, tau_bar* at each joint
    in between), R(a, k) = -G(k)* v."""
    stack = [(c, chain.H[a][0]) for c in reversed(chain.children[a])]
    while stack:
        k, v = stack.pop()
        v = S.motion_outward(ctx, X[k], v)
        r = [ctx.bind(-S.vdot(g, v)) for g in ric.columns(k)]
        R[a, k] = [r]
        DR[a, k] = _matmul(ctx, Dinv[a], [r])
        if chain.children[k]:
            # tau_bar*(k) v = v - H*(k) (G*(k) v) = v + H*(k) r
            v = S.bind(ctx, S.vadd(v, combine(r, chain.H[k])))
            stack.extend((c, v) for c in reversed(chain.children[k]))


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


def section_x(ctx, chain, X, ric):
    """Section X's form (module docstring, second part): cheaper on long chains."""
    n, nv, vi = chain.n, chain.nv, chain.vi
    Minv = [[0] * nv for _ in range(nv)]
    H = chain.H
    G = [ric.columns(k) for k in range(n)]
    Uplus, Uminus, u, diag = [None] * n, [None] * n, [None] * n, [None] * n
    for k in chain.outward():
        p = chain.parent[k]
        Uplus[k] = S.congruence_outward(ctx, X[k], Uminus[p]) if p >= 0 else S.zero6()
        u[k] = [S.bind(ctx, S.matvec(Uplus[k], g)) for g in G[k]]
        Dinv, m = ric.D[k].inverse(), len(H[k])
        d = diag[k] = [[None] * m for _ in range(m)]
        for a in range(m):
            for b in range(a, m):
                d[a][b] = d[b][a] = ctx.bind(Dinv[a][b] + S.vdot(G[k][a], u[k][b]))
        for a, i in enumerate(vi[k]):
            for b, j in enumerate(vi[k]):
                Minv[i][j] = d[a][b]
        U, uk, h, m = Uplus[k], u[k], H[k], len(H[k])
        Uminus[k] = S.symmetric(ctx, lambda i, j: U[i][j] + sum(
            (-uk[a][i] * h[a][j] - h[a][i] * uk[a][j] + sum((d[a][b] * h[a][i] * h[b][j] for b in range(m)), 0)
             for a in range(m)), 0)) if m > 1 else \
            S.symmetric(ctx, lambda i, j: U[i][j] - uk[0][i] * h[0][j] - h[0][i] * uk[0][j] + d[0][0] * h[0][i] * h[0][j])
    x = _carried_inward(ctx, chain, X, ric, G)
    for i in chain.outward():
        m = len(H[i])
        alpha = [S.bind(ctx, S.vsub(u[i][b], combine([diag[i][a][b] for a in range(m)], H[i]))) for b in range(m)]
        if any((i, k) in x for k in chain.children[i]):
            _column_from_below(ctx, chain, x, Minv, i, alpha)
        else:
            _column_below(ctx, chain, X, G, Minv, i, alpha)
    _across_branches(ctx, chain, x, Minv, Uminus)
    return Minv


def _put(Minv, chain, k, i, block):
    for a, r in enumerate(chain.vi[k]):
        for b, c in enumerate(chain.vi[i]):
            Minv[r][c] = Minv[c][r] = block[a][b]


def _column_below(ctx, chain, X, G, Minv, i, alpha):
    """Minv(k, i) for every k in the subtree of i: alpha (nv(i) columns) walks outward, depth first."""
    stack = [(c, alpha) for c in reversed(chain.children[i])]
    while stack:
        k, alpha = stack.pop()
        alpha = [S.motion_outward(ctx, X[k], x) for x in alpha]
        block = [[ctx.bind(S.vdot(g, x)) for x in alpha] for g in G[k]]
        _put(Minv, chain, k, i, block)
        alpha = [S.bind(ctx, S.vsub(x, combine([block[a][b] for a in range(len(G[k]))], chain.H[k])))
                 for b, x in enumerate(alpha)]
        stack.extend((c, alpha) for c in reversed(chain.children[k]))


def _carried_inward(ctx, chain, X, ric, G):
    """x(a, k) = G(k) carried inward to a (tau_bar at each joint in between, not at a), for every
    ancestor a of k up to k's topmost ancestor that branches (the cross-branch terms need x there) or
    has several DoF (its columns are cheaper from below): {(a, k): nv(k) columns}. Empty for a chain
    of 1-DoF joints."""
    targets = {a for a in range(chain.n) if len(chain.children[a]) > 1 or len(chain.H[a]) > 1}
    x = {}
    for k in chain.outward():
        above = [a for a in chain.ancestors(k) if a in targets]
        vs, j = G[k], k
        for a in chain.ancestors(k):
            if not above:
                break
            vs = [S.force_inward(ctx, X[j], v) for v in vs]
            x[a, k] = vs
            if a == above[0]:
                above.pop(0)
            if above:
                vs = [ric.tau_bar(a, v) for v in vs]
            j = a
    return x


def _column_from_below(ctx, chain, x, Minv, i, alpha):
    """Minv(k, i) = x(i, k)* alpha(i) for every k in the subtree of i, from the columns the
    cross-branch terms carry inward anyway (6 mul per entry instead of a walk per column of i)."""
    for k in _subtree(chain, i)[1:]:
        _put(Minv, chain, k, i, [[ctx.bind(S.vdot(xk, a)) for a in alpha] for xk in x[i, k]])


def _across_branches(ctx, chain, x, Minv, Uminus):
    """Minv(k, i) = x(a,k)* Upsilon-(a) x(a,i) for k and i on different branches below joint a."""
    for a in range(chain.n):
        if len(chain.children[a]) < 2:
            continue
        branches = [_subtree(chain, c) for c in chain.children[a]]
        for b, nodes in enumerate(branches):
            others = [k for later in branches[b + 1:] for k in later]
            for i in nodes:
                ys = _upsilon_x(ctx, chain, x, Minv, Uminus, a, i)
                for k in others:
                    _put(Minv, chain, k, i, [[ctx.bind(S.vdot(xk, y)) for y in ys] for xk in x[a, k]])


def _upsilon_x(ctx, chain, x, Minv, Uminus, a, i):
    """Upsilon-(a) x(a, i), one column per DoF of i. Below the fixed base (Upsilon+(a) = 0, as for a
    floating base) Upsilon-(a) = H* Minv(a,a) H and alpha(a) = -H* Minv(a,a), so the product is
    -H* Minv(a, i), already computed: no multiplication."""
    if chain.parent[a] >= 0:
        return [S.bind(ctx, S.matvec(Uminus[a], v)) for v in x[a, i]]
    return [S.bind(ctx, S.vscale(-1, combine([Minv[r][c] for r in chain.vi[a]], chain.H[a]))) for c in chain.vi[i]]


def _subtree(chain, k):
    """k and its descendants, depth first."""
    return chain.subtree[k]
