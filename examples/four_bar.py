"""A four-bar linkage simulated with its loop closure: drift, energy, and inverse dynamics of the closed loop.

examples/four_bar.yaml: a crank-rocker four-bar as a spanning tree (crank + coupler from one ground
pivot, rocker from the other) closed by a point constraint between the coupler's end and the rocker's
pin (`loops:`), with the crank actuated (`actuated:`). The state is the tree's (q, qd), integrated
with RK4 on the generated constrained_forward_dynamics(_baumgarte); the closure error phi is the
distance between the two frames (frame_placement).

1. Free swing under gravity, no damping, once without stabilization and once with Baumgarte's
   (J qdd + J_dot qd = -Kd J qd - Kp phi): the energy stays constant to the integration error, and
   the closure error stays bounded (and much smaller) with stabilization.
2. Computed torque on the closed loop: loop_inverse_dynamics gives the crank torque for a desired
   crank acceleration (plus PD on its error); the crank follows a sinusoid, the loop holds.

    python examples/four_bar.py [--robot examples/four_bar.yaml] [--steps 4000] [--dt 0.005] [--out four_bar.png: plot]
"""
import numpy as np

from _common import fail, figure, generate_module, parser, rk4, save

L1, L2, L3, GROUND = 0.3, 0.8, 0.6, 0.7        # crank, coupler, rocker, ground pivot distance (four_bar.yaml)


def assemble(theta):
    """A configuration of the tree that closes the loop at crank angle theta (the elbow-up branch)."""
    B, D = L1 * np.array([np.cos(theta), np.sin(theta)]), np.array([GROUND, 0.0])
    d = np.linalg.norm(D - B)
    a = (L2 ** 2 - L3 ** 2 + d ** 2) / (2 * d)
    u = (D - B) / d
    C = B + a * u + np.sqrt(L2 ** 2 - a ** 2) * np.array([-u[1], u[0]])
    return np.array([theta, np.arctan2(C[1] - B[1], C[0] - B[0]) - theta, np.arctan2(C[1], C[0] - GROUND), 0.0])


def closure_error(robot, q):
    """phi = p(coupler_end) - p(pin), world axes (the Baumgarte error and the drift)."""
    P = robot.frame_placement(q)
    return P[..., 0, :3, 3] - P[..., 1, :3, 3]


def energy(robot, mass, gravity, q, qd):
    return 0.5 * np.einsum("ti,tij,tj->t", qd, robot.mass_matrix(q), qd) - mass * robot.center_of_mass(q) @ gravity


def swing(robot, mass, gravity, steps, dt, gains=None):
    n = 4

    def f(t, x):
        q, qd = x[:n], x[n:]
        if gains is None:
            qdd, _ = robot.constrained_forward_dynamics(q, qd, np.zeros(n))
        else:
            qdd, _ = robot.constrained_forward_dynamics_baumgarte(q, qd, np.zeros(n), gains, closure_error(robot, q))
        return np.concatenate([qd, qdd])

    t, x = rk4(f, np.concatenate([assemble(0.5), np.zeros(n)]), dt, steps)
    q, qd = x[:, :n], x[:, n:]
    E = energy(robot, mass, np.asarray(gravity), q, qd)
    phi = np.linalg.norm(closure_error(robot, q), axis=-1)
    return t, q, E, phi


def tracking(robot, steps, dt, kp=100.0, kd=20.0):
    """Crank angle 0.5 + 0.4 sin(2 t) by computed torque through loop_inverse_dynamics, Baumgarte-stabilized."""
    n = 4
    desired = lambda t: (0.5 + 0.4 * np.sin(2 * t), 0.8 * np.cos(2 * t), -1.6 * np.sin(2 * t))

    def f(t, x):
        q, qd = x[:n], x[n:]
        r, rd, rdd = desired(t)
        qdd = np.zeros(n)
        qdd[0] = rdd + kd * (rd - qd[0]) + kp * (r - q[0])
        tau, _ = robot.loop_inverse_dynamics(q, qd, qdd)
        a, _ = robot.constrained_forward_dynamics_baumgarte(q, qd, tau, (400.0, 40.0), closure_error(robot, q))
        return np.concatenate([qd, a])

    x0 = np.concatenate([assemble(0.5), np.zeros(n)])
    x0[n:] = robot_velocity(robot, x0[:n], 0.8)
    t, x = rk4(f, x0, dt, steps)
    error = x[:, 0] - desired(t)[0]
    return t, x[:, 0], error


def robot_velocity(robot, q, crank_rate):
    """The tree velocity that keeps the loop closed for a crank rate (J qd = 0)."""
    J = robot.constraint_jacobian(q)
    v = np.zeros(4)
    v[0] = crank_rate
    v[1:] = -np.linalg.solve(J[:, 1:], J[:, 0] * crank_rate)
    return v


def run(robot, mass, gravity, steps=4000, dt=5e-3, gains=(400.0, 40.0)):
    t, _, E0, phi0 = swing(robot, mass, gravity, steps, dt)
    _, _, E1, phi1 = swing(robot, mass, gravity, steps, dt, gains)
    tt, crank, error = tracking(robot, steps, dt)
    scale = np.abs(E0).max()
    return {"t": t, "E": E0, "E_stabilized": E1, "phi": phi0, "phi_stabilized": phi1, "tracking_error": error,
            "energy_drift": float(np.abs(E0 - E0[0]).max() / scale),
            "energy_drift_stabilized": float(np.abs(E1 - E1[0]).max() / scale),
            "closure": float(phi0.max()), "closure_stabilized": float(phi1.max()),
            "closure_last_quarter": float(phi0[3 * steps // 4:].max()),
            "closure_stabilized_last_quarter": float(phi1[3 * steps // 4:].max()),
            "final_tracking_error": float(np.abs(error[-steps // 4:]).max())}


def plot(r, out, title):
    t = r["t"]
    fig, (a, b, c) = figure(3, 1, figsize=(7, 8), sharex=True)
    a.semilogy(t[1:], r["phi"][1:] + 1e-18, label="no stabilization")
    a.semilogy(t[1:], r["phi_stabilized"][1:] + 1e-18, label="Baumgarte")
    a.set_ylabel("closure error |phi| [m]")
    a.set_title(title)
    a.legend()
    b.plot(t, r["E"] - r["E"][0], label="no stabilization")
    b.plot(t, r["E_stabilized"] - r["E_stabilized"][0], label="Baumgarte")
    b.set_ylabel("E(t) - E(0) [J]")
    b.legend()
    c.semilogy(t, np.abs(r["tracking_error"]) + 1e-18)
    c.set_ylabel("crank tracking error [rad]")
    c.set_xlabel("time [s]")
    save(fig, out)


def main(argv=None):
    p = parser(__doc__.splitlines()[0], robot="examples/four_bar.yaml", steps=4000, dt=5e-3, out="four_bar.png")
    p.set_defaults(out=None)           # a plot only when asked for: --out FILE
    args = p.parse_args(argv)
    if not str(args.robot).lower().endswith((".yaml", ".yml")):
        fail(f"{args.robot}: --robot takes the four-bar's YAML file (generated here, in a temporary folder)")
    robot, model = generate_module(args.robot, args.c)
    r = run(robot, model.total_mass, model.gravity, args.steps, args.dt)
    print(f"{model.name}: tree {', '.join(model.joint_names)}, loop {', '.join(c.describe() for c in model.constraints)}, "
          f"actuated {', '.join(model.actuated)}; {args.steps} RK4 steps of {args.dt:g} s")
    print(f"free swing, no stabilization: energy drift {r['energy_drift']:.2e} (relative), closure error max "
          f"{r['closure']:.2e} m")
    print(f"free swing, Baumgarte (Kp 400, Kd 40): energy drift {r['energy_drift_stabilized']:.2e}, closure error max "
          f"{r['closure_stabilized']:.2e} m")
    print(f"computed torque through loop_inverse_dynamics: crank error over the last quarter "
          f"{r['final_tracking_error']:.2e} rad")
    if args.out and not args.no_plot:
        plot(r, args.out, f"four-bar, RK4 dt = {args.dt:g} s")
    return r


if __name__ == "__main__":
    main()
