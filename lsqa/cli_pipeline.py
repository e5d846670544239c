"""Subcommands that run the paper's pipeline and take its results out: run, export."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from lsqa.cli_common import WorkspaceOption, emit_json, friendly_errors, workspace_path


def register(app: typer.Typer) -> None:
    @app.command("run")
    @friendly_errors
    def run(
        config: Path = typer.Argument(..., help="Study config (TOML): documents, questions, systems, judges."),
        workspace: Optional[Path] = WorkspaceOption,
        no_cache: bool = typer.Option(False, "--no-cache", help="Call the models again even for cached prompts."),
        as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
    ):
        """Run the stages a config names, skipping finished work (a re-run makes no new calls)."""
        import dataclasses
        import sys

        from lsqa import pipeline
        from lsqa.runconfig import load_run_config

        cfg = load_run_config(config)
        if no_cache:
            cfg = dataclasses.replace(cfg, use_cache=False)
        summary = pipeline.run(workspace_path(workspace), cfg, show_bar=sys.stderr.isatty() and not as_json)
        if as_json:
            emit_json(summary.to_dict())
        else:
            typer.echo("\n".join(summary.lines()))

    @app.command("export")
    @friendly_errors
    def export(
        out: Path = typer.Option(Path("export"), "--out", help="Folder to write into."),
        fmt: str = typer.Option("csv", "--format", help="csv | jsonl | parquet"),
        workspace: Optional[Path] = WorkspaceOption,
    ):
        """Write questions, answers, verdicts, reviews, flags and rankings to files."""
        from lsqa import analysis
        from lsqa.errors import LsqaError

        if fmt not in ("csv", "jsonl", "parquet"):
            raise LsqaError(f"--format {fmt!r}: use csv, jsonl or parquet")
        written = analysis.export(workspace_path(workspace), out, fmt)
        for name, n in written.items():
            typer.echo(f"  {n:>8,} rows  {out / name}")
