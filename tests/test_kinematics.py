"""Frames, kinematics, centroidal quantities, external wrenches and the operational-space compliance:
against Pinocchio (its own URDF parser where there is a URDF), against identities (J v = frame
velocity, finite differences, J M^-1 J^T, J^T f), in the engine and the generated Python and C."""
import subprocess
import sys

import numpy as np
import pinocchio as pin
import pytest

import symdyn
from conftest import BUNDLED, ERD_TREES, ROOT, erd_path, relerr
from random_chain import random_chain, random_tree
from symdyn.multibody import lie
from symdyn.compare import (PINOCCHIO_FRAME_NAMES, import_module_file, pinocchio_functions, pinocchio_model,
                            pinocchio_reference)
from symdyn.functions import BY_NAME, arguments
from symdyn.generate import module_name, render
from symdyn.multibody.model import select_frames

TOL = 1e-9
#: (kind, moving joints, seed, joint kinds[, aligned: axes along +-x, y, z behind right-angle origins, the
#: structured rotations of the composite inertias in centroidal.py])
RANDOM = [("chain", 7, 31, "RP"), ("chain", 5, 32, "R"), ("tree", 9, 33, "RP"), ("tree", 12, 34, "R"), ("tree", 8, 35, "P"),
          ("chain", 8, 37, "R", True), ("tree", 10, 36, "RP", True)]


def _random(kind, n, seed, kinds, aligned=False):
    model = random_chain(n, seed, kinds, aligned) if kind == "chain" else random_tree(n, seed, kinds, aligned, fixed=0.4)
    # every link frame, the base's included: several frames per body, frames on the fixed base
    return select_frames(model, [f.name for f in model.frames if f.kind == "link"])


def _states(model, count, seed):
    rng = np.random.default_rng(seed)
    n, nf = model.nv, len(model.kinematic_frames)
    return (lie.random_configuration(model, rng, count), rng.normal(size=(count, n)) * 2, rng.normal(size=(count, n)) * 3,
            rng.normal(size=(count, nf, 6)) * 10)


def _against_pinocchio(functions, oracle, model, seed=0, count=6):
    q, qd, x, f = _states(model, count, seed)
    worst = {}
    for name in PINOCCHIO_FRAME_NAMES:
        args = arguments(BY_NAME[name], q, (qd, x), f)
        ours = functions(name)(*args)
        worst[name] = max(relerr(ours[s], oracle[name](*(a[s] for a in args))) for s in range(count))
    return worst


@pytest.mark.parametrize("spec", RANDOM, ids=lambda s: f"{s[0]}{s[1]}-{s[3]}-{s[2]}{'-aligned' if s[4:] else ''}")
def test_random_engine_equals_pinocchio(spec):
    model = _random(*spec)
    oracle = pinocchio_functions(pinocchio_model(model), [f.name for f in model.kinematic_frames])
    worst = _against_pinocchio(lambda name: getattr(symdyn.Engine(model), name), oracle, model)
    assert max(worst.values()) < TOL, worst


@pytest.fixture(scope="module", params=sorted(ERD_TREES))
def erd_tree(request):
    """A robot of example-robot-data, its default frames (the leaves: feet, hands, fingertips) and
    Pinocchio's own parse of the URDF (its own frame placements)."""
    path = erd_path(ERD_TREES[request.param])
    return symdyn.load_robot(path, mimic="independent"), pin.buildModelFromUrdf(str(path))   # the whole tree


def test_erd_engine_equals_pinocchio_urdf_parser(erd_tree):
    model, pmodel = erd_tree
    oracle = pinocchio_functions(pmodel, [f.name for f in model.kinematic_frames])
    worst = _against_pinocchio(lambda name: getattr(symdyn.Engine(model), name), oracle, model, count=3)
    assert max(worst.values()) < TOL, worst


@pytest.mark.parametrize("name", ["solo12", "talos_reduced", "panda_fingers"])
def test_floating_base_engine_equals_pinocchio_urdf_parser(name):
    """Free-flyer root (q: position, quaternion; v in the base frame): the base's Jacobian columns,
    centroidal map and wrenches as Pinocchio's, built by its own URDF parser."""
    model = symdyn.load_robot(erd_path(ERD_TREES[name]), floating_base=True, mimic="independent")
    pmodel, how = pinocchio_reference(model)
    assert "own URDF parser" in how and model.nq == model.nv + 1
    oracle = pinocchio_functions(pmodel, [f.name for f in model.kinematic_frames])
    worst = _against_pinocchio(lambda name: getattr(symdyn.Engine(model), name), oracle, model, count=3)
    assert max(worst.values()) < TOL, worst


@pytest.mark.parametrize("kinds", [{0: "planar", 3: "spherical"}, {1: "spherical", 4: "planar"}],
                         ids=["planar-root", "spherical-inner"])
def test_multi_dof_joints_engine_equals_pinocchio(kinds):
    """Spherical and planar joints (their columns are not constants in the parent's axes, unlike
    those of revolute and prismatic joints) at the root and inside a chain: every frame function."""
    from random_chain import chain_with
    model = chain_with(kinds, n=6, seed=5)
    model = select_frames(model, [f.name for f in model.frames if f.kind == "link"])
    oracle = pinocchio_functions(pinocchio_model(model), [f.name for f in model.kinematic_frames])
    worst = _against_pinocchio(lambda name: getattr(symdyn.Engine(model), name), oracle, model, count=3)
    assert max(worst.values()) < TOL, worst


def test_floating_base_generated_python_and_c(tmp_path, monkeypatch):
    monkeypatch.setenv("SYMDYN_CACHE", str(tmp_path / "cache"))
    model = symdyn.load_robot(ROOT / "robots" / "ur5.urdf", floating_base=True, frames=["tool0", "upper_arm_link"])
    for filename, text in render(model, ("python", "c")).items():
        (tmp_path / filename).write_text(text)
    oracle = pinocchio_functions(pinocchio_reference(model)[0], ["tool0", "upper_arm_link"])
    for module in (import_module_file(tmp_path / "ur5.py", "ur5_floating_kin"), symdyn.load_c(tmp_path / "ur5.c")):
        assert module.frame_jacobian(np.r_[np.zeros(6), 1.0, np.zeros(6)]).shape == (2, 6, 12)
        worst = _against_pinocchio(lambda name: getattr(module, name), oracle, model, seed=4, count=4)
        assert max(worst.values()) < TOL, (module, worst)
    engine = symdyn.Engine(model)
    q, v, a, f = _states(model, 2, 8)
    for s in range(2):
        _engine_identities(engine, q[s], v[s], a[s], f[s])


def test_default_frames_are_the_leaves():
    solo = symdyn.load_robot(erd_path(ERD_TREES["solo12"]))
    assert [f.name for f in solo.kinematic_frames] == ["FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"]
    panda = symdyn.load_robot(ROOT / "robots" / "panda.urdf")
    assert [f.name for f in panda.kinematic_frames] == ["panda_leftfinger", "panda_rightfinger", "panda_hand_tcp"]
    ur5 = symdyn.load_robot(ROOT / "robots" / "ur5.urdf")       # 'base' is a leaf of the fixed base: not an end effector
    assert [f.name for f in ur5.kinematic_frames] == ["ee_link", "tool0"]
    chosen = symdyn.load_robot(ROOT / "robots" / "ur5.urdf", frames=["tool0", "wrist_1_link", "base"])
    assert [f.name for f in chosen.kinematic_frames] == ["tool0", "wrist_1_link", "base"]
    assert symdyn.Engine(chosen).frame_jacobian(np.zeros(6)).shape == (3, 6, 6)
    assert not symdyn.Engine(chosen).frame_jacobian(np.ones(6))[2].any()     # on the fixed base: exact zeros


def _directional(f, q, v, h=1e-6, model=None):
    """d/dt f(q(t)) with q_dot = v: on the Lie group (pinocchio.integrate) for a floating base."""
    if model is not None and model.nq != model.nv:
        return (f(lie.integrate(model, q, v, h)) - f(lie.integrate(model, q, v, -h))) / (2 * h)
    return (f(q + h * v) - f(q - h * v)) / (2 * h)


def _engine_identities(engine, q, v, a, f):
    n, nf = engine.NV, len(engine.FRAMES)
    J = engine.frame_jacobian(q)
    V = engine.frame_velocity(q, v)
    assert relerr(np.einsum("...fij,...j->...fi", J, v), V) < 1e-12
    # finite differences of the placement: p_dot = J_lin v, R_dot R^T = [w]x
    T = engine.frame_placement(q)
    dT = _directional(engine.frame_placement, q, v, model=engine.model)
    assert relerr(dT[..., :3, 3], V[..., :3]) < 1e-7
    W = dT[..., :3, :3] @ np.swapaxes(T[..., :3, :3], -1, -2)
    assert relerr(np.stack([W[..., 2, 1], W[..., 0, 2], W[..., 1, 0]], -1), V[..., 3:]) < 1e-7
    # J_dot v: derivative of J along v, applied to v
    dJ = _directional(engine.frame_jacobian, q, v, model=engine.model)
    assert relerr(np.einsum("...fij,...j->...fi", dJ, v), engine.frame_acceleration_bias(q, v)) < 1e-6
    # centre of mass: its Jacobian is its derivative; Ag's linear rows are m Jcom; h = Ag v
    Jc = engine.com_jacobian(q)
    assert relerr(_directional(engine.center_of_mass, q, v, model=engine.model), Jc @ v) < 1e-7
    Ag = engine.centroidal_momentum_matrix(q)
    mass = engine.model.total_mass
    assert relerr(Ag[:3], mass * Jc) < 1e-12
    assert relerr(engine.centroidal_momentum(q, v), Ag @ v) < 1e-12
    # the angular rows: Ag v about the CoM, the derivative of the CoM-frame momentum, equals the
    # kinetic-energy gradient: v^T M v = (Ag v) . (spatial velocity) is checked by Pinocchio above
    # operational space: J M^-1 J^T without M^-1
    Jst = J.reshape(6 * nf, n)
    assert relerr(engine.operational_space_inertia_inverse(q), Jst @ engine.mass_matrix_inverse(q) @ Jst.T) < 1e-9
    # external wrenches: tau = ID(q, v, a) - sum_f J_f^T f_f, and forward dynamics inverts it
    tau = engine.inverse_dynamics_fext(q, v, a, f)
    assert relerr(tau, engine.inverse_dynamics(q, v, a) - Jst.T @ f.reshape(-1)) < 1e-12
    assert relerr(engine.forward_dynamics_fext(q, v, tau, f), a) < 1e-9
    assert np.array_equal(engine.inverse_dynamics(q, v, a, f_ext=f), tau)


@pytest.mark.parametrize("spec", RANDOM, ids=lambda s: f"{s[0]}{s[1]}-{s[3]}-{s[2]}{'-aligned' if s[4:] else ''}")
def test_identities(spec):
    model = _random(*spec)
    engine = symdyn.Engine(model)
    q, v, a, f = _states(model, 3, 5)
    for s in range(3):
        _engine_identities(engine, q[s], v[s], a[s], f[s])


@pytest.mark.parametrize("path", [p for p in BUNDLED if p.stem in ("panda", "ur5", "stanford")], ids=lambda p: p.name)
def test_bundled_identities(path):
    engine = symdyn.Engine(symdyn.load_robot(path))
    q, v, a, f = _states(engine.model, 2, 6)
    for s in range(2):
        _engine_identities(engine, q[s], v[s], a[s], f[s])


def test_generated_python_and_c_against_pinocchio(tmp_path, monkeypatch):
    """A tree with chosen frames (two on one body, one on the base) in the generated Python and C,
    numeric and symbolic parameters, batched, and the optional f_ext of inverse/forward dynamics."""
    monkeypatch.setenv("SYMDYN_CACHE", str(tmp_path / "cache"))
    model = _random("tree", 7, 41, "RP")
    model = model.with_provenance(path=str(tmp_path / "tree7.yaml"))
    oracle = pinocchio_functions(pinocchio_model(model), [f.name for f in model.kinematic_frames])
    engine = symdyn.Engine(model)
    for params in ("numeric", "symbolic"):
        (tmp_path / params).mkdir()
        for filename, text in render(model, ("python", "c"), params).items():
            (tmp_path / params / filename).write_text(text)
        name = module_name(model.provenance.path, params)
        py = import_module_file(tmp_path / params / f"{name}.py", f"{name}_kin")
        extra = (py.DEFAULT_PARAMS,) if params == "symbolic" else ()
        for module in (py, symdyn.load_c(tmp_path / params / f"{name}.c")):
            assert tuple(module.FRAMES) == engine.FRAMES
            worst = _against_pinocchio(lambda name: lambda *a: getattr(module, name)(*a, *extra), oracle, model, seed=2)
            assert max(worst.values()) < TOL, (module, worst)
            q, v, a, f = _states(model, 4, 3)
            assert relerr(module.inverse_dynamics(q, v, a, *extra, f_ext=f), engine.inverse_dynamics_fext(q, v, a, f)) < 1e-12
            assert relerr(module.forward_dynamics(q, v, a, *extra, f_ext=f), engine.forward_dynamics_fext(q, v, a, f)) < 1e-10
            with pytest.raises(ValueError):
                module.inverse_dynamics_fext(q, v, a, *extra, f[..., :5])


def test_cli_frames(tmp_path):
    def run(*args):
        return subprocess.run([sys.executable, "-m", "symdyn.cli", *args], capture_output=True, text=True, cwd=ROOT)
    ok = run("generate", "robots/ur5.urdf", "--frames", "tool0,forearm_link", "--out", str(tmp_path / "ok"), "--lang", "python,c")
    assert ok.returncode == 0, ok.stderr
    module = import_module_file(tmp_path / "ok" / "ur5.py", "ur5_cli_frames")
    assert module.FRAMES == ("tool0", "forearm_link")
    assert "#define UR5_NF 2" in (tmp_path / "ok" / "ur5.h").read_text()
    assert module.frame_jacobian(np.zeros(6)).shape == (2, 6, 6)
    for bad in ("tool0,nope", "tool0,tool0", ","):
        out = run("generate", "robots/ur5.urdf", "--frames", bad, "--out", str(tmp_path / "bad"))
        assert out.returncode == 2 and out.stderr.count("\n") == 1 and "robots/ur5.urdf: --frames:" in out.stderr, out.stderr
        assert not (tmp_path / "bad").exists()
