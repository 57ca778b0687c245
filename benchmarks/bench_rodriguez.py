"""Rodriguez 1987, like for like: Table II (forward dynamics of a planar chain, operations per link) and
Table III / Fig. 4 (the O(N) filter/smoother against forming M and solving with Cholesky), with the
crossover N, in operation counts of generated code and in measured time of the generated C.

    python benchmarks/bench_rodriguez.py [--no-timing] [--sizes 2 3 4 ...]

Table II's setting is a planar chain at zero velocity without gravity (the paper sets the bias terms
to zero): the traced function is the Kalman filter / Bryson-Frazier smoother with qd = 0 and no base
acceleration, tau -> qdd. Its rival forms M(q) by composite bodies (Rodriguez eq. 32, what
`mass_matrix` generates), factors M = L L^T (Cholesky, n square roots, divisions as one reciprocal
per column) and solves two triangular systems, all traced on the same tape so that both columns are
counts of straight-line generated code, after the same common-subexpression elimination and folding.
The "full" columns add velocities and gravity: forward_dynamics against M and the bias forces
(`nonlinear_effects`) with the same Cholesky solve.
"""
import argparse
import dataclasses
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from symdyn.recursions import crba, kalman_smoother, rnea
from symdyn.codegen.c import render_c
from symdyn.codegen.generator import trace
from symdyn.functions import BY_NAME
from symdyn.recursions.riccati import Riccati
from symdyn.multibody.synthetic import planar_chain, spatial_chain


def cholesky_solve(ctx, M, b):
    """x = M^-1 b by M = L L^T and two triangular solves, straight-line."""
    n = len(b)
    L = [[0] * n for _ in range(n)]
    inv = [None] * n
    for j in range(n):
        s = M[j][j]
        for k in range(j):
            s = s - L[j][k] * L[j][k]
        L[j][j] = ctx.bind(ctx.sqrt(ctx.bind(s)))
        inv[j] = ctx.bind(1 / L[j][j])
        for i in range(j + 1, n):
            s = M[i][j]
            for k in range(j):
                s = s - L[i][k] * L[j][k]
            L[i][j] = ctx.bind(ctx.bind(s) * inv[j])
    y = [None] * n
    for i in range(n):                         # L y = b
        s = b[i]
        for k in range(i):
            s = s - L[i][k] * y[k]
        y[i] = ctx.bind(ctx.bind(s) * inv[i])
    x = [None] * n
    for i in reversed(range(n)):               # L^T x = y
        s = y[i]
        for k in range(i + 1, n):
            s = s - L[k][i] * x[k]
        x[i] = ctx.bind(ctx.bind(s) * inv[i])
    return x


def _zeros(chain):
    return [0] * chain.n


# the four traced functions; each keeps the name "forward_dynamics" (its output is qdd)
FD = BY_NAME["forward_dynamics"]
VARIANTS = {
    "filter_static": dataclasses.replace(FD, args=("q", "tau"), trace=lambda ctx, chain, X, tau: kalman_smoother.forward_dynamics(
        ctx, chain, X, Riccati(ctx, chain, X), _zeros(chain), tau, gravity=False)),
    "cholesky_static": dataclasses.replace(FD, args=("q", "tau"), trace=lambda ctx, chain, X, tau: cholesky_solve(
        ctx, crba.mass_matrix(ctx, chain, X), tau)),
    "filter_full": FD,
    "cholesky_full": dataclasses.replace(FD, trace=lambda ctx, chain, X, qd, tau: cholesky_solve(
        ctx, crba.mass_matrix(ctx, chain, X),
        [ctx.bind(t - b) for t, b in zip(tau, rnea.inverse_dynamics(ctx, chain, X, qd, _zeros(chain)))])),
}


def counts(model):
    return {name: trace(model, fn) for name, fn in VARIANTS.items()}


def flops(p):
    return p.ops["mul"] + p.ops["add"] + p.ops["div"] + p.ops["sqrt"]


def table2():
    print("### Table II like for like: planar chain, zero velocity, no gravity, forward dynamics per link\n")
    a, b = trace(planar_chain(20), VARIANTS["filter_static"]), trace(planar_chain(30), VARIANTS["filter_static"])
    per = {k: (b.ops[k] - a.ops[k]) / 10 for k in a.ops}
    full_a, full_b = trace(planar_chain(20), FD), trace(planar_chain(30), FD)
    full = {k: (full_b.ops[k] - full_a.ops[k]) / 10 for k in full_a.ops}
    print("| per link | mul | add | div | sqrt | sin+cos |\n|---|---|---|---|---|---|")
    print(f"| symdyn, zero velocity, no gravity (N = 20 to 30) | {per['mul']:g} | {per['add']:g} | {per['div']:g} | "
          f"{per['sqrt']:g} | {per['trig']:g} |")
    print("| Rodriguez 1987, Table II (bias terms set to zero) | 26 | 28 | 3 | 0 | (not counted) |")
    print(f"| symdyn, with velocities and gravity (N = 20 to 30) | {full['mul']:g} | {full['add']:g} | {full['div']:g} | "
          f"{full['sqrt']:g} | {full['trig']:g} |\n")


def _module(model, name, fn, folder):
    """A C module holding one variant as `<name>_forward_dynamics`, loaded with symdyn.load_c."""
    from symdyn import load_c
    header, source = render_c(model, [trace(model, fn)], name, "numeric")
    (folder / f"{name}.h").write_text(header)
    (folder / f"{name}.c").write_text(source)
    return load_c(folder / f"{name}.c")


def time_per_state(calls, reps=41):
    """{name: ns per state}: the fastest of reps batched calls (the loop over states runs in C), the
    variants interleaved so that a busy machine slows them alike; the minimum filters out the
    interruptions of a shared machine."""
    best = {name: float("inf") for name in calls}
    for _ in range(reps):
        for name, (f, args) in calls.items():
            t = time.perf_counter()
            f(*args)
            best[name] = min(best[name], time.perf_counter() - t)
    return {name: best[name] / len(args[0]) * 1e9 for name, (_, args) in calls.items()}


def fig4(make, sizes, timing, states=2000):
    print(f"### Table III / Fig. 4: {make.__name__}, O(N) filter/smoother against M + Cholesky solve\n")
    print("Operation counts (mul + add + div + sqrt) of the generated code; ns per state of the generated C "
          f"(load_c, its default flags; the fastest of 41 interleaved calls on a batch of {states} states).\n")
    head = "| N | filter, static | M + Cholesky, static | paper: 27N | paper: N^3/3 + N^2 + 2N(N+5) | filter, full | M + nle + Cholesky, full |"
    line = "|---|---|---|---|---|---|---|"
    if timing:
        head += " filter ns, static | Cholesky ns, static | filter ns, full | Cholesky ns, full |"
        line += "---|---|---|---|"
    print(head)
    print(line)
    rng = np.random.default_rng(0)
    wins = {"static": [], "full": [], "static ns": [], "full ns": []}     # (N, does the filter win)
    folder = Path(tempfile.mkdtemp(prefix="symdyn-fig4-"))
    for n in sizes:
        model = make(n)
        p = counts(model)
        ops = {k: flops(v) for k, v in p.items()}
        row = (f"| {n} | {ops['filter_static']} | {ops['cholesky_static']} | {27 * n} | {n ** 3 / 3 + n * n + 2 * n * (n + 5):.0f} | "
               f"{ops['filter_full']} | {ops['cholesky_full']} |")
        for kind in ("static", "full"):
            wins[kind].append((n, ops[f"filter_{kind}"] < ops[f"cholesky_{kind}"]))
        if timing:
            q, qd, tau = rng.uniform(-np.pi, np.pi, (states, n)), rng.normal(size=(states, n)), rng.normal(size=(states, n))
            calls = {}
            for name in VARIANTS:
                mod = _module(model, f"{make.__name__}{n}_{name}", VARIANTS[name], folder)
                calls[name] = (mod.forward_dynamics, (q, tau) if name.endswith("static") else (q, qd, tau))
            for kind in ("static", "full"):         # both methods give the same accelerations
                (f, args), (g, _) = calls[f"filter_{kind}"], calls[f"cholesky_{kind}"]
                ref = f(*args)
                assert np.abs(g(*args) - ref).max() < 1e-8 * max(1.0, np.abs(ref).max()), (n, kind)
            ns = time_per_state(calls)
            row += "".join(f" {ns[k]:.0f} |" for k in ("filter_static", "cholesky_static", "filter_full", "cholesky_full"))
            for kind in ("static", "full"):
                wins[f"{kind} ns"].append((n, ns[f"filter_{kind}"] < ns[f"cholesky_{kind}"]))
        print(row)
    crossover = {k: _crossover(v) for k, v in wins.items()}
    print(f"\nCrossover (the smallest N from which on the filter wins for every larger N of the list): "
          f"operations static N = {crossover['static']}, full N = {crossover['full']}"
          + (f"; time static N = {crossover['static ns']}, full N = {crossover['full ns']}" if timing else "")
          + ". Paper (Fig. 4): N >= 5.\n")


def _crossover(wins):
    """The first N of the final run of wins, or None."""
    first = None
    for n, win in wins:
        first = (first or n) if win else None
    return first


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--no-timing", action="store_true", help="operation counts only (no C compiled)")
    ap.add_argument("--sizes", type=int, nargs="+", default=[2, 3, 4, 5, 6, 7, 8, 10, 12, 15, 20, 25, 30])
    args = ap.parse_args(argv)
    print(f"Command: `python benchmarks/bench_rodriguez.py{' --no-timing' if args.no_timing else ''}`; "
          f"C compiled by symdyn.load_c ({os.environ.get('CC', 'cc')}, its default flags).\n")
    table2()
    for make in (planar_chain, spatial_chain):
        fig4(make, args.sizes, not args.no_timing)


if __name__ == "__main__":
    sys.exit(main())
