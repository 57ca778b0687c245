"""The sines and cosines of the C backend: sd_sincos pairs and their branch-free form in the lanes of a
batch entry (sd_sincos_lane); the helpers themselves are in trig.c.jinja. A vectorized block of the input
angles (sd_sincos_n) made the small functions slower than these pairs:
docs/perf-history.md "Codegen optimizations re-measured"."""
from ..backends import Unit


class TrigLine(str):
    """A line of C that computes sin or cos (libm or sd_sincos), printed as it is in the single-state
    function; `calls`: the helper of trig.c.jinja it calls there (sd_sincos; None: libm); `lane` holds
    the statements that replace it in the lane loop of a batch entry, each a call of sd_sincos_lane."""

    def __new__(cls, text, lane=(), calls=None):
        line = super().__new__(cls, text)
        line.lane = list(lane)
        line.calls = calls
        return line


def trig(e):
    """(sin or cos, its angle) of an expression that is one, else None."""
    name = type(e).__name__
    return (name, e.args[0]) if name in ("sin", "cos") else None


def helpers(lines, lanes):
    """The helpers of trig.c.jinja that `lines` (a function's statements) call: sd_sincos in the
    single-state function, sd_sincos_lane in its lanes (when `lanes`)."""
    trig_lines = [line for line in lines if isinstance(line, TrigLine)]
    used = {line.calls for line in trig_lines if line.calls}
    if lanes and any(line.lane for line in trig_lines):
        used.add("sd_sincos_lane")
    return used


def count(lines):
    """The sines and cosines (a pair counting once) that a function's lines compute: each is some twenty
    operations of the kernel, which its batch lanes vectorize (batch.plan weighs them)."""
    return sum(isinstance(line, TrigLine) for line in lines)


def sincos_unit(s, c, angle, uses, real):
    """sin and cos of one angle (printed) into s and c by sd_sincos."""
    call = TrigLine(f"sd_sincos({angle}, &{s}, &{c});", lane_sincos(angle, s, c), calls="sd_sincos")
    return Unit((str(s), str(c)), uses, [f"{real} {s}, {c};", call])


def lane_lines(lines):
    """The lane statements of single-state lines: the same, except that sin and cos (TrigLine) go
    through sd_sincos_lane, which has no branch (so that the compiler vectorizes the block) and flags
    in `sd_far` an angle beyond its reduction's range: that state is then computed again by the
    single-state function."""
    return [lane for line in lines for lane in (line.lane if isinstance(line, TrigLine) else [line])]


def lane_one(name, t, angle, real):
    """The lane statements of one sin or cos alone."""
    s, c = (name, f"{name}_cos") if t == "sin" else (f"{name}_sin", name)
    unused = c if t == "sin" else s
    # the unused value tested (NaN only where the angle is not finite: flagged already): left
    # dead, gcc 12 no longer if-converts the block and does not vectorize it
    return lane_sincos(angle, s, c, real) + [f"sd_far |= {unused} != {unused};"]


def lane_sincos(angle, s, c, real=None):
    """The lane statements of the sin and cos of one angle into s and c (declared first, as `real`, when
    given): sd_sincos_lane flags in sd_far an angle beyond the kernel's range."""
    return ([f"{real} {s}, {c};"] if real else []) + [f"sd_far |= sd_sincos_lane({angle}, &{s}, &{c});"]
