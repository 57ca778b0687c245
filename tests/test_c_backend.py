"""Generated C: the same numbers as Python and Pinocchio, the loader's batches and cache, the static helpers."""
import re

import numpy as np
import pytest

import symdyn
from conftest import BUNDLED, ERD_ARMS, ROOT, erd_path, random_states, relerr
from oracle import Pinocchio
from symdyn.functions import FUNCTIONS
from test_c_strict import write_c
from test_generated import PIN_FUNCTIONS, _args, generated_module


def _check_c(path, folder, tmp_path_factory, pmodel=None):
    c_mod = symdyn.load_c(write_c(path, folder))
    py_mod = generated_module(path, tmp_path_factory)
    q, qd, x = random_states(c_mod.DOF, 20, seed=7)
    oracle = Pinocchio(pmodel) if pmodel is not None else None
    model = symdyn.load_robot(path)
    for fn in FUNCTIONS:
        args = _args(fn, q, qd, x, model)
        ours = getattr(c_mod, fn.name)(*args)
        assert relerr(ours, getattr(py_mod, fn.name)(*args)) < 1e-10, fn.name
        if oracle is not None and fn.name in PIN_FUNCTIONS:
            for s in range(len(q)):
                assert relerr(ours[s], getattr(oracle, fn.name)(*(a[s] for a in args))) < 1e-10, fn.name


@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: p.name)
def test_c_equals_python(path, tmp_path, tmp_path_factory, monkeypatch):
    monkeypatch.setenv("SYMDYN_CACHE", str(tmp_path / "cache"))
    _check_c(path, tmp_path, tmp_path_factory)


@pytest.mark.parametrize("name", ["xarm7", "ur10"])
def test_c_on_example_robot_data_equals_pinocchio(name, tmp_path, tmp_path_factory, monkeypatch):
    import pinocchio as pin
    monkeypatch.setenv("SYMDYN_CACHE", str(tmp_path / "cache"))
    path = erd_path(ERD_ARMS[name])
    _check_c(path, tmp_path, tmp_path_factory, pin.buildModelFromUrdf(str(path)))


def test_symbolic_parameter_c_equals_numeric_c(tmp_path, monkeypatch, tmp_path_factory):
    monkeypatch.setenv("SYMDYN_CACHE", str(tmp_path / "cache"))
    path = ROOT / "robots" / "stanford.yaml"
    (tmp_path / "num").mkdir()
    (tmp_path / "sym").mkdir()
    numeric = symdyn.load_c(write_c(path, tmp_path / "num"))
    sym = symdyn.load_c(write_c(path, tmp_path / "sym", "symbolic"))
    params = generated_module(path, tmp_path_factory, params="symbolic").DEFAULT_PARAMS
    q, qd, x = random_states(6, 10, seed=8)
    model = symdyn.load_robot(path)
    for fn in FUNCTIONS:
        args = _args(fn, q, qd, x, model)
        extra = (params,) if fn.parametric else ()
        assert relerr(getattr(sym, fn.name)(*args, *extra), getattr(numeric, fn.name)(*args)) < 1e-10, fn.name


def test_load_c_batches_and_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("SYMDYN_CACHE", str(tmp_path / "cache"))
    c_file = write_c(ROOT / "robots" / "planar6.yaml", tmp_path)
    first = symdyn.load_c(c_file)
    libs = list((tmp_path / "cache").glob("*.so"))
    assert len(libs) == 1
    second = symdyn.load_c(c_file)                          # cached: nothing new compiled
    assert list((tmp_path / "cache").glob("*.so")) == libs
    q = np.random.default_rng(0).normal(size=(2, 3, 6))
    assert second.mass_matrix(q).shape == (2, 3, 6, 6)
    assert np.array_equal(first.mass_matrix(q)[1, 2], first.mass_matrix(q[1, 2]))
    # a function with two outputs: two out pointers in C, a tuple in Python, batched alike
    qd, nu_dot = first.diagonalized_forward_dynamics(q, q, q)
    assert qd.shape == nu_dot.shape == (2, 3, 6)
    one = first.diagonalized_forward_dynamics(q[1, 2], q[1, 2], q[1, 2])
    assert np.array_equal(qd[1, 2], one[0]) and np.array_equal(nu_dot[1, 2], one[1])


def _helpers_defined_where_called(source):
    """{helper: (defined, called)} of the static helpers of a generated .c that are written only where used."""
    out = {}
    for helper in ("sd_sign", "sd_sincos", "sd_sincos_lane", "sd_sincos_kernel"):
        defined = bool(re.search(rf"^static [^\n(]*\b{helper}\(", source, re.M))
        out[helper] = (defined, source.count(f"{helper}(") - defined > 0)
    return out


def test_static_helpers_exactly_where_called(tmp_path):
    """Each static helper (sign, the sin and cos helpers) is written into a module exactly when a
    function of it calls the helper (the flags come from the programs and the plans, not from the C text):
    cases that call each helper and cases that do not, in double and float32."""
    from symdyn.codegen.c import C, C32
    from symdyn.codegen.generator import trace_all
    params = tmp_path / "friction.yaml"
    params.write_text("joints:\n  panda_joint1: {damping: 0.2, friction: 0.3}\n  panda_joint2: {damping: 0.4, friction: 0.0}\n")
    cases = [(ROOT / "robots" / "planar2.yaml", {}, ("frame_jacobian",)),          # sd_sincos pairs (and lanes)
             (ROOT / "robots" / "planar2.yaml", {}, ("regressor",)),               # sign
             (ROOT / "tests" / "data" / "mimic_gripper.urdf", {}, ("center_of_mass",)),  # sd_sincos, lanes
             (ROOT / "robots" / "panda.urdf", {"joint_params": params, "floating_base": True}, ("friction",))]  # none
    seen = set()
    for path, options, functions in cases:
        model = symdyn.load_robot(path, **options)
        programs = trace_all(model, functions=functions)
        for backend in (C, C32):
            source = next(text for name, text in backend.render(model, programs, "m", "numeric").items()
                          if name.endswith(".c"))
            for helper, (defined, called) in _helpers_defined_where_called(source).items():
                assert defined == called, (path.name, functions, backend.name, helper)
                seen.add((helper, called))
    assert seen == {(h, c) for h in ("sd_sign", "sd_sincos", "sd_sincos_lane", "sd_sincos_kernel")
                    for c in (True, False)}


def test_c_printers_call_libm_in_their_precision():
    """double: sin, sqrt, tanh, pow; float32: their float versions (sinf, ...) and float literals; sd_sign in both."""
    import symengine as se

    from symdyn.codegen.c import C, C32
    x = se.Symbol("x")
    e = se.sin(x) + se.sqrt(x) * se.tanh(x) + x ** se.Rational(1, 3) + se.sign(x)
    assert C.printer(e) == "pow(x, 0.3333333333333333) + sd_sign(x) + sin(x) + sqrt(x)*tanh(x)"
    assert C32.printer(e) == "powf(x, 0.3333333333333333f) + sd_sign(x) + sinf(x) + sqrtf(x)*tanhf(x)"
