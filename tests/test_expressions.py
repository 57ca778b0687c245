"""symdyn.expressions (sympy closed forms of small robots) and `symdyn latex`: equal to the engine."""
import time

import numpy as np
import pytest
import yaml
from click.testing import CliRunner

import symdyn
from conftest import ROOT, function_args, random_states, relerr
from symdyn.cli import main
from symdyn.expressions import ExpressionTooLarge, expanded_sizes
from symdyn.functions import FUNCTIONS

sympy = pytest.importorskip("sympy")


def _truncated(tmp_path, source, count, name):
    """The first `count` joints of a bundled robot as a new robot file."""
    data = yaml.safe_load((ROOT / "robots" / source).read_text())
    data["name"] = name
    if "dh" in data:
        data["dh"]["joints"] = data["dh"]["joints"][:count]
    else:
        data["links"], data["joints"] = data["links"][:count], data["joints"][:count]
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.fixture
def planar2():
    return ROOT / "robots" / "planar2.yaml"


@pytest.fixture
def stanford3(tmp_path):
    """Revolute, revolute, prismatic, not planar: every term of the spatial recursions."""
    return _truncated(tmp_path, "stanford.yaml", 3, "stanford3")


def _evaluate(matrix, fn, args, params=None):
    """The sympy expressions at each state (lambdify of all the function's input symbols)."""
    symbols = [sympy.Symbol(f"{'p' if a == 'params' else a}{i}") for a, x in zip(fn.args, args) for i in range(x[0].size)]
    if params is not None:
        symbols += [sympy.Symbol(f"p{i}") for i in range(len(params))]
    f = sympy.lambdify(symbols, matrix, "numpy")
    out = []
    for s in range(len(args[0])):
        values = [x for a in args for x in np.ravel(a[s])] + (list(params) if params is not None else [])
        out.append(np.array(f(*values), dtype=float))
    return np.array(out)


@pytest.mark.parametrize("robot", ["planar2", "stanford3"])
def test_expressions_equal_the_engine(robot, request):
    path = request.getfixturevalue(robot)
    model = symdyn.load_robot(path)
    engine = symdyn.Engine(model)
    q, qd, x = random_states(model.dof, 6, seed=4)
    checked = 0
    params = np.array(model.parameters) * np.random.default_rng(3).uniform(0.5, 2.0, (len(q), len(model.parameters)))
    for fn in FUNCTIONS:
        args = function_args(fn, q, qd, x, len(engine.FRAMES), params)
        try:
            matrix = symdyn.expressions(path, fn.name)
        except ExpressionTooLarge:
            assert robot == "stanford3", fn.name          # every function of the 2-link arm is small enough
            continue
        several = isinstance(fn.shape, tuple)
        matrices = matrix if several else (matrix,)
        references = getattr(engine, fn.name)(*args)
        names = {f"{'p' if a == 'params' else a}{i}" for a, v in zip(fn.args, args) for i in range(v[0].size)}
        for matrix, reference in zip(matrices, references if several else (references,)):
            *rows, cols = reference.shape[1:]
            assert matrix.shape == ((reference[0].size // cols, cols) if rows else (cols, 1))
            assert {str(s) for s in matrix.free_symbols} <= names
            ours = _evaluate(matrix, fn, args).reshape(reference.shape)
            assert relerr(ours, reference) < 1e-10, fn.name
        checked += 1
    assert checked >= (len(FUNCTIONS) if robot == "planar2" else 10)


def test_symbolic_parameter_expressions_equal_the_engine_with_other_parameters(stanford3):
    model = symdyn.load_robot(stanford3)
    params = np.array(model.parameters) * np.concatenate([np.repeat([0.7, 1.3, 2.0], 10), np.ones(12)])
    params[30:] += np.random.default_rng(2).uniform(0.1, 1.0, 12)      # friction and armature
    engine = symdyn.Engine(model, params)
    q, qd, x = random_states(3, 5, seed=9)
    for name in ("inverse_dynamics", "mass_matrix", "gravity"):
        fn = next(f for f in FUNCTIONS if f.name == name)
        matrix = symdyn.expressions(model, name, params="symbolic")
        args = (q, qd, x)[:len(fn.args)]
        reference = getattr(engine, name)(*args)
        assert relerr(_evaluate(matrix, fn, args, params).reshape(reference.shape), reference) < 1e-10, name


def test_planar2_mass_matrix_is_the_textbook_one(planar2):
    """M of two uniform rods (robots/planar2.yaml's header), by hand, against the closed form."""
    m1, m2, l1, lc1, lc2 = 2.0, 1.0, 0.5, 0.25, 0.2
    I1, I2 = m1 * 0.5 ** 2 / 12, m2 * 0.4 ** 2 / 12
    q1 = sympy.Symbol("q1")
    textbook = sympy.Matrix([[m1 * lc1 ** 2 + I1 + m2 * (l1 ** 2 + lc2 ** 2 + 2 * l1 * lc2 * sympy.cos(q1)) + I2,
                              m2 * (lc2 ** 2 + l1 * lc2 * sympy.cos(q1)) + I2],
                             [m2 * (lc2 ** 2 + l1 * lc2 * sympy.cos(q1)) + I2, m2 * lc2 ** 2 + I2]])
    difference = sympy.expand(symdyn.expressions(planar2, "mass_matrix") - textbook)
    assert all(abs(c) < 1e-15 for entry in difference for c in sympy.Poly(entry, sympy.cos(q1)).coeffs()), difference


def test_simplify_keeps_the_values(planar2):
    model = symdyn.load_robot(planar2)
    fn = next(f for f in FUNCTIONS if f.name == "inverse_dynamics")
    q, qd, x = random_states(2, 4, seed=1)
    plain, simple = (symdyn.expressions(planar2, fn.name, simplify=s) for s in (False, True))
    reference = symdyn.Engine(model).inverse_dynamics(q, qd, x)
    for m in (plain, simple):
        assert relerr(_evaluate(m, fn, (q, qd, x)).reshape(reference.shape), reference) < 1e-10
    assert sympy.count_ops(simple) < sympy.count_ops(plain)


def test_large_expressions_are_refused_quickly():
    """The size is computed without building the expressions: UR5's coriolis_nu would have ~1e13 nodes."""
    start = time.perf_counter()
    with pytest.raises(ExpressionTooLarge, match=r"ur5.urdf: coriolis_nu of this 6-joint robot expands to .* nodes "
                                                 r"\(limit 20000\): closed forms are for small robots"):
        symdyn.expressions(ROOT / "robots" / "ur5.urdf", "coriolis_nu")
    assert time.perf_counter() - start < 30
    with pytest.raises(ValueError, match="unknown function 'mass'"):
        symdyn.expressions(ROOT / "robots" / "ur5.urdf", "mass")


def test_expanded_size_counts_every_use():
    """x1 = x0*x0 with x0 = a + b: the substituted x1 has 1 + 2 * 3 nodes."""
    import symengine as se
    from types import SimpleNamespace
    a, b, x0, x1 = se.symbols("a b x0 x1")
    program = SimpleNamespace(assignments=[(x0, se.Add(a, b)), (x1, se.Mul(x0, se.Symbol("c")))], results=[x1, x0, 2])
    assert expanded_sizes(program) == [1 + 3 + 1, 3, 1]


def test_cli_latex_on_a_two_link_robot(planar2):
    result = CliRunner().invoke(main, ["latex", str(planar2), "mass_matrix"])
    assert result.exit_code == 0, result.output
    comment, equation = result.output.splitlines()
    assert comment.startswith("% mass_matrix of robot 'planar2'") and "0: joint1, 1: joint2" in comment
    assert equation.startswith(r"M(q) = \left(\begin{matrix}") and equation.endswith(r"\end{matrix}\right)")
    assert r"\cos{\left(q_{1} \right)}" in equation and "q_{0}" not in equation    # M depends on q1 only
    # the printed matrix is sympy's latex of the expressions, which equal the engine above
    assert equation == r"M(q) = " + sympy.latex(symdyn.expressions(planar2, "mass_matrix"), mat_delim="(",
                                                symbol_names={sympy.Symbol("q1"): "q_{1}"})
    sym = CliRunner().invoke(main, ["latex", str(planar2), "gravity", "--params", "symbolic"])
    assert sym.exit_code == 0 and "h_{x,1}" in sym.output and "m_{1}" in sym.output, sym.output


def test_cli_latex_errors_are_one_line(planar2):
    for args, says in ((["latex", str(ROOT / "robots" / "panda.urdf"), "mass_matrix"], "panda.urdf: mass_matrix of this "
                                                                                      "7-joint robot expands"),
                       (["latex", str(planar2), "mass"], "unknown function 'mass'"),
                       (["latex", "missing.yaml", "mass_matrix"], "missing.yaml: file not found")):
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 2 and result.output.count("\n") == 1 and says in result.output, result.output
