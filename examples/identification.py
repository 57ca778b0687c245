"""Identification of the Panda's base parameters, friction and rotor inertias from noisy joint torques.

1. The robot is generated with friction and armature (robots/panda.urdf with
   --joint-params examples/panda_joint_params.yaml): its inverse_dynamics (Newton-Euler, friction,
   Ia qdd) plays the real arm.
2. An exciting trajectory: a finite Fourier series per joint (Swevers et al. 1997),
       q_i(t) = q0_i + sum_l a_il/(l wf) sin(l wf t) - b_il/(l wf) cos(l wf t),
   periodic, with analytic qd and qdd; the coefficients are the best of a few random draws by the
   condition number of the stacked base regressor (reported).
3. "Measured" torques: inverse_dynamics along the trajectory plus Gaussian noise (a fraction of each
   joint's RMS torque).
4. The b base parameters by ordinary least squares on the base regressor, then weighted least squares
   (Gautier 1997: each joint's rows weighted by 1/sigma_j, sigma_j from its OLS residuals), with
   their standard deviations.
5. Prediction of the torques of another trajectory (validation) from the identified parameters.

    python examples/identification.py [--noise 0.02] [--samples 1000] [--out identification.png]
"""
import numpy as np

from _common import ROOT, figure, generate_module, plot_parser, save

ROBOT = ROOT / "robots" / "panda.urdf"
JOINT_PARAMS = ROOT / "examples" / "panda_joint_params.yaml"
#: the Panda's joint ranges (rad), from its URDF <limit>; the trajectory keeps inside 80% of them
LOWER = np.array([-2.8973, -1.7628, -2.8973, -3.0718, -2.8973, -0.0175, -2.8973])
UPPER = np.array([2.8973, 1.7628, 2.8973, -0.0698, 2.8973, 3.7525, 2.8973])


def generate(robot=ROBOT, joint_params=JOINT_PARAMS, folder=None):
    """The generated Python module of the robot with its friction and rotor inertias."""
    return generate_module(robot, folder=folder, joint_params=joint_params)[0]


class Fourier:
    """q(t) = q0 + sum_l a_l/(l wf) sin(l wf t) - b_l/(l wf) cos(l wf t), per joint."""

    def __init__(self, q0, a, b, wf):
        self.q0, self.a, self.b, self.wf = q0, a, b, wf          # a, b: (harmonics, n)

    def __call__(self, t):
        t = np.asarray(t)[:, None, None]
        l = np.arange(1, len(self.a) + 1)[None, :, None]
        w = l * self.wf
        s, c = np.sin(w * t), np.cos(w * t)
        q = self.q0 + ((self.a * s - self.b * c) / w).sum(1)
        qd = (self.a * c + self.b * s).sum(1)
        qdd = (w * (-self.a * s + self.b * c)).sum(1)
        return q, qd, qdd


def random_fourier(rng, n, harmonics, wf, amplitude):
    """Random coefficients, scaled so that each joint stays within `amplitude` of the middle of its range."""
    centre, half = (LOWER[:n] + UPPER[:n]) / 2, (UPPER[:n] - LOWER[:n]) / 2 * amplitude
    a, b = rng.normal(size=(2, harmonics, n))
    l = np.arange(1, harmonics + 1)[:, None]
    reach = ((np.abs(a) + np.abs(b)) / (l * wf)).sum(0)          # bound on |q - q0|
    scale = np.minimum(half / reach, 2.0 / (np.abs(a) + np.abs(b)).sum(0))   # |qd| <= 2 rad/s too
    return Fourier(centre, a * scale, b * scale, wf)


def stack(Yb):
    """(samples, n, b) -> (samples * n, b), joint rows of one sample together."""
    return Yb.reshape(-1, Yb.shape[-1])


def exciting_trajectory(robot, rng, samples, period, harmonics=5, draws=20, amplitude=0.8):
    """The best of `draws` random Fourier trajectories by the condition number of the base regressor."""
    n, wf = robot.DOF, 2 * np.pi / period
    t = np.arange(samples) * period / samples
    best = None
    for _ in range(draws):
        traj = random_fourier(rng, n, harmonics, wf, amplitude)
        q, qd, qdd = traj(t)
        cond = np.linalg.cond(stack(robot.base_regressor(q, qd, qdd)))
        if best is None or cond < best[0]:
            best = (cond, traj)
    return best[1], best[0], t


def least_squares(W, tau, n, iterations=3):
    """OLS, then WLS with each joint's rows weighted by 1/sigma_j, sigma_j from the previous estimate's
    residuals (OLS first: its errors, set by the large torques, leak into the small joints' residuals,
    so the weights are refined a few times).

    Returns (ols, wls, standard deviations of the WLS estimate, sigma)."""
    ols = np.linalg.lstsq(W, tau, rcond=None)[0]
    estimate = ols
    rows, b = len(tau) // n, W.shape[1]
    for _ in range(iterations):
        residual = (tau - W @ estimate).reshape(rows, n)
        sigma = np.sqrt((residual ** 2).sum(0) / (rows - b / n))     # per joint: its share of the b unknowns
        sigma = np.maximum(sigma, 1e-12 * max(sigma.max(), 1e-300))  # exact data: no zero weights
        weight = np.tile(1 / sigma, rows)
        Ww, tw = W * weight[:, None], tau * weight
        estimate = np.linalg.lstsq(Ww, tw, rcond=None)[0]
    cov = np.linalg.inv(Ww.T @ Ww)                              # unit variance after weighting
    return ols, estimate, np.sqrt(np.diag(cov)), sigma


def run(robot, noise=0.02, samples=1000, period=10.0, seed=0, draws=20):
    """Identify; returns the numbers the example prints (and the test checks)."""
    rng = np.random.default_rng(seed)
    n = robot.DOF
    true = robot.base_parameters(robot.PARAMETERS)
    traj, cond, t = exciting_trajectory(robot, rng, samples, period, draws=draws)
    q, qd, qdd = traj(t)
    tau = robot.inverse_dynamics(q, qd, qdd)                    # the arm, with friction and armature
    scale = noise * np.sqrt((tau ** 2).mean(0))                 # noise: a fraction of each joint's RMS torque
    measured = tau + rng.normal(size=tau.shape) * scale
    W = stack(robot.base_regressor(q, qd, qdd))
    ols, wls, std, sigma = least_squares(W, measured.ravel(), n)
    # validation: another trajectory, predicted torques against the true ones
    other, _, tv = exciting_trajectory(robot, rng, samples, period, draws=1)
    qv, qdv, qddv = other(tv)
    tau_v = robot.inverse_dynamics(qv, qdv, qddv)
    predicted = np.einsum("tij,j->ti", robot.base_regressor(qv, qdv, qddv), wls)
    rms = np.sqrt(((predicted - tau_v) ** 2).mean(0))
    return {"t": t, "tv": tv, "tau_v": tau_v, "predicted": predicted, "true": true, "ols": ols, "wls": wls,
            "std": std, "sigma": sigma, "noise": scale, "cond": cond, "b": len(true), "names": robot.BASE_PARAMETER_NAMES,
            "z": (wls - true) / std,
            "ols_error": float(np.abs(ols - true).max()), "wls_error": float(np.abs(wls - true).max()),
            "validation_rms": rms, "validation_relative": float(np.sqrt(((predicted - tau_v) ** 2).mean()) /
                                                              np.sqrt((tau_v ** 2).mean()))}


def plot(result, out):
    n = result["tau_v"].shape[1]
    fig, axes = figure(n, 1, figsize=(8, 1.6 * n), sharex=True)
    for j, ax in enumerate(axes):
        ax.plot(result["tv"], result["tau_v"][:, j], lw=3, alpha=0.4, label="true")
        ax.plot(result["tv"], result["predicted"][:, j], "k--", lw=1, label="predicted (WLS)")
        ax.set_ylabel(f"tau{j + 1} [N m]", fontsize=8)
    axes[0].set_title(f"validation trajectory: torques predicted from {result['b']} identified base parameters "
                      f"(relative RMS error {result['validation_relative']:.2e})", fontsize=9)
    axes[0].legend(fontsize=8)
    axes[-1].set_xlabel("time [s]")
    save(fig, out)


def main(argv=None):
    p = plot_parser(__doc__.splitlines()[0], out="identification.png")
    p.add_argument("--noise", type=float, default=0.02, help="noise std as a fraction of each joint's RMS torque")
    p.add_argument("--samples", type=int, default=1000, help="samples over one period of the trajectory")
    p.add_argument("--period", type=float, default=10.0, help="trajectory period, s")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    robot = generate()
    r = run(robot, args.noise, args.samples, args.period, args.seed)
    print(f"Panda with friction and armature ({JOINT_PARAMS.name}): {len(robot.PARAMETERS)} standard parameters, "
          f"{r['b']} base parameters")
    print(f"exciting trajectory: 5-harmonic Fourier series, period {args.period:g} s, {args.samples} samples; "
          f"condition number of the base regressor {r['cond']:.1f}")
    print(f"noise: {args.noise:g} x RMS torque per joint = {np.array2string(r['noise'], precision=3)} N m; "
          f"estimated from the residuals {np.array2string(r['sigma'], precision=3)}")
    print(f"largest error of a base parameter: OLS {r['ols_error']:.3e}, WLS {r['wls_error']:.3e}; "
          f"largest |error| / std (WLS) {np.abs(r['z']).max():.2f}")
    print(f"{'base parameter':<28s} {'true':>12s} {'WLS':>12s} {'std':>10s}")
    for name, a, b_, s in zip(r["names"], r["true"], r["wls"], r["std"]):
        print(f"{name:<28s} {a:12.5f} {b_:12.5f} {s:10.2e}")
    print(f"validation trajectory: RMS torque error per joint {np.array2string(r['validation_rms'], precision=4)} N m "
          f"(relative {r['validation_relative']:.3e})")
    if not args.no_plot:
        plot(r, args.out)
    return r


if __name__ == "__main__":
    main()
