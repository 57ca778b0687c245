"""gcc 12.2's SLP vectorizer with AVX-512 miscompiled a part of solo12's constrained forward dynamics
(split into parts that pass values through the workspace w): load_c turns the pass off for gcc
(cload.GCC_FLAGS). The workspace itself is checked by simulation: every load from w reads the value
the program stored for that symbol, so the generated C has no slot reused too early. The last two
tests fail on this machine (gcc 12.2, AMD Zen 4) without the workaround; elsewhere they check that
load_c's flags give the right values."""
import re
import subprocess

import pytest

import symdyn
import symdyn.codegen.c.loader as cload
from conftest import ROOT, erd_path, relerr
from symdyn.codegen.backends import _function_context
from symdyn.codegen import manifest
from symdyn.codegen.c import C, render_c
from symdyn.codegen.generator import trace_all
from symdyn.functions import ALL_BY_NAME
from symdyn.generate import module_name
from test_contacts import FEET, SOLO, _args

NAME = "constrained_forward_dynamics"
GCC = "gcc (Debian 12.2.0-14+deb12u1) 12.2.0\nCopyright (C) 2022 Free Software Foundation, Inc.\n"


@pytest.fixture(scope="module")
def solo_cfd():
    model = symdyn.load_robot(erd_path(SOLO), floating_base=True, contacts=",".join(FEET))
    return model, trace_all(model, "numeric", functions=[NAME])


def test_workspace_loads_read_what_was_stored(solo_cfd):
    """Run the parts' stores and loads of w in order: each load finds its own symbol in its slot."""
    _, programs = solo_cfd
    context = _function_context(programs[0], C)
    C._single_state(context)
    assert len(context["parts"]) > 10
    slots, loads = {}, 0
    for part in context["parts"]:
        for line in part.lines:
            if m := re.fullmatch(r"w\[(\d+)\] = (\w+);", line):
                assert int(m[1]) < context["workspace"]
                slots[int(m[1])] = m[2]
            elif m := re.fullmatch(r"const double (\w+) = w\[(\d+)\];", line):
                assert slots.get(int(m[2])) == m[1], line
                loads += 1
    assert loads > 1000


def test_gcc_gets_the_workaround_others_do_not():
    assert set(cload.GCC_FLAGS) <= set(cload._opt_flags(GCC))
    assert cload._opt_flags("/usr/bin/clang\nDebian clang version 14.0.6\n") == list(cload.OPT_FLAGS)
    assert cload._opt_flags("Apple clang version 15.0.0 (clang-1500.1.0.2.5)\n") == list(cload.OPT_FLAGS)


def test_reduced_reproducer_with_load_c_flags(tmp_path):
    """tests/data/gcc12_slp_avx512.c (part 9 reduced to the statements of its 512-bit store) built
    with load_c's flags for this compiler: exits 1 when miscompiled (gcc 12.2, Zen 4, no workaround)."""
    argv, identity = cload._compiler(ROOT / "tests" / "data" / "gcc12_slp_avx512.c")
    flags = cload._opt_flags(identity)
    exe = tmp_path / "repro"
    for attempt in (flags, [f for f in flags if f != "-march=native"]):   # as load_c: without it if unknown
        built = subprocess.run([*argv, *attempt, "-std=c99", str(ROOT / "tests" / "data" / "gcc12_slp_avx512.c"),
                                "-o", str(exe), "-lm"], capture_output=True, text=True)
        if built.returncode == 0:
            break
    assert built.returncode == 0, built.stderr
    run = subprocess.run([str(exe)], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout


def test_solo12_constrained_forward_dynamics_in_c(solo_cfd, tmp_path, monkeypatch):
    """With load_c's default flags: wrong by 1e-3 with gcc 12.2 -march=native on a Zen 4 without the
    workaround, 1e-14 with it."""
    model, programs = solo_cfd
    monkeypatch.setenv("SYMDYN_CACHE", str(tmp_path / "cache"))
    module = module_name(model.provenance.path)
    header, source = render_c(model, programs, module, "numeric")
    (tmp_path / f"{module}.h").write_text(header)
    (tmp_path / f"{module}.c").write_text(source)
    for name, text in manifest.render(model, programs, module, "numeric", [C]).items():
        (tmp_path / name).write_text(text)
    args = _args(model, ALL_BY_NAME[NAME], 5, 7)
    ours = getattr(symdyn.load_c(tmp_path / f"{module}.c"), NAME)(*args)
    ref = getattr(symdyn.Engine(model), NAME)(*args)
    for a, b in zip(ours, ref):
        assert relerr(a, b) < 1e-10
