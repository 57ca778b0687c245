"""Large robots: C functions split into parts, --functions, and load_c's warning before a long compile."""
import json
import re
import subprocess
import sys

import numpy as np
import pytest
from click.testing import CliRunner

import symdyn
from conftest import ROOT, function_args, random_states, relerr
from random_chain import random_chain, random_tree
from symdyn.cli import main
from symdyn.codegen import manifest
from symdyn.codegen.c import C, render_c
from symdyn.codegen.c.tuning import TUNING
from symdyn.codegen.generator import trace_all
from symdyn.functions import FUNCTIONS
from symdyn.generate import generate
from test_c_strict import COMPILERS, STRICT
from test_generated import rendered

PANDA = ROOT / "robots" / "panda.urdf"


def _write(folder, module, texts):
    """The module's .h, .c and manifest (.json): texts in that order."""
    folder.mkdir(parents=True, exist_ok=True)
    for ext, text in zip((".h", ".c", ".json"), texts):
        (folder / f"{module}{ext}").write_text(text)
    return folder / f"{module}.c"


def _split_and_whole(model, module, tmp_path, params="numeric", split_above=60, part_size=25):
    """The same programs rendered once with every function above `split_above` statements cut into
    parts of `part_size` (small, to split a small robot), once in one piece."""
    programs = trace_all(model, params)
    (json_text,) = manifest.render(model, programs, module, params, [C]).values()
    split = render_c(model, programs, module, params, split_above=split_above, part_size=part_size) + (json_text,)
    whole = render_c(model, programs, module, params, split_above=None) + (json_text,)
    return _write(tmp_path / "split", module, split), _write(tmp_path / "whole", module, whole), programs


def test_default_keeps_arm_functions_in_one_piece():
    """The 7-DoF arms' code (and so their speed) does not change: no function is near the threshold."""
    c_text = rendered(PANDA)["panda.c"]
    assert "_part" not in c_text and "SD_NOINLINE" not in c_text
    assert max(len(p.assignments) for p in trace_all(symdyn.load_robot(PANDA))) < TUNING.split_above / 1.5


@pytest.mark.parametrize("compiler", COMPILERS)
def test_split_c_compiles_strictly(compiler, tmp_path):
    split_c, _, _ = _split_and_whole(symdyn.load_robot(PANDA), "panda", tmp_path)
    text = split_c.read_text()
    assert text.count("static SD_NOINLINE void panda_coriolis_matrix_part") > 10
    result = subprocess.run([compiler, *STRICT, "-c", str(split_c), "-o", str(tmp_path / "x.o")],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[:2000]


def test_split_stores_runs_of_zeros_as_loops(tmp_path):
    """A split function's first part stores the runs of exact zeros of its outputs as loops, as one piece
    does (one statement per zero entry made talos_reduced floating's regressor, 14573 zeros, 1.26x slower)."""
    split_c, whole_c, _ = _split_and_whole(symdyn.load_robot(PANDA), "panda", tmp_path)
    split, whole = split_c.read_text(), whole_c.read_text()
    singles = [len(re.findall(r"\w\[\d+\] = 0\.0;", text)) for text in (split, whole)]
    loops = [text.count("sd_i] = 0;") for text in (split, whole)]
    assert singles[0] == singles[1] and loops[0] == loops[1] > 50, (singles, loops)


@pytest.mark.parametrize("params, shape", [("numeric", "chain"), ("symbolic", "chain"), ("numeric", "tree"),
                                           ("numeric", "floating")])
def test_split_c_equals_one_piece_and_engine(params, shape, tmp_path, monkeypatch):
    """Split functions compute the same numbers as the one-piece ones and as the numeric engine, on a
    random chain and a random tree with prismatic joints and general axes (numeric and symbolic
    parameters) and on an arm with a floating base."""
    monkeypatch.setenv("SYMDYN_CACHE", str(tmp_path / "cache"))
    model = {"chain": lambda: random_chain(5, seed=3), "tree": lambda: random_tree(6, seed=4),
             "floating": lambda: symdyn.load_robot(ROOT / "robots" / "ur5.urdf", floating_base=True)}[shape]()
    split_c, whole_c, programs = _split_and_whole(model, "chain", tmp_path, params)
    assert sum(len(p.assignments) > 60 for p in programs) >= 10           # most functions really split
    split, whole, engine = symdyn.load_c(split_c), symdyn.load_c(whole_c), symdyn.Engine(model)
    q, qd, x = random_states(model.dof, 10, seed=4)
    if shape == "floating":                 # q = [x, y, z, unit quaternion, joints]: nq = nv + 1
        q = np.random.default_rng(4).normal(size=(10, model.nq))
        q[:, 3:7] /= np.linalg.norm(q[:, 3:7], axis=1, keepdims=True)
    standard = np.array(model.parameters)
    for fn in FUNCTIONS:
        args = function_args(fn, q, qd, x, len(model.kinematic_frames), standard)
        extra = (standard,) if params == "symbolic" and fn.parametric else ()
        ours = getattr(split, fn.name)(*args, *extra)
        assert relerr(ours, getattr(whole, fn.name)(*args, *extra)) < 1e-12, fn.name
        assert relerr(ours, getattr(engine, fn.name)(*args)) < 1e-10, fn.name


def test_split_function_may_write_over_its_input(tmp_path, monkeypatch):
    """The parts read the input arrays before writing any output: out == input works as in one piece."""
    monkeypatch.setenv("SYMDYN_CACHE", str(tmp_path / "cache"))
    split_c, whole_c, _ = _split_and_whole(symdyn.load_robot(PANDA), "panda", tmp_path)
    q, qd, _ = random_states(7, 1, seed=5)
    results = []
    for c_file in (split_c, whole_c):
        mod = symdyn.load_c(c_file)
        nu = qd[0].copy()
        expected = mod.joint_rates(q[0], nu)
        ptr = mod._ffi.from_buffer("double[]", nu)
        mod._lib.panda_joint_rates(mod._ffi.from_buffer("double[]", q[0]), ptr, ptr)     # output over input nu
        assert np.array_equal(nu, expected)
        results.append(nu)
    assert relerr(results[0], results[1]) < 1e-13


def test_parts_pass_few_values_and_reuse_slots():
    """Each part has at most part_size statements, the parts together compute every assignment of the
    program once; the workspace holds far fewer values than the function has statements (a slot is
    reused once its value has been read for the last time). Statements as the C backend makes them
    (C.statements: a sin/cos pair, or the block of the input angles' sin and cos, is one)."""
    from dataclasses import replace

    from symdyn.codegen.backends import _context, input_entries
    from symdyn.codegen.c import C, CBackend
    model = symdyn.load_robot(PANDA)
    (program,) = trace_all(model, functions=["coriolis_matrix"])
    statements = len(C.statements(program.assignments, input_entries(program)))
    f = _context(model, [program], "panda", "numeric", C)["functions"][0]
    CBackend(tuning=replace(C.tuning, split_above=60, part_size=25))._single_state(f)
    assert len(f["parts"]) == -(-statements // 25) > 10
    assert sum(part.statements for part in f["parts"]) == statements
    assert all(0 < part.statements <= 25 for part in f["parts"])
    defined = [sym for part in f["parts"] for sym in part.defs]
    assert sorted(defined) == sorted(str(sym) for sym, _ in program.assignments)
    assert 0 < f["workspace"] < statements / 3
    for part in f["parts"]:
        slots = [int(m) for line in part.lines for m in re.findall(r"w\[(\d+)\]", line)]
        assert all(0 <= s < f["workspace"] for s in slots)


def test_generate_only_named_functions(tmp_path):
    result = CliRunner().invoke(main, ["generate", str(PANDA), "--out", str(tmp_path), "--lang", "python,c",
                                       "--functions", "gravity, mass_matrix,gravity"])
    assert result.exit_code == 0, result.output
    py, h, c = ((tmp_path / f"panda{ext}").read_text() for ext in (".py", ".h", ".c"))
    names = {fn.name for fn in FUNCTIONS}
    assert [f for f in re.findall(r"^def (\w+)\(", py, re.M) if f in names] == ["mass_matrix", "gravity"]  # set order
    for text in (h, c):                    # beside neutral/integrate/difference, which every module has
        assert [f for f in re.findall(r"^void panda_(\w+)\(", text, re.M) if f in names] == ["mass_matrix", "gravity"]
    for text in (py, h, c):
        assert "Functions: mass_matrix, gravity (--functions)" in text
    mod = symdyn.load_c(tmp_path / "panda.c")
    assert hasattr(mod, "gravity") and not hasattr(mod, "inverse_dynamics")
    q = random_states(7, 3)[0]
    assert relerr(mod.gravity(q), symdyn.Engine(symdyn.load_robot(PANDA)).gravity(q)) < 1e-10


def test_whole_set_records_no_function_list():
    assert "--functions" not in rendered(PANDA)["panda.py"]


@pytest.mark.parametrize("command", ["generate", "info", "compare"])
@pytest.mark.parametrize("names", ["gravity,bogus", ",", "mass_matrix,x\ny"])
def test_unknown_function_is_a_one_line_error(command, names, tmp_path):
    out = tmp_path / "out"
    extra = ["--out", str(out)] if command == "generate" else []
    result = subprocess.run([sys.executable, "-m", "symdyn.cli", command, str(PANDA), *extra, "--functions", names],
                            capture_output=True, text=True)
    assert result.returncode == 2
    assert result.stdout == "" and result.stderr.count("\n") == 1
    assert result.stderr.startswith("symdyn: error: --functions: ")
    assert not out.exists()


def test_library_refuses_unknown_function(tmp_path):
    with pytest.raises(ValueError, match="unknown function \"nope\""):
        generate([PANDA], tmp_path / "out", functions=["gravity", "nope"])
    assert not (tmp_path / "out").exists()


def test_info_and_compare_take_functions():
    info = CliRunner().invoke(main, ["info", str(PANDA), "--functions", "coriolis_matrix"])
    assert info.exit_code == 0 and "coriolis_matrix" in info.output and "mass_matrix" not in info.output
    result = subprocess.run([sys.executable, "-m", "symdyn.cli", "compare", str(PANDA), "--states", "3",
                             "--functions", "mass_matrix_inverse,gravity"], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    names = {fn.name for fn in FUNCTIONS}
    rows = [line.split()[0] for line in result.stdout.splitlines() if line.split() and line.split()[0] in names]
    assert rows == ["mass_matrix_inverse", "gravity"]
    assert "pinocchio" in result.stdout


def _inflated(tmp_path, name, statements):
    """planar6's module with a manifest that counts `statements` per function: big to load_c's estimate
    (which reads the manifest), quick to compile."""
    files = rendered(ROOT / "robots" / "planar6.yaml")
    data = json.loads(files["planar6.json"])
    for f in data["functions"]:
        f["statements"] = statements
    return _write(tmp_path / name, "planar6", (files["planar6.h"], files["planar6.c"], json.dumps(data)))


def _notices(capfd):
    return [line for line in capfd.readouterr().err.splitlines() if line.startswith("symdyn:")]


def test_load_c_estimates_a_long_compile_from_the_manifest(tmp_path, monkeypatch, capfd):
    """One line per compile, not a warning, naming the module's file but not its folder (compare's is a
    temporary one); the time and memory from the manifest's statement counts, when it is long."""
    monkeypatch.setenv("SYMDYN_CACHE", str(tmp_path / "cache"))
    small = _inflated(tmp_path, "small", 10)
    symdyn.load_c(small)
    (line,) = _notices(capfd)
    assert line.startswith("symdyn: compiling planar6.c once, then cached (") and "expect" not in line
    big = _inflated(tmp_path, "big", 1000)                   # 33 functions of 1000: ~33k statements, with lanes
    symdyn.load_c(big, lanes=True)
    (line,) = _notices(capfd)
    assert line.startswith("symdyn: compiling planar6.c once") and line.endswith("GB of memory")
    assert "expect about 40 s and 0.6 GB" in line and "warning" not in line and str(tmp_path) not in line
    symdyn.load_c(big, lanes=True)                           # cached: no compile, no notice
    assert _notices(capfd) == []


def test_notice_keeps_a_progress_bar_line(tmp_path, monkeypatch):
    """Under a progress bar on a terminal, the CLI's hook prints the notice on a line of its own."""
    from symdyn.codegen.c import loader as cload
    lines = []
    monkeypatch.setattr(cload, "notice_hook", lines.append)
    monkeypatch.setenv("SYMDYN_CACHE", str(tmp_path / "cache"))
    symdyn.load_c(_inflated(tmp_path, "small", 10))
    assert len(lines) == 1 and lines[0].startswith("symdyn: compiling planar6.c")
