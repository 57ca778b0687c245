"""load_c and the module manifest: one API for the Python and C modules, the manifest, bounds, the
compile cache's locks and leftovers, and whose staging folders a run may finish or delete."""
import inspect
import json
import os
import stat
import subprocess
import sys
import time

import numpy as np
import pytest
from click.testing import CliRunner

import symdyn
from conftest import ROOT, relerr
from random_chain import random_chain, random_description, random_tree
from symdyn.cli import main
from symdyn.codegen import manifest
from symdyn.codegen.c import loader as cload
from symdyn.codegen.c import C32
from symdyn.codegen.generator import trace_all
from symdyn.compare import import_module_file
from symdyn.errors import CModuleError, OutputError, RobotFileError
from symdyn.generate import STAGE_PREFIX, generate, module_name, render

PLANAR2 = ROOT / "robots" / "planar2.yaml"
TOL = 1e-10


def _floating_with_contact():
    """A free-flyer carrying a prismatic and a revolute joint, its leaf in point contact: constraint
    functions, gains and restitution."""
    from symdyn.multibody.constraints import attach, parse_contacts
    from symdyn.readers.description import build_model
    d = random_description(3, 12)
    d["joints"][0]["type"] = "floating"
    model = build_model(d, "<floating chain>")
    return attach(model, parse_contacts(model.kinematic_frames[-1].name))


MODELS = {"chain": lambda: random_chain(3, seed=2), "tree": lambda: random_tree(4, seed=3),
          "floating": _floating_with_contact}


@pytest.fixture(scope="module", params=list(MODELS))
def both(request, tmp_path_factory):
    """(model, Python module, C module) of one robot, generated together."""
    model = MODELS[request.param]()
    folder = tmp_path_factory.mktemp(request.param)
    for name, text in render(model, ("python", "c")).items():
        (folder / name).write_text(text)
    stem = module_name(model.provenance.path)
    os.environ["SYMDYN_CACHE"] = str(folder / "cache")
    try:
        c_module = symdyn.load_c(folder / f"{stem}.c", lanes=False)
    finally:
        del os.environ["SYMDYN_CACHE"]
    return model, import_module_file(folder / f"{stem}.py", f"loader_{request.param}"), c_module


#: what only the Python module has: JAX's compile helper; numpy as a name
PYTHON_ONLY = {"jax_jit", "np"}


def _python_api(py):
    """The public names of the Python module but its Lie-group helpers (vector_integrate(xp, ...),
    ...: the array library first, called by integrate and difference)."""
    return [n for n, value in vars(py).items() if not n.startswith("_") and n not in PYTHON_ONLY
            and not (callable(value) and list(inspect.signature(value).parameters)[:1] == ["xp"])]


def test_the_c_module_offers_the_python_modules_api(both):
    """Every public function and constant of the Python module, with the same signature or value."""
    model, py, c = both
    names = _python_api(py)
    assert {"NQ", "NV", "JOINT_NAMES", "FRAMES", "neutral", "integrate", "difference", "inverse_dynamics"} <= set(names)
    for name in names:
        ours, theirs = getattr(c, name, None), getattr(py, name)
        assert ours is not None, name
        if callable(theirs):
            assert inspect.signature(ours) == inspect.signature(theirs), name
            if name in {f['name'] for f in c.manifest['functions']}:
                assert theirs.__doc__.startswith(ours.__doc__), name
        elif isinstance(theirs, np.ndarray):
            assert np.array_equal(ours, theirs), name
        else:
            assert ours == theirs, name
    assert c.NQ == model.nq and c.JOINT_NAMES == model.joint_names
    assert bool(c.CONSTRAINTS) == bool(model.constraints)


def test_optional_arguments_call_the_variants(both):
    model, py, c = both
    rng = np.random.default_rng(1)
    q = np.stack([py.integrate(py.neutral(), v) for v in rng.normal(size=(4, model.nv))])
    qd, x = rng.normal(size=(2, 4, model.nv))
    f_ext = rng.normal(size=(4, len(model.kinematic_frames), 6))
    for name in ("inverse_dynamics", "forward_dynamics"):
        with_f = getattr(c, name)(q, qd, x, f_ext=f_ext)
        assert relerr(with_f, getattr(c, name + "_fext")(q, qd, x, f_ext)) == 0
        assert relerr(with_f, getattr(py, name)(q, qd, x, f_ext)) < TOL
        assert relerr(getattr(c, name)(q, qd, x), getattr(py, name)(q, qd, x)) < TOL
    with pytest.raises(TypeError, match=r"inverse_dynamics\(q, qd, qdd, f_ext=None\): too many"):
        c.inverse_dynamics(q, qd, x, f_ext, None)
    with pytest.raises(TypeError, match="missing a required argument: 'qdd'"):
        c.inverse_dynamics(q, qd)
    if model.constraints:
        gains = np.array([4.0, 2.0])
        stabilized = c.constrained_forward_dynamics(q, qd, x, gains=gains)
        for a, b in zip(stabilized, c.constrained_forward_dynamics_baumgarte(q, qd, x, gains, np.zeros(c.NC))):
            assert relerr(a, b) == 0
        for a, b in zip(stabilized, py.constrained_forward_dynamics(q, qd, x, gains=gains)):
            assert relerr(a, b) < TOL
        with pytest.raises(TypeError, match="without gains"):
            c.constrained_forward_dynamics(q, qd, x, error=np.zeros(c.NC))


def test_numbers_broadcast_to_restitution_and_gains(both):
    """restitution and gains take a number or a 0-d array (the C module said "got (1,)" for a 0-d
    gains); a wrong shape names the argument's shape as given."""
    model, py, c = both
    if not model.constraints:
        pytest.skip("no constraints")
    q, qd, tau = py.neutral(), np.linspace(-1, 1, model.nv), np.ones(model.nv)
    expected = c.impact(q, qd, np.array([0.5]))
    for e in (0.5, np.float64(0.5), np.array(0.5), [0.5]):
        for a, b in zip(c.impact(q, qd, e), expected):
            assert relerr(a, b) == 0
    for a, b in zip(expected, py.impact(q, qd, np.array([0.5]))):
        assert relerr(a, b) < TOL
    batch = c.impact(np.stack([q, q]), np.stack([qd, -qd]), np.array([[0.5], [0.0]]))
    assert batch[0].shape == (2, model.nv)
    same = c.constrained_forward_dynamics_baumgarte(q, qd, tau, np.array(3.0), np.zeros(c.NC))
    for a, b in zip(same, c.constrained_forward_dynamics_baumgarte(q, qd, tau, [3.0, 3.0], np.zeros(c.NC))):
        assert relerr(a, b) == 0
    with pytest.raises(ValueError, match=r"gains must have shape \(\.\.\., 2\), got \(3,\)"):
        c.constrained_forward_dynamics(q, qd, tau, gains=[1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match=r"q must have shape \(\.\.\., \d+\), got \(\)"):
        c.gravity(1.0)


def test_float32_in_float32_out_as_in_python(both):
    model, py, c = both
    rng = np.random.default_rng(3)
    q = np.stack([py.integrate(py.neutral(), v) for v in rng.normal(size=(3, model.nv))])
    qd = rng.normal(size=(3, model.nv))
    for args in ((q.astype(np.float32), qd.astype(np.float32)), (q.astype(np.float32), qd),
                 (q.astype(np.float32), qd.tolist()), (q[0].astype(np.float32), qd[0].astype(np.float32))):
        ours, theirs = c.nonlinear_effects(*args), py.nonlinear_effects(*args)
        assert ours.dtype == theirs.dtype and ours.shape == theirs.shape, [getattr(a, "dtype", None) for a in args]
        assert relerr(ours, theirs) < (1e-5 if ours.dtype == np.float32 else TOL)
    assert c.integrate(q.astype(np.float32), qd.astype(np.float32)).dtype == np.float32
    assert c.difference(q, q.astype(np.float32)).dtype == np.float64
    assert c.neutral(like=q.astype(np.float32)).dtype == np.float32 and c.neutral().dtype == np.float64


def test_integrate_takes_an_array_dt_as_python(both):
    model, py, c = both
    rng = np.random.default_rng(4)
    q = np.stack([py.integrate(py.neutral(), v) for v in rng.normal(size=(5, model.nv))])
    v = rng.normal(size=(5, model.nv))
    for dt in (0.1, np.array(0.1), np.linspace(0.0, 1.0, 5)[:, None]):
        assert relerr(c.integrate(q, v, dt), py.integrate(q, v, dt)) < TOL
    assert relerr(c.difference(q, c.integrate(q, v, 0.25)), 0.25 * v) < 1e-9


# --- the manifest ------------------------------------------------------------------------------

def test_manifest_says_what_the_module_holds():
    model = symdyn.load_robot(PLANAR2)
    programs = trace_all(model)
    files = render(model, ("python", "c", "c-float32"))
    data = json.loads(files["planar2.json"])
    assert (data["format"], data["module"], data["precision"], data["digest"]) == (1, "planar2", "float64", model.provenance.digest)
    assert json.loads(files["planar2_f32.json"])["precision"] == "float32"
    assert data["sizes"] == {"dof": 2, "nq": 2, "nv": 2, "nf": 1, "nc": 0, "np": 28}
    assert data["joint_names"] == ["joint1", "joint2"] and data["frames"] == ["link2"]
    assert f'#define PLANAR2_SET_ID 0x{data["set_id"]}u' in files["planar2.h"]
    assert [f["name"] for f in data["functions"]] == [p.name for p in programs]
    for f, p in zip(data["functions"], programs):
        assert f["statements"] == len(p.assignments) and f["ops"] == p.ops
        assert [(a["name"], tuple(a["shape"])) for a in f["args"]] == [(a, p.arg_shapes[a]) for a in p.args]
        assert [(o["name"], tuple(o["shape"])) for o in f["outputs"]] == [(n, s) for n, s, _ in p.outputs()]
    assert data["functions"][0]["fext"] == "inverse_dynamics_fext"
    assert files["planar2.json"] == render(model, ("python", "c", "c-float32"))["planar2.json"]   # deterministic
    assert files["planar2.json"].isascii()
    assert "planar2_f32.json" in manifest.render(model, programs, "planar2", "numeric", [C32])


@pytest.fixture(scope="module")
def planar2_c(tmp_path_factory):
    folder = tmp_path_factory.mktemp("planar2")
    for name, text in render(symdyn.load_robot(PLANAR2), ("c",)).items():
        (folder / name).write_text(text)
    return folder / "planar2.c"


def _copy(planar2_c, folder, json_text=None):
    folder.mkdir(parents=True, exist_ok=True)
    for ext in (".h", ".c", ".json"):
        (folder / f"planar2{ext}").write_bytes(planar2_c.with_suffix(ext).read_bytes())
    if json_text is not None:
        (folder / "planar2.json").write_bytes(json_text)
    return folder / "planar2.c"


def _one_line(message, start):
    assert len(message.splitlines()) == 1 and message.startswith(start), message


@pytest.mark.parametrize("text, problem", [(None, "no manifest beside planar2.c"), (b"{not json", "not a symdyn manifest"),
                                           (b"\xff\xfe{}", "cannot read"), (b'{"format": 7}', "manifest format 7"),
                                           (b'{"format": 1}', "not a symdyn manifest")])
def test_a_module_without_a_good_manifest_is_refused(planar2_c, tmp_path, monkeypatch, text, problem):
    monkeypatch.setenv("SYMDYN_CACHE", str(tmp_path / "cache"))
    c_path = _copy(planar2_c, tmp_path / "m", text)
    if text is None:
        c_path.with_suffix(".json").unlink()
    with pytest.raises(CModuleError) as caught:
        symdyn.load_c(c_path)
    _one_line(str(caught.value), f"{c_path.with_suffix('.json')}: {problem}")
    assert not (tmp_path / "cache").exists() or not list((tmp_path / "cache").glob("*.so"))


def test_a_manifest_naming_a_function_the_header_lacks_is_refused(planar2_c, tmp_path, monkeypatch):
    monkeypatch.setenv("SYMDYN_CACHE", str(tmp_path / "cache"))
    data = json.loads(planar2_c.with_suffix(".json").read_text())
    data["functions"][0]["name"] = "inverse_dynamics2"
    c_path = _copy(planar2_c, tmp_path / "m", json.dumps(data).encode())
    with pytest.raises(CModuleError) as caught:
        symdyn.load_c(c_path)
    _one_line(str(caught.value), f"{c_path.with_suffix('.h')}: does not declare planar2_inverse_dynamics2")


# --- bounds and the compile cache --------------------------------------------------------------

@pytest.mark.parametrize("threads", [0, -1, 100000, 2**31, True, 1.5, "2", None])
def test_threads_are_bounded(planar2_c, threads):
    """Checked before anything is read or compiled (libgomp crashed at 100000, 2**31 overflowed)."""
    with pytest.raises(ValueError) as caught:
        symdyn.load_c(planar2_c, threads=threads)
    _one_line(str(caught.value), f"threads must be a whole number from 1 to {cload._max_threads()}")


def test_threads_up_to_the_bound_work(planar2_c, tmp_path, monkeypatch):
    monkeypatch.setenv("SYMDYN_CACHE", str(tmp_path / "cache"))
    module = symdyn.load_c(planar2_c, threads=cload._max_threads(), lanes=False)
    q = np.random.default_rng(0).normal(size=(64, 2))
    assert relerr(module.gravity(q), symdyn.Engine(symdyn.load_robot(PLANAR2)).gravity(q)) < TOL


@pytest.mark.skipif(not hasattr(os, "geteuid"), reason="POSIX owners")
def test_leftovers_of_killed_compiles_are_removed(planar2_c, tmp_path, monkeypatch):
    """The build folders and temporaries of the entry being compiled, and ours older than
    STALE_BUILD_MINUTES, go; a recent one of another entry (a compile running now) and anything not
    named .build-* stay."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("SYMDYN_CACHE", str(cache))
    symdyn.load_c(planar2_c, lanes=False)
    (lib,) = cache.glob("*.so")
    for p in cache.glob("planar2-*"):
        p.unlink()
    entry = lib.stem
    old = time.time() - 60 * (cload.STALE_BUILD_MINUTES + 1)
    made = {"this": cache / f".build-{entry}-x1", "this_tmp": cache / f".build-{entry}-x2.so",
            "old": cache / ".build-other-old", "recent": cache / ".build-other-new", "mine": cache / "notes.txt"}
    for key, p in made.items():
        (p.mkdir() if "." not in p.name[1:] else p.write_text("x")) if key != "this_tmp" else p.write_text("x")
    (made["this"] / "half.o").write_text("x")
    os.utime(made["old"], (old, old))
    symdyn.load_c(planar2_c, lanes=False)
    assert {k for k, p in made.items() if os.path.lexists(p)} == {"recent", "mine"}
    assert sorted(p.name for p in cache.glob("planar2-*")) == [lib.name, lib.name + ".lock", lib.name + ".sha256"]


_LOADER = r"""
import sys
import symdyn
symdyn.load_c(sys.argv[1], lanes=False)
"""


def test_concurrent_processes_compile_a_module_once(planar2_c, tmp_path):
    """Three processes load the same module into an empty cache: one compiles, the others wait for its
    lock and load its library."""
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
               SYMDYN_CACHE=str(tmp_path / "cache"))
    procs = [subprocess.Popen([sys.executable, "-c", _LOADER, str(planar2_c)], env=env, stderr=subprocess.PIPE,
                              text=True) for _ in range(3)]
    errs = [p.communicate(timeout=300)[1] for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], errs
    assert sum(e.count("symdyn: compiling planar2.c") for e in errs) == 1, errs
    assert len(list((tmp_path / "cache").glob("*.so"))) == 1


# --- whose staging folders ---------------------------------------------------------------------

def _stage(out, name, files, journal):
    stage = out / (STAGE_PREFIX + name)
    stage.mkdir(mode=0o700)
    os.chmod(stage, 0o700)
    for fname, text in files.items():
        (stage / fname).write_text(text)
    if journal is not None:
        (stage / "COMMITTED").write_bytes(journal)
    return stage


def test_a_planted_stage_is_neither_used_nor_deleted(tmp_path, monkeypatch, planar2_c):
    """A folder named like a stage, this user's and mode 0700 but without a token made with the
    user's key (a downloaded project's, a user's own folder): generate and load_c leave it alone."""
    monkeypatch.setenv("SYMDYN_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "out"
    c_path = _copy(planar2_c, out)
    before = c_path.read_text()
    planted = _stage(out, "0123456789abcdef-" + "0" * 32, {"planar2.c": "planted\n"}, b"planar2.c\n")
    token_less = _stage(out, "mine", {"notes.txt": "keep\n"}, None)
    symdyn.load_c(c_path, lanes=False)
    generate([PLANAR2], out, ("c",))
    assert (planted / "planar2.c").read_text() == "planted\n" and (token_less / "notes.txt").read_text() == "keep\n"
    assert c_path.read_text() == before                          # the planted .c was never swapped in


@pytest.mark.parametrize("journal", [b"\xff\xfe\x00planar2.c\n", b"#symdyn-stage wrong\nplanar2.c\n"])
def test_a_bad_journal_gives_no_traceback(tmp_path, monkeypatch, planar2_c, journal):
    """A stage of ours (a valid token) whose journal is not UTF-8 or carries another token: left alone,
    generate and load_c go on."""
    from symdyn.generate import _new_stage
    monkeypatch.setenv("SYMDYN_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "out"
    c_path = _copy(planar2_c, out)
    stage, _ = _new_stage(out)
    (stage / "planar2.c").write_text("bad\n")
    (stage / "COMMITTED").write_bytes(journal)
    assert symdyn.load_c(c_path, lanes=False).DOF == 2
    result = CliRunner().invoke(main, ["generate", str(PLANAR2), "--lang", "c", "--out", str(out)])
    assert result.exit_code == 0 and "Traceback" not in result.output, result.output
    assert (stage / "planar2.c").read_text() == "bad\n" and "bad" not in c_path.read_text()


def test_stages_carry_a_token_under_a_private_key(tmp_path, monkeypatch):
    from symdyn.generate import _journal, _new_stage, _ours
    monkeypatch.setenv("SYMDYN_CACHE", str(tmp_path / "cache"))
    stage, token = _new_stage(tmp_path)
    assert stage.name == STAGE_PREFIX + token and _ours(stage)
    assert stat.S_IMODE(os.stat(tmp_path / "cache" / "stage-key").st_mode) == 0o600
    (stage / "COMMITTED").write_text(f"#symdyn-stage {token}\na.py\n")
    assert _journal(stage, "COMMITTED") == ["a.py"]
    os.chmod(stage, 0o755)
    assert not _ours(stage)                                    # mode 0700 only
    os.chmod(stage, 0o700)
    real_uid = os.geteuid()
    monkeypatch.setattr(os, "geteuid", lambda: real_uid + 4242)
    assert not _ours(stage)                                    # another user's
    monkeypatch.setattr(os, "geteuid", lambda: real_uid)
    monkeypatch.setenv("SYMDYN_CACHE", str(tmp_path / "other"))
    assert not _ours(stage)                                    # another key: not ours


def test_progress_bar_on_a_terminal_routes_notices_below_it(monkeypatch):
    """While symdyn's progress bar is drawn on a terminal, load_c's notice starts on a new line (it
    would otherwise be written over the bar's); without a terminal nothing changes."""
    from symdyn import cli

    class Terminal:
        def __init__(self):
            self.text = ""

        def isatty(self):
            return True

        def write(self, text):
            self.text += text

        def flush(self):
            pass

    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    with cli._progress(3, "comparing") as bar:
        bar.update(1)
        cload._notice("compiling x.c once, then cached")
    assert cload.notice_hook is None
    assert "\nsymdyn: compiling x.c once, then cached\n" in terminal.text
    before = terminal.text.index("symdyn: compiling")
    assert terminal.text[:before].rstrip(" ").endswith("\n")

# --- the command line's bounds -----------------------------------------------------------------

def _fails(args, start):
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    (line,) = result.stderr.splitlines()
    assert line.startswith(start), line
    return line


@pytest.mark.parametrize("contact", ["", ",,,", " , "])
def test_contact_naming_no_frame_is_refused(tmp_path, contact):
    _fails(["generate", str(PLANAR2), "--contact", contact, "--out", str(tmp_path / "out")],
           "symdyn: error: --contact: no contact frame given")
    assert not (tmp_path / "out").exists()


def test_a_joint_locked_twice_is_refused(tmp_path):
    _fails(["info", str(PLANAR2), "--no-ops", "--lock", "joint1=1,joint1=2"], "symdyn: error: --lock: joint 'joint1' given twice")


def _mimic_yaml(tmp_path, multipliers):
    import yaml
    d = random_description(3, 5)
    for k, a in enumerate(multipliers, start=1):
        d["joints"][k]["type"] = d["joints"][0]["type"] = "revolute"
        d["joints"][k]["mimic"] = {"joint": d["joints"][k - 1]["name"], "multiplier": a}
    path = tmp_path / "mimics.yaml"
    path.write_text(yaml.safe_dump(d))
    return path


@pytest.mark.parametrize("multipliers", [[1e200], [1e155], [1e4, 1e4], [-1e5, 1e5]], ids=str)
def test_mimic_multiplier_overflow_is_one_line(tmp_path, multipliers):
    path = _mimic_yaml(tmp_path, multipliers)
    for command in ("info", "generate"):
        line = _fails([command, str(path), "--out", str(tmp_path / "out")] if command == "generate" else
                      [command, str(path)], f"symdyn: error: {path}: joint ")
        assert "must lie within +-1e+06" in line
    with pytest.raises(RobotFileError):
        symdyn.load_robot(path)


def test_mimic_multipliers_within_the_bound_load(tmp_path):
    assert symdyn.load_robot(_mimic_yaml(tmp_path, [1e3, -1e3])).dof == 1


def test_a_huge_joint_params_file_is_refused_before_parsing(tmp_path):
    params = tmp_path / "params.yaml"
    params.write_text("joints: {}\n" + "# padding\n" * 200_000)
    start = time.perf_counter()
    line = _fails(["info", str(PLANAR2), "--no-ops", "--joint-params", str(params)], f"symdyn: error: {params}: 2.0 MB")
    assert "at most 1 MB" in line and time.perf_counter() - start < 10


def test_output_error_is_importable():
    assert issubclass(OutputError, Exception)


def test_zero_states(arm_c, two_arms, tmp_path):
    """A batch of zero states: an empty array of the right shape, as from the Python module."""
    _, sets = two_arms
    c_module = symdyn.load_c(arm_c)
    (tmp_path / "arm_py.py").write_text(sets[0]["arm.py"])
    from symdyn.compare import import_module_file
    py_module = import_module_file(tmp_path / "arm_py.py", "arm_zero_states")
    for fn, args in (("mass_matrix", (np.zeros((0, 2)),)), ("inverse_dynamics", (np.zeros((0, 2)),) * 3),
                     ("gravity", (np.zeros((3, 0, 2)),)), ("coriolis_matrix", (np.zeros(2), np.zeros((0, 2))))):
        got, want = getattr(c_module, fn)(*args), getattr(py_module, fn)(*args)
        assert got.shape == want.shape and got.size == 0, (fn, got.shape, want.shape)
