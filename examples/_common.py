"""Shared helpers of the examples: import a generated module by path, RK4, command-line options.

numpy only; matplotlib is imported by each example's `plot` function, and only when a plot is asked for.
"""
import argparse
import importlib.util
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]          # the repository root


def resolve(path):
    """`path` as given if it exists, else relative to the repository root (so examples run from anywhere)."""
    path = Path(path)
    if path.exists() or path.is_absolute():
        return path
    return ROOT / path


def import_generated(path):
    """Import a generated Python module (e.g. generated/panda.py) from its file path."""
    path = resolve(path)
    if not path.exists():
        raise SystemExit(f"{path}: not found (run: symdyn generate robots/{path.stem}.urdf --lang python,c --out generated)")
    name = f"_symdyn_example_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_robot_module(path, use_c=False):
    """The generated Python module at `path`, or with use_c the compiled C module beside it (symdyn.load_c).

    Both have the same functions on arrays of shape (..., n); the C module has DOF but not JOINT_NAMES.
    """
    path = resolve(path)
    if not use_c:
        return import_generated(path)
    import symdyn
    return symdyn.load_c(path.with_suffix(".c"))


def rk4_step(f, t, x, dt):
    """One classical Runge-Kutta step of x' = f(t, x); x is a numpy array of any shape."""
    k1 = f(t, x)
    k2 = f(t + dt / 2, x + dt / 2 * k1)
    k3 = f(t + dt / 2, x + dt / 2 * k2)
    k4 = f(t + dt, x + dt * k3)
    return x + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)


def rk4(f, x0, dt, steps, t0=0.0):
    """Fixed-step RK4 of x' = f(t, x): returns times (steps + 1,) and states (steps + 1, *x0.shape)."""
    x = np.asarray(x0, dtype=float)
    xs = np.empty((steps + 1,) + x.shape)
    xs[0] = x
    for k in range(steps):
        x = rk4_step(f, t0 + k * dt, x, dt)
        xs[k + 1] = x
    return t0 + dt * np.arange(steps + 1), xs


def parser(description, robot="generated/panda.py", steps=3000, dt=1e-3, out="example.png"):
    """The options every example shares: --robot, --steps, --dt, --out, --no-plot, --c."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--robot", default=robot, help=f"generated Python module (default {robot})")
    p.add_argument("--steps", type=int, default=steps, help=f"integration steps (default {steps})")
    p.add_argument("--dt", type=float, default=dt, help=f"step size, s (default {dt:g})")
    p.add_argument("--out", default=out, help=f"PNG file to write (default {out})")
    p.add_argument("--no-plot", action="store_true", help="print the numbers only (no matplotlib needed)")
    p.add_argument("--c", action="store_true", help="use the compiled C module beside --robot (symdyn.load_c)")
    return p


def save(fig, out):
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print(f"wrote {out}")
