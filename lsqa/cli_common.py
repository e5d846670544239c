"""What every subcommand shares: the workspace option and turning errors into clear messages."""

from __future__ import annotations

import functools
import json
import sys
from pathlib import Path
from typing import Callable, Optional

import typer

from lsqa.config import resolve_workspace
from lsqa.errors import LsqaError

WorkspaceOption = typer.Option(
    None, "--workspace", "-w",
    help="Workspace file. Default: $LSQA_WORKSPACE, else 'workspace' in lsqa.toml, else db/lsqa.duckdb.",
)


def workspace_path(value: Optional[Path]) -> Path:
    return resolve_workspace(value)


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
