"""Small edges of the readers and of `symdyn latex` (issue 24, item 12; the C loader's part is elsewhere):
a subnormal coulomb_smoothing is refused in one line naming the joint-parameter file, without numpy
warnings; --lock at a subnormal value is a lock, not an inertia underflow; the LaTeX legend of a robot
whose q and velocities do not line up gives both index sets."""
import re
import subprocess
import sys
import warnings

import numpy as np
import pytest

import symdyn
from conftest import ROOT
from symdyn.engine import Engine
from symdyn.expressions import latex
from symdyn.readers.selection import Selection


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "symdyn", *map(str, args)], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)


@pytest.mark.parametrize("delta", ["1e-310", "5e-324"])
def test_subnormal_coulomb_smoothing_names_the_joint_parameter_file(tmp_path, delta):
    params = tmp_path / "friction.yaml"
    params.write_text(f"coulomb_smoothing: {delta}\njoints:\n  j1: {{friction: 0.5}}\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")                # no RuntimeWarning on the way
        with pytest.raises(symdyn.RobotFileError) as caught:
            symdyn.load_robot(ROOT / "robots" / "puma560.yaml", joint_params=params)
    assert str(caught.value).startswith(f"{params}: coulomb_smoothing must be 0 or at least 2.23e-308")
    run = _cli("generate", ROOT / "robots" / "puma560.yaml", "--joint-params", params, "--out", tmp_path / "out",
               "--functions", "inverse_dynamics")
    assert run.returncode == 2 and not (tmp_path / "out").exists()
    assert run.stderr.count("\n") == 1 and str(params) in run.stderr and "Warning" not in run.stderr
    assert symdyn.load_robot(ROOT / "robots" / "puma560.yaml").coulomb_smoothing == 0.0
    params.write_text("coulomb_smoothing: 2.3e-308\n")  # the smallest normal doubles still load
    assert symdyn.load_robot(ROOT / "robots" / "puma560.yaml", joint_params=params).coulomb_smoothing == 2.3e-308


def test_a_subnormal_mass_is_still_refused(tmp_path):
    path = tmp_path / "tiny.yaml"
    path.write_text((ROOT / "robots" / "planar2.yaml").read_text().replace("mass: ", "mass: 1e-320 #", 1))
    with pytest.raises(symdyn.RobotFileError, match="inertial parameters underflow"):
        symdyn.load_robot(path)


@pytest.mark.parametrize("value", [1e-320, 5e-324, -1e-310])
def test_lock_at_a_subnormal_value(value):
    path = ROOT / "robots" / "ur5.urdf"
    locked = symdyn.load_robot(path, selection=Selection(lock={"elbow_joint": value}))
    zero = symdyn.load_robot(path, selection=Selection(lock={"elbow_joint": 0.0}))
    assert locked.dof == 5 and locked.provenance.warnings == ()
    q = np.random.default_rng(3).normal(size=(3, 5))
    np.testing.assert_allclose(Engine(locked).mass_matrix(q), Engine(zero).mass_matrix(q), rtol=1e-15, atol=1e-15)
    assert _cli("info", path, "--lock", f"elbow_joint={value!r}").returncode == 0


def test_latex_legend_of_a_floating_robot():
    text = latex(ROOT / "tests" / "data" / "urdf_floating_joint.urdf", "gravity")
    legend = text.splitlines()[0]
    assert "shoulder: q 0-6, velocity 0-5; elbow: q 7, velocity 6" in legend
    assert "q_{7}" in text and "q_{8}" not in text            # the formula's indices are configuration indices
    used = {int(i) for i in re.findall(r"q_\{(\d+)\}", text)}
    assert used <= set(range(8))
    plain = latex(ROOT / "robots" / "planar2.yaml", "gravity").splitlines()[0]
    assert plain.endswith("joint indices from 0 (0: joint1, 1: joint2)")
