"""Trajectory optimization by iLQR with the generated derivatives of forward dynamics.

The robot's functions forward_dynamics and forward_dynamics_derivatives (dqdd/dq, dqdd/dv, M^-1) and
gravity (the initial guess holds the start) are generated from the robot file into a temporary folder
(numpy only) and are all the optimizer uses.
The discrete dynamics is one semi-implicit Euler step, x = (q, v):
    v+ = v + dt FD(q, v, u),    q+ = q + dt v+
whose Jacobians follow from the generated ones in closed form:
    dv+/dq = dt A_q,  dv+/dv = I + dt A_v,  dv+/du = dt M^-1,   dq+/d(q, v, u) = [I, 0, 0] + dt dv+/d(q, v, u)
iLQR (Li & Todorov 2004; Tassa et al. 2012's regularization and line search) minimizes
    sum_k 1/2 u_k' R u_k + 1/2 (x_N - x_goal)' Qf (x_N - x_goal).
The same optimization is run with the Jacobians from central finite differences of the step
(2 (2n + n) evaluations of forward_dynamics per linearization, each batched over the horizon), to
compare.

Default: the swing-up of the double pendulum (robots/planar2.yaml, both joints actuated) from
hanging down to upright in 1.5 s. `--robot robots/panda.urdf --goal 0.5,-0.3,0,-2,0,1.8,0.8`: a
reaching motion of the Panda from its neutral-ish start.

    python examples/ilqr.py [--robot robots/planar2.yaml] [--horizon 1.5] [--dt 0.01] [--no-plot]
"""
import argparse
import time

import numpy as np

from _common import fail, figure, generate_module, plot_parser, resolve, save

FUNCTIONS = ("forward_dynamics", "gravity", "forward_dynamics_derivatives")


def generated_module(robot_file):
    """forward_dynamics, gravity and forward_dynamics_derivatives of a robot file, generated and imported
    (Python)."""
    module, _ = generate_module(robot_file, functions=FUNCTIONS)
    if module.NQ != module.NV:
        fail(f"{robot_file}: q has {module.NQ} entries and v {module.NV}: this example handles fixed-base robots "
             "whose configuration is a vector")
    return module


class Problem:
    """Discrete dynamics (semi-implicit Euler), its Jacobians, and the cost."""

    def __init__(self, robot, dt, x_goal, R, Qf):
        self.robot, self.n, self.dt = robot, robot.NV, dt
        self.x_goal, self.R, self.Qf = x_goal, R, Qf

    def step(self, x, u):
        n, dt = self.n, self.dt
        q, v = x[..., :n], x[..., n:]
        v1 = v + dt * self.robot.forward_dynamics(q, v, u)
        return np.concatenate([q + dt * v1, v1], axis=-1)

    def jacobians(self, xs, us):
        """(f_x (H, 2n, 2n), f_u (H, 2n, n)) along the trajectory, from the generated derivatives."""
        n, dt = self.n, self.dt
        Aq, Av, Minv = self.robot.forward_dynamics_derivatives(xs[:, :n], xs[:, n:], us)
        eye = np.broadcast_to(np.eye(n), Aq.shape)
        dv = np.concatenate([dt * Aq, eye + dt * Av], axis=-1)                   # dv+/dx
        dq = np.concatenate([eye, 0 * eye], axis=-1) + dt * dv                    # dq+/dx
        fu = np.concatenate([dt * dt * Minv, dt * Minv], axis=-2)
        return np.concatenate([dq, dv], axis=-2), fu

    def jacobians_fd(self, xs, us, eps=1e-6):
        """The same by central differences of the step, batched over the horizon."""
        nx, cols = xs.shape[-1], []
        for d in eps * np.eye(nx + us.shape[-1]):
            dx, du = d[:nx], d[nx:]
            cols.append((self.step(xs + dx, us + du) - self.step(xs - dx, us - du)) / (2 * eps))
        J = np.stack(cols, axis=-1)
        return J[..., :nx], J[..., nx:]

    def rollout(self, x0, us):
        xs = np.empty((len(us) + 1, 2 * self.n))
        xs[0] = x0
        for k, u in enumerate(us):
            xs[k + 1] = self.step(xs[k], u)
        return xs

    def cost(self, xs, us):
        e = xs[-1] - self.x_goal
        return 0.5 * float(np.einsum("ki,ij,kj->", us, self.R, us) + e @ self.Qf @ e)


def ilqr(problem, x0, us, finite_differences=False, max_iterations=200, tol=1e-7):
    """Iterate linearize / backward pass / line search until the relative cost decrease is below tol.
    Returns a dict: states, controls, cost per iteration, iterations, time spent linearizing, total time."""
    start = time.process_time()
    linearize = problem.jacobians_fd if finite_differences else problem.jacobians
    xs = problem.rollout(x0, us)
    costs, mu, t_lin = [problem.cost(xs, us)], 1e-6, 0.0
    R, Qf, m = problem.R, problem.Qf, us.shape[1]
    converged = False
    for iteration in range(1, max_iterations + 1):
        t0 = time.process_time()
        fx, fu = linearize(xs[:-1], us)
        t_lin += time.process_time() - t0
        while True:                                  # backward pass, regularized until every Quu > 0
            Vx, Vxx = Qf @ (xs[-1] - problem.x_goal), Qf.copy()
            ks, Ks, ok = np.empty_like(us), np.empty((len(us), m, xs.shape[1])), True
            for k in reversed(range(len(us))):
                A, B = fx[k], fu[k]
                Qx, Qu = A.T @ Vx, R @ us[k] + B.T @ Vx
                Qxx, Quu, Qux = A.T @ Vxx @ A, R + B.T @ Vxx @ B, B.T @ Vxx @ A
                Quu_reg = Quu + mu * B.T @ B + mu * np.eye(m)
                try:
                    L = np.linalg.cholesky(Quu_reg)
                except np.linalg.LinAlgError:
                    ok = False
                    break
                solve = lambda b: np.linalg.solve(L.T, np.linalg.solve(L, b))
                ks[k], Ks[k] = -solve(Qu), -solve(Qux)
                Vx = Qx + Ks[k].T @ Quu @ ks[k] + Ks[k].T @ Qu + Qux.T @ ks[k]
                Vxx = Qxx + Ks[k].T @ Quu @ Ks[k] + Ks[k].T @ Qux + Qux.T @ Ks[k]
                Vxx = 0.5 * (Vxx + Vxx.T)
            if ok:
                break
            mu = max(mu * 10, 1e-6)
        accepted = False
        for alpha in 0.5 ** np.arange(10):          # line search on the real (nonlinear) dynamics
            x_new, u_new = np.empty_like(xs), np.empty_like(us)
            x_new[0] = x0
            for k in range(len(us)):
                u_new[k] = us[k] + alpha * ks[k] + Ks[k] @ (x_new[k] - xs[k])
                x_new[k + 1] = problem.step(x_new[k], u_new[k])
            c = problem.cost(x_new, u_new)
            if c < costs[-1]:
                accepted = True
                break
        if not accepted:
            mu = max(mu * 10, 1e-6)
            if mu > 1e10:
                break
            continue
        mu = max(mu / 10, 1e-9)
        decrease = (costs[-1] - c) / max(costs[-1], 1e-300)
        xs, us = x_new, u_new
        costs.append(c)
        if decrease < tol:
            converged = True
            break
    return {"states": xs, "controls": us, "costs": np.array(costs), "iterations": iteration, "converged": converged,
            "linearize_time": t_lin, "time": time.process_time() - start,
            "final_error": float(np.abs(xs[-1] - problem.x_goal).max())}


def setup(robot, horizon=1.5, dt=0.01, start=None, goal=None, r=1e-3, qf=1e4):
    """The problem and the initial state and controls: the double pendulum's swing-up by default."""
    n = robot.NV
    start = np.array([-np.pi / 2] + [0.0] * (n - 1)) if start is None else np.asarray(start, dtype=float)
    goal = np.array([np.pi / 2] + [0.0] * (n - 1)) if goal is None else np.asarray(goal, dtype=float)
    if start.shape != (n,) or goal.shape != (n,):
        fail(f"--start and --goal need {n} joint angles")
    steps = int(round(horizon / dt))
    Qf = np.diag([qf] * n + [qf / 10] * n)
    problem = Problem(robot, dt, np.concatenate([goal, np.zeros(n)]), r * np.eye(n), Qf)
    # initial guess: hold the start against gravity
    return problem, np.concatenate([start, np.zeros(n)]), np.tile(robot.gravity(start), (steps, 1))


def run(robot, horizon=1.5, dt=0.01, start=None, goal=None):
    """iLQR with the generated derivatives, then with finite differences, from the same start."""
    problem, x0, us = setup(robot, horizon, dt, start, goal)
    exact = ilqr(problem, x0, us)
    fd = ilqr(problem, x0, us, finite_differences=True)
    A, B = problem.jacobians(exact["states"][:-1], exact["controls"])
    Afd, Bfd = problem.jacobians_fd(exact["states"][:-1], exact["controls"])
    return {"exact": exact, "fd": fd, "dt": dt,
            "jacobian_difference": float(max(np.abs(A - Afd).max(), np.abs(B - Bfd).max()))}


def plot(result, out, title):
    fig, (a, b) = figure(2, 1, figsize=(7, 6))
    r = result["exact"]
    t = result["dt"] * np.arange(len(r["states"]))
    n = r["controls"].shape[1]
    a.plot(t, r["states"][:, :n])
    a.set_ylabel("q [rad]")
    a.set_xlabel("time [s]")
    a.set_title(title)
    b.semilogy(r["costs"], "o-", label="generated derivatives")
    b.semilogy(result["fd"]["costs"], "x--", label="finite differences")
    b.set_xlabel("iteration")
    b.set_ylabel("cost")
    b.legend()
    save(fig, out)


def _vector(text):
    try:
        return [float(x) for x in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers, got {text!r}") from None


def main(argv=None):
    p = plot_parser(__doc__.splitlines()[0], out="ilqr.png")
    p.add_argument("--robot", default="robots/planar2.yaml", help="robot file (default robots/planar2.yaml)")
    p.add_argument("--horizon", type=float, default=1.5, help="s (default 1.5)")
    p.add_argument("--dt", type=float, default=0.01, help="step, s (default 0.01)")
    p.add_argument("--start", type=_vector, help="initial joint angles (default: -pi/2, 0, ...: hanging down)")
    p.add_argument("--goal", type=_vector, help="goal joint angles (default: pi/2, 0, ...: upright)")
    args = p.parse_args(argv)
    if not resolve(args.robot).is_file():
        fail(f"{args.robot}: not found")
    robot = generated_module(args.robot)
    r = run(robot, args.horizon, args.dt, args.start, args.goal)
    print(f"iLQR, {args.robot} ({robot.NV} DOF), {len(r['exact']['controls'])} steps of {args.dt:g} s")
    for key, label in (("exact", "generated derivatives"), ("fd", "finite differences   ")):
        s = r[key]
        print(f"{label}: {s['iterations']} iterations ({'converged' if s['converged'] else 'NOT converged'}), "
              f"cost {s['costs'][0]:.4g} -> {s['costs'][-1]:.6g}, final state error {s['final_error']:.2e}, "
              f"linearization {s['linearize_time']:.3f} s of {s['time']:.3f} s CPU")
    print(f"largest difference of the two Jacobians along the optimum: {r['jacobian_difference']:.2e}")
    if not args.no_plot:
        plot(r, args.out, f"iLQR, {robot.NV} DOF, dt = {args.dt:g} s")
    return r


if __name__ == "__main__":
    main()
