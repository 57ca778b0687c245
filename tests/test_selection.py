"""--lock, --root and --tip (symdyn.readers.selection), checked against Pinocchio's own URDF parser and
its buildReducedModel on the Panda."""
import subprocess
import sys
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import symdyn
from conftest import ROOT, random_states, relerr
from oracle import Pinocchio
from symdyn.readers.selection import Selection, parse_lock

pin = pytest.importorskip("pinocchio")
PANDA = ROOT / "robots" / "panda.urdf"
TOL = 1e-10


def _agree(model, pmodel, count=5):
    engine, oracle = symdyn.Engine(model), Pinocchio(pmodel)
    q, qd, qdd = random_states(model.dof, count, seed=3)
    for name, args in (("inverse_dynamics", (q, qd, qdd)), ("mass_matrix", (q,)), ("gravity", (q,)),
                       ("forward_dynamics", (q, qd, qdd)), ("coriolis_matrix", (q, qd))):
        ours = getattr(engine, name)(*args)
        for s in range(count):
            assert relerr(ours[s], getattr(oracle, name)(*(a[s] for a in args))) < TOL, name


def test_locked_joints_equal_pinocchio_reduced_model():
    lock = {"panda_joint1": -0.5, "panda_joint4": -1.2, "panda_joint7": 0.3}
    model = symdyn.load_robot(PANDA, selection=Selection(lock))
    assert model.joint_names == ("panda_joint2", "panda_joint3", "panda_joint5", "panda_joint6")
    full = pin.buildModelFromUrdf(str(PANDA))
    q_ref = pin.neutral(full)
    for name, value in lock.items():
        q_ref[full.joints[full.getJointId(name)].idx_q] = value
    reduced = pin.buildReducedModel(full, [full.getJointId(n) for n in lock], q_ref)
    _agree(model, reduced)
    assert "lock" in model.provenance.selection


def test_lock_default_value_is_zero_and_prismatic_slides():
    assert parse_lock("a, b=0.25,c=-1e-3") == {"a": 0.0, "b": 0.25, "c": -1e-3}
    for bad in ("a=x", "=1", "a=nan", "a=inf"):
        with pytest.raises(ValueError):
            parse_lock(bad)


def _sub_urdf(tmp_path, root, keep_joints):
    """The Panda URDF cut by hand: only the joints named, `root` the first parent."""
    tree = ET.parse(PANDA)
    robot = tree.getroot()
    kept_links = {root}
    for joint in list(robot.findall("joint")):
        if joint.get("name") in keep_joints:
            kept_links.add(joint.find("child").get("link"))
        else:
            robot.remove(joint)
    for link in list(robot.findall("link")):
        if link.get("name") not in kept_links:
            robot.remove(link)
    path = tmp_path / "panda_part.urdf"
    tree.write(path)
    return path


def test_root_and_tip_equal_a_urdf_cut_by_hand(tmp_path):
    model = symdyn.load_robot(PANDA, selection=Selection(root="panda_link2", tip="panda_link5"))
    assert model.joint_names == ("panda_joint3", "panda_joint4", "panda_joint5")
    pmodel = pin.buildModelFromUrdf(str(_sub_urdf(tmp_path, "panda_link2", {"panda_joint3", "panda_joint4", "panda_joint5"})))
    # gravity in the new root's frame at the dropped joints' zero: from Pinocchio's kinematics
    full = pin.buildModelFromUrdf(str(PANDA))
    data = full.createData()
    pin.forwardKinematics(full, data, pin.neutral(full))
    R = data.oMi[full.getJointId("panda_joint2")].rotation
    pmodel.gravity.linear = R.T @ full.gravity.linear
    _agree(model, pmodel)
    assert np.allclose(model.gravity, R.T @ np.array([0, 0, -9.81]), atol=1e-12)


def test_tip_keeps_what_is_fixed_to_the_chain():
    """--tip panda_link8 keeps the flange fixed below link 7 (its mass moves with joint 7)."""
    whole = symdyn.load_robot(PANDA)
    chain = symdyn.load_robot(PANDA, selection=Selection(tip="panda_link8"))
    assert chain.joint_names == whole.joint_names
    assert chain.bodies == whole.bodies


@pytest.mark.parametrize("args, message", [
    (["--lock", "nope"], "--lock: no joint named 'nope'"),
    (["--lock", "panda_joint1=abc"], "is not a number"),
    (["--root", "nowhere"], "--root: no link named 'nowhere'"),
    (["--root", "panda_link3", "--tip", "panda_link1"], "is not below the base"),
])
def test_bad_selection_is_one_line_exit_2(args, message, tmp_path):
    run = subprocess.run([sys.executable, "-m", "symdyn.cli", "generate", str(PANDA), "--out", str(tmp_path / "out"),
                          *args], capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 2, run.stderr
    assert message in run.stderr and len(run.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_selection_is_recorded_in_the_generated_header():
    from symdyn.generate import render
    model = symdyn.load_robot(PANDA, selection=Selection({"panda_joint7": 0.5}, tip="panda_link7"))
    text = render(model, ("python",))["panda.py"]
    assert 'Part of the robot: "lock panda_joint7=0.5; tip panda_link7"' in text
