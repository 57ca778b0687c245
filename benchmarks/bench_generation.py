"""Generation time and operation counts: bundled robots, chains of 2 to 30 links, the planar chain
against Rodriguez 1987 Table II, the Panda against SymPyBotics and Featherstone's classical counts.

    python benchmarks/bench_generation.py > benchmarks/generation.md
    python benchmarks/bench_generation.py identification     # the regressor section only
"""
import platform
import os
import sys
import time
from pathlib import Path

import symdyn
from symdyn.codegen.generator import trace
from symdyn.functions import FUNCTIONS, BY_NAME
from symdyn.generate import render
from symdyn.multibody.synthetic import planar_chain, spatial_chain

ROOT = Path(__file__).resolve().parents[1]
ROBOTS = sorted(p for p in (ROOT / "robots").iterdir() if p.suffix in (".yaml", ".urdf"))


def timed(fn, *args):
    t = time.perf_counter()
    out = fn(*args)
    return out, time.perf_counter() - t


def full_set_seconds(model, params="numeric"):
    """Wall time of the whole job for one robot: trace, optimize, render Python and C."""
    _, seconds = timed(render, model, ("python", "c"), params)
    return seconds


def machine():
    cpu = "unknown CPU"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, symengine {__import__('symengine').__version__}"


def identification():
    """Regressor and base regressor of the Panda against SymPyBotics (figures from issue 12)."""
    from symdyn.recursions.base_parameters import base_parameters
    panda = symdyn.load_robot(ROOT / "robots" / "panda.urdf")
    base_parameters.cache_clear()
    base, grouping = timed(base_parameters, panda)
    print("\n### Panda regressor and base parameters against SymPyBotics (SymPyBotics figures from issue 12)\n")
    kinds = [panda.parameter_names[i].rsplit(".", 1)[1] for i in base.kept]
    friction = sum(k in ("Fv", "Fc", "Fo") for k in kinds)
    rotors = kinds.count("Ia")
    print(f"Base parameters: {base.b} of {len(panda.parameters)} standard ({base.b - friction - rotors} rigid-body + "
          f"{friction} friction + {rotors} rotor inertias not grouped into a link), found in {grouping:.2f} s "
          f"(regressor samples, Gram-Schmidt, clean coefficients, check).\n")
    print("| function | symdyn time (s) | symdyn mul | symdyn add | SymPyBotics time (s) | SymPyBotics mul | SymPyBotics add |")
    print("|---|---|---|---|---|---|---|")
    spb = {"regressor": (0.92, 1219, 739)}
    for name in ("regressor", "base_regressor", "base_parameters"):
        p, seconds = timed(trace, panda, BY_NAME[name])
        ref = spb.get(name)
        ref_text = " | ".join(map(str, ref)) if ref else "- | - | -"
        print(f"| {name} ({' x '.join(map(str, p.dims[0]))}) | {seconds:.3f} | {p.ops['mul']} | {p.ops['add']} | {ref_text} |")
    print(f"\n(symdyn's regressor has the {4 * panda.dof} friction and armature columns besides the "
          f"{10 * panda.dof} rigid-body ones; they cost no arithmetic but sign(qd).)")


def main():
    if sys.argv[1:] == ["identification"]:
        print(f"Machine: {machine()}  \nCommand: `python benchmarks/bench_generation.py identification`")
        return identification()
    print(f"Machine: {machine()}  \nCommand: `python benchmarks/bench_generation.py`\n")
    print(f"### Full function set ({len(FUNCTIONS)} functions, Python + C rendered), bundled robots\n")
    print("| robot | DOF | numeric params (s) | symbolic params (s) |\n|---|---|---|---|")
    for path in ROBOTS:
        model = symdyn.load_robot(path)
        print(f"| {path.name} | {model.dof} | {full_set_seconds(model):.2f} | {full_set_seconds(model, 'symbolic'):.2f} |")

    print("\n### Chains of 2 to 30 links: generation time of the full set (Python + C rendered) and mul + add per function\n")
    names = [f.name for f in FUNCTIONS]
    short = {"inverse_dynamics": "ID", "mass_matrix": "M", "mass_matrix_inverse": "Minv", "forward_dynamics": "FD",
             "gravity": "g", "coriolis_matrix": "C", "nonlinear_effects": "nle", "articulated_inertia": "D",
             "innovations_factor": "m", "innovations_factor_inverse": "l", "total_rates": "nu",
             "joint_rates": "qd", "working_moments": "eps", "applied_moments": "tau", "coriolis_nu": "Cnu",
             "coriolis_eta": "Cbar", "diagonalized_forward_dynamics": "dFD", "udu_factor": "U",
             "friction": "tau_f", "regressor": "Y", "base_regressor": "Yb", "base_parameters": "beta"}
    print("| chain | N | time (s) | " + " | ".join(short[n] for n in names) + " |")
    print("|---|---|---|" + "---|" * len(names))
    for make in (planar_chain, spatial_chain):
        for n in (2, 4, 6, 8, 10, 15, 20, 25, 30, 50):
            model = make(n)
            seconds = full_set_seconds(model)
            ops = [p.ops["mul"] + p.ops["add"] for p in (trace(model, f) for f in FUNCTIONS)]
            print(f"| {make.__name__} | {n} | {seconds:.2f} | " + " | ".join(map(str, ops)) + " |")

    print("\n### Planar chain forward dynamics per link, with velocities and gravity "
          "(like for like with Rodriguez 1987 Table II: benchmarks/bench_rodriguez.py)\n")
    a, b = trace(planar_chain(20), BY_NAME["forward_dynamics"]), trace(planar_chain(30), BY_NAME["forward_dynamics"])
    per = {k: (b.ops[k] - a.ops[k]) / 10 for k in a.ops}
    print("| per link | mul | add | div | sqrt | sin+cos |\n|---|---|---|---|---|---|")
    print(f"| symdyn (N = 20 to 30) | {per['mul']:g} | {per['add']:g} | {per['div']:g} | {per['sqrt']:g} | {per['trig']:g} |")
    print("| Rodriguez 1987, Table II | 26 | 28 | 3 | 0 | (not counted) |")

    print("\n### Panda, symbolic inertial parameters, against SymPyBotics (figures from the issue, sympy 1.14)\n")
    panda = symdyn.load_robot(ROOT / "robots" / "panda.urdf")
    print("| function | symdyn time (s) | symdyn mul | symdyn add | SymPyBotics time (s) | SymPyBotics mul | SymPyBotics add |")
    print("|---|---|---|---|---|---|---|")
    spb = {"inverse_dynamics": (0.11, 428, 358), "mass_matrix": (0.57, 742, 561), "coriolis_matrix": (3.7, 5010, 4756)}
    for name in names:
        p, seconds = timed(trace, panda, BY_NAME[name], "symbolic")
        ref = spb.get(name)
        ref_text = " | ".join(map(str, ref)) if ref else "- | - | -"
        print(f"| {name} | {seconds:.3f} | {p.ops['mul']} | {p.ops['add']} | {ref_text} |")
    p12, s12 = timed(trace, planar_chain(12), BY_NAME["coriolis_matrix"], "symbolic")
    print(f"\nPlanar 12-link Coriolis matrix, symbolic parameters: symdyn {s12:.2f} s "
          f"({p12.ops['mul']} mul, {p12.ops['add']} add); SymPyBotics 24 s.\n")

    print("### Against the classical general algorithms (Featherstone, RBDA Table 10.1), n = 7 (Panda, numeric)\n")
    n = 7
    classical = {"inverse_dynamics": (93 * n - 108, 81 * n - 100, "RNEA"),
                 "mass_matrix": (10 * n * n + 22 * n - 32, 6 * n * n + 37 * n - 43, "CRBA"),
                 "forward_dynamics": (224 * n - 259, 205 * n - 248, "ABA")}
    print("| function | symdyn mul | symdyn add | classical | mul | add | symdyn / classical (mul+add) |")
    print("|---|---|---|---|---|---|---|")
    for name, (mul, add, algo) in classical.items():
        p = trace(panda, BY_NAME[name])
        ratio = (p.ops["mul"] + p.ops["add"]) / (mul + add)
        print(f"| {name} | {p.ops['mul']} | {p.ops['add']} | {algo} | {mul} | {add} | {ratio:.2f} |")
    identification()


if __name__ == "__main__":
    sys.exit(main())
