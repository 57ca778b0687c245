"""Computed-torque control of a generated robot tracking a smooth joint trajectory.

    tau = M(q) (qdd_d + Kd e_dot + Kp e) + nonlinear_effects(q, qd),    e = q_d - q

with the generated mass_matrix and nonlinear_effects (gravity included), simulated with the generated
forward_dynamics and fixed-step RK4. The desired trajectory is a sinusoid per joint; the arm starts
off it (joint j by +-e0 (1 - 0.6 j/(n-1)) rad), so the convergence is visible. With Kp = wn^2 and
Kd = 2 wn every joint's error obeys e'' + 2 wn e' + wn^2 e = 0 exactly (critically damped:
e_j(t) = e_j(0) (1 + wn t) exp(-wn t)) when the controller acts continuously; the simulated error
is compared with this solution. --hold holds the torque over each step instead (a 1/dt Hz digital
controller): the error then settles at a small floor.

    python examples/computed_torque.py [--robot generated/panda.py] [--steps 3000] [--out computed_torque.png]
"""
import numpy as np

from _common import figure, load_robot_module, parser, rk4_step, save, ticker

#: the generated functions the example calls (a module without one is refused in one line)
NEEDS = ("forward_dynamics", "mass_matrix", "nonlinear_effects")


def trajectory(n, amplitude=0.3, center=None):
    """q_d(t) = center + A sin(w_j t + phi_j) and its first two derivatives, for n joints."""
    center = np.zeros(n) if center is None else np.asarray(center, dtype=float)
    w = 2 * np.pi * np.linspace(0.25, 0.6, n)             # 0.25 .. 0.6 Hz
    phi = np.linspace(0.0, np.pi, n)

    def q_d(t):
        s, c = np.sin(w * t + phi), np.cos(w * t + phi)
        return center + amplitude * s, amplitude * w * c, -amplitude * w ** 2 * s
    return q_d


#: a comfortable centre of motion for the Panda (inside its joint limits); zeros for other robots
PANDA_CENTER = np.array([0.0, -0.3, 0.0, -2.0, 0.0, 1.8, 0.8])


def run(robot, steps=3000, dt=1e-3, wn=10.0, e0=0.1, hold=False):
    """Simulate; returns a dict of the time series and the numbers the example prints."""
    n = robot.DOF
    q_d = trajectory(n, center=PANDA_CENTER if n == 7 else None)
    Kp, Kd = wn ** 2, 2 * wn

    def control(t, q, qd):
        qr, qdr, qddr = q_d(t)
        e, e_dot = qr - q, qdr - qd
        M = robot.mass_matrix(q)
        return M @ (qddr + Kd * e_dot + Kp * e) + robot.nonlinear_effects(q, qd)

    def dynamics(t, x, tau=None):
        q, qd = x[:n], x[n:]
        if tau is None:
            tau = control(t, q, qd)
        return np.concatenate([qd, robot.forward_dynamics(q, qd, tau)])

    j = np.arange(n)
    e_init = e0 * (-1.0) ** j * (1 - 0.6 * j / max(n - 1, 1))   # e0, -0.9 e0, ...: joint j starts this far off
    q0, qd0, _ = q_d(0.0)
    x = np.concatenate([q0 - e_init, qd0])                 # off the trajectory, at its rate
    xs = np.empty((steps + 1, 2 * n))
    xs[0] = x
    tick = ticker(steps, "RK4 steps")
    for k in range(steps):
        tick(k)
        t = k * dt
        if hold:                                           # zero-order hold: tau fixed over the step
            tau = control(t, x[:n], x[n:])
            x = rk4_step(lambda s, y: dynamics(s, y, tau), t, x, dt)
        else:                                              # continuous controller, evaluated at every stage
            x = rk4_step(dynamics, t, x, dt)
        xs[k + 1] = x
    t = dt * np.arange(steps + 1)
    desired = np.stack([q_d(s)[0] for s in t])
    error = desired - xs[:, :n]                            # (steps + 1, n)
    norm = np.abs(error).max(axis=1)                       # largest joint error at each time
    ideal = np.outer((1 + wn * t) * np.exp(-wn * t), e_init)   # closed-loop solution of each joint
    return {"t": t, "q": xs[:, :n], "desired": desired, "error": error, "error_norm": norm, "ideal": ideal,
            "final_error": float(norm[-1]), "max_error": float(norm.max()),
            "deviation_from_ideal": float(np.abs(error - ideal).max())}


def plot(result, out, title):
    fig, (a, b) = figure(2, 1, figsize=(7, 6), sharex=True)
    t = result["t"]
    a.plot(t, result["error"])
    a.set_ylabel("joint error e = q_d - q [rad]")
    a.set_title(title)
    b.semilogy(t, np.maximum(result["error_norm"], 1e-17), label="max |e_j| (simulated)")
    b.semilogy(t, np.abs(result["ideal"]).max(axis=1), "--", label="e0 (1 + wn t) exp(-wn t)")
    b.set_xlabel("time [s]")
    b.set_ylabel("tracking error [rad]")
    b.legend()
    save(fig, out)


def main(argv=None):
    p = parser(__doc__.splitlines()[0], out="computed_torque.png")
    p.add_argument("--wn", type=float, default=10.0, help="closed-loop natural frequency, rad/s (default 10)")
    p.add_argument("--e0", type=float, default=0.1, help="largest initial joint error, rad (default 0.1)")
    p.add_argument("--hold", action="store_true", help="hold the torque over each step (digital controller)")
    args = p.parse_args(argv)
    robot = load_robot_module(args.robot, args.c, NEEDS)
    r = run(robot, args.steps, args.dt, args.wn, args.e0, args.hold)
    print(f"computed torque, {args.robot} ({robot.DOF} DOF), {args.steps} RK4 steps of {args.dt:g} s, "
          f"Kp = {args.wn ** 2:g}, Kd = {2 * args.wn:g}{', torque held over each step' if args.hold else ''}")
    print(f"max tracking error   {r['max_error']:.3e} rad (at t = 0)")
    print(f"final tracking error {r['final_error']:.3e} rad (t = {r['t'][-1]:g} s)")
    print(f"largest deviation from the ideal closed loop e(0) (1 + wn t) exp(-wn t): {r['deviation_from_ideal']:.3e} rad")
    if not args.no_plot:
        plot(r, args.out, f"computed torque, {robot.DOF} DOF, RK4 dt = {args.dt:g} s"
                          + (", torque held over each step" if args.hold else ""))
    return r


if __name__ == "__main__":
    main()
