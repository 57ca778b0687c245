"""MuJoCo's coordinates (--conventions mujoco, symdyn.conventions): the functions equal MuJoCo's on the same
robot file (MuJoCo loads the URDF itself, a free joint added), equal symdyn's Pinocchio-convention ones mapped
by hand, and their derivatives are those of MuJoCo's tangent space (finite differences along mj_integratePos)."""
import subprocess
import sys

import numpy as np
import pytest

from conftest import ROOT, erd_path
from random_chain import chain_with
from symdyn.compare import import_module_file
from symdyn.conventions import with_conventions
from symdyn.engine import Engine
from symdyn.generate import render
from symdyn.multibody import lie
from symdyn.readers.load import load_robot

mujoco = pytest.importorskip("mujoco")
from symdyn.oracle import mujoco as oracle  # noqa: E402

TOL = 1e-9
#: the functions that declare a MuJoCo counterpart (Function.mujoco, symdyn.oracle.mujoco)
CHECKED = list(oracle.COUNTERPARTS)


def relerr(a, b):
    return float(np.abs(np.asarray(a) - np.asarray(b)).max() / max(1.0, float(np.abs(b).max())))


@pytest.fixture(scope="module")
def solo():
    """solo12 (example-robot-data) with a free-flyer base, in MuJoCo's coordinates."""
    return load_robot(str(erd_path("solo_description/robots/solo12.urdf")), floating_base=True, conventions="mujoco")


def _states(model, count=5, seed=0):
    rng = np.random.default_rng(seed)
    q = lie.random_configuration(model, rng, count)
    q[:, :3] = rng.normal(size=(count, 3))                   # the base anywhere
    return [(q[s], *rng.normal(size=(3, model.nv))) for s in range(count)]


def _args(name, q, v, a, tau):
    return {"inverse_dynamics": (q, v, a), "forward_dynamics": (q, v, tau), "nonlinear_effects": (q, v)}.get(name, (q,))


@pytest.fixture(scope="module")
def solo_modules(solo, tmp_path_factory):
    from symdyn.codegen.c.loader import load_c
    tmp = tmp_path_factory.mktemp("solo_mujoco")
    for name, text in render(solo, ("python", "c"), functions=CHECKED).items():
        (tmp / name).write_text(text)
    return {"python": import_module_file(tmp / "solo12.py", "_solo12_mujoco"), "c": load_c(tmp / "solo12.c")}


def test_layout_is_mujocos(solo):
    m = oracle.mujoco_model(solo)
    assert (solo.nq, solo.nv) == (m.nq, m.nv) == (19, 18)
    assert np.array_equal(Engine(solo).neutral(), m.qpos0)           # [0 0 0, 1 0 0 0, joints]


def test_generated_python_and_c_equal_mujoco(solo, solo_modules):
    reference = oracle.functions(solo)
    for state in _states(solo):
        for name in CHECKED:
            theirs = reference[name](*_args(name, *state))
            for lang, module in solo_modules.items():
                assert relerr(getattr(module, name)(*_args(name, *state)), theirs) < TOL, (lang, name)


def test_oracle_implements_exactly_the_declared_counterparts(solo):
    assert set(oracle.functions(solo)) == set(oracle.NAMES) == set(CHECKED + list(oracle.CONFIGURATION))


def test_integrate_difference_neutral_are_mujocos(solo, solo_modules):
    reference, engine = oracle.functions(solo), Engine(solo)
    states = _states(solo, seed=1)
    for (q, v, _, _), (q1, *_) in zip(states, states[1:] + states[:1]):
        for module in (engine, *solo_modules.values()):
            assert relerr(module.integrate(q, v, 0.3), reference["integrate"](q, v, 0.3)) < 1e-14
            assert relerr(module.difference(q, q1), reference["difference"](q, q1)) < 1e-12
            assert np.array_equal(module.neutral(), reference["neutral"]())


def _by_hand(q):
    """symdyn's q and T (v = T qvel) of MuJoCo's q, for a free joint at the root."""
    q_pin = np.concatenate([q[:3], q[4:7], q[3:4], q[7:]])
    R = np.zeros((3, 3))
    lie_q = q_pin[3:7]
    for i, e in enumerate(np.eye(3)):
        R[:, i] = lie._quat_rotate(np, lie_q, e)
    T = np.eye(len(q) - 1)
    T[:3, :3] = R.T
    return q_pin, T, R


def test_equal_to_the_pinocchio_convention_functions_mapped_by_hand(solo):
    """MuJoCo's = T^T (symdyn's at q_pin, T qvel, T qacc + T_dot qvel) etc., T_dot qvel = [-w x (R^T p_dot); 0]."""
    mj, pin = Engine(solo), Engine(with_conventions(solo, "pinocchio"))
    for q, v, a, tau in _states(solo, seed=2):
        qp, T, R = _by_hand(q)
        drift = np.zeros(solo.nv)
        drift[:3] = -np.cross(v[3:6], R.T @ v[:3])
        M = pin.mass_matrix(qp)
        assert relerr(mj.mass_matrix(q), T.T @ M @ T) < 1e-12
        assert relerr(mj.mass_matrix_inverse(q), T.T @ pin.mass_matrix_inverse(qp) @ T) < 1e-12
        assert relerr(mj.inverse_dynamics(q, v, a), T.T @ pin.inverse_dynamics(qp, T @ v, T @ a + drift)) < 1e-12
        assert relerr(mj.forward_dynamics(q, v, tau), T.T @ (pin.forward_dynamics(qp, T @ v, T @ tau) - drift)) < 1e-12
        assert relerr(mj.gravity(q), T.T @ pin.gravity(qp)) < 1e-12
        assert relerr(mj.coriolis_matrix(q, v), T.T @ pin.coriolis_matrix(qp, T @ v) @ T + T.T @ M @ _tdot(R, v)) < 1e-12
        J = pin.frame_jacobian(qp)
        assert relerr(mj.frame_jacobian(q), J @ T) < 1e-12
        assert relerr(mj.frame_acceleration_bias(q, v), pin.frame_acceleration_bias(qp, T @ v) + J @ drift) < 1e-12
        assert relerr(mj.regressor(q, v, a), T.T @ pin.regressor(qp, T @ v, T @ a + drift)) < 1e-12
        assert relerr(mj.kinetic_energy(q, v), pin.kinetic_energy(qp, T @ v)) < 1e-12


def _tdot(R, v):
    out = np.zeros((len(v), len(v)))
    w = v[3:6]
    out[:3, :3] = -np.array([[0, -w[2], w[1]], [w[2], 0, -w[0]], [-w[1], w[0], 0]]) @ R.T
    return out


def test_coriolis_identities(solo):
    e = Engine(solo)
    for q, v, _, _ in _states(solo, count=3, seed=3):
        C, Mdot = e.coriolis_matrix(q, v), e.mass_matrix_dot(q, v)
        assert relerr(C @ v, e.nonlinear_effects(q, v) - e.gravity(q)) < 1e-12
        assert np.abs(Mdot - 2 * C + (Mdot - 2 * C).T).max() < 1e-12 * max(1, np.abs(C).max())


def _along_q(f, q, integrate, n, h=1e-6):
    """Columns d f(integrate(q, h e_k)) / dh, central differences."""
    return np.stack([(f(integrate(q, np.eye(n)[k], h)) - f(integrate(q, np.eye(n)[k], -h))) / (2 * h)
                     for k in range(n)], axis=-1)


def _along(f, x, h=1e-6):
    n = len(x)
    return np.stack([(f(x + h * np.eye(n)[k]) - f(x - h * np.eye(n)[k])) / (2 * h) for k in range(n)], axis=-1)


def test_derivatives_in_mujocos_tangent_space(solo):
    """Finite differences of MuJoCo's own functions along mj_integratePos."""
    e, ref = Engine(solo), oracle.functions(solo)
    n = solo.nv
    for q, v, a, tau in _states(solo, count=2, seed=4):
        dq, dv = e.inverse_dynamics_derivatives(q, v, a)
        assert relerr(dq, _along_q(lambda x: ref["inverse_dynamics"](x, v, a), q, ref["integrate"], n)) < 1e-6
        assert relerr(dv, _along(lambda x: ref["inverse_dynamics"](q, x, a), v)) < 1e-6
        fq, fv, Minv = e.forward_dynamics_derivatives(q, v, tau)
        scale = max(1.0, np.abs(ref["forward_dynamics"](q, v, tau)).max())
        assert relerr(fq, _along_q(lambda x: ref["forward_dynamics"](x, v, tau), q, ref["integrate"], n)) < 1e-6 * scale
        assert relerr(fv, _along(lambda x: ref["forward_dynamics"](q, x, tau), v)) < 1e-6 * scale
        assert relerr(Minv, np.linalg.inv(ref["mass_matrix"](q))) < 1e-9
        assert relerr(e.mass_matrix_derivative(q), _along_q(ref["mass_matrix"], q, ref["integrate"], n)) < 1e-6
        h = 1e-6
        motion = (ref["mass_matrix"](ref["integrate"](q, v, h)) - ref["mass_matrix"](ref["integrate"](q, v, -h))) / (2 * h)
        assert relerr(e.mass_matrix_dot(q, v), motion) < 1e-6


def test_fixed_base_urdf_matches_mujoco():
    """ur5 (revolute joints only): the conventions only name the layout; MuJoCo loads the URDF itself."""
    model = load_robot(ROOT / "robots" / "ur5.urdf", conventions="mujoco")
    e, ref = Engine(model), oracle.functions(model)
    for q, v, a, tau in _states(model, count=3, seed=5):
        for name in CHECKED:
            assert relerr(getattr(e, name)(*_args(name, q, v, a, tau)), ref[name](*_args(name, q, v, a, tau))) < TOL, name


def test_ball_joints_reorder_only():
    """A ball joint's qpos is (w, x, y, z), its velocity the same: every function (the factorizations and the
    derivatives too) is symdyn's at the reordered q."""
    model = chain_with({0: "spherical", 3: "spherical"}, n=6, seed=8)
    mj, pin = Engine(with_conventions(model, "mujoco")), Engine(model)
    rng = np.random.default_rng(6)
    qp = lie.random_configuration(model, rng, 3)
    q = qp.copy()
    for start in (0, 6):                                  # the two quaternions (joint 0: q 0..3; joint 3: q 6..9)
        q[:, start:start + 4] = np.concatenate([qp[:, start + 3:start + 4], qp[:, start:start + 3]], axis=-1)
    v, a = rng.normal(size=(2, 3, model.nv))
    for name in ("inverse_dynamics", "articulated_inertia", "innovations_factor", "inverse_dynamics_derivatives"):
        args = {"inverse_dynamics": (v, a), "inverse_dynamics_derivatives": (v, a)}.get(name, ())
        assert relerr(getattr(mj, name)(q, *args), getattr(pin, name)(qp, *args)) < 1e-13, name
    step = mj.integrate(q, v, 0.2)
    assert relerr(np.concatenate([step[:, 1:4], step[:, :1]], axis=-1), pin.integrate(qp, v, 0.2)[:, :4]) < 1e-14
    assert np.array_equal(mj.neutral()[:4], [1, 0, 0, 0])


def test_factorizations_not_generated_for_a_free_joint(solo, tmp_path):
    from symdyn.codegen.generator import select_functions
    names = {fn.name for fn in select_functions(None, solo)}
    assert "inverse_dynamics" in names and "articulated_inertia" not in names
    assert "articulated_inertia" in {fn.name for fn in select_functions(None, with_conventions(solo, "pinocchio"))}
    urdf = erd_path("solo_description/robots/solo12.urdf")
    run = subprocess.run([sys.executable, "-m", "symdyn", "generate", str(urdf), "--floating-base", "--conventions",
                          "mujoco", "--functions", "udu_factor", "--out", str(tmp_path / "out")],
                         capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 2 and "MuJoCo's coordinates" in run.stderr and run.stderr.count("\n") == 1
    assert not (tmp_path / "out").exists()


def test_cli_conventions(tmp_path):
    urdf = erd_path("solo_description/robots/solo12.urdf")
    run = subprocess.run([sys.executable, "-m", "symdyn", "generate", str(urdf), "--floating-base", "--conventions",
                          "mujoco", "--functions", "gravity", "--out", str(tmp_path)], capture_output=True, text=True,
                         cwd=ROOT)
    assert run.returncode == 0, run.stderr
    module = import_module_file(tmp_path / "solo12.py", "_solo12_cli_mujoco")
    assert (module.NQ, module.NV) == (19, 18)
    assert list(module.neutral()[3:7]) == [1, 0, 0, 0]
    assert "MuJoCo's coordinates" in (tmp_path / "solo12.py").read_text()
    bad = subprocess.run([sys.executable, "-m", "symdyn", "info", str(urdf), "--conventions", "drake"],
                         capture_output=True, text=True, cwd=ROOT)
    assert bad.returncode == 2


def _gym_asset(name):
    gymnasium = pytest.importorskip("gymnasium")
    from pathlib import Path
    return Path(gymnasium.__file__).parent / "envs" / "mujoco" / "assets" / name


def test_mjcf_defaults_to_mujocos_coordinates():
    """gymnasium's Ant (a free joint): MuJoCo's layout by default, Pinocchio's with --conventions pinocchio, the
    same dynamics in both (mapped by hand)."""
    path = _gym_asset("ant.xml")
    model = load_robot(path)
    m = oracle.mujoco_model(model)
    assert model.conventions == "mujoco" and (model.nq, model.nv) == (m.nq, m.nv)
    e, ref = Engine(model), oracle.functions(model)
    pin = Engine(load_robot(path, conventions="pinocchio"))
    for q, v, a, tau in _states(model, count=3, seed=7):
        for name in ("inverse_dynamics", "mass_matrix", "forward_dynamics", "nonlinear_effects", "gravity"):
            assert relerr(getattr(e, name)(*_args(name, q, v, a, tau)), ref[name](*_args(name, q, v, a, tau))) < TOL, name
        qp, T, R = _by_hand(q)
        drift = np.zeros(model.nv)
        drift[:3] = -np.cross(v[3:6], R.T @ v[:3])
        assert relerr(e.inverse_dynamics(q, v, a), T.T @ pin.inverse_dynamics(qp, T @ v, T @ a + drift)) < 1e-12


def test_compare_says_it_used_mujoco():
    run = subprocess.run([sys.executable, "-m", "symdyn", "compare", str(_gym_asset("inverted_double_pendulum.xml")), "--no-c",
                          "--states", "3", "--functions", "inverse_dynamics,mass_matrix,forward_dynamics,gravity"],
                         capture_output=True, text=True, cwd=ROOT)
    assert "mujoco column: MuJoCo" in run.stdout, run.stdout + run.stderr
    header = next(line for line in run.stdout.splitlines() if line.strip().startswith("function"))
    assert "mujoco" in header.split() and "pinocchio" not in header.split()
    assert run.returncode == 0, run.stdout


def test_mimic_joints_in_mujocos_coordinates():
    """Hinge joints only: the same functions as Pinocchio's conventions, the specials built on the reduced ones;
    the derivatives are not offered (their dual directions are the tree's)."""
    path = ROOT / "tests" / "data" / "urdf_mimic.urdf"
    mj, pin = Engine(load_robot(path, conventions="mujoco")), Engine(load_robot(path))
    rng = np.random.default_rng(9)
    q, v, a = rng.normal(size=(3, 2, pin.NV))
    for name in ("nonlinear_effects", "coriolis_matrix", "inverse_dynamics", "frame_acceleration_bias"):
        args = (v, a) if name == "inverse_dynamics" else (v,)
        assert relerr(getattr(mj, name)(q, *args), getattr(pin, name)(q, *args)) < 1e-14, name
    assert not hasattr(mj, "inverse_dynamics_derivatives")


def test_free_joints_linear_block_of_the_mass_matrix_is_m_times_identity():
    """A free joint's linear rates are world axes in MuJoCo's coordinates: its block of M = T^T M T is
    R (m 1) R^T = m 1, generated as numbers (the subtree's mass), not products of the rotation."""
    from symdyn.codegen.generator import trace
    from symdyn.functions import BY_NAME
    model = load_robot(str(ROOT / "tests" / "data" / "mjcf" / "free.xml"))
    program = trace(model, BY_NAME["mass_matrix"])
    M = np.array(program.results, dtype=object).reshape(model.nv, model.nv)
    mj = oracle.mujoco_model(model)
    for free in (j for j in range(mj.njnt) if mj.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE):
        lin = range(mj.jnt_dofadr[free], mj.jnt_dofadr[free] + 3)
        body = mj.jnt_bodyid[free]
        mass = sum(mj.body_mass[b] for b in range(mj.nbody) if _under(mj, b, body))
        for i in lin:
            for j in lin:
                assert M[i, j].is_Number, (i, j, M[i, j])
                assert float(M[i, j]) == pytest.approx(mass if i == j else 0.0, rel=1e-12)


def _under(mj, b, root):
    while b > 0:
        if b == root:
            return True
        b = mj.body_parentid[b]
    return False


def test_derivatives_trace_in_mujocos_coordinates(solo):
    """The derivatives' own traces in MuJoCo's coordinates with a free joint have no forms of their own:
    generating them does not pass a form of rnea_derivatives (it failed on every MuJoCo model when
    inverse_dynamics_derivatives got its forms)."""
    from symdyn.codegen.generator import trace
    from symdyn.conventions import in_mujoco_one
    from symdyn.functions import BY_NAME
    for name in ("inverse_dynamics_derivatives", "forward_dynamics_derivatives"):
        fn = in_mujoco_one(BY_NAME[name])
        assert BY_NAME[name].forms and not fn.forms
        assert trace(solo, fn).ops["mul"] > 0


def _forward_mode(ctx, chain, X, qd, qdd, f_ext):
    """The derivatives in MuJoCo's tangent space by forward-mode duals through MuJoCo-convention inverse dynamics
    (R turning with the directions): the independent check of the analytical form, the former trace."""
    from symdyn.conventions import Change, in_mujoco_one
    from symdyn.functions import BY_NAME
    from symdyn.scalars.dual import Dual, DualContext, jacobian, joint_directions, tangent_transforms
    nv, d = chain.nv, DualContext(ctx)
    Xd = tangent_transforms(d, chain, X, joint_directions(chain))
    v = [Dual(x, {nv + i: 1}) for i, x in enumerate(qd)]
    name = "inverse_dynamics" if f_ext is None else "inverse_dynamics_fext"
    tau = in_mujoco_one(BY_NAME[name]).trace(d, chain, Xd, v, qdd, *([] if f_ext is None else [f_ext]))
    return Change(ctx, chain, X).contract(jacobian(tau, range(nv)), [1]), jacobian(tau, range(nv, 2 * nv))


@pytest.mark.parametrize("path", ["solo12", "tests/data/mjcf/free.xml", "tests/data/mjcf/ball_free_damping.xml",
                                  "tests/data/mjcf/ball.xml", "tests/data/mjcf/gravcomp.xml"])
@pytest.mark.parametrize("wrenches", [False, True])
def test_mujoco_derivatives_equal_forward_mode(path, wrenches, solo):
    """MuJoCo-convention derivatives are symdyn's analytical ones plus the terms of a free joint's T(q) (none
    without one): equal to forward-mode duals through MuJoCo-convention inverse dynamics, with and without
    external wrenches, on free joints (one under the world with a turned body frame, solo12's base; with
    damping and armature; under gravcomp bodies: the joint's own forces in its tau) and balls."""
    from symdyn.conventions import free_joints, in_mujoco
    from symdyn.functions import BY_NAME
    from symdyn.multibody.chain import Chain
    from symdyn.scalars.scalar import NUMERIC
    model = solo if path == "solo12" else load_robot(str(ROOT / path))
    assert model.conventions == "mujoco" and bool(free_joints(model)) == (path != "tests/data/mjcf/ball.xml")
    if wrenches and not model.kinematic_frames:
        pytest.skip("no frame to apply a wrench at")
    name = "inverse_dynamics_derivatives" + ("_fext" if wrenches else "")
    fn, = in_mujoco([BY_NAME[name]], model)
    chain, rng = Chain(NUMERIC, model), np.random.default_rng(3)
    for q in lie.random_configuration(model, rng, 2):         # unit quaternions (_states moves q[:3])
        X, (v, a) = chain.transforms(list(q)), rng.normal(size=(2, model.nv))
        f_ext = rng.normal(size=(len(model.kinematic_frames), 6)) * 5 if wrenches else None
        ours = fn.trace(NUMERIC, chain, X, list(v), list(a), *([] if f_ext is None else [f_ext]))
        ref = _forward_mode(NUMERIC, chain, X, list(v), list(a), f_ext)
        for mine, theirs in zip(ours, ref):
            mine, theirs = np.array(mine, dtype=float), np.array(theirs, dtype=float)
            assert relerr(mine, theirs) < 1e-12 and np.abs(theirs).max() > 1e-3, path


@pytest.mark.parametrize("path", ["solo12", "tests/data/mjcf/free.xml", "tests/data/mjcf/ball_free_damping.xml"])
@pytest.mark.parametrize("wrenches", [False, True])
def test_mujoco_forward_derivatives_equal_forward_mode(path, wrenches, solo):
    """The forward dynamics' derivatives in MuJoCo's coordinates with a free joint (symdyn's analytical ones plus
    T(q)'s terms) equal -M_mj^-1 times the forward-mode duals of MuJoCo-convention inverse dynamics at
    qacc = FD_mj, and M_mj^-1 = T^T M^-1 T."""
    from symdyn.conventions import in_mujoco, in_mujoco_one
    from symdyn.functions import BY_NAME
    from symdyn.multibody.chain import Chain
    from symdyn.scalars.scalar import NUMERIC
    model = solo if path == "solo12" else load_robot(str(ROOT / path))
    if wrenches and not model.kinematic_frames:
        pytest.skip("no frame to apply a wrench at")
    suffix = "_fext" if wrenches else ""
    fn, = in_mujoco([BY_NAME["forward_dynamics_derivatives" + suffix]], model)
    chain, rng = Chain(NUMERIC, model), np.random.default_rng(5)
    for q in lie.random_configuration(model, rng, 2):
        X, (v, tau) = chain.transforms(list(q)), rng.normal(size=(2, model.nv)) * 3
        extra = [rng.normal(size=(len(model.kinematic_frames), 6)) * 5] if wrenches else []
        qacc = in_mujoco_one(BY_NAME["forward_dynamics" + suffix]).trace(NUMERIC, chain, X, list(v), list(tau), *extra)
        Minv = np.array(in_mujoco_one(BY_NAME["mass_matrix_inverse"]).trace(NUMERIC, chain, X), dtype=float)
        dq, dv = (np.array(x, dtype=float) for x in _forward_mode(NUMERIC, chain, X, list(v), list(qacc),
                                                                   extra[0] if extra else None))
        ours = fn.trace(NUMERIC, chain, X, list(v), list(tau), *extra)
        for mine, theirs in zip(ours, (-Minv @ dq, -Minv @ dv, Minv)):
            mine = np.array(mine, dtype=float)
            assert relerr(mine, theirs) < 1e-11 and np.abs(theirs).max() > 1e-3, path


def test_generated_mujoco_derivatives_equal_the_engine(tmp_path, monkeypatch):
    """The derivatives' new traces in MuJoCo's coordinates (a free joint with balls and damping: T(q)'s terms),
    generated as Python and C, equal the engine's, with and without external wrenches."""
    from symdyn.compare import compare
    monkeypatch.setenv("SYMDYN_CACHE", str(tmp_path / "cache"))
    model = load_robot(str(ROOT / "tests" / "data" / "mjcf" / "ball_free_damping.xml"))
    names = ["inverse_dynamics_derivatives", "forward_dynamics_derivatives"]
    names += [n + "_fext" for n in names]
    report = compare(model, states=3, workdir=tmp_path, functions=names)
    for name in names:
        assert {"python", "c"} <= set(report[name]), name
        for column, err in report[name].items():
            assert err < 1e-10, (name, column, err)
