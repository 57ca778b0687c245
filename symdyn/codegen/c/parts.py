"""Every load and store of the C code (Dialect), and large functions cut into parts a compiler handles well.

gcc -O2 grows faster than linearly with one basic block (a 100-link Coriolis matrix, 95k statements, ran
out of memory at 18 GB): a function above tuning.split_above statements becomes a chain of static,
non-inlined parts of at most `part_size` statements. A value read in a later part than its own goes through
the public function's array `w` (a slot is reused after its last reader); the rest stays local to its part.
Only the first part of a single-state function reads the input arrays, and writes the outputs of constants
and inputs first (outputs must not overlap inputs: docs/api.md, "Pass output arrays that do not overlap the
inputs"). The lanes of a batch entry are cut the same way (batch.py LaneDialect): each part is a loop over
the lanes of a block of states, `w` a block [slot][lane], and every part loads the inputs it reads.
"""
import heapq
from dataclasses import dataclass, field
from typing import List, Tuple


@dataclass
class Part:
    args: Tuple[str, ...]               # input arrays it reads
    lines: List[str] = field(default_factory=list)
    statements: int = 0                 # the function's statements (Units) it computes
    defs: Tuple[str, ...] = ()          # the symbols they define
    outputs: Tuple[str, ...] = ()       # the output arrays it writes


class Dialect:
    """Every line of C statement text: how a function reads its inputs, the workspace `w` and writes its
    outputs, one value per entry (the single-state function's). The lanes of a batch entry print them
    as blocks (batch.py LaneDialect)."""
    #: False: the first part loads the inputs and later parts read them from `w`; True: every part
    #: loads the inputs it reads from their arrays (a batch block of inputs is there for all parts)
    inputs_everywhere = False
    workspace = "w"
    prefix, lane = "", ""               # of every array's name, after every index (the lanes': sd_, [sd_k])

    def __init__(self, real="double"):
        self.real = real

    def at(self, array, index):
        return f"{self.prefix}{array}[{index}]{self.lane}"

    def load_input(self, sym, arg, flat):
        return f"const {self.real} {sym} = {self.at(arg, flat)};"

    def load(self, sym, slot):
        return f"const {self.real} {sym} = {self.at(self.workspace, slot)};"

    def store(self, slot, sym):
        return f"{self.at(self.workspace, slot)} = {sym};"

    def output(self, name, flat, rhs):
        """The store of one output entry (None: this dialect leaves it out)."""
        return f"{name}[{flat}] = {rhs};"

    def zeros(self, name, start, stop):
        return f"for (int sd_i = {start}; sd_i < {stop}; ++sd_i) {name}[sd_i] = 0;"

    def unused(self, name):
        return f"(void){self.prefix}{name};"

    def lines(self, unit):
        return unit.lines


def split(units, inputs, args, results, part_size, dialect, constants=None):
    """The parts of one function and the size of its workspace `w`. units: [Unit] in program order; inputs:
    [(symbol, arg, index)] that the function uses; args: its input arrays; results: [(output array, flat index,
    C expression, symbols it uses)]; dialect: how the parts print their loads and stores; constants: the lines
    of the first part's stores of the outputs of constants and inputs, [(output array, flat index, C
    expression)] -> [line] (None: one store each, dialect.output)."""
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
        parts.append(_part(p, chunk, inputs, args, placed[p], (slots, home, order), (dialect, constants)))
        for sym in needs[p]:         # read for the last time in p (its loads may sit anywhere in p)
            if last[sym] == p:
                heapq.heappush(free, slots[sym])
    return parts, width


def _part(p, chunk, inputs, args, placed, where, printers):
    """The lines of one part: a value from an earlier part (or an input, inputs_everywhere) loaded just before its
    first use, an output written just after its last operand (short live ranges: cheap register allocation).
    where: ({symbol: its slot of w}, {symbol: the part that defines it}, {symbol: its rank in program order});
    printers: (dialect, constants) as split's."""
    slots, home, order = where
    dialect, constants = printers
    everywhere = dialect.inputs_everywhere
    source = {sym: (arg, i) for sym, arg, i in inputs}
    part = Part((), statements=len(chunk), defs=tuple(s for unit in chunk for s in unit.defs))
    lines, loaded, read, written = part.lines, set(), set(), []

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
        if line is None:
            return []
        written.append(name)
        return fetch(uses) + [line]

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
    if p == 0 and constants:                        # the inputs are loaded above: nothing to fetch
        lines += constants([result[:3] for result in ready])
        written += [result[0] for result in ready]
    elif p == 0:
        lines += [line for result in ready for line in write(*result)]
    for k, unit in enumerate(chunk):
        lines += fetch(unit.uses)
        lines += dialect.lines(unit)
        lines += store(unit.defs)
        lines += [line for result in after.get(k, []) for line in write(*result)]
    part.args = tuple(a for a in args if a in read)
    part.outputs = tuple(dict.fromkeys(written))    # only those it writes: no unused parameter (-Wextra)
    defined = ([sym for sym, _, _ in inputs] if p == 0 and not everywhere else []) + list(part.defs)
    if not any(s in slots for s in loaded | set(defined)):             # w neither read nor written
        lines.append(dialect.unused(dialect.workspace))
    return part


def one_piece(units, results, zeros, dialect, tuning):
    """The statements of a function in one piece (after its input loads). From tuning.early_stores output entries
    on, each is written just after its last operand (not held, spilled, to the end), those of inputs and constants
    first, runs of exact zeros as loops. results: as split's; zeros: the (output, flat index) of exact zeros."""
    if len(results) < tuning.early_stores:           # a few entries: held in registers to the end
        return [line for unit in units for line in unit.lines] + [dialect.output(*r[:3]) for r in results]
    at = {sym: k for k, unit in enumerate(units) for sym in unit.defs}
    first, after = [], {}
    for name, flat, rhs, uses in results:
        k = max((at[s] for s in uses if s in at), default=None)
        (first if k is None else after.setdefault(k, [])).append((name, flat, rhs))
    lines = constant_stores(first, zeros, dialect, tuning)
    for k, unit in enumerate(units):
        lines += unit.lines + [dialect.output(*r) for r in after.get(k, [])]
    return lines


def constant_stores(entries, zeros, dialect, tuning):
    """Stores of entries that need no statement, runs of exact zeros (`zeros`) as loops."""
    lines, k = [], 0
    while k < len(entries):
        name, flat, rhs = entries[k]
        end = k
        while ((name, flat) in zeros and end + 1 < len(entries) and entries[end + 1][0] == name
               and entries[end + 1][1] == flat + end + 1 - k and (name, entries[end + 1][1]) in zeros):
            end += 1
        if end + 1 - k >= tuning.zero_run:
            stop = flat + end + 1 - k
            lines += [dialect.zeros(name, a, min(a + tuning.zero_chunk, stop))
                      for a in range(flat, stop, tuning.zero_chunk)]
            k = end + 1
        else:
            lines.append(dialect.output(name, flat, rhs))
            k += 1
    return lines
