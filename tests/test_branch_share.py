"""benchmarks/branch_share.py: each statement of a traced program counted once, to the branch whose inputs it reads."""
from conftest import ROOT, erd_path, import_file
from symdyn.codegen.generator import select_functions, trace
from symdyn.multibody.branches import Branches
from symdyn.readers.load import load_robot

def _tool():
    return import_file(ROOT / "benchmarks" / "branch_share.py", "branch_share")


def test_a_quadrupeds_legs_are_four_branches_of_one_shape_and_share_its_operations():
    tool = _tool()
    model = load_robot(str(erd_path("solo_description/robots/solo12.urdf")), floating_base=True)
    branches = Branches(model)
    assert len(branches.names) == 4 and len(set(branches.shape.values())) == 1
    fn, = select_functions(["mass_matrix"], model)
    trunk, one, several = tool.share(model, branches, fn)
    ops = trace(model, fn).ops
    assert trunk + several + sum(one.values()) == ops["mul"] + ops["add"]
    assert len(set(one.values())) == 1 and one[branches.names[0]] > 0          # the legs alike
    assert several > 0                                                          # the base's rows sum the legs


def test_a_fixed_bases_arms_own_all_of_a_statement_below_them():
    """Baxter's arms hang from the world: every statement of M reads one arm (and its fingers) or the head."""
    tool = _tool()
    model = load_robot(str(erd_path("baxter_description/urdf/baxter.urdf")), mimic="independent")
    branches = Branches(model)
    fn, = select_functions(["mass_matrix"], model)
    trunk, one, several = tool.share(model, branches, fn)
    assert trunk == 0 and several == 0
    arms = sorted(one.values())[-2:]
    assert arms[0] == arms[1] > 0.9 * sum(one.values()) / 2
