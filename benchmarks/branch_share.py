"""How much of a tree's generated code belongs to one branch: the ceiling of running a robot's like branches
(a quadruped's legs, a humanoid's arms) as lanes of one loop or vector, measured on the traced programs.

    python benchmarks/branch_share.py ROBOT [--floating-base] [--mimic independent] [--functions F1,F2,...]

A branch is the chain of joints from a joint whose parent (or the world) has several children down to the next
such joint (the trunk above the first one is no branch). Each statement of a traced function reads the inputs (q, qd, qdd, tau)
of some branches; it belongs to the lowest branch that holds all of them at or below it (a leg's statement reads
the base's values too, an arm's the sums over its fingers). Statements of one branch could run once for all the branches of the
same shape (joint types in order), one per lane; the rest (the trunk's, sums over several branches, M^-1's
coupling) stay scalar. Ceiling = all operations / (trunk + several + for each shape its costliest branch): what
lanes of perfect efficiency would give, not a measured speed. Operations: mul + add of symdyn info --ops."""
import argparse
import collections

from symdyn.codegen.generator import select_functions, trace
from symdyn.codegen.printer import count_ops
from symdyn.multibody.branches import Branches
from symdyn.readers.load import load_robot
from symdyn.readers.options import LoadOptions

TABLE = ("inverse_dynamics,mass_matrix,forward_dynamics,mass_matrix_inverse,coriolis_matrix,"
         "centroidal_momentum_matrix,inverse_dynamics_derivatives,forward_dynamics_derivatives,regressor")


def share(model, branches, fn):
    """(operations of the trunk, of one branch each {branch: ops}, of several) of fn's traced program."""
    program = trace(model, fn)
    reads = {}
    for arg, symbols in program.inputs.items():
        for i, s in enumerate(symbols):
            b = branches.entry.get((arg, i))
            reads[s] = frozenset() if b is None else frozenset([b])
    trunk, several, one = 0, 0, collections.Counter()
    for symbol, expr in program.assignments:
        read = frozenset().union(*(reads.get(s, frozenset()) for s in expr.free_symbols))
        reads[symbol] = read
        ops = count_ops([expr])
        cost, owner = ops["mul"] + ops["add"], branches.owner(read)
        if owner is not None:
            one[owner] += cost
        elif read:
            several += cost
        else:
            trunk += cost
    return trunk, one, several


def line(model, branches, fn):
    trunk, one, several = share(model, branches, fn)
    total = trunk + several + sum(one.values())
    shapes = collections.defaultdict(list)
    for b in branches.names:
        shapes[branches.shape[b]].append(one[b])
    lanes = sum(max(costs) for costs in shapes.values())
    return (f"| {fn.name} | {total} | {trunk / total:.0%} | {sum(one.values()) / total:.0%} | "
            f"{' '.join(str(one[b]) for b in branches.names)} | {several / total:.0%} | "
            f"{total / (trunk + several + lanes):.2f} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("robot")
    parser.add_argument("--floating-base", action="store_true")
    parser.add_argument("--mimic", default="reduced")
    parser.add_argument("--functions", default=TABLE)
    args = parser.parse_args()
    loaded = load_robot(args.robot, LoadOptions(floating_base=args.floating_base, mimic=args.mimic))
    model = getattr(loaded, "model", loaded)
    branches = Branches(model)
    groups = collections.Counter(branches.shape.values())
    print(f"{model.name}: {len(branches.names)} branches, shapes of {sorted(groups.values(), reverse=True)} branches\n")
    print("| function | mul+add | trunk | one branch | per branch | several | ceiling |")
    print("|---|---:|---:|---:|---|---:|---:|")
    for fn in select_functions(args.functions.split(","), model):
        print(line(model, branches, fn))


if __name__ == "__main__":
    main()
