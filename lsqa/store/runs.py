"""Pipeline runs: one row per stage run, opened when it starts and closed when it ends."""

from __future__ import annotations

import json
import os
import socket

from lsqa.store import llm_calls
from lsqa.store.bulk import fetch_dicts
from lsqa.store.processes import process_alive

ABANDONED = "process {pid} on {host} ended without closing this run (killed or crashed); its finished work is kept"


def _abandoned(row: dict) -> bool:
    """A 'running' run whose process, on this host, no longer exists. Runs of other hosts cannot be
    checked from here and stay as they are; a reused process id keeps a run 'running' (never the
    other way round)."""
    return (row["status"] == "running" and row.get("pid") is not None
            and row.get("host") == socket.gethostname() and not process_alive(int(row["pid"])))


def close_abandoned_runs(con) -> list[int]:
    """Mark the runs of dead processes of this host 'interrupted'; return their ids."""
    stale = [r for r in fetch_dicts(con, "SELECT id, status, host, pid FROM runs WHERE status = 'running'")
             if _abandoned(r)]
    for r in stale:
        con.execute(
            "UPDATE runs SET status = 'interrupted', error = ?, finished_at = current_timestamp WHERE id = ?",
            [ABANDONED.format(pid=r["pid"], host=r["host"]), r["id"]],
        )
    return [r["id"] for r in stale]


def show_abandoned(rows: list[dict]) -> list[dict]:
    """Rows of ``runs`` as they should be shown: a dead process's run reads 'interrupted' (for
    readers, which do not write; the next run started marks it so in the workspace)."""
    out = []
    for row in rows:
        if _abandoned(row):
            row = {**row, "status": "interrupted", "error": ABANDONED.format(pid=row["pid"], host=row["host"])}
        out.append(row)
    return out


def start_run(con, stage: str, config: dict) -> int:
    """Open a run of ``stage`` owned by this process (runs left open by dead processes are closed first)."""
    close_abandoned_runs(con)
    row = con.execute(
        "INSERT INTO runs (stage, config, status, host, pid) VALUES (?, ?, 'running', ?, ?) RETURNING id",
        [stage, json.dumps(config, sort_keys=True, default=str), socket.gethostname(), os.getpid()],
    ).fetchone()
    return int(row[0])


def finish_run(con, run_id: int, *, status: str, counts: dict | None = None, error: str = "") -> None:
    """Close run ``run_id``. Its call counters and cost are kept as ``llm_calls.add_to_run`` added
    them; a run that made no call without a price has a known cost (0 when it made none)."""
    con.execute(
        "UPDATE runs SET status = ?, counts = ?, error = ?, finished_at = current_timestamp,"
        " cost_usd = CASE WHEN cost_usd IS NULL AND calls_cost_unknown = 0 THEN 0.0 ELSE cost_usd END"
        " WHERE id = ?",
        [status, json.dumps(counts or {}, sort_keys=True), error, run_id],
    )


def study_spent(con, study_id: str, but_owner: str | None = None, legacy: str | None = None) -> float:
    """The spend ledger of one study (``lsqa.study.pipeline.study_id``, which no transport setting
    changes), in USD: what its runs' stored calls cost, plus, at their most, its calls sent and not
    stored (``llm_calls.in_flight_spend``: killed runs' and other live runs', not ``but_owner``'s)
    and the calls of its provider batches not yet collected. ``legacy``: the id its runs had before
    the ledger left transport settings out (their spending counts too)."""
    row = con.execute("SELECT coalesce(sum(cost_usd), 0) FROM runs WHERE json_extract_string(config, '$.study_id') "
                      "IN (?, ?)", [study_id, legacy or study_id]).fetchone()
    batches = con.execute("SELECT coalesce(sum(bound_usd), 0) FROM llm_batches WHERE ledger = ? "
                          "AND status IN ('uploading', 'submitted')", [study_id]).fetchone()
    return float(row[0]) + llm_calls.in_flight_spend(con, study_id, but_owner)[0] + float(batches[0])


def list_runs(con, limit: int = 50) -> list[dict]:
    return show_abandoned(fetch_dicts(con, f"SELECT * FROM runs ORDER BY id DESC LIMIT {int(limit)}"))


TABLES = ("documents", "passages", "entities", "mentions", "questions", "systems", "answers", "llm_calls",
          "judgments", "reference_checks", "human_reviews", "reference_flags", "reference_corrections", "runs")


def table_counts(con) -> dict[str, int]:
    return {t: int(con.execute(f"SELECT count(*) FROM {t}").fetchone()[0]) for t in TABLES}


def run_counts(con) -> list[dict]:
    return fetch_dicts(
        con,
        "SELECT stage, status, count(*) AS n, sum(calls_made) AS calls_made, sum(calls_cached) AS calls_cached,"
        " sum(calls_failed) AS calls_failed, sum(cost_usd) AS cost_usd, max(started_at) AS last_started"
        " FROM runs GROUP BY stage, status ORDER BY stage, status",
    )


def overview_counts(con) -> dict:
    """What the workspace holds, in the units a user thinks in (books, not documents rows)."""
    one = lambda sql: con.execute(sql).fetchone()[0]  # noqa: E731
    return {
        "books": one("SELECT count(*) FROM documents WHERE full_text IS NOT NULL"),
        "documents": one("SELECT count(*) FROM documents"),
        "questions": one("SELECT count(*) FROM questions"),
        "questions answered": one("SELECT count(DISTINCT question_id) FROM answers"),
        "systems": one("SELECT count(*) FROM systems"),
        "answers": one("SELECT count(*) FROM answers"),
        "judges": one("SELECT count(DISTINCT judge) FROM judgments"),
        "verdicts": one("SELECT count(*) FROM judgments"),
        "verdicts not decided": one("SELECT count(*) FROM judgments WHERE status <> 'ok'"),
        "human reviews": one("SELECT count(*) FROM human_labels"),
        "annotators": one("SELECT count(DISTINCT annotator) FROM human_reviews"),
        "flagged references": one("SELECT count(*) FROM (SELECT DISTINCT question_id, reference FROM current_flags)"),
    }


def recent_runs(con, limit: int = 10) -> list[dict]:
    rows = show_abandoned(fetch_dicts(con, f"""
        SELECT id, stage, status, calls_made, calls_cached, calls_failed, cost_usd, started_at, finished_at,
               error, host, pid
        FROM runs ORDER BY id DESC LIMIT {int(limit)}"""))
    return [{k: v for k, v in row.items() if k not in ("host", "pid")} for row in rows]
