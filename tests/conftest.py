import importlib.util
import math
import os
import select
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

BUNDLED = sorted(p for p in (ROOT / "robots").iterdir() if p.suffix in (".yaml", ".urdf"))

GCC = shutil.which("gcc")
needs_gcc = pytest.mark.skipif(not GCC, reason="no gcc")
posix = pytest.mark.skipif(os.name != "posix", reason="POSIX signals and permissions")


def erd_path(relative):
    """A URDF from example-robot-data (installed with the test extra)."""
    import site
    for sp in site.getsitepackages() + [site.getusersitepackages()]:
        candidate = Path(sp) / "cmeel.prefix" / "share" / "example-robot-data" / "robots" / relative
        if candidate.exists():
            return candidate
    pytest.skip(f"example-robot-data URDF {relative} not found")


#: real arms from example-robot-data, loaded by Pinocchio's own URDF parser in the oracle tests
ERD_ARMS = {
    "ur5": "ur_description/urdf/ur5_robot.urdf",
    "ur10": "ur_description/urdf/ur10_robot.urdf",
    "xarm7": "xarm_description/urdf/xarm7.urdf",
    "z1": "z1_description/urdf/z1.urdf",
}


#: branching robots from example-robot-data (fixed base), against Pinocchio's own URDF parser
ERD_TREES = {
    "solo12": "solo_description/robots/solo12.urdf",
    "talos_reduced": "talos_data/robots/talos_reduced.urdf",
    "baxter": "baxter_description/urdf/baxter.urdf",
    "allegro": "allegro_hand_description/urdf/allegro_right_hand.urdf",
    "panda_fingers": "panda_description/urdf/panda.urdf",
}


def relerr(a, b):
    """Largest difference relative to the size of the reference (at least 1)."""
    a, b = np.asarray(a), np.asarray(b)
    return float(np.abs(a - b).max() / max(1.0, float(np.abs(b).max())))


def random_states(n, count, seed=0):
    rng = np.random.default_rng(seed)
    return rng.uniform(-np.pi, np.pi, (count, n)), rng.normal(size=(count, n)) * 2, rng.normal(size=(count, n)) * 3


def function_args(fn, q, qd, x, nf=0, params=None):
    """fn's arguments from the states (q, qd, x), with wrenches at the nf frames where it takes f_ext
    and the standard parameter vector `params` where it takes them."""
    from symdyn.functions import arguments
    f_ext = np.random.default_rng(9).normal(size=np.shape(q)[:-1] + (nf, 6)) * 5
    return arguments(fn, q, (qd, x), f_ext, params)


def pytest_addoption(parser):
    parser.addoption("--update", action="store_true", default=False,
                     help="rewrite the golden files in generated/ instead of comparing with them")


@pytest.fixture
def update(request):
    return request.config.getoption("--update")


@pytest.fixture(autouse=True)
def _batch_lanes_only_where_tested(request, monkeypatch):
    """The vectorized batch lanes make gcc 8-9x slower on a module (Panda: 41 s instead of 4.7 s of
    CPU, docs/perf-history.md "Batch entries"): tests/test_batch.py checks them; everywhere else load_c
    builds the batch entries as loops of single calls (same results), to keep the suite's time."""
    if request.module.__name__.rsplit(".", 1)[-1] != "test_batch":
        monkeypatch.setenv("SYMDYN_NO_LANES", "1")


# ---- small robots and files for the tests of output, names, the compile cache and the readers ----

def child_env(**extra):
    """Environment for a child interpreter that imports this checkout's symdyn."""
    return dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""), **extra)


def planar_arm(n, name="arm", joint_names=None, mass=1.0):
    """A planar chain of n links (little code: for tests about files and names, not dynamics)."""
    links, joints = [], []
    for k in range(n):
        links.append({"name": f"link{k}", "mass": mass * (1.0 + 0.1 * k), "com": [0.1, 0.0, 0.0],
                      "inertia": {"ixx": 0.001, "iyy": 0.01, "izz": 0.01 * mass, "ixy": 0.0, "ixz": 0.0, "iyz": 0.0}})
        joints.append({"name": joint_names[k] if joint_names else f"j{k}", "type": "revolute",
                       "parent": "base" if k == 0 else f"link{k - 1}", "child": f"link{k}",
                       "origin": {"xyz": [0.3 if k else 0.0, 0.0, 0.0]}, "axis": [0, 0, 1]})
    return {"name": name, "links": links, "joints": joints}


def spatial_chain(n, name="chain", joint_names=None, prismatic_every=0, planar=False):
    """A spatial chain of n links: axes alternate between z and y (x twists of pi/2), offsets along x.

    planar: every axis along z, no twist (much less code: for tests about names, not dynamics).
    """
    links, joints = [], []
    for k in range(n):
        links.append({"name": f"link{k}", "mass": 1.0 + 0.01 * k, "com": [0.1, 0.01, 0.0],
                      "inertia": {"ixx": 0.002, "iyy": 0.01, "izz": 0.01, "ixy": 1e-4, "ixz": 0.0, "iyz": 0.0}})
        prismatic = prismatic_every and k % prismatic_every == prismatic_every - 1
        joints.append({"name": joint_names[k] if joint_names else f"joint{k}",
                       "type": "prismatic" if prismatic else "revolute",
                       "parent": "base" if k == 0 else f"link{k - 1}", "child": f"link{k}",
                       "origin": {"xyz": [0.2 if k else 0.0, 0.0, 0.0],
                                  "rpy": [0.0, 0.0, 0.0] if planar else [math.pi / 2 if k % 2 else 0.0, 0.0, 0.1 * (k % 3)]},
                       "axis": [0, 0, 1]})
    return {"name": name, "gravity": [0.0, 0.0, -9.81], "links": links, "joints": joints}


def write_yaml(path, description):
    """Write a robot description as a symdyn YAML file (creating its folder); return the path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(description, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return path


def import_file(path, name):
    """Import a generated Python module from its file under the module name `name`."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def assert_one_line(message, start):
    assert len(message.splitlines()) == 1 and message.startswith(start), message


def wait_ready(proc, timeout=120):
    """Wait until a child driver prints READY (it has reached the moment the test kills it at)."""
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    assert ready, "the child never got ready"
    line = proc.stdout.readline()
    assert line.strip() == "READY", (line, proc.stderr.read())


@pytest.fixture(scope="module")
def two_arms(tmp_path_factory):
    """Two different robots with the same file name arm.yaml: 2 and 3 joints; their rendered sets."""
    import symdyn
    from symdyn.generate import render
    root = tmp_path_factory.mktemp("arms")
    paths = [write_yaml(root / f"{n}dof" / "arm.yaml", planar_arm(n)) for n in (2, 3)]
    sets = [render(symdyn.load_robot(p), ("python", "c")) for p in paths]
    return paths, sets


def stages(folder):
    """The staging folders a run left in an output folder."""
    from symdyn.generate import STAGE_PREFIX
    return sorted(p for p in folder.iterdir() if p.name.startswith(STAGE_PREFIX))


@pytest.fixture()
def arm_c(tmp_path, monkeypatch, two_arms):
    """The 2-joint arm's C files in a folder, and a private cache."""
    if not GCC:
        pytest.skip("no gcc")
    _, sets = two_arms
    folder = tmp_path / "src"
    folder.mkdir()
    for name in ("arm.h", "arm.c", "arm.json"):
        (folder / name).write_text(sets[0][name])
    monkeypatch.setenv("SYMDYN_CACHE", str(tmp_path / "cache"))
    return folder / "arm.c"
