"""One step of the diagonalized equations of motion: the fused diagonalized_forward_dynamics against
the four functions it replaces (joint_rates, gravity, working_moments, coriolis_nu) and against
forward_dynamics, in operation counts and in ns per state of the generated C.

    python benchmarks/bench_diagonalized.py [robots/panda.urdf robots/ur5.urdf ...]
"""
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import symdyn
from symdyn.codegen.generator import trace
from symdyn.functions import BY_NAME
from symdyn.generate import module_name, render

ROOT = Path(__file__).resolve().parents[1]
CHAINED = ("joint_rates", "gravity", "working_moments", "coriolis_nu")


def ops(model, names):
    total = {}
    for name in names:
        for k, v in trace(model, BY_NAME[name]).ops.items():
            total[k] = total.get(k, 0) + v
    return total


def timings(c, n, states=2000, reps=41):
    """{variant: ns per state}: fastest of reps interleaved batched calls."""
    rng = np.random.default_rng(0)
    q, nu, tau = rng.uniform(-np.pi, np.pi, (states, n)), rng.normal(size=(states, n)), rng.normal(size=(states, n))

    def chained():
        qd = c.joint_rates(q, nu)
        return qd, c.working_moments(q, tau - c.gravity(q)) - c.coriolis_nu(q, nu)

    variants = {"fused": lambda: c.diagonalized_forward_dynamics(q, nu, tau), "chained": chained,
                "forward_dynamics": lambda: c.forward_dynamics(q, nu, tau)}
    fused, four = variants["fused"](), chained()
    assert all(np.abs(a - b).max() < 1e-9 * max(1.0, np.abs(b).max()) for a, b in zip(fused, four))
    best = {k: float("inf") for k in variants}
    for _ in range(reps):
        for name, f in variants.items():
            t = time.perf_counter()
            f()
            best[name] = min(best[name], time.perf_counter() - t)
    return {k: v / states * 1e9 for k, v in best.items()}


def main(argv=None):
    paths = (argv if argv is not None else sys.argv[1:]) or [str(ROOT / "robots" / "panda.urdf"), str(ROOT / "robots" / "ur5.urdf")]
    folder = Path(tempfile.mkdtemp(prefix="symdyn-diag-"))
    print("| robot | variant | mul | add | div | sqrt | C ns per state |\n|---|---|---|---|---|---|---|")
    for path in paths:
        model = symdyn.load_robot(path)
        name = module_name(model.provenance.path)
        for fname, text in render(model, ("c",)).items():
            (folder / fname).write_text(text)
        ns = timings(symdyn.load_c(folder / f"{name}.c"), model.dof)
        rows = {"fused": ops(model, ["diagonalized_forward_dynamics"]), "chained": ops(model, CHAINED),
                "forward_dynamics": ops(model, ["forward_dynamics"])}
        labels = {"fused": "diagonalized_forward_dynamics", "chained": "joint_rates + gravity + working_moments + coriolis_nu",
                  "forward_dynamics": "forward_dynamics (state q, qd)"}
        for key, o in rows.items():
            print(f"| {name} | {labels[key]} | {o['mul']} | {o['add']} | {o['div']} | {o['sqrt']} | {ns[key]:.0f} |")


if __name__ == "__main__":
    sys.exit(main())
