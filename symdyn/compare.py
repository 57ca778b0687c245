"""`symdyn compare`: the generated code against the numeric engine, the C module and Pinocchio (MuJoCo for a
model in MuJoCo's coordinates, symdyn.oracle.mujoco)."""
import importlib.util
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .engine import Engine
from .codegen.generator import select_functions
from .errors import one_line
from .functions import arg_dims, arguments, resolve, sizes
from .generate import module_name, render
# the Pinocchio adapter (symdyn.oracle.pinocchio), also for the modules and tests that import it from here
from .oracle.pinocchio import (JointsDisagree, PINOCCHIO_FRAME_NAMES, PINOCCHIO_NAMES, coupling_matrix,  # noqa: F401
                               joint_dynamics_vectors, passive_forces, pinocchio_constraint_functions,
                               pinocchio_functions,
                               pinocchio_model, pinocchio_reference, set_joint_dynamics, tree_configuration,
                               _mimic_functions)

def import_module_file(path, name=None):
    spec = importlib.util.spec_from_file_location(name or Path(path).stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def relative_error(a, b):
    """The largest difference relative to max(1, |b|), over the entries where b is finite: where the
    reference b is inf or nan (a singular model's division by zero) the value is not defined, and each
    computation reaches its own inf or nan. a not finite where b is: inf (never nan)."""
    if isinstance(b, tuple):            # several outputs: the worst of them
        return max(relative_error(x, y) for x, y in zip(a, b))
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    finite = np.isfinite(b)
    a, b = np.broadcast_to(a, b.shape)[finite], b[finite]
    if not b.size:
        return 0.0
    if not np.isfinite(a).all():
        return float("inf")
    return float(np.abs(a - b).max() / max(1.0, float(np.abs(b).max())))


def _undefined(reference):
    """Whether a reference result has inf or nan entries (tuple: in any output)."""
    parts = reference if isinstance(reference, tuple) else (reference,)
    return any(not np.isfinite(np.asarray(x, dtype=float)).all() for x in parts)


def _pinocchio(model, notes):
    """Pinocchio's functions on the same model, or None when it is not installed."""
    try:
        import pinocchio  # noqa: F401
    except ImportError:
        return None
    pmodel, how = pinocchio_reference(model)
    notes.append(f"pinocchio column: {how}")
    if model.mimic:
        notes.append("mimic joints: Pinocchio's model of the whole tree with the coupling applied (G^T M G, ...)")
        return _mimic_functions(model, pmodel)
    if model.provenance.joint_params:      # friction and armature from a file Pinocchio did not read
        set_joint_dynamics(pmodel, model)
    functions = pinocchio_functions(pmodel, [f.name for f in model.kinematic_frames],
                                    joint_dynamics_vectors(model)["friction_offset"], model.coulomb_smoothing,
                                    passive_forces(model))
    if model.constraints:            # the joint friction as pinocchio_functions adds it
        offset, s = joint_dynamics_vectors(model)["friction_offset"], model.coulomb_smoothing
        sgn = (lambda v: np.tanh(v / s)) if s else np.sign
        functions.update(pinocchio_constraint_functions(
            pmodel, model, lambda v: pmodel.damping * v + pmodel.friction * sgn(v) + offset))
    return functions


def _checked(module, name, args, reference, lang, notes):
    """relative_error of module.name(*args), or inf with a note when it raises (symdyn's crash, not a
    disagreement)."""
    try:
        return relative_error(getattr(module, name)(*args), reference)
    except Exception as exc:            # noqa: BLE001 (shown, not hidden: the row fails)
        if notes is not None:
            notes.append(f"CRASH: the generated {lang} {name} raised {type(exc).__name__}: "
                         f"{' '.join(str(exc).split())}")
        return float("inf")


def _mujoco(model, notes):
    """MuJoCo's functions (symdyn.oracle.mujoco) for a model in its coordinates, or None when it is not
    installed or cannot load the file (a note says which oracle was used)."""
    from .oracle import mujoco as oracle
    if not oracle.available():
        notes.append("mujoco column: none (MuJoCo is not installed: pip install mujoco)")
        return None
    try:
        functions = oracle.functions(model, notes=notes)
    except Exception as exc:       # MuJoCo's own loading errors, or other joints than symdyn's (ValueError)
        notes.append(f"mujoco column: none (MuJoCo {oracle.version()}: {one_line(str(exc))[:200]})")
        return None
    try:
        functions["frame_placement"](functions["neutral"]())
    except ValueError as exc:      # a frame MuJoCo has no site or body for
        functions = {k: f for k, f in functions.items() if not k.startswith("frame_")}
        notes.append(f"mujoco column: no frames ({exc})")
    notes.append(f"mujoco column: MuJoCo {oracle.version()} loading the file itself (constraints and actuation off)")
    return functions


def compare_steps(with_c=True, functions=None, model=None):
    """How many times `compare` calls progress: each function traced, the C compile, each function checked."""
    return 2 * len(select_functions(functions, model)) + bool(with_c)


def compare(model, states=20, seed=0, workdir=None, with_c=True, notes=None, progress=None, functions=None):
    """{function: {"python": err, "c": err, "pinocchio": err}}: largest relative differences from the engine.

    `notes` (a list), if given, receives one line saying how the Pinocchio model was built. A URDF
    file is read by Pinocchio's own parser; JointsDisagree if it finds other joints than symdyn. A
    generated function that raises is a crash of symdyn: its error is inf and `notes` says so.
    progress(step), if given, is called after each of the `compare_steps(with_c)` steps.
    `functions`: the names to generate and compare (None: the default set)."""
    from .multibody.lie import random_configuration
    rng = np.random.default_rng(seed)
    inputs = _random_inputs(model, rng, states)
    generated = _generated_modules(model, workdir, with_c, progress, functions)
    mujoco = model.conventions == "mujoco"      # MuJoCo's coordinates: MuJoCo is the oracle
    engine, oracle = Engine(model), (_mujoco if mujoco else _pinocchio)(model, [] if notes is None else notes)
    run = _Run(model, states, inputs, engine, generated, oracle, "mujoco" if mujoco else "pinocchio")
    report = _function_rows(run, functions, notes, progress)
    report.update(_lie_rows(run, random_configuration(model, rng, states)))
    return report


@dataclass
class _Run:
    """One comparison: the random inputs (_random_inputs), the numeric engine (the reference), the generated
    modules by language, and the oracle's functions by name (None without an oracle) with its column's name."""
    model: object
    states: int
    inputs: dict
    engine: object
    generated: dict
    oracle: "dict | None"
    column: str


def _random_inputs(model, rng, states):
    """The states and the other arguments the functions are compared at, drawn from rng."""
    from .multibody.lie import random_configuration
    size = sizes(model)
    q = random_configuration(model, rng, states)
    vectors = [rng.normal(size=(states, size["nv"])) for _ in range(2)]
    f_ext = rng.normal(size=(states,) + resolve(arg_dims("f_ext"), size))
    standard = np.array(model.parameters)
    params = standard * rng.uniform(0.5, 2.0, (states, len(standard)))
    extra = {"gains": np.column_stack([rng.uniform(10, 100, states), rng.uniform(1, 20, states)]),
             "error": rng.normal(size=(states, size["nc"])) * 0.01, "restitution": rng.uniform(0, 1, (states, 1))}
    return {"q": q, "vectors": vectors, "f_ext": f_ext, "params": params, "extra": extra}


def _generated_modules(model, workdir, with_c, progress, functions):
    """The model's generated Python module (and C module, compiled) by language, written to workdir (None: a
    new temporary folder)."""
    import tempfile
    tmp = Path(workdir or tempfile.mkdtemp(prefix="symdyn-compare-"))
    langs = ("python", "c") if with_c else ("python",)
    module = module_name(model.provenance.path)
    for name, text in render(model, langs, progress=progress, functions=functions).items():
        (tmp / name).write_text(text)
    generated = {"python": import_module_file(tmp / f"{module}.py", f"_symdyn_cmp_{module}")}
    if with_c:
        from .codegen.c.loader import load_c
        generated["c"] = load_c(tmp / f"{module}.c")
        if progress:
            progress("compile C")
    return generated


def _function_rows(run, functions, notes, progress):
    """{function: {language or oracle column: relative error}} over the generated functions."""
    i = run.inputs
    report, undefined = {}, []          # undefined: functions with inf or nan in the numeric engine's results
    for fn in select_functions(functions, run.model):
        args = arguments(fn, i["q"], i["vectors"], i["f_ext"], i["params"], i["extra"])
        with np.errstate(all="ignore"):     # a singular model (warned at load): inf and nan, no numpy warnings
            reference = getattr(run.engine, fn.name)(*args)
            row = {lang: _checked(mod, fn.name, args, reference, lang, notes) for lang, mod in run.generated.items()}
        if _undefined(reference):
            undefined.append(fn.name)
        if run.oracle is not None and fn.name in run.oracle:
            theirs = [run.oracle[fn.name](*(a[s] for a in args)) for s in range(run.states)]
            theirs = tuple(map(np.stack, zip(*theirs))) if isinstance(theirs[0], tuple) else np.stack(theirs)
            row[run.column] = relative_error(reference, theirs)
        report[fn.name] = row
        if progress:
            progress(fn.name)
    if undefined and notes is not None:
        notes.append(f"compared where the numeric engine's values are finite (a singular model gives inf or nan): "
                     f"{', '.join(undefined)}")
    return report


def _lie_rows(run, q1):
    """integrate, difference and neutral: the generated modules' and the oracle's against the engine's."""
    q, v = run.inputs["q"], run.inputs["vectors"][0]
    calls = {"integrate": lambda s: (q[s], v[s], 0.3), "difference": lambda s: (q[s], q1[s]), "neutral": lambda s: ()}
    oracle = run.oracle
    if oracle is not None and run.column == "pinocchio":
        oracle = _pinocchio_lie(run.model)
    report = {}
    for name, args in calls.items():
        reference = np.stack([getattr(run.engine, name)(*args(s)) for s in range(run.states)])
        row = {lang: relative_error(np.stack([getattr(mod, name)(*args(s)) for s in range(run.states)]), reference)
               for lang, mod in run.generated.items()}
        if oracle is not None:
            row[run.column] = relative_error(reference, np.stack([oracle[name](*args(s)) for s in range(run.states)]))
        report[name] = row
    return report


def _pinocchio_lie(model):
    """Pinocchio's integrate, difference and neutral on the model, called as the engine's (None for a mimic
    model, which Pinocchio has as its whole tree: other coordinates)."""
    import pinocchio as pin
    pmodel = pinocchio_reference(model)[0]
    if pmodel.nq != model.nq:
        return None
    return {"integrate": lambda q, v, dt: pin.integrate(pmodel, q, dt * v),
            "difference": lambda q0, q1: pin.difference(pmodel, q0, q1), "neutral": lambda: pin.neutral(pmodel)}
