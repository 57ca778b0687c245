"""Elements and attributes URDF does not define (issue 24, item 1): a typo such as <orign> used to be
ignored silently (the UR5's tool frame moved 8.9 cm, `compare` passed since Pinocchio ignores it too).
Now: one warning line with the line number and the nearest URDF name; --strict makes it an error.
Known extensions and every real URDF of robots/ and example-robot-data stay quiet."""
import glob
import subprocess
import sys

import pytest

import symdyn
from conftest import ERD_ARMS, ERD_TREES, ROOT, erd_path
from symdyn.readers.urdf import read_urdf

UR5 = ROOT / "robots" / "ur5.urdf"
ORIGIN = '<origin rpy="0.0 0.0 0.0" xyz="0.0 0.0 0.089159"/>'


def _typo(tmp_path, old, new, name="ur5_typo.urdf"):
    text = UR5.read_text()
    assert text.count(old) == 1
    path = tmp_path / name
    path.write_text(text.replace(old, new))
    line = text[:text.index(old)].count("\n") + 1
    return path, line


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "symdyn", *map(str, args)], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)


def test_misspelled_origin_warns_with_line_and_suggestion(tmp_path):
    path, line = _typo(tmp_path, ORIGIN, ORIGIN.replace("<origin", "<orign"))
    model = symdyn.load_robot(path)
    assert model.provenance.warnings == (f"line {line}: <orign> in joint 'shoulder_pan_joint' is not URDF: ignored "
                              "(did you mean <origin>?)",)
    run = _cli("info", path)
    assert run.returncode == 0
    assert f"symdyn: warning: {path}: line {line}: <orign>" in run.stderr
    assert len([x for x in run.stderr.splitlines() if "warning" in x]) == 1
    run = _cli("info", "--strict", path)
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert run.stderr.strip() == (f"symdyn: error: {path}: line {line}: <orign> in joint 'shoulder_pan_joint' is "
                                  "not URDF: ignored (did you mean <origin>?) (an error with --strict)")
    with pytest.raises(symdyn.RobotFileError, match="did you mean <origin>"):
        symdyn.load_robot(path, strict=True)


@pytest.mark.parametrize("old, new, expected", [
    (ORIGIN + '\n    <axis xyz="0 0 1"/>', ORIGIN + '\n    <axsi xyz="0 0 1"/>', "<axsi> in joint 'shoulder_pan_joint' is not URDF: ignored "
                                                   "(did you mean <axis>?)"),
    (ORIGIN, ORIGIN.replace("xyz=", "xzy="), "attribute 'xzy' of <origin> in joint 'shoulder_pan_joint' is not "
                                             "URDF: ignored (did you mean 'xyz'?)"),
    ('<mass value="3.7"/>', '<mas value="3.7"/>', None),      # a required child missing: the error wins
    ('<link name="shoulder_link">', '<link name="shoulder_link" colour="red">',
     "attribute 'colour' of <link> in link 'shoulder_link' is not URDF: ignored"),
    ('<dynamics damping="0.0" friction="0.0"/>\n  </joint>\n  <link name="upper_arm_link">',
     '<dynamics dampng="0.0" friction="0.0"/>\n  </joint>\n  <link name="upper_arm_link">',
     "attribute 'dampng' of <dynamics> in joint 'shoulder_lift_joint' is not URDF: ignored (did you mean 'damping'?)"),
])
def test_other_typos(tmp_path, old, new, expected):
    path, line = _typo(tmp_path, old, new)
    line += new.count("\n") if "<axsi" in new else 0
    if expected is None:
        with pytest.raises(symdyn.RobotFileError, match="missing <mass>"):
            symdyn.load_robot(path)
        return
    assert symdyn.load_robot(path).provenance.warnings == (f"line {line}: {expected}",)


def test_inertial_children_are_checked(tmp_path):
    text = """<robot name="r">
  <link name="base"/>
  <link name="arm">
    <inertial>
      <origin xyz="0 0 0.1"/>
      <mass value="1" unit="kg"/>
      <inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/>
      <inertai ixx="1"/>
    </inertial>
  </link>
  <joint name="j" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 0 1"/></joint>
</robot>"""
    path = tmp_path / "r.urdf"
    path.write_text(text)
    warnings = []
    read_urdf(path, None, warnings.append)
    assert warnings == ["line 6: attribute 'unit' of <mass> in link 'arm' <inertial> is not URDF: ignored",
                        "line 8: <inertai> in link 'arm' <inertial> is not URDF: ignored (did you mean <inertia>?)"]


def test_extensions_are_quiet(tmp_path):
    """Simulator and vendor extensions, namespaced elements, and the insides of <visual>/<collision>."""
    text = """<robot name="r" xmlns:drake="http://drake.mit.edu">
  <link name="base"><contact><lateral_friction value="1"/></contact></link>
  <link name="arm">
    <inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial>
    <visual name="v"><geometry><box size="1 1 1"/></geometry><anything/></visual>
    <gravity>1</gravity><kinematic>0</kinematic>
    <drake:proximity_properties/>
  </link>
  <joint name="j" type="revolute" dont_collapse="true"><parent link="base"/><child link="arm"/>
    <axis xyz="0 0 1"/><dynamics damping="0.1" friction="0.2" mu_coulomb="0" D="1" K="2"/>
    <limit lower="-1" upper="1" effort="1" velocity="1" gear_velocity="2" current="3"/>
  </joint>
  <transmission name="t"><joint name="j"/><anything/></transmission>
  <gazebo reference="arm"><mu1>0.2</mu1></gazebo>
  <ros2_control name="c" type="system"/>
  <material name="m"/>
  <drake:collision_filter_group name="g"/>
</robot>"""
    path = tmp_path / "r.urdf"
    path.write_text(text)
    warnings = []
    read_urdf(path, None, warnings.append)
    assert warnings == []


def test_default_namespace_is_checked(tmp_path):
    path = tmp_path / "r.urdf"
    path.write_text('<robot name="r" xmlns="http://www.ros.org"><link name="base"/><link name="arm"><inertial>'
                    '<mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>'
                    '<joint name="j" type="revolute"><parent link="base"/><child link="arm"/>\n<axsi xyz="0 0 1"/>'
                    '</joint></robot>')
    warnings = []
    read_urdf(path, None, warnings.append)
    assert warnings == ["line 2: <axsi> in joint 'j' is not URDF: ignored (did you mean <axis>?)"]


def test_real_urdfs_have_no_unknown_markup():
    """robots/ and every example-robot-data URDF: no warning, but so101's <origin> directly in a <link>
    (not URDF: a link has no origin; Pinocchio ignores it too), which is worth a warning."""
    root = erd_path("ur_description").parent
    files = sorted(glob.glob(str(root / "**" / "*.urdf"), recursive=True)) + sorted(glob.glob(str(ROOT / "robots" / "*.urdf")))
    assert len(files) >= 60
    assert {str(erd_path(v)) for v in list(ERD_ARMS.values()) + list(ERD_TREES.values())} <= set(files)
    noisy = {}
    for path in files:
        warnings = []
        try:
            read_urdf(path, None, warnings.append)
        except symdyn.RobotFileError:
            pass
        warnings = [w for w in warnings if "is not URDF" in w]
        if warnings:
            noisy[path[len(str(root)) + 1:] if path.startswith(str(root)) else path] = warnings
    assert noisy == {"so_arm_description/urdf/so101.urdf":
                     ["line 294: <origin> in link 'gripper_frame_link' is not URDF: ignored"]}
