"""End-effector regulation in the diagonalized coordinates (Jain & Rodriguez, control law 8.2).

The end-effector configuration is Y = (p, r1, r2, r3): its position and the three axes of its frame
(12 numbers), and e = Y(q) - Y_goal. With Y_dot = B J qd (J the frame Jacobian, LOCAL_WORLD_ALIGNED;
B turns [v; w] into (v, w x r1, w x r2, w x r3)), the law
    eps = -c1 nu - c2 l J^T B^T e,       applied as  tau = applied_moments(q, eps) + gravity(q) + friction(qd),
where l J^T B^T e = working_moments(q, J^T w) with w = B^T e = [e_p; sum_i r_i x e_i] (the paper's
D^-1/2 H psi B* e), makes the Lyapunov function
    L = nu . nu / 2 + c2 |e|^2 / 2
decrease: dL/dt = nu . (eps - C(theta, nu)) + c2 e . B J l* nu = -c1 nu . nu, since C(theta, nu)
does no work and J qd = J l* nu. The arm ends at rest with the end effector at the goal (the
goal is reachable and the start is close enough to avoid other rest points). Simulated in joint
space (generated forward_dynamics, RK4), independently of the diagonalized functions the law uses.

    python examples/end_effector_regulation.py [--robot generated/panda.py] [--frame panda_hand_tcp] [--steps 4000]
"""
import numpy as np

from _common import claim_failed, figure, load_robot_module, parser, rk4, save

PANDA_START = np.array([0.0, -0.3, 0.0, -2.0, 0.0, 1.8, 0.8])
PANDA_GOAL = np.array([0.5, 0.2, -0.3, -1.7, 0.3, 2.0, 0.5])     # the goal pose is where the tool is at these angles

#: the generated functions the example calls (a module without one is refused in one line)
NEEDS = ("applied_moments", "forward_dynamics", "frame_jacobian", "frame_placement",
         "friction", "gravity", "total_rates", "working_moments")


def _pose(placement):
    """Y = (p, r1, r2, r3) from a 4x4 transform (batched)."""
    return np.concatenate([placement[..., :3, 3], placement[..., :3, 0], placement[..., :3, 1], placement[..., :3, 2]], -1)


def run(robot, steps=4000, dt=1e-3, c1=4.0, c2=60.0, frame=None, q_start=None, q_goal=None):
    n = robot.DOF
    f = list(robot.FRAMES).index(frame) if frame else len(robot.FRAMES) - 1
    q0 = (PANDA_START if n == 7 else np.zeros(n)) if q_start is None else q_start
    qg = (PANDA_GOAL if n == 7 else np.full(n, 0.3)) if q_goal is None else q_goal
    goal = _pose(robot.frame_placement(qg)[f])

    def error(q):
        return _pose(robot.frame_placement(q)[..., f, :, :]) - goal

    def control(q, qd):
        e = error(q)
        T = robot.frame_placement(q)[f]
        w = np.concatenate([e[:3], sum(np.cross(T[:3, i], e[3 + 3 * i:6 + 3 * i]) for i in range(3))])
        J = robot.frame_jacobian(q)[f]
        eps = -c1 * robot.total_rates(q, qd) - c2 * robot.working_moments(q, J.T @ w)
        friction = robot.friction(qd) if hasattr(robot, "friction") else 0.0   # compensated, like gravity
        return robot.applied_moments(q, eps) + robot.gravity(q) + friction

    def dynamics(t, x):
        q, qd = x[:n], x[n:]
        return np.concatenate([qd, robot.forward_dynamics(q, qd, control(q, qd))])

    t, x = rk4(dynamics, np.concatenate([q0, np.zeros(n)]), dt, steps)
    q, qd = x[:, :n], x[:, n:]
    nu = robot.total_rates(q, qd)
    e = error(q)
    kinetic = 0.5 * np.einsum("ti,ti->t", nu, nu)
    L = kinetic + 0.5 * c2 * np.einsum("ti,ti->t", e, e)
    measured = (L[2:] - L[:-2]) / (2 * dt)
    predicted = -c1 * 2 * kinetic[1:-1]
    position = np.linalg.norm(e[:, :3], axis=1)
    return {"t": t, "q": q, "L": L, "kinetic": kinetic, "position_error": position,
            "orientation_error": np.linalg.norm(e[:, 3:], axis=1), "c1": c1, "c2": c2,
            "frame": robot.FRAMES[f],
            "largest_increase": float(np.diff(L).max()), "monotonic": bool(np.all(np.diff(L) <= 1e-12 * L[0])),
            "rate_error": float(np.abs(measured - predicted).max() / np.abs(predicted).max()),
            "initial_error": float(position[0]), "final_error": float(position[-1]),
            "final_orientation_error": float(np.linalg.norm(e[-1, 3:])), "final_speed": float(np.abs(qd[-1]).max())}


def plot(result, out, title):
    t = result["t"]
    fig, (a, b) = figure(2, 1, figsize=(7, 6), sharex=True)
    a.semilogy(t, result["L"], label="L = nu.nu/2 + c2 |e|^2/2")
    a.semilogy(t, result["kinetic"] + 1e-300, "--", label="nu.nu/2")
    a.set_ylabel("Lyapunov function")
    a.set_title(title)
    a.legend()
    b.semilogy(t, result["position_error"], label="|position error| [m]")
    b.semilogy(t, result["orientation_error"], label="|axes error|")
    b.set_xlabel("time [s]")
    b.legend()
    save(fig, out)


def main(argv=None):
    p = parser(__doc__.splitlines()[0], steps=4000, out="end_effector_regulation.png")
    p.add_argument("--frame", default=None, help="frame to regulate (default: the last of FRAMES)")
    p.add_argument("--c1", type=float, default=4.0, help="rate gain c1, 1/s (default 4)")
    p.add_argument("--c2", type=float, default=60.0, help="configuration gain c2 (default 60)")
    args = p.parse_args(argv)
    robot = load_robot_module(args.robot, args.c, NEEDS)
    r = run(robot, args.steps, args.dt, args.c1, args.c2, args.frame)
    print(f"control law 8.2 on {args.robot} ({robot.DOF} DOF), frame {r['frame']}, c1 = {args.c1:g}, c2 = {args.c2:g}, "
          f"{args.steps} RK4 steps of {args.dt:g} s")
    print(f"Lyapunov function: {r['L'][0]:.6e} -> {r['L'][-1]:.6e}, monotonically decreasing: "
          f"{'yes' if r['monotonic'] else 'NO'} (largest step change {r['largest_increase']:.3e})")
    print(f"dL/dt (central differences) vs -c1 nu.nu: largest relative error {r['rate_error']:.3e}")
    print(f"position error {r['initial_error']:.4e} m -> {r['final_error']:.4e} m; axes error "
          f"{r['final_orientation_error']:.3e}; final joint speed {r['final_speed']:.3e} rad/s")
    if not args.no_plot:
        plot(r, args.out, f"law 8.2, {r['frame']}, c1 = {args.c1:g}, c2 = {args.c2:g}")
    if not r["monotonic"]:
        claim_failed("the Lyapunov function did not decrease at every step (a smaller --dt?)")
    return r


if __name__ == "__main__":
    main()
