"""symdyn: symbolic rigid-body dynamics of robot arms, generated as straight-line Python and C."""
__version__ = "0.1.0"

from .codegen.c.loader import load_c  # noqa: E402
from .engine import Engine  # noqa: E402
from .errors import CModuleError, RobotFileError, SymdynError  # noqa: E402
from .expressions import expressions  # noqa: E402
from .readers.load import load_robot  # noqa: E402

__all__ = ["CModuleError", "Engine", "RobotFileError", "SymdynError", "expressions", "load_c", "load_robot",
           "__version__"]
