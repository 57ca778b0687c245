"""MJCF models (symdyn.readers.mjcf) against MuJoCo itself: one small file per feature (tests/data/mjcf),
every gymnasium and dm_control suite model MuJoCo loads, and bad input.

MuJoCo runs with its constraint solver, actuation and contacts off, so that mj_inverse's qfrc_inverse is
M a + qfrc_bias - qfrc_passive (damping here). An MJCF model is in MuJoCo's coordinates by default
(symdyn.conventions): compared as it is. With conventions="pinocchio" (hinge and slide coordinates are
the same) ball and free joints are converted here (`Layout`): quaternions (w, x, y, z) -> (x, y, z, w), a
free joint's linear velocity world axes -> body axes.
"""
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")

from symdyn.engine import Engine  # noqa: E402
from symdyn.errors import RobotFileError  # noqa: E402
from symdyn.oracle.mujoco import COUNTERPARTS as MUJOCO_COUNTERPARTS  # noqa: E402
from symdyn.readers.load import load_robot  # noqa: E402

DATA = Path(__file__).parent / "data" / "mjcf"
ROOT = Path(__file__).resolve().parents[1]
TOL = 1e-9
#: MuJoCo passive forces symdyn does not model yet: zeroed in MuJoCo for the comparison, and the
#: reader must have warned about each (test_unmodelled_passive_forces_warn)
UNMODELLED = ("ball and free joint stiffness", "fluid", "tendon stiffness and damping")


def mujoco_model(path, zero_unmodelled=False):
    return configure(mujoco.MjModel.from_xml_path(str(path)), zero_unmodelled)


def configure(m, zero_unmodelled=False):
    """MuJoCo model `m` with its constraint solver, actuation and contacts off (and, if asked, the passive
    forces symdyn does not model zeroed)."""
    off = mujoco.mjtDisableBit
    m.opt.disableflags |= off.mjDSBL_CONSTRAINT | off.mjDSBL_ACTUATION | off.mjDSBL_CONTACT
    if zero_unmodelled:
        hinge_slide = np.isin(m.jnt_type, [mujoco.mjtJoint.mjJNT_HINGE, mujoco.mjtJoint.mjJNT_SLIDE])
        m.jnt_stiffness[~hinge_slide] = 0        # hinge and slide springs are modelled: left on
        m.tendon_stiffness[:] = m.tendon_damping[:] = 0
        m.opt.density = m.opt.viscosity = 0
    return m


class Layout:
    """MuJoCo's coordinates <-> symdyn's for the model's ball and free joints (hinge, slide: the same)."""

    def __init__(self, m, model):
        pinocchio = getattr(model, "conventions", "pinocchio") == "pinocchio"    # else MuJoCo's: nothing to convert
        self.free = [(int(m.jnt_qposadr[j]), int(m.jnt_dofadr[j])) for j in range(m.njnt)
                     if pinocchio and int(m.jnt_type[j]) == int(mujoco.mjtJoint.mjJNT_FREE)]
        self.ball = [int(m.jnt_qposadr[j]) for j in range(m.njnt)
                     if pinocchio and int(m.jnt_type[j]) == int(mujoco.mjtJoint.mjJNT_BALL)]
        self.nv = m.nv
        assert model.nq == m.nq and model.nv == m.nv

    def q(self, qpos):
        q = np.array(qpos, dtype=float)
        for a in [a + 3 for a, _ in self.free] + self.ball:
            q[a:a + 4] = np.roll(qpos[a:a + 4], -1)
        return q

    def T(self, qpos):
        """v_symdyn = T v_mujoco (a free joint's linear velocity in body axes)."""
        T = np.eye(self.nv)
        for a, d in self.free:
            R = np.zeros(9)
            mujoco.mju_quat2Mat(R, qpos[a + 3:a + 7] / np.linalg.norm(qpos[a + 3:a + 7]))
            T[d:d + 3, d:d + 3] = R.reshape(3, 3).T
        return T

    def dT_v(self, qpos, qvel):
        """(d/dt T) v: the rate of the body-axes linear velocity from the rotating axes, -w x v_body."""
        out = np.zeros(self.nv)
        vb = self.T(qpos) @ qvel
        for _, d in self.free:
            out[d:d + 3] = -np.cross(vb[d + 3:d + 6], vb[d:d + 3])
        return out


def full_mass_matrix(m, d):
    M = np.zeros((m.nv, m.nv))
    try:
        mujoco.mj_fullM(m, d, M)            # MuJoCo >= 4
    except TypeError:
        mujoco.mj_fullM(m, M, d.qM)
    return M


def random_state(m, rng):
    qpos = m.qpos0 + rng.uniform(-0.8, 0.8, m.nq)
    for j in range(m.njnt):
        kind = int(m.jnt_type[j])
        if kind in (int(mujoco.mjtJoint.mjJNT_FREE), int(mujoco.mjtJoint.mjJNT_BALL)):
            a = m.jnt_qposadr[j] + (3 if kind == int(mujoco.mjtJoint.mjJNT_FREE) else 0)
            qpos[a:a + 4] /= np.linalg.norm(qpos[a:a + 4])
    return qpos, rng.uniform(-1, 1, m.nv), rng.uniform(-1, 1, m.nv)


def close(a, b):
    scale = max(np.abs(b).max(), 1.0)
    err = np.abs(np.asarray(a) - np.asarray(b)).max() / scale
    assert err <= TOL, err
    return err


def check_against_mujoco(path, states=5, zero_unmodelled=False, frames=True, module=None, conventions=None,
                         oracle=None):
    """M, inverse dynamics, bias forces, forward dynamics and site kinematics of the numeric engine (or of
    a generated `module`) agree with MuJoCo's (the model compiled from `path`, or the MjModel `oracle`)."""
    m = mujoco_model(path, zero_unmodelled) if oracle is None else configure(oracle, zero_unmodelled)
    d = mujoco.MjData(m)
    model = load_robot(path) if conventions is None else load_robot(path, conventions=conventions)
    e = Engine(model) if module is None else module
    lay = Layout(m, model)
    assert model.joint_names == tuple(mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, j) or model.joint_names[j]
                                      for j in range(m.njnt))
    rng = np.random.default_rng(7)
    for _ in range(states):
        qpos, qvel, qacc = random_state(m, rng)
        q, T = lay.q(qpos), lay.T(qpos)
        v, a = T @ qvel, T @ qacc + lay.dT_v(qpos, qvel)
        d.qpos[:], d.qvel[:], d.qacc[:] = qpos, qvel, qacc
        mujoco.mj_inverse(m, d)
        M = full_mass_matrix(m, d)
        close(T.T @ e.mass_matrix(q) @ T, M)
        close(T.T @ e.inverse_dynamics(q, v, a), d.qfrc_inverse)
        # MuJoCo's qacc = 0 is symdyn's a = dT v (the free joint's rotating axes)
        bias = e.nonlinear_effects(q, v) + e.mass_matrix(q) @ lay.dT_v(qpos, qvel)
        close(T.T @ bias, d.qfrc_bias - d.qfrc_passive)
        tau = rng.uniform(-1, 1, m.nv)
        d.qfrc_applied[:] = tau
        mujoco.mj_forward(m, d)
        a_sd = e.forward_dynamics(q, v, np.linalg.solve(T.T, tau))
        close(np.linalg.solve(T, a_sd - lay.dT_v(qpos, qvel)), d.qacc)
        if frames and m.nsite:
            _check_sites(m, d, e, q, T)
        if hasattr(e, "gravity"):           # qfrc_bias at rest: no springs, no gravcomp
            d.qvel[:] = 0
            mujoco.mj_forward(m, d)
            close(T.T @ e.gravity(q), d.qfrc_bias)
    return model


def site_frames(m):
    """The FRAMES of an MJCF model: its sites, in MuJoCo's order (a site named like a body: NAME_site)."""
    bodies = {mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, b) for b in range(m.nbody)}
    names = [mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_SITE, s) for s in range(m.nsite)]
    return tuple(f"{n}_site" if n in bodies else n for n in names)


def _check_sites(m, d, e, q, T):
    placement, J = e.frame_placement(q), e.frame_jacobian(q)
    assert e.FRAMES[:m.nsite] == site_frames(m)          # then the frames of loop closures
    for s in range(m.nsite):
        f = s
        close(placement[f][:3, 3], d.site_xpos[s])
        close(placement[f][:3, :3], d.site_xmat[s].reshape(3, 3))
        jacp, jacr = np.zeros((3, m.nv)), np.zeros((3, m.nv))
        mujoco.mj_jacSite(m, d, jacp, jacr, s)
        close(J[f] @ T, np.vstack([jacp, jacr]))


FEATURES = ["hinge_slide_chain", "orientations", "defaults_frames", "include_main", "ball", "free",
            "armature_damping", "inertial", "geoms", "bounds", "totalmass", "mesh", "equality", "springs", "gravcomp",
            "coupling", "coupling_fixed", "coupling_inactive", "coupling_nonlinear", "ball_free_damping"]


@pytest.mark.parametrize("conventions", [None, "pinocchio"], ids=["mujoco", "pinocchio"])
@pytest.mark.parametrize("name", FEATURES)
def test_feature_matches_mujoco(name, conventions):
    """MuJoCo's coordinates (an MJCF file's default) compared directly; Pinocchio's through Layout."""
    model = check_against_mujoco(DATA / f"{name}.xml", conventions=conventions)
    assert model.conventions == (conventions or "mujoco")
    if conventions is None:            # MuJoCo's coordinates: neutral() is qpos0 (the reader's, as MuJoCo's)
        m = mujoco_model(DATA / f"{name}.xml")
        assert np.allclose(Engine(model).neutral(), m.qpos0, rtol=0, atol=1e-12)
    m = mujoco_model(DATA / f"{name}.xml")
    assert model.nq == m.nq and model.nv == m.nv
    if m.nsite:   # sites are the default FRAMES, in MuJoCo's order
        assert tuple(f.name for f in model.kinematic_frames)[:m.nsite] == site_frames(m)


def test_masses_match_mujoco():
    """Every body's mass, COM and inertia (from geoms, meshes, inertial, bounds) as MuJoCo compiles them."""
    for name in FEATURES:
        m = mujoco_model(DATA / f"{name}.xml")
        model = load_robot(DATA / f"{name}.xml")
        total = sum(b.mass for b in model.bodies)
        moving = [b for b in range(1, m.nbody) if m.body_weldid[b] != 0]
        assert total == pytest.approx(sum(m.body_mass[b] for b in moving), rel=1e-12), name


def test_unnamed_joints_get_unique_names():
    model = load_robot(DATA / "free.xml")
    assert model.joint_names == ("torso_free", "hip", "ball_free")


def test_equality_constraints_become_loops():
    model = load_robot(DATA / "equality.xml")
    assert [c.describe() for c in model.constraints] == ["coupler-rocker:3d", "plate:6d", "block-rocker:6d",
                                                         "a-b:joint"]
    assert not any("<equality>" in w for w in model.provenance.warnings)
    # at MuJoCo's qpos0 the body closures hold: the connect point is where the rocker's copy of it is, and
    # the welded plate's frame is at its anchor in the world; the sites' weld holds the sites' frames
    m = mujoco_model(DATA / "equality.xml")
    e = Engine(model)
    placement = e.frame_placement(Layout(m, model).q(m.qpos0))
    names = list(e.FRAMES)
    connect, weld, sites, _ = model.constraints
    assert np.allclose(sites.placement[1], [0.05, 0.05, 0.05]) and np.allclose(sites.other_placement[1], [0, 0, 0.3])
    assert np.allclose(sites.other_placement[0], [[np.cos(np.pi / 6), 0, np.sin(np.pi / 6)], [0, 1, 0],
                                                  [-np.sin(np.pi / 6), 0, np.cos(np.pi / 6)]])
    p_coupler = placement[names.index("coupler")] @ np.r_[connect.placement[1], 1]
    p_rocker = placement[names.index("rocker")] @ np.r_[connect.other_placement[1], 1]
    assert np.allclose(p_coupler, p_rocker, atol=1e-14)
    block = placement[names.index("plate")]
    assert np.allclose(block[:3, :3], weld.other_placement[0], atol=1e-14)
    assert np.allclose(block @ np.r_[weld.placement[1], 1], np.r_[weld.other_placement[1], 1], atol=1e-14)


# --- <equality joint>: joint couplings, compared with MuJoCo's constraint rows and solver --------------

COUPLINGS = ["coupling", "coupling_fixed"]
CONSTRAINED = ("constraint_jacobian", "constraint_drift", "constrained_forward_dynamics",
               "constrained_forward_dynamics_baumgarte", "impact")


def mujoco_constrained(path):
    """MuJoCo with its constraint solver on for the <equality> rows only (no contacts, limits, frictionloss,
    actuation), dense Jacobians."""
    m = mujoco.MjModel.from_xml_path(str(path))
    off = mujoco.mjtDisableBit
    m.opt.disableflags |= off.mjDSBL_ACTUATION | off.mjDSBL_CONTACT | off.mjDSBL_LIMIT | off.mjDSBL_FRICTIONLOSS
    m.opt.jacobian = mujoco.mjtJacobian.mjJAC_DENSE
    return m


def _point_drift(m, d, model):
    """J_dot v of the model's constraints from MuJoCo: 0 for a joint coupling; for a connect of a site to
    the world, the site's classical acceleration at qacc = 0 without gravity (mj_objectAcceleration)."""
    qacc, gravity = d.qacc.copy(), m.opt.gravity.copy()
    d.qacc[:], m.opt.gravity[:] = 0, 0
    mujoco.mj_rnePostConstraint(m, d)
    out = []
    for c in model.constraints:
        if c.is_joint:
            out.append(0.0)
            continue
        assert c.kind == "3d" and c.other is None     # the feature files' connects: a site on the world
        site = next(s for s in range(m.nsite) if m.site_bodyid[s] == mujoco.mj_name2id(
            m, mujoco.mjtObj.mjOBJ_BODY, c.frame) and np.allclose(m.site_pos[s], c.placement[1]))
        acc = np.zeros(6)
        mujoco.mj_objectAcceleration(m, d, mujoco.mjtObj.mjOBJ_SITE, site, acc, 0)
        out += list(acc[3:])
    d.qacc[:], m.opt.gravity[:] = qacc, gravity
    return np.array(out)


def check_constraints_against_mujoco(path, states=5, module=None):
    """The joint couplings' (and loops') rows are MuJoCo's efc_J, their position error its efc_pos; the
    hard constrained dynamics equal those of MuJoCo's M, qacc_smooth, efc_J (and drift); MuJoCo's soft
    solver solves the same system regularized, (J M^-1 J^T + R) f = aref - J qacc_smooth, with symdyn's
    J M^-1 J^T; impact and Baumgarte satisfy their defining equations."""
    m = mujoco_constrained(path)
    d = mujoco.MjData(m)
    model = load_robot(path)
    e = Engine(model) if module is None else module
    rng = np.random.default_rng(13)
    for _ in range(states):
        qpos, qvel, _ = random_state(m, rng)
        tau = rng.uniform(-1, 1, m.nv)
        d.qpos[:], d.qvel[:], d.qfrc_applied[:] = qpos, qvel, tau
        mujoco.mj_forward(m, d)
        nc = d.nefc
        assert nc == sum(c.rows for c in model.constraints)
        assert np.all(d.efc_type[:nc] == mujoco.mjtConstraint.mjCNSTR_EQUALITY)
        J = d.efc_J[:nc * m.nv].reshape(nc, m.nv)
        close(e.constraint_jacobian(qpos), J)
        rows = np.cumsum([0] + [c.rows for c in model.constraints])
        for c, r in zip(model.constraints, rows):
            if c.is_joint:               # efc_pos = q[A] - offset - scale q[B]
                index = [m.jnt_qposadr[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, n)] for n in (c.frame, c.other)
                         if n is not None]
                phi = qpos[index[0]] - c.offset - (c.scale * qpos[index[1]] if len(index) > 1 else 0.0)
                close(phi, d.efc_pos[r])
        drift = _point_drift(m, d, model)
        close(e.constraint_drift(qpos, qvel), drift)
        M, a0 = full_mass_matrix(m, d), d.qacc_smooth.copy()
        A = J @ np.linalg.solve(M, J.T)
        lam = np.linalg.solve(A, -(J @ a0 + drift))
        qdd, lam_sd = e.constrained_forward_dynamics(qpos, qvel, tau)
        close(qdd, a0 + np.linalg.solve(M, J.T @ lam))
        close(lam_sd, lam)
        f = d.efc_force[:nc]           # MuJoCo's solver: J M^-1 J^T + R from symdyn's M and J
        A_sd = e.constraint_jacobian(qpos) @ np.linalg.solve(e.mass_matrix(qpos), e.constraint_jacobian(qpos).T)
        close((A_sd + np.diag(d.efc_R[:nc])) @ f, d.efc_aref[:nc] - J @ a0)
        close(e.forward_dynamics(qpos, qvel, tau + J.T @ f), d.qacc)
        gains, error = np.array([40.0, 9.0]), d.efc_pos[:nc].copy()
        qdd_b, _ = e.constrained_forward_dynamics_baumgarte(qpos, qvel, tau, gains, error)
        close(J @ qdd_b + drift, -gains[1] * J @ qvel - gains[0] * error)
        for restitution in (0.0, 0.5):
            vplus, impulse = e.impact(qpos, qvel, np.array([restitution]))
            close(J @ vplus, -restitution * J @ qvel)
            close(M @ (vplus - qvel), J.T @ impulse)
    return model


@pytest.mark.parametrize("name", COUPLINGS)
def test_joint_couplings_match_mujoco(name):
    model = check_constraints_against_mujoco(DATA / f"{name}.xml")
    assert any(c.is_joint for c in model.constraints)


def test_joint_coupling_constraints_read():
    """MuJoCo's y - y0 = c0 + c1 (x - x0) as q[A] = offset + scale q[B] (refs in degrees turned to radians;
    polycoef is not an angle; MuJoCo's default angle unit is the degree); without joint2, q[A] = y0 + c0;
    `info` lists each."""
    model = load_robot(DATA / "coupling.xml")
    c1, c2 = model.constraints
    assert (c1.kind, c1.frame, c1.other, c1.scale) == ("joint", "j2", "j1", -0.7)
    assert c1.offset == pytest.approx(np.radians(-20) + 0.1 + 0.7 * np.radians(10), abs=1e-15)
    assert c2.offset == pytest.approx(0.05 + 0.02, abs=1e-15) and c2.rows == 1 and not c2.is_contact
    held = load_robot(DATA / "coupling_fixed.xml").constraints[0]
    assert (held.frame, held.other, held.offset) == ("knee_l", None, pytest.approx(np.radians(-0.2) + 0.15, abs=1e-15))
    run = subprocess.run([sys.executable, "-m", "symdyn", "info", str(DATA / "coupling_fixed.xml")],
                         capture_output=True, text=True, cwd=ROOT, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert run.returncode == 0, run.stderr
    assert "knee_l:joint, slide_r-hip_r:joint, shin_l:3d (5 rows)" in run.stdout
    assert "joint coupling slide_r-hip_r:joint: q[slide_r] = 0.01 + 0.2 q[hip_r] (1 row)" in run.stdout


@pytest.mark.parametrize("name, warning", [
    ("coupling_inactive", "<equality><joint name='off'>: inactive: ignored"),
    ("coupling_nonlinear", "<equality><joint name='quadratic'>: a nonlinear polycoef (c2, c3 or c4 not 0) is not "
                           "supported: ignored")])
def test_unsupported_joint_equality_is_one_warning(name, warning):
    """An inactive or nonlinear joint equality: one warning, no constraint, the rest as MuJoCo's."""
    model = check_against_mujoco(DATA / f"{name}.xml", states=2)
    assert model.constraints == () and model.provenance.warnings == (warning,)


def test_joint_equality_of_a_ball_joint_is_a_warning(tmp_path):
    """MuJoCo refuses it; symdyn warns and ignores it (the joints are read as MuJoCo reads them)."""
    path = tmp_path / "ball_equality.xml"
    path.write_text('<mujoco><worldbody><body name="a"><joint name="b" type="ball"/><geom size=".1"/>'
                    '<body name="c" pos="0 0 .3"><joint name="h"/><geom size=".1"/></body></body></worldbody>'
                    '<equality><joint joint1="h" joint2="b"/></equality></mujoco>')
    model = load_robot(path)
    assert model.constraints == ()
    assert model.provenance.warnings == ("<equality><joint>: joint couplings of ball joints are not supported: ignored",)


@pytest.mark.parametrize("language", ["python", "c"])
def test_generated_joint_couplings_match_mujoco(language, tmp_path):
    """The generated Python and C constraint functions of joint couplings with a connect."""
    module = _generated(DATA / "coupling_fixed.xml", language, tmp_path, GENERATED + CONSTRAINED)
    check_constraints_against_mujoco(DATA / "coupling_fixed.xml", module=module)


def test_unmodelled_passive_forces_warn():
    """Ball-joint springs and fluid forces are named in one warning each; frictionloss and actuators are
    listed as ignored; with them zeroed in MuJoCo the rest agrees."""
    path = DATA / "passive_unmodelled.xml"
    model = check_against_mujoco(path, zero_unmodelled=True)
    text = " ".join(model.provenance.warnings)
    for word in ("stiffness of ball and free joints", "b2", "fluid"):
        assert word in text, word
    assert "j1" not in text and "gravcomp" not in text      # the hinge's spring and gravcomp are modelled
    assert "frictionloss" in model.provenance.source and "actuator" in model.provenance.source
    with pytest.raises(AssertionError):
        check_against_mujoco(path, states=1)


def test_frames_option_takes_body_names():
    model = load_robot(DATA / "hinge_slide_chain.xml", frames=["b", "tip", "a"])
    m = mujoco_model(DATA / "hinge_slide_chain.xml")
    d = mujoco.MjData(m)
    rng = np.random.default_rng(3)
    qpos, _, _ = random_state(m, rng)
    d.qpos[:] = qpos
    mujoco.mj_forward(m, d)
    e = Engine(model)
    placement, J = e.frame_placement(qpos), e.frame_jacobian(qpos)
    for f, body in ((0, "b"), (2, "a")):
        b = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, body)
        close(placement[f][:3, 3], d.xpos[b])
        close(placement[f][:3, :3], d.xmat[b].reshape(3, 3))
        jacp, jacr = np.zeros((3, m.nv)), np.zeros((3, m.nv))
        mujoco.mj_jacBody(m, d, jacp, jacr, b)
        close(J[f], np.vstack([jacp, jacr]))


def test_any_extension_is_read(tmp_path):
    copy = tmp_path / "robot.mjcf"
    copy.write_bytes((DATA / "armature_damping.xml").read_bytes())
    assert load_robot(copy).joint_names == ("j1", "j2", "j3")


#: the functions that declare a MuJoCo counterpart (Function.mujoco)
GENERATED = tuple(MUJOCO_COUNTERPARTS)


@pytest.mark.parametrize("name", ["gravcomp", "ball_free_damping"])
@pytest.mark.parametrize("language", ["python", "c"])
def test_generated_code_matches_mujoco(language, name, tmp_path):
    """The generated Python and C (one small compile) of a floating model with several joints per body,
    springs and gravcomp, and of one with damping and armature on ball and free joints."""
    path = DATA / f"{name}.xml"
    check_against_mujoco(path, module=_generated(path, language, tmp_path, GENERATED))


def _generated(path, language, tmp_path, functions):
    """The generated Python or C (one small compile) module of `functions` of the file at `path`."""
    import importlib.util
    import shutil
    import symdyn
    from symdyn.generate import module_name, render
    if language == "c" and not any(shutil.which(cc) for cc in ("cc", "gcc", "clang")):
        pytest.skip("no C compiler")
    model = load_robot(path)
    files = render(model, ("python", "c"), functions=functions)
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    name = module_name(model.provenance.path)
    if language == "c":
        return symdyn.load_c(tmp_path / f"{name}.c")
    spec = importlib.util.spec_from_file_location(name, tmp_path / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --- the gymnasium and dm_control suite models ---------------------------------------------

def _suite(package, folder):
    try:
        module = __import__(package)
    except ImportError:
        return []
    return sorted((Path(module.__file__).parent / folder).glob("*.xml"))


GYM = _suite("gymnasium", "envs/mujoco/assets")
DMC = _suite("dm_control", "suite")
#: models with a free or ball joint: compared through Layout (MuJoCo's coordinates are the other helper's
#: --conventions mujoco)
NEEDS_CONVENTIONS = {"ant", "humanoid", "humanoidstandup", "point", "ball_in_cup", "dog", "fish", "humanoid_CMU",
                     "quadruped", "stacker", "humanoid"}


def _loads_in_mujoco(path):
    try:
        mujoco.MjModel.from_xml_path(str(path))
        return True
    except ValueError:
        return False


@pytest.mark.parametrize("path", GYM + DMC, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_suite_model_matches_mujoco(path):
    if not _loads_in_mujoco(path):
        pytest.skip("MuJoCo itself does not load it")
    if mujoco.MjModel.from_xml_path(str(path)).nv == 0:     # dm_control's lqr.xml: a template without bodies
        with pytest.raises(RobotFileError, match="no moving joints"):
            load_robot(path)
        return
    check_against_mujoco(path, zero_unmodelled=True, states=5)


# --- bad input ------------------------------------------------------------------------------

BAD = {"bomb.xml": "<!DOCTYPE>/<!ENTITY> declarations are refused",
       "external_entity.xml": "<!DOCTYPE>/<!ENTITY> declarations are refused",
       "missing_include.xml": "<include file='nowhere.xml'>: cannot read",
       "include_cycle.xml": "includes itself (an include cycle)",
       "missing_mesh.xml": "body 'hull': mesh file 'hull.stl' not found",
       "fitted_mesh.xml": "body 'hull': a box fitted to mesh 'hull' is not supported",
       "unknown_joint_type.xml": "unknown joint type 'twist'",
       "unknown_class.xml": "unknown default class 'nope'",
       "replicate.xml": "<replicate> is not supported"}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_input_is_one_line_exit_2(name):
    path = DATA / "bad" / name
    with pytest.raises(RobotFileError) as caught:
        load_robot(path)
    assert BAD[name] in str(caught.value)
    run = subprocess.run([sys.executable, "-m", "symdyn", "info", str(path)], capture_output=True, text=True,
                         cwd=ROOT, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert run.returncode == 2
    lines = run.stderr.splitlines()
    assert len(lines) == 1 and BAD[name] in lines[0] and str(path.parent) in lines[0], run.stderr


MESHES = """<mujoco><compiler inertiagrouprange="0 3"/><asset><mesh name="m" file="gone.stl"/></asset><worldbody>
  <body name="b1"><joint name="j1" axis="0 1 0"/><inertial pos="0 0 0.1" mass="1" diaginertia="0.1 0.2 0.3"/>
    <geom type="mesh" mesh="m"/><geom type="box" mesh="m"/><site name="s1" pos="0.1 0 0"/>
    <body name="b2" pos="0 0 0.3"><joint name="j2" axis="1 0 0"/><geom type="capsule" size="0.05 0.1" pos="0.1 0 0"/>
      <geom type="mesh" mesh="m" density="0"/><geom type="mesh" mesh="m" group="4"/><site name="s2" pos="0 0 0.2"/>
    </body></body></worldbody></mujoco>"""


def test_missing_mesh_files_matter_only_where_a_body_needs_them(tmp_path):
    """A mesh file is read only for the inertia of a body without <inertial> (a mesh geom of mass, in
    inertiagrouprange; or a primitive MuJoCo fits to a mesh): a missing one elsewhere loads, and the
    dynamics are those of MuJoCo's model without the mesh geoms (which MuJoCo itself needs the files
    for). Where the mesh is needed: one line naming body and file."""
    import re
    path = tmp_path / "meshes.xml"
    path.write_text(MESHES)
    without = re.sub(r'<geom [^>]*mesh="m"[^>]*/>|<asset>.*?</asset>', "", MESHES)
    check_against_mujoco(path, oracle=mujoco.MjModel.from_xml_string(without))
    for change, body in (('group="4"', "b2"), ('inertiagrouprange="0 3"', "b1")):
        path.write_text(MESHES.replace(change, 'group="2"' if body == "b2" else 'inertiafromgeom="true"'))
        with pytest.raises(RobotFileError, match=f"body '{body}': mesh file 'gone.stl' not found"):
            load_robot(path)


@pytest.mark.parametrize("path", [DATA / f"{name}.xml" for name in FEATURES] + GYM + DMC,
                         ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_reader_qpos0_is_mujocos(path):
    """The reader's qpos0 (MuJoCo's layout: hinge and slide ref, ball identity, a free body's file pose) is m.qpos0."""
    from symdyn.readers.mjcf import read_mjcf
    if not _loads_in_mujoco(path) or mujoco.MjModel.from_xml_path(str(path)).nv == 0:
        pytest.skip("MuJoCo does not load it, or it has no joints")
    m = mujoco.MjModel.from_xml_path(str(path))
    _, extras = read_mjcf(path, path.read_bytes())
    assert np.allclose(extras["qpos0"], m.qpos0, rtol=0, atol=1e-12)


def _tangent_fd(f, e, q, nv, h=1e-6):
    """Central differences of f(q) along each tangent direction (q moved by integrate(q, +-h e_j))."""
    columns = []
    for j in range(nv):
        step = np.zeros(nv)
        step[j] = h
        columns.append((f(e.integrate(q, step)) - f(e.integrate(q, -step))) / (2 * h))
    return np.array(columns).T


@pytest.mark.parametrize("conventions", [None, "pinocchio"], ids=["mujoco", "pinocchio"])
@pytest.mark.parametrize("name", ["springs", "gravcomp", "ball_free_damping"])
def test_passive_force_derivatives_match_finite_differences(name, conventions):
    """dtau/dq, dtau/dv and dqdd/dq, dqdd/dv with springs, gravcomp and ball and free joints' damping and armature (MuJoCo's coordinates: duals
    through the trace; Pinocchio's: the analytical recursions) against central differences."""
    path = DATA / f"{name}.xml"
    model = load_robot(path) if conventions is None else load_robot(path, conventions=conventions)
    e = Engine(model)
    m = mujoco_model(path)
    rng = np.random.default_rng(11)
    for _ in range(3):
        qpos, _, _ = random_state(m, rng)
        q = Layout(m, model).q(qpos) if conventions else qpos
        v, a, tau = rng.normal(size=(3, model.nv))
        dq, dv = e.inverse_dynamics_derivatives(q, v, a)
        assert np.abs(dq - _tangent_fd(lambda x: e.inverse_dynamics(x, v, a), e, q, model.nv)).max() < 1e-6
        fd_v = _tangent_fd(lambda x: e.inverse_dynamics(q, x, a), e, v, model.nv) if False else np.array(
            [(e.inverse_dynamics(q, v + h, a) - e.inverse_dynamics(q, v - h, a)) / 2e-6 for h in 1e-6 * np.eye(model.nv)]).T
        assert np.abs(dv - fd_v).max() < 1e-6
        Dq, Dv, _ = e.forward_dynamics_derivatives(q, v, tau)
        assert np.abs(Dq - _tangent_fd(lambda x: e.forward_dynamics(x, v, tau), e, q, model.nv)).max() < 1e-5
        assert np.abs(Dv - np.array([(e.forward_dynamics(q, v + h, tau) - e.forward_dynamics(q, v - h, tau)) / 2e-6
                                     for h in 1e-6 * np.eye(model.nv)]).T).max() < 1e-5


@pytest.mark.parametrize("name", ["springs", "gravcomp"])
def test_pinocchio_oracle_adds_the_same_passive_forces(name):
    """Pinocchio's counterparts (symdyn.oracle.pinocchio.passive_forces) agree with the engine on a model
    with springs and gravcomp in Pinocchio's coordinates: `symdyn compare` stays consistent."""
    pytest.importorskip("pinocchio")
    from symdyn.oracle.pinocchio import passive_forces, pinocchio_functions, pinocchio_model
    model = load_robot(DATA / f"{name}.xml", conventions="pinocchio")
    e, oracle = Engine(model), pinocchio_functions(pinocchio_model(model), passive=passive_forces(model))
    m = mujoco_model(DATA / f"{name}.xml")
    rng = np.random.default_rng(5)
    for _ in range(3):
        q = Layout(m, model).q(random_state(m, rng)[0])
        v, a, tau = rng.normal(size=(3, model.nv))
        for fn, args in (("inverse_dynamics", (q, v, a)), ("nonlinear_effects", (q, v)), ("gravity", (q,)),
                         ("forward_dynamics", (q, v, tau)), ("inverse_dynamics_derivatives", (q, v, a)),
                         ("forward_dynamics_derivatives", (q, v, tau))):
            ours, theirs = getattr(e, fn)(*args), oracle[fn](*args)
            for x, y in zip(ours, theirs) if isinstance(ours, tuple) else ((ours, theirs),):
                close(x, y)


def test_joint_params_file_gives_springs_to_a_urdf(tmp_path):
    """stiffness/springref in a joint-parameter file: the engine and the Pinocchio column of `compare` add the
    same K (q - q_ref), and its K on dtau/dq's diagonal."""
    pytest.importorskip("pinocchio")
    from symdyn.compare import _pinocchio
    params = tmp_path / "springs.yaml"
    params.write_text("joints:\n  panda_joint2: {stiffness: 7.0, springref: 0.4}\n  panda_joint4: {stiffness: 2.0}\n")
    model = load_robot(ROOT / "robots" / "panda.urdf", joint_params=params)
    plain = Engine(load_robot(ROOT / "robots" / "panda.urdf"))
    e, oracle = Engine(model), _pinocchio(model, [])
    rng = np.random.default_rng(2)
    q, v, a = rng.normal(size=(3, model.nv))
    spring = np.zeros(model.nv)
    spring[1], spring[3] = 7.0 * (q[1] - 0.4), 2.0 * q[3]
    close(e.inverse_dynamics(q, v, a), plain.inverse_dynamics(q, v, a) + spring)
    close(e.gravity(q), plain.gravity(q))
    for fn in ("inverse_dynamics", "forward_dynamics", "inverse_dynamics_derivatives", "forward_dynamics_derivatives"):
        ours, theirs = getattr(e, fn)(q, v, a), oracle[fn](q, v, a)
        for x, y in zip(ours, theirs) if isinstance(ours, tuple) else ((ours, theirs),):
            close(x, y)
    assert e.inverse_dynamics_derivatives(q, v, a)[0][1, 1] - plain.inverse_dynamics_derivatives(q, v, a)[0][1, 1] \
        == pytest.approx(7.0)


def test_actuator_gravcomp_is_a_warning(tmp_path):
    """A joint with actuatorgravcomp="true" gets its gravcomp from MuJoCo's actuators (absent with actuation
    off), not as a passive force: symdyn keeps it passive and says so."""
    path = tmp_path / "actgravcomp.xml"
    path.write_text('<mujoco><worldbody><body name="a" gravcomp="1"><joint name="j" axis="0 1 0" '
                    'actuatorgravcomp="true"/><geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.04"/></body>'
                    '</worldbody></mujoco>')
    assert any("joint 'j': actuatorgravcomp" in w for w in load_robot(path).provenance.warnings)
    assert not any("actuatorgravcomp" in w for w in load_robot(DATA / "gravcomp.xml").provenance.warnings)
