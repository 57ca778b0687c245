import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

BUNDLED = sorted(p for p in (ROOT / "robots").iterdir() if p.suffix in (".yaml", ".urdf"))


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
