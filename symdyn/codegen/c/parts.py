"""Large C functions cut into parts that a compiler handles well.

gcc -O2 grows faster than linearly with the size of one straight-line function (one basic block of
tens of thousands of statements for register allocation and scheduling): the Coriolis matrix of a
100-link chain (95k statements) ran out of memory at 18 GB. A long function (above the backend's
SPLIT_ABOVE statements) therefore becomes a chain of static, non-inlined parts of at most
`part_size` statements, run one after the other by the public function. A value computed in one part and read in a later
one goes through the public function's local array `w` (its slot is reused once its last reader
has loaded it); everything else stays a local constant of its part. Small functions (every
function of a 7-DoF arm) stay one piece, so their code and speed do not change.

Of a single-state function, only the first part reads the input arrays. It loads the entries the
function uses at its top, but then writes the outputs of constants and inputs alone before its statements,
and the first of these (the block of sines and cosines, c.py `_trig_block`) copies its angles from the input
array itself, as the one-piece function does: an output array must not overlap an input, in parts or in one
piece (docs/api.md, "Pass output arrays that do not overlap the inputs").

The lanes of a batch entry are cut the same way (a Dialect prints the loads and stores: c.py LaneDialect):
each part is a loop over the lanes of a block of states, `w` is a block [slot][lane], and every part loads
the inputs it reads from their blocks.
"""
import heapq
from dataclasses import dataclass, field
from typing import List, Tuple


@dataclass
class Unit:
    """One C statement (or a sincos pair): the symbols it defines and uses, and its lines."""
    defs: Tuple[str, ...]
    uses: frozenset
    lines: List[str]


@dataclass
class Part:
    args: Tuple[str, ...]               # input arrays it reads
    lines: List[str] = field(default_factory=list)
    statements: int = 0                 # the function's statements (Units) it computes
    defs: Tuple[str, ...] = ()          # the symbols they define


class Dialect:
    """How a part reads and writes its arrays: the single-state function's, one value per entry of
    `w` and of each argument. The lanes of a batch entry print them as blocks (c.py LaneDialect)."""
    #: False: the first part loads the inputs and later parts read them from `w`; True: every part
    #: loads the inputs it reads from their arrays (a batch block of inputs is there for all parts)
    inputs_everywhere = False
    workspace = "w"

    def __init__(self, real="double"):
        self.real = real

    def load_input(self, sym, arg, flat):
        return f"const {self.real} {sym} = {arg}[{flat}];"

    def load(self, sym, slot):
        return f"const {self.real} {sym} = {self.workspace}[{slot}];"

    def store(self, slot, sym):
        return f"{self.workspace}[{slot}] = {sym};"

    def output(self, name, flat, rhs):
        """The store of one output entry (None: this dialect leaves it out)."""
        return f"{name}[{flat}] = {rhs};"

    def unused(self, name):
        return f"(void){name};"

    def lines(self, unit):
        return unit.lines


def split(units, inputs, args, results, outputs, part_size, real="double", dialect=None):
    """The parts of one function and the size of its workspace `w`.

    units: [Unit] in program order; inputs: [(symbol, arg, index)] of the inputs the function uses;
    args: the function's input arrays; results: [(output array, flat index, C expression, symbols it
    uses)]; outputs: the names of the output arrays; real: the C type of the values; dialect: how the
    parts print their loads and stores (default: Dialect(real)).
    """
    dialect = dialect or Dialect(real)
    count = -(-len(units) // part_size)
    size = -(-len(units) // count)                   # balanced: parts differ by one statement at most
    chunks = [units[i:i + size] for i in range(0, len(units), size)]
    home = {sym: 0 for sym, _, _ in inputs}
    order = {sym: k for k, (sym, _, _) in enumerate(inputs)}
    for p, chunk in enumerate(chunks):
        for unit in chunk:
            for sym in unit.defs:
                home[sym] = p
                order[sym] = len(order)
    # each output is written by the part that computes the last of its operands
    placed = [[] for _ in chunks]
    for name, flat, rhs, uses in results:
        placed[max((home[s] for s in uses), default=0)].append((name, flat, rhs, uses))
    free_inputs = {sym for sym, _, _ in inputs} if dialect.inputs_everywhere else set()
    needs = [set() for _ in chunks]                  # symbols each part reads from earlier parts' w
    last = {}
    for p, chunk in enumerate(chunks):
        for uses in [u.uses for u in chunk] + [uses for *_, uses in placed[p]]:
            for sym in uses:
                if home[sym] < p and sym not in free_inputs:
                    needs[p].add(sym)
                    last[sym] = max(last.get(sym, p), p)
    slots, free, width = {}, [], 0
    parts = []
    for p, chunk in enumerate(chunks):
        defined = [sym for sym, _, _ in inputs] if p == 0 else []
        defined += [sym for unit in chunk for sym in unit.defs]
        for sym in (s for s in defined if s in last):
            if free:
                slots[sym] = heapq.heappop(free)
            else:
                slots[sym], width = width, width + 1
        parts.append(_part(p, chunk, inputs, args, placed[p], slots, home, order, outputs, dialect))
        for sym in needs[p]:         # read for the last time in p (its loads may sit anywhere in p)
            if last[sym] == p:
                heapq.heappush(free, slots[sym])
    return parts, width


def _part(p, chunk, inputs, args, placed, slots, home, order, outputs, dialect):
    """The lines of one part. A value from an earlier part (or, inputs_everywhere, an input) is loaded
    just before its first use and an output written just after its last operand: short live ranges
    keep register allocation cheap."""
    everywhere = dialect.inputs_everywhere
    source = {sym: (arg, i) for sym, arg, i in inputs}
    part = Part((), statements=len(chunk), defs=tuple(s for unit in chunk for s in unit.defs))
    lines, loaded, read = part.lines, set(), set()

    def fetch(uses):
        """The loads of the values of `uses` that come from outside the part, not loaded yet."""
        outside = sorted((s for s in uses if s not in loaded and (home[s] < p or everywhere and s in source)),
                         key=order.get)
        loaded.update(outside)
        read.update(source[s][0] for s in outside if everywhere and s in source)
        return [dialect.load_input(s, *source[s]) if everywhere and s in source else dialect.load(s, slots[s])
                for s in outside]

    def write(name, flat, rhs, uses):
        line = dialect.output(name, flat, rhs)
        return [] if line is None else fetch(uses) + [line]

    store = lambda syms: [dialect.store(slots[s], s) for s in syms if s in slots]
    after = {}                                       # unit index -> outputs written after it
    local = {s: k for k, unit in enumerate(chunk) for s in unit.defs}
    ready = []                                       # outputs of inputs and constants only
    for result in placed:
        k = max((local[s] for s in result[3] if s in local), default=None)
        (ready if k is None else after.setdefault(k, [])).append(result)
    if p == 0 and not everywhere:
        lines += [dialect.load_input(sym, arg, i) for sym, arg, i in inputs]
        lines += [dialect.unused(a) for a in args if a not in {arg for _, arg, _ in inputs}]
        lines += store(sym for sym, _, _ in inputs)
        loaded.update(source)
        read.update(args)
    if p == 0:
        lines += [line for result in ready for line in write(*result)]
    for k, unit in enumerate(chunk):
        lines += fetch(unit.uses)
        lines += dialect.lines(unit)
        lines += store(unit.defs)
        lines += [line for result in after.get(k, []) for line in write(*result)]
    part.args = tuple(a for a in args if a in read)
    lines += [dialect.unused(name) for name in outputs if name not in {r[0] for r in placed}]
    defined = ([sym for sym, _, _ in inputs] if p == 0 and not everywhere else []) + list(part.defs)
    if not any(s in slots for s in loaded | set(defined)):             # w neither read nor written
        lines.append(dialect.unused(dialect.workspace))
    return part


#: runs of at least ZERO_RUN exact-zero entries of an output are written by loops of at most ZERO_CHUNK
#: entries (64 bytes of doubles), which gcc turns into a few 16-byte stores; one loop over a longer run
#: becomes `rep stos`, whose start-up cost made the Panda's regressor slower than single stores
#: (benchmarks/RESULTS.md, section 21)
ZERO_RUN, ZERO_CHUNK = 4, 8
#: functions of fewer output entries write them at the end, as before (solo12's inverse dynamics, 18
#: entries, was slower with early stores); from 32 entries on (a 6x6 or 7x7 matrix, the Panda's 6x7
#: centroidal map) early stores were as fast or faster in every function timed (benchmarks/RESULTS.md,
#: "Centroidal map, issue 11, third pass": the Panda's centroidal map 9% faster)
EARLY_STORES = 32


def one_piece(units, results, zeros=frozenset()):
    """The statements of a function in one piece (after its input loads), each output entry written just
    after the statement that computes the last of its operands: written at the end instead, every entry
    would be held (spilled) until then. Entries of inputs and constants come first, a run of ZERO_RUN or
    more exact zeros as loops of ZERO_CHUNK entries. results: [(output array, flat index, expression text,
    symbols it uses)]; zeros: the (output array, flat index) of the entries that are exact zeros."""
    at = {sym: k for k, unit in enumerate(units) for sym in unit.defs}
    if len(results) < EARLY_STORES:                  # a few entries: held in registers to the end
        return [line for unit in units for line in unit.lines] + [f"{n}[{f}] = {r};" for n, f, r, _ in results]
    first, after = [], {}
    for name, flat, rhs, uses in results:
        k = max((at[s] for s in uses if s in at), default=None)
        (first if k is None else after.setdefault(k, [])).append((name, flat, rhs))
    lines = constant_stores(first, zeros)
    for k, unit in enumerate(units):
        lines += unit.lines
        lines += [f"{name}[{flat}] = {rhs};" for name, flat, rhs in after.get(k, [])]
    return lines


def constant_stores(entries, zeros):
    """Stores of entries that need no statement, runs of exact zeros (`zeros`) as loops."""
    lines, k = [], 0
    while k < len(entries):
        name, flat, rhs = entries[k]
        end = k
        while ((name, flat) in zeros and end + 1 < len(entries) and entries[end + 1][0] == name
               and entries[end + 1][1] == flat + end + 1 - k and (name, entries[end + 1][1]) in zeros):
            end += 1
        if end + 1 - k >= ZERO_RUN:
            stop = flat + end + 1 - k
            lines += [f"for (int sd_i = {a}; sd_i < {min(a + ZERO_CHUNK, stop)}; ++sd_i) {name}[sd_i] = 0;"
                      for a in range(flat, stop, ZERO_CHUNK)]
            k = end + 1
        else:
            lines.append(f"{name}[{flat}] = {rhs};")
            k += 1
    return lines

