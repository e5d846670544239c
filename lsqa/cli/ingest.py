"""Subcommands that fill a workspace: ingest-book, ingest-narrativeqa, import-*, status, demo."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from lsqa.cli.common import WorkspaceOption, emit_json, existing_workspace, starting_workspace


def _print_summary(summary, as_json: bool) -> None:
    """The summary on stdout; its warnings (look-alike names, ``lsqa.text.names``) also on stderr."""
    if as_json:
        emit_json(summary.to_dict())
    else:
        typer.echo("\n".join(summary.lines()))
    for note in summary.notes:
        if note.startswith("warning:"):
            typer.echo(note, err=True)


def ingest_book(
    path: Path = typer.Argument(..., help="Plain-text book (UTF-8); a Gutenberg header/footer is removed."),
    title: Optional[str] = typer.Option(None, "--title", help="Title (default: the Gutenberg Title: line)."),
    author: Optional[str] = typer.Option(None, "--author"),
    workspace: Optional[Path] = WorkspaceOption,
    as_json: bool = typer.Option(False, "--json"),
):
    """Add a book with its passages (exact character offsets and token counts)."""
    from lsqa.corpus import ingest

    with starting_workspace(workspace) as ws:
        summary = ingest.ingest_book(ws, path, title=title, author=author)
    _print_summary(summary, as_json)


def ingest_narrativeqa(
    directory: Optional[Path] = typer.Argument(None, help="NarrativeQA folder: documents.csv, qaps.csv or "
                                               "*qaps*.jsonl, summaries, stories/<document_id>.txt"),
    set_name: str = typer.Option("test", "--set", help="test | valid | train"),
    errata: Optional[Path] = typer.Option(None, "--errata", help="An errata file (the Reference errors page's "
                                          "download, CSV or JSONL: question_id, reference, correction): its "
                                          "corrected references are kept beside the originals, which stay."),
    workspace: Optional[Path] = WorkspaceOption,
    as_json: bool = typer.Option(False, "--json"),
):
    """Add NarrativeQA documents, questions with both references, summaries and story texts; with
    --errata, corrected references read from an errata file (after DIR, when both are given)."""
    from lsqa.corpus import ingest
    from lsqa.errors import LsqaError

    if directory is None and errata is None:
        raise LsqaError("ingest-narrativeqa: give the NarrativeQA folder, --errata FILE, or both")
    if errata is not None:
        ingest.read_errata(errata)  # a bad errata file is refused before DIR is read
    summaries = []
    with starting_workspace(workspace) as ws:
        if directory is not None:
            summaries.append(ingest.ingest_narrativeqa(ws, directory, set_name=set_name))
        if errata is not None:
            summaries.append(ingest.ingest_errata(ws, errata))
    if as_json and len(summaries) > 1:  # one JSON document: the folder's summary, then the errata's
        emit_json([summary.to_dict() for summary in summaries])
        return
    for summary in summaries:
        _print_summary(summary, as_json)


def import_answers(
    path: Path = typer.Argument(..., help="CSV or JSONL with question_id, system, answer."),
    workspace: Optional[Path] = WorkspaceOption,
    as_json: bool = typer.Option(False, "--json"),
):
    """Add answers produced elsewhere."""
    from lsqa.study import imports

    _print_summary(imports.import_answers(existing_workspace(workspace), path), as_json)


def import_judgments(
    path: Path = typer.Argument(..., help="CSV or JSONL with question_id (or item_id), rater, kind, system_a, "
                                          "system_b, label; other columns are kept."),
    workspace: Optional[Path] = WorkspaceOption,
    as_json: bool = typer.Option(False, "--json"),
):
    """Add verdicts produced elsewhere, by a model or a person."""
    from lsqa.study import imports

    _print_summary(imports.import_judgments(existing_workspace(workspace), path), as_json)


def import_reviews(
    path: Path = typer.Argument(..., help="CSV or JSONL with judge, question_id, system_a, system_b or system, "
                                          "reference, label, annotator; optional inclusion_probability, stratum."),
    workspace: Optional[Path] = WorkspaceOption,
    as_json: bool = typer.Option(False, "--json"),
    gold: bool = typer.Option(False, "--gold", help="The file is a gold set: its labels are references, "
                              "recorded per review row, and never make a verdict need a second review."),
):
    """Add human reviews of verdicts made elsewhere, as if made in the Audit page."""
    from lsqa.audit import review_import as importer

    _print_summary(importer.import_reviews(existing_workspace(workspace), path, gold=gold), as_json)


def status(
    workspace: Optional[Path] = WorkspaceOption,
    as_json: bool = typer.Option(False, "--json", help="Print {table: row count, \"stranded\": [{ledger, calls, "
                                 "bound_usd, first_sent_at, last_sent_at, dead}]}."),
):
    """Row counts per table and per run; calls left on a study's ledger by runs that died (`stranded`)."""
    from lsqa.study.status import workspace_status

    path = existing_workspace(workspace)
    status = workspace_status(path)
    counts, per_run = status["tables"], status["runs"]
    if as_json:  # the table counts, and the reservations dead runs (or other hosts' runs) left on ledgers
        emit_json({**counts, "stranded": [{k: e[k] for k in ("ledger", "calls", "bound_usd", "first_sent_at",
                                                              "last_sent_at", "dead")} for e in status["stranded"]]})
        return
    typer.echo(f"workspace {path}" + (" (read-only)" if status["read_only"] else ""))
    width = max(map(len, counts))
    for table, n in counts.items():
        typer.echo(f"  {table:<{width}}  {n:>9,}")
    if per_run:
        typer.echo("runs:")
        for r in per_run:
            cost = "cost unknown" if r["cost_usd"] is None else f"${r['cost_usd']:.4f}"
            typer.echo(f"  {r['stage']:<22} {r['status']:<12} {r['n']:>4} runs  calls made {r['calls_made'] or 0:,}"
                       f"  cached {r['calls_cached'] or 0:,}  failed {r['calls_failed'] or 0:,}  {cost}")
    if status["stranded"]:
        from lsqa.cli.study import stranded_lines

        typer.echo("stranded spend (calls recorded as sent, never stored):")
        for line in stranded_lines(status["stranded"]):
            typer.echo(line)


def demo(
    path: Path = typer.Option(Path("db/lsqa.duckdb"), "--path", help="Where to build the demo workspace."),
    data_dir: Optional[Path] = typer.Option(None, "--data-dir", help="Default: $LSQA_DATA_DIR or ../shared/data."),
    full: bool = typer.Option(True, "--full/--ingest-only", help="Also run the demo study (answers, judges)."),
    small: bool = typer.Option(False, "--small", help="Two short books only (configs/demo_small.toml)."),
):
    """Build the deterministic demo workspace from the shared data."""
    from lsqa.study import demo as demo_mod

    for line in demo_mod.build_demo(path, data_dir=data_dir, run_study=full,
                                         scale="small" if small else "full"):
        typer.echo(line)
