"""What every subcommand shares: the workspace option and turning errors into clear messages."""

from __future__ import annotations

import functools
import json
import sys
from pathlib import Path
from typing import Callable, Optional

import typer

from lsqa.config.settings import resolve_workspace
from lsqa.errors import LsqaError, WorkspaceError
from lsqa.store.db import check_workspace_path

WorkspaceOption = typer.Option(
    None, "--workspace", "-w",
    help="Workspace file. Default: $LSQA_WORKSPACE, else 'workspace' in lsqa.toml, else db/lsqa.duckdb.",
)


def workspace_path(value: Optional[Path]) -> Path:
    """The workspace of a command that may start one (ingest): says so on stderr when it does."""
    path = resolve_workspace(value)
    if not path.exists():
        check_workspace_path(path)
        typer.echo(f"creating a new workspace at {path}", err=True)
    return path


def existing_workspace(value: Optional[Path]) -> Path:
    """The workspace of a command that works on stored data: a missing file is a mistyped path,
    refused before any folder or file is made."""
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

    return wrapper


def emit_json(obj) -> None:
    json.dump(obj, sys.stdout, indent=2, sort_keys=False, default=str)
    sys.stdout.write("\n")
