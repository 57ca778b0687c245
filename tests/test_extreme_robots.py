"""Extreme robots: a 50-link chain traces without recursion errors and its code is right; the PUMA 560 at its
singular poses, links of 1e-6 kg, and robots in other units (mm and g, much larger, smaller or heavier)
keep D(k) > 0 and every function finite, with M M^-1 = I and ABA(RNEA(qdd)) = qdd within 100 cond(M) eps."""
import copy
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import yaml

import symdyn
from conftest import ROOT, import_file, spatial_chain
from symdyn.codegen.generator import trace
from symdyn.codegen.python import PYTHON
from symdyn.functions import BY_NAME, FUNCTIONS
from symdyn.generate import render
from symdyn.readers.description import build_model
from symdyn.readers.dh import dh_to_description


EPS = np.finfo(float).eps


def _description_of(path):
    data = yaml.safe_load(Path(path).read_text())
    return dh_to_description(data, path) if "dh" in data else data


def _scaled(description, length=1.0, mass=1.0):
    """The same robot in other units: lengths times `length`, masses times `mass`."""
    d = copy.deepcopy(description)
    d["gravity"] = [g * length for g in d.get("gravity", [0.0, 0.0, -9.81])]
    for link in d["links"]:
        link["mass"] *= mass
        link["com"] = [c * length for c in link.get("com", [0, 0, 0])]
        link["inertia"] = {k: v * mass * length ** 2 for k, v in link.get("inertia", {}).items()}
    for joint in d["joints"]:
        origin = joint.get("origin") or {}
        if "xyz" in origin:
            origin["xyz"] = [x * length for x in origin["xyz"]]
    return d


def _every_function(engine, q, rng):
    """Evaluate every function of the set at q (other inputs random); all must be finite."""
    n = engine.n
    values = {}
    for fn in FUNCTIONS:
        args = [q if a == "q" else engine.PARAMETERS if a == "params" else
                rng.normal(size=(len(engine.FRAMES), 6) if a == "f_ext" else n) for a in fn.args]
        values[fn.name] = getattr(engine, fn.name)(*args)
        assert np.isfinite(values[fn.name]).all(), fn.name
    return values


def _check_consistent(model, qs, seed=0, factor=100.0):
    """D(k) > 0, every function finite, M M^-1 = I and ABA(RNEA(qdd)) = qdd within factor * cond(M) * eps."""
    engine = symdyn.Engine(model)
    rng = np.random.default_rng(seed)
    n = model.dof
    for q in qs:
        q = np.asarray(q, dtype=float)
        _every_function(engine, q, rng)
        D = engine.articulated_inertia(q)
        assert (D > 0).all(), D
        M, Minv = engine.mass_matrix(q), engine.mass_matrix_inverse(q)
        cond = np.linalg.cond(M)
        assert np.isfinite(cond)
        tol = factor * cond * EPS
        assert np.abs(M @ Minv - np.eye(n)).max() <= tol
        assert np.abs(Minv @ M - np.eye(n)).max() <= tol
        qd, qdd = rng.normal(size=n), rng.normal(size=n)
        tau = engine.inverse_dynamics(q, qd, qdd)
        assert np.abs(engine.forward_dynamics(q, qd, tau) - qdd).max() <= tol * max(1.0, np.abs(qdd).max())
        # the UDU^T factorization: prod D(k) = det M
        assert np.prod(D) == pytest.approx(np.linalg.det(M), rel=max(1e-9, tol))
    return engine


PUMA = ROOT / "robots" / "puma560.yaml"


STANFORD = ROOT / "robots" / "stanford.yaml"


# PUMA 560 singular poses: wrist (q5 = 0: axes 4 and 6 aligned), elbow (arm stretched), shoulder
# (wrist centre on the axis of joint 1), and all of them at once (q = 0)
PUMA_SINGULAR = [np.zeros(6), [0.3, -0.4, 0.2, 0.5, 0.0, -0.7], [0.0, 0.0, -np.pi / 2, 0.0, 0.5, 0.0],
                 [0.0, np.pi / 2, -np.pi / 2, 0.0, 0.0, 0.0], [1.0, 0.2, np.pi / 2, -1.0, 1e-12, 2.0]]


def test_fifty_link_chain_traces(capsys):
    """A 50-link chain (revolute and prismatic) traces without recursion errors; the code is right."""
    model = build_model(spatial_chain(50, prismatic_every=7), "<chain 50>")
    assert model.dof == 50
    names = ("inverse_dynamics", "forward_dynamics", "articulated_inertia", "gravity", "total_rates", "coriolis_nu")
    limit = sys.getrecursionlimit()
    start = time.perf_counter()
    programs = {name: trace(model, BY_NAME[name]) for name in names}
    elapsed = time.perf_counter() - start
    assert sys.getrecursionlimit() == limit
    with capsys.disabled():
        print(f"\n50-link chain: traced {', '.join(names)} in {elapsed:.2f} s")

    engine = symdyn.Engine(model)
    rng = np.random.default_rng(1)
    printer = PYTHON.printer
    for name, program in programs.items():
        inputs = {arg: rng.uniform(-1, 1, 50) for arg in BY_NAME[name].args}
        env = {"xp": np}
        for arg, symbols in program.inputs.items():
            env.update({str(s): inputs[arg][i] for i, s in enumerate(symbols)})
        for symbol, expr in program.assignments:
            env[str(symbol)] = eval(printer(expr), env)  # noqa: S307 (our own straight-line code)
        got = np.array([eval(printer(e), env) for e in program.results], dtype=float)  # noqa: S307
        want = getattr(engine, name)(*(inputs[a] for a in BY_NAME[name].args)).ravel()
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9 * max(1.0, np.abs(want).max()))
    _check_consistent(model, [rng.uniform(-np.pi, np.pi, 50)])


def test_puma_singular_poses():
    model = symdyn.load_robot(PUMA)
    _check_consistent(model, PUMA_SINGULAR)


def test_puma_generated_code_at_singular_poses(tmp_path):
    """The generated module agrees with the engine at the singular poses and stays finite."""
    model = symdyn.load_robot(PUMA)
    (tmp_path / "puma560.py").write_text(render(model, ("python",))["puma560.py"])
    generated = import_file(tmp_path / "puma560.py", "puma560_singular")
    engine = symdyn.Engine(model)
    rng = np.random.default_rng(2)
    for q in PUMA_SINGULAR:
        for fn in FUNCTIONS:
            args = [np.asarray(q, dtype=float) if a == "q" else engine.PARAMETERS if a == "params" else
                    rng.normal(size=(len(engine.FRAMES), 6) if a == "f_ext" else 6) for a in fn.args]
            got, want = getattr(generated, fn.name)(*args), getattr(engine, fn.name)(*args)
            assert np.isfinite(got).all(), fn.name
            np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9 * max(1.0, np.abs(want).max()), err_msg=fn.name)


@pytest.mark.parametrize("where", ["wrist", "tip", "every_other"])
def test_tiny_masses(where):
    """Links of 1e-6 kg (inertia scaled alike) keep D(k) > 0 and every function finite."""
    description = _description_of(PUMA)
    chosen = {"wrist": [3, 4, 5], "tip": [5], "every_other": [1, 3, 5]}[where]
    for k in chosen:
        link = description["links"][k]
        ratio = 1e-6 / link["mass"]
        link["mass"] = 1e-6
        link["inertia"] = {key: v * ratio for key, v in link["inertia"].items()}
    _check_consistent(build_model(description, f"<puma tiny {where}>"), PUMA_SINGULAR)


def test_tiny_mass_planar_chain():
    description = spatial_chain(8)
    for link in description["links"][::2]:
        link["mass"] = 1e-6
        link["inertia"] = {k: v * 1e-6 for k, v in link["inertia"].items()}
    rng = np.random.default_rng(3)
    _check_consistent(build_model(description, "<tiny chain>"), [np.zeros(8), rng.uniform(-3, 3, 8)])


@pytest.mark.parametrize("robot", [PUMA, STANFORD, ROOT / "robots" / "planar6.yaml"], ids=lambda p: p.stem)
@pytest.mark.parametrize("length, mass", [(1e3, 1e3), (1e2, 1e6), (1e-3, 1e-3), (1.0, 1e9)],
                         ids=["mm_g", "large", "small", "heavy"])
def test_other_units(robot, length, mass):
    """The same robot in mm and g (or much larger or smaller): identities hold, M scales as it must."""
    base = build_model(_description_of(robot), str(robot))
    scaled = build_model(_scaled(_description_of(robot), length, mass), str(robot))
    rng = np.random.default_rng(4)
    qs = [np.zeros(base.dof), rng.uniform(-1, 1, base.dof)]
    _check_consistent(scaled, qs)
    # joint-space inertia: mass * length^2 for two revolute joints, mass * length for mixed, mass for prismatic
    powers = np.array([1.0 if j.type == "revolute" else 0.0 for j in base.joints])
    factor = mass * length ** (powers[:, None] + powers[None, :])
    for q in qs:
        q_scaled = np.where(powers == 0.0, q * length, q)     # a prismatic coordinate is a length
        expected = symdyn.Engine(base).mass_matrix(q) * factor
        np.testing.assert_allclose(symdyn.Engine(scaled).mass_matrix(q_scaled), expected, rtol=1e-9,
                                   atol=1e-12 * np.abs(expected).max())
