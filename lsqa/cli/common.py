"""What every subcommand shares: the workspace option and turning errors into clear messages."""

from __future__ import annotations

import contextlib
import errno
import functools
import json
import sys
from pathlib import Path
from typing import Callable, Iterator, Optional

import typer

from lsqa.errors import InputError, LsqaError, WorkspaceError

WorkspaceOption = typer.Option(
    None, "--workspace", "-w",
    help="Workspace file. Default: $LSQA_WORKSPACE, else 'workspace' in lsqa.toml, else db/lsqa.duckdb.",
)


def workspace_path(value: Optional[Path]) -> Path:
    """The workspace of a command that may start one (ingest): says so on stderr when it does."""
    from lsqa.config.settings import resolve_workspace  # here, not at the top: `lsqa --help` needs neither
    from lsqa.store.db import check_workspace_path

    path = resolve_workspace(value)
    if not path.exists():
        check_workspace_path(path)
        typer.echo(f"creating a new workspace at {path}", err=True)
    return path


@contextlib.contextmanager
def starting_workspace(value: Optional[Path]) -> Iterator[Path]:
    """The workspace of a command that may start one (ingest). When the path did not exist and the
    command fails (a refused input), the file and the folders made for it are removed again: a
    refusal leaves no empty workspace behind. On success a new workspace is announced on stderr."""
    from lsqa.config.settings import resolve_workspace  # here, not at the top: `lsqa --help` needs neither
    from lsqa.store.db import check_workspace_path

    path = resolve_workspace(value)
    if path.exists():
        yield path
        return
    check_workspace_path(path)
    folders = [p for p in path.parents if not p.exists()]   # made by the first write, innermost first
    try:
        yield path
    except BaseException:
        from lsqa.store.db import forget_migrated

        for made in (path, path.with_name(path.name + ".wal")):
            made.unlink(missing_ok=True)
        forget_migrated(path)
        for folder in folders:
            with contextlib.suppress(OSError):   # not empty: something else was put there meanwhile
                folder.rmdir()
        raise
    if path.exists():
        typer.echo(f"creating a new workspace at {path}", err=True)


def bounded(option: str, value: int | float | None, low: int | float, high: int | float) -> None:
    """Refuse a number option outside [low, high] in one line (typer's own range check prints a
    box of several lines, and has no upper bound unless given one)."""
    if value is not None and not low <= value <= high:
        raise InputError(option, f"{value} is outside {low:,} to {high:,}", hint=f"give a number from {low:,} to {high:,}")


def existing_workspace(value: Optional[Path]) -> Path:
    """The workspace of a command that works on stored data: a missing file is a mistyped path,
    refused before any folder or file is made."""
    from lsqa.config.settings import resolve_workspace  # here, not at the top: `lsqa --help` needs neither
    from lsqa.store.db import check_workspace_path

    path = resolve_workspace(value)
    if not path.exists():
        raise WorkspaceError(f"workspace {path} does not exist; check the path (--workspace, LSQA_WORKSPACE or "
                             "lsqa.toml), or start one with lsqa ingest-narrativeqa, lsqa ingest-book or lsqa demo")
    check_workspace_path(path)
    return path


def friendly_errors(func: Callable) -> Callable:
    """Print a user error as one line on stderr and exit 2, without a traceback."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except LsqaError as exc:  # input errors, workspace errors, no verdicts, ...
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(2) from None
        except KeyboardInterrupt:
            typer.echo("interrupted: finished work is saved; run the same command again to resume", err=True)
            raise typer.Exit(130) from None
        except OSError as exc:  # a file the command writes (an export, a report) on a full disk
            if exc.errno != errno.ENOSPC:
                raise
            where = exc.filename or "the output"
            typer.echo(f"error: no space left on the disk holding {where}: nothing was written; free some space "
                       "there and run the command again", err=True)
            raise typer.Exit(2) from None

    return wrapper


def emit_json(obj) -> None:
    json.dump(obj, sys.stdout, indent=2, sort_keys=False, default=str)
    sys.stdout.write("\n")


def checked_output_file(out: Path | str, example: str, *, force: bool = True) -> None:
    """Refuse, before any work, an output file that cannot be written: a folder or a path written
    as one (``newdir/``), anything there that is not a regular file (a FIFO, a device such as
    ``/dev/null``, a socket, a link to one or to nothing: never opened, so nothing hangs), a missing
    or unwritable folder, (without ``force``) a file that is already there."""
    import os
    import stat

    raw = str(out)
    out = Path(out)
    if raw.endswith(("/", os.sep)) or out.name in ("", ".", ".."):
        raise InputError(raw, "is written as a folder", hint=f"give a file name, e.g. --out {example}")
    if os.path.lexists(out) and not out.is_dir():
        try:
            mode = os.stat(out).st_mode
        except OSError:
            raise InputError(out, "is a link to nothing", hint=f"give a file name, e.g. --out {example}") from None
        if not stat.S_ISREG(mode):
            what = ("a FIFO" if stat.S_ISFIFO(mode) else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
                    else "a socket" if stat.S_ISSOCK(mode) else "not a regular file")
            raise InputError(out, f"is {what}, not a file (never opened)", hint=f"give a file name, e.g. --out {example}")
    if out.is_dir():
        raise InputError(out, "is a folder", hint=f"give a file name, e.g. --out {example}")
    parent = out.parent if str(out.parent) else Path(".")
    if not parent.is_dir():
        what = "is not a folder" if parent.exists() else "does not exist"
        raise InputError(out, f"its folder {parent} {what}", hint="give a path in an existing folder")
    if not os.access(parent, os.W_OK) or (out.exists() and not os.access(out, os.W_OK)):
        raise InputError(out, "cannot be written here (no permission)", hint="give a path you can write to")
    if out.exists() and not force:
        raise InputError(out, "already exists", hint="give a new file name, or pass --force to replace it")
