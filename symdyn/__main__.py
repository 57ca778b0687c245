"""`python -m symdyn`: the same command line as the `symdyn` script."""
from .cli import main

main(prog_name="symdyn")
