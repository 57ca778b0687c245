"""Mimic joints (URDF <mimic>) in reduced coordinates (symdyn.recursions.mimic), and --mimic independent.

Oracles: Pinocchio's buildModel(..., mimic=True) (coordinates, joint order, rnea; its crba and
computeCoriolisMatrix disagree with the coupled tree when a mimic joint has children, see
test_pinocchio_mimic_crba_is_not_the_oracle), Pinocchio's model of the whole tree with the
coupling applied (G^T M G, G^T tau(G v, G a), J G: symdyn.compare), and identities.
"""
import numpy as np
import pinocchio as pin
import pytest
from click.testing import CliRunner

import symdyn
from conftest import ERD_TREES, ROOT, erd_path, relerr
from symdyn.cli import main
from symdyn.compare import compare, coupling_matrix, tree_configuration
from symdyn.multibody.lie import random_configuration

GRIPPER = ROOT / "tests" / "data" / "mimic_gripper.urdf"
TWO_FINGERS = ROOT / "tests" / "data" / "urdf_mimic.urdf"
TOL = 1e-10
JOINT_PARAMS = """joints:
  finger_right_joint: {damping: 0.3, friction: 0.2, friction_offset: 0.05, armature: 0.01}
  wrist_thumb: {damping: 0.1, armature: 0.02}
  wrist: {damping: 0.2, friction: 0.1}
"""


def _runner():
    try:
        return CliRunner(mix_stderr=False)
    except TypeError:
        return CliRunner()


@pytest.fixture(scope="module")
def gripper():
    return symdyn.load_robot(GRIPPER)


@pytest.fixture(scope="module")
def panda_fingers():
    return symdyn.load_robot(erd_path(ERD_TREES["panda_fingers"]))


def _states(model, count, seed=0):
    rng = np.random.default_rng(seed)
    return (random_configuration(model, rng, count), rng.normal(size=(count, model.nv)),
            rng.normal(size=(count, model.nv)))


@pytest.mark.parametrize("name", ["gripper", "panda_fingers"])
def test_coordinates_and_rnea_are_pinocchios_mimic_model(name, request):
    """Same reduced q and v, same order, same inverse dynamics as Pinocchio's mimic=True parser (the
    Panda's finger joints have URDF damping: friction G^T Fv G v, which rnea leaves out)."""
    model = request.getfixturevalue(name)
    pm = pin.buildModelFromUrdf(str(model.provenance.path), mimic=True)
    data = pm.createData()
    assert (model.nq, model.nv) == (pm.nq, pm.nv) and len(model.mimic) == len(pm.mimicking_joints)
    assert tuple(pm.names)[1:] == tuple(j.name for j in model.joints)
    assert model.joint_names == tuple(pm.names[i] for i in range(1, pm.njoints) if i not in pm.mimicking_joints)
    engine = symdyn.Engine(model)
    q, v, a = _states(model, 4)
    for s in range(4):
        rigid = engine.inverse_dynamics(q[s], v[s], a[s]) - engine.friction(v[s])    # Pinocchio's rnea has no friction
        assert relerr(rigid, pin.rnea(pm, data, q[s], v[s], a[s])) < TOL
        assert relerr(engine.gravity(q[s]), pin.computeGeneralizedGravity(pm, data, q[s])) < TOL


def test_pinocchio_mimic_crba_is_not_the_oracle(gripper):
    """Why the oracle is the coupled whole tree: Pinocchio 4.1's mimic crba agrees with G^T M G when the
    mimic joint is a leaf (the Panda's finger), not when it has children (the gripper's fingertip), while
    symdyn agrees with G^T M G in both cases."""
    pm, pf = pin.buildModelFromUrdf(str(GRIPPER), mimic=True), pin.buildModelFromUrdf(str(GRIPPER))
    dm, df = pm.createData(), pf.createData()
    G, engine = coupling_matrix(gripper), symdyn.Engine(gripper)
    sym = lambda A: np.triu(A) + np.triu(A, 1).T
    theirs = ours = 0.0
    for q in _states(gripper, 10, seed=3)[0]:
        coupled = G.T @ sym(pin.crba(pf, df, tree_configuration(gripper, q))) @ G
        ours = max(ours, relerr(engine.mass_matrix(q), coupled))
        theirs = max(theirs, relerr(sym(pin.crba(pm, dm, q)), coupled))
    assert ours < TOL
    print(f"Pinocchio {pin.__version__} mimic crba vs G^T M G: {theirs:.1e}")


def test_gripper_every_function_python_c_pinocchio(tmp_path, monkeypatch):
    """Every function of the reduced set, generated Python and C, against the engine and against
    Pinocchio's whole tree with the coupling applied; with friction and armature on mimic joints."""
    monkeypatch.setenv("SYMDYN_CACHE", str(tmp_path / "cache"))
    params = tmp_path / "joints.yaml"
    params.write_text(JOINT_PARAMS)
    model = symdyn.load_robot(GRIPPER, joint_params=params)
    notes = []
    report = compare(model, states=6, workdir=tmp_path, notes=notes)
    assert any("coupling applied" in n for n in notes)
    assert "udu_factor" not in report and "forward_dynamics" in report
    for name, row in report.items():
        assert set(row) >= {"python", "c"}, name
        if name not in ("friction", "base_regressor", "base_parameters"):
            assert "pinocchio" in row, name
        for column, err in row.items():
            assert err < TOL, (name, column, err)


@pytest.mark.parametrize("floating", [False, True])
def test_panda_fingers_engine_and_python_against_pinocchio(floating, tmp_path):
    """The Panda with its mimic finger, fixed and floating base (free-flyer root: q of size nq)."""
    model = symdyn.load_robot(erd_path(ERD_TREES["panda_fingers"]), floating_base=floating)
    assert (model.nq, model.nv) == ((15, 14) if floating else (8, 8))
    report = compare(model, states=4, workdir=tmp_path, with_c=False)
    for name, row in report.items():
        assert "pinocchio" in row or name in ("friction", "base_regressor", "base_parameters"), name
        for column, err in row.items():
            assert err < TOL, (name, column, err)


def test_identities(gripper):
    """Forward dynamics inverts inverse dynamics, M^-1 inverts M, the base parameters reproduce the
    torques, and the kinetic energy is the whole tree's at the coupled velocity."""
    engine, tree = symdyn.Engine(gripper), symdyn.Engine(symdyn.load_robot(GRIPPER, mimic="independent"))
    G = coupling_matrix(gripper)
    q, v, tau = _states(gripper, 5, seed=1)
    qdd = engine.forward_dynamics(q, v, tau)
    assert relerr(engine.inverse_dynamics(q, v, qdd), tau) < TOL
    M = engine.mass_matrix(q)
    assert relerr(M @ engine.mass_matrix_inverse(q), np.broadcast_to(np.eye(gripper.nv), M.shape)) < TOL
    beta = engine.base_parameters(np.array(gripper.parameters))
    assert relerr(engine.base_regressor(q, v, qdd) @ beta, tau) < TOL
    qt, vt = tree_configuration(gripper, q), v @ G.T
    K = np.einsum("si,sij,sj->s", v, M, v)
    assert relerr(K, np.einsum("si,sij,sj->s", vt, tree.mass_matrix(qt), vt)) < TOL
    # the coupled tree accelerates as the reduced model: qdd_tree = G qdd (J qdd_tree = 0)
    assert relerr(engine.frame_acceleration_bias(q, v), tree.frame_acceleration_bias(qt, vt)) < TOL


def test_reduced_model_has_fewer_base_parameters(gripper):
    independent = symdyn.load_robot(GRIPPER, mimic="independent")
    from symdyn.recursions.base_parameters import base_parameters
    assert base_parameters(gripper).b < base_parameters(independent).b


def test_independent_is_the_old_behavior():
    """--mimic independent is asked for: no warning that the mimic is not honored (issue 24 item 8), also not
    an error with --strict; the mimic entries are still checked."""
    model = symdyn.load_robot(TWO_FINGERS, mimic="independent")
    assert model.nv == 3 and not model.mimic
    assert model.provenance.warnings == ()
    assert symdyn.load_robot(TWO_FINGERS, mimic="independent", strict=True).nv == 3
    reduced = symdyn.load_robot(TWO_FINGERS)
    assert reduced.nv == 2 and reduced.provenance.warnings == () and reduced.joint_names == ("wrist", "finger_left")


def test_cli_generate_info_and_mimic_option(tmp_path):
    runner = _runner()
    for mode, nv in (("reduced", 2), ("independent", 3)):
        out = tmp_path / mode
        result = runner.invoke(main, ["generate", str(TWO_FINGERS), "--lang", "python", "--out", str(out),
                                      "--mimic", mode])
        assert result.exit_code == 0, (result.output, result.exception)
        module = symdyn.compare.import_module_file(out / "urdf_mimic.py", f"mimic_{mode}")
        assert module.NV == nv and module.mass_matrix(np.zeros(nv)).shape == (nv, nv)
        assert hasattr(module, "udu_factor") == (mode == "independent")
    again = tmp_path / "again"
    runner.invoke(main, ["generate", str(TWO_FINGERS), "--lang", "python", "--out", str(again)])
    assert (again / "urdf_mimic.py").read_bytes() == (tmp_path / "reduced" / "urdf_mimic.py").read_bytes()
    result = runner.invoke(main, ["info", "--no-ops", str(GRIPPER)])
    assert result.exit_code == 0 and "4 DOF" in result.stdout
    assert "mimic: q = -0.5 * q[wrist] + 0.2" in result.stdout


def test_cli_function_without_reduced_form_is_refused(tmp_path):
    out = tmp_path / "out"
    result = _runner().invoke(main, ["generate", str(GRIPPER), "--functions", "mass_matrix,udu_factor",
                                     "--out", str(out)])
    assert result.exit_code == 2 and "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"symdyn: error: {GRIPPER}: ") and "udu_factor" in lines[0]
    assert not out.exists()


def _yaml_robot(mimic_of_b, mimic_of_c=None, b_type="revolute"):
    joints = [{"name": "a", "type": "revolute", "parent": "base", "child": "l1", "axis": [0, 0, 1]},
              {"name": "b", "type": b_type, "parent": "l1", "child": "l2", "origin": {"xyz": [0, 0, 0.3]},
               "mimic": mimic_of_b},
              {"name": "c", "type": "revolute", "parent": "l2", "child": "l3", "origin": {"xyz": [0, 0, 0.3]},
               "axis": [0, 1, 0]}]
    if b_type == "spherical":
        del joints[1]["mimic"]
        joints[2]["mimic"] = mimic_of_b
    elif mimic_of_c:
        joints[2]["mimic"] = mimic_of_c
    links = [{"name": f"l{k}", "mass": 1.0, "com": [0.1, 0, 0.1], "inertia": {"ixx": 0.01, "iyy": 0.02, "izz": 0.03}}
             for k in (1, 2, 3)]
    return {"name": "chain", "links": links, "joints": joints}


def test_yaml_mimic_and_chains_of_mimics():
    """A mimic of a mimic follows the first independent joint with composed multiplier and offset."""
    from symdyn.readers.description import build_model
    model = build_model(_yaml_robot({"joint": "a", "multiplier": 2.0, "offset": 0.1},
                                    {"joint": "b", "multiplier": -0.5, "offset": 0.3}), "chain.yaml")
    assert model.nv == 1 and [(m.joint, m.master) for m in model.mimic] == [(1, 0), (2, 0)]
    assert model.mimic[1].multiplier == -1.0 and model.mimic[1].offset == pytest.approx(0.25)
    tree = build_model(_yaml_robot({"joint": "a", "multiplier": 2.0, "offset": 0.1},
                                   {"joint": "b", "multiplier": -0.5, "offset": 0.3}), "chain.yaml", mimic="independent")
    q, v, a = 0.7, 1.3, -0.4
    qt, vt, at = [q, 2 * q + 0.1, -q + 0.25], [v, 2 * v, -v], [a, 2 * a, -a]
    G = coupling_matrix(model)
    assert relerr(symdyn.Engine(model).inverse_dynamics([q], [v], [a]),
                  G.T @ symdyn.Engine(tree).inverse_dynamics(qt, vt, at)) < TOL


@pytest.mark.parametrize("mimic_of_b, mimic_of_c, b_type, message", [
    ({"joint": "c"}, {"joint": "b"}, "revolute", "follow each other in a cycle"),
    ({"joint": "b"}, None, "spherical", "couples 1-DoF joints only"),
    ({"joint": "a", "gain": 2}, None, "revolute", "gain"),
    ({"joint": "a", "multiplier": "two"}, None, "revolute", "multiplier"),
])
def test_bad_mimic_is_one_line_error(mimic_of_b, mimic_of_c, b_type, message):
    from symdyn.readers.description import build_model
    with pytest.raises(symdyn.RobotFileError) as caught:
        build_model(_yaml_robot(mimic_of_b, mimic_of_c, b_type), "chain.yaml")
    text = str(caught.value)
    assert text.startswith("chain.yaml: ") and message in text and len(text.splitlines()) == 1


def test_mimic_of_unknown_joint_is_independent_with_a_warning():
    """A vendor file's slip (example-robot-data's alex_psyonic_hands follows joints it does not have)."""
    from symdyn.readers.description import build_model
    warnings = []
    model = build_model(_yaml_robot({"joint": "nowhere"}), "chain.yaml", warn=warnings.append)
    assert model.nv == 3 and not model.mimic
    assert warnings == ["joint 'b': <mimic> follows 'nowhere', which is not a moving joint of the robot: loaded as "
                        "an independent joint"]


def test_cli_bad_mimic_exit_2_nothing_written(tmp_path):
    import yaml
    path = tmp_path / "cycle.yaml"
    path.write_text(yaml.safe_dump(_yaml_robot({"joint": "c"}, {"joint": "b"})))
    out = tmp_path / "out"
    result = _runner().invoke(main, ["generate", str(path), "--out", str(out)])
    assert result.exit_code == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip().count("\n") == 0 and f"{path}: " in result.stderr and "cycle" in result.stderr
    assert not out.exists()


def test_lock_of_a_master_locks_its_mimic_joints(tmp_path):
    """--lock wrist=0.4 locks the thumb that follows it at -0.5 * 0.4 + 0.2; the rest stays reduced."""
    from symdyn.readers.selection import Selection
    model = symdyn.load_robot(GRIPPER, selection=Selection({"wrist": 0.4}))
    assert model.joint_names == ("shoulder", "finger_left_joint", "tip_joint") and model.provenance.warnings == ()
    assert dict(model.provenance.locked) == pytest.approx({"wrist": 0.4, "wrist_thumb": 0.0}) and len(model.mimic) == 1
    report = compare(model, states=3, workdir=tmp_path, with_c=False)
    assert "pinocchio" in report["mass_matrix"] and "pinocchio" in report["forward_dynamics"]
    for name, row in report.items():
        for column, err in row.items():
            assert err < TOL, (name, column, err)


@pytest.mark.parametrize("command", ["info", "generate", "compare"])
def test_cli_function_not_defined_for_mimic_is_one_line(command, tmp_path):
    """A function the reduced coordinates do not define (the UDU^T factor), asked of any command: one line
    naming the file, exit 2, nothing written (`info` gave a traceback, exit 1)."""
    extra = {"generate": ["--out", str(tmp_path)], "compare": ["--states", "1"], "info": ["--ops"]}[command]
    result = CliRunner().invoke(main, [command, str(GRIPPER), "--functions", "udu_factor", *extra])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and len(result.output.strip().splitlines()) == 1
    assert str(GRIPPER) in result.output and "mimic" in result.output
    assert list(tmp_path.iterdir()) == []


def _central(f, x, h=1e-6):
    """Central differences of f along each coordinate of x (the last axis of the result)."""
    return np.stack([(f(x + h * d) - f(x - h * d)) / (2 * h) for d in np.eye(len(x))], axis=-1)


@pytest.mark.parametrize("name", ["gripper", "panda_fingers"])
def test_forward_dynamics_derivatives_in_reduced_coordinates(name, request, tmp_path, monkeypatch):
    """The forward dynamics' derivatives in reduced coordinates (-M^-1 dtau at qdd = FD, M^-1 the reduced
    inverse): central differences of the reduced forward dynamics, with and without external wrenches; generated
    Python (and C for the gripper) against the engine and against Pinocchio's tree derivatives with the coupling
    applied (symdyn.oracle.pinocchio)."""
    monkeypatch.setenv("SYMDYN_CACHE", str(tmp_path / "cache"))
    model = request.getfixturevalue(name)
    engine, rng = symdyn.Engine(model), np.random.default_rng(7)
    q, v, tau = _states(model, 2, seed=7)
    wrench = rng.normal(size=(len(model.kinematic_frames), 6))
    for s in range(2):
        fq, fv, Minv = engine.forward_dynamics_derivatives(q[s], v[s], tau[s])
        assert relerr(fq, _central(lambda x: engine.forward_dynamics(x, v[s], tau[s]), q[s])) < 1e-6
        assert relerr(fv, _central(lambda x: engine.forward_dynamics(q[s], x, tau[s]), v[s])) < 1e-6
        assert relerr(Minv, _central(lambda x: engine.forward_dynamics(q[s], v[s], x), tau[s])) < 1e-6
        wq, _, _ = engine.forward_dynamics_derivatives_fext(q[s], v[s], tau[s], wrench)
        assert relerr(wq, _central(lambda x: engine.forward_dynamics_fext(x, v[s], tau[s], wrench), q[s])) < 1e-6
        assert np.abs(wq - fq).max() > 1e-3
    names = ["inverse_dynamics_derivatives", "forward_dynamics_derivatives", "forward_dynamics_derivatives_fext"]
    report = compare(model, states=3, workdir=tmp_path, with_c=name == "gripper", functions=names)
    assert all("pinocchio" in report[n] for n in names[:2]) and ("c" in report[names[1]]) == (name == "gripper")
    for fn, row in report.items():
        for column, err in row.items():
            assert err < TOL, (fn, column, err)
