"""Verdicts of LLM reference checks (judge kind ``reference-check``, migration 0018): about a NarrativeQA
reference, not a system's answer, so kept apart from ``judgments``."""

from __future__ import annotations

import json

from lsqa.store.bulk import fetch_dicts, insert_rows

COLUMNS = ("id", "judge", "kind", "question_id", "reference", "label", "answerable", "evidence", "status", "raw",
           "llm_call_key", "prompt_id", "prompt_version", "extra")


def insert_checks(con, rows: list[dict]) -> int:
    """Store verdicts made from task rows (``lsqa.judging.tasks.JudgeTask.row``): the answerable label
    comes from the row's ``extra``; a stored row of the same id is replaced (a re-run writes only the
    checks not decided yet)."""
    out = []
    for r in rows:
        extra = json.loads(r.get("extra") or "{}")
        out.append({"id": r["id"], "judge": r["judge"], "kind": r["kind"], "question_id": r["question_id"],
                    "reference": r["reference"], "label": r.get("label"), "answerable": extra.get("answerable"),
                    "evidence": r.get("evidence") or "[]", "status": r["status"], "raw": r.get("raw") or "",
                    "llm_call_key": r.get("llm_call_key") or "", "prompt_id": r.get("prompt_id") or "",
                    "prompt_version": r.get("prompt_version") or "", "extra": json.dumps(extra, sort_keys=True)})
    return insert_rows(con, "reference_checks", out, on_conflict="replace", key=("id",))


def decided_ids(con, ids: list[str]) -> set[str]:
    """The ids among ``ids`` with an ok verdict (the rest are still to do)."""
    rows = con.execute("SELECT id FROM reference_checks WHERE status = 'ok' AND id IN (SELECT unnest(?))",
                       [list(ids)]).fetchall()
    return {r[0] for r in rows}


def current_checks(con) -> list[dict]:
    """Every ok verdict: judge, question id, reference, label, answerable, evidence (JSON)."""
    return fetch_dicts(con, """
        SELECT judge, question_id, reference, label, answerable, evidence FROM reference_checks
        WHERE status = 'ok' AND label IN ('yes', 'no') ORDER BY question_id, reference, judge""")


def all_checks(con) -> list[dict]:
    """Every stored row (ok or not), for the export."""
    return fetch_dicts(con, "SELECT * FROM reference_checks ORDER BY judge, question_id, reference")


def judges_with_checks(con) -> set[str]:
    return {r[0] for r in con.execute("SELECT DISTINCT judge FROM reference_checks").fetchall()}
