"""Scalar arguments of the generated Python (issue 24, item 4): restitution and integrate's dt take a
Python float, a 0-d array or a batch (...,), as well as (..., 1); gains may be (Kp, Kd) with each a
number or a batch. Each way gives what the explicit (..., 1) / (..., 2) arrays give."""
import numpy as np
import pytest

import symdyn
from conftest import ROOT
from symdyn.compare import import_module_file
from symdyn.generate import module_name, render
from symdyn.multibody.lie import random_configuration

FUNCTIONS = ["impact", "constrained_forward_dynamics", "constrained_forward_dynamics_baumgarte"]


@pytest.fixture(scope="module")
def arm(tmp_path_factory):
    model = symdyn.load_robot(ROOT / "robots" / "puma560.yaml", contacts="link6")
    folder = tmp_path_factory.mktemp("scalars")
    for name, text in render(model, functions=FUNCTIONS).items():
        (folder / name).write_text(text)
    return model, import_module_file(folder / f"{module_name(model.provenance.path)}.py", "_scalar_args_puma")


def _states(model, count=3):
    rng = np.random.default_rng(4)
    return random_configuration(model, rng, count), rng.normal(size=(count, model.nv)), rng.normal(size=(count, model.nv))


def test_restitution(arm):
    model, module = arm
    q, v, _ = _states(model)
    expected = module.impact(q, v, np.full((3, 1), 0.5))
    for e in (0.5, np.float64(0.5), np.array(0.5), np.array([0.5]), np.full(3, 0.5), [0.5, 0.5, 0.5]):
        for got, want in zip(module.impact(q, v, e), expected):
            np.testing.assert_array_equal(got, want)
    one = module.impact(q[0], v[0], 0.5)                     # one state, a float: no batch axis
    assert one[0].shape == (model.nv,)
    np.testing.assert_array_equal(one[0], expected[0][0])
    per_state = module.impact(q, v, np.array([0.0, 0.5, 1.0]))
    for s, e in enumerate((0.0, 0.5, 1.0)):
        np.testing.assert_allclose(per_state[0][s], module.impact(q[s], v[s], e)[0], rtol=0, atol=1e-15)
    with pytest.raises(ValueError, match="do not broadcast"):
        module.impact(q, v, np.full(4, 0.5))


def test_gains(arm):
    model, module = arm
    q, v, tau = _states(model)
    expected = module.constrained_forward_dynamics(q, v, tau, gains=np.tile([10.0, 2.0], (3, 1)))
    for gains in ((10.0, 2.0), [10.0, 2.0], np.array([10.0, 2.0]), (np.full(3, 10.0), 2.0),
                  (np.array(10.0), np.full(3, 2.0))):
        for got, want in zip(module.constrained_forward_dynamics(q, v, tau, gains=gains), expected):
            np.testing.assert_array_equal(got, want)


def test_dt(arm):
    model, module = arm
    q, v, _ = _states(model)
    expected = module.integrate(q, v * 0.1)
    for dt in (0.1, np.float64(0.1), np.array(0.1), np.full(3, 0.1), np.full((3, 1), 0.1)):
        np.testing.assert_allclose(module.integrate(q, v, dt), expected, rtol=0, atol=1e-15)
    steps = np.array([0.0, 0.1, 0.2])
    np.testing.assert_allclose(module.integrate(q, v, steps), module.integrate(q, v * steps[:, None]), atol=1e-15)
    assert module.integrate(q[0], v[0], 0.1).shape == (model.nq,)
    q32 = module.integrate(q.astype(np.float32), v.astype(np.float32), np.float32(0.1))
    assert q32.dtype == np.float32                           # (item 12: Python keeps float32)
