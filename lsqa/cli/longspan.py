"""``lsqa longspan``: which questions need the whole book (``lsqa.figures.longspan``, ``lsqa.stats.longspan``)."""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import Optional

import typer

from lsqa.cli.common import WorkspaceOption, checked_output_file, emit_json, existing_workspace
from lsqa.vocabulary import CORRECTED


def _pct(x) -> str:
    return "—" if x is None else f"{x:+.0%}" if isinstance(x, float) and x < 0 else f"{x:.0%}"


def _gain(g: dict) -> str:
    """The judge-only gain with its 95% and simultaneous intervals, then the corrected one."""
    if g["gain"] is None:
        return "— (no question with both)"
    text = (f"{g['gain']:+.0%} [{g['ci_low']:+.0%}, {g['ci_high']:+.0%}] "
            f"(together {g['simultaneous_ci_low']:+.0%}, {g['simultaneous_ci_high']:+.0%}) on {g['n']}"
            + (" — too few questions" if g["too_few_questions"] else ""))
    c = g[CORRECTED]
    if c["gain"] is None:
        return text + "; judge only"
    ci = "" if c["ci_low"] is None else f" [{c['ci_low']:+.0%}, {c['ci_high']:+.0%}]"
    return text + f"; corrected by {c['n_audited']} audited questions {c['gain']:+.0%}{ci}"


def longspan_cmd(
    workspace: Optional[Path] = WorkspaceOption,
    judge: Optional[str] = typer.Option(None, "--judge", help="The yes/no judge that says an answer is right "
                                        "(default: a ground-truth judge, else AutoAIS, else similarity)."),
    no_context: Optional[str] = typer.Option(None, "--no-context", help="The system that answers without the "
                                             "book (default: the one whose context is 'none')."),
    retrieval: Optional[str] = typer.Option(None, "--retrieval", help="The system with BM25 passages "
                                            "(default: the one whose context is 'retrieval:N')."),
    full: Optional[str] = typer.Option(None, "--full", help="The system with the whole book (default: the one "
                                       "whose context is 'full')."),
    evidence_judge: Optional[str] = typer.Option(None, "--evidence-judge", help="The judge whose quoted "
                                                 "evidence places each question in the book (default: --judge if "
                                                 "it quotes, else the first judge that does)."),
    overrides: bool = typer.Option(False, "--overrides", help="Use people's labels where they reviewed a verdict."),
    as_json: bool = typer.Option(False, "--json", help='Print {"judge", "systems", "questions", "by_document", '
                                 '"by_entity", "simultaneous", "audits"}: each gain judge-only with its '
                                 'interval, simultaneous interval and figure corrected by audits.'),
    export: Optional[Path] = typer.Option(None, "--export", help="Write the needs-full-book questions as a "
                                          "benchmark file (JSONL) with references and provenance."),
    force: bool = typer.Option(False, "--force", help="Replace the --export file if it exists."),
) -> None:
    """Which questions needed the whole book: each question's class (memorised, retrieval,
    needs-full-book, unanswered) and evidence span, the full-book gains per book and entity (judge-only
    with Tango score intervals, simultaneous over the books, and corrected by audits where there are some)."""
    from lsqa import __version__, store
    from lsqa.figures import longspan
    from lsqa.stats.longspan import benchmark_rows
    from lsqa.store import longspan as longspan_store

    if export is not None:
        checked_output_file(export, "needs_full_book.jsonl", force=force)
    ws = existing_workspace(workspace)
    result = longspan.analyse(ws, judge=judge, no_context=no_context, retrieval=retrieval, full=full,
                              evidence_judge=evidence_judge, use_overrides=overrides)
    if export is not None:
        with store.connect(ws) as con:
            config = longspan_store.latest_study_config(con, result["judge"])
        provenance = {"judge": result["judge"], "systems": result["systems"], "human_overrides": overrides,
                      "workspace": ws.name, "study_config": config, "lsqa_version": __version__,
                      "exported_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}
        rows = benchmark_rows(result, provenance)
        export.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    if as_json:
        emit_json(result)
        return
    s = {role: ", ".join(names) for role, names in result["systems"].items()}
    typer.echo(f"judge {result['judge']}: no context = {s['no_context']}; retrieval = {s['retrieval']}; "
               f"full book = {s['full']}")
    together = result["simultaneous"]["by_document"]["statement"]
    typer.echo(f"gains: judge-only with a 95% Tango score interval; 'together': {together}; corrected by "
               f"audits where both answers of some questions were audited ({result['audits']['n_usable_audits']} "
               "usable audits), else judge only")
    for d in result["by_document"]:
        classes = ", ".join(f"{c} {_pct(v)}" for c, v in d["classes"].items())
        typer.echo(f"{d['title'][:40]:<40} {d['n_classified']:>4} of {d['n_questions']:<4} classified: {classes}")
        typer.echo(f"{'':<40} full vs retrieval {_gain(d['full_vs_retrieval'])}; "
                   f"full vs no context {_gain(d['full_vs_no_context'])}")
    if export is not None:
        typer.echo(f"wrote {export}: {len(rows)} needs-full-book questions")
