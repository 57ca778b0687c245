"""Large C functions cut into parts that a compiler handles well.

gcc -O2 grows faster than linearly with the size of one straight-line function (one basic block of
tens of thousands of statements for register allocation and scheduling): the Coriolis matrix of a
100-link chain (95k statements) ran out of memory at 18 GB. A long function (above the backend's
SPLIT_ABOVE statements) therefore becomes a chain of static, non-inlined parts of at most
`part_size` statements, run one after the other by the public function. A value computed in one part and read in a later
one goes through the public function's local array `w` (its slot is reused once its last reader
has loaded it); everything else stays a local constant of its part. Small functions (every
function of a 7-DoF arm) stay one piece, so their code and speed do not change.

Only the first part reads the input arrays. It loads the entries the function uses at its top, but then
writes the outputs of constants and inputs alone before its statements, and the first of these (the block
of sines and cosines, c.py `_trig_block`) copies its angles from the input array itself, as the one-piece
function does: an output array must not overlap an input, in parts or in one piece (docs/api.md, "Pass
output arrays that do not overlap the inputs").
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
    args: Tuple[str, ...]               # input arrays it reads (the first part only)
    lines: List[str] = field(default_factory=list)
    statements: int = 0                 # the function's statements (Units) it computes
    defs: Tuple[str, ...] = ()          # the symbols they define


def split(units, inputs, args, results, outputs, part_size, real="double"):
    """The parts of one function and the size of its workspace `w`.

    units: [Unit] in program order; inputs: [(symbol, arg, index)] of the inputs the function uses;
    args: the function's input arrays; results: [(output array, flat index, C expression, symbols it
    uses)]; outputs: the names of the output arrays; real: the C type of the values.
    """
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
    needs = [set() for _ in chunks]                  # symbols each part reads from earlier parts
    last = {}
    for p, chunk in enumerate(chunks):
        for uses in [u.uses for u in chunk] + [uses for *_, uses in placed[p]]:
            for sym in uses:
                if home[sym] < p:
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
        parts.append(_part(p, chunk, inputs, args, placed[p], slots, home, order, outputs, real))
        for sym in needs[p]:         # read for the last time in p (its loads may sit anywhere in p)
            if last[sym] == p:
                heapq.heappush(free, slots[sym])
    return parts, width


def _part(p, chunk, inputs, args, placed, slots, home, order, outputs, real):
    """The lines of one part. A value from an earlier part is loaded just before its first use and an
    output written just after its last operand: short live ranges keep register allocation cheap."""
    part = Part(args if p == 0 else (), statements=len(chunk), defs=tuple(s for unit in chunk for s in unit.defs))
    lines = part.lines
    store = lambda syms: [f"w[{slots[s]}] = {s};" for s in syms if s in slots]
    after = {}                                       # unit index -> outputs written after it
    local = {s: k for k, unit in enumerate(chunk) for s in unit.defs}
    ready = []                                       # outputs of inputs and constants only
    for name, flat, rhs, uses in placed:
        k = max((local[s] for s in uses if s in local), default=None)
        (ready if k is None else after.setdefault(k, [])).append(f"{name}[{flat}] = {rhs};")
    if p == 0:
        lines += [f"const {real} {sym} = {arg}[{i}];" for sym, arg, i in inputs]
        lines += [f"(void){a};" for a in args if a not in {arg for _, arg, _ in inputs}]
        lines += store(sym for sym, _, _ in inputs)
        lines += ready
    loaded = set()
    for k, unit in enumerate(chunk):
        outside = sorted((s for s in unit.uses if home[s] < p and s not in loaded), key=order.get)
        lines += [f"const {real} {s} = w[{slots[s]}];" for s in outside]
        loaded.update(outside)
        lines += unit.lines
        lines += store(unit.defs)
        lines += after.get(k, [])
    lines += [f"(void){name};" for name in outputs if name not in {r[0] for r in placed}]
    defined = ([sym for sym, _, _ in inputs] if p == 0 else []) + list(part.defs)
    if not loaded and not any(sym in slots for sym in defined):       # w neither read nor written
        lines.append("(void)w;")
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
    lines = _constant_stores(first, zeros)
    for k, unit in enumerate(units):
        lines += unit.lines
        lines += [f"{name}[{flat}] = {rhs};" for name, flat, rhs in after.get(k, [])]
    return lines


def _constant_stores(entries, zeros):
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

