"""Multi-DoF joints (free-flyer, spherical, planar) and floating bases: engine, generated Python and C
(numeric and symbolic parameters) against Pinocchio, plus the identities."""
import json
import subprocess
import sys

import numpy as np
import pytest

from conftest import ROOT, erd_path, function_args, relerr
from random_chain import chain_with, random_description
from symdyn.multibody import lie
from symdyn.compare import import_module_file, pinocchio_functions, pinocchio_model
from symdyn.engine import Engine
from symdyn.functions import FUNCTIONS
from symdyn.generate import module_name, render
from symdyn.readers.load import load_robot

pin = pytest.importorskip("pinocchio")
PINOCCHIO = ("inverse_dynamics", "mass_matrix", "mass_matrix_inverse", "forward_dynamics", "gravity",
             "coriolis_matrix", "nonlinear_effects", "regressor")


MODELS = {
    "panda_floating": lambda: load_robot(ROOT / "robots" / "panda.urdf", floating_base=True),
    "ur5_floating": lambda: load_robot(ROOT / "robots" / "ur5.urdf", floating_base=True),
    "spherical_inner": lambda: chain_with({1: "spherical"}),
    "spherical_leaf": lambda: chain_with({4: "spherical"}),
    "planar_root": lambda: chain_with({0: "planar"}),
    "planar_inner": lambda: chain_with({2: "planar"}),
    "two_spherical": lambda: chain_with({0: "spherical", 3: "spherical"}, n=6, seed=8),
}


def _states(model, count=4, seed=0):
    rng = np.random.default_rng(seed)
    q = lie.random_configuration(model, rng, count)
    return q, rng.normal(size=(count, model.nv)), rng.normal(size=(count, model.nv)) * 2


def _against_pinocchio(model, module, count=4):
    pm = pinocchio_model(model)
    ref = pinocchio_functions(pm)
    q, v, a = _states(model, count)
    for name in PINOCCHIO:
        fn = next(f for f in FUNCTIONS if f.name == name)
        args = [q, v, a][:len(fn.args)]
        ours = getattr(module, name)(*args)
        theirs = np.stack([ref[name](*(x[s] for x in args)) for s in range(count)])
        assert relerr(ours, theirs) < 1e-9, (model.name, name)
    q1 = lie.random_configuration(model, np.random.default_rng(9), count)
    for s in range(count):
        assert relerr(module.integrate(q[s], v[s], 0.4), pin.integrate(pm, q[s], 0.4 * v[s])) < 1e-12
        assert relerr(module.difference(q[s], q1[s]), pin.difference(pm, q[s], q1[s])) < 1e-10
    assert np.array_equal(module.neutral(), pin.neutral(pm))


@pytest.mark.parametrize("name", sorted(MODELS))
def test_engine_against_pinocchio(name):
    _against_pinocchio(MODELS[name](), Engine(MODELS[name]()))


@pytest.mark.parametrize("name", sorted(MODELS))
def test_identities(name):
    model = MODELS[name]()
    e = Engine(model)
    q, v, a = _states(model)
    eye = np.broadcast_to(np.eye(model.nv), (len(q), model.nv, model.nv))
    M, Minv = e.mass_matrix(q), e.mass_matrix_inverse(q)
    assert relerr(M @ Minv, eye) < 1e-9
    m, ell = e.innovations_factor(q), e.innovations_factor_inverse(q)
    assert relerr(m @ np.swapaxes(m, -1, -2), M) < 1e-12
    assert np.all(np.tril(m, -1) == 0) and np.all(np.diagonal(m, axis1=-2, axis2=-1) > 0)
    assert relerr(np.linalg.cholesky(M[..., ::-1, ::-1])[..., ::-1, ::-1], m) < 1e-9    # reversed Cholesky
    assert relerr(m @ ell, eye) < 1e-10
    d = e.articulated_inertia(q)
    U = m / np.sqrt(d)[..., None, :]
    assert np.allclose(np.diagonal(U, axis1=-2, axis2=-1), 1) and relerr(U @ (d[..., :, None] * np.swapaxes(U, -1, -2)), M) < 1e-12
    tau = e.inverse_dynamics(q, v, a)
    assert relerr(e.forward_dynamics(q, v, tau), a) < 1e-9                            # ABA o RNEA = id
    nu = e.total_rates(q, v)
    assert relerr(e.joint_rates(q, nu), v) < 1e-10
    assert relerr(e.applied_moments(q, e.working_moments(q, tau)), tau) < 1e-10
    # M_dot - 2C skew, M_dot by central differences along integrate
    h = 1e-6
    qp = e.integrate(q, v, h)
    qm = e.integrate(q, v, -h)
    Mdot = (e.mass_matrix(qp) - e.mass_matrix(qm)) / (2 * h)
    C = e.coriolis_matrix(q, v)
    S = Mdot - 2 * C
    assert np.abs(S + np.swapaxes(S, -1, -2)).max() < 1e-6 * np.abs(Mdot).max()
    assert relerr(np.einsum("...ij,...j->...i", C, v) + e.gravity(q) + e.friction(v), e.nonlinear_effects(q, v)) < 1e-12
    U = e.udu_factor(q)
    assert np.allclose(np.diagonal(U, axis1=-2, axis2=-1), 1) and np.all(np.tril(U, -1) == 0)
    assert relerr(U @ (d[..., :, None] * np.swapaxes(U, -1, -2)), M) < 1e-12
    # diagonalized forward dynamics: (qd, nu_dot), nu_dot = d/dt (m* qd) along the motion of aba
    qd, nu_dot = e.diagonalized_forward_dynamics(q, nu, tau)
    assert relerr(qd, v) < 1e-10
    h = 1e-6
    nu_p = e.total_rates(e.integrate(q, v, h), v + h * a)
    nu_m = e.total_rates(e.integrate(q, v, -h), v - h * a)
    assert relerr(nu_dot, (nu_p - nu_m) / (2 * h)) < 1e-7
    # integrate and difference are inverse; difference(q, integrate(q, v)) = v
    assert relerr(e.difference(q, e.integrate(q, v, 0.3)), 0.3 * v) < 1e-10


@pytest.mark.parametrize("name", sorted(MODELS))
def test_coriolis_nu_against_its_definition(name):
    """C(theta, nu) = l C(q, qd) qd - m_dot* qd, nu . C = 0; m_dot by central differences along integrate."""
    model = MODELS[name]()
    e = Engine(model)
    q, v, _ = _states(model)
    nu = e.total_rates(q, v)
    C = e.coriolis_nu(q, nu)
    h = 1e-6
    mdot = (e.innovations_factor(e.integrate(q, v, h)) - e.innovations_factor(e.integrate(q, v, -h))) / (2 * h)
    cq = e.nonlinear_effects(q, v) - e.gravity(q) - e.friction(v)
    ref = np.einsum("...ij,...j->...i", e.innovations_factor_inverse(q), cq) - np.einsum("...ji,...j->...i", mdot, v)
    assert relerr(C, ref) < 1e-7
    assert np.abs(np.sum(nu * C, axis=-1)).max() < 1e-10 * np.abs(C).max()


@pytest.mark.parametrize("name", ["spherical_inner", "planar_inner", "two_spherical", "panda_floating"])
def test_articulated_inertia_rate(name):
    """Lambda_dot - X - X* is the rate of P(k) in frame k (finite differences along integrate)."""
    from symdyn.recursions import coriolis_nu as cn
    from symdyn.recursions.riccati import Riccati
    from symdyn.scalars.scalar import NUMERIC
    model = MODELS[name]()
    e = Engine(model)
    q, v, _ = (x[0] for x in _states(model, count=1, seed=3))
    ric = lambda qq: Riccati(NUMERIC, e.chain, e.chain.transforms(list(qq)))
    h = 1e-6
    plus, minus = ric(e.integrate(q, v, h)), ric(e.integrate(q, v, -h))
    here = ric(q)
    _, Pdot, _ = cn._cbar_by_definition(NUMERIC, e.chain, e.chain.transforms(list(q)), here, list(v))
    for k in range(e.chain.n):
        fd = (np.array(plus.P[k], float) - np.array(minus.P[k], float)) / (2 * h)
        assert np.abs(fd - np.array(Pdot[k], float)).max() <= 1e-6 * max(1.0, np.abs(fd).max()), k


@pytest.mark.parametrize("params_mode", ["numeric", "symbolic"])
@pytest.mark.parametrize("name", ["panda_floating", "two_spherical", "planar_inner"])
def test_generated_python_and_c(name, params_mode, tmp_path):
    from symdyn.codegen.c.loader import load_c
    model = MODELS[name]()
    for fname, text in render(model, ("python", "c"), params_mode).items():
        (tmp_path / fname).write_text(text)
    mod = module_name(model.provenance.path, params_mode)
    py = import_module_file(tmp_path / f"{mod}.py", f"_multidof_{name}_{params_mode}")
    c = load_c(tmp_path / f"{mod}.c")
    assert (py.NQ, py.NV, py.DOF, c.NQ, c.NV) == (model.nq, model.nv, model.nv, model.nq, model.nv)
    e = Engine(model)
    q, v, a = _states(model, seed=4)
    extra = (np.array(model.parameters),) if params_mode == "symbolic" else ()
    params = np.array(model.parameters) * np.random.default_rng(2).uniform(0.5, 2.0, (len(q), len(model.parameters)))
    for fn in FUNCTIONS:
        args = function_args(fn, q, v, a, len(e.FRAMES), params)
        ref = getattr(e, fn.name)(*args)
        for m in (py, c):
            more = extra if fn.parametric else ()
            assert relerr(getattr(m, fn.name)(*args, *more), ref) < 1e-10, (fn.name, m)
    if params_mode == "numeric":
        for m in (py, c):
            _against_pinocchio(model, _Bound(m, extra))


class _Bound:
    def __init__(self, module, extra):
        self.module, self.extra = module, extra

    def __getattr__(self, name):
        fn = getattr(self.module, name)
        return fn if name in ("integrate", "difference", "neutral") else (lambda *a: fn(*a, *self.extra))


def test_floating_panda_matches_pinocchio_urdf_parser():
    """The oracle built by Pinocchio's own parser with a JointModelFreeFlyer root."""
    path = ROOT / "robots" / "panda.urdf"
    pm = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
    model = load_robot(path, floating_base=True)
    assert (pm.nq, pm.nv) == (model.nq, model.nv) and pm.names[1] == "root_joint" == model.joint_names[0]
    e, data = Engine(model), pm.createData()
    q, v, a = _states(model, seed=2)
    for s in range(len(q)):
        friction = pm.damping * v[s] + pm.friction * np.sign(v[s])    # the URDF's <dynamics>, which rnea ignores
        assert relerr(e.inverse_dynamics(q[s], v[s], a[s]), pin.rnea(pm, data, q[s], v[s], a[s]) + friction) < 1e-9
        assert relerr(e.mass_matrix(q[s]), np.triu(pin.crba(pm, data, q[s])) + np.triu(pin.crba(pm, data, q[s]), 1).T) < 1e-9
        assert relerr(e.forward_dynamics(q[s], v[s], a[s]), pin.aba(pm, data, q[s], v[s], a[s] - friction)) < 1e-9


def test_urdf_floating_joint_and_cli(tmp_path):
    """A URDF floating joint to the world is a free-flyer; --floating-base does the same from the CLI."""
    text = (ROOT / "robots" / "panda.urdf").read_text()
    first = text.index("<link")
    text = text[:first] + ('<link name="world"/><joint name="root_joint" type="floating"><parent link="world"/>'
                           '<child link="panda_link0"/></joint>') + text[first:]
    path = tmp_path / "panda_free.urdf"
    path.write_text(text)
    a, b = load_robot(path), load_robot(ROOT / "robots" / "panda.urdf", floating_base=True)
    assert a.joints == b.joints and a.bodies == b.bodies
    run = [sys.executable, "-c", "from symdyn.cli import main; main()"]
    out = subprocess.run(run + ["generate", "--floating-base", "--lang", "python,c", "--out", str(tmp_path / "g"),
                                str(ROOT / "robots" / "panda.urdf")], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert "#define PANDA_NQ 14" in (tmp_path / "g" / "panda.h").read_text()
    out = subprocess.run(run + ["generate", "--floating-base", str(path), "--out", str(tmp_path / "h")],
                         capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 2 and "floating" in out.stderr and "Traceback" not in out.stderr


@pytest.mark.parametrize("robot", ["solo12", "panda_fingers"])
def test_floating_trees_against_pinocchio_urdf_parser(robot, tmp_path):
    """example-robot-data trees with a free-flyer root: engine, generated Python and C, and
    Pinocchio's own parser (buildModelFromUrdf(path, JointModelFreeFlyer())), every function."""
    from conftest import ERD_TREES
    from symdyn.compare import compare
    path = erd_path(ERD_TREES[robot])
    model = load_robot(path, floating_base=True, mimic="independent")   # the whole tree, as Pinocchio's default
    pm = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
    assert (model.nq, model.nv) == (pm.nq, pm.nv) and model.joint_names == tuple(pm.names)[1:]
    notes = []
    report = compare(model, states=6, workdir=tmp_path, notes=notes)
    assert notes == ["pinocchio column: Pinocchio's own URDF parser"]
    assert {"integrate", "difference", "neutral", "coriolis_nu"} <= set(report)
    for name, row in report.items():
        assert set(row) >= {"python", "c"}, name
        for column, err in row.items():
            assert err < 1e-9, (robot, name, column, err)


def test_yaml_spherical_joint_and_base_link(tmp_path):
    """A YAML robot with a ball joint and a floating base whose own inertia is given by base_link."""
    import yaml
    d = random_description(3, 11)
    d["joints"][1]["type"] = "spherical"
    d["joints"][1].pop("axis")
    d["base_link"] = {"mass": 4.0, "com": [0.1, 0, 0], "inertia": {"ixx": 0.2, "iyy": 0.3, "izz": 0.4}}
    path = tmp_path / "ball.yaml"
    path.write_text(yaml.safe_dump(json.loads(json.dumps(d, default=float))))
    model = load_robot(path, floating_base=True)
    assert [j.type for j in model.joints] == ["floating", d["joints"][0]["type"], "spherical", d["joints"][2]["type"]]
    assert (model.nq, model.nv) == (7 + 1 + 4 + 1, 6 + 1 + 3 + 1) and model.bodies[0].mass == 4.0
    _against_pinocchio(model, Engine(model))
    fixed = load_robot(path)
    assert fixed.nq == 6 and fixed.nv == 5 and fixed.bodies[0].name == "l0"


def test_lock_refuses_multi_dof_joints(tmp_path):
    import yaml
    from symdyn.errors import RobotFileError
    from symdyn.readers.selection import Selection
    d = random_description(3, 11)
    d["joints"][1]["type"] = "spherical"
    path = tmp_path / "ball.yaml"
    path.write_text(yaml.safe_dump(json.loads(json.dumps(d, default=float))))
    with pytest.raises(RobotFileError, match="one degree of freedom"):
        load_robot(path, selection=Selection(lock={"j1": 0.0}))


@pytest.mark.parametrize("name", ["urdf_floating_joint.urdf", "yaml_floating_joint.yaml", "yaml_planar_joint.yaml"])
def test_multi_dof_files(name):
    """Files that symdyn used to refuse (floating and planar joints) load and agree with Pinocchio;
    the URDF one also with Pinocchio's own parser."""
    path = ROOT / "tests" / "data" / name
    model = load_robot(path)
    assert any(j.kind.nv > 1 for j in model.joints)
    _against_pinocchio(model, Engine(model))
    if name.endswith(".urdf"):
        pm = pin.buildModelFromUrdf(str(path))
        assert (pm.nq, pm.nv) == (model.nq, model.nv)
        e, data = Engine(model), pm.createData()
        q, v, a = _states(model, seed=7)
        for s in range(len(q)):
            assert relerr(e.inverse_dynamics(q[s], v[s], a[s]), pin.rnea(pm, data, q[s], v[s], a[s])) < 1e-9


@pytest.mark.parametrize("n", [2, 3, 6])
def test_block_factor_and_inverse(n):
    """riccati.Block (a multi-DoF joint's D = U diag(d) U^T; the free-flyer's 6x6): U diag(d) U^T = D,
    inverse() and solve() equal numpy's, and on the tape the 6x6 factor and inverse take one product per
    term (the numerators U d kept; D^-1 = V^T diag(1/d) V, V = U^-1): 50 + 70 multiplications (209 when
    each term was a triple product and D^-1 came from six solves)."""
    import symengine as se
    from symdyn.codegen.printer import count_ops
    from symdyn.codegen.tape import Tape
    from symdyn.recursions.riccati import Block
    from symdyn.scalars.scalar import NUMERIC
    rng = np.random.default_rng(n)
    A = rng.normal(size=(n, n))
    D = A @ A.T + n * np.eye(n)
    block = Block(NUMERIC, [list(row) for row in D])
    U, d = np.array(block.U, dtype=float), np.array(block.d, dtype=float)
    assert np.allclose(np.triu(U), U) and np.allclose(np.diag(U), 1)
    assert relerr(U @ np.diag(d) @ U.T, D) < 1e-12
    assert relerr(np.array(block.inverse(), dtype=float), np.linalg.inv(D)) < 1e-12
    e = rng.normal(size=n)
    assert relerr(np.array(block.solve(list(e)), dtype=float), np.linalg.solve(D, e)) < 1e-12
    if n == 6:
        tape = Tape()
        sym = [[se.Symbol(f"D{min(i, j)}{max(i, j)}") for j in range(n)] for i in range(n)]
        inverse = Block(tape, sym).inverse()
        ops = count_ops([x for _, x in tape.assignments] + [x for row in inverse for x in row if not x.is_Atom])
        assert ops["mul"] <= 120 and ops["div"] == 6, ops
