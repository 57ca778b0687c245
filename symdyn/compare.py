"""`symdyn compare`: the generated code against the numeric engine, the C module and Pinocchio."""
import importlib.util
from pathlib import Path

import numpy as np

from .engine import Engine
from .codegen.generator import select_functions
from .generate import module_name, render

PINOCCHIO_NAMES = ("inverse_dynamics", "mass_matrix", "mass_matrix_inverse", "forward_dynamics", "gravity",
                   "coriolis_matrix", "nonlinear_effects")


def import_module_file(path, name=None):
    spec = importlib.util.spec_from_file_location(name or Path(path).stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def relative_error(a, b):
    return float(np.abs(np.asarray(a) - np.asarray(b)).max() / max(1.0, float(np.abs(b).max())))


def pinocchio_model(model):
    """The same Model rebuilt as a pinocchio.Model (joints, placements, inertias, gravity)."""
    import pinocchio as pin
    pm = pin.Model()
    pm.gravity = pin.Motion(np.array(model.gravity), np.zeros(3))      # pin.Motion(linear, angular)
    ids = []
    for joint, body in zip(model.joints, model.bodies):
        axis = np.array(joint.axis)
        jm = pin.JointModelRevoluteUnaligned(axis) if joint.type == "revolute" else pin.JointModelPrismaticUnaligned(axis)
        jid = pm.addJoint(ids[joint.parent] if joint.parent >= 0 else 0, jm,
                          pin.SE3(np.array(joint.rotation), np.array(joint.offset)), joint.name)
        pm.appendBodyToJoint(jid, pin.Inertia.FromDynamicParameters(np.array(body.params)), pin.SE3.Identity())
        ids.append(jid)
    return pm


def pinocchio_functions(pmodel):
    """Pinocchio's counterparts of the generated functions, one state at a time, full matrices."""
    import pinocchio as pin
    data = pmodel.createData()
    sym = lambda A: np.triu(A) + np.triu(A, 1).T        # crba and computeMinverse fill the upper triangle
    return {"inverse_dynamics": lambda q, v, a: pin.rnea(pmodel, data, q, v, a).copy(),
            "mass_matrix": lambda q: sym(pin.crba(pmodel, data, q)),
            "mass_matrix_inverse": lambda q: sym(pin.computeMinverse(pmodel, data, q)),
            "forward_dynamics": lambda q, v, t: pin.aba(pmodel, data, q, v, t).copy(),
            "gravity": lambda q: pin.computeGeneralizedGravity(pmodel, data, q).copy(),
            "coriolis_matrix": lambda q, v: pin.computeCoriolisMatrix(pmodel, data, q, v).copy(),
            "nonlinear_effects": lambda q, v: pin.nonLinearEffects(pmodel, data, q, v).copy()}


def _pinocchio(model):
    """Pinocchio's functions on the same model, or None when it is not installed."""
    try:
        import pinocchio  # noqa: F401
    except ImportError:
        return None
    return pinocchio_functions(pinocchio_model(model))


def compare(model, states=20, seed=0, workdir=None, with_c=True, functions=None):
    """{function: {"python": err, "c": err, "pinocchio": err}}: largest relative differences from the engine.

    `functions`: the names to generate and compare (None: the whole set)."""
    import tempfile
    rng = np.random.default_rng(seed)
    n = model.dof
    inputs = [rng.uniform(-np.pi, np.pi, (states, n)), rng.normal(size=(states, n)), rng.normal(size=(states, n))]
    tmp = Path(workdir or tempfile.mkdtemp(prefix="symdyn-compare-"))
    langs = ("python", "c") if with_c else ("python",)
    module = module_name(model.path)
    for name, text in render(model, langs, functions=functions).items():
        (tmp / name).write_text(text)
    generated = {"python": import_module_file(tmp / f"{module}.py", f"_symdyn_cmp_{module}")}
    if with_c:
        from .cload import load_c
        generated["c"] = load_c(tmp / f"{module}.c")
    engine, pino = Engine(model), _pinocchio(model)
    report = {}
    for fn in select_functions(functions):
        args = inputs[:len(fn.args)]
        reference = getattr(engine, fn.name)(*args)
        row = {lang: relative_error(getattr(mod, fn.name)(*args), reference) for lang, mod in generated.items()}
        if pino is not None and fn.name in PINOCCHIO_NAMES:
            theirs = np.stack([pino[fn.name](*(a[s] for a in args)) for s in range(states)])
            row["pinocchio"] = relative_error(reference, theirs)
        report[fn.name] = row
    return report
