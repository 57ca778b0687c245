"""Friction and rotor inertia, the regressor and the base parameters (issue 12).

Oracles: Pinocchio (model.armature in crba/aba/rnea/computeMinverse, computeJointTorqueRegressor;
friction terms added term by term, since Pinocchio's rnea ignores model.damping and model.friction),
the identity regressor @ PARAMETERS == inverse_dynamics, and the rank of sampled regressors."""
import dataclasses

import numpy as np
import pinocchio as pin
import pytest
from click.testing import CliRunner

import symdyn
from conftest import ERD_ARMS, ROOT, erd_path, random_states, relerr
from oracle import to_pinocchio
from random_chain import random_chain, random_tree, with_joint_dynamics
from symdyn.recursions.base_parameters import base_parameters, samples
from symdyn.cli import main
from symdyn.compare import joint_dynamics_vectors, pinocchio_functions

TOL = 1e-10
PIN = ("inverse_dynamics", "mass_matrix", "mass_matrix_inverse", "forward_dynamics", "gravity",
       "coriolis_matrix", "nonlinear_effects", "regressor")
ARGS = {"inverse_dynamics": 3, "forward_dynamics": 3, "coriolis_matrix": 2, "nonlinear_effects": 2, "regressor": 3}


def _models():
    panda = symdyn.load_robot(ROOT / "robots" / "panda.urdf")
    return {"panda": with_joint_dynamics(panda, 1), "stanford": with_joint_dynamics(
        symdyn.load_robot(ROOT / "robots" / "stanford.yaml"), 2),
        "chain-RP": with_joint_dynamics(random_chain(6, 3, "RP"), 3),
        "tree-RP": with_joint_dynamics(random_tree(8, 2, "RP", branching=3.0), 4),
        "tree-aligned": with_joint_dynamics(random_tree(9, 3, "R", True, branching=2.0), 5),
        "panda-armature-only": with_joint_dynamics(panda, 6, friction=False)}


MODELS = _models()


def _against_pinocchio(model, count=10, smoothing=0.0):
    engine = symdyn.Engine(model)
    oracle = pinocchio_functions(to_pinocchio(model), offset=joint_dynamics_vectors(model)["friction_offset"], smoothing=smoothing)
    q, qd, qdd = random_states(model.dof, count, seed=5)
    worst = {}
    for name in PIN:
        args = (q, qd, qdd)[:ARGS.get(name, 1)]
        ours = getattr(engine, name)(*args)
        theirs = np.stack([oracle[name](*(a[s] for a in args)) for s in range(count)])
        worst[name] = relerr(ours, theirs)
    return worst


@pytest.mark.parametrize("name", sorted(MODELS))
def test_friction_and_armature_match_pinocchio(name):
    """Every function Pinocchio has, with random armature, viscous, Coulomb and offset friction."""
    worst = _against_pinocchio(MODELS[name])
    assert max(worst.values()) < TOL, worst


def test_armature_changes_what_it_should():
    """Ia on M's diagonal and D(k); gravity and the Coriolis matrix unchanged; friction only where qd enters."""
    bare = symdyn.Engine(symdyn.load_robot(ROOT / "robots" / "stanford.yaml"))
    model = with_joint_dynamics(bare.model, 7)
    rich = symdyn.Engine(model)
    q, qd, qdd = random_states(6, 5, seed=2)
    Ia = np.array([j.armature for j in model.joints])
    assert relerr(rich.mass_matrix(q) - bare.mass_matrix(q), np.broadcast_to(np.diag(Ia), (5, 6, 6))) < 1e-12
    assert relerr(rich.gravity(q), bare.gravity(q)) < 1e-14
    assert relerr(rich.coriolis_matrix(q, qd), bare.coriolis_matrix(q, qd)) < 1e-14
    fr = np.array([[j.damping, j.friction, j.friction_offset] for j in model.joints]).T
    friction = fr[0] * qd + fr[1] * np.sign(qd) + fr[2]
    assert relerr(rich.friction(qd), friction) < 1e-14
    assert relerr(rich.inverse_dynamics(q, qd, qdd), bare.inverse_dynamics(q, qd, qdd) + Ia * qdd + friction) < 1e-12
    assert relerr(rich.nonlinear_effects(q, qd), bare.nonlinear_effects(q, qd) + friction) < 1e-12
    # the last joint's D(k) is its own (tip) inertia about the axis plus Ia
    assert relerr(rich.articulated_inertia(q)[..., -1] - bare.articulated_inertia(q)[..., -1], np.full(5, Ia[-1])) < 1e-12


def test_smooth_coulomb_friction():
    model = dataclasses.replace(MODELS["panda"], coulomb_smoothing=0.05)
    worst = _against_pinocchio(model, smoothing=0.05)
    assert max(worst.values()) < TOL, worst
    engine = symdyn.Engine(model)
    qd = np.array([[0.01, -0.02, 0.0, 1.0, -1.0, 0.3, 0.0]])
    Fc = np.array([j.friction for j in model.joints])
    assert relerr(engine.friction(qd) - engine.friction(np.zeros((1, 7))) -
                  np.array([j.damping for j in model.joints]) * qd, Fc * np.tanh(qd / 0.05)) < 1e-14


@pytest.mark.parametrize("name", sorted(ERD_ARMS))
def test_regressor_equals_pinocchio_on_real_arms(name):
    """Rigid-body columns equal computeJointTorqueRegressor; URDF damping and friction read as Pinocchio's parser does."""
    path = erd_path(ERD_ARMS[name])
    model = symdyn.load_robot(path)
    pmodel = pin.buildModelFromUrdf(str(path))
    assert np.array_equal(pmodel.damping, [j.damping for j in model.joints])
    assert np.array_equal(pmodel.friction, [j.friction for j in model.joints])
    engine, data = symdyn.Engine(model), pmodel.createData()
    q, qd, qdd = random_states(model.dof, 5, seed=9)
    Y = engine.regressor(q, qd, qdd)
    assert Y.shape == (5, model.dof, 14 * model.dof)
    for s in range(5):
        assert relerr(Y[s, :, :10 * model.dof], pin.computeJointTorqueRegressor(pmodel, data, q[s], qd[s], qdd[s])) < TOL
    assert relerr(Y @ engine.PARAMETERS, engine.inverse_dynamics(q, qd, qdd)) < TOL


@pytest.mark.parametrize("name", sorted(MODELS))
def test_regressor_structure(name):
    """Y @ PARAMETERS = inverse dynamics; joint j sees only the bodies of its subtree (exact zeros)."""
    model = MODELS[name]
    engine = symdyn.Engine(model)
    q, qd, qdd = random_states(model.dof, 6, seed=1)
    Y = engine.regressor(q, qd, qdd)
    assert relerr(np.einsum("...ij,j->...i", Y, engine.PARAMETERS), engine.inverse_dynamics(q, qd, qdd)) < TOL
    parents = [j.parent for j in model.joints]
    for j in range(model.dof):
        for k in range(model.dof):
            below, a = False, k
            while a >= 0 and not below:
                below, a = a == j, parents[a]
            block = Y[:, j, 10 * k:10 * k + 10]
            assert below or np.all(block == 0), (j, k)
    # other parameters: still linear
    other = engine.PARAMETERS * np.random.default_rng(3).uniform(0.5, 2.0, len(engine.PARAMETERS))
    assert relerr(Y @ other, symdyn.Engine(model, other).inverse_dynamics(q, qd, qdd)) < TOL


@pytest.mark.parametrize("name", sorted(MODELS))
def test_base_parameters(name):
    """b = the rank of the sampled regressor; the base columns are independent; the grouping is exact for
    any standard parameters, at states it was not computed from."""
    model = MODELS[name]
    base = base_parameters(model)
    W = samples(model, 40, seed=123)
    assert base.b == np.linalg.matrix_rank(W)
    assert np.linalg.matrix_rank(W[:, list(base.kept)]) == base.b
    assert base.gap[0] > 1e4 * max(base.gap[1], 1e-16) and base.gap[1] < 1e-12
    engine = symdyn.Engine(model)
    q, qd, qdd = random_states(model.dof, 8, seed=4)
    pi = engine.PARAMETERS * np.random.default_rng(0).uniform(0.5, 2.0, len(engine.PARAMETERS))
    Yb, beta = engine.base_regressor(q, qd, qdd), engine.base_parameters(pi)
    assert Yb.shape == (8, model.dof, base.b) and beta.shape == (base.b,)
    assert relerr(np.einsum("...ij,j->...i", Yb, beta), engine.regressor(q, qd, qdd) @ pi) < TOL


def test_panda_base_parameters_are_khalils():
    """43 rigid-body base parameters (Gaz et al. 2019), clean decimal coefficients (0.316^2 = 0.099856),
    the first joint's rotor grouped into ZZR1, the first link's other parameters gone."""
    model = symdyn.load_robot(ROOT / "robots" / "panda.urdf")
    base = base_parameters(model)
    names = [model.parameter_names[i] for i in base.kept]
    rigid = [n for n in names if n.split(".")[1] not in ("Fv", "Fc", "Fo", "Ia")]
    assert len(rigid) == 43 and base.b == 43 + 21 + 5
    assert names[0] == "panda_link1.Izz" and "panda_joint1.Ia" not in names and "panda_joint2.Ia" not in names
    text = "\n".join(base.describe())
    assert "panda_link1.IzzR = panda_link1.Izz + panda_link2.Iyy + panda_joint1.Ia" in text
    assert "0.099856*panda_link3.m" in text and "0.10666225*panda_link4.m" in text


def test_base_parameters_do_not_depend_on_the_samples():
    """Another seed and sample count: the same grouping, the same coefficients to the last bit."""
    import symdyn.recursions.base_parameters as bp
    model = MODELS["tree-RP"]
    first = base_parameters(model)
    saved = bp.samples
    try:
        bp.samples = lambda m, count, seed: saved(m, count + 17, seed + 1)
        bp.base_parameters.cache_clear()
        second = bp.base_parameters(model)
    finally:
        bp.samples = saved
        bp.base_parameters.cache_clear()
    assert first.kept == second.kept
    assert first.describe() == second.describe()


def test_info_prints_base_parameters_and_joint_params_file(tmp_path):
    params = tmp_path / "friction.yaml"
    params.write_text("coulomb_smoothing: 0.02\njoints:\n  panda_joint2: {damping: 0.5, friction: 0.25, armature: 0.1}\n")
    result = CliRunner().invoke(main, ["info", str(ROOT / "robots" / "panda.urdf"), "--no-ops", "--base-parameters",
                                       "--joint-params", str(params)])
    assert result.exit_code == 0, result.output
    assert "base parameters: 69 of 98 standard" in result.output
    assert "panda_joint2            revolute   axis [0, 0, 1] Fv 0.5 Fc 0.25 Ia 0.1" in result.output
    assert "Coulomb friction smoothed: Fc tanh(qd / 0.02)" in result.output
    model = symdyn.load_robot(ROOT / "robots" / "panda.urdf", joint_params=params)
    assert model.coulomb_smoothing == 0.02 and model.joints[1].armature == 0.1 and model.joints[0].damping == 0.003
    assert "friction.yaml" in model.provenance.joint_params


@pytest.mark.parametrize("text, message", [
    ("joints:\n  elbow: {damping: 1.0}\n", "unknown joint 'elbow'"),
    ("joints:\n  panda_joint1: {armature: -1}\n", "joint 'panda_joint1': armature must not be negative, got -1.0"),
    ("joints:\n  panda_joint1: {friction: -0.1}\n", "friction must not be negative"),
    ("joints:\n  panda_joint1: {stiction: 1}\n", "unknown field 'stiction'"),
    ("joint:\n  panda_joint1: {damping: 1}\n", "unknown field 'joint'"),
    ("coulomb_smoothing: -1\n", "coulomb_smoothing must be a number >= 0"),
    ("joints: [1, 2\n", "YAML syntax error"),
])
def test_bad_joint_params_file(tmp_path, text, message):
    params = tmp_path / "p.yaml"
    params.write_text(text)
    out = tmp_path / "out"
    for args in (["info", "--no-ops"], ["generate", "--out", str(out)]):
        result = CliRunner().invoke(main, args + [str(ROOT / "robots" / "panda.urdf"), "--joint-params", str(params)])
        assert result.exit_code == 2
        lines = result.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"symdyn: error: {params}: ") and message in lines[0], lines
    assert not out.exists()


FLOATING = {
    "panda-floating": lambda: with_joint_dynamics(symdyn.load_robot(ROOT / "robots" / "panda.urdf", floating_base=True), 11),
    "spherical-inner": lambda: _multidof({1: "spherical"}),
    "planar-root": lambda: _multidof({0: "planar"}),
}


def _multidof(kinds, n=5, seed=3):
    """A random chain with multi-DoF joints; friction and armature on its 1-DoF joints."""
    from symdyn.readers.description import build_model
    from symdyn.multibody.synthetic import random_description
    d = random_description(n, seed)
    for pos, kind in kinds.items():
        d["joints"][pos]["type"] = kind
    model = build_model(d, f"<chain {kinds}>")
    rich = with_joint_dynamics(model, seed)
    return dataclasses.replace(rich, joints=tuple(j if j.kind.nv == 1 else base for j, base in zip(rich.joints, model.joints)))


@pytest.mark.parametrize("name", sorted(FLOATING))
def test_floating_base_and_multi_dof_joints(name):
    """Free-flyer, spherical and planar joints: every Pinocchio function (the regressor included, one
    row per joint column) with friction and armature on the 1-DoF joints, and the base parameters."""
    from symdyn.multibody import lie
    model = FLOATING[name]()
    engine = symdyn.Engine(model)
    oracle = pinocchio_functions(to_pinocchio(model), offset=joint_dynamics_vectors(model)["friction_offset"])
    rng = np.random.default_rng(6)
    q, qd, qdd = lie.random_configuration(model, rng, 5), rng.normal(size=(5, model.nv)), rng.normal(size=(5, model.nv))
    for name_ in PIN:
        args = (q, qd, qdd)[:ARGS.get(name_, 1)]
        theirs = np.stack([oracle[name_](*(a[s] for a in args)) for s in range(5)])
        assert relerr(getattr(engine, name_)(*args), theirs) < TOL, name_
    base = base_parameters(model)
    W = samples(model, 40, seed=5)
    assert base.b == np.linalg.matrix_rank(W) and base.gap[1] < 1e-12
    pi = engine.PARAMETERS * rng.uniform(0.5, 2.0, len(engine.PARAMETERS))
    assert relerr(np.einsum("...ij,j->...i", engine.base_regressor(q, qd, qdd), engine.base_parameters(pi)),
                  engine.regressor(q, qd, qdd) @ pi) < TOL


def test_friction_on_a_multi_dof_joint_is_refused(tmp_path):
    params = tmp_path / "p.yaml"
    params.write_text("joints:\n  root_joint: {armature: 0.1}\n")
    result = CliRunner().invoke(main, ["info", "--no-ops", "--floating-base", str(ROOT / "robots" / "panda.urdf"),
                                       "--joint-params", str(params)])
    assert result.exit_code == 2
    assert "root_joint': friction and armature are for 1-DoF joints" in result.output


def test_ball_and_free_joint_damping_and_armature_columns():
    """An MJCF ball or free joint's damping and armature (on each of its DoFs, as MuJoCo) are parameters:
    Y PARAMETERS = inverse_dynamics, in MuJoCo's coordinates and Pinocchio's, its Fc and Fo columns zero,
    and the base parameters reproduce Y p."""
    path = ROOT / "tests" / "data" / "mjcf" / "ball_free_damping.xml"
    rng = np.random.default_rng(4)
    for conventions in ("mujoco", "pinocchio"):
        model = symdyn.load_robot(path, conventions=conventions)
        engine = symdyn.Engine(model)
        q = np.stack([engine.integrate(engine.neutral(), rng.normal(size=model.nv)) for _ in range(4)])
        qd, qdd = rng.normal(size=(2, 4, model.nv))
        Y = engine.regressor(q, qd, qdd)
        assert relerr(Y @ engine.PARAMETERS, engine.inverse_dynamics(q, qd, qdd)) < TOL
        nb = len(model.bodies)
        for k, j in enumerate(model.joints):
            columns = Y[..., 10 * nb + 4 * k:10 * nb + 4 * k + 4]
            if j.kind.nv > 1:
                assert np.any(columns[..., 0]) == bool(j.damping) and np.any(columns[..., 3]) == bool(j.armature)
                assert not np.any(columns[..., 1:3]), j.name
        pi = engine.PARAMETERS * rng.uniform(0.5, 2.0, len(engine.PARAMETERS))
        assert relerr(np.einsum("...ij,j->...i", engine.base_regressor(q, qd, qdd), engine.base_parameters(pi)),
                      Y @ pi) < TOL


@pytest.mark.parametrize("name", ["panda-floating", "spherical-inner"])
def test_regressor_inward_and_outward_rows_agree(name, monkeypatch):
    """A joint's rows from each body's block carried inward (block_inward) equal those from its
    columns carried outward (body_columns): both forms forced on every joint, numerically."""
    from symdyn.multibody import lie
    from symdyn.recursions import regressor as reg
    model = FLOATING[name]()
    rng = np.random.default_rng(8)
    q, qd, qdd = lie.random_configuration(model, rng, 4), rng.normal(size=(4, model.nv)), rng.normal(size=(4, model.nv))
    Y = {}
    for form, cost in (("inward", 0), ("outward", 10 ** 9)):
        monkeypatch.setattr(reg, "INWARD_PER_BODY", cost)
        Y[form] = symdyn.Engine(model).regressor(q, qd, qdd)
    assert relerr(Y["inward"], Y["outward"]) < 1e-12
    tau = symdyn.Engine(model).inverse_dynamics(q, qd, qdd)
    assert relerr(Y["inward"] @ symdyn.Engine(model).PARAMETERS, tau) < TOL
