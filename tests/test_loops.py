"""Closed loops (issue 14 B): loop closures declared in YAML (`loops:`), the constraint functions on them,
the constraint-consistent inverse dynamics (`actuated:`, loop_inverse_dynamics), the four-bar example,
and bad input.

Oracles: Pinocchio's constraintDynamics with a RigidConstraintModel between two joints (the loop), the identities J qdd + J_dot qd = 0, constrained_forward_dynamics(loop_inverse_dynamics)
= the commanded motion, energy conserved to the integration error (RK4: 16 times smaller at half the
step), and the generated Python and C against the engine.
"""
import copy
import sys

import numpy as np
import pinocchio as pin
import pytest
import yaml
from click.testing import CliRunner

import symdyn
from conftest import ROOT, relerr
from symdyn.cli import main
from symdyn.compare import compare, pinocchio_model

sys.path.insert(0, str(ROOT / "examples"))
import four_bar  # noqa: E402
from _common import generate_module  # noqa: E402

FOUR_BAR = ROOT / "examples" / "four_bar.yaml"
TOL = 1e-10


@pytest.fixture(scope="module")
def model():
    return symdyn.load_robot(FOUR_BAR)


@pytest.fixture(scope="module")
def engine(model):
    return symdyn.Engine(model)


def _closed_states(engine, count, seed=0):
    """Configurations and velocities that satisfy the loop, and random torques."""
    rng = np.random.default_rng(seed)
    q = np.array([four_bar.assemble(t) for t in rng.uniform(-np.pi, np.pi, count)])
    v = np.array([four_bar.robot_velocity(engine, qs, w) for qs, w in zip(q, rng.normal(size=count) * 2)])
    return q, v, rng.normal(size=(count, 4)) * 3


def test_loop_is_a_constraint_between_two_frames(model, engine):
    assert model.nv == 4 and model.actuated == ("crank",)
    (c,) = model.constraints
    assert (c.kind, c.frame, c.other) == ("3d", "coupler_end", "pin")
    assert engine.CONSTRAINTS == ("coupler_end-pin:3d",) and engine.FRAMES == ("coupler_end", "pin")
    assert engine.ACTUATED == ("crank",)
    q, v, _ = _closed_states(engine, 3)
    assert np.abs(four_bar.closure_error(engine, q)).max() < 1e-14
    assert np.abs(np.einsum("sij,sj->si", engine.constraint_jacobian(q), v)).max() < 1e-13


def _pinocchio_loop(model):
    pm = pinocchio_model(model)
    data = pm.createData()
    f1, f2 = (pm.frames[pm.getFrameId(name)] for name in ("coupler_end", "pin"))
    cm = pin.RigidConstraintModel(pin.ContactType.CONTACT_3D, pm, f1.parentJoint, f1.placement, f2.parentJoint,
                                  f2.placement, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED)
    models, datas = pin.StdVec_RigidConstraintModel(), pin.StdVec_RigidConstraintData()
    models.append(cm)
    datas.append(cm.createData())
    pin.initConstraintDynamics(pm, data, models, datas)
    return pm, data, models, datas


def test_constrained_dynamics_equals_pinocchio_loop(model, engine):
    """Pinocchio's constraintDynamics with the loop as a RigidConstraintModel between the coupler's and
    the pin's joints: same accelerations, same loop forces."""
    pm, data, models, datas = _pinocchio_loop(model)
    q, v, tau = _closed_states(engine, 5, seed=1)
    for s in range(len(q)):
        qdd, lam = engine.constrained_forward_dynamics(q[s], v[s], tau[s])
        theirs = pin.constraintDynamics(pm, data, q[s], v[s], tau[s], models, datas, pin.ProximalSettings(1e-14, 1e-12, 50))
        assert relerr(qdd, theirs) < TOL and relerr(lam, data.lambda_c) < TOL


def _two_branches(end=None):
    """Two spatial 4-joint branches; the frame b_end on the second is placed (`end` = (xyz, R)) where
    the first branch's last frame a3 is at q = 0, so that a weld between them is closed there."""
    links, joints = [], []
    axes = {"a": [[0, 0, 1], [0, 1, 0], [1, 0, 0], [0, 0, 1]], "b": [[0, 0, 1], [1, 0, 0], [0, 1, 0], [0, 1, 1]]}
    for branch, start in (("a", [0, 0, 0]), ("b", [0.5, 0.2, 0])):
        parent = "base"
        for k, axis in enumerate(axes[branch]):
            name = f"{branch}{k}"
            links.append({"name": name, "mass": 1.0 + 0.1 * k, "com": [0.05, 0.02 * k, 0.1],
                          "inertia": {"ixx": 0.02, "iyy": 0.03, "izz": 0.025, "ixy": 0.001}})
            joints.append({"name": f"j{name}", "type": "revolute", "parent": parent, "child": name, "axis": axis,
                           "origin": {"xyz": start if k == 0 else [0.05, 0.1, 0.25]}})
            parent = name
    links.append({"name": "b_end", "mass": 0.0, "com": [0, 0, 0], "inertia": {"ixx": 0, "iyy": 0, "izz": 0}})
    xyz, R = end if end else ([0, 0, 0], np.eye(3).tolist())
    joints.append({"name": "jb_end", "type": "fixed", "parent": "b3", "child": "b_end",
                   "origin": {"xyz": xyz, "rotation": R}})
    return {"name": "weld", "links": links, "joints": joints}


def test_weld_loop_equals_pinocchio(tmp_path):
    """A 6-D loop closure (weld) between two spatial branches, read from YAML `loops:`, at a closed
    configuration: Pinocchio's constraintDynamics with a CONTACT_6D between the two joints."""
    from symdyn.readers.description import build_model
    from symdyn.multibody.model import select_frames
    P = symdyn.Engine(select_frames(build_model(_two_branches(), "w.yaml"), ("a3", "b3"))).frame_placement(np.zeros(8))
    rel = np.linalg.inv(P[1]) @ P[0]
    desc = _two_branches((rel[:3, 3].tolist(), rel[:3, :3].tolist()))
    desc["loops"] = [{"frame": "a3", "other": "b_end", "type": "6d"}]
    path = tmp_path / "weld.yaml"
    path.write_text(yaml.safe_dump(desc))
    model = symdyn.load_robot(path)
    engine = symdyn.Engine(model)
    q = np.zeros(8)
    placements = engine.frame_placement(q)
    assert np.abs(placements[0] - placements[1]).max() < 1e-14      # closed
    J = engine.constraint_jacobian(q)
    null = np.linalg.svd(J)[2][6:].T
    pm = pinocchio_model(model)
    data = pm.createData()
    f1, f2 = (pm.frames[pm.getFrameId(name)] for name in ("a3", "b_end"))
    cm = pin.RigidConstraintModel(pin.ContactType.CONTACT_6D, pm, f1.parentJoint, f1.placement, f2.parentJoint,
                                  f2.placement, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED)
    models, datas = pin.StdVec_RigidConstraintModel(), pin.StdVec_RigidConstraintData()
    models.append(cm)
    datas.append(cm.createData())
    pin.initConstraintDynamics(pm, data, models, datas)
    rng = np.random.default_rng(6)
    for _ in range(3):
        v, tau = null @ rng.normal(size=2), rng.normal(size=8) * 3
        qdd, lam = engine.constrained_forward_dynamics(q, v, tau)
        theirs = pin.constraintDynamics(pm, data, q, v, tau, models, datas, pin.ProximalSettings(1e-14, 1e-12, 50))
        assert relerr(qdd, theirs) < TOL and relerr(lam, data.lambda_c) < TOL
        assert np.abs(J @ qdd + engine.constraint_drift(q, v)).max() < 1e-12


def test_impact_on_the_loop(model, engine):
    """Velocities that break the loop, projected by impact: J v+ = -e J v, M (v+ - v) = J^T P, and for
    e = 0 the kinetic energy does not increase and v+ is M-closer to v than any other closed velocity.
    (Pinocchio 4.1's impulseDynamics with a two-joint constraint does not give J v+ = -e J v: not used.)"""
    q, v, _ = _closed_states(engine, 4, seed=4)
    w = v + np.random.default_rng(5).normal(size=v.shape)
    J, M = engine.constraint_jacobian(q), engine.mass_matrix(q)
    for e in (0.0, 0.6):
        vplus, impulse = engine.impact(q, w, np.full((4, 1), e))
        assert relerr(np.einsum("sij,sj->si", J, vplus), -e * np.einsum("sij,sj->si", J, w)) < TOL
        assert relerr(np.einsum("sij,sj->si", M, vplus - w), np.einsum("sji,sj->si", J, impulse)) < TOL
    vplus, _ = engine.impact(q, w, np.zeros((4, 1)))
    kinetic = lambda x: np.einsum("si,sij,sj->s", x, M, x)
    assert np.all(kinetic(vplus) <= kinetic(w))
    for s in range(4):                                   # other closed velocities are farther in the M-norm
        other = vplus[s] + four_bar.robot_velocity(engine, q[s], 0.3)
        assert (other - w[s]) @ M[s] @ (other - w[s]) > (vplus[s] - w[s]) @ M[s] @ (vplus[s] - w[s])


def test_loop_inverse_dynamics_is_consistent(model, engine):
    """The torques of loop_inverse_dynamics, fed to constrained_forward_dynamics, give the commanded
    crank acceleration, the same loop forces, J qdd + J_dot qd = 0, and zero torque at the passive joints."""
    q, v, _ = _closed_states(engine, 6, seed=2)
    qdd = np.random.default_rng(3).normal(size=(6, 4)) * 2
    tau, lam = engine.loop_inverse_dynamics(q, v, qdd)
    assert not tau[:, 1:].any() and np.abs(tau[:, 0]).min() > 0
    a, lam2 = engine.constrained_forward_dynamics(q, v, tau)
    assert relerr(a[:, 0], qdd[:, 0]) < TOL and relerr(lam2, lam) < TOL
    residual = np.einsum("sij,sj->si", engine.constraint_jacobian(q), a) + engine.constraint_drift(q, v)
    assert np.abs(residual).max() < 1e-11
    # the passive entries of qdd are ignored
    other = qdd.copy()
    other[:, 1:] += 5.0
    assert relerr(engine.loop_inverse_dynamics(q, v, other)[0], tau) < TOL


def test_generated_python_and_c_equal_the_engine(model, tmp_path, monkeypatch):
    monkeypatch.setenv("SYMDYN_CACHE", str(tmp_path / "cache"))
    report = compare(model, states=5, workdir=tmp_path)
    python = symdyn.compare.import_module_file(tmp_path / "four_bar.py", "four_bar_loops")
    assert python.ACTUATED == ("crank",) and python.CONSTRAINTS == ("coupler_end-pin:3d",) and python.NC == 3
    assert {"constraint_jacobian", "constrained_forward_dynamics_baumgarte", "impact", "loop_inverse_dynamics"} <= set(report)
    for name, row in report.items():
        assert {"python", "c"} <= set(row), name
        for column, err in row.items():
            assert err < TOL, (name, column, err)


def test_four_bar_example_energy_drift_and_tracking(model):
    """The example on its generated Python module: energy to the integration error (RK4: ~16 times
    smaller at half the step), the closure error bounded and far smaller with Baumgarte, computed torque
    through loop_inverse_dynamics."""
    robot, _ = generate_module(FOUR_BAR)
    mass, g = model.total_mass, np.array(model.gravity)
    drift = []
    for dt in (1e-2, 5e-3):
        _, _, E, _ = four_bar.swing(robot, mass, g, int(round(2.0 / dt)), dt)
        drift.append(np.abs(E - E[0]).max())
    assert drift[1] < drift[0] / 10 and drift[1] < 1e-5 * np.abs(E).max()
    r = four_bar.run(robot, mass, g, steps=1000, dt=5e-3)
    assert r["closure_stabilized"] < 1e-6 and r["closure_stabilized"] < r["closure"] / 10
    assert r["closure_stabilized_last_quarter"] < r["closure_stabilized"] * 2      # bounded, not growing
    assert r["final_tracking_error"] < 1e-6
    printed = four_bar.main(["--steps", "40"])        # the script: generates the module, prints, no plot unless --out
    assert printed["final_tracking_error"] < 1e-6 and printed["energy_drift"] < 1e-6


def _variant(tmp_path, name, edit):
    desc = yaml.safe_load(FOUR_BAR.read_text())
    edit(desc)
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(desc))
    return path


def _drop_slider(desc):          # a planar four-bar with a 3-D point closure: the z row is zero everywhere
    desc["links"] = [x for x in desc["links"] if x["name"] != "pin"] + [
        {"name": "pin", "mass": 0.0, "com": [0, 0, 0], "inertia": {"ixx": 0, "iyy": 0, "izz": 0}}]
    for j in desc["joints"]:
        if j["name"] == "pin_slide":
            j["type"] = "fixed"


BAD = [
    ("same_body", lambda d: d["loops"][0].update(other="coupler_link"), "loops: ", "same body"),
    ("unknown", lambda d: d["loops"][0].update(other="nowhere"), "loops: ", "unknown frame 'nowhere'"),
    ("redundant", _drop_slider, "loops: ", "redundant"),
    ("itself", lambda d: d["loops"][0].update(other="coupler_end"), "loops: ", "closed on itself"),
    ("bad_type", lambda d: d["loops"][0].update(type="2d"), "loops: ", "type must be 3d or 6d"),
    ("count", lambda d: d.update(actuated=["crank", "rocker"]), "actuated: ", "2 actuated joints"),
    ("passive_singular", lambda d: d.update(actuated=["pin_slide"]), "actuated: ", "do not determine the passive"),
    ("no_loops", lambda d: d.pop("loops"), "actuated: ", "needs loop closures"),
]


@pytest.mark.parametrize("name, edit, label, fragment", BAD, ids=[b[0] for b in BAD])
def test_bad_loops_one_line_exit_2_nothing_written(tmp_path, name, edit, label, fragment):
    path = _variant(tmp_path, name, copy.deepcopy(edit))
    out = tmp_path / "out"
    try:
        runner = CliRunner(mix_stderr=False)
    except TypeError:
        runner = CliRunner()
    result = runner.invoke(main, ["generate", str(path), "--lang", "python,c", "--out", str(out)])
    assert result.exit_code == 2 and "Traceback" not in result.stderr, (result.stderr, result.exception)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"symdyn: error: {path}: {label}") and fragment in lines[0], lines
    assert not out.exists()
