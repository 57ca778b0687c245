"""solo12 (floating base) lands on its 4 feet and stands: free fall, a plastic foot impact, then
constrained dynamics on 4 point contacts with Baumgarte stabilization.

The module is generated with `--floating-base --contact FL_FOOT,FR_FOOT,HL_FOOT,HR_FOOT` (done here
into --workdir unless --robot names one). A joint PD holds the legs at a crouched posture; the
robot is dropped from --height above the ground with all joints at that posture:
  1. flight: forward_dynamics until the feet reach the ground (the step is cut at the contact time);
  2. impact: v+ = impact(q, v, e = 0): the feet stop (J v+ = 0), kinetic energy is lost, and the
     impulses equal the change of momentum: sum P = m (v_com+ - v_com-) (gravity gives no impulse);
  3. stance: (qdd, lambda) = constrained_forward_dynamics_baumgarte(q, v, tau, (Kp, Kd), phi),
     phi = the feet's distance from their touchdown points; semi-implicit Euler on the Lie group.
     The robot comes to rest and the contact forces carry its weight, sum lambda_z = m g; the
     feet's drift stays bounded by the stabilization (printed beside a run without it).

    python examples/solo12_contacts.py [--height 0.05] [--steps 1500] [--dt 1e-3] [--out solo12_contacts.png]
"""
from pathlib import Path

import numpy as np

from _common import fail, figure, generate_module, load_robot_module, parser, save, ticker

FEET = ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")
#: HAA, HFE, KFE per leg (front legs bend forward, hind legs backward)
CROUCH = np.array([0.0, 0.8, -1.6, 0.0, 0.8, -1.6, 0.0, -0.8, 1.6, 0.0, -0.8, 1.6])
FUNCTIONS = ("forward_dynamics", "gravity", "frame_placement", "com_jacobian", "mass_matrix", "constraint_jacobian",
             "constrained_forward_dynamics", "constrained_forward_dynamics_baumgarte", "impact")


def generated_solo12(use_c=False, folder=None):
    """solo12 from example-robot-data, floating, on its 4 feet: the functions this example needs, generated
    (into `folder`, default a temporary one) and loaded."""
    import site
    found = [Path(p) / "cmeel.prefix/share/example-robot-data/robots/solo_description/robots/solo12.urdf"
             for p in site.getsitepackages() + [site.getusersitepackages()]]
    urdf = next((p for p in found if p.exists()), None)
    if urdf is None:
        fail("solo12.urdf not found: pip install example-robot-data (or pass --robot)")
    return generate_module(urdf, use_c, FUNCTIONS, folder, floating_base=True, contacts=",".join(FEET))[0]


def run(robot, height=0.05, steps=1500, dt=1e-3, kp=30.0, kd=1.0, baumgarte=(400.0, 40.0), restitution=0.0):
    """The drop, the impact and the stance; returns the time series and the numbers checked."""
    n = robot.NV
    if tuple(getattr(robot, "CONSTRAINTS", ())) != tuple(f + ":3d" for f in FEET):
        fail(f"the module's contacts are {getattr(robot, 'CONSTRAINTS', ())}: generate it with "
             f"--floating-base --contact {','.join(FEET)}")
    q = robot.neutral()
    q[7:] = CROUCH
    ground = robot.frame_placement(q)[:, 2, 3].min()
    q[2] += height - ground                                       # lowest foot `height` above z = 0
    v = np.zeros(n)
    g = 9.81

    def torque(q, v):
        """Joint PD about the crouch (the base is not actuated)."""
        tau = np.zeros(n)
        tau[6:] = kp * (CROUCH - q[7:]) - kd * v[6:]
        return tau

    t, log = 0.0, {"t": [], "energy": [], "force": [], "drift": [], "phase": []}
    M = robot.mass_matrix

    def record(t, q, v, force, drift, phase):
        log["t"].append(t)
        log["energy"].append(0.5 * v @ M(q) @ v)
        log["force"].append(force)
        log["drift"].append(drift)
        log["phase"].append(phase)

    # 1. flight
    while True:
        qdd = robot.forward_dynamics(q, v, torque(q, v))
        v_next = v + dt * qdd
        q_next = robot.integrate(q, v_next, dt)
        low = robot.frame_placement(q_next)[:, 2, 3].min()
        if low <= 0.0:                               # touchdown within this step: cut it at the ground
            z0 = robot.frame_placement(q)[:, 2, 3].min()
            h = dt * z0 / (z0 - low)
            v = v + h * qdd
            q = robot.integrate(q, v, h)
            t += h
            break
        q, v, t = q_next, v_next, t + dt
        record(t, q, v, 0.0, 0.0, "flight")
    # 2. impact
    total = robot.com_jacobian(q)
    J = robot.constraint_jacobian(q)
    before = 0.5 * v @ M(q) @ v
    v_plus, impulse = robot.impact(q, v, np.array([restitution]))
    after = 0.5 * v_plus @ M(q) @ v_plus
    m = _total_mass(robot, q)
    momentum_error = np.abs(impulse.reshape(4, 3).sum(axis=0) - m * total @ (v_plus - v)).max()
    impact = {"time": t, "speed": float(-(total @ v)[2]), "energy_before": before, "energy_after": after,
              "feet_speed_after": float(np.abs(J @ v_plus).max()),
              "impulse_z": float(impulse.reshape(4, 3)[:, 2].sum()),
              "momentum_error": float(momentum_error)}
    v = v_plus
    record(t, q, v, 0.0, 0.0, "impact")
    # 3. stance
    anchors = robot.frame_placement(q)[:, :3, 3]
    free = _stance(robot, q.copy(), v.copy(), t, steps, dt, torque, anchors, None)
    stance = _stance(robot, q, v, t, steps, dt, torque, anchors, baumgarte, record)
    weight = m * g
    return {**log, "impact": impact, "weight": weight, "mass": m,
            "final_force": stance["force"], "final_speed": stance["speed"],
            "drift_stabilized": stance["drift"], "drift_free": free["drift"], "baumgarte": baumgarte,
            "contact_time": impact["time"], "kp": kp, "kd": kd}


def _total_mass(robot, q):
    """m from the generated gravity: the force that holds the free-flyer is m g (9.81 m/s^2 in the URDF model)."""
    return float(np.linalg.norm(robot.gravity(q)[:3]) / 9.81)


def _stance(robot, q, v, t, steps, dt, torque, anchors, gains, record=None):
    """Constrained dynamics on the 4 feet; the largest drift of the feet from their anchors."""
    worst, tick = 0.0, ticker(steps, "stance steps")
    for k in range(steps):
        tick(k)
        error = (robot.frame_placement(q)[:, :3, 3] - anchors).ravel()
        if gains is None:
            qdd, lam = robot.constrained_forward_dynamics(q, v, torque(q, v))
        else:
            qdd, lam = robot.constrained_forward_dynamics_baumgarte(q, v, torque(q, v), np.array(gains), error)
        v = v + dt * qdd
        q = robot.integrate(q, v, dt)
        t += dt
        drift = float(np.abs((robot.frame_placement(q)[:, :3, 3] - anchors)).max())
        worst = max(worst, drift)
        if record:
            record(t, q, v, float(lam.reshape(4, 3)[:, 2].sum()), drift, "stance")
    return {"force": float(lam.reshape(4, 3)[:, 2].sum()), "speed": float(np.abs(v).max()), "drift": worst}


def plot(r, out):
    t = np.array(r["t"])
    stance = np.array([p == "stance" for p in r["phase"]])
    fig, (a, b, c) = figure(1, 3, figsize=(13, 3.8))
    a.semilogy(t[1:], r["energy"][1:])
    a.axvline(r["contact_time"], color="k", ls=":", label="foot impact")
    a.set_xlabel("time [s]")
    a.set_ylabel("kinetic energy [J]")
    a.legend()
    b.plot(t[stance], np.array(r["force"])[stance] / r["weight"])
    b.axhline(1.0, color="k", ls=":", lw=1)
    b.set_xlabel("time [s]")
    b.set_ylabel("sum of vertical contact forces / m g")
    c.semilogy(t[stance], np.maximum(np.array(r["drift"])[stance], 1e-18))
    c.set_xlabel("time [s]")
    c.set_ylabel("largest foot drift [m] (Baumgarte)")
    save(fig, out)


def main(argv=None):
    p = parser(__doc__.splitlines()[0], robot=None, steps=1500, out="solo12_contacts.png")
    p.add_argument("--height", type=float, default=0.05, help="drop height of the lowest foot, m (default 0.05)")
    p.add_argument("--workdir", default=None, help="folder for the generated module (default: a temporary one)")
    args = p.parse_args(argv)
    robot = (load_robot_module(args.robot, args.c, fixed_base=False) if args.robot
             else generated_solo12(args.c, args.workdir))
    r = run(robot, args.height, args.steps, args.dt)
    i = r["impact"]
    print(f"solo12 ({robot.NV} DOF, {r['mass']:.4f} kg) dropped from {args.height:g} m, joint PD Kp = {r['kp']:g}, "
          f"Kd = {r['kd']:g}, dt = {args.dt:g} s")
    print(f"touchdown at t = {i['time']:.4f} s, {i['speed']:.4f} m/s; plastic impact: kinetic energy "
          f"{i['energy_before']:.5f} -> {i['energy_after']:.5f} J, feet speed after {i['feet_speed_after']:.1e} m/s, "
          f"sum of impulses - change of momentum {i['momentum_error']:.1e} N s")
    print(f"stance ({args.steps} steps): sum of vertical contact forces {r['final_force']:.6f} N, weight m g "
          f"{r['weight']:.6f} N; largest joint speed at the end {r['final_speed']:.1e}")
    print(f"largest foot drift: {r['drift_stabilized']:.2e} m with Baumgarte (Kp, Kd) = {r['baumgarte']}, "
          f"{r['drift_free']:.2e} m without")
    if not args.no_plot:
        plot(r, args.out)
    return r


if __name__ == "__main__":
    main()
