"""docs/contributing.md: a backend defined in the tests folder (tests/calc_backend/), plugged into the generator
without a line of symdyn/ changed, writes its module through `generate`, and that module computes what the
Python module of the same robot computes."""
import math
import re

import numpy as np

from calc_backend import CALC
from conftest import ROOT
from symdyn.codegen import languages
from symdyn.generate import generate
from test_generated import generated_module

PLANAR2 = ROOT / "robots" / "planar2.yaml"


def _run(text, name, inputs, sizes):
    """Interpret function `name` of a .calc module: each line an assignment (Python syntax, libm names)."""
    body = re.search(rf"^function {name}\(.*?\n(.*?)^end$", text, re.M | re.S).group(1)
    scope = {"sin": math.sin, "cos": math.cos, "sqrt": math.sqrt, "tanh": math.tanh, "pow": math.pow,
             "sign": lambda x: float(np.sign(x)), **{k: list(v) for k, v in inputs.items()},
             **{k: [math.nan] * n for k, n in sizes.items()}}
    for line in body.splitlines():
        exec(line, scope)
    return {k: np.array(scope[k]) for k in sizes}


def test_a_backend_from_outside_symdyn(tmp_path, tmp_path_factory, monkeypatch):
    monkeypatch.setitem(languages.BACKENDS, CALC.name, CALC)
    written = generate([str(PLANAR2)], str(tmp_path), languages=("calc",), functions=["inverse_dynamics",
                                                                                       "mass_matrix"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["planar2.calc", "planar2.json"], written
    text = (tmp_path / "planar2.calc").read_text()
    assert text.startswith("# planar2: 2 functions, 2 joints\n")
    python = generated_module(PLANAR2, tmp_path_factory)
    rng = np.random.default_rng(5)
    for _ in range(3):
        q, qd, qdd = rng.normal(size=(3, 2))
        tau = _run(text, "inverse_dynamics", {"q": q, "qd": qd, "qdd": qdd}, {"tau": 2})["tau"]
        assert np.allclose(tau, python.inverse_dynamics(q, qd, qdd), rtol=1e-12, atol=1e-12)
        M = _run(text, "mass_matrix", {"q": q}, {"M": 4})["M"].reshape(2, 2)
        assert np.allclose(M, python.mass_matrix(q), rtol=1e-12, atol=1e-12)
        assert abs(M[0, 1]) > 1e-3                 # a coupled entry, not only the diagonal
