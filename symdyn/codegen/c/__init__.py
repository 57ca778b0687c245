"""The C backend: one C99 header and source per robot (templates/module.h.jinja, module.c.jinja)."""
import math

import symengine as se

from . import tiny
from .backends import PART_SIZE, Backend, used_symbols
from .parts import Dialect, Unit, split
from .printer import NonFiniteError, Printer, number

#: a C function of more statements than SPLIT_ABOVE is cut into parts of at most PART_SIZE (see
#: parts.py). Every function of a 7-DoF arm stays one piece (largest: 1326 statements, xarm7); gcc -O2
#: on a 50-link Coriolis matrix in parts of 250 / 500 / 1000 / 2000 statements: 6.4 / 7.8 / 11 / 15 s.
SPLIT_ABOVE = 2000
#: the batch entry of a function keeps a block of lanes (C macro <MODULE>_BATCH_LANES, 16 by default) of
#: every input and output on the stack; above this many doubles per state it loops the single-state
#: function instead (at most 512 KB of blocks: an OpenMP thread's stack may be 2 MB; the Panda's
#: regressor has 707)
BATCH_ENTRIES = 4096
#: nor does a function with fewer statements than LANE_WORK per entry it reads or writes: copying its
#: arrays into and out of the blocks costs more than the lanes save. Single calls / batch in lanes, one
#: thread, 16 lanes, 4096 states (benchmarks/RESULTS.md section 37): base_parameters, 0.11-0.18 statements
#: per entry, 0.43-0.65x (tiny.py's path: 1.4-1.8x); planar6's regressor, 0.28, 0.82x; solo12 floating's
#: frame_jacobian, 0.58, 0.89-0.98x (1.4-1.6x at 256 states); planar2's frame_jacobian, 0.64, 7.7x;
#: stanford's regressor, 0.68, 1.4x; z1's regressor, 0.72, 2.1x. solo12 floating's regressor and
#: base_regressor (0.41, 0.43), planar2's regressor (0.42) and planar6's base_regressor (0.50) gain
#: 1.45-2.5x in lanes, but no threshold takes them without that frame Jacobian (0.7 before: the Panda only)
LANE_WORK = 0.6
#: a function of more statements than this runs its lanes in parts of at most LANE_PART statements
#: (see LaneDialect): gcc's time on one lane loop grows faster than its
#: length (register allocation over vectors): talos_reduced with a free-flyer, load_c's flags, its 11
#: lane loops of up to 1925 statements took more than 300 s of CPU where the loops of single calls
#: take ~90 s (issue 10's target: 120 s); its inverse dynamics (1538 statements) alone 6.7 s against
#: 1.0 s. At 1200 (fitted on the Panda, at most 1132) the xarm7's coriolis_nu / coriolis_eta /
#: diagonalized_forward_dynamics (1331 / 1214 / 1281) looped single calls, 1.0-1.1x instead of 4.5-5.3x
#: in lanes, for 2.4-2.7 s more gcc CPU each (the module: 21-22 -> 28-30 s; benchmarks/RESULTS.md
#: section 35; talos_reduced floating gains 2 lane loops: 66-74 -> 75-80 s).
LANE_STATEMENTS = 1400
#: the statements of one lane part
LANE_PART = 250
#: lanes cost gcc about 3.5x the single function's compile time (talos_reduced floating's Coriolis matrix,
#: 5823 statements, load_c's flags: 1.8 s of CPU without lanes, 6.5 s in lane parts of 250 statements, 6.3 s
#: of 125, 8.0 s of 500). A module puts at most this many statements into lane parts, in the order of its
#: functions (the function table's: inverse dynamics, mass matrix, ... first), skipping those that do not
#: fit; the others loop single calls. talos_reduced floating's full set (issue 10's target: gcc -O2 in
#: 120 s) with load_c's flags, quiet machine: 77 s of CPU without lane parts (-O2: 78 s), 105 s with 24.5k
#: statements in them (budget 25000), 96 s at 20000 (-O2: 96 s); under load, 171 s with all of its 75k. At
#: 20000 its inverse dynamics, mass matrix, M^-1, forward dynamics, Coriolis matrix and nonlinear effects
#: (19.4k statements) get lanes: 2.1-3.1x the loop of single calls, 1.0x before (benchmarks/RESULTS.md
#: section 39).
LANE_BUDGET = 20000
#: the sin and cos of a function's input angles are computed in arrays of a multiple of this many
#: entries (zeros after the angles): gcc vectorizes a loop of a constant count without a scalar
#: remainder (4 doubles: one AVX2 vector, two SSE2)
TRIG_PAD = 4
#: the largest finite float
FLT_MAX = 3.4028234663852886e38


class CPrinter(Printer):
    #: libm's functions (and pow), and the module's own sd_sign
    funcs = {"sin": "sin", "cos": "cos", "sqrt": "sqrt", "tanh": "tanh", "sign": "sd_sign", "pow": "pow"}

    def power(self, base, exponent):
        return f"{self.funcs['pow']}({self._print(base)}, {self.literal(exponent)})", 2


class CFloatPrinter(CPrinter):
    """float32: float literals (the suffix f: a bare 0.5 would turn the expression into double
    arithmetic) and libm's float functions."""
    funcs = {name: c if c.startswith("sd_") else c + "f" for name, c in CPrinter.funcs.items()}

    def literal(self, value):
        text = number(value)
        if abs(float(text)) > FLT_MAX:
            raise NonFiniteError(f"the generated code would contain the constant {text}, beyond float32's range")
        return text + "f"


class TrigLine(str):
    """A line of C that computes sin or cos (libm, sd_sincos, or the vectorized block of sd_sincos_n),
    printed as it is in the single-state function; `calls`: the helper of trig.c.jinja it calls there
    (sd_sincos, sd_sincos_n; None: libm or none); `lane` holds the statements that replace it in the
    lane loop of a batch entry, each a call of sd_sincos_lane (none: a line of the block that the lanes
    do without)."""

    def __new__(cls, text, lane=(), calls=None):
        line = super().__new__(cls, text)
        line.lane = list(lane)
        line.calls = calls
        return line


def _trig_helpers(f):
    """The helpers of trig.c.jinja that the statements of a function (the template's dict) call:
    sd_sincos and sd_sincos_n in the single-state function (TrigLine.calls), sd_sincos_lane in its lanes."""
    trig = [line for line in f["lines"] if isinstance(line, TrigLine)]
    helpers = {line.calls for line in trig if line.calls}
    if f["lanes"] is not None and any(line.lane for line in trig):
        helpers.add("sd_sincos_lane")
    return helpers


def _program_calls(program, function):
    """Whether an expression of the program (an assignment or a result) calls `function`, a symengine
    class (se.sign: the module then needs its helper sd_sign)."""
    return any(e.atoms(function) for e in [e for _, e in program.assignments] + list(program.results))


def _trig(e):
    name = type(e).__name__
    return (name, e.args[0]) if name in ("sin", "cos") else None


class CBackend(Backend):
    name = "c"
    extensions = (".h", ".c")
    templates = ("module.h.jinja", "module.c.jinja")
    printer = CPrinter()
    split_above = SPLIT_ABOVE
    real = "double"            # the C type of every array and value
    suffix = ""                # of the module name: a float32 module sits beside the double one

    def files(self, module):
        return super().files(module + self.suffix)

    def render(self, model, programs, module, params_mode, split_above=..., part_size=PART_SIZE):
        files = super().render(model, programs, module + self.suffix, params_mode, split_above, part_size)
        return dict(zip(self.files(module), files.values()))

    def statements(self, assignments, inputs):
        """One const double per assignment; sin and cos of the angles of the inputs alone (no
        intermediate value) all in one block first (see _trig_block), those of other angles in pairs
        by sd_sincos. inputs: {input entry's symbol name: (argument, flat index)}."""
        defined = {str(s) for s, _ in assignments}
        pairs = {}
        for s, e in assignments:
            t = _trig(e)
            if t:
                pairs.setdefault(t[1], {})[t[0]] = s
        early = [angle for angle in pairs if not {str(u) for u in used_symbols(angle)} & defined]
        out = [self._trig_block(early, pairs, inputs)] if early else []
        early = set(early)
        for s, e in assignments:
            t = _trig(e)
            if t and t[1] in early:
                continue
            uses = used_symbols(e)
            if t and len(pairs[t[1]]) == 2:
                if t[0] == "sin":
                    c, angle = pairs[t[1]]["cos"], self.printer(t[1])
                    call = TrigLine(f"sd_sincos({angle}, &{s}, &{c});",
                                    _lane_sincos(angle, s, c), calls="sd_sincos")
                    out.append(Unit((str(s), str(c)), uses, [f"{self.real} {s}, {c};", call]))
                continue
            line = f"const {self.real} {s} = {self.printer(e)};"
            if t and t[1].is_Symbol:                  # sin or cos of an input or intermediate value alone
                line = TrigLine(line, _lane_one(str(s), t[0], str(t[1]), self.real))
            out.append(Unit((str(s),), uses, [line]))
        return out

    def _trig_block(self, angles, pairs, inputs):
        """sin and cos of `angles` (in order of first use) in one vectorized loop, sd_sincos_n, over
        arrays padded with zeros to a multiple of TRIG_PAD entries; each sin and cos is then a
        constant read from them. inputs: as for statements (runs of input entries are copied)."""
        n = -(-len(angles) // TRIG_PAD) * TRIG_PAD
        printed = [self.printer(a) for a in angles]
        lines = [TrigLine(f"{self.real} sd_angle[{n}], sd_sin[{n}], sd_cos[{n}];")]
        lines += [TrigLine(f"sd_angle[{k}] = {a};") for k, a in enumerate(printed)]
        lines += [TrigLine(f"sd_angle[{k}] = 0;") for k in range(len(angles), n)]
        lines += [TrigLine(f"memcpy(sd_angle + {k}, {arg} + {j}, {m} * sizeof sd_angle[0]);")
                  for k, arg, j, m in _input_runs(angles, inputs)]
        lines.append(TrigLine(f"sd_sincos_n(sd_angle, sd_sin, sd_cos, {n});", calls="sd_sincos_n"))
        defs = []
        for k, (a, angle) in enumerate(zip(angles, printed)):
            got = {trig: str(name) for trig, name in pairs[a].items()}
            reads = [f"{got[trig]} = sd_{trig}[{k}]" for trig in ("sin", "cos") if trig in got]
            defs += [got[trig] for trig in ("sin", "cos") if trig in got]
            if len(got) == 2:                         # one sd_sincos_lane per angle in the lanes
                lane = _lane_sincos(angle, got["sin"], got["cos"], self.real)
            else:
                (trig, name), = got.items()
                lane = _lane_one(name, trig, angle, self.real)
            lines.append(TrigLine(f"const {self.real} " + ", ".join(reads) + ";", lane))
        return Unit(tuple(defs), frozenset().union(*(used_symbols(a) for a in angles)), lines)

    def prototype(self, module, name, args, outputs):
        """The C declaration of one function (without the semicolon): input arrays, then one out
        pointer per output. load_c declares the functions of a header with it."""
        return (f"void {module}_{name}(" + "".join(f"const {self.real} *{a}, " for a in args)
                + ", ".join(f"{self.real} *{o}" for o in outputs) + ")")

    def batch_params(self, args, outputs):
        """The parameters of the batch entry: `count`, the input arrays, then the output arrays."""
        return ["long count", *(f"const {self.real} *{a}" for a in args), *(f"{self.real} *{o}" for o in outputs)]

    def batch_prototype(self, module, name, args, outputs):
        """The declaration of the batch entry: `count` states, every array of shape (count, n)."""
        return f"void {module}_{name}_batch(" + ", ".join(self.batch_params(args, outputs)) + ")"

    def lie_prototypes(self, module):
        """{name: declaration (without the semicolon)} of the configuration functions: the header
        declares them, lie.c.jinja defines them, load_c declares them to cffi."""
        r = self.real
        return {"neutral": f"void {module}_neutral({r} *q)",
                "integrate": f"void {module}_integrate(const {r} *q, const {r} *v, {r} dt, {r} *q_out)",
                "difference": f"void {module}_difference(const {r} *q0, const {r} *q1, {r} *v)"}

    def extend(self, ctx):
        functions = ctx["functions"]
        ctx["real"] = self.real
        ctx["lie_prototypes"] = self.lie_prototypes(ctx["module"])
        budget = LANE_BUDGET                            # statements left for lane parts, in function order
        for f in functions:
            outs = [o["name"] for o in f["outputs"]]
            f["prototype"] = self.prototype(ctx["module"], f["name"], f["args"], outs)
            f["batch_prototype"] = self.batch_prototype(ctx["module"], f["name"], f["args"], outs)
            f["batch_params"] = ", ".join(self.batch_params(f["args"], outs))
            f["arg_sizes"] = {a: math.prod(f["arg_shapes"][a]) for a in f["args"]}
            budget -= self.plan_batch(f, budget)
        lane_functions = [f for f in functions if f["lanes"] is not None]
        ctx["uses_gather"] = any(f["args"] for f in lane_functions)     # static helpers only where used
        ctx["uses_scatter"] = any(not o["mapped"] for f in lane_functions for o in f["outputs"])
        ctx["uses_scatter_map"] = any(o["mapped"] for f in lane_functions for o in f["outputs"])
        ctx["uses_tile_rows"] = any(_rows_share_l1_sets(o["size"], self.real)
                                    for f in lane_functions for o in f["outputs"])
        trig = set().union(*map(_trig_helpers, functions))
        ctx["uses_lane_sincos"] = "sd_sincos_lane" in trig
        ctx["uses_sincos"] = "sd_sincos" in trig
        ctx["uses_sincos_n"] = "sd_sincos_n" in trig
        ctx["uses_trig"] = bool(trig)
        ctx["uses_sign"] = any(_program_calls(f["program"], se.sign) for f in functions)
        ctx["splits"] = any(f["parts"] or f["lane_parts"] for f in functions)
        ctx["uses_memcpy"] = any(f["tiny"] and f["tiny"]["kind"] == "rows" for f in functions)
        ctx["uses_tiny"] = any(f["tiny"] for f in functions)
        ctx["uses_pick"] = any(f["tiny"] and f["tiny"].get("pick") for f in functions)
        ctx["pick_mask"] = tiny.MASK[self.real][0]          # the integer type of sd_pick's masks

    def plan_batch(self, f, budget):
        """How the batch entry of a function (the template's dict) runs: in one lane loop (f["lanes"]:
        its lines), in lane parts (f["lane_parts"], f["lanes"] = []), by tiny.py (f["tiny"]) or as a loop of
        single calls (f["no_lanes"]: why). `budget`: the statements the module may still put into lane parts.
        Returns the statements it put there."""
        plan = None if f["parts"] else tiny.elementwise(f["program"], self.real)
        f["lanes"], f["lane_parts"], f["lane_workspace"], f["no_lanes"] = None, [], 0, None
        statements = len(f["lines"])
        if plan:                                      # elementwise: lanes would only add the copies
            f["no_lanes"] = ("it is elementwise, and its law calls a function that its loop over the arrays "
                             "does not vectorize")
        elif not lanes_pay(f):
            f["no_lanes"] = (f"its blocks would exceed {BATCH_ENTRIES} entries per lane" if _entries(f) > BATCH_ENTRIES
                             else f"it computes fewer than {LANE_WORK} statements per entry it moves")
        elif statements > LANE_STATEMENTS and statements > budget:
            f["no_lanes"] = (f"the module's lane parts are at their budget of {LANE_BUDGET} statements (compile "
                             "time; see LANE_BUDGET in symdyn/codegen/c.py): generate fewer functions to give it "
                             "lanes")
        else:
            for o in f["outputs"]:
                o.update(_lane_block(o["results"], o["numbers"]))
            if statements <= LANE_STATEMENTS:
                f["lanes"] = _lane_body(f)
            else:
                parts, workspace = self.lane_parts(f)
                if workspace + _entries(f) <= BATCH_ENTRIES:
                    f["lanes"], f["lane_parts"], f["lane_workspace"] = [], parts, workspace
                else:
                    f["no_lanes"] = f"its blocks and workspace would exceed {BATCH_ENTRIES} entries per lane"
        f["tiny"] = None if f["parts"] or f["lanes"] is not None else self.tiny_batch(f, plan)
        return statements if f["lane_parts"] else 0

    def lane_parts(self, f):
        """(parts, workspace size) of the lanes of a function longer than LANE_STATEMENTS: its statements
        cut into parts of at most LANE_PART, each a loop over the lanes of a block (LaneDialect)."""
        blocks = {(o["name"], j): k for o in f["outputs"] for j, k in enumerate(o["src"])}
        return split(f["units"], f["flat_inputs"], f["args"], f["placed"], [o["name"] for o in f["outputs"]],
                     LANE_PART, dialect=LaneDialect(self.real, blocks))

    def tiny_batch(self, f, plan):
        """The batch entry of a function without lanes (tiny.py; not called for one with lanes): elementwise (`plan`), a loop over the flat
        arrays ({"kind": "elementwise", ...}); with outputs copied from its inputs, one state at a time
        with the copies by memcpy ({"kind": "rows", ...}); else None (a loop of single calls)."""
        parallel = -(-tiny.PARALLEL_ENTRIES // _entries(f))
        if plan and not plan["vector"]:      # tanh (smoothed Coulomb friction): the single calls are as fast
            return None
        if plan:
            tables, body = tiny.elementwise_lines(plan, self.printer, self.real)
            return {"kind": "elementwise", "block": plan["block"], "period": plan["size"] * plan["block"],
                    "args": plan["args"], "tables": tables, "body": body, "parallel": parallel,
                    "pick": tiny.picks(plan)}
        runs = tiny.copy_runs(f)
        if runs:
            return {"kind": "rows", "lines": tiny.rows_lines(f, runs, self.real), "runs": len(runs), "block": 1,
                    "parallel": parallel}
        return None


def _input_runs(angles, inputs):
    """[(k, arg, j, m)]: runs of m >= 2 angles that are the entries arg[j], arg[j + 1], ... of an input
    (inputs: {symbol name: (argument, flat index)}), at sd_angle[k], ...; the block copies them again
    by memcpy (gcc drops the single stores before it). The vectorized loop reads its angles in pairs
    (or fours): a pair written by two 8-byte stores cannot be forwarded to the 16-byte load, which then
    waits for the stores to reach the cache (the Panda's 7 angles: 47 -> 32 ns for the block alone);
    copied from the input, the loads read the input itself."""
    runs, k = [], 0
    entry = [inputs.get(str(a)) if a.is_Symbol else None for a in angles]
    while k < len(angles):
        m = 1
        while entry[k] is not None and k + m < len(angles) and entry[k + m] == (entry[k][0], entry[k][1] + m):
            m += 1
        if m >= 2:
            runs.append((k, *entry[k], m))
        k += m
    return runs


def _rows_share_l1_sets(size, real):
    """Whether the rows of an output of `size` entries are a multiple of 1 KB apart: 16 or more lanes of them then
    fall into a few sets of the L1 cache, and the copy out of the lane block may go 4 rows at a time
    (sd_tile_rows in module.c.jinja decides for the module's SD_LANES); the modules without such an output keep
    the copy without the test (benchmarks/RESULTS.md section 38)."""
    stride = size * (8 if real == "double" else 4)
    return stride & -stride >= 1024


def lanes_pay(f):
    """Whether the batch entry of a function (the template's dict) runs in lanes, else loops its single
    function: its blocks within BATCH_ENTRIES, and enough statements per entry."""
    entries = _entries(f)
    return entries <= BATCH_ENTRIES and len(f["lines"]) > LANE_WORK * entries


def _entries(f):
    """The entries of a function's inputs and outputs: doubles per state."""
    return sum(f["arg_sizes"].values()) + sum(o["size"] for o in f["outputs"])


class LaneDialect(Dialect):
    """The parts of a batch entry's lanes (parts.py): each part is a loop over the lanes of a block
    whose arrays are structure-of-arrays blocks [entry][lane], sd_<name> (the workspace: sd_w). Every
    part loads the inputs it reads from their blocks, and stores only the computed entries of the
    outputs, each distinct one once (blocks: {(output, flat index): block entry, -1: a constant})."""
    inputs_everywhere = True

    def __init__(self, real, blocks):
        super().__init__(real)
        self.blocks, self.stored = blocks, set()

    def load_input(self, sym, arg, flat):
        return f"const {self.real} {sym} = sd_{arg}[{flat}][sd_k];"

    def load(self, sym, slot):
        return f"const {self.real} {sym} = sd_{self.workspace}[{slot}][sd_k];"

    def store(self, slot, sym):
        return f"sd_{self.workspace}[{slot}][sd_k] = {sym};"

    def output(self, name, flat, rhs):
        k = self.blocks[name, flat]
        if k < 0 or (name, k) in self.stored:
            return None
        self.stored.add((name, k))
        return f"sd_{name}[{k}][sd_k] = {rhs};"

    def unused(self, name):
        return f"(void)sd_{name};"

    def lines(self, unit):
        return _lane_lines(unit.lines)


def _lane_block(results, numbers):
    """Where each entry of an output goes between the lane loop and the rows: the lane loop stores only
    the computed entries, each distinct expression once (`block`: (block entry, expression)), so that the
    block is small (the Panda's regressor: 275 of its 686 entries; a symmetric matrix: its upper
    triangle); `src[j]` is the block entry of column j, or -1 for a constant, written into the rows
    from `fill` (j, literal; zeros left out). sd_scatter_map copies columns 4 at a time: a group of four
    constants is one stored vector per row; in a group that mixes entries a zero comes from a row of
    zeros, any other constant goes through the block. results: (index, printed value) of each entry;
    numbers: the value of each entry that is a constant, else None (the output's "numbers")."""
    values = [rhs for _, rhs in results]
    plus_zero = [n == 0 and math.copysign(1.0, n) > 0 if n is not None else False for n in numbers]
    constant = [n is not None for n in numbers]
    for g in range(0, len(values) - 3, 4):
        if not all(constant[g:g + 4]):           # a mixed group: only +0.0 stays out of the block
            for j in range(g, g + 4):
                constant[j] = constant[j] and plus_zero[j]
    block, src = {}, []
    for v, c in zip(values, constant):
        src.append(-1 if c else block.setdefault(v, len(block)))
    fill = [(j, v) for j, (v, c, z) in enumerate(zip(values, constant, plus_zero)) if c and not z]
    return {"block": [(k, v) for v, k in block.items()], "src": src, "fill": fill,
            "mapped": src != list(range(len(values)))}


def _lane_body(f):
    """The statements of one lane of a batch block, in the order of _schedule, each block entry stored just after
    the statement that computes the last of its operands. Stored at the end, every entry would stay live over the
    whole loop: with 16 lanes a value is 2-4 vector registers, so they were spilled and reloaded (the Panda's
    regressor: ~780 spills; 207 -> 159 ns per state, benchmarks/RESULTS.md section 32)."""
    uses = iter(f["result_uses"])
    operands = {}                                     # block entry's expression -> the symbols it uses
    for o in f["outputs"]:
        for (_, rhs), used in zip(o["results"], uses):
            operands.setdefault((o["name"], rhs), {str(s) for s in used})
    stores = [(f"sd_{o['name']}[{k}][sd_k] = {rhs};", operands[o["name"], rhs])
              for o in f["outputs"] for k, rhs in o["block"]]
    order, after = _schedule(f["units"], [used for _, used in stores])
    lines = [stores[j][0] for j in after.get(None, [])]          # entries of inputs and constants alone
    for k in order:
        lines += _lane_lines(f["units"][k].lines) + [stores[j][0] for j in after.get(k, [])]
    return lines


def _schedule(units, store_uses):
    """The order of the units in a lane loop: a list schedule that keeps fewer values live than the program order.
    Among the units whose operands are all computed, it takes the one that ends the most live values (operands it
    reads last, counting the block stores it completes) minus the values it starts, the earliest in program order
    on a tie. A value of a 16-lane loop is 2 zmm registers, and the Panda's lane loops keep 10-110 values live on
    average: fewer live values, fewer spills (regressor: 90 -> 83 on average, its lane loop 64 -> 59 ns per state;
    coriolis_nu 84 -> 81; benchmarks/RESULTS.md section 33). store_uses: the symbols of each block entry. Returns
    (unit indices in order, {unit index: the stores it completes, in block order}; None: the stores of no unit)."""
    at = {s: k for k, u in enumerate(units) for s in u.defs}
    reads = [sorted({str(s) for s in u.uses} & at.keys()) for u in units]
    store_reads = [sorted(set(used) & at.keys()) for used in store_uses]
    unit_readers, store_readers = {}, {}              # symbol -> how many units / stores still to read it
    for symbols, readers in ((reads, unit_readers), (store_reads, store_readers)):
        for used in symbols:
            for s in used:
                readers[s] = readers.get(s, 0) + 1
    waiting = [len({at[s] for s in used}) for used in reads]
    store_waiting = [len({at[s] for s in used}) for used in store_reads]
    users, completes = [[] for _ in units], [[] for _ in units]
    for k, used in enumerate(reads):
        for d in {at[s] for s in used}:
            users[d].append(k)
    after = {}
    for j, used in enumerate(store_reads):
        for d in {at[s] for s in used}:
            completes[d].append(j)
        if not used:
            after.setdefault(None, []).append(j)
    starts = [sum(1 for s in u.defs if unit_readers.get(s) or store_readers.get(s)) for u in units]

    def gain(k):
        done = {}                                      # symbol -> the stores that k completes and that read it
        for j in completes[k]:
            if store_waiting[j] == 1:
                for s in store_reads[j]:
                    done[s] = done.get(s, 0) + 1
        ends = sum(1 for s in reads[k] if unit_readers[s] == 1 and store_readers.get(s, 0) == done.get(s, 0))
        return ends - starts[k], -k

    readers = {}                                       # symbol -> the units that read it
    for k, used in enumerate(reads):
        for s in used:
            readers.setdefault(s, []).append(k)
    store_units = [{at[s] for s in used} for used in store_reads]
    ready, order = {k for k, w in enumerate(waiting) if not w}, []
    gains = {k: gain(k) for k in ready}
    while ready:
        k = max(ready, key=gains.__getitem__)
        ready.remove(k)
        order.append(k)
        changed = set()                                # the units whose gain k's step may change
        for s in reads[k]:
            unit_readers[s] -= 1
            changed.update(readers[s])
        for j in completes[k]:
            store_waiting[j] -= 1
            changed.update(store_units[j])
            if not store_waiting[j]:
                after.setdefault(k, []).append(j)
                for s in store_reads[j]:
                    store_readers[s] -= 1
                    changed.update(readers.get(s, ()))
        for u in users[k]:
            waiting[u] -= 1
            if not waiting[u]:
                ready.add(u)
                changed.add(u)
        for u in changed & ready:
            gains[u] = gain(u)
    assert len(order) == len(units), "the units' uses form a cycle"
    return order, {k: sorted(js) for k, js in after.items()}


def _lane_lines(lines):
    """The lane statements of single-state lines: the same, except that sin and cos (TrigLine) go
    through sd_sincos_lane, which has no branch (so that the compiler vectorizes the block) and flags
    in `sd_far` an angle beyond its reduction's range: that state is then computed again by the
    single-state function. The block of sd_sincos_n becomes one sd_sincos_lane per angle (a loop over
    the angles inside the loop over the lanes would keep the latter from being vectorized)."""
    return [lane for line in lines for lane in (line.lane if isinstance(line, TrigLine) else [line])]


def _lane_one(name, trig, angle, real):
    """The lane statements of one sin or cos alone."""
    s, c = (name, f"{name}_cos") if trig == "sin" else (f"{name}_sin", name)
    unused = c if trig == "sin" else s
    # the unused value tested (NaN only where the angle is not finite: flagged already): left
    # dead, gcc 12 no longer if-converts the block and does not vectorize it
    return _lane_sincos(angle, s, c, real) + [f"sd_far |= {unused} != {unused};"]


def _lane_sincos(angle, s, c, real=None):
    """The lane statements of the sin and cos of one angle into s and c (declared first, as `real`, when
    given): sd_sincos_lane flags in sd_far an angle beyond the kernel's range."""
    return ([f"{real} {s}, {c};"] if real else []) + [f"sd_far |= sd_sincos_lane({angle}, &{s}, &{c});"]


class CFloat32Backend(CBackend):
    """--precision float32: the same module in single precision, named <robot>_f32 (.h, .c, functions)."""
    name = "c-float32"
    printer = CFloatPrinter()
    real = "float"
    suffix = "_f32"


C = CBackend()
C32 = CFloat32Backend()


def render_c(model, programs, module, params_mode, split_above=SPLIT_ABOVE, part_size=PART_SIZE):
    """(.h text, .c text); functions of more than `split_above` statements are cut into parts."""
    files = C.render(model, programs, module, params_mode, split_above, part_size)
    return files[f"{module}.h"], files[f"{module}.c"]
