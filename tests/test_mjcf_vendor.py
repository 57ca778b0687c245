"""Held-out MJCF robots of other vendors (MuJoCo Menagerie, robots/mjcf/menagerie, copied unedited) against
MuJoCo: mass matrix, inverse dynamics, nonlinear effects, gravity, forward dynamics and the placement and
Jacobian of the FRAMES (sites, or leaf bodies where a robot has no site) at 5 random states, relative error
<= 1e-9, from the numeric engine, the generated Python and the generated C. The reader has no case for any
of these files.

Their mesh (and texture) files are not in this repository. Every body of these robots that has a mesh geom
also has an explicit <inertial>, so the reader never needs a mesh (it reads one only for a body's inertia from geoms).
MuJoCo, though, refuses a model whose mesh files are missing: the oracle is an in-memory copy of the model
(mujoco.MjSpec) with the mesh geoms and mesh assets removed, built only after checking that every body
holding a mesh geom has an explicit <inertial> (and inertiafromgeom is not "true"), so the removal cannot
change a mass, a centre of mass or an inertia, and with them none of the compared numbers (textures,
which MuJoCo also reads, go too: they are pictures).

Cassie's two ball joints have damping, which symdyn models as MuJoCo applies it (on each of the joint's
DoFs); test_ball_joint_damping_is_modelled checks that it is read and that it matters.
"""
import importlib.util
import shutil
from pathlib import Path

import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")

from test_mjcf import check_against_mujoco, close, configure, random_state  # noqa: E402

from symdyn.engine import Engine  # noqa: E402
from symdyn.readers.load import load_robot  # noqa: E402

MENAGERIE = Path(__file__).resolve().parents[1] / "robots" / "mjcf" / "menagerie"
#: one robot per vendor and kind: quadrupeds (free base), a humanoid, arms, an arm with a gripper whose
#: fingers are coupled by an <equality joint> and a tendon, a biped with closed chains (<equality connect>)
ROBOTS = ["unitree_go2/go2.xml", "unitree_h1/h1.xml", "boston_dynamics_spot/spot.xml",
          "franka_emika_panda/panda.xml", "universal_robots_ur5e/ur5e.xml", "kuka_iiwa_14/iiwa14.xml",
          "agility_cassie/cassie.xml"]
GENERATED = ("mass_matrix", "inverse_dynamics", "nonlinear_effects", "gravity", "forward_dynamics",
             "frame_placement", "frame_jacobian")


def oracle_without_meshes(path):
    """MuJoCo's model of `path` with its mesh geoms and meshes removed, after checking that this cannot
    change the dynamics (each body with a mesh geom has an explicit <inertial>)."""
    spec = mujoco.MjSpec.from_file(str(path))
    assert spec.compiler.inertiafromgeom != mujoco.mjtInertiaFromGeom.mjINERTIAFROMGEOM_TRUE
    meshed = [g for g in spec.geoms if g.type == mujoco.mjtGeom.mjGEOM_MESH]
    for geom in meshed:
        assert geom.parent.explicitinertial, f"body '{geom.parent.name}' takes its inertia from a mesh"
    for element in meshed + list(spec.meshes) + list(spec.textures):
        spec.delete(element)
    for material in spec.materials:
        material.textures = [""] * len(material.textures)
    return spec.compile()


def _generated_module(model, language, folder):
    import symdyn
    from symdyn.generate import module_name, render
    files = render(model, ("python", "c"), functions=GENERATED)
    for name, text in files.items():
        (folder / name).write_text(text)
    name = module_name(model.provenance.path)
    if language == "c":
        return symdyn.load_c(folder / f"{name}.c")
    spec = importlib.util.spec_from_file_location(name, folder / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def check_body_frames(e, m, states=5):
    """The FRAMES that are bodies (a robot without sites gets its leaf bodies) against MuJoCo's xpos, xmat
    and mj_jacBody; check_against_mujoco checks the sites. Returns how many frames were bodies."""
    d = mujoco.MjData(configure(m))
    found = [(f, mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, name)) for f, name in enumerate(e.FRAMES)]
    found = [(f, b) for f, b in found if b >= 0]
    rng = np.random.default_rng(5)
    for _ in range(states):
        d.qpos[:] = random_state(m, rng)[0]
        mujoco.mj_forward(m, d)
        placement, J = e.frame_placement(d.qpos.copy()), e.frame_jacobian(d.qpos.copy())
        for f, b in found:
            close(placement[f][:3, 3], d.xpos[b])
            close(placement[f][:3, :3], d.xmat[b].reshape(3, 3))
            jacp, jacr = np.zeros((3, m.nv)), np.zeros((3, m.nv))
            mujoco.mj_jacBody(m, d, jacp, jacr, b)
            close(J[f], np.vstack([jacp, jacr]))
    return len(found)


@pytest.mark.parametrize("robot", ROBOTS)
def test_menagerie_robot_loads_without_its_meshes(robot):
    """The reader needs no mesh file here; MuJoCo's model without meshes has the same masses."""
    path = MENAGERIE / robot
    model = load_robot(path)
    m = oracle_without_meshes(path)
    assert (model.nq, model.nv) == (m.nq, m.nv)
    moving = [b for b in range(1, m.nbody) if m.body_weldid[b] != 0]
    assert sum(b.mass for b in model.bodies) == pytest.approx(sum(m.body_mass[b] for b in moving), rel=1e-12)


@pytest.mark.parametrize("robot", ROBOTS)
def test_menagerie_robot_matches_mujoco(robot):
    path = MENAGERIE / robot
    model = load_robot(path)
    m = oracle_without_meshes(path)
    check_against_mujoco(path, states=5, oracle=m)
    assert check_body_frames(Engine(model), m) + m.nsite > 0      # every robot has a frame checked


def test_ball_joint_damping_is_modelled():
    """Cassie's ball-joint damping is read without a warning, on each DoF as MuJoCo's dof_damping, and it
    matters: with it zeroed in MuJoCo the inverse dynamics differ (test_menagerie_robot_matches_mujoco
    compares with it)."""
    path = MENAGERIE / "agility_cassie/cassie.xml"
    model = load_robot(path)
    m = oracle_without_meshes(path)
    ball = [j for j in range(m.njnt) if int(m.jnt_type[j]) == int(mujoco.mjtJoint.mjJNT_BALL)]
    assert len(ball) == 2 and not any("damping" in w for w in model.provenance.warnings)
    for j in ball:
        dofs = slice(m.jnt_dofadr[j], m.jnt_dofadr[j] + 3)
        joint = model.joints[model.joint_names.index(mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, j))]
        assert joint.damping > 0 and np.all(m.dof_damping[dofs] == joint.damping)
        m.dof_damping[dofs] = 0
    with pytest.raises(AssertionError):
        check_against_mujoco(path, states=1, oracle=m)


@pytest.mark.parametrize("language", ["python", "c"])
@pytest.mark.parametrize("robot", ROBOTS)
def test_menagerie_generated_code_matches_mujoco(robot, language, tmp_path):
    if language == "c" and not any(shutil.which(cc) for cc in ("cc", "gcc", "clang")):
        pytest.skip("no C compiler")
    path = MENAGERIE / robot
    model = load_robot(path)
    module = _generated_module(model, language, tmp_path)
    check_against_mujoco(path, states=5, module=module, oracle=oracle_without_meshes(path))
    check_body_frames(module, oracle_without_meshes(path))


def test_compare_oracle_loads_menagerie_robots_without_meshes(tmp_path):
    """`symdyn compare`'s MuJoCo column (symdyn.oracle.mujoco) leaves the mesh geoms out where MuJoCo cannot
    read their files and no body's inertia needs them, says so, and matches a bare <freejoint/> (unnamed in
    MuJoCo) by the reader's name; where a body's inertia needs its mesh, MuJoCo's error stands."""
    from symdyn.oracle import mujoco as symdyn_oracle
    path = MENAGERIE / "unitree_go2/go2.xml"
    model, notes = load_robot(path), []
    functions = symdyn_oracle.functions(model, notes=notes)
    assert any("mesh geoms left out" in n for n in notes), notes
    m = configure(oracle_without_meshes(path))
    d = mujoco.MjData(m)
    q, v, a = random_state(m, np.random.default_rng(1))
    d.qpos[:], d.qvel[:], d.qacc[:] = q, v, a
    mujoco.mj_inverse(m, d)
    close(functions["inverse_dynamics"](q, v, a), d.qfrc_inverse)
    needed = tmp_path / "needed.xml"
    needed.write_text('<mujoco><asset><mesh name="m" file="gone.stl"/></asset><worldbody><body name="b">'
                      '<joint name="j"/><geom type="mesh" mesh="m"/><geom type="box" size="0.1 0.1 0.1"/>'
                      '</body></worldbody></mujoco>')
    spec = mujoco.MjSpec.from_file(str(needed))
    assert not symdyn_oracle.without_meshes(spec) and len(spec.meshes) == 1
