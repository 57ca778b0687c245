"""Batch entries of the C functions that compute too little per entry they move for lanes (issue 15).

Lanes (c.py, lanes_pay) copy every input and output of a block of states into and out of
structure-of-arrays blocks; for a function of a few operations per entry those copies cost more than
the lanes save, and its batch entry was a loop of single calls. Two shapes of such functions have a
batch that needs no copy at all:

- elementwise: output entry i is a function of entry i of the arguments alone, the same function for
  every i up to its numeric constants (joint friction: Fv qd + Fc sgn(qd) + Fo per joint). The batch
  is then one loop over the flat (count * n) arrays, which the compiler vectorizes: the constants of
  entry i are read from tables of a period of `block` states (n * block entries, a multiple of the
  vector width), so that the loop's count is a constant and every vector sees its own constants.
  Entries of up to MAX_SHAPES different shapes (a free-flyer's entries 0, a joint without Coulomb
  friction) are each computed, and one chosen per entry by a bit mask. An elementwise function that calls libm
  (tanh: smoothed Coulomb friction) vectorizes neither this way nor in lanes: it loops its single
  function.
- copies: outputs that are runs of consecutive input entries (the base parameters: most are
  parameters that stay as they are) are copied by memcpy of a constant length, vector loads and
  stores, where the single function stores them one at a time; the rest of the function as it is,
  in its order of memory accesses (rows_lines).

docs/perf-history.md "Batch of tiny functions, issue 15", measures both against the loop of single
calls and against the bytes that any batch must move (the memory roofline of this machine).
"""
import itertools
import math

import symengine as se

from .backends import input_entries
from .parts import EARLY_STORES, constant_stores
from .printer import FUNCTIONS, split_coeff

#: at most this many different expressions among the entries of an elementwise output (each is
#: computed for every entry, then one is selected)
MAX_SHAPES = 3
#: and at most this many statements per output entry (the expressions are substituted into one)
MAX_STATEMENTS = 8
#: the period of the constants' tables is a multiple of this many reals: one AVX-512 vector
VECTOR_BYTES = 64
#: (C type, all ones) of the masks that choose among laws, per C type of the values
MASK = {"double": ("uint64_t", "UINT64_MAX"), "float": ("uint32_t", "UINT32_MAX")}
#: their batch entries start OpenMP threads from this many entries moved (inputs and outputs) on:
#: entering a parallel region costs about 0.33 us even with one thread, where the Panda's friction
#: does 256 states in 0.19 us; 32768 entries are 2341 states of it (about 2.5 us), 197 of its
#: base_parameters (about 3 us). Not tuned for two threads (docs/perf-history.md "Batch of tiny
#: functions")
PARALLEL_ENTRIES = 32768
#: the copied runs go by memcpy of at most this many entries: gcc inlines a memcpy of up to 512 bytes
#: (-march=native here) as vector moves, a longer one is a call to libc's (section 38)
COPY_CHUNK = 64
#: the functions of printer.FUNCTIONS that are calls to libm
LIBM = ("sin", "cos", "tanh")
#: names of the placeholders while an expression is taken apart (renamed sd_k<output>_<shape>_<j> after:
#: one loop body holds every output's constants)
_TEMPORARY = itertools.count()


class NotElementwise(Exception):
    """An output entry reads other entries, or an expression this analysis does not take apart."""


def _shape(e, local):
    """(key, [(placeholder, value)], template) of one entry's expression: the key is the same for two
    entries whose expressions differ only in their numeric constants; the template is the expression
    with each constant a placeholder symbol and each argument entry a symbol named after its argument
    (`local`: entry symbol -> that symbol). The terms of sums and factors of products are put in the
    order of their keys, so that the constants of every entry come in the same order."""
    if e.is_Number:
        k = se.Symbol(f"sd_tmp{next(_TEMPORARY)}")
        return "k", [(k, float(e))], k
    if e.is_Symbol:
        if e not in local:
            raise NotElementwise(str(e))
        return "x:" + str(local[e]), [], local[e]
    if e.is_Add:
        return _combine("+", [_term(t, local) for t in e.args], se.Add)
    if e.is_Mul:
        return _term(e, local)
    if e.is_Pow:
        base, exp = e.args
        if not exp.is_Number:
            raise NotElementwise(str(e))
        key, consts, template = _shape(base, local)
        return ("^", key, float(exp)), consts, se.Pow(template, exp)
    name = type(e).__name__
    if name in FUNCTIONS:
        key, consts, template = _shape(e.args[0], local)
        return (name, key), consts, getattr(se, name)(template)
    raise NotElementwise(name)


def _term(e, local):
    """A product (or any term of a sum) as coefficient * factors: a coefficient of 1 is a constant
    too, so that 0.6*sign(qd) and sign(qd) (a Coulomb coefficient of 1) have one shape."""
    if e.is_Number:
        return _shape(e, local)
    coeff, factors = split_coeff(e) if e.is_Mul else (1.0, [e])
    k = se.Symbol(f"sd_tmp{next(_TEMPORARY)}")
    key, consts, template = _combine("*", [_shape(f, local) for f in factors], se.Mul)
    return ("c*", key), [(k, coeff)] + consts, k * template


def _combine(op, parts, build):
    parts = sorted(parts, key=lambda p: repr(p[0]))
    keys = [repr(p[0]) for p in parts]
    if len(set(keys)) != len(keys):
        raise NotElementwise("two terms of one shape")
    return (op, *(p[0] for p in parts)), [c for p in parts for c in p[1]], build(*(p[2] for p in parts))


def elementwise(program, real="double"):
    """The plan of an elementwise batch for `program`, or None: {"size": n, "block": states per
    period, "outputs": [{"name", "shapes": [(template, [placeholder])], "which": [shape of entry i],
    "values": [[value of placeholder j at entry i]]}], "args": the arguments read, "vector": whether the
    loop vectorizes (no libm call)}."""
    outputs = program.outputs()
    n = len(outputs[0][2])
    if not n or any(len(values) != n for _, _, values in outputs) or len(program.assignments) > MAX_STATEMENTS * n:
        return None
    args = [a for a in program.args if len(program.inputs[a]) == n]
    defs = {}
    for s, e in program.assignments:
        defs[s] = e.xreplace(defs) if defs else e
    plan = []
    for o, (name, _, values) in enumerate(outputs):
        shapes, which, consts = [], [], []
        for i, value in enumerate(values):
            local = {program.inputs[a][i]: se.Symbol(f"sd_{a}") for a in args}
            try:
                key, pairs, template = _shape(value.xreplace(defs) if defs else value, local)
            except NotElementwise:
                return None
            keys = [s[0] for s in shapes]
            if key not in keys:
                names = {k: se.Symbol(f"sd_k{o}_{len(shapes)}_{j}") for j, (k, _) in enumerate(pairs)}
                shapes.append((key, template.xreplace(names), [names[k] for k, _ in pairs]))
                keys.append(key)
            which.append(keys.index(key))
            consts.append([v for _, v in pairs])
        if len(shapes) > MAX_SHAPES:
            return None
        plan.append({"name": name, "shapes": [(t, p) for _, t, p in shapes], "which": which, "values": consts})
    used = set().union(*(t.free_symbols for o in plan for t, _ in o["shapes"]))
    width = VECTOR_BYTES // (8 if real == "double" else 4)
    return {"size": n, "block": width // math.gcd(n, width), "outputs": plan,
            "args": [a for a in args if se.Symbol(f"sd_{a}") in used],
            "vector": not any(_calls(t) for o in plan for t, _ in o["shapes"])}


def _calls(e):
    """Whether e calls libm (sin, cos, tanh): a loop of such calls is not vectorized (gcc has no vector
    versions without -ffast-math), and no faster than the single function's calls."""
    return type(e).__name__ in LIBM or any(_calls(a) for a in e.args)


def picks(plan):
    """Whether the loop body of `plan` (elementwise_lines) chooses among laws by sd_pick: an output of
    several shapes."""
    return any(len(o["shapes"]) > 1 for o in plan["outputs"])


def elementwise_lines(plan, printer, real):
    """(tables, loop body) of an elementwise batch: the C lines of the constants' tables (a period of
    `block` states) and of one entry sd_e of the loop."""
    period = plan["size"] * plan["block"]
    tables, body = [], [f"const {real} sd_{a} = {a}[sd_e];" for a in plan["args"]]
    for o in plan["outputs"]:
        choices = []
        for s, (template, placeholders) in enumerate(o["shapes"]):
            for j, k in enumerate(placeholders):
                column = [o["values"][i][j] if o["which"][i] == s else 0.0 for i in range(plan["size"])]
                if len(set(v for v, w in zip(column, o["which"]) if w == s)) == 1:
                    value = next(v for v, w in zip(column, o["which"]) if w == s)
                    body.append(f"const {real} {k} = {printer.literal(value)};")
                else:
                    table = f"sd_{o['name']}_{str(k)[3:]}"
                    tables += _table(f"static const {real} {table}[{period}]", [printer.literal(v) for v in column],
                                     plan["block"])
                    body.append(f"const {real} {k} = {table}[sd_e];")
            choices.append(printer(template))
        # every law computed, then one chosen per entry by its bits (sd_pick): a conditional
        # evaluation, or a ?: of floating-point values, is control flow to gcc 12 (with the default
        # -ftrapping-math), which keeps the loop from being vectorized
        for s, choice in enumerate(choices[1:] and choices):
            body.append(f"const {real} sd_{o['name']}_{s} = {choice};")
        value = f"sd_{o['name']}_0" if len(choices) > 1 else choices[0]
        mask = MASK[real]
        for s in range(1, len(choices)):
            table = f"sd_{o['name']}_shape{s}"
            tables += _table(f"static const {mask[0]} {table}[{period}]",
                             [mask[1] if w == s else "0" for w in o["which"]], plan["block"])
            value = f"sd_pick({table}[sd_e], sd_{o['name']}_{s}, {value})"
        body.append(f"{o['name']}[sd_e] = {value};")
    return tables, body


def _table(declaration, row, block):
    """The lines of a table of `block` copies of row, one per line."""
    return [declaration + " = {"] + ["    " + ", ".join(row) + "," for _ in range(block)] + ["};"]


def copy_runs(f, min_run=2):
    """The outputs of the template's dict `f` that copy runs of at least min_run consecutive input
    entries: [(output, its first entry, argument, its first entry, length)], else []."""
    where = input_entries(f["program"])
    runs = []
    for name, _, values in f["program"].outputs():
        for k, value in enumerate(values):
            src = where.get(str(value)) if value.is_Symbol else None
            last = runs[-1] if runs else None
            if src and last and last[0] == name and last[1] + last[4] == k and last[2] == src[0] \
                    and last[3] + last[4] == src[1]:
                last[4] += 1
            elif src:
                runs.append([name, k, src[0], src[1], 1])
    return [tuple(r) for r in runs if r[4] >= min_run]


def rows_lines(f, runs, real):
    """The body of one state of a batch whose copied runs go by memcpy, in the single function's order of
    memory accesses (parts.one_piece): the input loads the rest reads, in address order; the entries that
    need no statement, in output order, each run as memcpy of at most COPY_CHUNK entries; then the
    statements, each followed by the entries it completes (all at the end below EARLY_STORES entries);
    (void) for an argument none reads.

    Beyond the L2 cache that order decides the speed, not the instructions: with the loads sunk to their
    first use and every store after the arithmetic (the body before), or a run of more than 64 doubles left
    to libc's memcpy, talos_reduced's base parameters ran at 0.52-0.56x the single calls at 4096 states
    (27 MB streamed), 1.3x in L2 (docs/perf-history.md "talos_reduced's slow batch entries")."""
    copied = {(o, k + j) for o, k, _, _, n in runs for j in range(n)}
    at = {sym: u for u, unit in enumerate(f["units"]) for sym in unit.defs}
    results = [(o["name"], k, rhs) for o in f["outputs"] for k, (_, rhs) in enumerate(o["results"])]
    first, after, last = [], {}, []
    for (o, k, rhs), uses in zip(results, f["result_uses"]):
        u = max((at[s] for s in uses if s in at), default=None)
        if (o, k) in copied or u is None:
            first.append((o, k, rhs))
        else:
            (after.setdefault(u, []) if len(results) >= EARLY_STORES else last).append((o, k, rhs))
    body = []
    for u, unit in enumerate(f["units"]):
        body += unit.lines + [f"{o}[{k}] = {rhs};" for o, k, rhs in after.get(u, [])]
    body += [f"{o}[{k}] = {rhs};" for o, k, rhs in last]
    stored = [uses for (o, k, _), uses in zip(results, f["result_uses"]) if (o, k) not in copied]
    read = frozenset().union(*(unit.uses for unit in f["units"]), *stored)
    loads = [(sym, arg, flat) for sym, arg, _, flat in f["inputs"] if sym in read]
    lines = [f"const {real} {sym} = {arg}[{flat}];" for sym, arg, flat in loads]
    lines += _copy_lines(f, first, runs, copied, real) + body
    # the statements read arrays only through these loads (a memcpy of angles in the trig block
    # copies entries that the block's unit uses, so loaded here too)
    named = {arg for _, arg, _ in loads} | {a for _, _, a, _, _ in runs}
    return lines + [f"(void){a};" for a in f["args"] if a not in named]


def _copy_lines(f, first, runs, copied, real):
    """The stores of the entries that need no statement (`first`, in output order): each run as memcpy of
    at most COPY_CHUNK entries, the others one by one (runs of zeros as loops, as the single function)."""
    starts = {(o, k): (a, i, n) for o, k, a, i, n in runs}
    zeros = frozenset((o["name"], k) for o in f["outputs"] for k, v in enumerate(o["numbers"]) if v == 0)
    lines, pending = [], []
    for o, k, rhs in first:
        if (o, k) in starts:
            lines += constant_stores(pending, zeros)
            pending = []
            a, i, n = starts[o, k]
            lines += [f"memcpy({o} + {k + j}, {a} + {i + j}, {min(COPY_CHUNK, n - j)} * sizeof({real}));"
                      for j in range(0, n, COPY_CHUNK)]
        elif (o, k) not in copied:
            pending.append((o, k, rhs))
    return lines + constant_stores(pending, zeros)
