"""The error types symdyn raises for bad input and for output it cannot write.

Every message is ONE line that starts with the file (or folder) it is about: the command line
prints it as `symdyn: error: <path>: <problem>`. Names and paths come from the user's files and
may hold line breaks or other control characters; they are shown escaped (e.g. `\\n`), never raw,
and a message is cut at MAX_MESSAGE characters (values in it are already bounded excerpts: see
description._show; this is the last guard).
"""

MAX_MESSAGE = 2000


def one_line(text):
    """`text` with every non-printable character (line breaks, tabs, NUL, lone surrogates) escaped."""
    text = str(text)
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape", "backslashreplace").decode("ascii")
                   for ch in text)


def _bounded(text, limit=MAX_MESSAGE):
    return text if len(text) <= limit else text[:limit] + f"... ({len(text) - limit} more characters)"


class SymdynError(Exception):
    """A problem with a file or folder the user named: `path: message`, one line."""

    def __init__(self, path, message):
        self.path = str(path)
        self.message = _bounded(one_line(message))
        super().__init__(f"{_bounded(one_line(self.path))}: {self.message}")


class RobotFileError(SymdynError):
    """A robot description that cannot be used: names the file and the problem in one line."""


class OutputError(SymdynError):
    """The output folder or one of its files cannot be created or written."""


class CModuleError(SymdynError):
    """A generated C module that load_c cannot compile or load: no compiler, a .h and .c from
    different runs, a compile cache others can write, a failed compilation (the compiler's full
    messages in `details`)."""

    def __init__(self, path, message, details=""):
        super().__init__(path, message)
        self.details = details
