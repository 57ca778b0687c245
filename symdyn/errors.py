"""The one error type symdyn raises for bad input."""


class RobotFileError(Exception):
    """A robot description that cannot be used: names the file and the problem in one line."""

    def __init__(self, path, message):
        self.path = str(path)
        self.message = message
        super().__init__(f"{self.path}: {message}")
