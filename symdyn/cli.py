"""The command line: a thin layer over the library."""
import contextlib
import re
import sys

import click

from . import __version__
from .codegen.languages import LANGUAGES
from .errors import SymdynError, one_line


def _fail(exc):
    """Bad input: one line naming the file and the problem, exit code 2, no traceback."""
    click.echo(f"symdyn: error: {one_line(exc)}", err=True)
    sys.exit(2)


SNAP_HELP = ("Treat joint origin rotations within 1e-4 of right angles (URDF's 1.5708, also composed with a genuine "
             "turn about one axis) as exact and offsets below 1e-9 m as 0: smaller code, slightly different model. "
             "Off by default.")


FLOATING_HELP = ("Make the base link a free-flyer (joint 'root_joint', Pinocchio's conventions: q = [x, y, z, qx, qy, "
                 "qz, qw, joints...], v = [linear, angular velocity of the base in its frame, joint rates]).")
CONVENTIONS_HELP = ("The coordinates of q, v and the results: mujoco (qpos, qvel, qacc, qfrc; quaternions w, x, y, z; "
                    "a free joint's linear velocity in world axes) or pinocchio (default: mujoco for MJCF, pinocchio "
                    "for the others).")
STRICT_HELP = "Treat every warning as an error (exit status 2, nothing written)."
NONPHYSICAL_HELP = ("Accept a link inertia with a clearly negative principal moment (a warning instead of an "
                    "error): the mass matrix may then be indefinite.")


def _warn(path, message):
    """What the loader accepted but the user should know: one line on stderr, the work goes on."""
    click.echo(f"symdyn: warning: {one_line(path)}: {one_line(message)}", err=True)


def _warn_all(path, messages):
    """The warnings of one robot file, one line per kind: the same message about several links (a vendor's CAD
    inertias: 4 of the Allegro hand's) is one line naming the links, not one line each with the path again."""
    groups = {}
    for message in messages:
        link = re.match(r"link '([^']*)': ", message)
        # the link's name and its own numbers (principal moments [...]) out: what is left is the kind
        kind = re.sub(r" \([^()]*\[[^\]]*\][^()]*\)", "", message[link.end():]) if link else message
        groups.setdefault((bool(link), kind), []).append((link.group(1) if link else None, message))
    for (per_link, kind), items in groups.items():
        if not per_link or len(items) == 1:
            for _, message in items:
                _warn(path, message)
        else:
            _warn(path, f"{len(items)} links ({', '.join(name for name, _ in items)}): {kind}")


def _inertia_options(command):
    """--strict and --allow-nonphysical-inertia, for every command that loads robot files."""
    command = click.option("--allow-nonphysical-inertia", "nonphysical", is_flag=True, help=NONPHYSICAL_HELP)(command)
    return click.option("--strict", is_flag=True, help=STRICT_HELP)(command)


@contextlib.contextmanager
def _progress(length, label):
    """A progress bar on stderr, shown only on a terminal (in a pipe or a log it would be one more line)
    and only when there is work to show. While it is shown, load_c's notices (a compile) go on a line
    of their own below the bar's, not over it."""
    hidden = not (length and sys.stderr and sys.stderr.isatty())
    with click.progressbar(length=length, label=label, file=sys.stderr, hidden=hidden) as bar:
        if hidden:
            yield bar
            return
        from .codegen.c import loader as cload
        previous, cload.notice_hook = cload.notice_hook, lambda line: click.echo("\n" + line, err=True)
        try:
            yield bar
        finally:
            cload.notice_hook = previous


FUNCTIONS_HELP = ("Comma-separated names of the functions to use (default: the default set), e.g. "
                  "inverse_dynamics,mass_matrix: less to generate and to compile. The derivatives and energies "
                  "(inverse_dynamics_derivatives, forward_dynamics_derivatives, mass_matrix_derivative, "
                  "mass_matrix_dot, kinetic_energy, potential_energy) are generated only when named.")


def _unknown_function(name):
    """A short line for a function name symdyn does not have: the nearest names (difflib), not all 47."""
    import difflib

    from .functions import ALL_BY_NAME
    near = difflib.get_close_matches(name, list(ALL_BY_NAME), n=3, cutoff=0.6)
    hint = f"did you mean {' or '.join(near)}?" if near else "`symdyn info ROBOT` lists the functions"
    return f"unknown function {name[:60]!r}: {hint}"


def _functions(text):
    """The function names of --functions (None: all of them); one-line error for an unknown name."""
    from .codegen.generator import select_functions
    from .functions import ALL_BY_NAME
    if text is None:
        return None
    try:
        return [fn.name for fn in select_functions(text)]
    except ValueError as exc:
        names = [n.strip() for n in text.split(",") if n.strip()]
        unknown = [n for n in names if n not in ALL_BY_NAME]
        _fail("--functions: " + (_unknown_function(unknown[0]) if unknown else
                                 str(exc) if names else "no function named (e.g. inverse_dynamics,mass_matrix)"))


def _check_functions(path, functions, model):
    """The constraint functions of --functions need a model with constraints."""
    from .codegen.generator import select_functions
    try:
        select_functions(functions, model)
    except SymdynError as exc:         # names the file already (a function the model does not define)
        _fail(exc)
    except ValueError as exc:
        _fail(f"{path}: --functions: {exc}")


def _load(path, options):
    from .readers.load import load_robot
    try:
        model = load_robot(path, options)
    except SymdynError as exc:
        _fail(exc)
    _warn_all(path, model.provenance.warnings)
    return model


def selection_options(command):
    """--lock, --root and --tip: the part of the robot to generate (symdyn.readers.selection); --joint-params."""
    command = click.option("--joint-params", "joint_params", default=None, metavar="FILE",
                           help="YAML file of per-joint friction, armature and springs (damping, friction, "
                                "friction_offset, armature, stiffness, springref) overriding the robot file's; "
                                "see docs/robot-format.md.")(command)
    command = click.option("--tip", default=None, metavar="LINK",
                           help="Keep only the chain from the root to LINK (with what is fixed to it).")(command)
    command = click.option("--root", default=None, metavar="LINK",
                           help="LINK becomes the fixed base; everything above it is dropped.")(command)
    return click.option("--lock", default="", metavar="JOINT[=VALUE],...",
                        help="Make these joints fixed at VALUE (default 0), e.g. to drop a gripper.")(command)


FRAMES_HELP = ("Comma-separated frames (links, or joints) that get kinematics, Jacobians and external wrenches, "
               "in this order (the module's FRAMES). Default: the leaves of the tree (end effectors, feet).")


MIMIC_HELP = ("reduced: a URDF <mimic> joint follows its master (q = multiplier * q_master + offset) and has no "
              "coordinate of its own, as Pinocchio's buildModel(..., mimic=True); independent: it is a degree of "
              "freedom of its own (Pinocchio's default).")


def mimic_option(command):
    return click.option("--mimic", "mimic", type=click.Choice(["reduced", "independent"]), default="reduced",
                        show_default=True, help=MIMIC_HELP)(command)


CONTACT_HELP = ("Comma-separated frames in contact with the world: FRAME (point contact, 3 rows) or FRAME:6d "
                "(6-D contact, 6 rows), e.g. FL_FOOT,FR_FOOT. Adds constraint_jacobian, constraint_drift, "
                "constrained_forward_dynamics(_baumgarte) and impact; the frames join FRAMES.")


def _contact_frames(ctx, param, value):
    """--contact as given, refused in one line when it names no frame ("" or ",,,"), as --frames is."""
    if value is not None and not any(x.strip() for x in value.split(",")):
        _fail("--contact: no contact frame given (FRAME[:3d|:6d],...)")
    return value


def frames_option(command):
    """--frames and --contact."""
    command = click.option("--contact", "contacts", default=None, metavar="FRAME[:3d|:6d],...",
                           help=CONTACT_HELP, callback=_contact_frames)(command)
    return click.option("--frames", "frames", default=None, metavar="NAME,...", help=FRAMES_HELP,
                        callback=lambda ctx, param, value: None if value is None else
                        tuple(x.strip() for x in value.split(",") if x.strip()))(command)


def robot_options(command):
    """The options of every command that loads robot files, in the order --help lists them."""
    for option in reversed((
            click.option("--snap-right-angles", "snap", is_flag=True, help=SNAP_HELP),
            selection_options,
            _inertia_options,
            click.option("--floating-base", "floating", is_flag=True, help=FLOATING_HELP),
            click.option("--functions", "functions", metavar="NAME,...", help=FUNCTIONS_HELP),
            frames_option,
            mimic_option,
            click.option("--conventions", type=click.Choice(["mujoco", "pinocchio"]), default=None,
                         help=CONVENTIONS_HELP))):
        command = option(command)
    return command


def _options(robot):
    """(LoadOptions, the --functions names) from the values of robot_options."""
    from .readers.options import LoadOptions
    selection = _selection(robot["lock"], robot["root"], robot["tip"])
    options = LoadOptions(snap_right_angles=robot["snap"], selection=selection, strict=robot["strict"],
                          allow_nonphysical_inertia=robot["nonphysical"], floating_base=robot["floating"],
                          joint_params=robot["joint_params"], frames=robot["frames"], mimic=robot["mimic"],
                          contacts=robot["contacts"], conventions=robot["conventions"])
    return options, _functions(robot["functions"])


def _selection(lock, root, tip):
    from .readers.selection import Selection, parse_lock
    try:
        return Selection(parse_lock(lock), root, tip)
    except ValueError as exc:
        _fail(exc)


@click.group()
@click.version_option(__version__, prog_name="symdyn")
def main():
    """Symbolic rigid-body dynamics generator."""


@main.command()
@click.argument("robots", nargs=-1, required=True)
@click.option("--ops/--no-ops", default=True, help="Also trace the functions and print their operation counts.")
@click.option("--base-parameters", "show_base", is_flag=True,
              help="Print the base parameters: each one's combination of the standard parameters.")
@robot_options
def info(robots, ops, show_base, **robot):
    """Print the robot and module names, DOF, joint tree, total mass and operation counts of each ROBOT file."""
    from .info import base_parameter_lines, info_lines, trace_count
    options, functions = _options(robot)
    for path in robots:
        model = _load(path, options)
        _check_functions(path, functions, model)
        try:                               # base parameters that fail their check: one line, exit 2
            with _progress(trace_count(model, ops, functions), f"tracing {model.name}") as bar:
                lines = info_lines(model, path, ops, progress=lambda name: bar.update(1), functions=functions)
            if show_base:
                lines += base_parameter_lines(model)
        except SymdynError as exc:
            _fail(exc)
        click.echo("\n".join(lines))


@main.command()
@click.argument("robots", nargs=-1, required=True)
@click.option("--out", "out_dir", default="generated", show_default=True, help="Output folder.")
@click.option("--lang", default="python", show_default=True, help=f"Comma-separated: {', '.join(LANGUAGES)}.")
@click.option("--params", "params_mode", type=click.Choice(["numeric", "symbolic"]), default="numeric", show_default=True,
              help="numeric: inertial parameters folded in; symbolic: passed as a parameter vector "
                   "(files <robot>_params.py/.h/.c).")
@click.option("--precision", type=click.Choice(["float64", "float32"]), default="float64", show_default=True,
              help="Of the C module: float32 writes <robot>_f32.h/.c, float arrays (the same as --lang c-float32; "
                   "Python stays float64).")
@robot_options
def generate(robots, out_dir, lang, params_mode, precision, **robot):
    """Generate the dynamics modules of each ROBOT file into OUT."""
    from .functions import CONSTRAINED, FUNCTIONS
    from .generate import generate as run
    options, functions = _options(robot)
    languages = tuple(x.strip() for x in lang.split(",") if x.strip())
    unknown = [x for x in languages if x not in LANGUAGES]
    if unknown or not languages:
        _fail(f"--lang: unknown language {', '.join(unknown) or '(none)'} (expected {', '.join(LANGUAGES)})")
    if precision == "float32":
        if "cpp" in languages:
            _fail("--precision float32: the C++ wrapper is double only (--lang c, or c-float32 beside cpp)")
        if "c" not in languages:
            _fail("--precision float32 is for the C module: add --lang c")
        languages = tuple("c-float32" if x == "c" else x for x in languages)
    count = len(functions or FUNCTIONS) + (len(CONSTRAINED) if options.contacts and functions is None else 0)
    warnings = {}                  # per robot file, shown grouped (_warn_all) once the library has loaded them all
    with _progress(len(set(robots)) * count, "generating") as bar:
        try:       # the library loads and checks everything before it writes anything
            written = run(robots, out_dir, languages, params_mode, options, functions,
                          progress=lambda name: bar.update(1), on_warning=lambda path, message: warnings.setdefault(path, []).append(message))
        except SymdynError as exc:
            _fail(exc)
        finally:
            for path, messages in warnings.items():
                _warn_all(path, messages)
    for path in written:
        click.echo(f"wrote {path}")


@main.command()
@click.argument("robots", nargs=-1, required=True)
@click.option("--states", default=20, show_default=True, type=click.IntRange(min=1), help="Random states per function.")
@click.option("--tol", default=1e-10, show_default=True, type=click.FloatRange(min=0), help="Largest relative difference accepted.")
@click.option("--c/--no-c", "with_c", default=True, help="Also compile and compare the C module.")
@robot_options
def compare(robots, states, tol, with_c, **robot):
    """Compare generated code with the numeric engine (and Pinocchio, when installed)."""
    from .compare import JointsDisagree, compare as run, compare_steps
    options, functions = _options(robot)
    worst = 0.0
    for path in robots:
        model = _load(path, options)
        _check_functions(path, functions, model)
        notes = []
        try:
            with _progress(compare_steps(with_c, functions, model), f"comparing {one_line(model.name)}") as bar:
                report = run(model, states=states, with_c=with_c, notes=notes, progress=lambda name: bar.update(1),
                             functions=functions)
        except JointsDisagree as exc:      # Pinocchio's URDF parser disagrees on the joints
            click.echo(f"{one_line(model.name)} ({one_line(path)}): {one_line(exc)}")
            worst = float("inf")
            continue
        except SymdynError as exc:         # no C compiler, a failed compilation: one line, exit 2
            _fail(exc)
        columns = sorted({c for row in report.values() for c in row})
        click.echo(f"{one_line(model.name)} ({one_line(path)}): largest relative difference from the numeric engine")
        for note in notes:
            click.echo(f"  ({note})")
        width = max([34] + [len(name) for name in report])
        click.echo(f"  {'function':<{width}s}" + "".join(f"{c:>12s}" for c in columns))
        for name, row in report.items():
            click.echo(f"  {name:<{width}s}" + "".join(f"{row[c]:>12.2e}" if c in row else f"{'-':>12s}" for c in columns))
            worst = max([worst] + list(row.values()))
    passed = worst <= tol
    click.echo(f"worst: {worst:.2e} (tolerance {tol:g}): {'PASS' if passed else 'FAIL'}")
    sys.exit(0 if passed else 1)


#: the longest LaTeX `symdyn latex` prints on the terminal; longer goes to --out FILE
LATEX_PRINT_LIMIT = 20_000


@main.command()
@click.argument("robot")
@click.argument("function")
@click.option("--params", "params_mode", type=click.Choice(["numeric", "symbolic"]), default="numeric", show_default=True,
              help="numeric: inertial parameters as numbers; symbolic: as symbols m_k, h_{x,k}, I_{xx,k}, ...")
@click.option("--simplify", is_flag=True, help="Simplify each entry with sympy (slow beyond 2-3 joints).")
@click.option("--out", "out_file", type=click.Path(dir_okay=False), default=None,
              help=f"Write the LaTeX to this file (any size; on the terminal: at most {LATEX_PRINT_LIMIT:,} characters).")
def latex(robot, function, params_mode, simplify, out_file):
    """Print FUNCTION of a small ROBOT (2-3 joints) as a LaTeX equation, from sympy's closed form."""
    from .expressions import latex as run
    from .functions import BY_NAME
    if function not in BY_NAME:
        _fail(_unknown_function(function))
    model = _load(robot, None)
    try:
        text = run(model, function, params_mode, simplify)
    except SymdynError as exc:
        _fail(exc)
    if out_file is not None:
        _write_text(out_file, text)
    elif len(text) > LATEX_PRINT_LIMIT:          # a 60,000-character line helps nobody on a terminal
        _fail(f"{robot}: {function} is {len(text):,} characters of LaTeX (limit {LATEX_PRINT_LIMIT:,} on the "
              f"terminal): write it with --out FILE, or ask for a smaller function (e.g. gravity) or robot")
    else:
        click.echo(text, nl=False)


def _write_text(path, text):
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as exc:
        _fail(f"{path}: cannot write it ({exc.strerror or exc})")
    click.echo(f"wrote {path} ({len(text):,} characters)")


if __name__ == "__main__":
    main()
