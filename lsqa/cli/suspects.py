"""``lsqa suspects``: the NarrativeQA references most likely wrong, with the evidence behind each score."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from lsqa.cli.common import WorkspaceOption, bounded, emit_json, workspace_path


def _cell(value) -> str:
    if value is None:
        return "—"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def suspects_cmd(
    workspace: Optional[Path] = WorkspaceOption,
    limit: Optional[int] = typer.Option(None, "--limit", "-n", help="Show the first N references (1 to 10,000,000)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON: {references: [...], n_references, systems: "
                                                       "[each system's ability]}."),
) -> None:
    """References most likely wrong first: the systems' answers and abilities, ground-truth verdicts, the
    other reference, the story's summary, LLM reference checks, human reviews and flags behind each score
    (docs/reference-errors.md)."""
    from lsqa.audit.reference_errors import COLUMNS, suspects, system_abilities

    bounded("--limit", limit, 1, 10_000_000)
    rows = suspects(workspace_path(workspace))
    shown = rows[:limit] if limit else rows
    if as_json:
        emit_json({"references": shown, "n_references": len(rows),
                   "systems": system_abilities(workspace_path(workspace))})
        return
    for r in shown:
        typer.echo(f"{r['question_id']}  ref {r['reference']}  {r['reference_text'][:60]!r}")
        typer.echo("    " + "  ".join(f"{c}={_cell(r[c])}" for c in ("score", *COLUMNS) if r[c] not in ("", None)))
    typer.echo(f"{len(shown)} of {len(rows)} references shown, most likely wrong first")
