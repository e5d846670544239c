"""Pipeline runs: one row per stage run, opened when it starts and closed when it ends."""

from __future__ import annotations

import json

from lsqa.store.rows import fetch_dicts


def start_run(con, stage: str, config: dict) -> int:
    row = con.execute(
        "INSERT INTO runs (stage, config, status) VALUES (?, ?, 'running') RETURNING id",
        [stage, json.dumps(config, sort_keys=True, default=str)],
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


def list_runs(con, limit: int = 50) -> list[dict]:
    return fetch_dicts(con, f"SELECT * FROM runs ORDER BY id DESC LIMIT {int(limit)}")


TABLES = ("documents", "passages", "entities", "mentions", "questions", "systems", "answers", "llm_calls",
          "judgments", "human_reviews", "reference_flags", "runs")


def table_counts(con) -> dict[str, int]:
    return {t: int(con.execute(f"SELECT count(*) FROM {t}").fetchone()[0]) for t in TABLES}


def run_counts(con) -> list[dict]:
    return fetch_dicts(
        con,
        "SELECT stage, status, count(*) AS n, sum(calls_made) AS calls_made, sum(calls_cached) AS calls_cached,"
        " sum(calls_failed) AS calls_failed, sum(cost_usd) AS cost_usd, max(started_at) AS last_started"
        " FROM runs GROUP BY stage, status ORDER BY stage, status",
    )
