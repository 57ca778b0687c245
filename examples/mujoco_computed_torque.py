"""Computed-torque control of a MuJoCo simulation with symdyn's inverse dynamics generated from the same MJCF file.

MuJoCo simulates (mj_step, its own integrator); at every step the controller reads MuJoCo's state d.qpos,
d.qvel as they are (an MJCF model's generated functions take MuJoCo's qpos and qvel) and applies

    tau = inverse_dynamics(q, qd, qdd_d + Kd (qd_d - qd) + Kp (q_d - q))      (d.qfrc_applied)

with the generated inverse_dynamics, which includes the joints' armature, damping and springs (stiffness
about springref) and the bodies' gravcomp as MuJoCo has them.
MuJoCo's constraint solver (joint limits, contacts) and its actuators are switched off: the controller
drives every joint. The desired trajectory is a sinusoid per joint; the model starts off it, so the
tracking error has to fall from e0 to the floor that the sampled (held) torque leaves.

    python examples/mujoco_computed_torque.py [--model gymnasium:ant] [--steps 2000]

--model takes an MJCF file or gymnasium:NAME (gymnasium's envs/mujoco/assets/NAME.xml). An MJCF model is
generated in MuJoCo's coordinates, so free and ball joints take d.qpos and d.qvel as they are too (the Ant's
torso is held by a wrench on its free joint, the legs follow sinusoids). gymnasium:humanoid, with springs on
its joints, tracks too (final error 3.5e-4 of 0.1 here, 2000 steps); MuJoCo's fluid forces and tendon springs
are not modelled: models with them track less well.
Exits with status 1 if the error does not fall below --tolerance.
"""
import sys
from pathlib import Path

import numpy as np

from _common import fail, figure, generate_module, plot_parser, save
from computed_torque import trajectory


def model_file(name):
    """An MJCF path, or gymnasium:NAME for one of gymnasium's assets."""
    if not name.startswith("gymnasium:"):
        return Path(name)
    try:
        import gymnasium
    except ImportError:
        fail("gymnasium is not installed: pip install gymnasium, or give --model a file")
    return Path(gymnasium.__file__).parent / "envs" / "mujoco" / "assets" / (name.split(":", 1)[1] + ".xml")


def simulation(path, dt):
    """MuJoCo's model and data, with constraints, contacts and actuators off and step dt."""
    import mujoco
    m = mujoco.MjModel.from_xml_path(str(path))
    off = mujoco.mjtDisableBit
    m.opt.disableflags |= off.mjDSBL_CONSTRAINT | off.mjDSBL_ACTUATION | off.mjDSBL_CONTACT
    m.opt.timestep = dt
    return m, mujoco.MjData(m)


def desired(m, amplitude=0.2):
    """t -> (qpos_d, qvel_d, qacc_d): each hinge and slide joint a sinusoid about qpos0, free and ball joints
    held at qpos0."""
    import mujoco
    moving = [(int(m.jnt_qposadr[j]), int(m.jnt_dofadr[j])) for j in range(m.njnt)
              if int(m.jnt_type[j]) in (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE))]
    wave = trajectory(len(moving), amplitude)
    qa, da = [a for a, _ in moving], [d for _, d in moving]

    def at(t):
        q, qd, qdd = wave(t)
        qpos, qvel, qacc = m.qpos0.copy(), np.zeros(m.nv), np.zeros(m.nv)
        qpos[qa] += q
        qvel[da], qacc[da] = qd, qdd
        return qpos, qvel, qacc
    return at


def run(path, steps=2000, dt=1e-3, wn=20.0, e0=0.1):
    """Track the desired motion from an offset start: {t, error (steps, nv), error_norm, max_error, final_error}.
    The error is MuJoCo's difference of configurations (mj_differentiatePos), velocity-sized."""
    import mujoco
    robot, model = generate_module(path, functions=["inverse_dynamics", "forward_dynamics"])
    m, d = simulation(path, dt)
    if robot.NQ != m.nq or tuple(robot.JOINT_NAMES) != tuple(m.joint(j).name or robot.JOINT_NAMES[j]
                                                             for j in range(m.njnt)):
        fail(f"{path}: the generated joints differ from MuJoCo's")
    if m.nq != m.nv and getattr(model, "conventions", "pinocchio") != "mujoco":
        fail(f"{path}: has free or ball joints: generate it in MuJoCo's coordinates (--conventions mujoco)")
    n = m.nv
    q_d = desired(m)
    start, qvel0, _ = q_d(0.0)
    mujoco.mj_integratePos(m, start, e0 * np.linspace(1.0, -1.0, n), 1.0)
    d.qpos[:], d.qvel[:] = start, qvel0
    kp, kd = wn ** 2, 2 * wn
    errors = np.empty((steps, n))
    for i in range(steps):
        qpos, qvel, qacc = q_d(d.time)
        mujoco.mj_differentiatePos(m, errors[i], 1.0, d.qpos, qpos)
        a = qacc + kd * (qvel - d.qvel) + kp * errors[i]
        d.qfrc_applied[:] = robot.inverse_dynamics(d.qpos, d.qvel, a)
        mujoco.mj_step(m, d)
    norm = np.abs(errors).max(axis=1)
    return {"t": dt * np.arange(steps), "error": errors, "error_norm": norm, "max_error": float(norm.max()),
            "final_error": float(norm[-steps // 10:].max()), "dof": n, "model": model.name}


def plot(result, out):
    fig, ax = figure(figsize=(7, 3.5))
    ax.semilogy(result["t"], np.maximum(result["error_norm"], 1e-17))
    ax.set_xlabel("time [s]")
    ax.set_ylabel("max |q_d - qpos| [rad or m]")
    ax.set_title(f"MuJoCo {result['model']} under computed torque (symdyn inverse_dynamics)")
    save(fig, out)


def main(argv=None):
    p = plot_parser(__doc__.splitlines()[0], out="mujoco_computed_torque.png")
    p.add_argument("--model", default="gymnasium:ant", help="MJCF file or gymnasium:NAME (default gymnasium:ant)")
    p.add_argument("--steps", type=int, default=2000, help="MuJoCo steps (default 2000)")
    p.add_argument("--dt", type=float, default=1e-3, help="MuJoCo's timestep, s (default 0.001)")
    p.add_argument("--wn", type=float, default=20.0, help="closed-loop natural frequency, rad/s (default 20)")
    p.add_argument("--tolerance", type=float, default=1e-3, help="largest final error accepted (default 1e-3)")
    args = p.parse_args(argv)
    path = model_file(args.model)
    r = run(path, args.steps, args.dt, args.wn)
    print(f"computed torque on MuJoCo's {r['model']} ({r['dof']} DOF), {args.steps} mj_step of {args.dt:g} s, "
          f"Kp = {args.wn ** 2:g}, Kd = {2 * args.wn:g}")
    print(f"max tracking error   {r['max_error']:.3e} (at t = 0)")
    print(f"final tracking error {r['final_error']:.3e} (last tenth of the run)")
    if not args.no_plot:
        plot(r, args.out)
    if not r["final_error"] < args.tolerance:
        print(f"FAIL: the final error is not below {args.tolerance:g}", file=sys.stderr)
        raise SystemExit(1)
    return r


if __name__ == "__main__":
    main()
