"""The ``lsqa`` command line.

Each area registers its own subcommands (``register(app)`` in ``lsqa/cli_*.py``) so that this
file stays a table of contents. Heavy imports (litellm, torch) happen inside the commands that
need them, so that ``lsqa status`` answers at once.
"""

from __future__ import annotations

import typer

app = typer.Typer(
    name="lsqa",
    help="Long-span question answering workbench (Bohnet et al.): ingest books, generate questions, "
    "answer, judge, rank.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _register_all() -> None:
    import importlib

    for module in ("lsqa.cli_ingest", "lsqa.cli_stats", "lsqa.cli_pipeline"):
        try:
            mod = importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name == module:  # that area is not built yet
                continue
            raise
        mod.register(app)


_register_all()


def main() -> None:
    app()


if __name__ == "__main__":
    main()
