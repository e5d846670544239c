"""Subcommands that run the paper's pipeline and take its results out: run, export."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from lsqa.cli.common import WorkspaceOption, bounded, emit_json, existing_workspace, friendly_errors


def _warn_names(cfg, workspace: Path) -> None:
    """Look-alike system and judge names (``lsqa.text.names``) on stderr: a warning, not a refusal."""
    from lsqa.config.study import name_warnings

    for line in name_warnings(cfg, workspace):
        typer.echo(line, err=True)


def run(
    config: Path = typer.Argument(..., help="Study config (TOML): documents, questions, systems, judges."),
    workspace: Optional[Path] = WorkspaceOption,
    no_cache: bool = typer.Option(False, "--no-cache", help="Call the models again even for cached prompts."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
):
    """Run the stages a config names, skipping finished work (a re-run makes no new calls).

    Exit code 1 when calls failed (their count and first errors go to stderr; a re-run tries
    them again) or a judge's verdicts were all unreadable, or more than max_unreadable_share of
    them (the count and first raw outputs go to stderr); 3 when max_cost_usd stopped the run
    (raise it and run again to go on)."""
    import sys

    from lsqa.config.study import load_run_config
    from lsqa.study import pipeline

    cfg = load_run_config(config)
    if no_cache:
        cfg = cfg.model_copy(update={"use_cache": False})
    _warn_names(cfg, existing_workspace(workspace))
    summary = pipeline.run(existing_workspace(workspace), cfg, show_bar=sys.stderr.isatty() and not as_json)
    if as_json:
        emit_json(summary.to_dict())
    else:
        typer.echo("\n".join(summary.lines()))
    for line in summary.failure_lines() + summary.unreadable_lines():
        typer.echo(line, err=True)
    if summary.stopped:
        typer.echo(f"stopped: {summary.stopped} — {summary.stop_reason}", err=True)
        raise typer.Exit(3)
    if summary.failure_lines() or summary.unreadable_lines():
        raise typer.Exit(1)


def plan(
    config: Path = typer.Argument(..., help="Study config (TOML), as for `lsqa run`."),
    workspace: Optional[Path] = WorkspaceOption,
    as_json: bool = typer.Option(False, "--json", help="Print the plan as JSON."),
):
    """Calls (new vs cached), input tokens, max output tokens and cost a run would make, before any call."""
    from lsqa.config.study import load_run_config
    from lsqa.study import plan as plan_mod

    ws = existing_workspace(workspace)
    cfg = load_run_config(config)
    _warn_names(cfg, ws)
    study = plan_mod.plan(ws, cfg)
    if as_json:
        emit_json(study.to_dict())
    else:
        typer.echo("\n".join(study.lines()))


def entities(
    document: str = typer.Argument(..., help="Document id or title."),
    top: int = typer.Option(15, "--top", help="How many entities to list (1 to 10,000)."),
    method: str = typer.Option("auto", "--method", help="auto | fastcoref | fallback"),
    workspace: Optional[Path] = WorkspaceOption,
    as_json: bool = typer.Option(False, "--json"),
):
    """Entities of a book ranked by mentions (paper §2), extracted and stored on first use."""
    from lsqa.config.settings import load_settings
    from lsqa.corpus import chains

    bounded("--top", top, 1, 10_000)
    found = chains.book_entities(existing_workspace(workspace), document, method, top, load_settings())
    doc, method, top_chains = found["document"], found["method"], found["chains"]
    if as_json:
        emit_json([{"rank": e["rank"], "name": e["name"], "n_mentions": e["n_mentions"],
                    "mentions": [[a, b] for a, b, _ in m]} for e, m in top_chains])
        return
    typer.echo(f"{doc['title']} — entities by {method}, ranked by mentions (paper §2)")
    for e, _ in top_chains:
        typer.echo(f"  {e['rank']:>3}  {e['n_mentions']:>6,}  {e['name']}")
    typer.echo("\nannotated excerpt ([rank mention]):\n")
    typer.echo(chains.annotated_excerpt(doc["full_text"], top_chains))


def export(
    out: Path = typer.Option(Path("export"), "--out", help="Folder to write into: a new one, an empty one or a "
                             "previous export (other files are refused unless --force)."),
    fmt: str = typer.Option("csv", "--format", help="csv | jsonl | parquet"),
    force: bool = typer.Option(False, "--force", help="Write into a folder that holds other files too "
                               "(lsqa's file names there are replaced, the other files kept)."),
    workspace: Optional[Path] = WorkspaceOption,
):
    """Write questions, answers, verdicts, reviews, flags and rankings to files, all inside --out.

    The files appear together when all are written (a failed export leaves --out as it was);
    CSV cells that a spreadsheet would run as a formula start with a ' (JSONL and Parquet keep
    the exact text)."""
    from lsqa.errors import LsqaError
    from lsqa.figures import analysis

    if fmt not in ("csv", "jsonl", "parquet"):
        raise LsqaError(f"--format {fmt!r}: use csv, jsonl or parquet")
    written = analysis.export(existing_workspace(workspace), out, fmt, force=force)
    for name, n in written.items():
        typer.echo(f"  {n:>8,} rows  {out / name}")


ledger = typer.Typer(name="ledger", help="A study's spend ledger: settle calls left on it by runs that died.",
                     no_args_is_help=True, pretty_exceptions_enable=False)


def stranded_lines(entries: list[dict]) -> list[str]:
    """``lsqa status``'s lines for calls left on the ledgers by dead runs (and by other hosts' runs)."""
    out = []
    for e in entries:
        when = f"sent {e['first_sent_at']:%Y-%m-%d %H:%M:%S}" + (
            f" to {e['last_sent_at']:%Y-%m-%d %H:%M:%S}" if e["last_sent_at"] != e["first_sent_at"] else "")
        whose = "by run(s) that died before storing their answers" if e["dead"] else \
            "by run(s) on another host (cannot tell from here whether they still run)"
        settle = f"; `lsqa ledger settle --study {e['ledger']}` releases them" if e["dead"] else ""
        out.append(f"  study {e['ledger']}: {e['calls']} call(s) {when} {whose}, on its ledger at their worst case "
                   f"${e['bound_usd']:.4f}{settle}")
    return out


@ledger.command("settle")
@friendly_errors
def settle_cmd(
    study: str = typer.Option(..., "--study", help="A study config file, or a study id as `lsqa status` lists it."),
    yes: bool = typer.Option(False, "--yes", help="Release them (without it: say what would be released)."),
    workspace: Optional[Path] = WorkspaceOption,
    as_json: bool = typer.Option(False, "--json", help='Print {"ledger", "calls", "bound_usd", "released", ...}.'),
) -> None:
    """Release the calls that runs of a study recorded as sent and died before storing: their worst
    cases leave the study's ledger (kept in ledger_settlements). Acts as the workspace's owner."""
    from lsqa.study.status import settle_ledger

    out = settle_ledger(existing_workspace(workspace), study, confirm=yes)
    if as_json:
        emit_json(out)
        return
    typer.echo(f"study {out['ledger']}: {out['calls']} call(s) sent {out['first_sent_at']:%Y-%m-%d %H:%M:%S} to "
               f"{out['last_sent_at']:%Y-%m-%d %H:%M:%S} by run(s) that died, on the ledger at their worst case "
               f"${out['bound_usd']:.4f}.")
    typer.echo(out["cannot_know"])
    if out["released"]:
        typer.echo(f"released: ${out['bound_usd']:.4f} taken off the study's ledger (kept in ledger_settlements)")
    else:
        typer.echo("nothing released: run again with --yes to release them")
