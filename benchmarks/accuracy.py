"""Largest relative difference from Pinocchio, per quantity, over the bundled robots and real arms
from example-robot-data (Pinocchio's own URDF parser for URDF files), 200 random states each, for
the numeric engine, the generated Python module and the generated C module.

    python benchmarks/accuracy.py
"""
import site
import sys
import tempfile
from pathlib import Path

import numpy as np
import pinocchio as pin

import symdyn
from symdyn.compare import PINOCCHIO_NAMES, import_module_file, pinocchio_functions, pinocchio_model, relative_error
from symdyn.generate import module_name, render

ROOT = Path(__file__).resolve().parents[1]
ERD = ["ur_description/urdf/ur5_robot.urdf", "ur_description/urdf/ur10_robot.urdf",
       "xarm_description/urdf/xarm7.urdf", "z1_description/urdf/z1.urdf"]


def erd(relative):
    for sp in site.getsitepackages():
        path = Path(sp) / "cmeel.prefix" / "share" / "example-robot-data" / "robots" / relative
        if path.exists():
            return path
    raise FileNotFoundError(relative)


def oracle(path, model):
    """Pinocchio's own URDF parser for URDF files; the model rebuilt for the others."""
    return pinocchio_functions(pin.buildModelFromUrdf(str(path)) if path.suffix == ".urdf" else pinocchio_model(model))


def main(states=200):
    paths = sorted(p for p in (ROOT / "robots").iterdir() if p.suffix in (".yaml", ".urdf")) + [erd(r) for r in ERD]
    worst = {name: {"engine": 0.0, "python": 0.0, "c": 0.0} for name in PINOCCHIO_NAMES}
    where = {}
    tmp = Path(tempfile.mkdtemp(prefix="symdyn-accuracy-"))
    for path in paths:
        model = symdyn.load_robot(path)
        files = render(model, ("python", "c"))
        folder = tmp / module_name(path)
        folder.mkdir()
        for name, text in files.items():
            (folder / name).write_text(text)
        modules = {"engine": symdyn.Engine(model),
                   "python": import_module_file(folder / f"{module_name(path)}.py", f"acc_{module_name(path)}"),
                   "c": symdyn.load_c(folder / f"{module_name(path)}.c")}
        rng = np.random.default_rng(0)
        n = model.dof
        args = [rng.uniform(-np.pi, np.pi, (states, n)), rng.normal(size=(states, n)) * 2, rng.normal(size=(states, n)) * 3]
        pin_fns = oracle(path, model)
        for name in PINOCCHIO_NAMES:
            k = {"inverse_dynamics": 3, "forward_dynamics": 3, "coriolis_matrix": 2, "nonlinear_effects": 2}.get(name, 1)
            theirs = np.stack([pin_fns[name](*(a[s] for a in args[:k])) for s in range(states)])
            for label, mod in modules.items():
                ours = getattr(mod, name)(*args[:k])
                err = max(relative_error(ours[s], theirs[s]) for s in range(states))
                if err > worst[name][label]:
                    worst[name][label] = err
                    where[name, label] = path.name
    print(f"Robots: {', '.join(p.name for p in paths)}; {states} random states each.\n")
    print("| quantity | numeric engine | generated Python | generated C | worst robot (C) |")
    print("|---|---|---|---|---|")
    for name, row in worst.items():
        print(f"| {name} | {row['engine']:.1e} | {row['python']:.1e} | {row['c']:.1e} | {where.get((name, 'c'), '-')} |")


if __name__ == "__main__":
    sys.exit(main())
