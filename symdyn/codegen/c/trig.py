"""The sines and cosines of the C backend: sd_sincos pairs, the vectorized block of a function's input
angles (sd_sincos_n, for functions of many angles: tuning.trig_block) and their branch-free form in the lanes
of a batch entry (sd_sincos_lane); the helpers themselves are in trig.c.jinja."""
from ..backends import Unit, used_symbols


class TrigLine(str):
    """A line of C that computes sin or cos, as the single-state function has it. `calls`: the helper of
    trig.c.jinja it calls (None: libm or none); `lane`: the statements that replace it in a batch entry's lanes
    (sd_sincos_lane calls; none for a line of the block); `weight`: the statements the batch plan counts."""

    def __new__(cls, text, lane=(), calls=None, weight=1):
        line = super().__new__(cls, text)
        line.lane = list(lane)
        line.calls = calls
        line.weight = weight
        return line


def trig(e):
    """(sin or cos, its angle) of an expression that is one, else None."""
    name = type(e).__name__
    return (name, e.args[0]) if name in ("sin", "cos") else None


def helpers(lines, lanes):
    """The helpers of trig.c.jinja that a function's `lines` call, with sd_sincos_lane if it has `lanes`."""
    trig_lines = [line for line in lines if isinstance(line, TrigLine)]
    used = {line.calls for line in trig_lines if line.calls}
    if lanes and any(line.lane for line in trig_lines):
        used.add("sd_sincos_lane")
    return used


def count(lines):
    """The sines and cosines (a pair once) of a function's lines: some twenty operations each, which lanes vectorize."""
    return sum(isinstance(line, TrigLine) and bool(line.lane) for line in lines)


def statements(lines):
    """The statements of a function as the batch plan weighs them: the block's as the sincos pairs its lanes run."""
    return sum(line.weight if isinstance(line, TrigLine) else 1 for line in lines)


def sincos_unit(s, c, angle, uses, real):
    """sin and cos of one angle (printed) into s and c by sd_sincos."""
    call = TrigLine(f"sd_sincos({angle}, &{s}, &{c});", lane_sincos(angle, s, c), calls="sd_sincos")
    return Unit((str(s), str(c)), uses, [f"{real} {s}, {c};", call])


def block(angles, pairs, inputs, printer, real, tuning):
    """sin and cos of `angles` (of the inputs alone, in order of first use) by one vectorized loop, sd_sincos_n, over
    arrays padded with zeros to a multiple of tuning.trig_pad, then read from them. pairs: {angle: {"sin"|"cos":
    symbol}}; inputs: {input entry's symbol: (argument, flat index)}."""
    n = -(-len(angles) // tuning.trig_pad) * tuning.trig_pad
    printed = [printer(a) for a in angles]
    lines = [TrigLine(f"{real} sd_angle[{n}], sd_sin[{n}], sd_cos[{n}];", weight=0)]
    lines += _fill(angles, printed, inputs, _loads(n, tuning.trig_vector))
    lines.append(TrigLine(f"sd_sincos_n(sd_angle, sd_sin, sd_cos, {n});", calls="sd_sincos_n", weight=0))
    defs = []
    for k, (a, angle) in enumerate(zip(angles, printed)):
        got = {t: str(name) for t, name in pairs[a].items()}
        reads = [f"{got[t]} = sd_{t}[{k}]" for t in ("sin", "cos") if t in got]
        defs += [got[t] for t in ("sin", "cos") if t in got]
        if len(got) == 2:                         # one sd_sincos_lane per angle in the lanes
            lane = lane_sincos(angle, got["sin"], got["cos"], real)
        else:
            (t, name), = got.items()
            lane = lane_one(name, t, angle, real)
        lines.append(TrigLine(f"const {real} " + ", ".join(reads) + ";", lane, weight=len(reads)))
    return Unit(tuple(defs), frozenset().union(*(used_symbols(a) for a in angles)), lines)


def _loads(n, width):
    """Where the vectorized loop over n entries starts a load: every `width` entries, then its remainder in
    halving vectors (as gcc vectorizes it: 7 entries of doubles in AVX2 are loaded as 4, 2 and 1)."""
    starts, k = list(range(0, n - n % width, width)), n - n % width
    while width > 1:
        width //= 2
        if n - k >= width:
            starts.append(k)
            k += width
    return starts + [n]


def _fill(angles, printed, inputs, loads):
    """The stores of the block's angles one by one and the padding zeros up to loads[-1]; then consecutive entries
    of one input copied again by one memcpy per load of the loop (`loads`: where they start): 8-byte stores, and
    the overlapping moves of a longer copy, cannot be forwarded to a wider load. gcc drops the stores the copy
    overwrites (they keep each input entry's load used: -Wunused-variable)."""
    lines = [TrigLine(f"sd_angle[{k}] = {a};", weight=0) for k, a in enumerate(printed)]
    lines += [TrigLine(f"sd_angle[{k}] = 0;", weight=0) for k in range(len(angles), loads[-1])]
    entry = [inputs.get(str(a)) if a.is_Symbol else None for a in angles]
    k = 0
    while k < len(angles):
        m = 1
        while entry[k] is not None and k + m < len(angles) and entry[k + m] == (entry[k][0], entry[k][1] + m) \
                and k + m not in loads:
            m += 1
        if m >= 2:
            arg, j = entry[k]
            lines.append(TrigLine(f"memcpy(sd_angle + {k}, {arg} + {j}, {m} * sizeof sd_angle[0]);", weight=0))
        k += m
    return lines


def lane_lines(lines):
    """The lane statements of single-state lines: sin and cos go through the branch-free sd_sincos_lane, which flags
    in `sd_far` an angle beyond its range (that state is then computed again by the single-state function)."""
    return [lane for line in lines for lane in (line.lane if isinstance(line, TrigLine) else [line])]


def lane_one(name, t, angle, real):
    """The lane statements of one sin or cos alone."""
    s, c = (name, f"{name}_cos") if t == "sin" else (f"{name}_sin", name)
    unused = c if t == "sin" else s
    # the unused value tested (NaN only where the angle is not finite: flagged already): left
    # dead, gcc 12 no longer if-converts the block and does not vectorize it
    return lane_sincos(angle, s, c, real) + [f"sd_far |= {unused} != {unused};"]


def lane_sincos(angle, s, c, real=None):
    """The lane statements of the sin and cos of one angle into s and c (declared first when `real` is given)."""
    return ([f"{real} {s}, {c};"] if real else []) + [f"sd_far |= sd_sincos_lane({angle}, &{s}, &{c});"]
