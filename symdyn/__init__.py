"""symdyn: symbolic rigid-body dynamics of robot arms, generated as straight-line Python and C."""
from .engine import Engine
from .errors import RobotFileError
from .load import load_robot

__version__ = "0.1.0"
__all__ = ["Engine", "RobotFileError", "load_robot", "__version__"]
