"""The batch entries of the C functions: a pure plan, then the lanes it asks for.

`plan` decides from a function's size alone how `<f>_batch(count, ...)` runs: on blocks of states stored
structure-of-arrays ([entry][lane]) in one loop over the lanes ("lanes") or several ("lane parts": compile
time), or as a loop of single calls ("single", with the reason). `lanes` prints the loops (parts.py's cutting).
"""
import math
from dataclasses import dataclass

from .parts import Dialect, split
from .trig import lane_lines

LANES, LANE_PARTS, SINGLE = "lanes", "lane parts", "single"


@dataclass(frozen=True)
class Batch:
    """How the batch entry of one function runs: LANES, LANE_PARTS or SINGLE (a loop of single calls,
    `reason` says why)."""
    kind: str
    reason: str = ""


def plan(costs, tuning, workspace=lambda k: 0):
    """[Batch] of each function. costs: [(statements, reals read and written per state[, sines and cosines])];
    workspace(k): function k's lane workspace in parts. Lane parts share tuning.lane_budget, in function order."""
    budget, plans = tuning.lane_budget, []
    for k, (statements, entries, *trig) in enumerate(costs):
        batch = _plan_one(statements, entries, budget, tuning, sum(trig))
        if batch.kind == LANE_PARTS:
            if workspace(k) + entries > tuning.batch_entries:
                batch = Batch(SINGLE, f"its blocks and workspace would exceed {tuning.batch_entries} entries per lane")
            else:
                budget -= statements
        plans.append(batch)
    return plans


def _plan_one(statements, entries, budget, tuning, trig=0):
    if entries > tuning.batch_entries:
        return Batch(SINGLE, f"its blocks would exceed {tuning.batch_entries} entries per lane")
    if statements + tuning.trig_statements * trig <= tuning.lane_work * entries:
        return Batch(SINGLE, f"it computes fewer than {tuning.lane_work} statements per entry it moves")
    if statements <= tuning.lane_statements:
        return Batch(LANES)
    if statements > budget:
        return Batch(SINGLE, f"the module's lane parts are at their budget of {tuning.lane_budget} statements "
                             "(compile time; see symdyn/codegen/c/tuning.py): generate fewer functions to give it lanes")
    return Batch(LANE_PARTS)


def lanes(f, batch, real, tuning):
    """(parts, workspace size) of the lane loops of a function planned LANES or LANE_PARTS; sets its output blocks."""
    for o in f["outputs"]:
        o.update(output_block(o["results"], o["numbers"]))
    blocks = {(o["name"], j): k for o in f["outputs"] for j, k in enumerate(o["src"])}
    size = tuning.lane_part if batch.kind == LANE_PARTS else max(1, len(f["units"]))
    return split(f["units"], f["flat_inputs"], f["args"], f["placed"], size, LaneDialect(real, blocks))


class LaneDialect(Dialect):
    """The lane loops of a batch entry: blocks [entry][lane] named sd_<array> (workspace sd_w); each part loads the
    inputs it reads, and stores each distinct computed output entry once (blocks: {(output, flat): entry, -1})."""
    inputs_everywhere = True
    prefix, lane = "sd_", "[sd_k]"

    def __init__(self, real, blocks):
        super().__init__(real)
        self.blocks, self.stored = blocks, set()

    def output(self, name, flat, rhs):
        k = self.blocks[name, flat]
        if k < 0 or (name, k) in self.stored:
            return None
        self.stored.add((name, k))
        return f"{self.at(name, k)} = {rhs};"

    def lines(self, unit):
        return lane_lines(unit.lines)


def output_block(results, numbers):
    """Where each output entry goes between the lane loop and the rows. The loop stores each distinct computed
    expression once (`block` entries: the Panda's regressor 275 of 686); `src[j]`: column j's block entry, or -1
    for a constant written from `fill` (j, literal; zeros left out). sd_scatter copies 4 columns at a time: four
    constants are one vector, in a mixed group only +0.0 (a row of zeros) stays out of the block.
    results: (index, printed value) per entry; numbers: each entry's constant value, else None."""
    values = [rhs for _, rhs in results]
    plus_zero = [n == 0 and math.copysign(1.0, n) > 0 if n is not None else False for n in numbers]
    constant = [n is not None for n in numbers]
    for g in range(0, len(values) - 3, 4):
        if not all(constant[g:g + 4]):           # a mixed group: only +0.0 stays out of the block
            for j in range(g, g + 4):
                constant[j] = constant[j] and plus_zero[j]
    block = {}                                   # each distinct computed expression's entry, in order
    src = [-1 if c else block.setdefault(v, len(block)) for v, c in zip(values, constant)]
    fill = [(j, v) for j, (v, c, z) in enumerate(zip(values, constant, plus_zero)) if c and not z]
    return {"block": len(block), "src": src, "fill": fill}

