"""The ``lsqa`` command line.

Each area registers its own subcommands (``register(app)`` in ``lsqa/cli/<area>.py``), listed here
explicitly, so that this file stays a table of contents. Heavy imports (litellm, torch, numpy)
happen inside the commands that need them, so that ``lsqa status`` answers at once.
"""

from __future__ import annotations

import typer

from lsqa.cli import assign as cli_assign
from lsqa.cli import ingest as cli_ingest
from lsqa.cli import longspan as cli_longspan
from lsqa.cli import study as cli_pipeline
from lsqa.cli import stats as cli_stats
from lsqa.cli import suspects as cli_suspects
from lsqa.cli import team as cli_team
from lsqa.cli.stats import format_agreement_table, format_rank_table

__all__ = ["app", "main", "format_agreement_table", "format_rank_table"]

app = typer.Typer(
    name="lsqa",
    help="Long-span question answering workbench (Bohnet et al.): ingest books, generate questions, "
    "answer, judge, rank.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


cli_ingest.register(app)     # ingest-book, ingest-narrativeqa, import-answers, import-judgments, status, demo
cli_pipeline.register(app)   # run, entities, export
cli_stats.register(app)      # rank, agreement
cli_suspects.register(app)   # suspects
cli_longspan.register(app)   # longspan
cli_team.register(app)       # users add | list | revoke, disagreements, labels
cli_assign.register(app)     # assign
cli_pipeline.register_ledger(app)  # ledger settle


def main() -> None:
    app()


if __name__ == "__main__":
    main()
