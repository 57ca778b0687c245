"""Contacts: constraint Jacobian and drift, constrained forward dynamics (with and without Baumgarte
stabilization) and impacts, against Pinocchio's constraintDynamics / impulseDynamics
(RigidConstraintModel CONTACT_3D / CONTACT_6D, LOCAL_WORLD_ALIGNED; symdyn.compare) on solo12 with a
floating base on its 4 feet and on a held-out random tree; against identities (J qdd + J_dot v = 0,
the equations of motion, J v+ = -e J v, kinetic energy, the M-closest velocity, finite differences);
the generated Python and C against the engine; the command line and the YAML `contacts:` key; bad input."""
import numpy as np
import pinocchio as pin
import pytest
from click.testing import CliRunner

import symdyn
from conftest import ROOT, erd_path, relerr
from random_chain import random_tree
from symdyn.multibody import lie
from symdyn.cli import main
from symdyn.compare import import_module_file, pinocchio_constraint_functions, pinocchio_model
from symdyn.multibody.constraints import attach, parse_contacts
from symdyn.errors import RobotFileError
from symdyn.functions import CONSTRAINED
from symdyn.generate import module_name, render

TOL = 1e-9
FEET = ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")
SOLO = "solo_description/robots/solo12.urdf"
NAMES = [fn.name for fn in CONSTRAINED]


def _states(model, count, seed):
    rng = np.random.default_rng(seed)
    return lie.random_configuration(model, rng, count), rng.normal(size=(count, model.nv)), \
        rng.normal(size=(count, model.nv)) * 3


def _extra(model, count, seed):
    """gains (Kp, Kd), a position error and a restitution per state."""
    rng = np.random.default_rng(seed)
    nc = sum(c.rows for c in model.constraints)
    return {"gains": np.column_stack([rng.uniform(10, 200, count), rng.uniform(1, 30, count)]),
            "error": rng.normal(size=(count, nc)) * 0.01, "restitution": rng.uniform(0, 1, (count, 1))}


def _args(model, fn, count=4, seed=0):
    q, v, tau = _states(model, count, seed)
    given = {"q": q, "qd": v, "tau": tau, **_extra(model, count, seed)}
    return [given[a] for a in fn.args]


@pytest.fixture(scope="module")
def solo():
    """solo12, floating, on its 4 feet (point contacts), with Pinocchio's own parse of the URDF."""
    path = erd_path(SOLO)
    model = symdyn.load_robot(path, floating_base=True, contacts=",".join(FEET))
    return model, pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())


def _tree():
    """A held-out fixed-base tree (14 revolute and prismatic joints) with point contacts on two leaves."""
    return attach(random_tree(14, 43, "RP", fixed=0.3), parse_contacts("l18,l15"))


def _against_pinocchio(model, pmodel, count=4, seed=1):
    engine = symdyn.Engine(model)
    oracle = pinocchio_constraint_functions(pmodel, model, lambda v: pmodel.damping * v + pmodel.friction * np.sign(v))
    worst = {}
    for fn in CONSTRAINED:
        if fn.name not in oracle:
            continue
        args = _args(model, fn, count, seed)
        ours = getattr(engine, fn.name)(*args)
        for s in range(count):
            theirs = oracle[fn.name](*(a[s] for a in args))
            err = max(relerr(x[s], y) for x, y in zip(ours, theirs)) if isinstance(ours, tuple) else \
                relerr(ours[s], theirs)
            worst[fn.name] = max(worst.get(fn.name, 0.0), err)
    return worst


def test_solo12_engine_equals_pinocchio(solo):
    model, pm = solo
    assert symdyn.Engine(model).CONSTRAINTS == tuple(f"{f}:3d" for f in FEET)
    worst = _against_pinocchio(model, pm)
    assert set(worst) == set(NAMES) and max(worst.values()) < TOL, worst


def test_solo12_6d_contacts_equal_pinocchio():
    """Two welded feet (CONTACT_6D: Pinocchio constrains the frame's spatial acceleration)."""
    path = erd_path(SOLO)
    model = symdyn.load_robot(path, floating_base=True, contacts="FL_FOOT:6d,HR_FOOT:6d")
    worst = _against_pinocchio(model, pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer()), seed=2)
    assert len(worst) == 4 and max(worst.values()) < TOL, worst


def test_random_tree_engine_equals_pinocchio():
    model = _tree()
    worst = _against_pinocchio(model, pinocchio_model(model), seed=3)
    assert set(worst) == set(NAMES) and max(worst.values()) < TOL, worst


@pytest.mark.parametrize("which", ["solo12", "tree", "solo12-6d"])
def test_identities(which, solo):
    """J qdd + J_dot v = 0 (= -Kd J v - Kp phi stabilized), M qdd + b = tau + J^T lambda; impacts:
    J v+ = -e J v, M (v+ - v) = J^T P, a plastic impact loses kinetic energy and v+ is the velocity
    of the constraint's null space closest to v in the M-norm."""
    if which == "solo12":
        model = solo[0]
    elif which == "tree":
        model = _tree()
    else:
        model = symdyn.load_robot(erd_path(SOLO), floating_base=True, contacts="FL_FOOT:6d,FR_FOOT")
    engine = symdyn.Engine(model)
    q, v, tau = _states(model, 3, 5)
    extra = _extra(model, 3, 5)
    qdd, lam = engine.constrained_forward_dynamics(q, v, tau)
    qdd_b, lam_b = engine.constrained_forward_dynamics_baumgarte(q, v, tau, extra["gains"], extra["error"])
    vp, P = engine.impact(q, v, extra["restitution"])
    v0, P0 = engine.impact(q, v, np.zeros((3, 1)))
    rng = np.random.default_rng(6)
    for s in range(3):
        J, drift = engine.constraint_jacobian(q[s]), engine.constraint_drift(q[s], v[s])
        M, b = engine.mass_matrix(q[s]), engine.nonlinear_effects(q[s], v[s])
        scale = 1 + np.abs(J @ qdd[s]).max()
        assert np.abs(J @ qdd[s] + drift).max() < 1e-11 * scale
        assert relerr(M @ qdd[s] + b, tau[s] + J.T @ lam[s]) < 1e-11
        kp, kd = extra["gains"][s]
        assert np.abs(J @ qdd_b[s] + drift + kd * J @ v[s] + kp * extra["error"][s]).max() < 1e-11 * scale * kp
        assert relerr(M @ qdd_b[s] + b, tau[s] + J.T @ lam_b[s]) < 1e-11
        e = extra["restitution"][s, 0]
        assert np.abs(J @ vp[s] + e * J @ v[s]).max() < 1e-12 * (1 + np.abs(J @ v[s]).max())
        assert relerr(M @ (vp[s] - v[s]), J.T @ P[s]) < 1e-11
        assert np.abs(J @ v0[s]).max() < 1e-12 * (1 + np.abs(J @ v[s]).max())
        energy = [x @ M @ x / 2 for x in (v[s], v0[s], vp[s])]
        assert energy[1] <= energy[0] * (1 + 1e-12) and energy[2] <= energy[0] * (1 + 1e-12)
        # the M-closest: any other velocity w with J w = 0 is farther from v in the M-norm
        null = np.linalg.svd(J)[2][J.shape[0]:].T
        closest = (v0[s] - v[s]) @ M @ (v0[s] - v[s])
        for _ in range(20):
            w = v0[s] + null @ rng.normal(size=null.shape[1]) * 0.1
            assert (w - v[s]) @ M @ (w - v[s]) >= closest * (1 - 1e-12)


def test_jacobian_and_drift_are_the_frames(solo):
    """J: the feet's linear Jacobian rows; J_dot v: their classical acceleration at qdd = 0; and
    d/dt (J v) along a motion = J qdd + J_dot v (central differences)."""
    model, _ = solo
    engine = symdyn.Engine(model)
    q, v, qdd = (x[0] for x in _states(model, 1, 4))
    J = engine.constraint_jacobian(q)
    assert J.shape == (12, model.nv)
    assert np.array_equal(J, engine.frame_jacobian(q)[:, :3].reshape(12, -1))
    assert np.array_equal(engine.constraint_drift(q, v), engine.frame_acceleration_bias(q, v)[:, :3].ravel())
    h = 1e-5

    def velocity(t):
        return engine.constraint_jacobian(engine.integrate(q, v + t * qdd / 2, t)) @ (v + t * qdd)
    assert relerr((velocity(h) - velocity(-h)) / (2 * h), J @ qdd + engine.constraint_drift(q, v)) < 1e-7


def test_standing_forces_balance_gravity(solo):
    """solo12 held still on its 4 feet by the joint torques tau = g_joints - J_joints^T lambda*, lambda* the
    least-norm forces that hold the base (J_base^T lambda* = g_base): no acceleration, lambda = lambda*,
    and the contact forces carry the robot's weight."""
    model, _ = solo
    engine = symdyn.Engine(model)
    q = engine.neutral()
    J, g = engine.constraint_jacobian(q), engine.gravity(q)
    held = np.linalg.lstsq(J[:, :6].T, g[:6], rcond=None)[0]
    tau = np.concatenate([np.zeros(6), g[6:] - J[:, 6:].T @ held])
    qdd, lam = engine.constrained_forward_dynamics(q, np.zeros(model.nv), tau)
    weight = model.total_mass * np.linalg.norm(model.gravity)
    assert np.abs(qdd).max() < 1e-10 and relerr(lam, held) < 1e-12
    forces = lam.reshape(4, 3)
    assert abs(forces[:, 2].sum() - weight) < 1e-12 * weight
    assert np.abs(forces[:, :2].sum(axis=0)).max() < 1e-12 * weight


@pytest.fixture(scope="module")
def generated(solo, tmp_path_factory):
    """solo12's constraint functions generated as Python and C (only those: quick to compile)."""
    model, _ = solo
    out = tmp_path_factory.mktemp("contacts")
    for name, text in render(model, ("python", "c"), functions=NAMES).items():
        (out / name).write_text(text)
    module = module_name(model.provenance.path)
    return import_module_file(out / f"{module}.py", "_contacts_solo12"), symdyn.load_c(out / f"{module}.c")


@pytest.mark.parametrize("lang", ["python", "c"])
def test_generated_equals_engine(solo, generated, lang):
    model, _ = solo
    module = generated[0 if lang == "python" else 1]
    engine = symdyn.Engine(model)
    assert tuple(module.CONSTRAINTS) == engine.CONSTRAINTS and module.NC == 12
    for fn in CONSTRAINED:
        args = _args(model, fn, 5, 7)
        ours, ref = getattr(module, fn.name)(*args), getattr(engine, fn.name)(*args)
        pairs = zip(ours, ref) if isinstance(ref, tuple) else [(ours, ref)]
        assert max(relerr(a, b) for a, b in pairs) < 1e-12, fn.name
        single = getattr(module, fn.name)(*(a[0] for a in args))      # one state, no batch
        first = tuple(x[0] for x in ref) if isinstance(ref, tuple) else ref[0]
        pairs = zip(single, first) if isinstance(ref, tuple) else [(single, first)]
        assert max(relerr(a, b) for a, b in pairs) < 1e-12, fn.name


SPATIAL = """name: arm6
links:
  - {name: l1, mass: 2.0, com: [0, 0, 0.2], inertia: {ixx: 0.02, iyy: 0.02, izz: 0.01, ixy: 0, ixz: 0, iyz: 0}}
  - {name: l2, mass: 1.5, com: [0.2, 0, 0], inertia: {ixx: 0.01, iyy: 0.02, izz: 0.02, ixy: 0, ixz: 0, iyz: 0}}
  - {name: l3, mass: 1.0, com: [0.15, 0, 0], inertia: {ixx: 0.01, iyy: 0.01, izz: 0.01, ixy: 0, ixz: 0, iyz: 0}}
  - {name: l4, mass: 0.6, com: [0.05, 0, 0], inertia: {ixx: 0.002, iyy: 0.002, izz: 0.002, ixy: 0, ixz: 0, iyz: 0}}
  - {name: l5, mass: 0.6, com: [0.05, 0, 0], inertia: {ixx: 0.002, iyy: 0.002, izz: 0.002, ixy: 0, ixz: 0, iyz: 0}}
  - {name: tip, mass: 0.5, com: [0.05, 0, 0], inertia: {ixx: 0.001, iyy: 0.001, izz: 0.001, ixy: 0, ixz: 0, iyz: 0}}
  - {name: tool, mass: 0.1, com: [0, 0, 0], inertia: {ixx: 0.0001, iyy: 0.0001, izz: 0.0001, ixy: 0, ixz: 0, iyz: 0}}
joints:
  - {name: j1, type: revolute, parent: base, child: l1, origin: {xyz: [0, 0, 0]}, axis: [0, 0, 1]}
  - {name: j2, type: revolute, parent: l1, child: l2, origin: {xyz: [0, 0, 0.4]}, axis: [0, 1, 0]}
  - {name: j3, type: revolute, parent: l2, child: l3, origin: {xyz: [0.4, 0, 0]}, axis: [0, 1, 0]}
  - {name: j4, type: revolute, parent: l3, child: l4, origin: {xyz: [0.3, 0, 0]}, axis: [1, 0, 0]}
  - {name: j5, type: revolute, parent: l4, child: l5, origin: {xyz: [0.1, 0, 0]}, axis: [0, 0, 1]}
  - {name: j6, type: revolute, parent: l5, child: tip, origin: {xyz: [0.1, 0, 0]}, axis: [0, 1, 0]}
  - {name: tool_joint, type: fixed, parent: tip, child: tool, origin: {xyz: [0.1, 0, 0]}}
"""


def test_yaml_contacts_key(tmp_path):
    """`contacts:` in a symdyn YAML file: names, FRAME:6d and {frame, type} mappings, as --contact."""
    for listed in ("[tool]", "['tool:3d']", "[{frame: tool}]", "[{frame: tool, type: 3d}]"):
        path = tmp_path / "arm6.yaml"
        path.write_text(SPATIAL + f"contacts: {listed}\n")
        model = symdyn.load_robot(path)
        assert [c.describe() for c in model.constraints] == ["tool:3d"], listed
    plain = tmp_path / "plain.yaml"
    plain.write_text(SPATIAL)
    same = symdyn.load_robot(plain, contacts="tool")
    assert same.constraints == model.constraints
    assert [f.name for f in same.kinematic_frames] == ["tool"]
    assert symdyn.load_robot(plain, contacts="tool:6d").constraints[0].rows == 6
    # a contact on another frame joins FRAMES; the file's contacts come first
    both = symdyn.load_robot(path, frames=["l2"], contacts=["l4"])
    assert [c.describe() for c in both.constraints] == ["tool:3d", "l4:3d"]
    assert [f.name for f in both.kinematic_frames] == ["l2", "tool", "l4"]


BAD = [
    (["robots/ur5.urdf", "--contact", "nope"], "--contact: unknown frame 'nope'"),
    (["robots/planar2.yaml", "--contact", "base"], "both sides are on the fixed base"),
    (["robots/ur5.urdf", "--contact", "tool0,tool0"], "given twice"),
    (["robots/ur5.urdf", "--contact", "tool0:6d,wrist_1_link"], "9 rows but the robot has 6 degrees of freedom"),
    (["robots/planar6.yaml", "--contact", "link6"], "redundant: their Jacobian loses rank at every configuration"),
    (["robots/ur5.urdf", "--contact", ":6d"], "no frame name"),
    (["robots/ur5.urdf", "--functions", "impact"], "function \"impact\" needs constraints"),
]


@pytest.mark.parametrize("argv, fragment", BAD, ids=[b[1][:30] for b in BAD])
def test_bad_contacts(argv, fragment, tmp_path):
    """One line naming the file, exit code 2, no traceback, nothing written."""
    out = tmp_path / "out"
    for command in (["info", "--no-ops"], ["generate", "--out", str(out)]):
        result = CliRunner().invoke(main, [command[0], *argv[:1], *command[1:], *argv[1:]],
                                    catch_exceptions=False)
        assert result.exit_code == 2, result.output
        lines = result.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"symdyn: error: {argv[0]}") and fragment in lines[0], lines
        assert not out.exists()


def test_bad_yaml_contacts(tmp_path):
    for listed, fragment in (("tool", "'contacts' must be a non-empty list"),
                             ("[{frame: tool, type: 5d}]", "type must be 3d or 6d"),
                             ("[3]", "contacts[0]: expected a frame name"), ("[nope]", "unknown frame 'nope'")):
        path = tmp_path / "arm6.yaml"
        path.write_text(SPATIAL + f"contacts: {listed}\n")
        with pytest.raises(RobotFileError) as info:
            symdyn.load_robot(path)
        assert str(info.value).startswith(str(path)) and fragment in str(info.value) and "\n" not in str(info.value)


def test_no_contacts_no_change():
    """Without contacts the function set, the FRAMES and the generated files are those of before."""
    model = symdyn.load_robot(ROOT / "robots" / "planar2.yaml")
    assert not hasattr(symdyn.Engine(model), "impact")
    text = render(model, ("python",), functions=["gravity"])
    assert "CONSTRAINTS" not in text[f"{module_name(model.provenance.path)}.py"]


def test_solo12_example(tmp_path):
    """examples/solo12_contacts.py: the feet stop at the impact, the impulses are the change of momentum,
    the robot comes to rest on its feet with the contact forces carrying its weight, and Baumgarte keeps
    the drift far below the unstabilized run's."""
    import sys
    sys.path.insert(0, str(ROOT / "examples"))
    import solo12_contacts
    robot = solo12_contacts.generated_solo12(folder=tmp_path)
    r = solo12_contacts.run(robot, height=0.05, steps=600, dt=1e-3)
    i = r["impact"]
    assert 0.9 < i["speed"] < 1.0                          # sqrt(2 g h) = 0.99 m/s, less the PD's pull
    assert i["feet_speed_after"] < 1e-12 and i["momentum_error"] < 1e-12
    assert i["energy_after"] < i["energy_before"]
    assert abs(r["final_force"] - r["weight"]) < 1e-6 * r["weight"] and r["final_speed"] < 1e-6
    assert r["drift_stabilized"] < 1e-3 and r["drift_stabilized"] < 0.05 * r["drift_free"]


def test_compare_command_checks_contacts():
    """`symdyn compare --contact`: the generated Python and C and Pinocchio agree with the engine."""
    result = CliRunner().invoke(main, ["compare", str(ROOT / "robots" / "ur5.urdf"), "--contact", "tool0",
                                       "--states", "3", "--functions", ",".join(NAMES)])
    assert result.exit_code == 0, result.output
    rows = {line.split()[0]: line.split()[1:] for line in result.output.splitlines() if line.split()
            and line.split()[0] in NAMES}
    assert list(rows) == NAMES and all(len(r) == 3 for r in rows.values())     # c, pinocchio, python
    assert "PASS" in result.output


def test_symbolic_parameters(tmp_path):
    """--params symbolic: the constraint functions take the parameter vector too."""
    model = symdyn.load_robot(ROOT / "robots" / "ur5.urdf", contacts="tool0")
    text = render(model, ("python",), "symbolic", functions=["constrained_forward_dynamics", "impact"])
    name = module_name(model.provenance.path, "symbolic")
    (tmp_path / f"{name}.py").write_text(text[f"{name}.py"])
    module = import_module_file(tmp_path / f"{name}.py", "_contacts_ur5_params")
    engine = symdyn.Engine(model)
    q, v, tau = _states(model, 3, 8)
    params = module.PARAMETERS * np.random.default_rng(8).uniform(0.5, 2.0, len(module.PARAMETERS))
    ours = module.constrained_forward_dynamics(q, v, tau, params)
    ref = symdyn.Engine(model, params).constrained_forward_dynamics(q, v, tau)
    assert max(relerr(a, b) for a, b in zip(ours, ref)) < 1e-12
    ours, ref = module.impact(q, v, [0.3], module.PARAMETERS), engine.impact(q, v, [0.3])
    assert max(relerr(a, b) for a, b in zip(ours, ref)) < 1e-12


@pytest.mark.parametrize("lang", ["engine", "python", "c"])
def test_gains_are_optional_arguments(solo, generated, lang):
    """constrained_forward_dynamics(q, qd, tau, gains=, error=) is the _baumgarte function; error
    defaults to zeros; error without gains, or gains for a function without a stabilized twin, is refused."""
    model, _ = solo
    module = {"engine": symdyn.Engine(model), "python": generated[0], "c": generated[1]}[lang]
    q, v, tau = _states(model, 2, 9)
    gains, error = np.array([50.0, 10.0]), np.random.default_rng(9).normal(size=(2, 12)) * 0.01
    both = module.constrained_forward_dynamics(q, v, tau, gains=gains, error=error)
    twin = module.constrained_forward_dynamics_baumgarte(q, v, tau, gains, error)
    assert all(np.array_equal(a, b) for a, b in zip(both, twin))
    no_error = module.constrained_forward_dynamics(q, v, tau, gains=gains)
    assert all(np.array_equal(a, b) for a, b in zip(no_error, module.constrained_forward_dynamics_baumgarte(
        q, v, tau, gains, np.zeros(12))))
    with pytest.raises(TypeError):
        module.constrained_forward_dynamics(q, v, tau, error=error)
    with pytest.raises(TypeError):
        module.impact(q, v, [0.5], gains=gains)
