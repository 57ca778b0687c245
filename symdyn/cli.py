"""The command line: a thin layer over the library."""
import sys

import click

from . import __version__
from .errors import RobotFileError


def _fail(exc):
    """Bad input: one line naming the file and the problem, exit code 2, no traceback."""
    click.echo(f"symdyn: error: {exc}", err=True)
    sys.exit(2)


@click.group()
@click.version_option(__version__, prog_name="symdyn")
def main():
    """Symbolic rigid-body dynamics generator."""


@main.command()
@click.argument("robots", nargs=-1, required=True)
def info(robots):
    """Print DOF, joints and total mass of each ROBOT file."""
    from .load import load_robot
    for path in robots:
        try:
            model = load_robot(path)
        except RobotFileError as exc:
            _fail(exc)
        click.echo(f"{model.name}: {model.dof} DOF, total moving mass {model.total_mass:.6g} kg  ({path})")
        for k, j in enumerate(model.joints):
            click.echo(f"  {k:2d}  {j.name:<24s} {j.type:<10s} axis [{', '.join(f'{a:g}' for a in j.axis)}]")


if __name__ == "__main__":
    main()
