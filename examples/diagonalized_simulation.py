"""Simulation in the diagonalized coordinates (Algorithm 8.1) beside the usual joint-space simulation.

Diagonalized, state (q, nu), nu = m* qd the total joint rates (kinetic energy K = nu . nu / 2), one call of
the fused Algorithm 8.1 (one Riccati recursion, two sweeps):
    q_dot, nu_dot = diagonalized_forward_dynamics(q, nu, tau)
    (q_dot = joint_rates(q, nu),
     nu_dot = working_moments(q, tau - gravity(q) - friction(q_dot)) - coriolis_nu(q, nu))
Joint space, state (q, qd):
    qd_dot = forward_dynamics(q, qd, tau)
Both start from the same (q0, qd0) (nu0 = total_rates(q0, qd0)), are driven by the same torque
(--torque zero: the arm falls under gravity; --torque sine: gravity(q) plus 1 N m sinusoids) and are
integrated with fixed-step RK4. They are the same motion in two coordinate systems, so the joint
trajectories differ only by the integration error: the example prints the largest difference of q
and of the joint rates, and compares K = nu . nu / 2 with qd^T M(q) qd / 2. --refine runs again with
dt/2: the difference should shrink about 16 times (fourth-order method).

    python examples/diagonalized_simulation.py [--robot generated/panda.py] [--steps 1000] [--out diagonalized_simulation.png]
"""
import numpy as np

from _common import figure, load_robot_module, parser, rk4, save

#: a bent, far-from-equilibrium start for the Panda (inside its joint limits); zeros for other robots
PANDA_START = np.array([0.0, 0.6, 0.0, -1.2, 0.0, 1.5, 0.8])

#: the generated functions the example calls (a module without one is refused in one line)
NEEDS = ("diagonalized_forward_dynamics", "forward_dynamics", "gravity",
         "joint_rates", "mass_matrix", "total_rates")


def torque(robot, kind):
    """tau(t, q): zero (a falling arm), or gravity(q) plus small sinusoids (1 N m, 0.5 .. 1 Hz)."""
    n = robot.DOF
    if kind == "zero":
        return lambda t, q: np.zeros(n)
    w = 2 * np.pi * np.linspace(0.5, 1.0, n)
    return lambda t, q: robot.gravity(q) + np.sin(w * t)


def start(n):
    q0 = PANDA_START.copy() if n == 7 else np.zeros(n)
    qd0 = 0.5 * np.cos(np.arange(n))                       # some motion on every joint
    return q0, qd0


def run(robot, steps=1000, dt=1e-3, kind="zero"):
    """Both simulations; returns a dict of the trajectories and the numbers the example prints."""
    n = robot.DOF
    tau = torque(robot, kind)

    def diagonalized(t, x):
        q, nu = x[:n], x[n:]
        return np.concatenate(robot.diagonalized_forward_dynamics(q, nu, tau(t, q)))

    def joint_space(t, x):
        q, qd = x[:n], x[n:]
        return np.concatenate([qd, robot.forward_dynamics(q, qd, tau(t, q))])

    q0, qd0 = start(n)
    t, xa = rk4(diagonalized, np.concatenate([q0, robot.total_rates(q0, qd0)]), dt, steps)
    _, xb = rk4(joint_space, np.concatenate([q0, qd0]), dt, steps)
    qa, nu = xa[:, :n], xa[:, n:]
    qb, qd = xb[:, :n], xb[:, n:]
    # whole trajectories at once: the generated functions take a batch of states
    qd_a = robot.joint_rates(qa, nu)
    K_nu = 0.5 * np.einsum("ti,ti->t", nu, nu)
    K_M = 0.5 * np.einsum("ti,tij,tj->t", qd, robot.mass_matrix(qb), qd)
    return {"t": t, "q_diag": qa, "q_joint": qb, "nu": nu, "qd": qd, "K_nu": K_nu, "K_M": K_M,
            "q_difference": float(np.abs(qa - qb).max()),
            "qd_difference": float(np.abs(qd_a - qd).max()),
            "energy_difference": float(np.abs(K_nu - K_M).max() / max(np.abs(K_M).max(), 1e-300))}


def plot(result, out, title):
    t = result["t"]
    fig, (a, b) = figure(2, 1, figsize=(7, 6), sharex=True)
    a.plot(t, result["q_joint"], lw=3, alpha=0.35)
    a.set_prop_cycle(None)
    a.plot(t, result["q_diag"], "--", lw=1)
    a.set_ylabel("q [rad]")
    a.set_title(f"{title}\nthick: forward_dynamics (q, qd); dashed: diagonalized (q, nu); "
                f"max |dq| = {result['q_difference']:.1e}", fontsize=9)
    b.plot(t, result["K_M"], lw=3, alpha=0.35, label="qd^T M(q) qd / 2 (joint space)")
    b.plot(t, result["K_nu"], "k--", lw=1, label="nu . nu / 2 (diagonalized)")
    b.set_xlabel("time [s]")
    b.set_ylabel("kinetic energy [J]")
    b.legend()
    save(fig, out)


def main(argv=None):
    p = parser(__doc__.splitlines()[0], steps=1000, out="diagonalized_simulation.png")
    p.add_argument("--torque", choices=("zero", "sine"), default="zero", help="applied torque: zero (a falling arm, default) or gravity(q) + 1 N m sinusoids")
    p.add_argument("--refine", action="store_true", help="also run with dt/2 and print how the difference shrinks")
    args = p.parse_args(argv)
    robot = load_robot_module(args.robot, args.c, NEEDS)
    r = run(robot, args.steps, args.dt, args.torque)
    print(f"diagonalized vs joint-space simulation, {args.robot} ({robot.DOF} DOF), tau: {args.torque}, "
          f"{args.steps} RK4 steps of {args.dt:g} s")
    print(f"largest |q_diag - q_joint|                 {r['q_difference']:.3e} rad")
    print(f"largest |joint_rates(q, nu) - qd|          {r['qd_difference']:.3e} rad/s")
    print(f"kinetic energy: nu.nu/2 vs qd^T M qd/2     {r['energy_difference']:.3e} relative "
          f"(K from {r['K_M'][0]:.4g} J to {r['K_M'][-1]:.4g} J)")
    if args.refine:
        half = run(robot, 2 * args.steps, args.dt / 2, args.torque)
        print(f"with dt/2: largest |q_diag - q_joint|      {half['q_difference']:.3e} rad "
              f"(ratio {r['q_difference'] / half['q_difference']:.1f}; RK4: about 16)")
        r["refined"] = half
    if not args.no_plot:
        plot(r, args.out, f"{robot.DOF} DOF, tau {args.torque}, RK4 dt = {args.dt:g} s")
    return r


if __name__ == "__main__":
    main()
