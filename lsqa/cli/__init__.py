"""The ``lsqa`` command line.

Its commands are the list in ``lsqa/cli/commands.py`` (name → module and function), and nothing
else registers one. The list is read without importing any command's module: ``lsqa --help``
lists the commands from it, and a command's module (with what it imports) is loaded when that
command runs or shows its own help. Commands only parse options, make one ``lsqa`` call and print;
each runs inside ``friendly_errors`` (an ``LsqaError`` is one line and exit code 2).
"""

from __future__ import annotations

import importlib

import click
import typer
from typer.core import TyperGroup

from lsqa.cli.commands import BY_NAME, COMMANDS, Command

__all__ = ["app", "main", "load"]


class _Listed(click.Command):
    """A command as ``lsqa --help`` lists it: its name and summary, its module not loaded."""

    def __init__(self, entry: Command):
        super().__init__(entry.name, short_help=entry.summary, help=entry.summary)


class CommandList(TyperGroup):
    """The ``lsqa`` group: the commands of ``lsqa.cli.commands.COMMANDS``, in its order; a command's
    module is imported when the command is resolved (run, or asked for its help), not when listed."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [c.name for c in COMMANDS]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = BY_NAME.get(cmd_name)
        return None if entry is None else _Listed(entry)

    def resolve_command(self, ctx: click.Context, args: list[str]):
        name, _, rest = super().resolve_command(ctx, args)
        return name, load(BY_NAME[name]), rest


def load(entry: Command) -> click.Command:
    """The click command of one entry of the list, its module imported now."""
    from lsqa.cli.common import friendly_errors

    target = getattr(importlib.import_module(entry.module), entry.function)
    if isinstance(target, typer.Typer):
        return typer.main.get_group(target)
    one = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
    one.command(entry.name, short_help=entry.summary)(friendly_errors(target))
    return typer.main.get_command(one)


app = typer.Typer(
    name="lsqa",
    cls=CommandList,
    help="Long-span question answering workbench (Bohnet et al.): ingest books, generate questions, "
    "answer, judge, rank.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def _lsqa() -> None:
    pass  # the group takes no option of its own (a callback makes typer build a group)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
