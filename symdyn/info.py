"""`symdyn info`: what symdyn read from a robot file, and what the generated code will cost.

The command line only prints these lines (and a progress bar while the functions are traced).
"""
from .errors import one_line
from .generate import module_name
from .multibody.model import snap_right_angles

OPS_COLUMNS = (("mul", 6), ("add", 6), ("div", 5), ("sqrt", 5), ("trig", 5))


def joint_tree(model):
    """[(depth, index)] depth first, each joint right after its parent joint (children in file order);
    written over the joints' parent indices, so a branching tree prints as one."""
    children = {}
    for k, joint in enumerate(model.joints):
        children.setdefault(joint.parent, []).append(k)
    order, stack = [], [(0, k) for k in reversed(children.get(-1, []))]
    while stack:
        depth, k = stack.pop()
        order.append((depth, k))
        stack.extend((depth + 1, c) for c in reversed(children.get(k, [])))
    return order


def snap_candidate(model):
    """The model --snap-right-angles would make, or None when it would change nothing (or was applied)."""
    if model.provenance.snapped:
        return None
    snapped = snap_right_angles(model)
    return snapped if snapped.provenance.snapped else None


def trace_count(model, ops=True, functions=None):
    """How many function traces `info_lines` runs (the length of a progress bar)."""
    if not ops:
        return 0
    from .codegen.generator import select_functions
    return len(select_functions(functions, model)) * (2 if snap_candidate(model) else 1)


def header_lines(model, path):
    """Robot name, DOF, mass, the generated module's name, and the kinematic tree."""
    nq, nv = model.nq, model.nv
    module = module_name(model.provenance.path or path)
    lines = [f"robot '{one_line(model.name)}' ({one_line(path)}): {model.dof} DOF (nq {nq}, nv {nv}), "
             f"total moving mass {model.total_mass:.6g} kg",
             f"  module {module}: {module}.py, {module}.h, {module}.c (C functions {module}_*); "
             f"with --params symbolic {module_name(model.provenance.path or path, 'symbolic')}"]
    if "(ignored: " in model.provenance.source:     # an MJCF file: what does not change these dynamics
        lines.append(f"  read from {one_line(model.provenance.source)}")
    frames = model.kinematic_frames
    if frames:
        lines.append("  frames (FRAMES, --frames): " + ", ".join(one_line(f.name) for f in frames))
    if model.constraints:
        from .multibody.constraints import constraint_rows
        loops = any(not c.is_contact for c in model.constraints)
        label = "constraints (CONSTRAINTS: contacts, --contact; loops, loops:; MJCF <equality>)" if loops else \
            "contacts (CONSTRAINTS, --contact)"
        names = ", ".join(one_line(c.describe()) for c in model.constraints)
        lines.append(f"  {label}: {names} ({constraint_rows(model.constraints)} rows)")
        lines += [f"    joint coupling {one_line(c.describe())}: {one_line(c.relation())} (1 row)"
                  for c in model.constraints if c.is_joint]
    if model.actuated:
        lines.append(f"  actuated joints (ACTUATED, actuated:): {', '.join(one_line(n) for n in model.actuated)}")
    if model.conventions == "mujoco":
        lines.append("  coordinates: MuJoCo's (qpos, qvel, qacc, qfrc; quaternions w, x, y, z; --conventions pinocchio "
                     "for Pinocchio's)")
    if model.provenance.snapped:
        lines.append(f"  {model.provenance.snapped} joint origin(s) snapped to exact right angles "
                     "(--snap-right-angles)")
    tree = joint_tree(model)
    width = max(2 * depth + len(one_line(model.joints[k].name)) for depth, k in tree)
    follows = {m.joint: m for m in model.mimic}
    if follows:
        lines.append("  joints, each under its parent joint (index = joint number; q and v hold the entries of the "
                     "joints that are not mimic joints, in this order):")
    elif model.nq == model.nv:
        lines.append("  joints, each under its parent joint (index = position in q):")
    else:
        lines.append("  joints, each under its parent joint (index = joint number; q and v hold each joint's "
                     "entries in this order):")
    for depth, k in tree:
        j = model.joints[k]
        name = "  " * depth + one_line(j.name)
        axis = f" axis [{', '.join(f'{a:g}' for a in j.axis)}]" if j.kind.has_axis else ""
        extra = "".join(f" {label} {getattr(j, key):g}" for label, key in (
            ("Fv", "damping"), ("Fc", "friction"), ("Fo", "friction_offset"), ("Ia", "armature"), ("K", "stiffness"),
            ("q_ref", "springref")) if getattr(j, key))
        if k in follows:
            m = follows[k]
            extra += (f" mimic: q = {m.multiplier:g} * q[{one_line(model.joints[m.master].name)}]"
                      + (f" + {m.offset:g}" if m.offset else ""))
        lines.append(f"  {k:3d}  {name:<{width}s}  {j.type:<10s}{axis}{extra}".rstrip())
    if model.coulomb_smoothing:
        lines.append(f"  Coulomb friction smoothed: Fc tanh(qd / {model.coulomb_smoothing:g})")
    return lines


def base_parameter_lines(model):
    """The base parameters, each as its combination of standard parameters (symdyn.recursions.base_parameters)."""
    from .recursions.base_parameters import base_parameters
    base = base_parameters(model)
    lines = [f"  base parameters: {base.b} of {len(model.parameters)} standard (Gram-Schmidt on random regressor "
             f"samples; residual gap {base.gap[0]:.1e} kept / {base.gap[1]:.1e} dropped)"]
    return lines + [f"  {i:3d}  {line}" for i, line in enumerate(base.describe())]


def ops_lines(programs):
    """The operation counts table, one row per function."""
    width = max([34] + [len(p.name) for p in programs])      # constrained_forward_dynamics_baumgarte: 38
    lines = [f"  {'function':<{width}s} " + " ".join(f"{k:>{w}s}" for k, w in OPS_COLUMNS)]
    for p in programs:
        lines.append(f"  {p.name:<{width}s} " + " ".join(f"{p.ops[k]:>{w}d}" for k, w in OPS_COLUMNS))
    return lines


def snap_lines(candidate, programs=None, snapped_programs=None):
    """The note that --snap-right-angles would apply, with the multiplications it would save."""
    note = (f"  {candidate.provenance.snapped} joint origin(s) within 1e-4 of right angles "
            "(URDF's 1.5708 for pi/2): --snap-right-angles would make them exact (a slightly different model)")
    if not (programs and snapped_programs):
        return [note + " and the code smaller"]
    before = {p.name: p.ops["mul"] for p in programs}
    after = {p.name: p.ops["mul"] for p in snapped_programs}
    shown = [name for name in ("mass_matrix", "inverse_dynamics", "forward_dynamics") if name in before]
    return [note + ", and the code smaller:",
            "    " + ", ".join(f"{n} {before[n]} -> {after[n]} mul" for n in shown)
            + f"; all {len(before)} functions {sum(before.values())} -> {sum(after.values())} mul"]


def info_lines(model, path, ops=True, progress=None, functions=None):
    """Every line `symdyn info` prints for one robot; progress(name) after each function traced;
    `functions`: the names whose operations are counted (None: all)."""
    from .codegen.generator import trace_all
    lines = header_lines(model, path)
    candidate = snap_candidate(model)
    if not ops:
        return lines + (snap_lines(candidate) if candidate else [])
    programs = trace_all(model, progress=progress, functions=functions)
    lines += ops_lines(programs)
    if candidate:
        lines += snap_lines(candidate, programs, trace_all(candidate, progress=progress, functions=functions))
    return lines
