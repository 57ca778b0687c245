"""Like branches as lanes of one loop (symdyn/codegen/c/branch_lanes.py): every loop statement is each lane's own
statement, the C module computes what the Python module of the same programs computes, and loops appear only
where there are enough like branches."""
import math
from dataclasses import replace

import numpy as np
import pytest

import symdyn
from conftest import ROOT, erd_path, relerr, write_yaml
from symdyn.codegen.c import C, branch_lanes
from symdyn.codegen.c.tuning import TUNING
from symdyn.codegen.generator import select_functions, trace
from symdyn.compare import import_module_file
from symdyn.generate import module_name, render
from symdyn.multibody.branches import Branches
from symdyn.multibody.synthetic import random_tree_description

SOLO12 = "solo_description/robots/solo12.urdf"
ANYMAL = "anymal_c_simple_description/urdf/anymal.urdf"
GO2 = ROOT / "robots" / "mjcf" / "menagerie" / "unitree_go2" / "go2.xml"
LOOPED = ("inverse_dynamics", "coriolis_matrix", "inverse_dynamics_derivatives", "forward_dynamics")


def _lanes(model, name):
    fn, = select_functions([name], model)
    branches = Branches(model)
    return branch_lanes.Lanes(trace(model, fn), branches, branches.groups(TUNING.branch_lanes))


def _lane_value(lanes, symbol, lane, row, values):
    """A template's symbol as lane `lane` reads it: its gathered value, its own earlier value, or a scalar."""
    name = str(symbol)
    if name.startswith("sd_g"):
        gathered = {n: v for v, n in lanes.gathers.items()}[name.split("[")[0]][lane]
        return values[gathered] if gathered.is_Symbol else float(gathered)
    if name.startswith("sd_b"):
        return values[row[int(name.split("_")[2].split("[")[0])]]
    return values[symbol]


def test_each_loop_statement_is_every_lanes_own_statement():
    """A template, with lane l's gathered values and l's own earlier statements put in, is lane l's expression:
    evaluated at random values of every symbol, they agree to rounding."""
    lanes = _lanes(symdyn.load_robot(erd_path(SOLO12), floating_base=True), "inverse_dynamics_derivatives")
    program = lanes.program
    assert lanes.lane_statements() > 0.8 * len(program.assignments)        # the legs: nearly all of it
    rng = np.random.default_rng(3)
    symbols = [s for symbols in program.inputs.values() for s in symbols] + [s for s, _ in program.assignments]
    values = dict(zip(symbols, rng.uniform(0.5, 1.5, len(symbols))))
    checked = 0
    for g, templates in enumerate(lanes.templates):
        for k, template in templates.items():
            for lane, row in enumerate(lanes.rows[g]):
                own = lanes.expr[row[k]]
                want = float(own.xreplace({s: values[s] for s in own.free_symbols}))
                got = float(template.xreplace({s: _lane_value(lanes, s, lane, row, values)
                                               for s in template.free_symbols}))
                assert got == pytest.approx(want, rel=1e-12, abs=1e-12), (row[k], own, template)
                checked += 1
    assert checked == lanes.lane_statements()


def test_unify_gathers_what_differs_and_refuses_other_shapes():
    import symengine as se
    x, y, z, w = se.symbols("x y z w")
    seen = []
    gather = lambda values: seen.append(tuple(values)) or se.Symbol(f"sd_g{len(seen) - 1}[sd_l]")
    t = branch_lanes._unify([2.5 * x * y + w, -1.5 * z * y + w], gather)
    assert len(seen) == 2 and (x, z) in seen and t.has(w) and t.has(y)         # w and y: every lane's own
    assert [tuple(map(float, values)) for values in seen if values[0].is_Number] == [(2.5, -1.5)]
    with pytest.raises(branch_lanes.Mismatch):
        branch_lanes._unify([x + y, x * y], gather)                          # a sum and a product
    with pytest.raises(branch_lanes.Mismatch):
        branch_lanes._unify([x ** 2, x ** 3], gather)                        # powers by their exponent


def _c_against_python(model, functions, tmp_path):
    files = render(model, ("python", "c"), functions=functions)
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    name = module_name(model.provenance.path)
    source = files[f"{name}.c"]
    py = import_module_file(tmp_path / f"{name}.py", f"lanes_{name}")
    c = symdyn.load_c(tmp_path / f"{name}.c")
    rng = np.random.default_rng(5)
    for _ in range(20):
        q = rng.uniform(-2, 2, py.NQ)
        if py.NQ > py.NV:
            q[3:7] /= np.linalg.norm(q[3:7])                 # the free joint's quaternion (both conventions: 3:7)
        v, a = rng.normal(size=py.NV) * 2, rng.normal(size=py.NV) * 3
        for f in functions:
            args = {"inverse_dynamics": (q, v, a), "coriolis_matrix": (q, v), "forward_dynamics": (q, v, a),
                    "inverse_dynamics_derivatives": (q, v, a), "forward_dynamics_derivatives": (q, v, a),
                    "mass_matrix": (q,), "mass_matrix_inverse": (q,), "centroidal_momentum_matrix": (q,)}[f]
            want, got = getattr(py, f)(*args), getattr(c, f)(*args)
            for w, g in zip(*(r if isinstance(r, tuple) else (r,) for r in (want, got))):
                assert relerr(g, w) < 1e-12, f
    return source


#: robot -> its model and whether the loops are forced (tuning.lane_loads off): ANYmal's legs line up only in part
#: (its URDF's rotations leave 1e-13 entries on some legs, exact zeros on others), which does not pay, but gives
#: scalar statements between loops
QUADRUPEDS = {"solo12": (lambda: symdyn.load_robot(erd_path(SOLO12), floating_base=True), False),
              "go2": (lambda: symdyn.load_robot(GO2), False),
              "anymal": (lambda: symdyn.load_robot(erd_path(ANYMAL), floating_base=True), True)}


@pytest.mark.parametrize("robot", QUADRUPEDS)
def test_a_quadrupeds_c_module_in_lanes_computes_what_its_python_module_does(robot, tmp_path, monkeypatch):
    load, forced = QUADRUPEDS[robot]
    if forced:
        monkeypatch.setattr(C, "tuning", replace(TUNING, lane_loads=math.inf))
    source = _c_against_python(load(), LOOPED, tmp_path)
    for f in LOOPED:                                          # each of them in loops over the four legs
        body = source.split(f"_{f}(const double *q")[1].split("\n}\n")[0]
        assert "for (int sd_l = 0; sd_l < 4; ++sd_l)" in body, f
        if forced:                                            # and scalar statements of the legs between them
            assert body.count("for (int sd_l") > 5, f


def test_groups_of_any_width_in_a_random_tree(tmp_path, monkeypatch):
    """A random tree with a group of 8 like branches and one of 4 (single prismatic and revolute joints), loops forced:
    wider tables, two groups' loops in one function, every statement of a branch scalar or in a loop."""
    path = tmp_path / "tree.yaml"
    write_yaml(path, random_tree_description(24, seed=8))
    model = symdyn.load_robot(path)
    assert sorted(len(g) for g in Branches(model).groups(4)) == [4, 8]
    monkeypatch.setattr(C, "tuning", replace(TUNING, lane_loads=math.inf))
    functions = ("inverse_dynamics", "coriolis_matrix", "mass_matrix")
    source = _c_against_python(model, functions, tmp_path)
    assert "sd_l < 8;" in source and "sd_l < 4;" in source


def test_no_loops_for_a_chain_nor_where_they_do_not_pay():
    """A chain has no branches; ANYmal's legs, lined up in part, would leave more values to load from the loops'
    arrays than tuning.lane_loads allows: the scalar code."""
    panda = symdyn.load_robot(ROOT / "robots" / "panda.urdf")
    anymal = symdyn.load_robot(erd_path(ANYMAL), floating_base=True)
    for model in (panda, anymal):
        source = next(t for n, t in render(model, ("c",), functions=["inverse_dynamics"]).items() if n.endswith(".c"))
        assert "sd_l" not in source
    assert Branches(panda).groups(TUNING.branch_lanes) == []
    lanes = _lanes(anymal, "inverse_dynamics")
    assert lanes.escaping() > TUNING.lane_loads * (lanes.lane_statements() - lanes.loop_statements()) > 0


def test_two_arms_in_loops_of_two_lanes(tmp_path):
    """Baxter's two arms (mimic joints independent): ID and M in loops of two lanes, as the Python module computes."""
    baxter = symdyn.load_robot(erd_path("baxter_description/urdf/baxter.urdf"), mimic="independent")
    source = _c_against_python(baxter, ("inverse_dynamics", "mass_matrix"), tmp_path)
    assert "for (int sd_l = 0; sd_l < 2; ++sd_l)" in source


def test_a_legs_statements_after_the_sum_over_the_legs_are_the_legs():
    """Forward dynamics of a floating base: the base's acceleration sums over the legs; each leg's accelerations
    after it read the base's and the leg's own values: they belong to the leg (and its q̈ entries too)."""
    model = symdyn.load_robot(erd_path(SOLO12), floating_base=True)
    fn, = select_functions(["forward_dynamics"], model)
    program, branches = trace(model, fn), Branches(model)
    legs = branches.groups(TUNING.branch_lanes)[0]
    owner = branch_lanes.owners(program, branches, set(legs))
    qdd = program.results[6:]
    assert [owner[x] for x in qdd] == [b for b in legs for _ in range(3)]


def test_a_cycle_between_lanes_names_its_statements():
    """Lane 1's statement reads a scalar computed from lane 0's statement of the same loop: no order computes
    both lanes at once; the Cycle names both lanes' statements, which the C backend then keeps scalar."""
    import types
    import symengine as se
    x, a0, s, b0 = se.symbols("x a0 s b0")
    lanes = branch_lanes.Lanes.__new__(branch_lanes.Lanes)
    lanes.program = types.SimpleNamespace(assignments=[(a0, 2 * x), (s, a0 + 1), (b0, 3 * s)])
    lanes.position = {a0: 0, s: 1, b0: 2}
    lanes.key, lanes.rows = {a0: (0, 0), b0: (0, 0)}, [[[a0], [b0]]]
    with pytest.raises(branch_lanes.Cycle) as cycle:
        lanes.order()
    assert cycle.value.symbols == {a0, b0}
    lanes.key = {a0: (0, 0)}
    assert lanes.order() == [(0, 0), s, b0]


def test_a_quadrupeds_forward_dynamics_derivatives_in_one_piece_of_loops(tmp_path):
    """solo12's ∂FD (about 6000 statements) fits one piece in lane form, its legs' forward passes after the base's
    acceleration in the loops: as its Python module computes."""
    source = _c_against_python(symdyn.load_robot(erd_path(SOLO12), floating_base=True),
                               ("forward_dynamics_derivatives", "mass_matrix_inverse"), tmp_path)
    body = source.split("_forward_dynamics_derivatives(const double *q")[1].split("\n}\n")[0]
    assert "for (int sd_l = 0; sd_l < 4; ++sd_l)" in body and "_part1(" not in body


def test_a_lane_form_longer_than_split_above_stays_one_piece(tmp_path, monkeypatch):
    """solo12's FD with split_above at 400: 1419 statements, in parts as straight-line code; in lane form about 525,
    within tuning.lane_piece times split_above: one piece of loops, as its Python module computes."""
    monkeypatch.setattr(C, "tuning", replace(TUNING, split_above=400))
    source = _c_against_python(symdyn.load_robot(erd_path(SOLO12), floating_base=True), ("forward_dynamics",), tmp_path)
    body = source.split("_forward_dynamics(const double *q")[1].split("\n}\n")[0]
    assert "for (int sd_l = 0; sd_l < 4; ++sd_l)" in body and "_part1(" not in body
    monkeypatch.setattr(C, "tuning", replace(TUNING, split_above=400, lane_piece=1.0))
    source = _c_against_python(symdyn.load_robot(erd_path(SOLO12), floating_base=True), ("forward_dynamics",), tmp_path)
    assert "_forward_dynamics_part1(" in source                  # at most split_above: parts, no loops
