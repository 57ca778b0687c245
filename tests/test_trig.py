"""The sin and cos of the generated C (symdyn/codegen/c/trig.c.jinja), compiled alone with load_c's flags:
the single angle (sd_sincos), the vectorized block (sd_sincos_n) and the batch lane (sd_sincos_lane) give
the same bits on random, huge, infinite and NaN angles; libm's values beyond the kernel's range; at most 2.2e-16 from libm on |x| < 1e5;
and gcc vectorizes a long lane loop of them."""
import ctypes
import platform
import subprocess

import numpy as np
import pytest

from dataclasses import replace

import symdyn.codegen.c.loader as cload
from symdyn.codegen.backends import environment
from symdyn.codegen.c import C, CBackend
from symdyn.codegen.c.tuning import TUNING

#: the angles are padded with zeros to a multiple of this
N = 8

HARNESS = """
#include <math.h>
#include <stdint.h>
#include <string.h>
{trig}
void trig_one(const {real} *x, {real} *s, {real} *c, long count)
{{
    for (long i = 0; i < count; ++i)
        sd_sincos(x[i], s + i, c + i);
}}

void trig_block(const {real} *x, {real} *s, {real} *c, long count)
{{
    for (long i = 0; i + 8 <= count; i += 8)
        sd_sincos_n(x + i, s + i, c + i, 8);
}}

void trig_lane(const {real} *x, {real} *s, {real} *c, int *far, long count)
{{
    for (long i = 0; i < count; ++i)
        far[i] = sd_sincos_lane(x[i], s + i, c + i);
}}

void trig_libm(const double *x, double *s, double *c, long count)
{{
    for (long i = 0; i < count; ++i) {{
        s[i] = sin(x[i]);
        c[i] = cos(x[i]);
    }}
}}
"""


def _source(real):
    trig = environment(C).get_template("trig.c.jinja").render(
        real=real, uses_trig=True, uses_sincos=True, uses_sincos_n=True, uses_lane_sincos=True)
    return HARNESS.format(trig=trig, real=real)


def _build(tmp_path, real, flags=None):
    c_path = tmp_path / f"trig_{real}.c"
    c_path.write_text(_source(real))
    argv, identity = cload._compiler(c_path)
    flags = cload._opt_flags(identity) if flags is None else flags
    lib = tmp_path / f"trig_{real}.so"
    result = subprocess.run([*argv, *flags, *cload.CFLAGS, str(c_path), "-o", str(lib), "-lm"],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return ctypes.CDLL(str(lib))


def _angles():
    rng = np.random.default_rng(7)
    special = [0.0, -0.0, np.pi / 4, -np.pi / 4, np.pi / 2, np.pi, 1e5 - 1e-11, -1e5 + 1e-11, 1e5, -1e5,
               1e5 + 1e-11, 3e5, -7.5e8, 1e22, -1e300, np.inf, -np.inf, np.nan, -np.nan, 5e-324, 1e-300]
    x = np.concatenate([rng.uniform(-4, 4, 40000), rng.uniform(-1e3, 1e3, 20000), rng.uniform(-1e5, 1e5, 20000),
                        np.ldexp(rng.uniform(0.5, 1, 4000), rng.integers(-60, 100, 4000)), special,
                        # multiples of pi/4, where the reduction is hardest
                        np.arange(-4000, 4000) * (np.pi / 4)])
    return np.concatenate([x, np.zeros(-len(x) % N)])


def _run(lib, name, x, real):
    ptr = ctypes.POINTER(ctypes.c_double if real == "double" else ctypes.c_float)
    s, c = np.empty_like(x), np.empty_like(x)
    args = [a.ctypes.data_as(ptr) for a in (x, s, c)]
    if name == "trig_lane":
        far = np.empty(len(x), dtype=np.intc)
        getattr(lib, name)(*args, far.ctypes.data_as(ctypes.POINTER(ctypes.c_int)), ctypes.c_long(len(x)))
        return s, c, far
    getattr(lib, name)(*args, ctypes.c_long(len(x)))
    return s, c


@pytest.fixture(scope="module")
def double_lib(tmp_path_factory):
    return _build(tmp_path_factory.mktemp("trig"), "double")


def _same_bits(a, b):
    """Equal to the last bit, NaN (any payload) for NaN."""
    nan = np.isnan(a)
    assert np.array_equal(nan, np.isnan(b))
    bits = a.view(np.uint64 if a.dtype == np.float64 else np.uint32)
    other = b.view(bits.dtype)
    assert np.array_equal(bits[~nan], other[~nan]), np.flatnonzero(bits != other)[:5]


@pytest.mark.parametrize("real", ["double", "float"])
def test_single_and_lane_agree_to_the_bit(real, double_lib, tmp_path):
    lib = double_lib if real == "double" else _build(tmp_path, real)
    with np.errstate(over="ignore"):                   # 1e300 becomes a float32 inf
        x = _angles().astype(np.float64 if real == "double" else np.float32)
    s_1, c_1 = _run(lib, "trig_one", x, real)
    s_l, c_l, far = _run(lib, "trig_lane", x, real)
    s_n, c_n = _run(lib, "trig_block", x, real)
    _same_bits(s_n, s_1)                                # everywhere: the block takes libm's beyond range
    _same_bits(c_n, c_1)
    near = np.abs(x) < 1e5
    assert np.array_equal(far, (~near).astype(np.intc))
    _same_bits(s_l[near], s_1[near])
    _same_bits(c_l[near], c_1[near])
    # beyond the kernel's range: libm's (in double, rounded to the module's type)
    s_m, c_m = _run(double_lib, "trig_libm", x[~near].astype(np.float64), "double")
    _same_bits(s_1[~near], s_m.astype(x.dtype))
    _same_bits(c_1[~near], c_m.astype(x.dtype))
    assert np.isnan(s_1[np.isinf(x)]).all() and np.isnan(s_1[np.isnan(x)]).all()


def test_accuracy_against_libm(double_lib):
    """At most 2^-52 = 2.2e-16 from glibc's sin and cos (absolute: 2 units in the last place of values in
    [0.5, 1]; near a zero of sin or cos at a large angle, the reduction's error of about 1e-21 * k is
    many units of the tiny value's last place, as it always was)."""
    x = _angles()
    s, c = _run(double_lib, "trig_one", x, "double")
    s_m, c_m = _run(double_lib, "trig_libm", x, "double")
    near = np.abs(x) < 1e5
    for got, want in ((s, s_m), (c, c_m)):
        err = np.abs(got[near] - want[near])
        assert err.max() <= 2.0 ** -52, (err.max(), x[near][err.argmax()])
        small = near & (np.abs(x) < 1e-8)                  # sin x = x there: exact
        assert np.array_equal(got[small], want[small])


def _long_lane_loop(angles=36, statements=400):
    """A lane loop as a batch entry's first part prints it for a humanoid (talos_reduced: 32 angles):
    sd_sincos_lane of each angle, then a long chain of arithmetic on them."""
    lines = [f"double s{k}, c{k};\n        far |= sd_sincos_lane(x[{k}][k], &s{k}, &c{k});" for k in range(angles)]
    lines.append("double v0 = s0;")
    lines += [f"const double v{j + 1} = v{j} * c{j % angles} + s{(7 * j) % angles} * 0.5;" for j in range(statements)]
    body = "\n        ".join(lines)
    return f"""
void lanes(double (*restrict x)[16], double *restrict out, int *restrict big)
{{
#pragma omp simd
    for (int k = 0; k < 16; ++k) {{
        int far = 0;
        {body}
        out[k] = v{statements};
        big[k] = far;
    }}
}}
"""


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="x86-64 flags")
def test_a_long_lane_loop_of_many_angles_is_vectorized(tmp_path):
    """gcc stops inlining a plain `static inline` kernel into a function this long, and the call keeps
    the loop from being vectorized (talos_reduced's first lane part of inverse dynamics ran one state at a
    time): sd_sincos_kernel and sd_sincos_lane are always inlined."""
    source = _source("double") + _long_lane_loop()
    c_path = tmp_path / "lanes.c"
    c_path.write_text(source)
    argv, identity = cload._compiler(c_path)
    if not cload._is_gcc(identity):
        pytest.skip("gcc's -fopt-info-vec")
    flags = [f for f in cload._opt_flags(identity) if not f.startswith("-march")] + ["-march=haswell", "-fopenmp"]
    result = subprocess.run([*argv, *flags, "-std=c99", "-fopt-info-vec", "-c", str(c_path), "-o",
                             str(tmp_path / "lanes.o")], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    far = next(k for k, text in enumerate(source.splitlines(), 1) if "int far = 0;" in text)
    # gcc reports the loop at the first statement of its body that it vectorizes (after `far`'s)
    assert any(text.startswith(f"{c_path}:{line}:") and "loop vectorized" in text
               for text in result.stderr.splitlines() for line in (far + 1, far + 2)), result.stderr


def test_angles_in_pairs():
    """The sin and cos of one angle come together from sd_sincos, where the first of them is assigned
    (here cos before sin for q2); an angle of which only one is used takes libm's; a batch lane turns each
    into sd_sincos_lane."""
    import sympy as sp

    from symdyn.codegen.c.trig import lane_lines as _lane_lines
    q0, q1, q2, x0, x1, x2, x3, x4, x5, x6, x7, x8 = sp.symbols("q0 q1 q2 x0 x1 x2 x3 x4 x5 x6 x7 x8")
    assignments = [(x0, q0 * q1), (x1, sp.sin(q1)), (x2, sp.cos(q1)), (x3, sp.sin(x0)), (x4, sp.cos(x0)),
                   (x5, sp.cos(q2 + 1)), (x6, sp.cos(q2)), (x7, sp.sin(q2)), (x8, x1 * x5 + x3 * x4 + x6 * x7)]
    units = C.statements(assignments, {f"q{k}": ("q", k) for k in range(3)})
    assert [u.lines for u in units] == [["const double x0 = q0*q1;"], ["double x1, x2;", "sd_sincos(q1, &x1, &x2);"],
                                        ["double x3, x4;", "sd_sincos(x0, &x3, &x4);"],
                                        ["const double x5 = cos(1.0 + q2);"], ["double x7, x6;", "sd_sincos(q2, &x7, &x6);"],
                                        ["const double x8 = x1*x5 + x3*x4 + x6*x7;"]]
    assert [u.defs for u in units[1:5]] == [("x1", "x2"), ("x3", "x4"), ("x5",), ("x7", "x6")]
    lanes = _lane_lines([line for u in units for line in u.lines])
    assert lanes == ["const double x0 = q0*q1;", "double x1, x2;", "sd_far |= sd_sincos_lane(q1, &x1, &x2);",
                     "double x3, x4;", "sd_far |= sd_sincos_lane(x0, &x3, &x4);",
                     "double x5_sin, x5;", "sd_far |= sd_sincos_lane(1.0 + q2, &x5_sin, &x5);", "sd_far |= x5_sin != x5_sin;",
                     "double x7, x6;", "sd_far |= sd_sincos_lane(q2, &x7, &x6);", "const double x8 = x1*x5 + x3*x4 + x6*x7;"]


def _many_angles(n):
    import sympy as sp
    q, x = sp.symbols(f"q0:{n + 1}"), sp.symbols(f"x0:{2 * n + 3}")
    assignments = [(x[0], q[0] * q[1])]
    for k in range(1, n + 1):           # q1 ... qn; q0's sin alone
        assignments += [(x[2 * k - 1], sp.sin(q[k])), (x[2 * k], sp.cos(q[k]))]
    assignments += [(x[2 * n + 1], sp.sin(q[0])), (x[2 * n + 2], sum(x[1:2 * n + 2]) * x[0])]
    return assignments, {f"q{k}": ("q", k) for k in range(n + 1)}


def test_many_input_angles_go_through_one_block():
    """From tuning.trig_block angles of the inputs alone on, their sin and cos come from one sd_sincos_n over
    arrays of a multiple of trig_pad entries (padded with zeros), a run of consecutive entries of q copied by one memcpy; the batch
    lanes compute each angle by sd_sincos_lane as without the block, and the batch plan weighs the same
    statements (trig.statements, trig.count)."""
    from symdyn.codegen.c import trig
    assignments, inputs = _many_angles(TUNING.trig_block - 2)
    few = C.statements(assignments, inputs)       # trig_block - 1 angles in all: q0 (sin alone) and q1 ...
    assert not any("sd_sincos_n" in line for u in few for line in u.lines)
    assignments, inputs = _many_angles(TUNING.trig_block)
    units = C.statements(assignments, inputs)
    lines = [line for u in units for line in u.lines]
    n, pad = TUNING.trig_block + 1, -(-(TUNING.trig_block + 1) // TUNING.trig_pad) * TUNING.trig_pad
    assert lines[:n + 1] == [f"double sd_angle[{pad}], sd_sin[{pad}], sd_cos[{pad}];",
                             *(f"sd_angle[{k}] = q{k + 1};" for k in range(n - 1)), f"sd_angle[{n - 1}] = q0;"]
    assert lines[n + 1:pad + 1] == [f"sd_angle[{k}] = 0;" for k in range(n, pad)]
    assert lines[pad + 1:pad + 3] == [f"memcpy(sd_angle + 0, q + 1, {n - 1} * sizeof sd_angle[0]);",
                                      f"sd_sincos_n(sd_angle, sd_sin, sd_cos, {pad});"]
    assert lines[pad + 3] == "const double x1 = sd_sin[0], x2 = sd_cos[0];"
    assert f"const double x{2 * n - 1} = sd_sin[{n - 1}];" in lines
    pairs = CBackend(tuning=replace(TUNING, trig_block=10 ** 6)).statements(assignments, inputs)
    paired = [line for u in pairs for line in u.lines]
    assert sorted(trig.lane_lines(lines)) == sorted(trig.lane_lines(paired)), "the lanes do without the block"
    assert (trig.count(lines), trig.statements(lines)) == (trig.count(paired), trig.statements(paired))
    # a run is copied in the pieces that the vectorized loop loads (AVX2: 4 doubles, then 2 and 1)
    assert [trig._loads(n, 4) for n in (4, 6, 7, 12)] == [[0, 4], [0, 4, 6], [0, 4, 6, 7], [0, 4, 8, 12]]


@pytest.mark.parametrize("block", [False, True])
def test_angles_of_an_input_not_named_q(tmp_path, block):
    """A function whose angles are entries of q and of another argument `theta`, whose symbols are named
    q4 ... q7 (like entries of q beyond its end): compiled with load_c's flags, it equals the same
    expressions evaluated in numpy, in pairs and in the block (which reads each angle from the right array)."""
    import symengine as se

    import symdyn
    from symdyn.codegen.generator import Program
    from conftest import ROOT, relerr
    q = [se.Symbol(f"q{k}") for k in range(4)]
    theta = [se.Symbol(f"q{k}") for k in range(4, 8)]
    x = [se.Symbol(f"x{k}") for k in range(7)]
    assignments = [(x[0], se.sin(q[1])), (x[1], se.cos(q[1])), (x[2], se.sin(q[2])), (x[3], se.sin(theta[0])),
                   (x[4], se.cos(theta[1])), (x[5], se.sin(theta[2])), (x[6], se.cos(theta[3]))]
    results = [x[0] * x[4] + x[3], x[1] + x[2] * x[5], x[6] - x[0] * q[0], x[3] * x[2] + theta[3]]
    program = Program("angles", "A test function.", ("q", "theta"), "vector", "out", {"q": q, "theta": theta},
                      assignments, results, arg_shapes={"q": (4,), "theta": (4,)}, dims=[(4,)])
    backend = CBackend(tuning=replace(TUNING, trig_block=2 if block else 10 ** 6))
    files = backend.render(symdyn.load_robot(ROOT / "robots" / "planar2.yaml"), [program], "demo", "numeric")
    source = files["demo.c"]
    assert "const double q1 = q[1];" in source and "const double q4 = theta[0];" in source
    copies = ["memcpy(sd_angle + 2, theta + 0, 2 * sizeof sd_angle[0]);",  # cut where the loop's loads start
              "memcpy(sd_angle + 4, theta + 2, 2 * sizeof sd_angle[0]);"]
    assert [c in source for c in copies] == [block, block]
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    argv, identity = cload._compiler(tmp_path / "demo.c")
    lib_path = tmp_path / "demo.so"
    strict = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic"]    # q1, q2: angles alone, loads still used
    build = subprocess.run([*argv, *cload._opt_flags(identity), *cload.CFLAGS, *strict, str(tmp_path / "demo.c"), "-o",
                            str(lib_path), "-lm"], capture_output=True, text=True)
    assert build.returncode == 0, build.stderr
    lib = ctypes.CDLL(str(lib_path))
    ptr = ctypes.POINTER(ctypes.c_double)
    rng = np.random.default_rng(3)
    for _ in range(5):
        qv, tv, out = rng.uniform(-4, 4, 4), rng.uniform(-4, 4, 4), np.full(4, np.nan)
        lib.demo_angles(*(a.ctypes.data_as(ptr) for a in (qv, tv, out)))
        s, c = np.sin, np.cos
        want = [s(qv[1]) * c(tv[1]) + s(tv[0]), c(qv[1]) + s(qv[2]) * s(tv[2]),
                c(tv[3]) - s(qv[1]) * qv[0], s(tv[0]) * s(qv[2]) + tv[3]]
        assert relerr(out, want) < 1e-14
