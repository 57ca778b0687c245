"""Batch entries of the functions too small for lanes (symdyn/codegen/tiny.py): joint friction as one
loop over the flat arrays (viscous, Coulomb, offsets, smoothed, joints of different kinds, a floating
base; float32), the base parameters with their copied runs by memcpy. Each equals the loop of single
calls and the friction law computed here from the joint parameters."""
import re
import shutil
import subprocess

import numpy as np
import pytest
import yaml

import golden
import symdyn
from conftest import ROOT, erd_path
from symdyn.codegen import cload, manifest, tiny
from symdyn.codegen.c import C, C32
from symdyn.codegen.generator import trace_all

PANDA = ROOT / "robots" / "panda.urdf"
JOINTS = [f"panda_joint{k}" for k in range(1, 8)]
#: counts around the blocks of 8 states (the Panda's 7 velocities: 56 entries, 8 doubles per vector)
COUNTS = (0, 1, 7, 8, 9, 17, 57)


def _all(damping, friction, offset):
    return {j: {"damping": damping + 0.01 * k, "friction": friction + 0.1 * k, "friction_offset": offset * (k - 3)}
            for k, j in enumerate(JOINTS)}


#: joint parameters -> the shapes of the friction law (viscous: the bundled Panda's URDF)
FRICTION = {
    "viscous": None,
    "coulomb": {"joints": _all(0.1, 0.5, 0.02)},                  # Fc = 1.0 at joint 5: `sign(qd)` unscaled
    "smoothed": {"joints": _all(0.1, 0.5, 0.02), "coulomb_smoothing": 0.01},
    # three laws: Fv qd + Fc sgn + Fo (joints 1-3), Fv qd (4), a constant (5-7: Fo, or 0)
    "mixed": {"joints": {**{j: {"damping": 0.2, "friction": 0.3 + k, "friction_offset": 0.1} for k, j in enumerate(JOINTS[:3])},
                         JOINTS[3]: {"damping": 0.4, "friction": 0.0},
                         JOINTS[4]: {"damping": 0.0, "friction": 0.0, "friction_offset": -0.2},
                         JOINTS[5]: {"damping": 0.0, "friction": 0.0}, JOINTS[6]: {"damping": 0.0, "friction": 0.0}}},
    # four laws: more than MAX_SHAPES, a loop of single calls
    "four": {"joints": {JOINTS[0]: {"damping": 0.2, "friction": 0.3, "friction_offset": 0.1},
                        JOINTS[1]: {"damping": 0.2, "friction": 0.3},
                        JOINTS[2]: {"damping": 0.4, "friction": 0.0},
                        **{j: {"damping": 0.0, "friction": 0.0} for j in JOINTS[3:]}}},
}


def _write(folder, model, backend, functions):
    programs = trace_all(model, functions=functions)
    for name, text in {**backend.render(model, programs, "panda", "numeric"),
                       **manifest.render(model, programs, "panda", "numeric", [backend])}.items():
        (folder / name).write_text(text)
    return folder / next(name for name in backend.files("panda") if name.endswith(".c"))


def _model(tmp_path_factory, name, path=PANDA, floating=False):
    params = None
    if FRICTION.get(name):
        params = tmp_path_factory.mktemp("params") / f"{name}.yaml"
        params.write_text(yaml.safe_dump(FRICTION[name]))
    return symdyn.load_robot(path, joint_params=params, floating_base=floating)


@pytest.fixture(scope="module", params=list(FRICTION))
def friction(request, tmp_path_factory):
    """(variant, model, C source, module) with the friction and base parameters of one joint-parameter file."""
    model = _model(tmp_path_factory, request.param)
    source = _write(tmp_path_factory.mktemp(request.param), model, C, ("friction", "base_parameters"))
    return request.param, model, source.read_text(), symdyn.load_c(source)


def _law(model, qd):
    """tau_f = Fv qd + Fc sgn(qd) + Fo (sgn: tanh(qd / delta) when smoothed), from the model's joint data."""
    joints = dict(zip(model.joint_names, model.joints))
    fv, fc, fo = (np.array([getattr(joints[j], key) for j in JOINTS]) for key in ("damping", "friction", "friction_offset"))
    sgn = np.tanh(qd / model.coulomb_smoothing) if model.coulomb_smoothing > 0 else np.sign(qd)
    return fv * qd + fc * sgn + fo


def _loop(fn, a, size=7):
    """One single-state call per state."""
    return np.array([fn(row) for row in a]).reshape(len(a), size if not len(a) else -1)


def _velocities(count, nv, seed):
    qd = np.random.default_rng(seed).normal(size=(count, nv)) * 2
    qd[::5, 1] = 0.0                             # sgn(0) = 0, and -0.0
    qd[1::5, 2] = -0.0
    qd[2::7, 3] = 1e-3                           # within the smoothing width
    return qd


def test_friction_batch_is_elementwise_where_it_can_be(friction):
    name, _, source, _ = friction
    flat = "friction of 8 states (56 entries: whole vectors) for its batch entry: entry i of tau_f" in source
    assert flat == ("static inline void sd_panda_friction_block(const double *restrict qd, double *restrict tau_f)" in source)
    # smoothed: tanh is a libm call per entry, vectorized neither in the loop nor in lanes: single calls
    assert flat == (name not in ("four", "smoothed")), name
    assert "friction of `count` states, PANDA_BATCH_LANES at a time" not in source      # never lanes
    assert "One state of base_parameters for its batch entry" in source and "memcpy(beta + " in source


@pytest.mark.parametrize("count", COUNTS)
def test_friction_batch_equals_single_calls_and_the_law(friction, count):
    name, model, _, module = friction
    qd = _velocities(count, 7, seed=count)
    batch = module.friction(qd)
    assert batch.shape == (count, 7)
    loop = _loop(module.friction, qd)
    # one loop for every joint: the order of a sum of three terms may differ from the single
    # function's (which orders them by their printed text): an ulp at most
    assert np.abs(batch - loop).max(initial=0) <= 2e-16 * max(1.0, np.abs(loop).max(initial=0)), name
    assert np.abs(batch - _law(model, qd)).max(initial=0) <= 1e-15 * max(1.0, np.abs(loop).max(initial=0)), name


def test_friction_batch_of_special_values(friction):
    name, _, _, module = friction
    qd = _velocities(24, 7, seed=3)
    qd[4] = [np.inf, -np.inf, np.nan, 1e300, -1e-300, 5e-324, -0.0]
    qd[11, 0] = np.nan
    batch, loop = module.friction(qd), _loop(module.friction, qd)
    assert np.array_equal(np.isnan(batch), np.isnan(loop)), name
    assert np.array_equal(np.nan_to_num(batch), np.nan_to_num(loop)) or name in ("coulomb", "smoothed", "mixed")
    assert np.allclose(np.nan_to_num(batch), np.nan_to_num(loop), rtol=1e-15, atol=1e-15), name


def test_base_parameters_batch_is_the_single_function_bit_for_bit(friction):
    """The runs that copy parameters go by memcpy; any parameters, not only the robot's."""
    _, model, _, module = friction
    p = len(model.parameters)
    for count in (0, 1, 7, 33):
        params = np.random.default_rng(count).normal(size=(count, p))
        params[:, :3] = np.array(model.parameters)[:3]
        batch = module.base_parameters(params)
        assert batch.shape[0] == count
        assert np.array_equal(batch, _loop(module.base_parameters, params).reshape(batch.shape))


def test_no_lanes_build_keeps_the_loop_of_single_calls(tmp_path_factory):
    model = _model(tmp_path_factory, "coulomb")
    source = _write(tmp_path_factory.mktemp("nolanes"), model, C, ("friction", "base_parameters"))
    fast, plain = symdyn.load_c(source), symdyn.load_c(source, lanes=False)
    qd = _velocities(57, 7, seed=5)
    assert np.array_equal(plain.friction(qd), _loop(fast.friction, qd))
    assert np.abs(fast.friction(qd) - plain.friction(qd)).max() <= 2e-16 * np.abs(plain.friction(qd)).max()


def test_float32_friction(tmp_path_factory):
    """Tables of floats (16 per vector: blocks of 16 states), float literals."""
    model = _model(tmp_path_factory, "coulomb")
    source = _write(tmp_path_factory.mktemp("f32"), model, C32, ("friction",))
    text = source.read_text()
    assert "friction of 16 states (112 entries" in text and "static const float sd_tau_f_k0_0_1[112]" in text
    assert re.search(r"sd_tau_f_k0_0_1\[112\] = \{\n( +-?\d\.\d+f,){7}\n", text)
    module = symdyn.load_c(source)
    for count in (15, 16, 17, 40):
        qd = _velocities(count, 7, seed=count).astype(np.float32)
        batch = module.friction(qd)
        assert batch.dtype == np.float32
        loop = _loop(module.friction, qd)
        assert np.abs(batch - loop).max() <= 2e-7 * np.abs(loop).max()
        assert np.abs(batch - _law(model, qd.astype(float))).max() <= 1e-6 * np.abs(loop).max()


def test_floating_base_friction(tmp_path_factory):
    """solo12 with a free-flyer: 18 velocities, the base's 6 entries 0 and the joints' Fv qd + Fc sgn(qd)
    (blocks of 4 states: 72 entries)."""
    path = erd_path("solo_description/robots/solo12.urdf")
    joints = symdyn.load_robot(path).joint_names
    folder = tmp_path_factory.mktemp("solo")
    (folder / "p.yaml").write_text(yaml.safe_dump(
        {"joints": {j: {"damping": 0.01 * (k + 1), "friction": 0.02 * (k + 1)} for k, j in enumerate(joints)}}))
    model = symdyn.load_robot(path, joint_params=folder / "p.yaml", floating_base=True)
    assert model.nv == 18
    source = _write(folder, model, C, ("friction", "base_parameters", "gravity"))
    text = source.read_text()
    assert "friction of 4 states (72 entries" in text and "sd_tau_f_shape1[72]" in text
    module = symdyn.load_c(source)
    qd = _velocities(23, 18, seed=8)
    batch = module.friction(qd)
    assert np.array_equal(batch[:, :6], np.zeros((23, 6)))
    assert np.abs(batch - _loop(module.friction, qd)).max() <= 2e-16 * np.abs(batch).max()
    law = 0.01 * np.arange(1, 13) * qd[:, 6:] + 0.02 * np.arange(1, 13) * np.sign(qd[:, 6:])
    assert np.abs(batch[:, 6:] - law).max() <= 1e-15 * np.abs(law).max()


def test_ur5_compiles_and_its_batches_equal_single_calls():
    module = symdyn.load_c(golden.generated_file("ur5.c"))
    qd = _velocities(13, 6, seed=2)
    assert np.abs(module.friction(qd) - _loop(module.friction, qd)).max() <= 2e-16 * max(1, np.abs(qd).max())
    params = np.random.default_rng(1).normal(size=(9, 10 * 6 + 4 * 6))
    assert np.array_equal(module.base_parameters(params), _loop(module.base_parameters, params))


def test_functions_that_are_not_elementwise():
    model = symdyn.load_robot(PANDA)
    programs = {p.name: p for p in trace_all(model, functions=("gravity", "base_parameters", "friction"))}
    assert tiny.elementwise(programs["gravity"]) is None
    assert tiny.elementwise(programs["base_parameters"]) is None
    plan = tiny.elementwise(programs["friction"])
    assert plan["size"] == 7 and plan["block"] == 8 and plan["args"] == ["qd"]
    assert tiny.elementwise(programs["friction"], "float")["block"] == 16


def test_threads_from_enough_states(tmp_path_factory):
    """Threads start from PARALLEL_ENTRIES entries moved (the Panda's friction: 2341 states, its base
    parameters: 197); the same numbers as one thread."""
    model = _model(tmp_path_factory, "mixed")
    path = _write(tmp_path_factory.mktemp("threads"), model, C, ("friction", "base_parameters"))
    source = path.read_text()
    assert "if (SD_THREADS(count >= 2341))" in source and "if (SD_THREADS(count >= 197))" in source
    one, two = symdyn.load_c(path), symdyn.load_c(path, threads=2)
    qd = _velocities(3001, 7, seed=4)
    assert np.array_equal(two.friction(qd), one.friction(qd))
    params = np.random.default_rng(2).normal(size=(400, len(model.parameters)))
    assert np.array_equal(two.base_parameters(params), _loop(one.base_parameters, params, 0))


@pytest.mark.skipif(not shutil.which("gcc"), reason="gcc")
def test_gcc_vectorizes_the_elementwise_loops(friction, tmp_path):
    """A law gcc cannot vectorize (a libm call, a ?: of floating-point values: control flow under the
    default -ftrapping-math) would silently bring back one entry per instruction."""
    name, model, source, _ = friction
    if "sd_friction_block" not in source.replace("sd_panda_friction_block", "sd_friction_block"):
        pytest.skip(f"{name}: no elementwise loop")
    (tmp_path / "panda.c").write_text(source)
    (tmp_path / "panda.h").write_text(C.render(model, trace_all(model, functions=("friction", "base_parameters")),
                                               "panda", "numeric")["panda.h"])
    result = subprocess.run(["gcc", "-std=c99", *cload.OPT_FLAGS[:-1], "-march=haswell", "-fopenmp",
                             "-fopt-info-vec-optimized", "-c", "panda.c", "-o", "p.o"],
                            capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 0, result.stderr[:2000]
    # gcc reports the loop at its first statement
    loop = source.splitlines().index("    for (int sd_e = 0; sd_e < 56; ++sd_e) {") + 2
    assert re.search(rf"panda\.c:{loop}:\d+: optimized: loop vectorized", result.stderr), (name, result.stderr[:2000])


def test_one_joint_elementwise_function_of_two_outputs(tmp_path_factory):
    """A one-joint chain: diagonalized_forward_dynamics (qd = D^-1/2 nu, nu_dot = D^-1/2 tau up to the
    angle-free terms) is elementwise with two outputs in one loop body, each with its own constants."""
    folder = tmp_path_factory.mktemp("one")
    link = {"name": "l", "mass": 1.5, "com": [0.1, 0.01, 0.0],
            "inertia": {"ixx": 0.002, "iyy": 0.01, "izz": 0.02, "ixy": 0.0, "ixz": 0.0, "iyz": 0.0}}
    joint = {"name": "j", "type": "revolute", "parent": "base", "child": "l", "axis": [0, 0, 1],
             "origin": {"xyz": [0.0, 0.0, 0.0], "rpy": [0.0, 0.0, 0.0]}}
    (folder / "one.yaml").write_text(yaml.safe_dump({"name": "one", "gravity": [0.0, 0.0, -9.81],
                                                    "links": [link], "joints": [joint]}))
    model = symdyn.load_robot(folder / "one.yaml")
    path = _write(folder, model, C, ("diagonalized_forward_dynamics",))
    text = path.read_text()
    assert "diagonalized_forward_dynamics of 8 states" in text, "no longer elementwise: the test checks nothing"
    module = symdyn.load_c(path)
    rng = np.random.default_rng(5)
    args = [rng.normal(size=(19, 1)) for _ in range(3)]
    batch = module.diagonalized_forward_dynamics(*args)
    loop = [np.array([module.diagonalized_forward_dynamics(*(a[i] for a in args))[k] for i in range(19)])
            for k in range(2)]
    for b, l in zip(batch, loop):
        assert np.array_equal(b, l)
