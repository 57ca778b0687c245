"""Trajectory optimization by iLQR with the generated derivatives of forward dynamics.

The robot's functions forward_dynamics and forward_dynamics_derivatives (dqdd/dq, dqdd/dv, M^-1) and
gravity (the initial guess holds the start) are generated from the robot file into a temporary folder
(numpy only) and are all the optimizer uses.
The discrete dynamics is one semi-implicit Euler step, x = (q, v):
    v+ = v + dt FD(q, v, u),    q+ = q + dt v+
whose Jacobians follow from the generated ones in closed form:
    dv+/dq = dt A_q,  dv+/dv = I + dt A_v,  dv+/du = dt M^-1,   dq+/d(q, v, u) = [I, 0, 0] + dt dv+/d(q, v, u)
iLQR (Li & Todorov 2004; Tassa et al. 2012's regularization and line search) minimizes
    sum_k 1/2 u_k' R u_k + 1/2 (x_N - x_goal)' Qf (x_N - x_goal),    R = r diag(M(q_start))^-1
(effort per unit of inertia, so that light and heavy joints are equally cheap to move). Progress is printed
every 10 iterations; the exit status is 1 when either run does not converge.
The same optimization is run with the Jacobians from central finite differences of the step
(2 (2n + n) evaluations of forward_dynamics per linearization, each batched over the horizon), to
compare.

Default: the swing-up of the double pendulum (robots/planar2.yaml, both joints actuated) from
hanging down to upright in 1.5 s. `--robot robots/panda.urdf`: the Panda turns its first joint from
-pi/2 to pi/2 (the other joints at 0); add `--goal 0.5,-0.3,0,-2,0,1.8,0.8` for a reaching motion. Both
converge in 30-60 iterations (a few seconds of CPU each, tests/test_examples.py).

    python examples/ilqr.py [--robot robots/planar2.yaml] [--horizon 1.5] [--dt 0.01] [--iterations 200] [--no-plot]
"""
import argparse
import time

import numpy as np

from _common import claim_failed, fail, figure, generate_module, plot_parser, resolve, save

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


def backward_pass(problem, xs, us, fx, fu, mu):
    """Gains (k, K) of the regularized backward pass and the expected decrease's two terms (sum k'Qu,
    sum k'Quu k / 2), or None when some Quu is not positive definite at this mu. The regularization is
    Tassa et al.'s on the state: Vxx + mu I in Quu and Qux, which shortens the step in state space."""
    R, Qf, m = problem.R, problem.Qf, us.shape[1]
    Vx, Vxx = Qf @ (xs[-1] - problem.x_goal), Qf.copy()
    ks, Ks, d1, d2 = np.empty_like(us), np.empty((len(us), m, xs.shape[1])), 0.0, 0.0
    for k in reversed(range(len(us))):
        A, B = fx[k], fu[k]
        Vreg = Vxx + mu * np.eye(len(Vxx))
        Qx, Qu = A.T @ Vx, R @ us[k] + B.T @ Vx
        Qxx, Quu, Qux = A.T @ Vxx @ A, R + B.T @ Vxx @ B, B.T @ Vxx @ A
        Quu_reg, Qux_reg = R + B.T @ Vreg @ B, B.T @ Vreg @ A
        try:
            L = np.linalg.cholesky(Quu_reg)
        except np.linalg.LinAlgError:
            return None
        ks[k] = -np.linalg.solve(L.T, np.linalg.solve(L, Qu))
        Ks[k] = -np.linalg.solve(L.T, np.linalg.solve(L, Qux_reg))
        d1, d2 = d1 + ks[k] @ Qu, d2 + 0.5 * ks[k] @ Quu @ ks[k]
        Vx = Qx + Ks[k].T @ Quu @ ks[k] + Ks[k].T @ Qu + Qux.T @ ks[k]
        Vxx = Qxx + Ks[k].T @ Quu @ Ks[k] + Ks[k].T @ Qux + Qux.T @ Ks[k]
        Vxx = 0.5 * (Vxx + Vxx.T)
    return ks, Ks, d1, d2


def line_search(problem, x0, xs, us, gains, cost):
    """The first step length alpha = 1, 1/2, ... whose real (nonlinear) cost decrease is at least a tenth
    of the decrease the quadratic model expects; a rollout that diverges (inf/nan) is a rejected step.
    Returns (states, controls, cost, alpha) or None."""
    ks, Ks, d1, d2 = gains
    for alpha in 0.5 ** np.arange(12):
        x_new, u_new = np.empty_like(xs), np.empty_like(us)
        x_new[0] = x0
        with np.errstate(all="ignore"):             # a too-long step may overflow: it is rejected below
            for k in range(len(us)):
                u_new[k] = us[k] + alpha * ks[k] + Ks[k] @ (x_new[k] - xs[k])
                x_new[k + 1] = problem.step(x_new[k], u_new[k])
            c = problem.cost(x_new, u_new)
        expected = -(alpha * d1 + alpha * alpha * d2)
        if np.isfinite(c) and np.all(np.isfinite(x_new)) and cost - c > 0.1 * expected > 0:
            return x_new, u_new, c, alpha
    return None


def ilqr(problem, x0, us, finite_differences=False, max_iterations=200, tol=1e-6, progress=None):
    """Iterate linearize / backward pass / line search until the cost decrease the quadratic model expects
    of a full step is below tol relative to the cost (a stationary point). `progress(iteration, cost, mu)`, if
    given, is called after each accepted step. Returns a dict: states, controls, cost per iteration, iterations, converged, time spent
    linearizing, total time, final state error."""
    start = time.process_time()
    linearize = problem.jacobians_fd if finite_differences else problem.jacobians
    xs = problem.rollout(x0, us)
    costs, mu, t_lin, converged, relinearize = [problem.cost(xs, us)], 1e-6, 0.0, False, True
    for iteration in range(1, max_iterations + 1):
        if relinearize:
            t0 = time.process_time()
            fx, fu = linearize(xs[:-1], us)
            t_lin += time.process_time() - t0
        gains = backward_pass(problem, xs, us, fx, fu, mu)
        step = None if gains is None else line_search(problem, x0, xs, us, gains, costs[-1])
        if step is None:                             # not positive definite, or no decrease: regularize more
            mu, relinearize = max(mu * 10, 1e-6), False
            if mu > 1e10:
                break
            continue
        if -(gains[2] + gains[3]) < tol * costs[-1]:  # the model expects nothing more: a stationary point
            converged = True
        mu, relinearize = max(mu / 10, 1e-9), True
        xs, us = step[0], step[1]
        costs.append(step[2])
        if progress is not None:
            progress(iteration, costs[-1], mu)
        if converged:
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
    # effort per unit of inertia (R = r diag(M(start))^-1): with r I alone the Panda's light wrist joints are as
    # expensive to move as its shoulder, the optimum uses large wrist accelerations, and the linear models of a
    # 10 ms step are poor far from the trajectory: 200 iterations did not converge
    Minv = robot.forward_dynamics_derivatives(start, 0 * start, robot.gravity(start))[2]
    R = r * np.diag(1 / np.diag(np.linalg.inv(Minv)))
    problem = Problem(robot, dt, np.concatenate([goal, np.zeros(n)]), R, Qf)
    # initial guess: hold the start against gravity
    return problem, np.concatenate([start, np.zeros(n)]), np.tile(robot.gravity(start), (steps, 1))


def run(robot, horizon=1.5, dt=0.01, start=None, goal=None, progress=None, iterations=200):
    """iLQR with the generated derivatives, then with finite differences, from the same start.
    `progress(label)` returns the per-iteration callback of each run (or None)."""
    problem, x0, us = setup(robot, horizon, dt, start, goal)
    exact = ilqr(problem, x0, us, max_iterations=iterations, progress=progress and progress("generated derivatives"))
    fd = ilqr(problem, x0, us, finite_differences=True, max_iterations=iterations,
              progress=progress and progress("finite differences"))
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
    p.add_argument("--iterations", type=int, default=200, help="most iterations of each run (default 200)")
    args = p.parse_args(argv)
    if not resolve(args.robot).is_file():
        fail(f"{args.robot}: not found")
    robot = generated_module(args.robot)          # prints what it generates: the Panda takes seconds
    print(f"iLQR, {args.robot} ({robot.NV} DOF), {int(round(args.horizon / args.dt))} steps of {args.dt:g} s",
          flush=True)
    r = run(robot, args.horizon, args.dt, args.start, args.goal, _progress, args.iterations)
    for key, label in (("exact", "generated derivatives"), ("fd", "finite differences   ")):
        s = r[key]
        print(f"{label}: {s['iterations']} iterations ({'converged' if s['converged'] else 'NOT converged'}), "
              f"cost {s['costs'][0]:.4g} -> {s['costs'][-1]:.6g}, final state error {s['final_error']:.2e}, "
              f"linearization {s['linearize_time']:.3f} s of {s['time']:.3f} s CPU")
    print(f"largest difference of the two Jacobians along the optimum: {r['jacobian_difference']:.2e}")
    if not args.no_plot:
        plot(r, args.out, f"iLQR, {robot.NV} DOF, dt = {args.dt:g} s")
    if not (r["exact"]["converged"] and r["fd"]["converged"]):
        claim_failed(f"iLQR did not converge in {args.iterations} iterations (more with --iterations)")
    return r


def _progress(label, every=10):
    """A callback printing the cost every `every` accepted iterations (the Panda takes a few seconds)."""
    def report(iteration, cost, mu):
        if iteration % every == 0:
            print(f"  {label}: iteration {iteration}, cost {cost:.6g} (regularization {mu:.0e})", flush=True)
    return report


if __name__ == "__main__":
    main()
