"""The error types symdyn raises for bad input and for output it cannot write.

Every message is ONE line that starts with the file (or folder) it is about: the command line
prints it as `symdyn: error: <path>: <problem>`. Names and paths come from the user's files and
may hold line breaks or other control characters; they are shown escaped (e.g. `\\n`), never raw.
"""


def one_line(text):
    """`text` with every non-printable character (line breaks, tabs, NUL, lone surrogates) escaped."""
    text = str(text)
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape", "backslashreplace").decode("ascii")
                   for ch in text)


class SymdynError(Exception):
    """A problem with a file or folder the user named: `path: message`, one line."""

    def __init__(self, path, message):
        self.path = str(path)
        self.message = one_line(message)
        super().__init__(f"{one_line(self.path)}: {self.message}")


class RobotFileError(SymdynError):
    """A robot description that cannot be used: names the file and the problem in one line."""


class OutputError(SymdynError):
    """The output folder or one of its files cannot be created or written."""
