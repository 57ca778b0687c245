"""The innovations factorization M = [I + H phi K] D [I + H phi K]* and its inverse
(Jain & Rodriguez 1995, Sec. 4, eqs. 5.1-5.4, Tables 2-3; docs/algorithms.md, Secs. 3 and 9): m = [I + H phi K] D^1/2, l = m^-1 = D^-1/2 [I - H psi K],
so that M = m m* and M^-1 = l* l.

Four O(N) recursions apply them without forming a matrix:
    nu  = m* qd   (total joint rates)        qd = l* nu
    eps = l T     (working moments)          T  = m eps
For a joint with nv > 1, D^1/2 is the upper-triangular S of D = S S^T (riccati.Block):
nu(k) = S^T [qd(k) + G* V+], and so on with S^T, S^-T, S^-1, S in place of D^1/2, D^-1/2.
"""
from ..multibody import spatial as S
from ..multibody.chain import combine, scatter


def _velocity_sweep(ctx, chain, X, ric, x, solve):
    """V+ outward; for each joint, (its rates, its output) = solve(k, x(k), G* V+)."""
    out, V = [None] * chain.n, [None] * chain.n
    for k in chain.outward():
        p = chain.parent[k]
        Vplus = S.motion_outward(ctx, X[k], V[p]) if p >= 0 else [0] * 6
        rates, out[k] = solve(k, chain.rates(x, k), [S.vdot(G, Vplus) for G in ric.columns(k)])
        V[k] = S.bind(ctx, S.vadd(Vplus, combine(rates, chain.H[k])))
    return scatter(chain, out)


def total_rates(ctx, chain, X, ric, qd):
    """nu(k) = sqrt D(k) [qd(k) + G*(k) V+(k)], outward."""
    def solve(k, qdk, GV):
        return qdk, ric.D[k].sqrt_t_mul([a + b for a, b in zip(qdk, GV)])
    return _velocity_sweep(ctx, chain, X, ric, qd, solve)


def joint_rates(ctx, chain, X, ric, nu):
    """qd(k) = nu(k) / sqrt D(k) - G*(k) V+(k), outward."""
    def solve(k, nuk, GV):
        qdk = [ctx.bind(a - b) for a, b in zip(ric.D[k].sqrt_t_solve(nuk), GV)]
        return qdk, qdk
    return _velocity_sweep(ctx, chain, X, ric, nu, solve)


def _inward_z(ctx, chain, X, zplus, k):
    z = [0] * 6
    for c in chain.children[k]:
        z = S.vadd(z, S.force_inward(ctx, X[c], zplus[c]))
    return S.bind(ctx, z)


def _force_sweep(ctx, chain, X, ric, x, solve):
    """z inward; for each joint, (y, its output) = solve(k, x(k), H z); z+ = z + G y."""
    out, zplus = [None] * chain.n, [None] * chain.n
    for k in chain.inward():
        z = _inward_z(ctx, chain, X, zplus, k)
        y, out[k] = solve(k, chain.rates(x, k), [S.vdot(h, z) for h in chain.H[k]])
        zplus[k] = S.bind(ctx, S.vadd(z, combine(y, ric.columns(k))))
    return scatter(chain, out)


def working_moments(ctx, chain, X, ric, T):
    """eps(k) = [T(k) - H(k) z(k)] / sqrt D(k); z+ = z + G y, inward."""
    def solve(k, Tk, Hz):
        y = [ctx.bind(t - h) for t, h in zip(Tk, Hz)]
        return y, ric.D[k].sqrt_solve(y)
    return _force_sweep(ctx, chain, X, ric, T, solve)


def applied_moments(ctx, chain, X, ric, eps):
    """T(k) = sqrt D(k) eps(k) + H(k) z(k); z+ = z + G sqrt D eps, inward."""
    def solve(k, epsk, Hz):
        y = ric.D[k].sqrt_mul(epsk)
        return y, [ctx.bind(a + b) for a, b in zip(y, Hz)]
    return _force_sweep(ctx, chain, X, ric, eps, solve)


def _inv_sqrt_block(ctx, ric, k):
    """S(k)^-1, upper triangular."""
    B = ric.D[k]
    cols = [B.sqrt_solve([1 if i == j else 0 for i in range(B.n)]) for j in range(B.n)]
    return [[cols[j][i] for j in range(B.n)] for i in range(B.n)]


def _put(out, chain, i, k, block):
    for a, r in enumerate(chain.vi[i]):
        for b, c in enumerate(chain.vi[k]):
            out[r][c] = block[a][b]


def innovations_factor(ctx, chain, X, ric):
    """m = [I + H phi K] D^1/2; entry (i, k), i inward of k: H(i) phi(i, k) G(k) sqrt D(k)."""
    m = [[0] * chain.nv for _ in range(chain.nv)]
    for k in chain.outward():
        root = ric.D[k].sqrt_matrix()
        _put(m, chain, k, k, root)
        G = ric.columns(k)
        xs = [S.bind(ctx, combine([root[a][b] for a in range(len(G))], G)) for b in range(len(G))]
        j = k
        for i in chain.ancestors(k):
            xs = [S.force_inward(ctx, X[j], x) for x in xs]
            _put(m, chain, i, k, [[ctx.bind(S.vdot(h, x)) for x in xs] for h in chain.H[i]])
            j = i
    return m


def innovations_factor_inverse(ctx, chain, X, ric):
    """l = D^-1/2 [I - H psi K]; entry (i, k), i inward of k: -H(i) psi(i, k+1) phi(k+1, k) G(k) / sqrt D(i)."""
    ell = [[0] * chain.nv for _ in range(chain.nv)]
    for k in chain.outward():
        _put(ell, chain, k, k, _inv_sqrt_block(ctx, ric, k))
        xs, j = ric.columns(k), k
        for i in chain.ancestors(k):
            xs = [S.force_inward(ctx, X[j], x) for x in xs]
            Hx = [[ctx.bind(S.vdot(h, x)) for x in xs] for h in chain.H[i]]
            cols = [ric.D[i].sqrt_solve([-row[b] for row in Hx]) for b in range(len(xs))]
            _put(ell, chain, i, k, [[cols[b][a] for b in range(len(xs))] for a in range(len(Hx))])
            Gi = ric.columns(i)
            xs = [S.bind(ctx, S.vsub(x, combine([row[b] for row in Hx], Gi))) for b, x in enumerate(xs)]   # tau_bar(i) x
            j = i
    return ell
