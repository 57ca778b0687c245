"""Branching trees: Pinocchio's joint order, exact zeros between branches, and every function of the
generated set (engine, generated Python and C, numeric and symbolic parameters) against Pinocchio
on real trees read by Pinocchio's own URDF parser and on random trees."""
import subprocess
import sys
from dataclasses import replace

import numpy as np
import pinocchio as pin
import pytest

import symdyn
from conftest import ERD_TREES, ROOT, erd_path, function_args, random_states, relerr
from oracle import Pinocchio, to_pinocchio
from random_chain import random_description, random_tree, random_tree_description
from symdyn.codegen.generator import trace
from symdyn.compare import PINOCCHIO_NAMES, import_module_file
from symdyn.readers.description import build_model
from symdyn.functions import BY_NAME, FUNCTIONS
from symdyn.generate import module_name, render
from symdyn.multibody.synthetic import random_chain

TOL = 1e-9          # relative, against Pinocchio
SAME = 1e-10        # relative, generated code against the engine
DATA = ROOT / "tests" / "data"


def _args(fn, q, qd, x, model=None):
    """Arguments by name; `params` (base_parameters): the model's standard parameters, scaled at random."""
    params, nf = None, 0
    if model is not None:
        params = np.array(model.parameters) * np.random.default_rng(8).uniform(0.5, 2.0, (len(q), len(model.parameters)))
        nf = len(model.kinematic_frames)
    return function_args(fn, q, qd, x, nf, params)


def _against_pinocchio(functions, oracle, q, qd, x):
    """Largest relative difference per Pinocchio function, state by state."""
    worst = {}
    for name in PINOCCHIO_NAMES:
        args = _args(BY_NAME[name], q, qd, x)
        ours = functions(name)(*args)
        worst[name] = max(relerr(ours[s], getattr(oracle, name)(*(a[s] for a in args))) for s in range(len(q)))
    return worst


@pytest.fixture(scope="module", params=sorted(ERD_TREES))
def erd_tree(request):
    path = erd_path(ERD_TREES[request.param])
    return symdyn.load_robot(path, mimic="independent"), pin.buildModelFromUrdf(str(path))   # the whole tree


def test_joint_order_is_pinocchios(erd_tree):
    model, pmodel = erd_tree
    assert tuple(pmodel.names)[1:] == model.joint_names
    assert pmodel.nv == model.dof
    assert [pmodel.parents[k + 1] - 1 for k in range(model.dof)] == [j.parent for j in model.joints]


KINDS = {"link": pin.FrameType.BODY, "joint": pin.FrameType.JOINT, "fixed-joint": pin.FrameType.FIXED_JOINT}


def _frames_equal_pinocchios(model, pmodel):
    """Every link and joint of the file is a frame, on the same body, at the same placement as
    Pinocchio's frames (merged links included: tool0, panda_hand, feet)."""
    theirs = {(f.name, f.type): f for f in pmodel.frames if f.name != "universe"}
    assert {(f.name, KINDS[f.kind]) for f in model.frames} == set(theirs)
    for f in model.frames:
        other = theirs[f.name, KINDS[f.kind]]
        assert other.parentJoint == f.parent + 1, f.name
        assert np.abs(other.placement.rotation - np.array(f.rotation)).max() < 1e-12, f.name
        assert np.abs(other.placement.translation - np.array(f.translation)).max() < 1e-12, f.name


def test_frames_equal_pinocchios(erd_tree):
    _frames_equal_pinocchios(*erd_tree)
    model, _ = erd_tree
    for name in ("panda_hand", "panda_link8", "panda_hand_tcp", "FL_FOOT", "left_sole_link", "right_gripper"):
        if any(f.name == name for f in model.frames):
            assert model.frame(name).parent >= 0


def test_engine_equals_pinocchio_urdf_parser(erd_tree):
    model, pmodel = erd_tree
    engine = symdyn.Engine(model)
    worst = _against_pinocchio(lambda name: getattr(engine, name), Pinocchio(pmodel), *random_states(model.dof, 10, seed=1))
    assert max(worst.values()) < TOL, worst


def test_generated_python_and_c_equal_engine_and_pinocchio(erd_tree, tmp_path, monkeypatch):
    """Every function of the set: Python and C equal the engine; those Pinocchio has equal Pinocchio."""
    monkeypatch.setenv("SYMDYN_CACHE", str(tmp_path / "cache"))
    model, pmodel = erd_tree
    name = module_name(model.provenance.path)
    for filename, text in render(model, ("python", "c")).items():
        (tmp_path / filename).write_text(text)
    modules = {"python": import_module_file(tmp_path / f"{name}.py", f"tree_{name}"),
               "c": symdyn.load_c(tmp_path / f"{name}.c")}
    engine = symdyn.Engine(model)
    q, qd, x = random_states(model.dof, 5, seed=2)
    for fn in FUNCTIONS:
        args = _args(fn, q, qd, x, model)
        reference = getattr(engine, fn.name)(*args)
        for lang, module in modules.items():
            assert relerr(getattr(module, fn.name)(*args), reference) < SAME, (lang, fn.name)
    oracle = Pinocchio(pmodel)
    for lang, module in modules.items():
        worst = _against_pinocchio(lambda f: getattr(module, f), oracle, q, qd, x)
        assert max(worst.values()) < TOL, (lang, worst)


RANDOM_TREES = [(6, 11, "RP", False), (9, 12, "R", True), (12, 13, "RP", False), (8, 14, "P", False)]


@pytest.mark.parametrize("spec", RANDOM_TREES, ids=lambda s: f"n{s[0]}-{s[2]}-{s[1]}{'-aligned' if s[3] else ''}")
def test_random_tree_engine_equals_pinocchio(spec):
    model = random_tree(*spec)
    worst = _against_pinocchio(lambda name: getattr(symdyn.Engine(model), name), Pinocchio(to_pinocchio(model)),
                               *random_states(model.dof, 10, seed=3))
    assert max(worst.values()) < TOL, worst


def test_random_tree_symbolic_parameters(tmp_path, monkeypatch):
    """Symbolic-parameter modules of a tree (Python and C): the file's parameters give the numeric
    module, other parameters give the engine with those parameters."""
    monkeypatch.setenv("SYMDYN_CACHE", str(tmp_path / "cache"))
    model = random_tree(7, 21, "RP", False)
    model = model.with_provenance(path=str(tmp_path / "tree7.yaml"))
    for params in ("numeric", "symbolic"):
        (tmp_path / params).mkdir()
        for filename, text in render(model, ("python", "c"), params).items():
            (tmp_path / params / filename).write_text(text)
    numeric = import_module_file(tmp_path / "numeric" / "tree7.py", "tree7_numeric")
    sym = {"python": import_module_file(tmp_path / "symbolic" / "tree7_params.py", "tree7_symbolic"),
           "c": symdyn.load_c(tmp_path / "symbolic" / "tree7_params.c")}
    default = sym["python"].DEFAULT_PARAMS
    rng = np.random.default_rng(1)
    other = default * np.concatenate([np.repeat(rng.uniform(0.5, 2.0, model.dof), 10), np.ones(4 * model.dof)])
    other[10 * model.dof:] += rng.uniform(0.1, 1.0, 4 * model.dof)       # friction and armature too
    other_engine = symdyn.Engine(model, other)
    q, qd, x = random_states(model.dof, 5, seed=4)
    for fn in FUNCTIONS:
        args = _args(fn, q, qd, x, model)
        mine, theirs = ((default,), (other,)) if fn.parametric else ((), ())
        for lang, module in sym.items():
            assert relerr(getattr(module, fn.name)(*args, *mine), getattr(numeric, fn.name)(*args)) < SAME, (lang, fn.name)
            assert relerr(getattr(module, fn.name)(*args, *theirs), getattr(other_engine, fn.name)(*args)) < SAME, (lang, fn.name)


def _twin_chains(n, seed):
    """The same random chain twice, hanging from the base: a tree of two branches."""
    desc = random_description(n, seed)
    twin = {"name": "twins", "gravity": desc["gravity"], "links": [], "joints": []}
    for tag in ("a", "b"):
        rename = lambda x: x if x == "base" else f"{tag}_{x}"
        twin["links"] += [{**link, "name": rename(link["name"])} for link in desc["links"]]
        twin["joints"] += [{**j, "name": rename(j["name"]), "parent": rename(j["parent"]), "child": rename(j["child"])}
                           for j in desc["joints"]]
    return build_model(desc, "<chain>"), build_model(twin, "<twins>")


@pytest.mark.parametrize("name", ["mass_matrix", "coriolis_matrix", "mass_matrix_inverse"])
def test_entries_between_branches_are_free_zeros(name):
    """Two copies of a chain on the base: the code is exactly twice the chain's and the entries between
    the branches are exact zeros (M, C and, with a fixed common ancestor, M^-1)."""
    chain, twins = _twin_chains(4, 9)
    one, two = trace(chain, BY_NAME[name]), trace(twins, BY_NAME[name])
    assert two.ops == {k: 2 * v for k, v in one.ops.items()}
    matrix = np.array(two.results, dtype=object).reshape(8, 8)
    assert all(x == 0 for x in matrix[:4, 4:].ravel()) and all(x == 0 for x in matrix[4:, :4].ravel())


def test_inverse_couples_branches_below_a_moving_joint():
    """M is zero between two branches on a moving joint, M^-1 is not (both move the common parent)."""
    model = symdyn.load_robot(DATA / "two_branches.yaml")
    engine = symdyn.Engine(model)
    q, _, _ = random_states(3, 1)
    assert model.joint_names == ("shoulder", "elbow", "wrist")
    assert engine.mass_matrix(q)[0, 1, 2] == 0
    assert abs(engine.mass_matrix_inverse(q)[0, 1, 2]) > 1e-3


def test_document_order_is_not_pinocchios_order():
    """Pinocchio sorts the joints below a link by name (urdfdom's map), depth first: so does symdyn."""
    path = DATA / "tree_order.urdf"
    model, pmodel = symdyn.load_robot(path), pin.buildModelFromUrdf(str(path))
    assert model.joint_names == tuple(pmodel.names)[1:] == ("b_hip", "b_knee", "c_hip", "a_knee", "z_knee")
    worst = _against_pinocchio(lambda name: getattr(symdyn.Engine(model), name), Pinocchio(pmodel),
                               *random_states(model.dof, 5, seed=5))
    assert max(worst.values()) < TOL, worst


def test_frames_of_merged_links():
    path = DATA / "tree_order.urdf"
    model = symdyn.load_robot(path)
    _frames_equal_pinocchios(model, pin.buildModelFromUrdf(str(path)))
    tool = model.frame("tool")                       # lca -> tool_joint (fixed, 0.15 along z)
    assert tool.parent == model.joint_names.index("a_knee") and tool.translation == (0.0, 0.0, 0.15)
    assert model.frame("tool_joint", "fixed-joint") == replace(tool, name="tool_joint", kind="fixed-joint")
    assert model.frame("base").parent == -1
    assert model.children(-1) == (0, 2) and model.children(2) == (3, 4)
    with pytest.raises(KeyError):
        model.frame("tool", "joint")


def test_urdf_and_yaml_twins():
    urdf, yaml = symdyn.load_robot(DATA / "two_branches.urdf"), symdyn.load_robot(DATA / "two_branches.yaml")
    assert urdf.joints == yaml.joints and urdf.bodies == yaml.bodies


def test_cli_compare_uses_pinocchio_urdf_parser_on_trees():
    result = subprocess.run([sys.executable, "-m", "symdyn.cli", "compare", str(DATA / "tree_order.urdf"),
                             "--states", "3", "--no-c"], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Pinocchio's own URDF parser" in result.stdout


def test_generated_header_gives_the_tree():
    text = render(symdyn.load_robot(DATA / "tree_order.urdf"), ("python", "c"))
    for name in ("tree_order.py", "tree_order.h", "tree_order.c"):
        assert ('Joint order (depth first from the base): "b_hip", "b_knee", "c_hip", "a_knee", "z_knee". '
                "Parent of each joint (-1: the base): -1, 0, -1, 2, 2.") in text[name], name


def test_large_random_tree():
    """40 moving joints, bushy: the recursions stay exact (engine identities) and equal Pinocchio."""
    model = random_tree(40, 31, "RP", False, branching=3.0)
    assert max(len(model.children(k)) for k in range(-1, model.dof)) >= 3
    engine = symdyn.Engine(model)
    q, qd, tau = random_states(model.dof, 3, seed=6)
    M, Minv, m = engine.mass_matrix(q), engine.mass_matrix_inverse(q), engine.innovations_factor(q)
    assert relerr(M @ Minv, np.broadcast_to(np.eye(model.dof), M.shape)) < 1e-9
    assert relerr(m @ np.swapaxes(m, -1, -2), M) < 1e-10
    assert relerr(engine.inverse_dynamics(q, qd, engine.forward_dynamics(q, qd, tau)), tau) < 1e-9
    worst = _against_pinocchio(lambda name: getattr(engine, name), Pinocchio(to_pinocchio(model)), q, qd, tau)
    assert max(worst.values()) < TOL, worst


def _tree_models():
    """Trees that take each path of minverse: a free-flyer root with branches (a 6x6 D^-1 in every
    term), a spherical joint where the tree branches (a 3x3 block of U^-1 and tau_bar inside the
    tree), and a 1-DoF joint on the fixed base with two branches."""
    from symdyn.multibody.synthetic import _link, random_tree_description

    def floating(seed):
        """A random tree on a free-flyer; the floating link gets a mass (a massless one makes M singular)."""
        desc = random_tree_description(10, seed, branching=2.5)
        desc["joints"] = [dict(j, parent="trunk") if j["parent"] == "base" else j for j in desc["joints"]]
        desc["links"].append(_link(np.random.default_rng(seed), "trunk"))
        desc["joints"].append({"name": "trunk_joint", "type": "fixed", "parent": "base", "child": "trunk"})
        return build_model(desc, "<floating tree>", floating_base=True)

    desc = random_tree_description(10, 7, branching=2.5)
    model = build_model(desc, "<tree>")
    hub = next(k for k in range(len(model.joints)) if len(model.children(k)) > 1 and model.joints[k].parent >= 0)
    name = model.joints[hub].name
    desc["joints"] = [dict(j, type="spherical") if j["name"] == name else j for j in desc["joints"]]
    spherical = build_model(desc, "<tree with a spherical hub>")
    return {"floating_one_child": floating(4), "floating_branching": floating(5), "spherical_hub": spherical,
            "two_branches": symdyn.load_robot(DATA / "two_branches.yaml")}


@pytest.mark.parametrize("name", ["floating_one_child", "floating_branching", "spherical_hub", "two_branches"])
def test_inverse_of_trees_against_pinocchio(name):
    """M^-1 of trees (terms of U^-1 over the common ancestors): Pinocchio's computeMinverse,
    M M^-1 = I, symmetric."""
    from symdyn.multibody import lie
    from symdyn.compare import pinocchio_functions, pinocchio_model
    model = _tree_models()[name]
    assert any(len(model.children(k)) > 1 for k in range(len(model.joints)))
    engine = symdyn.Engine(model)
    q = lie.random_configuration(model, np.random.default_rng(3), 4)
    M, Minv = engine.mass_matrix(q), engine.mass_matrix_inverse(q)
    assert relerr(M @ Minv, np.broadcast_to(np.eye(model.nv), M.shape)) < 1e-10
    assert relerr(Minv, np.swapaxes(Minv, -1, -2)) == 0
    ref = pinocchio_functions(pinocchio_model(model))["mass_matrix_inverse"]
    assert max(relerr(Minv[s], ref(q[s])) for s in range(len(q))) < TOL


@pytest.mark.parametrize("form", ["from_factors", "section_x", "from_factors_outward"])
@pytest.mark.parametrize("name", ["floating_branching", "spherical_hub", "chain"])
def test_each_form_of_the_inverse_against_pinocchio(form, name):
    """Each form of M^-1 (the engine runs the first, generated code the cheapest): Pinocchio's computeMinverse,
    M M^-1 = I, on a branching free-flyer tree, a spherical joint where a tree branches, a chain."""
    from symdyn.multibody import lie
    from symdyn.recursions import minverse
    from symdyn.compare import pinocchio_functions, pinocchio_model
    from symdyn.functions import out_dims
    from symdyn.recursions.riccati import Riccati
    model = random_chain(6, 11) if name == "chain" else _tree_models()[name]
    engine = symdyn.Engine(model)
    q = lie.random_configuration(model, np.random.default_rng(5), 3)
    trace_form = getattr(minverse, form)
    Minv = engine._evaluate(lambda ctx, chain, X: trace_form(ctx, chain, X, Riccati(ctx, chain, X)),
                            out_dims(BY_NAME["mass_matrix_inverse"]), q)
    M = engine.mass_matrix(q)
    assert relerr(M @ Minv, np.broadcast_to(np.eye(model.nv), M.shape)) < 1e-10
    ref = pinocchio_functions(pinocchio_model(model))["mass_matrix_inverse"]
    assert max(relerr(Minv[s], ref(q[s])) for s in range(len(q))) < TOL


def _both_forms(model, params="numeric"):
    """The program of M^-1 as chosen, and the ops of each form that applies to the model, each traced in full."""
    fn = BY_NAME["mass_matrix_inverse"]
    return trace(model, fn, params), {form: trace(model, fn.in_form(form), params).ops for form in fn.forms
                                      if fn.form_applies(model, form)}


@pytest.mark.parametrize("name", ["spherical_hub", "two_branches", "chain"])
def test_both_walks_of_the_inverse_factor_agree(name):
    """R(a, k) and D^-1 R(a, k) by the inward walk of G(k) and by the outward walk of H(a)* (minverse's
    forms from_factors and from_factors_outward): the same blocks, on a tree whose spherical hub splits
    the joints between the walks, a fixed-base tree and a chain."""
    from symdyn.multibody import lie
    from symdyn.recursions import minverse
    from symdyn.recursions.riccati import Riccati
    model = random_chain(6, 11) if name == "chain" else _tree_models()[name]
    assert minverse.form_applies(model, "from_factors_outward")
    engine = symdyn.Engine(model)
    q = lie.random_configuration(model, np.random.default_rng(8), 2)

    def blocks(outward):
        def walk(ctx, chain, X):
            _, R, DR = minverse.inverse_factors(ctx, chain, X, Riccati(ctx, chain, X), outward)
            return [[x for key in sorted(R) for block in (R[key], DR[key]) for row in block for x in row]]
        chain = engine.chain
        size = sum(2 * len(chain.H[a]) * len(chain.H[k]) for k in range(chain.n) for a in chain.ancestors(k))
        return engine._evaluate(walk, [(1, size)], q)

    down = engine.chain.top
    assert down and (len(down) < engine.chain.n or name != "spherical_hub")
    assert relerr(blocks(True), blocks(False)) < 1e-12


def test_no_outward_walk_on_a_floating_base():
    """A free-flyer on top: no row of U^-1 walks outward, the form is not traced (generation time)."""
    from symdyn.recursions import derivatives, minverse
    model = _tree_models()["floating_branching"]
    assert not minverse.form_applies(model, "from_factors_outward")
    assert not derivatives.fd_form_applies(model, "outward_factors")


@pytest.mark.parametrize("path", sorted((ROOT / "robots").glob("*.[uy]*")), ids=lambda p: p.stem)
def test_the_inverse_of_bundled_robots_takes_the_cheaper_form(path):
    """Each form that applies traced in full: the chosen program is the one with fewest multiplications (numeric
    parameters, and symbolic ones on the Puma, where the parameter symbols change the counts)."""
    model = symdyn.load_robot(path)
    for params in ("numeric", "symbolic") if path.stem == "puma560" else ("numeric",):
        chosen, forms = _both_forms(model, params)
        assert chosen.ops == forms[chosen.form] and chosen.ops["mul"] == min(f["mul"] for f in forms.values()), forms


CHOOSER_CASES = {                       # name: (the model, the form with fewer multiplications)
    "chain30_aligned": (lambda: random_chain(30, 2, aligned=True), "from_factors"),
    "chain36_aligned": (lambda: random_chain(36, 2, aligned=True), "section_x"),
    "chain35_general": (lambda: random_chain(35, 2), "from_factors"),        # 33167 mul against 35634
    "tree60_floating": (lambda: build_model(random_tree_description(60, 3, branching=1.1), "<tree60>",
                                            floating_base=True), "from_factors"),   # 65491 against 72773
}


@pytest.mark.parametrize("name", sorted(CHOOSER_CASES))
def test_the_inverse_takes_the_cheaper_form(name):
    """Counted, not fitted: M^-1 takes the form with fewer multiplications on chains of 30 and 36
    frame-aligned joints, a 35-joint chain of general axes and a 60-joint floating tree (10 terms per
    entry, the former threshold, took Section X on the last two: +7% and +10%). The generator traces
    each form and keeps the cheaper program."""
    build, cheaper = CHOOSER_CASES[name]
    chosen, costs = _both_forms(build())
    others = [form for form in costs if form != cheaper]
    assert chosen.form == cheaper and chosen.ops == costs[cheaper], costs
    assert all(costs[cheaper]["mul"] < costs[form]["mul"] for form in others), costs


@pytest.fixture(scope="module")
def talos_floating():
    return symdyn.load_robot(erd_path(ERD_TREES["talos_reduced"]), floating_base=True)


def test_inverse_of_a_floating_tree_costs_under_3_5_mass_matrices(talos_floating):
    """talos_reduced with a free-flyer: M^-1 from the inverse factor U^-1 (terms over common ancestors)
    costs 3.4 M (Section X's Upsilon form with columns carried inward cost 4.3 M, walked outward 5.5 M).
    M here is the 2720 mul of the mass matrix by 6x6 congruences (the CRBA by ten parameters now costs
    2009: the yardstick stays fixed)."""
    inverse = trace(talos_floating, BY_NAME["mass_matrix_inverse"])
    assert inverse.ops["mul"] < 3.5 * 2720, inverse.ops


def test_mass_matrix_of_a_floating_tree_by_ten_parameters(talos_floating):
    """talos_reduced with a free-flyer: composite inertias moved as (m, h, J) cost 2009 mul / 1618 add
    (6x6 congruences: 2720 / 2480; docs/perf-history.md "Mass matrix of trees, issue 10, third pass" and "Coriolis
    matrix by ten parameters")."""
    ops = trace(talos_floating, BY_NAME["mass_matrix"]).ops
    assert ops["mul"] <= 2009 and ops["add"] <= 1618, ops


@pytest.mark.parametrize("robot, mul, add", [("talos_floating", 9085, 7300), ("planar6", 211, 149)])
def test_coriolis_matrix_by_ten_parameters(request, robot, mul, add):
    """C's composite inertias by ten parameters, as the mass matrix's: talos_reduced with a free-flyer
    9863 / 8175 (6x6 congruences: 10766 / 9226); planar6 194 / 146 (194 / 150), where the ten
    parameters alone cost 201 mul until the column R H* took the mass matrix's first step. Bc as a
    symmetric 3x3 and the momentum (rnea_derivatives.Gyroscopic) instead of 6x6 congruences: talos
    9085 / 7300, planar6 211 / 149 (more on the planar arm, whose congruences moved fewer blocks)."""
    model = request.getfixturevalue(robot) if robot == "talos_floating" else \
        symdyn.load_robot(ROOT / "robots" / "planar6.yaml")
    ops = trace(model, BY_NAME["coriolis_matrix"]).ops
    assert ops["mul"] <= mul and ops["add"] <= add, ops


def test_inverse_of_a_chain_costs_under_2_mass_matrices():
    """The Panda: M^-1 from U^-1 costs 1.9 M (578 mul; Section X's Upsilon recursion with columns walked
    outward cost 971): a chain's code did not grow when trees got the inverse factor. M is the 299 mul
    of the mass matrix by 6x6 congruences (the CRBA by ten parameters now costs 230)."""
    model = symdyn.load_robot(ROOT / "robots" / "panda.urdf")
    inverse = trace(model, BY_NAME["mass_matrix_inverse"])
    assert inverse.ops["mul"] < 2 * 299, inverse.ops


@pytest.mark.parametrize("name", ["floating_branching", "spherical_hub", "two_branches", "chain", "panda_rotors"])
def test_forward_dynamics_by_the_mass_matrix_solve(name):
    """forward_dynamics' second form, M's L^T D L over the tree's sparsity solved on inverse dynamics' bias
    (ltdl.py), gives the Kalman filter's accelerations (the engine's form) on trees, a spherical hub, a
    free-flyer, a chain with prismatic joints, and an arm with friction and rotor inertias, with and without
    external wrenches; RNEA undoes it."""
    from symdyn.functions import out_dims
    from symdyn.multibody import lie
    if name == "panda_rotors":
        panda = symdyn.load_robot(ROOT / "robots" / "panda.urdf")
        model = replace(panda, joints=tuple(replace(j, armature=0.1, damping=0.2, friction_offset=0.05)
                                            for j in panda.joints))
    else:
        model = random_chain(6, 11) if name == "chain" else _tree_models()[name]
    engine, fn = symdyn.Engine(model), BY_NAME["forward_dynamics"].in_form("mass_matrix_solve")
    rng = np.random.default_rng(9)
    q, qd, tau = lie.random_configuration(model, rng, 3), rng.normal(size=(3, model.nv)), rng.normal(size=(3, model.nv))
    qdd = engine._evaluate(fn.trace, out_dims(fn), q, qd, tau)
    assert relerr(qdd, engine.forward_dynamics(q, qd, tau)) < 1e-10
    assert relerr(engine.inverse_dynamics(q, qd, qdd), tau) < 1e-9
    fn = BY_NAME["forward_dynamics_fext"].in_form("mass_matrix_solve")       # external wrenches: in the bias
    f_ext = rng.normal(size=(3, len(model.kinematic_frames), 6))
    assert f_ext.size
    qdd = engine._evaluate(fn.trace, out_dims(fn), q, qd, tau, f_ext, args=fn.args)
    assert relerr(qdd, engine.forward_dynamics(q, qd, tau, f_ext=f_ext)) < 1e-10
    assert relerr(engine.inverse_dynamics(q, qd, qdd, f_ext=f_ext), tau) < 1e-9


def test_forward_dynamics_takes_the_cheaper_form():
    """Each form traced in full: the generator keeps the one of fewer multiplications, the solve on the UR5 (409
    against 459) and a free-flyer with branches, the Kalman filter on the planar 6R arm (189 against 216)."""
    fn = BY_NAME["forward_dynamics"]
    for model, form in ((symdyn.load_robot(ROOT / "robots" / "ur5.urdf"), "mass_matrix_solve"),
                        (_tree_models()["floating_branching"], "mass_matrix_solve"),
                        (symdyn.load_robot(ROOT / "robots" / "planar6.yaml"), "kalman")):
        ops = {f: trace(model, fn.in_form(f)).ops["mul"] for f in fn.forms}
        chosen = trace(model, fn)
        assert chosen.form == form == min(ops, key=ops.get) and chosen.ops["mul"] == ops[form], ops
