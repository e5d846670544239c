"""``lsqa users``: the people of a workspace and their sign-in links; ``lsqa disagreements``: where
they disagree; ``lsqa labels``: the final human label of each verdict.

Whoever runs these commands can open the workspace file anyway, so they act as its owner; on the
dashboard the same actions need a signed-in admin (``lsqa.team.roles``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from lsqa.cli.common import WorkspaceOption, emit_json, existing_workspace, friendly_errors
from lsqa.dashboard import links

users = typer.Typer(name="users", help="People who sign in to the dashboard: add, list, a new link, revoke.",
                    no_args_is_help=True, pretty_exceptions_enable=False)


def sign_in_link(token: str, home: str) -> str:
    """The personal link that signs a person in: the dashboard's first page (``links.home``) with ``?token=``."""
    return f"{home}?token={token}"


@users.command("add")
@friendly_errors
def add_cmd(
    name: str = typer.Argument(..., help="The person's name, as it will sign their reviews."),
    role: str = typer.Option(..., "--role", help="viewer | annotator | adjudicator | admin"),
    workspace: Optional[Path] = WorkspaceOption,
    dashboard_url: Optional[str] = typer.Option(None, "--dashboard-url", help="Where people open the dashboard "
                                                "(default LSQA_DASHBOARD_URL, else http://127.0.0.1:8501)."),
    as_json: bool = typer.Option(False, "--json", help='Print {"name", "role", "token", "link", "warnings"}.'),
) -> None:
    """Add a person and print their personal sign-in link (shown once: only a salted hash is kept). The
    link signs in once and expires unused after `link_days` (lsqa.toml, default 7)."""
    from lsqa.config.settings import load_settings
    from lsqa.team import add_person

    home = links.home(dashboard_url)  # before anything is written
    added = add_person(existing_workspace(workspace), name, role, link_days=load_settings().link_days)
    added["link"] = sign_in_link(added["token"], home)
    for line in added["warnings"]:
        typer.echo(line, err=True)
    if as_json:
        emit_json(added)
        return
    typer.echo(f"{added['name']} ({added['role']}) added. Their personal sign-in link (shown only now; "
               f"send it to them privately):\n{added['link']}\n{_link_terms(added)}")


def _link_terms(made: dict) -> str:
    return (f"It signs in once, in the browser that opens it first, and expires unused on "
            f"{made['expires_at']:%Y-%m-%d %H:%M} UTC.")


@users.command("link")
@friendly_errors
def link_cmd(
    name: str = typer.Argument(..., help="The person who needs a new link (an active person)."),
    workspace: Optional[Path] = WorkspaceOption,
    dashboard_url: Optional[str] = typer.Option(None, "--dashboard-url", help="Where people open the dashboard "
                                                "(default LSQA_DASHBOARD_URL, else http://127.0.0.1:8501)."),
    as_json: bool = typer.Option(False, "--json", help='Print {"name", "role", "token", "link", "expires_at"}.'),
) -> None:
    """A new personal sign-in link for a person (a used or expired one, another browser): their previous
    link stops working, their signed-in browsers stay signed in. Shown once."""
    from lsqa.config.settings import load_settings
    from lsqa.team import new_link

    home = links.home(dashboard_url)  # before anything is written
    made = new_link(existing_workspace(workspace), name, link_days=load_settings().link_days)
    made["link"] = sign_in_link(made["token"], home)
    if as_json:
        emit_json(made)
        return
    typer.echo(f"A new sign-in link for {made['name']} ({made['role']}) (shown only now; send it to them "
               f"privately):\n{made['link']}\n{_link_terms(made)}")


@users.command("list")
@friendly_errors
def list_cmd(
    workspace: Optional[Path] = WorkspaceOption,
    as_json: bool = typer.Option(False, "--json", help="Print [{name, role, created_at, revoked_at, items_done, "
                                 "median_seconds_per_item, timed_items, agreed_with_final, compared_with_final, "
                                 "agreement_with_final, assigned, assignments_open}]."),
) -> None:
    """Everyone ever added, with their role, whether their link still works (never a token), and their
    work: items done, median seconds per item, agreement with the final label, assignments open
    (``lsqa.audit.team_figures``)."""
    from lsqa.audit import team_figures
    from lsqa.audit.lead_view import FIGURES
    from lsqa.team import list_people

    ws = existing_workspace(workspace)
    figures = {r["annotator"]: r for r in team_figures(ws, by=None)}
    # Somebody added between the two reads has no figures yet: zeros, as for anybody who did nothing.
    blank = {k: None if k in ("median_seconds_per_item", "agreement_with_final") else 0 for k in FIGURES}
    people = [{**p, **{k: figures.get(p["name"], blank)[k] for k in FIGURES}} for p in list_people(ws)]
    if as_json:
        emit_json(people)
        return
    if not people:
        typer.echo("nobody yet: the dashboard is a one-person tool until `lsqa users add NAME --role ROLE`")
        return
    typer.echo(f"{'name':<24} {'role':<12} {'added':<22}  {'state':<24} {'done':>5} {'s/item':>7} "
               f"{'agree':>11} {'open':>5}")
    for p in people:
        state = f"revoked {p['revoked_at']:%Y-%m-%d %H:%M}" if p["revoked_at"] else "active"
        pace = "-" if p["median_seconds_per_item"] is None else f"{p['median_seconds_per_item']:.1f}"
        agree = "-" if p["agreement_with_final"] is None else f"{p['agreed_with_final']}/{p['compared_with_final']}"
        typer.echo(f"{p['name']:<24} {p['role']:<12} added {p['created_at']:%Y-%m-%d %H:%M}  {state:<24} "
                   f"{p['items_done']:>5} {pace:>7} {agree:>11} {p['assignments_open']:>5}")


@users.command("revoke")
@friendly_errors
def revoke_cmd(
    name: str = typer.Argument(..., help="The person whose link stops working."),
    workspace: Optional[Path] = WorkspaceOption,
) -> None:
    """Revoke a person's link at once; their past work keeps their name. `users add` gives a new link."""
    from lsqa.team import revoke_person

    revoke_person(existing_workspace(workspace), name)
    typer.echo(f"{name}'s sign-in link is revoked")


def _when(value) -> str | None:
    return value.isoformat(sep=" ", timespec="seconds") if value is not None else None


def labels_cmd(
    judge: Optional[str] = typer.Option(None, "--judge", help="The judge whose verdicts (default: every judge)."),
    workspace: Optional[Path] = WorkspaceOption,
    as_json: bool = typer.Option(False, "--json", help='Print {"final_labels": [{"judgment_id", "judge", ..., '
                                 '"label", "basis", "people", "people_labels", "adjudicator", "audit", '
                                 '"audit_queue", "inclusion_prob", "stratum"}]}: the rows of the export\'s '
                                 'final_labels file.'),
) -> None:
    """The final human label of each verdict people labelled: adjudicated, else the people's majority
    (one person's label is theirs), a tie marked and without a label; with the people, the adjudicator
    and whether the verdict counts as an audit (its π). The same rows as `lsqa export`'s final_labels."""
    from lsqa.audit import final_labels

    rows = final_labels(existing_workspace(workspace), judge)
    if as_json:
        emit_json({"final_labels": rows})
        return
    if not rows:
        typer.echo("no final labels: nobody labelled a verdict" + (f" of {judge}" if judge else ""))
        return
    for r in rows:
        people = ", ".join(f"{p}: {lab}" for p, lab in zip(r["people"], r["people_labels"], strict=False))
        by = f" by {r['adjudicator']}" if r["adjudicator"] else ""
        audit = f"  audit ({r['audit_queue']}, π={r['inclusion_prob']:.3g})" if r["audit"] else ""
        typer.echo(f"{r['judgment_id']}  {r['judge']}  {r['label'] or '—'}  {r['basis']}{by}  [{people}]{audit}")
    bases = {b: sum(r["basis"] == b for r in rows) for b in dict.fromkeys(r["basis"] for r in rows)}
    typer.echo(f"{len(rows)} verdicts: " + ", ".join(f"{n} {b}" for b, n in bases.items()))


def disagreements_cmd(
    workspace: Optional[Path] = WorkspaceOption,
    as_json: bool = typer.Option(False, "--json", help='Print {"disagreements": [{"judgment_id", "labels": '
                                 '[{"annotator", "label", "note", "created_at"}], "adjudicated"}]}.'),
) -> None:
    """Verdicts whose people's current labels differ (Audit page and imported reviews alike), each
    with every label, note and time and the adjudicated label if any; not yet adjudicated first. An
    adjudicator sets the final label on the dashboard's Adjudicate page."""
    from lsqa.audit import disagreements

    rows = disagreements(existing_workspace(workspace))
    if as_json:
        emit_json({"disagreements": [
            {"judgment_id": d["judgment_id"],
             "labels": [{"annotator": lab["annotator"], "label": lab["label"], "note": lab["note"],
                         "created_at": _when(lab["created_at"])} for lab in d["labels"]],
             "adjudicated": d["adjudicated"]} for d in rows]})
        return
    if not rows:
        typer.echo("no disagreements: no verdict has two people's labels that differ")
        return
    for d in rows:
        final = f"adjudicated: {d['adjudicated']}" if d["adjudicated"] is not None else "not adjudicated"
        typer.echo(f"{d['judgment_id']}  {d['judge']}  {final}")
        for lab in d["labels"]:
            note = f"  — {lab['note']}" if lab["note"] else ""
            typer.echo(f"    {lab['annotator']}: {lab['label']}  ({_when(lab['created_at'])}){note}")
    open_ = sum(d["adjudicated"] is None for d in rows)
    typer.echo(f"{len(rows)} disagreements, {open_} not adjudicated")
