"""Errors users see. Each names the input, where in it, and what to do."""

from __future__ import annotations


class LsqaError(Exception):
    """Base class: the command line prints the message and exits non-zero, without a traceback."""


class WorkspaceError(LsqaError, RuntimeError):
    """A problem with the workspace file itself (locked too long, edited migration, ...)."""


class NoVerdicts(LsqaError, ValueError):
    """Nothing to compute a statistic from: no decided verdicts, every comparison 'none', or no item
    that two raters both labelled. The dashboard shows this as "no data"; any other error is a bug."""


class InputError(LsqaError):
    """A malformed input file: names the file, the line (when known) and the problem."""

    def __init__(self, path, problem: str, line: int | None = None, hint: str = ""):
        self.path, self.line, self.problem, self.hint = str(path), line, problem, hint
        where = f"{self.path}:{line}" if line is not None else self.path
        message = f"{where}: {problem}"
        if hint:
            message += f" ({hint})"
        super().__init__(message)


class AuditRefused(LsqaError, ValueError):
    """A review or flag that cannot be stored as given: a label not of the verdict's kind, an
    unknown verdict or question, an empty annotator. Nothing is written."""


class NotAllowed(LsqaError, PermissionError):
    """An action the person may not take: not signed in where the workspace has people, a revoked
    link, or a role without the permission (``lsqa.team.roles``). Nothing is written."""
