"""Like branches as lanes: a quadruped's four legs (a robot's two arms) computed by one loop over them in the
single-state C function.

The trace writes each leg's statements one after the other: the same expressions with other numbers (lengths,
masses, axis signs) and other inputs. Statement k of every leg of a group (multibody/branches.py: branches of one
shape) becomes one statement of the loop `for (sd_l = 0; sd_l < 4; ++sd_l) sd_b<g>_<k>[sd_l] = ...;`: where the legs'
expressions differ in a number or a symbol from outside the leg, the loop reads it from a table of the legs' values
(a gather: `static const` for numbers). Everything else (the trunk, the sums over the legs, the sines and cosines,
which the sd_sincos_n block computes) stays scalar and reads a leg's value as `sd_b<g>_<k>[l]`; a statement after a
sum over the legs that reads one leg's own values (its accelerations after the base's) is that leg's. solo12's ID, C
and dID run 2.0-2.2x faster, Baxter's FD and M^-1 1.7x, solo12's dFD 1.7x (docs/perf-history.md "Like branches as
lanes in the C backend", "A leg's statements after the sum over the legs"); each lane's value is its own
statement's, rounded in another order.

The legs' statements are lined up by their shapes; one without a counterpart in every leg (another exact zero, a
sum that starts with the first leg), or whose legs' expressions differ in shape (a sign), stays scalar, one per leg.
"""
import heapq
from collections import defaultdict
from difflib import SequenceMatcher

import symengine as se

from ..backends import Unit
from .trig import trig


class Mismatch(Exception):
    """The legs' expressions differ in shape: no one loop statement computes them."""


class Cycle(Exception):
    """Loop statements that depend on themselves through another lane (a lane reads a value computed from another
    lane's same statement): `symbols`, every lane's, must stay scalar."""

    def __init__(self, symbols):
        super().__init__(f"{len(symbols)} statements in a cycle between lanes")
        self.symbols = symbols


class Lanes:
    """The lane form of one traced program: for each group, the statements unified across its branches."""

    def __init__(self, program, branches, groups, scalar=frozenset()):
        """scalar: statements kept out of the loops (a Cycle's)."""
        self.program, self.groups = program, groups
        self.position = {s: k for k, (s, _) in enumerate(program.assignments)}
        self.expr = dict(program.assignments)
        owner = owners(program, branches, {b for members in groups for b in members})
        owner.update(dict.fromkeys(scalar))
        self.rows = [_rows(program, self.expr, owner, members) for members in groups]
        self.key = {}           # symbol -> (group, index) of the loop statement that computes it
        self.templates = []     # per group: {index: template expression}
        self.gathers = {}       # values of the lanes (tuple) -> the gather's name
        for g, rows in enumerate(self.rows):
            self.templates.append(self._unify_group(g, rows) if rows else {})

    def lane_statements(self):
        """The statements that the loops compute (their count in lanes times the lanes)."""
        return len(self.key)

    def outside(self):
        """The values computed in the loops that something outside them reads (computed once)."""
        if not hasattr(self, "_outside"):
            self._outside = _read_outside(self)
        return self._outside

    def escaping(self):
        return len(self.outside())

    def loop_statements(self):
        """The statements of the loops (once for all lanes)."""
        return sum(len(t) for t in self.templates)

    def _unify_group(self, g, rows):
        templates = {}
        for k, column in enumerate(zip(*rows)):
            skeletons = [self._skeleton(g, s) for s in column]
            new = {}                              # the gathers of this statement, kept only if it unifies
            try:
                templates[k] = _unify(skeletons, lambda values: self._gather(values, new))
            except Mismatch:
                continue                          # one scalar statement per lane
            self.gathers.update(new)
            for s in column:
                self.key[s] = (g, k)
        return templates

    def _skeleton(self, g, sym):
        """sym's expression with the loop's values of its own lane as the loop names them."""
        e = self.expr[sym]
        own = {x: se.Symbol(f"sd_b{g}_{self.key[x][1]}[sd_l]") for x in e.free_symbols
               if self.key.get(x, (None,))[0] == g}
        return e.xreplace(own) if own else e

    def _gather(self, values, new):
        if any(str(v).startswith("sd_b") for v in values):
            raise Mismatch                        # a value of the loop itself, in some lanes only
        values = tuple(values)
        name = self.gathers.get(values) or new.setdefault(values, f"sd_g{len(self.gathers) + len(new)}")
        return se.Symbol(f"{name}[sd_l]")

    def order(self):
        """The loop statements (group, index) and the scalar symbols, dependencies first, each as early as the
        program has it (a loop statement: where its last lane is)."""
        nodes, deps = {}, defaultdict(set)
        for s, e in self.program.assignments:
            node = self.key.get(s, s)
            nodes[node] = max(nodes.get(node, -1), self.position[s])
            deps[node] |= {self.key.get(x, x) for x in e.free_symbols if x in self.position}
        for node in nodes:
            deps[node].discard(node)
        users = defaultdict(list)
        for node, needs in deps.items():
            for d in needs:
                users[d].append(node)
        waiting = {node: len(deps[node]) for node in nodes}
        ready = [(nodes[n], k, n) for k, n in enumerate(nodes) if not waiting[n]]
        index = {n: k for k, n in enumerate(nodes)}
        heapq.heapify(ready)
        out = []
        while ready:
            _, _, node = heapq.heappop(ready)
            out.append(node)
            for u in users[node]:
                waiting[u] -= 1
                if not waiting[u]:
                    heapq.heappush(ready, (nodes[u], index[u], u))
        if len(out) < len(nodes):
            raise Cycle(self._cycles(set(nodes) - set(out), deps))
        return out

    def _cycles(self, left, deps):
        """The symbols of the loop statements among `left` (nodes no order reaches) that depend on themselves."""
        cyclic = set()
        for node in (n for n in left if isinstance(n, tuple)):
            seen, stack = set(), [d for d in deps[node] if d in left]
            while stack and node not in seen:
                d = stack.pop()
                if d not in seen:
                    seen.add(d)
                    stack += [x for x in deps[d] if x in left]
            if node in seen:
                cyclic.add(node)
        return frozenset(row[k] for g, k in cyclic for row in self.rows[g])


#: reads of a statement whose inputs span several lines of branches: so does everything that reads it
SPAN = frozenset(["span"])
#: readers of several owners
MIXED = object()


def owners(program, branches, members):
    """{symbol: branch of `members`, or None} of each assignment: the branch whose inputs it reads (Branches.owner),
    or the one branch of every statement that reads it; sines and cosines stay scalar (the sd_sincos_n block)."""
    reads = {s: frozenset([branches.entry[arg, i]]) if branches.entry.get((arg, i)) is not None else frozenset()
             for arg, symbols in program.inputs.items() for i, s in enumerate(symbols)}
    owner, lowest = {}, {frozenset(): None, SPAN: None}     # lowest: Branches.owner of each set of branches read
    for s, e in program.assignments:
        parts = [reads[x] for x in e.free_symbols if x in reads]
        read = SPAN if SPAN in parts else frozenset().union(*parts)
        if read not in lowest:
            lowest[read] = branches.owner(read)
        reads[s] = SPAN if read and lowest[read] is None else read     # a set of one line at most: small
        owner[s] = lowest[reads[s]] if reads[s] is not SPAN and lowest[reads[s]] in members and not trig(e) else None
        if reads[s] is SPAN and not trig(e):
            # after a sum over the branches (the base's acceleration): a statement of one branch's own values
            own = {owner.get(x) for x in e.free_symbols} - {None}
            owner[s] = own.pop() if len(own) == 1 else None
    readers = {x: MIXED for e in program.results for x in getattr(e, "free_symbols", ())}
    for s, e in reversed(program.assignments):      # a statement's readers come after it: their owners are final
        if owner[s] is None and reads[s] is not SPAN and readers.get(s, MIXED) not in (MIXED, None) and not trig(e):
            owner[s] = readers[s]
        for x in e.free_symbols:
            readers[x] = owner[s] if readers.get(x, owner[s]) == owner[s] else MIXED
    return owner


def _rows(program, expr, owner, members):
    """Per branch of the group, its statements that line up with a statement of every other branch (by their
    shapes, in program order); the others (a sum that starts with the first leg, another zero) stay scalar."""
    rows = [[s for s, _ in program.assignments if owner[s] == b] for b in members]
    ref = [_shape(expr[s]) for s in rows[0]]
    columns = {i: [s] for i, s in enumerate(rows[0])}
    for row in rows[1:]:
        blocks = SequenceMatcher(None, ref, [_shape(expr[s]) for s in row], autojunk=False).get_matching_blocks()
        match = {a + t: row[b + t] for a, b, n in blocks for t in range(n)}
        columns = {i: column + [match[i]] for i, column in columns.items() if i in match}
    return [[columns[i][lane] for i in sorted(columns)] for lane in range(len(members))]


def _shape(e):
    """e's structure with numbers and symbols from outside the loop masked: the order in which the lanes' arguments
    of a sum or product are paired."""
    if e.is_Number:
        return "N"
    if e.is_Symbol:
        return str(e) if str(e).startswith("sd_b") else "S"
    return type(e).__name__ + "(" + ",".join(sorted(_shape(a) for a in e.args)) + ")"


def _unify(nodes, gather):
    """One expression for the lanes' expressions `nodes`, where they differ in a number or symbol a gather of
    their values (gather(values) -> its symbol). Any pairing of a sum's or product's terms is exact; pairing
    them by shape keeps the gathers few."""
    first = nodes[0]
    if all(n == first for n in nodes[1:]):
        return first
    if all(n.is_Number or n.is_Symbol for n in nodes):
        return gather(nodes)
    kind = type(first)
    if any(type(n) is not kind or len(n.args) != len(first.args) for n in nodes):
        raise Mismatch
    if first.is_Pow and any(n.args[1] != first.args[1] for n in nodes):
        raise Mismatch                            # the printers write a power by its exponent
    if not (first.is_Add or first.is_Mul):
        return first.func(*[_unify(list(c), gather) for c in zip(*(n.args for n in nodes))])
    common = [a for a in first.args if all(a in n.args for n in nodes[1:])]      # terms every lane has
    rest = zip(*(sorted((a for a in n.args if a not in common), key=_shape) for n in nodes))
    return first.func(*common, *[_unify(list(c), gather) for c in rest])


def units(lanes, backend, inputs):
    """[Unit] of the function in lane form: the scalar statements as backend.statements writes them (the sines and
    cosines of the inputs in their block), the loop statements in loops, each loop as late as the first scalar
    statement that reads one of its values. inputs: as Backend.statements'."""
    order = lanes.order()
    scalars = [n for n in order if not isinstance(n, tuple)]
    rank = {str(s): k for k, s in enumerate(scalars)}
    starts = defaultdict(list)
    for unit in backend.statements([(s, lanes.expr[s]) for s in scalars], inputs):
        starts[min(rank[d] for d in unit.defs)].append(unit)
    emit = _Emitter(lanes, backend)
    for node in order:
        if isinstance(node, tuple):
            emit.loop_statement(*node)
        else:
            emit.flush_read(lanes.expr[node].free_symbols)
            emit.out += starts[rank[str(node)]]
    for g in range(len(lanes.groups)):
        emit.flush(g)
    return emit.out


class _Emitter:
    """The units in order, each group's loop statements pending until a statement outside the loop reads one."""

    def __init__(self, lanes, backend):
        self.lanes, self.printer, self.real = lanes, backend.printer, backend.real
        self.pending = [[] for _ in lanes.groups]
        self.declared, self.out = set(), []
        self.values = {name: values for values, name in lanes.gathers.items()}
        self.outside = lanes.outside()

    def loop_statement(self, g, k):
        template = self.lanes.templates[g][k]
        read = [v for name in _gathers(template) for v in self.values[name] if v.is_Symbol]
        self.flush_read(read)
        self.pending[g].append(k)

    def flush_read(self, symbols):
        """Flush the loops that compute any of `symbols`, before a statement that reads them."""
        for g in sorted({self.lanes.key[s][0] for s in symbols if s in self.lanes.key}):
            if any(self.lanes.key[s] == (g, k) for s in symbols if s in self.lanes.key for k in self.pending[g]):
                self.flush(g)

    def flush(self, g):
        keys, self.pending[g] = self.pending[g], []
        if not keys:
            return
        width, real = len(self.lanes.groups[g]), self.real
        lines = [f"{real} " + ", ".join(f"sd_b{g}_{k}[{width}]" for k in keys) + ";"]
        uses = set()
        for k in keys:
            lines += self._declare(self.lanes.templates[g][k], width, uses)
        lines.append(f"for (int sd_l = 0; sd_l < {width}; ++sd_l) {{")
        lines += [f"    sd_b{g}_{k}[sd_l] = {self.printer(self.lanes.templates[g][k])};" for k in keys]
        lines.append("}")
        defs = []
        for k in keys:
            for lane, row in enumerate(self.lanes.rows[g]):
                if row[k] in self.outside:
                    defs.append(str(row[k]))
                    lines.append(f"const {real} {row[k]} = sd_b{g}_{k}[{lane}];")
        self.out.append(Unit(tuple(defs), frozenset(uses), lines))

    def _declare(self, template, width, uses):
        """The declarations of the gathers that `template` reads first."""
        lines = []
        for name in _gathers(template):
            if name in self.declared:
                continue
            self.declared.add(name)
            values = self.values[name]
            uses.update(str(v) for v in values if v.is_Symbol)
            kind = "static const" if all(v.is_Number for v in values) else "const"
            lines.append(f"{kind} {self.real} {name}[{width}] = {{{', '.join(self.printer(v) for v in values)}}};")
        return lines


def _gathers(template):
    """The names of the gathers a template reads, sorted."""
    return sorted({str(s).split("[")[0] for s in template.free_symbols if str(s).startswith("sd_g")})


def _read_outside(lanes):
    """The symbols computed in a loop that something outside it reads: a scalar statement, a gather, an output."""
    read = set()
    for s, e in lanes.program.assignments:
        if s not in lanes.key:
            read |= e.free_symbols
    for values in lanes.gathers:
        read.update(v for v in values if v.is_Symbol)
    for e in lanes.program.results:
        read |= getattr(e, "free_symbols", set())
    return {s for s in read if s in lanes.key}
