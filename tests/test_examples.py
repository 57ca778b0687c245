"""The examples in examples/: each runs briefly on a small generated robot and its claim holds."""
import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
sys.path.insert(0, str(EXAMPLES))

import computed_torque  # noqa: E402
import decoupled_rate_feedback  # noqa: E402
import diagonalized_simulation  # noqa: E402
import identification  # noqa: E402
import end_effector_regulation  # noqa: E402
import operational_space_circle  # noqa: E402
import throughput  # noqa: E402
from _common import import_generated, rk4  # noqa: E402
from golden import generated_file  # noqa: E402

HAS_CC = any(shutil.which(c) for c in ("cc", "gcc", "clang"))


@pytest.fixture(scope="module")
def planar6():
    return import_generated(generated_file("planar6.py"))


@pytest.fixture(scope="module")
def puma560():
    return import_generated(generated_file("puma560.py"))


def test_rk4_is_fourth_order():
    """x' = -x: the global error of RK4 shrinks 16 times when the step is halved."""
    errors = []
    for steps in (10, 20):
        t, x = rk4(lambda t, x: -x, np.array([1.0]), 1.0 / steps, steps)
        errors.append(abs(x[-1, 0] - np.exp(-1.0)))
    assert 15 < errors[0] / errors[1] < 17


def test_import_generated_has_the_module_api(planar6):
    assert planar6.DOF == 6 and len(planar6.JOINT_NAMES) == 6
    assert planar6.mass_matrix(np.zeros((3, 6))).shape == (3, 6, 6)


@pytest.mark.parametrize("hold", [False, True], ids=["continuous", "held"])
def test_computed_torque_error_decreases(planar6, hold):
    r = computed_torque.run(planar6, steps=400, dt=1e-3, wn=10.0, e0=0.1, hold=hold)
    norm = r["error_norm"]
    assert r["max_error"] == pytest.approx(0.1)
    assert norm[-1] < 0.1 * norm[0]                        # e0 (1 + 4) exp(-4) = 0.09 e0 at t = 0.4 s
    if not hold:
        # critically damped from rest, |e| = e0 (1 + wn t) exp(-wn t) decreases monotonically,
        # and the simulated error is that solution up to the integration error
        assert np.all(np.diff(norm) < 0)
        assert r["deviation_from_ideal"] < 1e-8


def test_diagonalized_and_joint_space_simulations_overlap(planar6):
    r = diagonalized_simulation.run(planar6, steps=100, dt=1e-3, kind="zero")
    assert r["q_difference"] < 1e-8
    assert r["qd_difference"] < 1e-8
    assert r["energy_difference"] < 1e-8                  # nu . nu / 2 = qd^T M qd / 2
    assert abs(r["K_M"][-1] - r["K_M"][0]) > 0.1          # not a trivial motion: gravity does work


@pytest.mark.parametrize("kind", ["zero", "sine"])
def test_diagonalized_difference_is_integration_error(planar6, kind):
    """With a coarse step the two simulations differ, by a difference that shrinks 16x when dt halves."""
    coarse = diagonalized_simulation.run(planar6, steps=50, dt=1e-2, kind=kind)
    fine = diagonalized_simulation.run(planar6, steps=100, dt=5e-3, kind=kind)
    assert 1e-12 < fine["q_difference"] < coarse["q_difference"]
    assert 12 < coarse["q_difference"] / fine["q_difference"] < 22


@pytest.mark.parametrize("robot", ["planar6", "puma560"])
def test_decoupled_rate_feedback_energy(robot, request):
    r = decoupled_rate_feedback.run(request.getfixturevalue(robot), steps=200, dt=1e-3, c=2.0)
    assert r["monotonic"]
    assert r["final_energy"] < r["initial_energy"]
    assert r["max_rate_error"] < 1e-3                      # dK/dt = -c nu . nu (finite differences: ~3e-6)
    assert r["exponential_error"] < 1e-8                   # K(t) = K(0) exp(-2 c t)
    assert r["law_vs_mass_matrix"] < 1e-12                 # m(-c nu) = -c M qd


def test_throughput_batch_equals_loop():
    pinocchio = importlib.util.find_spec("pinocchio") is not None
    generated_file("ur5.c")                                 # renders ur5.py, .h and .c into one folder
    r = throughput.run(generated_file("ur5.py"), batch=400, loop=20, use_c=HAS_CC, use_pinocchio=pinocchio)
    assert set(r["speed"]) == set(throughput.FUNCTIONS)
    for name, row in r["check"].items():
        assert row["python: batch vs loop"] < 1e-12, name
        if HAS_CC:
            assert row["c: batch vs loop"] < 1e-12 and row["c vs python"] < 1e-12, name
        if pinocchio:
            assert row["pinocchio vs python"] < 1e-10, name
        assert all(v > 0 for v in r["speed"][name].values())


def test_mains_write_plots(tmp_path):
    pytest.importorskip("matplotlib")
    small = ["--robot", str(generated_file("planar6.py")), "--steps", "20"]
    cases = [(computed_torque, small), (diagonalized_simulation, small), (decoupled_rate_feedback, small),
             (throughput, ["--robot", str(generated_file("planar6.py")), "--batch", "50", "--loop", "5", "--no-c"]),
             (end_effector_regulation, ["--robot", str(generated_file("panda.py")), "--steps", "20"]),
             (operational_space_circle, ["--robot", str(generated_file("panda.py")), "--steps", "20"])]
    for module, argv in cases:
        out = tmp_path / f"{module.__name__}.png"
        module.main(argv + ["--out", str(out)])
        assert out.stat().st_size > 1000


@pytest.mark.parametrize("script", ["computed_torque", "diagonalized_simulation", "decoupled_rate_feedback"])
def test_script_runs_from_the_repository_root(script):
    result = subprocess.run([sys.executable, f"examples/{script}.py", "--robot", str(generated_file("planar6.py")),
                             "--steps", "5", "--no-plot"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "e-" in result.stdout                           # it printed its numbers


def _blocks(markdown, language):
    import re
    return re.findall(rf"```{language}\n(.*?)```", markdown, re.S)


def _tutorial_folder(tmp_path):
    """A folder holding generated/ur5.{py,h,c,json} as the tutorial's `symdyn generate` writes them."""
    (tmp_path / "generated").mkdir()
    for suffix in ("py", "h", "c", "json"):
        shutil.copy(generated_file(f"ur5.{suffix}"), tmp_path / "generated" / f"ur5.{suffix}")
    return tmp_path


def test_tutorial_code_runs_and_prints_what_it_shows(monkeypatch, capsys, tmp_path):
    """docs/tutorial.md: its Python blocks, run in order from a folder in which its first command ran."""
    text = (ROOT / "docs" / "tutorial.md").read_text()
    monkeypatch.chdir(_tutorial_folder(tmp_path))
    code = "\n".join(_blocks(text, "python"))
    if not HAS_CC:
        code = code.split("import symdyn\n")[0]            # sections 2 and 3 only
    exec(compile(code, "docs/tutorial.md", "exec"), {"__name__": "tutorial"})
    out = capsys.readouterr().out
    assert "error 2.02e-05 rad" in out                     # the PD controller's final error, as shown
    assert "[  0.     -30.9156 -15.1577  -0.1744   0.       0.    ]" in out
    if HAS_CC:
        import re
        # Python and C agree to rounding (bit for bit here; numpy's SIMD sin/cos may differ in the last bit)
        assert float(re.search(r"same trajectory: (\S+) rad", out).group(1)) < 1e-9
        assert out.count("largest holding torque per joint [N m]: [ 0.  59.3 15.9  0.2  0.   0. ]") == 2


@pytest.mark.skipif(not HAS_CC, reason="no C compiler")
def test_tutorial_c_program(tmp_path):
    text = (ROOT / "docs" / "tutorial.md").read_text()
    (tmp_path / "pd_ur5.c").write_text(_blocks(text, "c")[0])
    cc = next(c for c in ("cc", "gcc", "clang") if shutil.which(c))
    # -O0: compiles in a quarter of the time of the tutorial's -O2, same numbers (no fast-math either way)
    ur5 = _tutorial_folder(tmp_path) / "generated"
    build = subprocess.run([cc, "-O0", "-std=c99", "-Wall", "-Wextra", "-pedantic", "-Werror", f"-I{ur5}",
                            str(tmp_path / "pd_ur5.c"), str(ur5 / "ur5.c"), "-lm", "-o", str(tmp_path / "pd_ur5")],
                           capture_output=True, text=True)
    assert build.returncode == 0, build.stderr
    run = subprocess.run([str(tmp_path / "pd_ur5")], capture_output=True, text=True, timeout=60)
    assert "error 2.02e-05 rad" in run.stdout


@pytest.fixture(scope="module")
def panda():
    return import_generated(generated_file("panda.py"))


def test_end_effector_regulation_lyapunov_decreases(panda):
    """Control law 8.2: L = nu.nu/2 + c2 |e|^2/2 decreases at every step and the tool reaches the goal."""
    r = end_effector_regulation.run(panda, steps=3000, dt=1e-3)
    assert r["monotonic"] and r["largest_increase"] < 0, r["largest_increase"]
    assert r["L"][-1] < 1e-4 * r["L"][0]
    assert r["final_error"] < 1e-2 * r["initial_error"] and r["final_orientation_error"] < 1e-2
    assert r["rate_error"] < 2e-2                       # dL/dt = -c1 nu.nu, to the central-difference error


def test_operational_space_circle_follows_the_ideal_closed_loop(panda):
    r = operational_space_circle.run(panda, steps=1500, dt=1e-3)
    assert r["largest_error"] > 1e-3                     # a real start-up transient (the arm starts at rest)
    assert r["largest_deviation"] < 1e-9                 # the closed loop is the ideal one, to the RK4 error
    assert r["final_error"] < 1e-8
@pytest.mark.parametrize("robot, says", [
    ("robots/ur5.urdf", "a robot description; --robot takes the module generated from it: run `symdyn generate "
                        "robots/ur5.urdf --lang python,c --out generated`, then --robot generated/ur5.py"),
    ("x.urdf", "x.urdf: a robot description"),
    ("generated/ur5.c", "add --c to use the C module beside it"),
    ("generated/no_such_robot.py", "no_such_robot.py: not found"),
    ("README.md", "--robot takes a generated Python module"),
    ("examples/_common.py", "not a module generated by symdyn"),
])
@pytest.mark.parametrize("script", ["computed_torque", "diagonalized_simulation", "decoupled_rate_feedback", "throughput"])
def test_wrong_robot_is_one_line_error(script, robot, says):
    """--robot takes a generated Python module: anything else is one line on stderr, exit 2, no traceback."""
    result = subprocess.run([sys.executable, f"examples/{script}.py", "--robot", robot, "--no-plot"], cwd=ROOT,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr, result.stderr
    assert result.stderr.startswith(f"{script}.py: error: ") and says in result.stderr, result.stderr


def test_symbolic_parameter_module_is_refused(tmp_path):
    from symdyn.generate import generate
    path, _ = generate([ROOT / "robots" / "planar6.yaml"], tmp_path, params_mode="symbolic")    # .py, .json
    result = subprocess.run([sys.executable, "examples/computed_torque.py", "--robot", str(path), "--no-plot"], cwd=ROOT,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and "a symbolic-parameter module" in result.stderr, result.stderr
    assert "generated/planar6.py" in result.stderr


@pytest.fixture(scope="module")
def panda_with_friction(tmp_path_factory):
    return identification.generate(folder=tmp_path_factory.mktemp("ident"))


def test_identification_recovers_base_parameters_to_the_noise_level(panda_with_friction):
    """With 2% noise every WLS estimate is within 5 of its standard deviations of the truth, the noise
    estimate matches, and the validation torques are predicted to a fraction of the noise; without noise
    the base parameters come back exactly (to rounding)."""
    robot = panda_with_friction
    assert robot.PARAMETERS[-4:].tolist() == [0.0595, 0.1329, 0.0108, 0.1]     # the joint-parameter file was used
    r = identification.run(robot, noise=0.02, samples=600, draws=5, seed=1)
    assert r["b"] == 69 and r["cond"] < 1e3
    assert np.abs(r["z"]).max() < 5
    assert np.allclose(r["sigma"], r["noise"], rtol=0.15)
    assert r["validation_relative"] < 0.01
    exact = identification.run(robot, noise=0.0, samples=300, draws=2, seed=2)
    assert np.abs(exact["wls"] - exact["true"]).max() < 1e-8 * max(1.0, np.abs(exact["true"]).max())
    assert exact["validation_relative"] < 1e-10


def test_mimic_gripper_energy_and_mirrored_fingers(tmp_path):
    """examples/mimic_gripper.py: one finger coordinate; free motion keeps its energy (RK4 error), the
    fingertips stay mirrored about the palm's axis and the gripper settles at its targets; exit 2 and
    one line for a robot that is not a URDF."""
    import mimic_gripper
    r = mimic_gripper.main(["--steps", "600", "--no-plot"])
    assert r["energy_drift"] < 1e-8 and r["gap_error"] < 1e-12 and r["midpoint_off_axis"] < 1e-12
    assert r["final_error"] < 1e-3
    result = subprocess.run([sys.executable, "examples/mimic_gripper.py", "--robot", str(generated_file("planar6.py")),
                             "--no-plot"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "Traceback" not in result.stderr


def test_ilqr_converges_on_the_panda_as_documented():
    """examples/ilqr.py --robot robots/panda.urdf (its docstring's command): both runs converge, progress is
    printed while it works, no numpy warning (a diverging line-search rollout is rejected quietly), exit 0."""
    result = subprocess.run([sys.executable, "examples/ilqr.py", "--robot", "robots/panda.urdf", "--no-plot"],
                            cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stderr == "", result.stderr
    out = result.stdout
    assert out.startswith("generating forward_dynamics") and "iteration 10, cost" in out, out
    assert out.count("(converged)") == 2 and "NOT converged" not in out, out
    error = float(re.search(r"generated derivatives: .*final state error (\S+),", out).group(1))
    assert error < 1e-2, out


def test_ilqr_that_does_not_converge_exits_1():
    result = subprocess.run([sys.executable, "examples/ilqr.py", "--iterations", "2", "--no-plot"], cwd=ROOT,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 1 and "NOT converged" in result.stdout, result.stdout + result.stderr
    assert result.stderr == "ilqr.py: error: iLQR did not converge in 2 iterations (more with --iterations)\n"


@pytest.fixture(scope="module")
def floating_and_partial(tmp_path_factory):
    """A floating-base module and a fixed-base one without mass_matrix, generated with --functions."""
    from symdyn.generate import generate
    folder = tmp_path_factory.mktemp("unfit")
    robot = ROOT / "robots" / "planar6.yaml"
    floating = generate([ROOT / "robots" / "puma560.yaml"], folder / "floating", floating_base=True,
                        functions=["forward_dynamics", "mass_matrix", "nonlinear_effects"])
    partial = generate([robot], folder / "partial", functions=["forward_dynamics", "gravity"])
    return tuple(next(p for p in written if p.suffix == ".py") for written in (floating, partial))


@pytest.mark.parametrize("script", ["computed_torque", "diagonalized_simulation", "decoupled_rate_feedback",
                                    "end_effector_regulation", "operational_space_circle", "throughput"])
def test_unfit_module_is_one_line_error(script, floating_and_partial):
    """A floating-base module (q holds a quaternion) or one generated without a function the example calls:
    one line, exit 2, no traceback."""
    floating, partial = floating_and_partial
    for path, says in ((floating, "a floating-base module (q has 13 entries, v 12)"), (partial, "has no ")):
        result = subprocess.run([sys.executable, f"examples/{script}.py", "--robot", str(path), "--no-plot"],
                                cwd=ROOT, capture_output=True, text=True, timeout=120)
        assert result.returncode == 2, result.stderr
        assert result.stderr.count("\n") == 1 and says in result.stderr, result.stderr


def test_long_work_prints_progress_and_short_work_does_not(capsys):
    """_common.ticker, used by every simulation loop (rk4, computed_torque, solo12_contacts' stance): a line
    at most every `every` seconds, so the tests' short runs print nothing and the Panda's long ones show life."""
    from _common import ticker
    quiet, chatty = ticker(10, "steps", every=3600.0), ticker(10, "steps", every=0.0)
    for k in range(1, 4):
        quiet(k)
    assert capsys.readouterr().out == ""
    for k in range(1, 4):
        chatty(k)
    assert capsys.readouterr().out == "  steps: 1/10 (10 %)\n  steps: 2/10 (20 %)\n  steps: 3/10 (30 %)\n"


def test_a_claim_that_fails_exits_1():
    """decoupled_rate_feedback.py with a step far too large for RK4: the energy does not decrease at every
    step, and the example says so in one line and exits 1 (0 only when its claim holds)."""
    result = subprocess.run([sys.executable, "examples/decoupled_rate_feedback.py", "--robot",
                             str(generated_file("planar6.py")), "--steps", "50", "--dt", "0.5", "--no-plot"],
                            cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 1 and "monotonically decreasing: NO" in result.stdout
    assert result.stderr == ("decoupled_rate_feedback.py: error: the kinetic energy did not decrease at every step "
                             "(a smaller --dt?)\n")


def test_mujoco_computed_torque_tracks():
    """MuJoCo's simulation of an MJCF model under computed torque from the generated inverse_dynamics (which
    includes MuJoCo's armature and damping): the error falls from e0 to the floor of the held torque."""
    pytest.importorskip("mujoco")
    import mujoco_computed_torque
    path = ROOT / "tests" / "data" / "mjcf" / "armature_damping.xml"
    r = mujoco_computed_torque.run(path, steps=1000, dt=1e-3, wn=20.0, e0=0.1)
    assert r["max_error"] == pytest.approx(0.1)
    assert r["final_error"] < 1e-3 * r["max_error"]


def test_mujoco_computed_torque_drives_gymnasium_ant():
    """The Ant (a free joint: MuJoCo's qpos and qvel go straight into the generated inverse_dynamics)."""
    pytest.importorskip("mujoco")
    pytest.importorskip("gymnasium")
    import mujoco_computed_torque
    r = mujoco_computed_torque.run(mujoco_computed_torque.model_file("gymnasium:ant"), steps=800)
    assert r["dof"] == 14 and r["max_error"] == pytest.approx(0.1)
    assert r["final_error"] < 1e-3 * r["max_error"]


def test_mujoco_computed_torque_drives_gymnasium_humanoid():
    """The Humanoid: its joint springs (stiffness about springref) are in the generated inverse_dynamics, so
    it tracks as the Ant does (without them the final error stayed near 8e-2 of an initial 0.1)."""
    pytest.importorskip("mujoco")
    pytest.importorskip("gymnasium")
    import mujoco_computed_torque
    r = mujoco_computed_torque.run(mujoco_computed_torque.model_file("gymnasium:humanoid"), steps=1000)
    assert r["dof"] == 23 and r["max_error"] == pytest.approx(0.1)
    assert r["final_error"] < 1e-2 * r["max_error"]
