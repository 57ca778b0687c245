"""Decoupled rate feedback eps = -c nu (Jain & Rodriguez, control law 8.4) bringing a moving arm to rest.

In the diagonalized coordinates nu = m* qd (total joint rates) the arm obeys
    nu_dot + C(theta, nu) = eps = working_moments(q, tau - gravity(q) - friction(qd)),
and the kinetic energy is K = nu . nu / 2. The law eps = -c nu, applied as
    tau = applied_moments(q, -c nu) + gravity(q) + friction(qd)   (= -c M(q) qd + gravity(q) + friction(qd), m m* = M)
gives dK/dt = nu . nu_dot = -c nu . nu - nu . C(theta, nu) = -c nu . nu, because C(theta, nu) does no
work: K decreases monotonically, K(t) = K(0) exp(-2 c t). The arm is simulated in joint space (state
(q, qd), the generated forward_dynamics, RK4), independently of the diagonalized functions the law
uses; K is then evaluated along the trajectory (total_rates on the whole batch of states) and its
measured rate of change (central finite differences) is compared with -c nu . nu.

    python examples/decoupled_rate_feedback.py [--robot generated/panda.py] [--steps 3000] [--out decoupled_rate_feedback.png]
"""
import numpy as np

from _common import claim_failed, figure, load_robot_module, parser, rk4, save

#: a bent start for the Panda (inside its joint limits); zeros for other robots
PANDA_START = np.array([0.0, -0.3, 0.0, -2.0, 0.0, 1.8, 0.8])

#: the generated functions the example calls (a module without one is refused in one line)
NEEDS = ("applied_moments", "forward_dynamics", "friction", "gravity", "mass_matrix", "total_rates")


def run(robot, steps=3000, dt=1e-3, c=2.0, speed=1.0):
    """Simulate; returns a dict of the time series and the numbers the example prints."""
    n = robot.DOF

    def control(q, qd):
        nu = robot.total_rates(q, qd)
        friction = robot.friction(qd) if hasattr(robot, "friction") else 0.0   # compensated, like gravity
        return robot.applied_moments(q, -c * nu) + robot.gravity(q) + friction

    def dynamics(t, x):
        q, qd = x[:n], x[n:]
        return np.concatenate([qd, robot.forward_dynamics(q, qd, control(q, qd))])

    q0 = PANDA_START.copy() if n == 7 else np.zeros(n)
    qd0 = speed * np.cos(np.arange(n) + 0.5)               # the arm is moving on every joint
    t, x = rk4(dynamics, np.concatenate([q0, qd0]), dt, steps)
    q, qd = x[:, :n], x[:, n:]
    nu = robot.total_rates(q, qd)                           # the whole trajectory in one batched call
    K = 0.5 * np.einsum("ti,ti->t", nu, nu)
    rate = -c * np.einsum("ti,ti->t", nu, nu)               # the predicted dK/dt = -c nu . nu
    measured = (K[2:] - K[:-2]) / (2 * dt)                  # central differences at t[1:-1]
    rate_error = np.abs(measured - rate[1:-1]) / np.abs(rate[1:-1])
    # the law is a mass-matrix-weighted damping: applied_moments(q, -c nu) = -c M(q) qd
    damping = robot.applied_moments(q, -c * nu)
    Mqd = np.einsum("tij,tj->ti", robot.mass_matrix(q), qd)
    return {"c": c, "t": t, "q": q, "qd": qd, "K": K, "rate": rate, "measured_rate": measured, "rate_error": rate_error,
            "initial_energy": float(K[0]), "final_energy": float(K[-1]),
            "monotonic": bool(np.all(np.diff(K) < 0)),
            "max_rate_error": float(rate_error.max()),
            "exponential_error": float(np.abs(K / (K[0] * np.exp(-2 * c * t)) - 1).max()),
            "law_vs_mass_matrix": float(np.abs(damping + c * Mqd).max() / max(np.abs(c * Mqd).max(), 1e-300))}


def plot(result, out, title):
    t = result["t"]
    fig, (a, b) = figure(2, 1, figsize=(7, 6), sharex=True)
    a.semilogy(t, result["K"], lw=3, alpha=0.4, label="K = nu . nu / 2 (simulated)")
    a.semilogy(t, result["K"][0] * np.exp(-2 * result["c"] * t), "k--", lw=1, label="K(0) exp(-2 c t)")
    a.set_ylabel("kinetic energy [J]")
    a.set_title(title)
    a.legend()
    b.semilogy(t[1:-1], -result["measured_rate"], lw=3, alpha=0.4, label="-dK/dt (central differences of K)")
    b.semilogy(t, -result["rate"], "k--", lw=1, label="c nu . nu")
    b.set_ylabel("energy decay rate [W]")
    b.set_title(f"largest relative difference {result['max_rate_error']:.2e}", fontsize=9)
    b.legend()
    b.set_xlabel("time [s]")
    save(fig, out)


def main(argv=None):
    p = parser(__doc__.splitlines()[0], out="decoupled_rate_feedback.png")
    p.add_argument("--gain", "-k", type=float, default=2.0, help="rate gain c, 1/s (default 2)")
    p.add_argument("--speed", type=float, default=1.0, help="initial joint speed scale, rad/s (default 1)")
    args = p.parse_args(argv)
    robot = load_robot_module(args.robot, args.c, NEEDS)
    r = run(robot, args.steps, args.dt, args.gain, args.speed)
    print(f"decoupled rate feedback eps = -c nu, c = {args.gain:g}/s, gravity compensated, {args.robot} "
          f"({robot.DOF} DOF), {args.steps} RK4 steps of {args.dt:g} s")
    print(f"kinetic energy: initial {r['initial_energy']:.6e} J, final {r['final_energy']:.6e} J "
          f"(ratio {r['final_energy'] / r['initial_energy']:.3e}; exp(-2 c t) = {np.exp(-2 * args.gain * r['t'][-1]):.3e})")
    print(f"monotonically decreasing: {'yes' if r['monotonic'] else 'NO'}")
    print(f"dK/dt (central differences) vs -c nu.nu: largest relative error {r['max_rate_error']:.3e} "
          f"(central-difference truncation (2 c dt)^2 / 6 = {(2 * args.gain * args.dt) ** 2 / 6:.3e})")
    print(f"K(t) vs K(0) exp(-2 c t): largest relative error {r['exponential_error']:.3e}")
    print(f"applied_moments(q, -c nu) vs -c M(q) qd: largest relative difference {r['law_vs_mass_matrix']:.3e}")
    if not args.no_plot:
        plot(r, args.out, f"eps = -c nu, c = {args.gain:g}/s, {robot.DOF} DOF, RK4 dt = {args.dt:g} s")
    if not r["monotonic"]:
        claim_failed("the kinetic energy did not decrease at every step (a smaller --dt?)")
    return r


if __name__ == "__main__":
    main()
