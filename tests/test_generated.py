"""Generated Python modules: golden files, equality with the engine and Pinocchio, batches, parameters."""
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import golden
import symdyn
from conftest import BUNDLED, ERD_ARMS, ROOT, erd_path, function_args, random_states, relerr
from oracle import Pinocchio, to_pinocchio
from symdyn.compare import import_module_file
from symdyn.functions import FUNCTIONS
from symdyn.generate import module_name, render
from symdyn.oracle.pinocchio import PINOCCHIO_NAMES as PIN_FUNCTIONS

TOL = 1e-10
_CACHE = {}


def rendered(path, languages=("python", "c"), params="numeric"):
    key = (str(path), languages, params)
    if key not in _CACHE:
        _CACHE[key] = render(symdyn.load_robot(path), languages, params)
    return _CACHE[key]


def generated_module(path, tmp_path_factory, params="numeric"):
    files = rendered(path, ("python",), params)
    folder = tmp_path_factory.mktemp("gen")
    name = module_name(path, params)
    (folder / f"{name}.py").write_text(files[f"{name}.py"])
    return import_module_file(folder / f"{name}.py", f"gen_{name}_{params}")


def _args(fn, q, qd, x, model):
    """Arguments for `fn`; `params`: the robot's standard parameters scaled at random, one set per state."""
    standard = np.array(model.parameters)
    params = standard * np.random.default_rng(8).uniform(0.5, 2.0, q.shape[:-1] + standard.shape)
    return function_args(fn, q, qd, x, len(model.kinematic_frames), params)


@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: p.name)
def test_golden_files_are_up_to_date(path, update):
    """generated/ holds planar2 exactly as the generator writes it today, and MANIFEST.json the hashes and
    operation counts of every bundled robot's functions (tests/golden.py; `pytest --update` rewrites both)."""
    files = rendered(path)
    stem = module_name(path)
    entry = golden.robot_entry(path, files)
    if update:
        golden.update_entry(stem, entry)
        for name, text in files.items():
            if stem == golden.BYTE_EXACT:
                (ROOT / "generated" / name).write_text(text, encoding="utf-8", newline="\n")
        return
    hint = "regenerate with `python -m pytest tests/test_generated.py -k golden --update`"
    if stem == golden.BYTE_EXACT:
        for name, text in files.items():
            committed = ROOT / "generated" / name
            assert committed.exists(), f"{committed} is missing: {hint}"
            assert committed.read_text() == text, f"{committed} differs from the generator's output: {hint}"
    expected = golden.read_manifest()["robots"].get(stem)
    assert expected is not None, f"{golden.MANIFEST} has no entry for {stem}: {hint}"
    assert expected == entry, f"{stem}: " + "; ".join(golden.differences(expected, entry)) + f": {hint}"


def test_golden_manifest_names_every_function_of_every_bundled_robot():
    """The manifest is not empty or stale in shape: each bundled robot, every generated function of the
    default set, with an operation count and both languages' hashes; generated/ holds only planar2's files."""
    manifest = golden.read_manifest()["robots"]
    assert sorted(manifest) == sorted(module_name(p) for p in BUNDLED)
    default = {fn.name for fn in FUNCTIONS}
    for stem, entry in manifest.items():
        assert default <= set(entry["functions"]), (stem, default - set(entry["functions"]))
        for name, row in entry["functions"].items():
            assert re.fullmatch(r"\d+ mul, \d+ add, \d+ div, \d+ sqrt, \d+ trig", row["operations"]), (stem, name)
            assert row["python"] and row["c"], (stem, name)
    kept = ["MANIFEST.json"] + [f"{golden.BYTE_EXACT}.{x}" for x in ("c", "h", "json", "py")]
    assert sum((ROOT / "generated" / name).stat().st_size for name in kept) < 1_000_000
    if shutil.which("git") and (ROOT / ".git").exists():     # what is committed (users generate into generated/ too)
        listed = subprocess.run(["git", "ls-files", "generated"], cwd=ROOT, capture_output=True, text=True).stdout
        if listed:
            assert sorted(Path(n).name for n in listed.split()) == kept


def _check_against_engine_and_pinocchio(path, module, pmodel=None):
    model = symdyn.load_robot(path)
    engine = symdyn.Engine(model)
    oracle = Pinocchio(pmodel if pmodel is not None else to_pinocchio(model))
    q, qd, x = random_states(model.dof, 20, seed=11)
    for fn in FUNCTIONS:
        args = _args(fn, q, qd, x, model)
        ours = getattr(module, fn.name)(*args)
        assert relerr(ours, getattr(engine, fn.name)(*args)) < TOL, fn.name
        if fn.name in PIN_FUNCTIONS:
            for s in range(len(q)):
                assert relerr(ours[s], getattr(oracle, fn.name)(*(a[s] for a in args))) < TOL, fn.name
    assert module.DOF == model.dof and tuple(module.JOINT_NAMES) == model.joint_names


@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: p.name)
def test_generated_python_equals_engine_and_pinocchio(path, tmp_path_factory):
    _check_against_engine_and_pinocchio(path, generated_module(path, tmp_path_factory))


@pytest.mark.parametrize("name", ["xarm7", "z1", "ur10"])
def test_generated_python_on_example_robot_data(name, tmp_path_factory):
    import pinocchio as pin
    path = erd_path(ERD_ARMS[name])
    _check_against_engine_and_pinocchio(path, generated_module(path, tmp_path_factory), pin.buildModelFromUrdf(str(path)))


def test_batches_equal_loops_and_broadcast(tmp_path_factory):
    module = generated_module(ROOT / "robots" / "stanford.yaml", tmp_path_factory)
    model = symdyn.load_robot(ROOT / "robots" / "stanford.yaml")
    rng = np.random.default_rng(5)
    q, qd, x = rng.normal(size=(3, 4, 3, 6))
    for fn in FUNCTIONS:
        args = _args(fn, q, qd, x, model)
        batch = getattr(module, fn.name)(*args)
        outputs = batch if isinstance(fn.shape, tuple) else (batch,)
        assert isinstance(batch, tuple) == (len(fn.shapes) > 1), fn.name
        for i in range(4):
            for j in range(3):
                single = getattr(module, fn.name)(*(a[i, j] for a in args))
                for out, one in zip(outputs, single if isinstance(fn.shape, tuple) else (single,)):
                    assert np.array_equal(out[i, j], one), fn.name
    # one configuration against many velocities broadcasts
    many = module.inverse_dynamics(q[0, 0], qd.reshape(-1, 6), x.reshape(-1, 6))
    assert many.shape == (12, 6)
    assert np.allclose(many[5], module.inverse_dynamics(q[0, 0], qd.reshape(-1, 6)[5], x.reshape(-1, 6)[5]), rtol=0, atol=0)
    with pytest.raises(ValueError):
        module.mass_matrix(np.zeros(5))


@pytest.mark.parametrize("path", [ROOT / "robots" / "panda.urdf", ROOT / "robots" / "stanford.yaml"], ids=lambda p: p.name)
def test_symbolic_parameters_equal_numeric(path, tmp_path_factory):
    """With the file's parameters filled in, both modes agree; with other parameters, the engine does too."""
    numeric = generated_module(path, tmp_path_factory)
    sym = generated_module(path, tmp_path_factory, params="symbolic")
    model = symdyn.load_robot(path)
    q, qd, x = random_states(model.dof, 10, seed=2)
    # other physical parameters: scale masses and inertias, shift nothing (stays physical); other
    # friction and armature (the layout of PARAMETERS: 10 per link, then Fv, Fc, Fo, Ia per joint)
    rng = np.random.default_rng(1)
    assert len(sym.DEFAULT_PARAMS) == 14 * model.dof
    other = sym.DEFAULT_PARAMS * np.concatenate([np.repeat(rng.uniform(0.5, 2.0, model.dof), 10),
                                                 np.ones(4 * model.dof)])
    other[10 * model.dof:] += rng.uniform(0.1, 1.0, 4 * model.dof)
    other_engine = symdyn.Engine(model, other)
    for fn in FUNCTIONS:
        args = _args(fn, q, qd, x, model)
        extra = (sym.DEFAULT_PARAMS,) if fn.parametric else ()
        assert relerr(getattr(sym, fn.name)(*args, *extra), getattr(numeric, fn.name)(*args)) < TOL, fn.name
        extra = (other,) if fn.parametric else ()
        assert relerr(getattr(sym, fn.name)(*args, *extra), getattr(other_engine, fn.name)(*args)) < TOL, fn.name


@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: p.name)
def test_identities_hold_for_generated_functions(path, tmp_path_factory):
    m = generated_module(path, tmp_path_factory)
    q, qd, tau = random_states(m.DOF, 10, seed=4)
    eye = np.broadcast_to(np.eye(m.DOF), (10, m.DOF, m.DOF))
    M = m.mass_matrix(q)
    assert relerr(M @ m.mass_matrix_inverse(q), eye) < 1e-9
    fac = m.innovations_factor(q)
    assert relerr(fac @ np.swapaxes(fac, -1, -2), M) < TOL
    assert relerr(m.innovations_factor_inverse(q) @ fac, eye) < 1e-9
    assert relerr(m.inverse_dynamics(q, qd, m.forward_dynamics(q, qd, tau)), tau) < 1e-9
    nu = m.total_rates(q, qd)
    assert relerr(m.joint_rates(q, nu), qd) < TOL
    C = m.coriolis_nu(q, nu)
    assert np.abs((nu * C).sum(-1)).max() < 1e-9 * max(1.0, np.abs(nu).max() * np.abs(C).max())
    assert relerr(m.applied_moments(q, m.working_moments(q, tau)), tau) < TOL
    assert relerr(np.einsum("...ij,...j->...i", m.coriolis_matrix(q, qd), qd),
                  m.nonlinear_effects(q, qd) - m.gravity(q) - m.friction(qd)) < TOL
    Y = m.regressor(q, qd, tau)
    assert relerr(np.einsum("...ij,j->...i", Y, m.PARAMETERS), m.inverse_dynamics(q, qd, tau)) < TOL
    assert relerr(np.einsum("...ij,j->...i", m.base_regressor(q, qd, tau), m.base_parameters(m.PARAMETERS)),
                  m.inverse_dynamics(q, qd, tau)) < TOL
    # the fused Algorithm 8.1 equals its four chained parts (friction an applied force); Saha's U D U^T is M
    rates, nu_dot = m.diagonalized_forward_dynamics(q, nu, tau)
    assert relerr(rates, qd) < TOL
    assert relerr(nu_dot, m.working_moments(q, tau - m.gravity(q) - m.friction(qd)) - C) < TOL
    D = m.articulated_inertia(q)
    U = m.udu_factor(q)
    assert relerr(U @ (D[..., :, None] * np.swapaxes(U, -1, -2)), M) < TOL
    # un-normalized form: eta . Cbar = nu . C + eta . D_dot eta / 2 = eta . D_dot eta / 2 (D_dot by differences)
    eta = nu / np.sqrt(D)
    Cbar = m.coriolis_eta(q, eta)
    Ddot = (m.articulated_inertia(q + 1e-6 * qd) - m.articulated_inertia(q - 1e-6 * qd)) / 2e-6
    assert relerr(Cbar, np.sqrt(D) * C + 0.5 * Ddot * eta) < 1e-6


def test_snap_right_angles_is_opt_in_and_small(tmp_path):
    """xarm7 writes pi/2 as 1.5708: snapping makes the rotations exact, the code smaller, the model
    differ by ~1e-5 relative, and the generated header says so; without the flag nothing changes."""
    from symdyn.codegen.generator import trace
    from symdyn.functions import BY_NAME
    from symdyn.multibody.model import snap_right_angles
    path = erd_path(ERD_ARMS["xarm7"])
    exact, snapped = symdyn.load_robot(path), symdyn.load_robot(path, snap_right_angles=True)
    assert exact.provenance.snapped == 0 and snapped.provenance.snapped > 0
    assert snap_right_angles(symdyn.load_robot(ROOT / "robots" / "panda.urdf")).provenance.snapped == 0   # already exact
    for j in snapped.joints:
        assert all(x in (0.0, 1.0, -1.0) for row in j.rotation for x in row)
    assert trace(snapped, BY_NAME["mass_matrix"]).ops["mul"] < 0.5 * trace(exact, BY_NAME["mass_matrix"]).ops["mul"]
    q, _, _ = random_states(exact.dof, 5)
    difference = relerr(symdyn.Engine(snapped).mass_matrix(q), symdyn.Engine(exact).mass_matrix(q))
    assert 1e-9 < difference < 1e-4
    files = render(snapped, ("python",))
    assert "snapped to exact right angles" in next(iter(files.values()))
    assert "snapped" not in next(iter(render(exact, ("python",)).values()))


def test_snap_turns_a_rounded_right_angle_composed_with_a_genuine_turn():
    """ANYmal C composes rpy 1.57079632679 with its hips' 30 degrees: snapping keeps the genuine turn, makes the
    right angle exact (one entry +-1, the rest of its row and column 0) and orthonormal, drops the offsets'
    4.9e-13 m of noise; exact rotations keep their bits; a small genuine angle is not snapped."""
    from symdyn.codegen.generator import trace
    from symdyn.functions import BY_NAME
    from symdyn.multibody.model import _right_angles, snap_right_angles
    exact = symdyn.load_robot(erd_path("anymal_c_simple_description/urdf/anymal.urdf"), floating_base=True)
    snapped = snap_right_angles(exact)
    assert snapped.provenance.snapped == 10
    for before, after in zip(exact.joints, snapped.joints):
        R, R0 = np.array(after.rotation), np.array(before.rotation)
        assert np.abs(R @ R.T - np.eye(3)).max() < 1e-15 and np.abs(R - R0).max() < 1e-11
        assert np.abs(np.array(after.offset) - np.array(before.offset)).max() < 1e-12
        if np.abs(R0 - R).max() > 0:
            (i, j), = zip(*np.nonzero(np.abs(R) == 1))
            assert np.count_nonzero(R[i]) == 1 and np.count_nonzero(R[:, j]) == 1
    hip = next(j for j in exact.joints if j.name == "LF_HAA")          # an exact turn of 150 degrees
    assert snapped.joints[exact.joints.index(hip)] is hip and _right_angles(hip.rotation, 1e-4) is None
    c, s_ = np.cos(0.005), np.sin(0.005)
    assert _right_angles(((c, 0.0, s_), (0.0, 1.0, 0.0), (-s_, 0.0, c)), 1e-4) is None
    mul = [trace(m, BY_NAME["mass_matrix"]).ops["mul"] for m in (exact, snapped)]
    assert mul[1] < 0.9 * mul[0], mul
    q = np.random.default_rng(3).normal(size=(4, exact.nq))
    q[:, 3:7] /= np.linalg.norm(q[:, 3:7], axis=1, keepdims=True)
    difference = relerr(symdyn.Engine(snapped).mass_matrix(q), symdyn.Engine(exact).mass_matrix(q))
    assert 0 < difference < 1e-10


def test_f_ext_only_with_its_variant(tmp_path):
    """--functions inverse_dynamics alone: no f_ext argument forwarding to a function not generated;
    with inverse_dynamics_fext beside it, f_ext= works and equals the variant."""
    import inspect
    model = symdyn.load_robot(ROOT / "robots" / "planar2.yaml")
    modules = []
    for k, names in enumerate((["inverse_dynamics"], ["inverse_dynamics", "inverse_dynamics_fext"])):
        folder = tmp_path / str(k)
        folder.mkdir()
        for name, text in render(model, ("python",), functions=names).items():
            (folder / name).write_text(text)
        modules.append(import_module_file(folder / f"{module_name(model.provenance.path)}.py", f"_fext_only_{k}"))
    assert "f_ext" not in inspect.signature(modules[0].inverse_dynamics).parameters
    q, qd, qdd = np.full(2, 0.3), np.full(2, 0.2), np.full(2, 0.1)
    f_ext = np.ones((len(modules[1].FRAMES), 6))
    assert np.allclose(modules[1].inverse_dynamics(q, qd, qdd, f_ext=f_ext),
                       modules[1].inverse_dynamics_fext(q, qd, qdd, f_ext))
    pushed = modules[1].inverse_dynamics(q, qd, qdd, f_ext=f_ext)
    assert not np.allclose(pushed, modules[0].inverse_dynamics(q, qd, qdd))
