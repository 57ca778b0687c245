"""The manifest beside every generated module, `<module>.json`, written with its files (symdyn.generate.write_all).

It says in data what the module's comments say in prose (functions with their shapes, counts and variants,
sizes, names, frames, constraints, conventions, precision, the input's digest): loaders read it, not the C.
"""
import json
from pathlib import Path

from .. import __version__
from ..functions import sizes
from .generator import set_id

#: bumped when a field changes meaning; a loader refuses a format it does not know
FORMAT = 1
SUFFIX = ".json"
#: the conventions every module follows (docs/api.md says the same in prose)
CONVENTIONS = {
    "layout": "row-major; a batch adds leading axes",
    "configuration": "pinocchio: q = [x, y, z, qx, qy, qz, qw, ...] for a free-flyer, v = [linear, angular "
                     "velocity of the base in its frame, ...]",
    "frames": "LOCAL_WORLD_ALIGNED: at the frame origin, world axes, [linear; angular]",
    "f_ext": "per frame of FRAMES: [force; torque about the frame origin], world axes",
    "units": "SI (rad, m, N m, N)",
}


def module_names(backends, module):
    """{module file stem: precision} of the modules the backends write (a float32 C module has its own stem)."""
    stems = {}
    for backend in backends:
        stems.setdefault(module + backend.suffix, "float32" if backend.real == "float" else "float64")
    return stems


def manifest(model, programs, module, params_mode, precision="float64"):
    """The manifest of one module as a dict (see the module docstring)."""
    from ..recursions.base_parameters import base_parameters
    size, base, read = sizes(model), base_parameters(model), model.provenance
    names = [p.name for p in programs]
    return {
        "format": FORMAT, "symdyn": __version__, "module": module, "robot": model.name,
        "source": Path(read.path).name if read.path else "<memory>", "digest": read.digest,
        "set_id": set_id(model, params_mode, names), "params_mode": params_mode, "precision": precision,
        "sizes": {"dof": model.dof, "nq": model.nq, "nv": model.nv, "nf": size["nf"], "nc": size["nc"],
                  "np": len(model.parameters)},
        "joint_names": list(model.joint_names), "frames": [f.name for f in model.kinematic_frames],
        "constraints": [c.describe() for c in model.constraints], "actuated": list(model.actuated),
        "parameter_names": list(model.parameter_names), "base_parameter_names": list(base.labels()),
        "base_parameter_groups": list(base.describe()), "conventions": CONVENTIONS, "gravity": [float(g) for g in model.gravity],
        "functions": [_function(p, names) for p in programs],
    }


def _function(program, names):
    """One function's entry: arguments and outputs with their shapes, statement count (compile time grows with
    it), operations and variants."""
    return {"name": program.name, "doc": program.doc,
            "args": [{"name": a, "shape": list(program.arg_shapes[a])} for a in program.args],
            "outputs": [{"name": name, "shape": list(shape)} for name, shape, _ in program.outputs()],
            "statements": len(program.assignments), "ops": dict(program.ops), "gravity": program.gravity,
            "form": program.form or None,
            "fext": program.fext if program.fext in names else None,
            "baumgarte": program.baumgarte if program.baumgarte in names else None}


def render(model, programs, module, params_mode, backends):
    """{`<stem>.json`: text} of the modules the backends write."""
    return {stem + SUFFIX: text(manifest(model, programs, stem, params_mode, precision))
            for stem, precision in module_names(backends, module).items()}


def text(data):
    """The manifest as JSON text: sorted keys, one field a line, one function a line (ASCII only)."""
    head = json.dumps({k: v for k, v in data.items() if k != "functions"}, indent=1, sort_keys=True)
    functions = ",\n".join("  " + json.dumps(f, sort_keys=True) for f in data["functions"])
    return head[:-2] + ',\n "functions": [\n' + functions + "\n ]\n}\n"
