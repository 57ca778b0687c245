"""Tests for the URDF reader (symdyn.readers.urdf) and the DH-table converter (symdyn.readers.dh)."""

import math
import os
import sysconfig

import numpy as np
import pytest

from symdyn.readers.dh import dh_to_description
from symdyn.errors import RobotFileError
from symdyn.readers.urdf import read_urdf

pinocchio = pytest.importorskip("pinocchio")


def _robots_dir():
    """example-robot-data (via cmeel) installs its URDFs under site-packages/cmeel.prefix."""
    return os.path.join(sysconfig.get_paths()["purelib"], "cmeel.prefix", "share",
                        "example-robot-data", "robots")


EXAMPLE_URDFS = [
    "panda_description/urdf/panda.urdf",
    "ur_description/urdf/ur5_robot.urdf",
    "xarm_description/urdf/xarm7.urdf",
    "z1_description/urdf/z1.urdf",
]


# --- URDF ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("relative", EXAMPLE_URDFS)
def test_urdf_joint_order_matches_pinocchio(relative):
    path = os.path.join(_robots_dir(), relative)
    if not os.path.exists(path):
        pytest.skip(f"{relative} not installed")
    description = read_urdf(path)
    moving = [joint["name"] for joint in description["joints"] if joint["type"] != "fixed"]
    assert moving == list(pinocchio.buildModelFromUrdf(path).names[1:])
    # links are listed in the same order as the joints that move them
    assert [link["name"] for link in description["links"]] == \
        [joint["child"] for joint in description["joints"]]
    assert description["source"] == f"URDF {os.path.basename(path)}"


def test_urdf_rotated_inertial_matches_pinocchio(tmp_path):
    """The <inertial> origin's rpy rotates the inertia into link axes exactly as pinocchio does."""
    text = """<robot name="one">
      <link name="base"/>
      <link name="arm">
        <inertial>
          <origin xyz="0.1 -0.2 0.3" rpy="0.3 -0.7 1.1"/>
          <mass value="2.0"/>
          <inertia ixx="0.5" iyy="0.4" izz="0.3" ixy="0.01" ixz="-0.02" iyz="0.03"/>
        </inertial>
      </link>
      <joint name="j" type="continuous">
        <parent link="base"/><child link="arm"/>
        <origin xyz="0 0 1" rpy="0.1 0.2 0.3"/>
        <mimic joint="whatever"/>
      </joint>
    </robot>"""
    path = tmp_path / "one.urdf"
    path.write_text(text)
    description = read_urdf(path)
    (link,) = description["links"]
    (joint,) = description["joints"]
    assert description["base"] == "base"
    assert joint["axis"] == [1.0, 0.0, 0.0]  # URDF default
    assert joint["origin"] == {"xyz": [0.0, 0.0, 1.0], "rpy": [0.1, 0.2, 0.3]}
    inertia = pinocchio.buildModelFromXML(text).inertias[1]
    i = link["inertia"]
    mine = np.array([[i["ixx"], i["ixy"], i["ixz"]],
                     [i["ixy"], i["iyy"], i["iyz"]],
                     [i["ixz"], i["iyz"], i["izz"]]])
    assert np.allclose(mine, inertia.inertia, atol=1e-14)
    assert np.allclose(link["com"], inertia.lever)
    assert link["mass"] == 2.0


VALID_JOINT = '<joint name="j" type="revolute"><parent link="a"/><child link="b"/>{extra}</joint>'


def _urdf(body):
    return f'<robot name="r">{body}</robot>'


BAD_URDFS = {
    "malformed": ("<robot name='r'><link name='a'></robot>", "malformed XML"),
    "not robot": ("<model name='r'/>", "expected <robot>"),
    "no name": (_urdf('<link/>'), "missing attribute 'name'"),
    "unknown child": (_urdf('<link name="a"/>' + VALID_JOINT.format(extra="")), "child link 'b'"),
    "bad type": (_urdf('<link name="a"/><link name="b"/><joint name="j" type="hinge">'
                       '<parent link="a"/><child link="b"/></joint>'), "unknown type 'hinge'"),
    "nan": (_urdf('<link name="a"/><link name="b"/>'
                  + VALID_JOINT.format(extra='<origin xyz="0 nan 0"/>')), "finite"),
    "two numbers": (_urdf('<link name="a"/><link name="b"/>'
                          + VALID_JOINT.format(extra='<axis xyz="0 1"/>')), "needs 3 numbers"),
    "word": (_urdf('<link name="a"><inertial><mass value="heavy"/>'
                   '<inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>'),
             "non-numeric"),
    "duplicate link": (_urdf('<link name="a"/><link name="a"/>'), "link 'a': defined twice"),
    "two parents": (_urdf('<link name="a"/><link name="b"/>' + VALID_JOINT.format(extra="")
                          + '<joint name="k" type="fixed"><parent link="a"/><child link="b"/></joint>'),
                    "child of two joints"),
    "loop": (_urdf('<link name="r0"/><link name="a"/><link name="b"/>' + VALID_JOINT.format(extra="")
                   + '<joint name="k" type="fixed"><parent link="b"/><child link="a"/></joint>'),
             "kinematic loop"),
    "two roots": (_urdf('<link name="a"/><link name="b"/><link name="c"/><link name="d"/>'
                        + VALID_JOINT.format(extra="")
                        + '<joint name="k" type="fixed"><parent link="c"/><child link="d"/></joint>'),
                  "several root links"),
    "lonely link": (_urdf('<link name="a"/><link name="b"/><link name="c"/>'
                          + VALID_JOINT.format(extra="")), "link 'c': not connected"),
}


@pytest.mark.parametrize("case", sorted(BAD_URDFS))
def test_bad_urdf_raises_one_line_error(tmp_path, case):
    text, expected = BAD_URDFS[case]
    path = tmp_path / "bad.urdf"
    path.write_text(text)
    with pytest.raises(RobotFileError) as caught:
        read_urdf(path)
    message = str(caught.value)
    assert message.startswith(str(path) + ": ")
    assert "\n" not in message
    assert expected in message


def test_missing_urdf_file_is_robot_file_error(tmp_path):
    with pytest.raises(RobotFileError):
        read_urdf(tmp_path / "absent.urdf")


# --- DH -------------------------------------------------------------------------------------------

def _rot(axis, angle):
    c, s = math.cos(angle), math.sin(angle)
    m = np.eye(4)
    i, j = {"x": (1, 2), "z": (0, 1)}[axis]
    m[i, i], m[i, j], m[j, i], m[j, j] = c, -s, s, c
    return m


def _trans(axis, distance):
    m = np.eye(4)
    m["xyz".index(axis), 3] = distance
    return m


def _dh_frames(convention, rows, q):
    """Frames 1..n of the DH table, straight from the textbook product formula."""
    frames, total = [], np.eye(4)
    for row, qk in zip(rows, q):
        theta = row["theta"] + (qk if row["type"] == "revolute" else 0.0)
        d = row["d"] + (qk if row["type"] == "prismatic" else 0.0)
        if convention == "classic":
            step = _rot("z", theta) @ _trans("z", d) @ _trans("x", row["a"]) @ _rot("x", row["alpha"])
        else:
            step = _rot("x", row["alpha"]) @ _trans("x", row["a"]) @ _rot("z", theta) @ _trans("z", d)
        total = total @ step
        frames.append(total)
    return frames


def _description_frames(description, q):
    """Joint frames of a description with rotation-matrix origins and z axes."""
    frames, total = [], np.eye(4)
    for joint, qk in zip(description["joints"], q):
        origin = np.eye(4)
        origin[:3, :3] = joint["origin"]["rotation"]
        origin[:3, 3] = joint["origin"]["xyz"]
        assert joint["axis"] == [0.0, 0.0, 1.0]
        motion = _rot("z", qk) if joint["type"] == "revolute" else _trans("z", qk)
        total = total @ origin @ motion
        frames.append(total)
    return frames


def _random_table(rng, convention):
    kinds = ["revolute", "prismatic", "revolute", "prismatic", "revolute"]
    rows = []
    for k, kind in enumerate(kinds, start=1):
        rows.append({"name": f"j{k}", "type": kind,
                     "a": float(rng.normal()), "alpha": float(rng.uniform(-math.pi, math.pi)),
                     "d": float(rng.normal()), "theta": float(rng.uniform(-math.pi, math.pi)),
                     "link": {"mass": 1.0, "com": [float(x) for x in rng.normal(size=3)],
                              "inertia": {"ixx": 0.5, "iyy": 0.4, "izz": 0.3,
                                          "ixy": 0.01, "ixz": -0.02, "iyz": 0.03}}})
    return {"name": "random", "source": "test", "dh": {"convention": convention, "joints": rows}}


def _tensor(i):
    return np.array([[i["ixx"], i["ixy"], i["ixz"]],
                     [i["ixy"], i["iyy"], i["iyz"]],
                     [i["ixz"], i["iyz"], i["izz"]]])


@pytest.mark.parametrize("convention", ["classic", "modified"])
def test_dh_description_matches_dh_formula(convention):
    rng = np.random.default_rng(7 if convention == "classic" else 11)
    data = _random_table(rng, convention)
    rows = data["dh"]["joints"]
    points = [np.zeros(3), np.eye(3)[0], np.eye(3)[1], np.eye(3)[2]]
    for _ in range(3):
        q = rng.uniform(-2, 2, size=len(rows))
        expected = _dh_frames(convention, rows, q)
        # A link whose COM sits at the DH frame's origin and unit points pins down the whole frame.
        for point in points:
            for row in rows:
                row["link"]["com"] = list(point)
            description = dh_to_description(data, "table.yaml")
            for frame, dh_frame, link in zip(_description_frames(description, q), expected,
                                             description["links"]):
                world = frame[:3, :3] @ np.array(link["com"]) + frame[:3, 3]
                assert np.allclose(world, dh_frame[:3, :3] @ point + dh_frame[:3, 3], atol=1e-12)
        # the inertia about the COM is the same tensor in the world either way
        for frame, dh_frame, link, row in zip(_description_frames(description, q), expected,
                                              description["links"], rows):
            world_mine = frame[:3, :3] @ _tensor(link["inertia"]) @ frame[:3, :3].T
            world_dh = dh_frame[:3, :3] @ _tensor(row["link"]["inertia"]) @ dh_frame[:3, :3].T
            assert np.allclose(world_mine, world_dh, atol=1e-12)
    assert [j["parent"] for j in description["joints"]] == ["base", "link1", "link2", "link3", "link4"]
    assert description["gravity"] == [0.0, 0.0, -9.81]


def test_dh_right_angles_give_exact_zeros():
    row = {"type": "revolute", "a": 0.5, "alpha": math.pi / 2, "d": 0.0, "theta": math.pi / 2,
           "link": {"mass": 1.0, "com": [0, 0, 0], "inertia": {"ixx": 1, "iyy": 2, "izz": 3,
                                                               "ixy": 0, "ixz": 0, "iyz": 0}}}
    data = {"name": "r", "source": "s", "dh": {"convention": "classic", "joints": [row, dict(row)]}}
    description = dh_to_description(data, "r.yaml")
    rotation = np.array(description["joints"][1]["origin"]["rotation"])
    assert set(np.abs(rotation).ravel()) <= {0.0, 1.0}
    assert description["links"][0]["inertia"]["ixy"] == 0.0


def _good_row():
    return {"name": "j2", "type": "revolute", "a": 0.0, "alpha": 0.0, "d": 0.0, "theta": 0.0,
            "link": {"mass": 1.0, "com": [0, 0, 0],
                     "inertia": {"ixx": 1, "iyy": 1, "izz": 1, "ixy": 0, "ixz": 0, "iyz": 0}}}


def _with(**changes):
    row = _good_row()
    row.update(changes)
    return {"name": "r", "dh": {"convention": "classic", "joints": [row]}}


BAD_DH = {
    "string number": (_with(alpha="1e-3"), "dh joint 'j2': field 'alpha' must be a number"),
    "missing d": ({"dh": {"convention": "classic",
                          "joints": [{k: v for k, v in _good_row().items() if k != "d"}]}},
                  "dh joint 'j2': missing field 'd'"),
    "bool": (_with(a=True), "field 'a' must be a number"),
    "nan": (_with(theta=float("nan")), "must be finite"),
    "bad type": (_with(type="continuous"), "field 'type' must be revolute or prismatic"),
    "bad convention": ({"dh": {"convention": "craig", "joints": [_good_row()]}}, "'convention'"),
    "empty": ({"dh": {"convention": "classic", "joints": []}}, "non-empty list"),
    "com length": (_with(link={"mass": 1.0, "com": [0, 0], "inertia": {}}), "'com'"),
    "inertia key": (_with(link={"mass": 1.0, "com": [0, 0, 0], "inertia": {"ixx": 1}}),
                    "missing field 'iyy'"),
    "not mapping": ({"dh": [1, 2]}, "dh: must be a mapping"),
}


@pytest.mark.parametrize("case", sorted(BAD_DH))
def test_bad_dh_raises_one_line_error(case):
    data, expected = BAD_DH[case]
    with pytest.raises(RobotFileError) as caught:
        dh_to_description(data, "robots/bad.yaml")
    message = str(caught.value)
    assert message.startswith("robots/bad.yaml: ")
    assert "\n" not in message
    assert expected in message


def test_the_model_is_physics_and_its_provenance_travels_beside(tmp_path):
    """Two copies of a robot file load as the same physics; where each came from, what the loader warned and
    what the run did (snapped, locked, cut, joint parameters) is in model.provenance, beside it."""
    import dataclasses
    from pathlib import Path
    import symdyn
    from symdyn.multibody.model import Model, Provenance
    source = Path(__file__).resolve().parents[1] / "robots" / "ur5.urdf"
    copy = tmp_path / "copy.urdf"
    copy.write_bytes(source.read_bytes())
    a, b = symdyn.load_robot(source), symdyn.load_robot(copy)
    assert a != b and a == dataclasses.replace(b, provenance=a.provenance) and b.provenance.path == str(copy)
    assert a.provenance.digest == b.provenance.digest and len(a.provenance.digest) == 64
    snapped = symdyn.load_robot(source, snap_right_angles=True)
    assert snapped.provenance.snapped > 0 and snapped != a          # the physics changed too
    physics = {f.name for f in dataclasses.fields(Model)} - {"provenance"}
    assert not physics & {f.name for f in dataclasses.fields(Provenance)}
