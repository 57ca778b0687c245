"""Throughput of generated functions: one batched call versus a Python loop over single states.

For inverse_dynamics, mass_matrix and forward_dynamics, on --batch random states (default 1e5):
  - the generated Python module: one call on the whole batch (numpy, vectorized over the batch),
    and a Python loop over --loop single states (default 2000), extrapolated to states per second;
  - the generated C module (symdyn.load_c, when a C compiler works): the same two ways (the batch is
    looped in C; a single call pays the Python-to-C wrapper);
  - Pinocchio's Python bindings in a loop, when `import pinocchio` works and a URDF of the robot is
    found (robots/<name>.urdf, or --urdf), with the same joint order.
It checks that the batch result equals the loop result on the looped states (and C and Pinocchio
agree with Python), prints states per second and draws them as a bar chart.

    python examples/throughput.py [--robot generated/panda.py] [--batch 100000] [--loop 2000] [--out throughput.png]
"""
import shutil
import time

import numpy as np

from _common import check_fits, figure, import_generated, plot_parser, resolve, save

FUNCTIONS = ("inverse_dynamics", "mass_matrix", "forward_dynamics")


def states(n, count, seed=0):
    """Random states: q uniform in [-pi, pi], rates and accelerations (or torques) standard normal."""
    rng = np.random.default_rng(seed)
    return rng.uniform(-np.pi, np.pi, (count, n)), rng.normal(size=(count, n)), rng.normal(size=(count, n))


def arguments(name, q, qd, x):
    return {"inverse_dynamics": (q, qd, x), "mass_matrix": (q,), "forward_dynamics": (q, qd, x)}[name]


def relative(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return float(np.abs(a - b).max() / max(1.0, float(np.abs(b).max())))


def time_batch(fn, args):
    fn(*(a[:10] for a in args))                          # warm up (and compile nothing twice)
    start = time.perf_counter()
    out = fn(*args)
    return out, time.perf_counter() - start


def time_loop(fn, args, count):
    fn(*(a[0] for a in args))
    start = time.perf_counter()
    out = [fn(*(a[i] for a in args)) for i in range(count)]
    return np.stack(out), time.perf_counter() - start


def pinocchio_functions(urdf, joint_names):
    """Pinocchio's rnea, crba and aba on the URDF, or None and the reason why not."""
    try:
        import pinocchio as pin
    except ImportError:
        return None, "pinocchio not installed"
    if urdf is None or not urdf.exists():
        return None, f"no URDF found ({urdf})"
    model = pin.buildModelFromUrdf(str(urdf))
    names = tuple(model.names)[1:]
    if names != tuple(joint_names) or model.nq != len(joint_names):
        return None, f"{urdf}: joints {names} differ from the generated module's {tuple(joint_names)}"
    data = model.createData()
    # results are copied out of `data` (the next call overwrites it); crba fills the upper triangle only
    return {"inverse_dynamics": lambda q, v, a: pin.rnea(model, data, q, v, a).copy(),
            "mass_matrix": lambda q: pin.crba(model, data, q).copy(),
            "forward_dynamics": lambda q, v, t: pin.aba(model, data, q, v, t).copy()}, f"pinocchio {pin.__version__}"


def run(robot_path, batch=100_000, loop=2000, use_c=True, use_pinocchio=True, urdf=None, functions=FUNCTIONS):
    """{function: {way: states per second}} and {function: {check: relative difference}}, plus notes."""
    robot_path = resolve(robot_path)
    python = import_generated(robot_path)
    check_fits(python, robot_path, FUNCTIONS)
    n = python.DOF
    loop = min(loop, batch)
    q, qd, x = states(n, batch)
    ways, notes = {"python": python}, {}
    if use_c:
        if shutil.which("cc") or shutil.which("gcc") or shutil.which("clang"):
            import symdyn
            ways["c"] = symdyn.load_c(robot_path.with_suffix(".c"))
        else:
            notes["c"] = "no C compiler found"
    pino = None
    if use_pinocchio:
        urdf = resolve(urdf) if urdf else resolve(f"robots/{robot_path.stem}.urdf")
        pino, notes["pinocchio"] = pinocchio_functions(urdf, python.JOINT_NAMES)
    speed, check = {}, {}
    for name in functions:
        args = arguments(name, q, qd, x)
        speed[name], check[name] = {}, {}
        reference = None
        for way, module in ways.items():
            fn = getattr(module, name)
            out, seconds = time_batch(fn, args)
            speed[name][f"{way} batch"] = batch / seconds
            looped, seconds = time_loop(fn, args, loop)
            speed[name][f"{way} loop"] = loop / seconds
            check[name][f"{way}: batch vs loop"] = relative(out[:loop], looped)
            if reference is None:
                reference = out
            else:
                check[name][f"{way} vs python"] = relative(out, reference)
        if pino is not None:
            looped, seconds = time_loop(pino[name], args, loop)
            speed[name]["pinocchio loop"] = loop / seconds
            if name == "mass_matrix":                         # symmetric from Pinocchio's upper triangle
                looped = np.triu(looped) + np.swapaxes(np.triu(looped, 1), -1, -2)
            check[name]["pinocchio vs python"] = relative(looped, reference[:loop])
    return {"dof": n, "batch": batch, "loop": loop, "speed": speed, "check": check, "notes": notes}


def plot(result, out, title):
    names = list(result["speed"])
    ways = list(dict.fromkeys(w for row in result["speed"].values() for w in row))
    fig, ax = figure(figsize=(8, 4.5))
    width = 0.8 / len(ways)
    for k, way in enumerate(ways):
        values = [result["speed"][name].get(way, np.nan) for name in names]
        ax.bar(np.arange(len(names)) + (k - (len(ways) - 1) / 2) * width, values, width, label=way)
    ax.set_yscale("log")
    ax.set_xticks(np.arange(len(names)))
    ax.set_xticklabels(names)
    ax.set_ylabel("states per second")
    ax.set_title(title)
    ax.legend(fontsize=8)
    save(fig, out)


def main(argv=None):
    p = plot_parser(__doc__.splitlines()[0], out="throughput.png")
    p.add_argument("--robot", default="generated/panda.py", help="generated Python module (default generated/panda.py)")
    p.add_argument("--batch", type=int, default=100_000, help="states in the batched call (default 100000)")
    p.add_argument("--loop", type=int, default=2000, help="single states in the Python loop (default 2000)")
    p.add_argument("--urdf", default=None, help="URDF for Pinocchio (default robots/<robot>.urdf)")
    p.add_argument("--no-c", action="store_true", help="skip the C module")
    p.add_argument("--no-pinocchio", action="store_true", help="skip Pinocchio")
    args = p.parse_args(argv)
    r = run(args.robot, args.batch, args.loop, not args.no_c, not args.no_pinocchio, args.urdf)
    print(f"throughput, {args.robot} ({r['dof']} DOF): one call on {r['batch']} states vs a loop over {r['loop']} states")
    for way, note in r["notes"].items():
        print(f"  {way}: {note}")
    ways = list(dict.fromkeys(w for row in r["speed"].values() for w in row))
    print(f"  {'states/s':<18s}" + "".join(f"{w:>16s}" for w in ways))
    for name, row in r["speed"].items():
        print(f"  {name:<18s}" + "".join(f"{row[w]:>16,.0f}" if w in row else f"{'-':>16s}" for w in ways))
    print("  largest relative differences (batch vs loop on the looped states; other ways vs Python):")
    for name, row in r["check"].items():
        print(f"  {name:<18s} " + ", ".join(f"{k} {v:.1e}" for k, v in row.items()))
    if not args.no_plot:
        plot(r, args.out, f"{r['dof']} DOF: batch of {r['batch']} states vs loop over {r['loop']}")
    return r


if __name__ == "__main__":
    main()
