"""Operational-space control (Khatib): the Panda's tool tracks a horizontal circle.

With x the tool position, J its (linear) frame Jacobian, Lambda^-1 = J M^-1 J^T taken from the
generated operational_space_inertia_inverse (the O(N) recursion through the articulated inertias,
no M^-1), J_dot qd from frame_acceleration_bias and b = nonlinear_effects (Coriolis and gravity):
    F   = Lambda (x_dd_des + Kd (x_d_des - x_d) + Kp (x_des - x) - J_dot qd + J M^-1 b)
    tau = J^T F + (1 - J^T Jbar^T) tau_0,    Jbar = M^-1 J^T Lambda,  tau_0 = posture PD
gives the task-space closed loop e_dd + Kd e_d + Kp e = 0 exactly (the null-space torque does not
reach the tool), so the tracking error follows the ideal second-order response down to the
integration error. J M^-1 b = -J forward_dynamics(q, qd, 0). Simulated with the generated
forward_dynamics and RK4; the error is compared with the ideal closed loop.

    python examples/operational_space_circle.py [--robot generated/panda.py] [--steps 4000] [--out operational_space_circle.png]
"""
import numpy as np

from _common import figure, load_robot_module, parser, rk4, save

PANDA_START = np.array([0.0, -0.3, 0.0, -2.0, 0.0, 1.8, 0.8])

#: the generated functions the example calls (a module without one is refused in one line)
NEEDS = ("forward_dynamics", "frame_acceleration_bias", "frame_jacobian", "frame_placement",
         "gravity", "mass_matrix_inverse", "operational_space_inertia_inverse")


def run(robot, steps=4000, dt=1e-3, radius=0.1, period=2.0, kp=400.0, kd=40.0, frame=None):
    n = robot.DOF
    f = list(robot.FRAMES).index(frame) if frame else len(robot.FRAMES) - 1
    q0 = PANDA_START.copy() if n == 7 else np.full(n, 0.3)
    x0 = robot.frame_placement(q0)[f, :3, 3]
    centre, w = x0 - np.array([radius, 0.0, 0.0]), 2 * np.pi / period

    def desired(t):
        c, s = np.cos(w * t), np.sin(w * t)
        return (centre + radius * np.array([c, s, 0.0]), radius * w * np.array([-s, c, 0.0]),
                -radius * w * w * np.array([c, s, 0.0]))

    def control(t, q, qd):
        xd, vd, ad = desired(t)
        J = robot.frame_jacobian(q)[f, :3]
        x, v = robot.frame_placement(q)[f, :3, 3], J @ qd
        Linv = robot.operational_space_inertia_inverse(q)[6 * f:6 * f + 3, 6 * f:6 * f + 3]
        Lam = np.linalg.inv(Linv)                           # 3x3
        drift = robot.frame_acceleration_bias(q, qd)[f, :3] + J @ robot.forward_dynamics(q, qd, np.zeros(n))
        F = Lam @ (ad + kd * (vd - v) + kp * (xd - x) - drift)
        Jbar_T = Lam @ J @ robot.mass_matrix_inverse(q)     # Jbar^T = Lambda J M^-1
        tau0 = robot.gravity(q) - 10.0 * (q - q0) - 5.0 * qd  # hold the posture in the null space
        return J.T @ F + tau0 - J.T @ (Jbar_T @ tau0)

    def dynamics(t, x):
        q, qd = x[:n], x[n:]
        return np.concatenate([qd, robot.forward_dynamics(q, qd, control(t, q, qd))])

    t, x = rk4(dynamics, np.concatenate([q0, np.zeros(n)]), dt, steps)
    q = x[:, :n]
    tool = robot.frame_placement(q)[:, f, :3, 3]
    target = np.array([desired(ti)[0] for ti in t])
    error = tool - target
    # ideal closed loop e_dd + kd e_d + kp e = 0 from e(0) = 0, e_d(0) = -x_d_des(0) (the arm starts at rest)
    ideal = np.array([_second_order(ti, kp, kd, np.zeros(3), -desired(0.0)[1]) for ti in t])
    return {"t": t, "error": np.linalg.norm(error, axis=1), "deviation": np.linalg.norm(error - ideal, axis=1),
            "tool": tool, "target": target, "frame": robot.FRAMES[f], "kp": kp, "kd": kd,
            "largest_error": float(np.linalg.norm(error, axis=1).max()),
            "final_error": float(np.linalg.norm(error[-1])),
            "largest_deviation": float(np.linalg.norm(error - ideal, axis=1).max())}


def _second_order(t, kp, kd, e0, de0):
    """Solution of e_dd + kd e_d + kp e = 0 (critically damped when kd^2 = 4 kp, the default)."""
    r = kd / 2
    if abs(kd * kd - 4 * kp) < 1e-9 * kp:
        return (e0 + (de0 + r * e0) * t) * np.exp(-r * t)
    s = np.sqrt(complex(r * r - kp))
    a, b = -r + s, -r - s
    c1 = (de0 - b * e0) / (a - b)
    return np.real(c1 * np.exp(a * t) + (e0 - c1) * np.exp(b * t))


def plot(result, out, title):
    fig, (a, b) = figure(1, 2, figsize=(10, 4))
    a.plot(result["target"][:, 0], result["target"][:, 1], "k--", lw=1, label="desired circle")
    a.plot(result["tool"][:, 0], result["tool"][:, 1], lw=2, alpha=0.6, label=result["frame"])
    a.set_aspect("equal")
    a.set_xlabel("x [m]")
    a.set_ylabel("y [m]")
    a.legend()
    b.semilogy(result["t"][1:], result["error"][1:], label="|tracking error| [m]")
    b.semilogy(result["t"][1:], np.maximum(result["deviation"][1:], 1e-16), label="|error - ideal closed loop| [m]")
    b.set_xlabel("time [s]")
    b.set_title(title, fontsize=9)
    b.legend()
    save(fig, out)


def main(argv=None):
    p = parser(__doc__.splitlines()[0], steps=4000, out="operational_space_circle.png")
    p.add_argument("--frame", default=None, help="frame that tracks the circle (default: the last of FRAMES)")
    p.add_argument("--radius", type=float, default=0.1, help="circle radius, m (default 0.1)")
    p.add_argument("--period", type=float, default=2.0, help="period, s (default 2)")
    args = p.parse_args(argv)
    robot = load_robot_module(args.robot, args.c, NEEDS)
    r = run(robot, args.steps, args.dt, args.radius, args.period, frame=args.frame)
    print(f"operational-space control of {r['frame']} on {args.robot} ({robot.DOF} DOF): circle of radius "
          f"{args.radius:g} m, period {args.period:g} s, Kp = {r['kp']:g}, Kd = {r['kd']:g}, {args.steps} RK4 steps of {args.dt:g} s")
    print(f"tracking error: largest {r['largest_error']:.3e} m (start-up transient), final {r['final_error']:.3e} m")
    print(f"deviation from the ideal closed loop e_dd + Kd e_d + Kp e = 0: largest {r['largest_deviation']:.3e} m")
    if not args.no_plot:
        plot(r, args.out, f"Kp = {r['kp']:g}, Kd = {r['kd']:g}, RK4 dt = {args.dt:g} s")
    return r


if __name__ == "__main__":
    main()
