"""Errors users see. Each names the input, where in it, and what to do."""

from __future__ import annotations


class LsqaError(Exception):
    """Base class: the command line prints the message and exits non-zero, without a traceback."""


class InputError(LsqaError):
    """A malformed input file: names the file, the line (when known) and the problem."""

    def __init__(self, path, problem: str, line: int | None = None, hint: str = ""):
        self.path, self.line, self.problem, self.hint = str(path), line, problem, hint
        where = f"{self.path}:{line}" if line is not None else self.path
        message = f"{where}: {problem}"
        if hint:
            message += f" ({hint})"
        super().__init__(message)
