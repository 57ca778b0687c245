"""A parallel gripper with a mimic joint: two fingers, one coordinate (symdyn's reduced coordinates).

examples/parallel_gripper.urdf: a wrist and two prismatic fingers; the right finger follows the left
one through a <mimic> (a rack and pinion), mirrored, and is heavier. symdyn generates the dynamics
in the reduced coordinates q = (wrist, finger): the right finger has no coordinate of its own, yet
its mass, motion and gravity load are in M(q), forward_dynamics and gravity (docs/algorithms.md §17).
Two runs, RK4 on the generated forward_dynamics:

1. free motion (tau = 0, no friction): the energy 1/2 qd.M(q) qd - m g.com(q) stays constant to the
   integration error;
2. closing on an object: PD on the wrist and the finger with gravity compensation; the fingertips
   (frames of both fingers, from frame_placement) stay mirrored about the palm's axis, their gap is
   0.02 + 2 q_finger at every step, and the gripper settles at its targets.

    python examples/mimic_gripper.py [--robot examples/parallel_gripper.urdf] [--steps 2000] [--out mimic_gripper.png: plot]
"""
import numpy as np

from _common import fail, figure, generate_module, parser, rk4, save


def energy(robot, mass, gravity, q, qd):
    kinetic = 0.5 * np.einsum("ti,tij,tj->t", qd, robot.mass_matrix(q), qd)
    return kinetic - mass * robot.center_of_mass(q) @ np.asarray(gravity)


def run(robot, mass, gravity, steps=2000, dt=1e-3, target=(0.4, 0.015), kp=(40.0, 400.0), kd=(4.0, 10.0)):
    """Both runs; returns the series and the numbers the example prints."""
    kp, kd, target = np.array(kp), np.array(kd), np.array(target)

    def free(t, x):
        return np.concatenate([x[2:], robot.forward_dynamics(x[:2], x[2:], np.zeros(2))])

    t, x = rk4(free, np.array([0.5, 0.01, -1.0, 0.05]), dt, steps)
    E = energy(robot, mass, gravity, x[:, :2], x[:, 2:])

    def closing(t, x):
        q, qd = x[:2], x[2:]
        tau = kp * (target - q) - kd * qd + robot.gravity(q)
        return np.concatenate([qd, robot.forward_dynamics(q, qd, tau)])

    _, y = rk4(closing, np.array([0.0, 0.035, 0.0, 0.0]), dt, steps)
    q = y[:, :2]
    placement = robot.frame_placement(q)                 # (steps + 1, 2, 4, 4): tip_left, tip_right
    left, right = placement[:, 0, :3, 3], placement[:, 1, :3, 3]
    palm_axis = np.stack([np.zeros_like(q[:, 0]), -np.sin(q[:, 0]), np.cos(q[:, 0])], axis=-1)
    midpoint = 0.5 * (left + right) - np.array([0, 0, 0.2])
    gap = np.linalg.norm(left - right, axis=-1)
    return {"t": t, "energy": E, "q_free": x[:, :2], "q": q, "gap": gap,
            "energy_drift": float(np.abs(E - E[0]).max() / np.abs(E[0])),
            "gap_error": float(np.abs(gap - (0.02 + 2 * q[:, 1])).max()),
            "midpoint_off_axis": float(np.linalg.norm(np.cross(midpoint, palm_axis), axis=-1).max()),
            "final_error": float(np.abs(q[-1] - target).max()), "target": target}


def plot(result, out, title):
    t = result["t"]
    fig, (a, b) = figure(2, 1, figsize=(7, 6), sharex=True)
    a.plot(t, result["energy"] - result["energy"][0])
    a.set_ylabel("E(t) - E(0) [J], free motion")
    a.set_title(title)
    b.plot(t, result["gap"], label="tip gap (frame_placement)")
    b.plot(t, 0.02 + 2 * result["q"][:, 1], "k--", lw=1, label="0.02 + 2 q_finger")
    b.set_ylabel("finger gap [m], closing")
    b.set_xlabel("time [s]")
    b.legend()
    save(fig, out)


def main(argv=None):
    p = parser(__doc__.splitlines()[0], robot="examples/parallel_gripper.urdf", steps=2000, out="mimic_gripper.png")
    p.set_defaults(out=None)           # a plot only when asked for: --out FILE
    args = p.parse_args(argv)
    if not str(args.robot).lower().endswith(".urdf"):
        fail(f"{args.robot}: --robot takes a URDF with a <mimic> joint (generated here, in a temporary folder)")
    robot, model = generate_module(args.robot, args.c)
    r = run(robot, model.total_mass, model.gravity, args.steps, args.dt)
    print(f"{model.name}: {model.nv} coordinates {', '.join(model.joint_names)}; mimic joints: "
          + ", ".join(f"{model.joints[m.joint].name} = {m.multiplier:g} * {model.joints[m.master].name} + {m.offset:g}"
                      for m in model.mimic) + f"; {args.steps} RK4 steps of {args.dt:g} s")
    print(f"free motion: energy drift {r['energy_drift']:.2e} (relative, RK4)")
    print(f"closing: tip gap vs 0.02 + 2 q_finger {r['gap_error']:.2e} m, tip midpoint off the palm axis "
          f"{r['midpoint_off_axis']:.2e} m, final error {r['final_error']:.2e} (targets {r['target'].tolist()})")
    if args.out and not args.no_plot:
        plot(r, args.out, f"parallel gripper, one finger coordinate, RK4 dt = {args.dt:g} s")
    return r


if __name__ == "__main__":
    main()
