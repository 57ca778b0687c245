"""Batch entries of the generated C (`<robot>_<function>_batch`): the numbers of a loop of single-state
calls for any count (blocks of lanes, a padded last block, none at all), any thread count, and angles
beyond the vectorized sincos's range; the lane loop is vectorized by gcc."""
import argparse
import re
import shutil
import subprocess
from dataclasses import replace

import numpy as np
import pytest

import golden
import symdyn
from conftest import ROOT, function_args, import_file, random_states, relerr
from oracle import Pinocchio, to_pinocchio
from symdyn.codegen import c as c_backend
from symdyn.codegen import manifest
from symdyn.codegen.c import loader as cload
from symdyn.codegen.c.tuning import TUNING
from symdyn.functions import FUNCTIONS
from symdyn.generate import render

PLANAR2 = ROOT / "generated" / "planar2.c"


def panda_c():
    """generated/panda.c as `symdyn generate` writes it (rendered once per process: not committed)."""
    return golden.generated_file("panda.c")
BY_NAME = {fn.name: fn for fn in FUNCTIONS}
PARAMETERS = np.array(symdyn.load_robot(ROOT / "robots" / "panda.urdf").parameters)


def _args(module, name, q, qd, x):
    params = np.broadcast_to(PARAMETERS, q.shape[:-1] + PARAMETERS.shape)
    return function_args(BY_NAME[name], q, qd, x, len(module.FRAMES), params)


@pytest.fixture(scope="module")
def panda():
    return symdyn.load_c(panda_c())


@pytest.fixture(scope="module")
def panda_threads():
    return symdyn.load_c(panda_c(), threads=2)


def _states(module, count, seed=0):
    q, qd, x = random_states(module.NV, count, seed)
    return q, qd, x


def _loop(fn, args):
    """One single-state call per state (load_c calls the C function itself for unbatched arrays)."""
    outs = [fn(*(a[i] for a in args)) for i in range(len(args[0]))]
    if isinstance(outs[0], tuple):
        return tuple(np.array(o) for o in zip(*outs))
    return np.array(outs)


def _pairs(a, b):
    return zip(a, b) if isinstance(a, tuple) else [(a, b)]


def _same(batch, loop):
    """Within 2e-15 of the largest entry: the lanes run the single function's statements, but gcc may
    contract a different pair of them into one fused multiply-add (mostly they are bit for bit)."""
    return all(b.shape == s.shape and np.abs(b - s).max(initial=0) <= 2e-15 * max(1.0, np.abs(s).max(initial=0))
               for b, s in _pairs(batch, loop))


def test_every_function_equals_the_loop_of_single_calls(panda):
    """37 states: two full blocks of 16 lanes and a padded one."""
    q, qd, x = _states(panda, 37)
    names = list(panda._signatures)
    assert len(names) >= 30 and "mass_matrix" in names
    exact = 0
    for name in names:
        args = _args(panda, name, q, qd, x)
        batch, loop = getattr(panda, name)(*args), _loop(getattr(panda, name), args)
        assert _same(batch, loop), name
        exact += all(np.array_equal(b, s) for b, s in _pairs(batch, loop))
    assert exact >= len(names) // 2             # most functions are bit for bit


@pytest.mark.parametrize("count", [0, 1, 7, 15, 16, 17, 33])
def test_counts_that_are_not_multiples_of_the_block(panda, count):
    q, qd, x = _states(panda, count, seed=count)
    for name in ("gravity", "mass_matrix", "forward_dynamics", "regressor"):
        args = _args(panda, name, q, qd, x)
        batch = getattr(panda, name)(*args)
        assert batch.shape[0] == count
        if count:
            assert _same(batch, _loop(getattr(panda, name), args)), (name, count)


def test_threads_give_the_same_bits(panda, panda_threads):
    assert panda_threads.threads == (2 if cload._openmp(cload._compiler(panda_c())[0]) else 1)
    q, qd, x = _states(panda, 1001, seed=3)
    for name in ("inverse_dynamics", "mass_matrix_inverse", "coriolis_matrix", "frame_jacobian"):
        args = _args(panda, name, q, qd, x)
        assert np.array_equal(getattr(panda_threads, name)(*args), getattr(panda, name)(*args)), name


def test_angles_beyond_the_vector_reduction_fall_back_to_the_single_call(panda):
    """|angle| >= 1e5 (and NaN) take libm's sin and cos in the single function: the batch computes those
    states again with it, the others of their block keep the vector results."""
    q, qd, x = _states(panda, 20, seed=5)
    q[2, 1], q[9, 0], q[10, 6], q[17, 3] = 3.0e5, -1.0e7, 1.0e300, np.nan
    for name in ("gravity", "inverse_dynamics", "mass_matrix"):
        args = _args(panda, name, q, qd, x)
        batch, loop = getattr(panda, name)(*args), _loop(getattr(panda, name), args)
        assert np.array_equal(np.isnan(batch), np.isnan(loop))
        assert _same(np.nan_to_num(batch), np.nan_to_num(loop)), name
        assert np.isfinite(batch[[2, 9]]).all() and np.isnan(batch[17]).any()
        assert np.abs(batch[2] - loop[3]).max() > 0          # not the state of another lane


def test_batch_matches_pinocchio(panda):
    oracle = Pinocchio(to_pinocchio(symdyn.load_robot(ROOT / "robots" / "panda.urdf")))
    q, qd, x = _states(panda, 11, seed=7)
    for name in ("inverse_dynamics", "mass_matrix", "forward_dynamics", "coriolis_matrix"):
        args = _args(panda, name, q, qd, x)
        batch = getattr(panda, name)(*args)
        for i in range(len(q)):
            assert relerr(batch[i], getattr(oracle, name)(*(a[i] for a in args))) < 1e-10, name


def test_without_openmp_batches_run_on_one_thread(monkeypatch, capfd):
    monkeypatch.setattr(cload, "_openmp", lambda argv: False)
    module = symdyn.load_c(PLANAR2, threads=3)
    assert module.threads == 1
    assert "batches run on one thread" in capfd.readouterr().err
    q, qd, x = random_states(2, 13)
    # planar2's mass matrix uses cos(q1) alone: libm's cos in the single call, the polynomial in the lanes
    assert _same(module.mass_matrix(q), _loop(module.mass_matrix, [q]))
    assert _same(module.inverse_dynamics(q, qd, x), _loop(module.inverse_dynamics, [q, qd, x]))


def test_lanes_only_where_they_pay():
    """The batch plan, a value: lanes for a function with enough statements per entry it moves and blocks
    within batch_entries; a long one in lane parts, within the module's budget; else single calls, with why."""
    from symdyn.codegen.c.batch import LANE_PARTS, LANES, SINGLE, plan
    from symdyn.codegen.c.tuning import TUNING

    def kind(statements, ins, outs):
        return plan([(statements, ins + outs)], TUNING)[0].kind

    assert kind(261, 21, 7) == LANES                          # the Panda's inverse dynamics
    assert kind(630, 21, 686) == LANES                        # its regressor: 0.89 statements per entry
    assert kind(355, 18, 504) == LANES                        # stanford's regressor: 0.68, 1.4x in lanes
    assert kind(9, 2, 12) == LANES                            # planar2's frame Jacobian: 0.64, 7.7x
    assert kind(261, 19, 432) == SINGLE                       # solo12 floating's: 0.58, 0.89-0.98x
    assert kind(146, 18, 504) == SINGLE                       # planar6's regressor: 0.28, 0.82x
    assert kind(23, 98, 69) == SINGLE                         # the Panda's base_parameters: 0.14, 0.58x
    assert kind(974, 14, 7) == LANES                          # the Panda's coriolis_nu: one loop (parts 0.95x)
    assert kind(1331, 21, 7) == LANE_PARTS                    # the xarm7's: 1.62x in parts (perf-history 59)
    assert kind(1538, 39 + 38 + 38, 38) == LANE_PARTS         # talos_reduced's inverse dynamics
    assert kind(5823, 77, 1444) == LANE_PARTS                 # its Coriolis matrix
    assert kind(90000, 100, TUNING.batch_entries) == SINGLE   # blocks beyond batch_entries
    budget = plan([(15000, 10), (15000, 10), (3000, 10)], TUNING)         # 20000 statements of lane parts
    assert [b.kind for b in budget] == [LANE_PARTS, SINGLE, LANE_PARTS] and "budget of 20000" in budget[1].reason
    big = plan([(3000, 10)], TUNING, workspace=lambda k: TUNING.batch_entries)[0]
    assert big.kind == SINGLE and "workspace" in big.reason
    assert "fewer than 0.6 statements per entry" in plan([(23, 167)], TUNING)[0].reason


def test_a_7dof_arm_runs_every_function_in_lanes():
    """The xarm7's longest functions (1214-1331 statements, above the Panda's 974) run in lanes (in parts of
    lane_part statements): looping single calls gave 1.0-1.1x (docs/perf-history.md "Batch entries beyond the
    Panda"), one lane loop 2.0x, parts 3.2-3.7x ("Lane loops of 1000 statements or more in parts")."""
    from conftest import ERD_ARMS, erd_path
    from symdyn.readers.load import load_robot
    model = load_robot(erd_path(ERD_ARMS["xarm7"]))
    names = ["coriolis_nu", "diagonalized_forward_dynamics"]
    source = render(model, ("c",), functions=names)["xarm7.c"]
    assert re.findall(r"\n/\* (\w+) of `count` states, one after the other", source) == []
    assert all(f"static void sd_xarm7_{name}_lanes(" in source for name in names)


def test_small_functions_that_compute_enough_per_entry_run_in_lanes():
    """planar2's frame Jacobian (9 statements for 14 entries) and stanford's regressor (355 for 522) run in
    lanes, 7.7x and 1.4x the loop of single calls that they were with LANE_WORK 0.7 (docs/perf-history.md "`LANE_WORK`
    settled beyond the Panda");
    the frame Jacobian's batch gives the single calls' bits."""
    assert "static void sd_stanford_regressor_lanes(" in golden.generated_file("stanford.c").read_text()
    assert "static void sd_planar2_frame_jacobian_lanes(" in PLANAR2.read_text()
    module = symdyn.load_c(PLANAR2)
    q, qd, x = random_states(module.NV, 37, seed=4)         # two full blocks of 16 lanes and a padded one
    args = function_args(BY_NAME["frame_jacobian"], q, qd, x, len(module.FRAMES), None)
    batch, loop = module.frame_jacobian(*args), _loop(module.frame_jacobian, args)
    assert batch.shape == (37, 1, 6, 2) and np.array_equal(batch, loop)
    assert np.abs(batch[:, 0, :2, 0]).max() > 0.1            # the computed entries, not only the constants


def test_the_block_holds_only_computed_entries():
    """Constants skip the lane loop: a group of four columns of constants comes from `fill`; in a group
    with computed entries, +0.0 comes from a row of zeros and any other constant goes through the block;
    an expression that appears twice (a symmetric matrix) has one block entry; the last size % 4 columns
    take any constant from `fill`."""
    from symdyn.codegen.c.batch import output_block
    values = ["0.0", "1.0", "0.0", "-0.0",             # four constants: one vector per row
              "x1", "0.0", "2.5", "-0.0",              # mixed: 2.5 and -0.0 go through the block
              "x2", "x1", "qd3", "x2",                 # repeated expressions share an entry
              "0.0", "3.0f"]                           # the tail
    numbers = [float(v.rstrip("f")) if v[0] in "-0123456789" else None for v in values]   # the output's "numbers"
    got = output_block([(str(j), v) for j, v in enumerate(values)], numbers)
    assert got["block"] == 5                                   # x1, 2.5, -0.0, x2, qd3
    assert got["src"] == [-1, -1, -1, -1, 0, -1, 1, 2, 3, 0, 4, 3, -1, -1]
    assert got["fill"] == [(1, "1.0"), (3, "-0.0"), (13, "3.0f")]
    assert output_block([("0", "x1"), ("1", "x2")], [None, None])["src"] == [0, 1]
    # the values decide, not the printed text: a constant printed as an expression is still a constant
    got = output_block([(str(j), v) for j, v in enumerate(["1.0/3", "0.0", "0.0", "-(0.0)", "x1"])],
                       [1 / 3, 0.0, 0.0, -0.0, None])
    assert got["src"] == [-1, -1, -1, -1, 0] and got["fill"] == [(0, "1.0/3"), (3, "-(0.0)")]
    source = panda_c().read_text()
    assert "double sd_Y[275][SD_LANES];" in source                  # of the regressor's 686 entries
    assert "static const double sd_fill_regressor_Y[686] = {[684] = 1.0};" in source


def test_block_entries_are_stored_as_soon_as_computed():
    """In every lane loop of the Panda, a block entry is stored right after the statement that defines the
    last of its operands (or with the inputs, when it has none): stored at the end, the entries stayed
    live over the whole loop and were spilled (docs/perf-history.md "Batch lane loops with early block stores")."""
    source = panda_c().read_text()
    loops = re.findall(r"for \(int sd_k = 0; sd_k < SD_LANES; \+\+sd_k\) \{\n(.*?)\n\s*\(void\)sd_w;\n\s*"
                       r"sd_big\[sd_k\] \|= sd_far;", source, re.S)
    assert len(loops) == 31
    store = re.compile(r"sd_\w+\[\d+\]\[sd_k\] = (.*);")
    for body in loops:
        lines = [line.strip() for line in body.split("\n")]
        defined_at = {}
        for k, line in enumerate(lines):
            if not store.fullmatch(line):
                for name in re.findall(r"(?:double |&|, )(\w+)(?= =|[,;)])", line):
                    defined_at[name] = k
        for k, line in enumerate(lines):
            m = store.fullmatch(line)
            if not m:
                continue
            operands = [defined_at[n] for n in re.findall(r"\b\w+\b", m.group(1)) if n in defined_at]
            last = max(operands, default=-1)
            between = lines[last + 1:k] if operands else lines[:k]
            # the input loads, and the sin and cos of the inputs (one statement of the single function)
            loads = re.compile(r"int sd_far = 0;|const double \w+ = sd_\w+\[\d+\]\[sd_k\];|double \w+, \w+;|sd_far \|= .*")
            assert all(store.fullmatch(b) or loads.fullmatch(b) for b in between), (line, between[:3])



def _bench_batch():
    return import_file(ROOT / "benchmarks" / "bench_batch.py", "bench_batch")


def test_bench_split_patches_every_block_copy():
    """bench_batch --split times each lane entry with its copies out of the lane blocks switched off or replaced by a
    memset (docs/perf-history.md "Batch regressors, issue 15, sixth pass", "Batch frame Jacobian, issue 15"), and
    those copies alone: it must patch both copy functions of the
    template and find every call of them, or it would time some copies under the lane loop's name; it refuses a
    module whose calls it does not recognize."""
    bench = _bench_batch()
    source = panda_c().read_text()
    patched, copies = bench.split_module(source, "panda")
    calls = re.findall(r"^ +sd_scatter\(sd_", source, re.MULTILINE)
    assert len(copies) == 31 and sum(map(len, copies.values())) == len(calls) > 31
    assert copies["regressor"] == [("sd_scatter", "sd_src_regressor_Y, sd_fill_regressor_Y, 686", 686)]
    assert copies["inverse_dynamics"] == [("sd_scatter", "sd_src_inverse_dynamics_tau, sd_fill_inverse_dynamics_tau, 7",
                                           7)]
    assert patched.count("if (sd_bench_copy) {") == 1 and "__builtin_memset(rows" in patched
    with pytest.raises(SystemExit, match="panda.c: its copies"):
        bench.split_module(source.replace("686, sd_n, Y + sd_first", "686, sd_n, Y + 0 + sd_first", 1), "panda")


@pytest.mark.skipif(not shutil.which("gcc"), reason="gcc")
def test_bench_split_driver_runs(tmp_path, monkeypatch):
    """The --split driver of planar2 (the module's source included, patched) times the lane entries only, and its
    check of the switch holds: switched off, the copies leave the rows as they were; as a memset, the batch returns
    its zeros; switched on, the loop of single calls' numbers. Without the switch the check fails."""
    bench = _bench_batch()
    args = argparse.Namespace(count=40, repeat=1, threads=1, cc="gcc", cflags="")
    names = ["mass_matrix", "friction", "inverse_dynamics"]      # lanes (a compact block); no lanes; lanes

    def run(folder):
        folder.mkdir()
        exe = bench.build(PLANAR2, names, args, folder, split=True)
        out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
        return [line.split() for line in out.splitlines()]

    rows = run(tmp_path / "split")
    assert [r[0] for r in rows] == ["mass_matrix", "inverse_dynamics"]
    assert all(float(t) > 0 for r in rows for t in r[1:4])           # alone, + memset, the copy alone
    assert all(r[4] == "0" and float(r[5]) < 1e-12 for r in rows), rows
    monkeypatch.setattr(bench, "_SWITCH", "")
    assert all(int(r[4]) > 0 for r in run(tmp_path / "no-switch"))


@pytest.fixture(scope="module")
def ur5_few(tmp_path_factory):
    """The UR5's regressor, frame Jacobian and placement (constants 1.0), inverse dynamics (quick to compile)."""
    from symdyn.codegen.c import C
    from symdyn.codegen.generator import trace_all
    model = symdyn.load_robot(ROOT / "robots" / "ur5.urdf")
    folder = tmp_path_factory.mktemp("ur5")
    names = ("regressor", "frame_jacobian", "frame_placement", "inverse_dynamics")
    programs = trace_all(model, functions=names)
    for name, text in {**C.render(model, programs, "ur5", "numeric"),
                       **manifest.render(model, programs, "ur5", "numeric", [C])}.items():
        (folder / name).write_text(text)
    return folder / "ur5.c"


@pytest.mark.parametrize("lanes", [6, 8])
def test_other_lane_counts(ur5_few, lanes, monkeypatch):
    """UR5_BATCH_LANES=6: no 4 x 4 tiles, every column one at a time (the path of other compilers);
    8: tiles, two per group. Both give the loop of single calls for full and partial blocks."""
    monkeypatch.setattr(cload, "CFLAGS", (*cload.CFLAGS, f"-DUR5_BATCH_LANES={lanes}"))
    module = symdyn.load_c(ur5_few)
    assert "sd_scatter(" in ur5_few.read_text()
    q, qd, x = random_states(module.NV, 2 * lanes + 3, seed=lanes)
    for name in module._signatures:
        args = function_args(BY_NAME[name], q, qd, x, len(module.FRAMES), None)
        assert _same(getattr(module, name)(*args), _loop(getattr(module, name), args)), (lanes, name)


@pytest.mark.skipif(not shutil.which("gcc"), reason="gcc")
@pytest.mark.parametrize("functions", [("mass_matrix",), ("friction",), ("inverse_dynamics",)])
def test_static_helpers_only_where_used(functions, tmp_path):
    """A module with lane functions, one without (friction: no sd_gather, no sd_scatter) compiles without
    warnings: an unused static function would be one."""
    from symdyn.codegen.c import C
    from symdyn.codegen.generator import trace_all
    model = symdyn.load_robot(ROOT / "robots" / "planar2.yaml")
    files = C.render(model, trace_all(model, functions=functions), "planar2", "numeric")
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    used = {helper: f"{helper}(" in files["planar2.c"] for helper in ("sd_gather", "sd_scatter")}
    assert used == {"sd_gather": functions != ("friction",), "sd_scatter": functions != ("friction",)}
    for flags in (["-std=c99"], ["-std=gnu99", "-fopenmp"]):
        result = subprocess.run(["gcc", *flags, "-O1", "-Wall", "-Wextra", "-pedantic", "-Werror", "-c",
                                 str(tmp_path / "planar2.c"), "-o", str(tmp_path / "p.o")], capture_output=True, text=True)
        assert result.returncode == 0, result.stderr[:2000]


@pytest.mark.parametrize("threads", [0, -1, 1.5, True, "2"])
def test_bad_thread_counts(threads):
    with pytest.raises(ValueError, match="threads"):
        symdyn.load_c(PLANAR2, threads=threads)


@pytest.mark.skipif(not shutil.which("gcc"), reason="gcc")
def test_gcc_vectorizes_every_lane_loop(tmp_path):
    """A statement that gcc cannot vectorize (a libm call, an integer conversion to long before
    AVX-512) in the lane loop would silently bring back one state per instruction."""
    result = subprocess.run(["gcc", "-std=c99", *cload.OPT_FLAGS[:-1], "-march=haswell", "-fopenmp",
                             "-fopt-info-vec-optimized", "-c", str(PLANAR2), "-o", str(tmp_path / "p.o")],
                            capture_output=True, text=True, cwd=PLANAR2.parent)
    assert result.returncode == 0, result.stderr[:2000]
    vectorized = {int(n) for n in re.findall(r"planar2\.c:(\d+):\d+: optimized: loop vectorized", result.stderr)}
    lines = PLANAR2.read_text().splitlines()
    loops = [i + 1 for i, line in enumerate(lines) if "for (int sd_k = 0; sd_k < SD_LANES; ++sd_k) {" in line
             and "][sd_k];" in lines[i + 2]]                     # not the loops of constants (friction here)
    assert len(loops) >= 20
    # gcc reports a loop at the first statement of its body: the line after `int sd_far = 0;`
    missed = [n for n in loops if not vectorized & {n + 1, n + 2}]
    assert not missed, [lines[n + 1] for n in missed][:3]


# --- float32 (--precision float32) --------------------------------------------------------------

F32_FUNCTIONS = ("inverse_dynamics", "mass_matrix", "forward_dynamics", "gravity", "coriolis_matrix", "frame_jacobian")
#: norm-wise error of float32 against float64 (max |f32 - f64| / max |f64| per state): at most 4.1e-6
#: over 2000 random Panda states, every function (docs/perf-history.md "Derivatives of the dynamics")
F32_TOLERANCE = 2e-5


@pytest.fixture(scope="module")
def panda_f32(tmp_path_factory):
    from symdyn.codegen.c import C32
    from symdyn.codegen.generator import trace_all
    model = symdyn.load_robot(ROOT / "robots" / "panda.urdf")
    folder = tmp_path_factory.mktemp("f32")
    programs = trace_all(model, functions=F32_FUNCTIONS)
    for name, text in {**C32.render(model, programs, "panda", "numeric"),
                       **manifest.render(model, programs, "panda", "numeric", [C32])}.items():
        (folder / name).write_text(text)
    return symdyn.load_c(folder / "panda_f32.c")


def test_float32_module(panda_f32, panda):
    assert panda_f32.dtype == np.float32 and list(panda_f32._signatures) == list(F32_FUNCTIONS)
    q, qd, x = _states(panda, 300, seed=11)
    q, qd, x = (a.astype(np.float32) for a in (q, qd, x))         # the same inputs for both
    for name in F32_FUNCTIONS:
        args = _args(panda, name, q, qd, x)
        single, double = getattr(panda_f32, name)(*args), getattr(panda, name)(*args)
        assert single.dtype == np.float32 and single.shape == double.shape
        flat_s, flat_d = single.reshape(len(q), -1).astype(float), double.reshape(len(q), -1)
        err = np.abs(flat_s - flat_d).max(axis=1) / np.abs(flat_d).max(axis=1)
        assert err.max() < F32_TOLERANCE, (name, err.max())
        assert np.median(err) > 1e-9                                # float arithmetic indeed
        loop = _loop(getattr(panda_f32, name), args)
        assert np.abs(single - loop).max() <= 1e-6 * np.abs(loop).max(), name


def test_float32_from_the_cli(tmp_path):
    from click.testing import CliRunner
    from symdyn.cli import main
    robot = str(ROOT / "robots" / "planar2.yaml")
    result = CliRunner().invoke(main, ["generate", robot, "--out", str(tmp_path), "--lang", "c,python",
                                       "--precision", "float32", "--functions", "gravity"])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["planar2.json", "planar2.py", "planar2_f32.c", "planar2_f32.h",
                                                              "planar2_f32.json"]
    header = (tmp_path / "planar2_f32.h").read_text()
    assert "#define PLANAR2_F32_FLOAT32 1" in header
    assert "void planar2_f32_gravity_batch(long count, const float *q, float *g);" in header
    for lang in ("cpp", "python"):
        bad = CliRunner().invoke(main, ["generate", robot, "--out", str(tmp_path / lang), "--lang", lang,
                                        "--precision", "float32"])
        assert bad.exit_code == 2 and "--precision float32" in bad.output and not (tmp_path / lang).exists()


def test_no_lanes_build(monkeypatch):
    """-DSYMDYN_NO_LANES (load_c(lanes=False) or SYMDYN_NO_LANES=1): loops of single calls, same numbers."""
    lanes, loops = symdyn.load_c(PLANAR2), symdyn.load_c(PLANAR2, lanes=False)
    monkeypatch.setenv("SYMDYN_NO_LANES", "1")
    from_env = symdyn.load_c(PLANAR2)
    assert loops._lib is not lanes._lib
    q, qd, x = random_states(2, 21, seed=2)
    for m in (loops, from_env):
        assert _same(m.forward_dynamics(q, qd, x), lanes.forward_dynamics(q, qd, x))
        assert np.array_equal(m.forward_dynamics(q, qd, x), _loop(lanes.forward_dynamics, [q, qd, x]))


# --- lanes in parts (functions longer than LANE_STATEMENTS) ----------------------------------------

#: the Panda's functions with lanes in parts of 40 statements (LANE_STATEMENTS 60) and the single
#: functions of more than 300 statements in parts: what talos_reduced's long functions do, at a size that
#: compiles in seconds. Outputs of every kind: vectors, matrices (symmetric: a compact block), the
#: regressor's constants, sin/cos of the inputs and of intermediate angles (the frame Jacobian).
LANE_PART_FUNCTIONS = ("inverse_dynamics", "mass_matrix", "forward_dynamics", "coriolis_matrix", "regressor",
                       "frame_jacobian", "gravity")


@pytest.fixture(scope="module")
def panda_lane_parts(tmp_path_factory):
    from symdyn.codegen.generator import trace_all
    model = symdyn.load_robot(ROOT / "robots" / "panda.urdf")
    backend = c_backend.CBackend(tuning=replace(TUNING, lane_statements=60, lane_part=40, split_above=300))
    programs = trace_all(model, functions=LANE_PART_FUNCTIONS)
    files = {**backend.render(model, programs, "panda", "numeric"),
             **manifest.render(model, programs, "panda", "numeric", [backend])}
    folder = tmp_path_factory.mktemp("lane_parts")
    for name, text in files.items():
        (folder / name).write_text(text)
    return folder / "panda.c"


def test_lane_parts_equal_the_loop_of_single_calls(panda_lane_parts):
    source = panda_lane_parts.read_text()
    for name in LANE_PART_FUNCTIONS:                 # every function in lane parts, none loops single calls
        assert f"static SD_NOINLINE void sd_panda_{name}_lanes2(" in source, name
    assert "panda_coriolis_matrix_part2(" in source and "panda_gravity_part1(" not in source
    module = symdyn.load_c(panda_lane_parts)
    q, qd, x = _states(module, 37, seed=11)          # two full blocks and a padded one
    q[5, 3], q[20, 0] = 2.0e5, np.nan                # beyond the lanes' sin/cos: the single function again
    for name in LANE_PART_FUNCTIONS:
        args = _args(module, name, q, qd, x)
        batch, loop = getattr(module, name)(*args), _loop(getattr(module, name), args)
        for b, s in _pairs(batch, loop):
            assert np.array_equal(np.isnan(b), np.isnan(s)), name
            assert _same(np.nan_to_num(b), np.nan_to_num(s)), name
    oracle = Pinocchio(to_pinocchio(symdyn.load_robot(ROOT / "robots" / "panda.urdf")))
    for name in ("inverse_dynamics", "mass_matrix", "forward_dynamics", "coriolis_matrix"):
        args = _args(module, name, q[:4], qd[:4], x[:4])
        batch = getattr(module, name)(*args)
        for i in range(4):
            assert relerr(batch[i], getattr(oracle, name)(*(a[i] for a in args))) < 1e-10, name


def test_lane_parts_on_threads_give_the_same_bits(panda_lane_parts):
    """Each OpenMP thread runs whole blocks, with its own workspace block on its stack."""
    one, two = symdyn.load_c(panda_lane_parts), symdyn.load_c(panda_lane_parts, threads=2)
    q, qd, x = _states(one, 301, seed=13)
    for name in ("forward_dynamics", "coriolis_matrix"):
        args = _args(one, name, q, qd, x)
        assert np.array_equal(getattr(two, name)(*args), getattr(one, name)(*args)), name


def test_lane_parts_pass_values_through_the_workspace_block(panda_lane_parts):
    """Each part loads what earlier parts computed from sd_w and the inputs from their own blocks (no copy
    of an input through sd_w); every computed output entry is stored once."""
    source = panda_lane_parts.read_text()
    body = source[source.index("sd_panda_inverse_dynamics_lanes2("):]
    body = body[:body.index("\n}\n")]
    assert re.search(r"const double x\d+ = sd_w\[\d+\]\[sd_k\];", body)
    assert re.search(r"const double qd\d = sd_qd\[\d\]\[sd_k\];", body)
    assert not re.search(r"sd_w\[\d+\]\[sd_k\] = q", source)
    for name in ("tau", "M", "Y"):                    # M: a symmetric matrix; Y: mostly constants
        size = int(re.search(rf"double sd_{name}\[(\d+)\]\[SD_LANES\];", source).group(1))
        stores = re.findall(rf"sd_{name}\[(\d+)\]\[sd_k\] = ", source)
        assert sorted(map(int, stores)) == list(range(size)), name
    assert "double sd_M[27][SD_LANES];" in source and "double sd_Y[275][SD_LANES];" in source


@pytest.mark.skipif(not shutil.which("gcc"), reason="gcc")
def test_lane_parts_compile_cleanly_and_vectorize(panda_lane_parts, tmp_path):
    """Without warnings (restrict pointers to blocks, unused arrays), and every part's loop vectorized."""
    for flags in (["-std=c99"], ["-std=gnu99", "-fopenmp"]):
        result = subprocess.run(["gcc", *flags, "-O1", "-Wall", "-Wextra", "-pedantic", "-Werror", "-c",
                                 str(panda_lane_parts), "-o", str(tmp_path / "p.o")], capture_output=True, text=True)
        assert result.returncode == 0, result.stderr[:2000]
    result = subprocess.run(["gcc", "-std=c99", *cload.OPT_FLAGS[:-1], "-march=haswell", "-fopenmp",
                             "-fopt-info-vec-optimized", "-c", str(panda_lane_parts), "-o", str(tmp_path / "p.o")],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[:2000]
    vectorized = {int(n) for n in re.findall(r"panda\.c:(\d+):\d+: optimized: loop vectorized", result.stderr)}
    lines = panda_lane_parts.read_text().splitlines()
    loops = [i + 1 for i, line in enumerate(lines) if "for (int sd_k = 0; sd_k < SD_LANES; ++sd_k) {" in line
             and "int sd_far = 0;" in lines[i + 1]]
    assert len(loops) > 40
    missed = [n for n in loops if not vectorized & {n + 1, n + 2}]
    assert not missed, [lines[n + 1] for n in missed][:3]


def test_lane_parts_within_the_module_budget(monkeypatch):
    """Lane parts cost compile time: a module puts at most LANE_BUDGET statements into them, in the order of
    its functions, skipping one that does not fit; the others loop single calls and say why."""
    model = symdyn.load_robot(ROOT / "robots" / "panda.urdf")
    names = ["inverse_dynamics", "mass_matrix", "forward_dynamics", "gravity"]       # 266, 214, 696, 91 statements
    from symdyn.codegen.generator import trace_all
    backend = c_backend.CBackend(tuning=replace(TUNING, lane_statements=60, lane_budget=266 + 214 + 100))
    source = backend.render(model, trace_all(model, functions=names), "panda", "numeric")["panda.c"]
    in_parts = [name for name in names if f"sd_panda_{name}_lanes1(" in source]
    assert in_parts == ["inverse_dynamics", "mass_matrix", "gravity"]
    comments = {m.group(1): " ".join(m.group(2).replace("\n *", " ").split()) for m in
                re.finditer(r"\n/\* (\w+) of `count` states, one after the other, without lanes: (.*?)\*/", source, re.S)}
    assert list(comments) == ["forward_dynamics"]
    assert comments["forward_dynamics"].startswith("the module's lane parts are at their budget of 580 statements")



#: a driver of the copy out of a lane block (the module's static sd_scatter), included after the module: rows of
#: `size` doubles, full blocks (the 4 x 4 tiles) and partial ones, against the copy entry by entry
_SCATTER_DRIVER = r"""
#include <stdio.h>
#include <stdlib.h>
int main(void)
{
    const long sizes[] = {250, 256, 260, 686, 48, 7};
    long wrong = 0;
    for (int s = 0; s < 6; ++s)
        for (int n = SD_LANES; n > 0; n -= 5) {
            const long size = sizes[s];
            double *block = malloc(sizeof(double) * size * SD_LANES), *fill = malloc(sizeof(double) * size);
            double *rows = malloc(sizeof(double) * size * SD_LANES);
            int *src = malloc(sizeof(int) * size);
            for (long j = 0; j < size * SD_LANES; ++j) block[j] = j + 0.5;
            for (long j = 0; j < size * SD_LANES; ++j) rows[j] = -7.0;
            for (long j = 0; j < size; ++j) {
                src[j] = j % 16 >= 12 ? -1 : (int)((j * 7) % size);     /* constant groups, entries out of order */
                fill[j] = j % 3 ? -1.0 - j : 0.0;
            }
            sd_scatter(block, src, fill, size, n, rows);
            for (int k = 0; k < SD_LANES; ++k)
                for (long j = 0; j < size; ++j)
                    wrong += rows[k * size + j] != (k >= n ? -7.0 : src[j] < 0 ? fill[j] : block[src[j] * SD_LANES + k]);
            free(block); free(fill); free(rows); free(src);
        }
    printf("wrong %ld\n", wrong);
    return 0;
}
"""


@pytest.mark.skipif(not shutil.which("gcc"), reason="gcc")
@pytest.mark.parametrize("lanes", [16, 6])
def test_the_copy_out_of_a_block_puts_every_entry_where_it_belongs(tmp_path, lanes):
    """The one copy out of the lane blocks (sd_scatter: tiles for full blocks of a multiple of 4 lanes, entry by
    entry else) writes column j of lane k from block entry src[j] or fill[j], and no row beyond the block's n."""
    from symdyn.codegen.c import C
    from symdyn.codegen.generator import trace_all
    model = symdyn.load_robot(ROOT / "robots" / "planar2.yaml")
    files = C.render(model, trace_all(model, functions=("mass_matrix", "inverse_dynamics")), "planar2", "numeric")
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "driver.c").write_text(f"#define PLANAR2_BATCH_LANES {lanes}\n" + '#include "planar2.c"\n'
                                       + _SCATTER_DRIVER)
    build = subprocess.run(["gcc", "-std=gnu99", "-O2", "-Wall", "-Werror", str(tmp_path / "driver.c"), "-o",
                            str(tmp_path / "driver"), "-lm"], capture_output=True, text=True)
    assert build.returncode == 0, build.stderr[:2000]
    out = subprocess.run([str(tmp_path / "driver")], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["wrong", "0"], out
