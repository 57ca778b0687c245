"""Derivatives of the dynamics and the energies (symdyn/recursions/derivatives.py, forward mode on
symdyn/scalars/dual.py): against Pinocchio's computeRNEADerivatives / computeABADerivatives and energies, central finite
differences along the tangent space, identities, generated Python and C, and the O(N^2) growth."""
from functools import lru_cache

import numpy as np
import pytest

from conftest import ERD_TREES, ROOT, erd_path, relerr
from random_chain import chain_with, random_chain, random_tree, with_joint_dynamics
from symdyn.multibody import lie
from symdyn.compare import import_module_file, joint_dynamics_vectors, pinocchio_functions, pinocchio_model
from symdyn.readers.description import build_model
from symdyn.engine import Engine
from symdyn.functions import BY_NAME, OPTIONAL
from symdyn.generate import render
from symdyn.readers.load import load_robot
from symdyn.multibody.synthetic import random_description

pin = pytest.importorskip("pinocchio")

TOL = 1e-10          # against Pinocchio and between our implementations
FD_TOL = 1e-8        # against central finite differences


MODELS = {
    "panda": lambda: load_robot(ROOT / "robots" / "panda.urdf"),                  # URDF damping: viscous friction
    "solo12_floating": lambda: load_robot(erd_path(ERD_TREES["solo12"]), floating_base=True),
    "tree_friction_armature": lambda: with_joint_dynamics(random_tree(7, 4), 4, friction=True),
    "chain_RP_armature": lambda: with_joint_dynamics(random_chain(5, 2), 2, friction=False),
    "spherical_planar": lambda: chain_with({0: "planar", 3: "spherical"}, n=5, seed=6),
    # several rows below one-row joints: the outward form's rows stop above it, its own come inward
    "spherical_below_revolutes": lambda: chain_with({2: "spherical"}, n=5, seed=6),
    "ur5_floating": lambda: load_robot(ROOT / "robots" / "ur5.urdf", floating_base=True),
}


@lru_cache(maxsize=None)
def _model(name):
    return MODELS[name]()


def _states(model, count=3, seed=0):
    rng = np.random.default_rng(seed)
    q = lie.random_configuration(model, rng, count)
    return q, rng.normal(size=(count, model.nv)), rng.normal(size=(count, model.nv)) * 2


@pytest.mark.parametrize("name", sorted(MODELS))
def test_derivatives_equal_pinocchio(name):
    """symdyn.compare's oracle: computeRNEADerivatives, computeABADerivatives (with the viscous friction's
    terms, which Pinocchio's algorithms leave out), computeKineticEnergy (+ rotors), computePotentialEnergy."""
    model = _model(name)
    engine = Engine(model)
    offset = joint_dynamics_vectors(model)["friction_offset"]
    oracle = pinocchio_functions(pinocchio_model(model), offset=offset, smoothing=model.coulomb_smoothing)
    q, v, a = _states(model)
    tau = engine.inverse_dynamics(q, v, a) + 1.0
    args = {"inverse_dynamics_derivatives": (q, v, a), "forward_dynamics_derivatives": (q, v, tau),
            "kinetic_energy": (q, v), "potential_energy": (q,)}
    for fn, x in args.items():
        ours = getattr(engine, fn)(*x)
        for s in range(len(q)):
            theirs = oracle[fn](*(y[s] for y in x))
            for mine, ref in zip(ours if isinstance(ours, tuple) else (ours,), theirs if isinstance(theirs, tuple) else (theirs,)):
                assert relerr(mine[s], ref) < TOL, (name, fn)


def _numeric_chain(model, seed):
    from symdyn.multibody.chain import Chain
    from symdyn.scalars.scalar import NUMERIC
    rng = np.random.default_rng(seed)
    q = lie.random_configuration(model, rng, 1)[0]
    chain = Chain(NUMERIC, model)
    return NUMERIC, chain, chain.transforms(list(q)), rng


@pytest.mark.parametrize("name", sorted(MODELS) + ["gripper_mimic"])
@pytest.mark.parametrize("wrenches", [False, True])
@pytest.mark.parametrize("form", ["inward", "outward"])
def test_analytical_equals_forward_mode(name, wrenches, form):
    """rnea_derivatives.py (each of its FORMS, the generated code takes the cheaper) against the
    forward-mode duals through Newton-Euler, an independent derivation
    (derivatives.inverse_dynamics_derivatives_forward_mode), on the whole tree (a mimic joint's body
    too), with and without external wrenches (which do not turn with the links)."""
    from symdyn.recursions import derivatives
    model = load_robot(ROOT / "tests" / "data" / "mimic_gripper.urdf") if name == "gripper_mimic" else _model(name)
    ctx, chain, X, rng = _numeric_chain(model, 11)
    v, a = list(rng.normal(size=chain.nv)), list(rng.normal(size=chain.nv) * 2)
    f_ext = rng.normal(size=(len(model.kinematic_frames), 6)) * 5 if wrenches else None
    assert form in derivatives.FORMS
    ours = derivatives.inverse_dynamics_derivatives(ctx, chain, X, v, a, f_ext, form)
    ref = derivatives.inverse_dynamics_derivatives_forward_mode(ctx, chain, X, v, a, f_ext)
    for mine, theirs in zip(ours, ref):
        mine, theirs = np.array(mine, dtype=float), np.array(theirs, dtype=float)
        assert relerr(mine, theirs) < TOL and np.abs(theirs).max() > 1e-3, name


def test_analytical_form_is_cheaper_than_forward_mode():
    """The analytical recursions take about half the multiplications of the duals on the Panda (2034 against
    4039 when written), with the same result (test above)."""
    from symdyn.codegen.generator import trace
    from symdyn.functions import Function
    from symdyn.recursions import derivatives
    model = _model("panda")
    fn = BY_NAME["inverse_dynamics_derivatives"]
    dual = Function(fn.name, fn.args, fn.output, fn.shape, derivatives.inverse_dynamics_derivatives_forward_mode, "")
    ours, theirs = trace(model, fn).ops["mul"], trace(model, dual).ops["mul"]
    assert ours < 0.6 * theirs, (ours, theirs)


@pytest.mark.parametrize("name", ["panda", "solo12_floating", "ur5_floating", "tree_friction_armature"])
def test_the_generated_form_is_the_cheaper(name):
    """Both forms traced in full: the generated program has the fewer multiplications; where the generator
    does not trace "outward" (form_applies: no root joint of one column), it is the same program."""
    from symdyn.codegen.generator import trace
    from symdyn.recursions.derivatives import form_applies
    model = _model(name)
    fn = BY_NAME["inverse_dynamics_derivatives"]
    ops = {form: trace(model, fn.in_form(form)).ops for form in fn.forms}
    chosen = trace(model, fn)
    assert chosen.ops == ops[chosen.form] and chosen.ops["mul"] == min(o["mul"] for o in ops.values()), ops
    assert form_applies(model, "outward") == (name in ("panda", "tree_friction_armature"))
    if not form_applies(model, "outward"):
        assert ops["outward"] == ops["inward"], ops


def _central(f, x, directions, step, move):
    """Central differences of f along each direction, stacked on the last axis."""
    cols = [(f(move(x, step * d)) - f(move(x, -step * d))) / (2 * step) for d in directions]
    return np.stack(cols, axis=-1)


def _richardson(f, x, directions, move, step=1e-3):
    """Central differences with one Richardson step (error O(h^4)): 1e-12 truncation at h = 1e-3."""
    coarse, fine = (_central(f, x, directions, h, move) for h in (step, step / 2))
    return (4 * fine - coarse) / 3


@pytest.mark.parametrize("name", ["tree_friction_armature", "spherical_planar", "ur5_floating"])
def test_derivatives_equal_finite_differences(name):
    model = _model(name)
    engine = Engine(model)
    q, v, a = (x[0] for x in _states(model, 1, seed=5))
    eye = np.eye(model.nv)
    on_q = lambda x, d: lie.integrate(model, x, d)
    plus = lambda x, d: x + d
    dq, dv = engine.inverse_dynamics_derivatives(q, v, a)
    assert relerr(dq, _richardson(lambda x: engine.inverse_dynamics(x, v, a), q, eye, on_q)) < FD_TOL
    assert relerr(dv, _richardson(lambda x: engine.inverse_dynamics(q, x, a), v, eye, plus)) < FD_TOL
    tau = engine.inverse_dynamics(q, v, a)
    fq, fv, ft = engine.forward_dynamics_derivatives(q, v, tau)
    assert relerr(fq, _richardson(lambda x: engine.forward_dynamics(x, v, tau), q, eye, on_q)) < FD_TOL
    assert relerr(fv, _richardson(lambda x: engine.forward_dynamics(q, x, tau), v, eye, plus)) < FD_TOL
    assert relerr(ft, _richardson(lambda x: engine.forward_dynamics(q, v, x), tau, eye, plus)) < FD_TOL
    dM = engine.mass_matrix_derivative(q)
    assert relerr(dM, _richardson(engine.mass_matrix, q, eye, on_q)) < FD_TOL
    # along the motion: M_dot = d/dt M(integrate(q, t v)); the gravity is the gradient of the potential
    assert relerr(engine.mass_matrix_dot(q, v), _richardson(engine.mass_matrix, q, [v], on_q)[..., 0]) < FD_TOL
    assert relerr(engine.gravity(q), _richardson(engine.potential_energy, q, eye, on_q)) < FD_TOL


@pytest.mark.parametrize("name", ["panda", "tree_friction_armature", "spherical_planar"])
def test_derivative_identities(name):
    model = _model(name)
    e = Engine(model)
    q, v, a = _states(model, 4, seed=2)
    M, C = e.mass_matrix(q), e.coriolis_matrix(q, v)
    dM, Mdot = e.mass_matrix_derivative(q), e.mass_matrix_dot(q, v)
    assert relerr(Mdot, np.einsum("...ijk,...k->...ij", dM, v)) < TOL
    assert relerr(dM, np.swapaxes(dM, -2, -3)) < TOL                      # M symmetric
    skew = Mdot - 2 * C
    assert relerr(skew, -np.swapaxes(skew, -1, -2)) < TOL
    assert relerr(e.kinetic_energy(q, v), 0.5 * np.einsum("...i,...ij,...j->...", v, M, v)) < TOL
    tau = e.inverse_dynamics(q, v, a)
    dq, dv = e.inverse_dynamics_derivatives(q, v, a)
    fq, fv, Minv = e.forward_dynamics_derivatives(q, v, tau)
    assert relerr(Minv, e.mass_matrix_inverse(q)) < TOL
    assert relerr(M @ fq, -dq) < TOL and relerr(M @ fv, -dv) < TOL
    # dtau/dv = C + C^T - ... : without friction, dtau/dv at qdd is d(C v)/dv = C + (dC/dv) v
    assert dq.shape == dv.shape == fq.shape == (4, model.nv, model.nv) and dM.shape == (4,) + (model.nv,) * 3


@pytest.mark.parametrize("name", ["ur5_floating", "solo12_floating"])
@pytest.mark.parametrize("wrenches", [False, True])
def test_free_flyer_columns_in_closed_form(name, wrenches):
    """The free-flyer's columns that forward_dynamics_derivatives writes without M^-1 (base rotation:
    gravity turning, -[a]x; linear velocity: Galilean invariance, -[w]x; derivatives._free_flyer_columns)
    equal -M^-1 dtau/dx of the general formula; they are non-zero on the three linear rows only."""
    model = _model(name)
    e = Engine(model)
    q, v, tau = _states(model, 3, seed=5)
    extra = {"f_ext": np.random.default_rng(6).normal(size=(3, len(e.FRAMES), 6)) * 5} if wrenches else {}
    fq, fv, Minv = e.forward_dynamics_derivatives(q, v, tau, **extra)
    dq, dv = e.inverse_dynamics_derivatives(q, v, e.forward_dynamics(q, v, tau, **extra), **extra)
    assert relerr(fq, -Minv @ dq) < TOL and relerr(fv, -Minv @ dv) < TOL
    assert np.all(fv[:, 3:, :3] == 0) and np.abs(fv[:, :3, :3]).min(axis=0).sum() > 0
    if not wrenches:
        assert np.all(fq[:, 3:, 3:6] == 0) and np.abs(fq[:, :3, 3:6]).min(axis=0).sum() > 0


@pytest.mark.parametrize("name", ["solo12_floating", "tree_friction_armature", "panda"])
def test_forward_dynamics_derivatives_solve_through_the_factors(name, monkeypatch):
    """derivatives._times takes, column by column, -M^-1 b as the product with M^-1 or as the solve
    through its factors R* D^-1 R (_FactorSolve), whichever has fewer products on the exact zeros: each
    way alone gives the same matrices; on floating trees the solve makes the generated function cheaper
    (solo12: 11755 -> 10783 multiplications when written)."""
    from symdyn.recursions import derivatives
    model = _model(name)
    ctx, chain, X, rng = _numeric_chain(model, 4)
    v, tau = list(rng.normal(size=chain.nv)), list(rng.normal(size=chain.nv))
    results = []
    for forced in (0, 10 ** 9):
        monkeypatch.setattr(derivatives._FactorSolve, "cost", staticmethod(lambda plan, c=forced: c))
        matrices = derivatives.forward_dynamics_derivatives(ctx, chain, X, v, tau)
        results.append([np.array(m, dtype=float) for m in matrices])
    for solved, multiplied in zip(*results):
        assert relerr(solved, multiplied) < TOL and np.abs(multiplied).max() > 1e-3, name
    if name == "solo12_floating":
        from symdyn.codegen.generator import trace
        fn = BY_NAME["forward_dynamics_derivatives"]
        product_only = trace(model, fn).ops["mul"]          # cost still forced to 10**9
        monkeypatch.undo()
        assert trace(model, fn).ops["mul"] < 0.95 * product_only


@pytest.mark.parametrize("name", ["panda", "tree_friction_armature", "spherical_below_revolutes"])
def test_forward_dynamics_derivatives_forms_agree(name):
    """Each of derivatives.FD_FORMS ("outward_factors": M^-1's factor rows of the top region walked
    outward too) gives the same matrices; the generated program is the cheapest of those traced."""
    from symdyn.codegen.generator import trace
    from symdyn.recursions import derivatives
    model = _model(name)
    ctx, chain, X, rng = _numeric_chain(model, 5)
    v, tau = list(rng.normal(size=chain.nv)), list(rng.normal(size=chain.nv))
    first, *others = [[np.array(m, dtype=float) for m in derivatives.forward_dynamics_derivatives(
        ctx, chain, X, v, tau, form=form)] for form in derivatives.FD_FORMS]
    for matrices in others:
        assert all(relerr(mine, ref) < TOL for mine, ref in zip(matrices, first)), name
    fn = BY_NAME["forward_dynamics_derivatives"]
    assert derivatives.fd_form_applies(model, "outward_factors")
    ops = {form: trace(model, fn.in_form(form)).ops["mul"] for form in fn.forms}
    assert trace(model, fn).ops["mul"] == min(ops.values()), ops


@pytest.mark.parametrize("name", ["panda", "solo12_floating"])
def test_external_wrench_derivatives(name):
    """f_ext held fixed in world axes at the frames: finite differences of inverse_dynamics_fext and
    forward_dynamics_fext (themselves checked against Pinocchio in test_kinematics)."""
    model = _model(name)
    e = Engine(model)
    q, v, a = (x[0] for x in _states(model, 1, seed=7))
    f_ext = np.random.default_rng(3).normal(size=(len(e.FRAMES), 6)) * 5
    eye = np.eye(model.nv)
    on_q = lambda x, d: lie.integrate(model, x, d)
    dq, dv = e.inverse_dynamics_derivatives(q, v, a, f_ext=f_ext)
    assert relerr(dq, _richardson(lambda x: e.inverse_dynamics(x, v, a, f_ext=f_ext), q, eye, on_q)) < FD_TOL
    assert relerr(dv, _richardson(lambda x: e.inverse_dynamics(q, x, a, f_ext=f_ext), v, eye, lambda x, d: x + d)) < FD_TOL
    assert relerr(dq, e.inverse_dynamics_derivatives(q, v, a)[0]) > 1e-6       # the wrenches do matter
    tau = e.inverse_dynamics(q, v, a)
    fq, fv, _ = e.forward_dynamics_derivatives(q, v, tau, f_ext=f_ext)
    assert relerr(fq, _richardson(lambda x: e.forward_dynamics(x, v, tau, f_ext=f_ext), q, eye, on_q)) < FD_TOL
    assert relerr(fv, _richardson(lambda x: e.forward_dynamics(q, x, tau, f_ext=f_ext), v, eye, lambda x, d: x + d)) < FD_TOL


NAMES = [fn.name for fn in OPTIONAL]


def _args(fn, q, v, a, nf):
    f_ext = np.random.default_rng(4).normal(size=q.shape[:-1] + (nf, 6))
    given = {"q": q, "qd": v, "qdd": a, "tau": a, "f_ext": f_ext}
    return [given[x] for x in fn.args]


def _equal_engine(module, model, params=()):
    e = Engine(model)
    q, v, a = _states(model, 3, seed=1)
    for name in NAMES:
        fn = BY_NAME[name]
        args = _args(fn, q, v, a, len(e.FRAMES))
        ours, ref = getattr(module, name)(*args, *params), getattr(e, name)(*args)
        assert isinstance(ours, tuple) == isinstance(ref, tuple), name
        for x, y in zip(ours if isinstance(ours, tuple) else (ours,), ref if isinstance(ref, tuple) else (ref,)):
            assert x.shape == y.shape and relerr(x, y) < TOL, name


def _write(model, tmp_path, languages, params="numeric"):
    files = render(model, languages, params, functions=NAMES)
    for file, text in files.items():
        (tmp_path / file).write_text(text)
    return files


@pytest.mark.parametrize("name", ["panda", "spherical_planar", "floating_small"])
def test_generated_python_equals_engine(name, tmp_path):
    model = _floating_small() if name == "floating_small" else _model(name)
    files = _write(model, tmp_path, ("python",))
    module = import_module_file(tmp_path / next(f for f in files if f.endswith(".py")))
    _equal_engine(module, model)
    # single states, and the shapes of the energies
    q, v, _ = _states(model, 1)
    assert np.shape(module.kinetic_energy(q[0], v[0])) == () and module.mass_matrix_derivative(q[0]).shape == (model.nv,) * 3


def test_generation_is_deterministic():
    """The dual tangents live in dicts: their order (insertion) must not depend on hashing."""
    model = _model("spherical_planar")
    assert render(model, ("python",), "numeric", functions=NAMES) == \
        render(chain_with({0: "planar", 3: "spherical"}, n=5, seed=6), ("python",), "numeric", functions=NAMES)


def test_generated_python_symbolic_parameters(tmp_path):
    model = _model("chain_RP_armature")
    files = _write(model, tmp_path, ("python",), "symbolic")
    module = import_module_file(tmp_path / next(f for f in files if f.endswith(".py")))
    _equal_engine(module, model, (module.DEFAULT_PARAMS,))


def test_generated_c_equals_engine(tmp_path, monkeypatch):
    """Every function compiled (tuples of matrices, (nv, nv, nv), scalars), batched states; a small robot
    (the floating-base C of the same templates costs a minute of gcc on a loaded machine: the Python
    test above runs it, the benchmarks the C)."""
    import symdyn
    monkeypatch.setenv("SYMDYN_CACHE", str(tmp_path / "cache"))
    model = load_robot(ROOT / "robots" / "planar2.yaml")
    files = _write(model, tmp_path, ("c",))
    module = symdyn.load_c(tmp_path / next(f for f in files if f.endswith(".c")))
    _equal_engine(module, model)


def _floating_small():
    """A free-flyer carrying a prismatic and a revolute joint (nv = 8)."""
    d = random_description(3, 12)
    d["joints"][0]["type"] = "floating"
    return build_model(d, "<floating chain>")


def test_inverse_dynamics_derivative_operations_grow_quadratically():
    """Forward mode: O(N) per direction, 2N directions: O(N^2) operations for (dtau/dq, dtau/dv)."""
    from symdyn.codegen.generator import trace
    ops = {}
    for n in (6, 12, 24):
        program = trace(random_chain(n, 1), BY_NAME["inverse_dynamics_derivatives"])
        ops[n] = sum(program.ops.values())
    assert ops[24] / ops[12] < 4.4 and ops[12] / ops[6] < 4.4, ops


def test_ilqr_example_swings_up_with_the_generated_derivatives():
    """examples/ilqr.py: the double pendulum reaches upright; with the same iterations as central finite
    differences (their Jacobians agree to ~1e-9), the linearization costs less CPU time."""
    import sys
    sys.path.insert(0, str(ROOT / "examples"))
    import ilqr
    robot = ilqr.generated_module(ROOT / "robots" / "planar2.yaml")
    r = ilqr.run(robot, horizon=1.5, dt=0.01)
    exact, fd = r["exact"], r["fd"]
    assert exact["converged"] and fd["converged"]
    assert exact["costs"][-1] < 1e-4 * exact["costs"][0] and exact["final_error"] < 1e-2
    assert np.all(np.diff(exact["costs"]) < 0)
    assert r["jacobian_difference"] < 1e-6
    assert exact["iterations"] <= fd["iterations"]
    assert exact["linearize_time"] < fd["linearize_time"], (exact["linearize_time"], fd["linearize_time"])


def test_symdyn_compare_has_the_derivatives_pinocchio_column(tmp_path):
    """`symdyn compare --functions ...`: the Pinocchio column of the derivatives (tuples stacked per output)."""
    from symdyn.compare import compare
    model = _model("tree_friction_armature")
    names = ["inverse_dynamics_derivatives", "forward_dynamics_derivatives", "kinetic_energy", "potential_energy"]
    report = compare(model, states=3, workdir=tmp_path, with_c=False, functions=names)
    for name in names:
        assert report[name]["pinocchio"] < TOL and report[name]["python"] < TOL, (name, report[name])
