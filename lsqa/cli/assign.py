"""``lsqa assign``: give each annotator their own verdicts of one judge to review, with overlap.

The batch is signed by the person who assigns: ``--as NAME``, who in a workspace with people must be an
admin there (their stored role is checked by the same write as on the dashboard, ``lsqa.team.acting``);
in a workspace without people ``--as`` defaults to the login name.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from lsqa.cli.common import WorkspaceOption, emit_json, existing_workspace


def assign_cmd(
    judge: str = typer.Option(..., "--judge", help="The judge whose verdicts are assigned."),
    annotators: str = typer.Option(..., "--annotators", help="Comma-separated names (people of the "
                                   "workspace once it has people), e.g. ana,ben."),
    per_item: int = typer.Option(2, "--per-item", help="How many of them review each verdict."),
    count: int = typer.Option(50, "--count", help="How many verdicts (items) to assign."),
    queue: str = typer.Option("priority", "--queue", help="priority: the audit queue's head (verdicts "
                              "assigned before left out); random: a simple random sample of the judge's "
                              "items, whose reviews then count for corrected estimates."),
    seed: int = typer.Option(0, "--seed", help="Seed of the random draw."),
    as_person: Optional[str] = typer.Option(None, "--as", help="Who assigns (recorded as assigned_by): a person "
                                            "of the workspace with the admin role; in a workspace without "
                                            "people, any name (default: your login name)."),
    workspace: Optional[Path] = WorkspaceOption,
    as_json: bool = typer.Option(False, "--json", help='Print {"judge", "assigned": [{"annotator", '
                                 '"n_items"}], "per_item", "batch"}.'),
) -> None:
    """Give each annotator their own verdicts of a judge to review, each verdict to --per-item of them."""
    from lsqa.audit.assignments import assign
    from lsqa.team import named

    ws = existing_workspace(workspace)
    done = assign(ws, judge, annotators.split(","), by=named(ws, as_person),
                  per_item=per_item, count=count, queue=queue, seed=seed)
    if as_json:
        emit_json({k: done[k] for k in ("judge", "assigned", "per_item", "batch")})
        return
    typer.echo(f"batch {done['batch']}: {done['items']} verdicts of {done['judge']} ({done['queue']}), "
               f"each to {done['per_item']} of {len(done['assigned'])} annotators")
    for a in done["assigned"]:
        typer.echo(f"  {a['annotator']:<24} {a['n_items']:>5} verdicts")
