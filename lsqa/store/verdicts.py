"""Verdicts as the statistics see them: judge labels, human reviews, reference flags.

Reviews and flags are append-only; the current state is derived here. A review withdrawn by an
``undo`` row no longer counts; an annotator's latest remaining review of a verdict is their
label (``confirm`` = the judge's label). A reference is flagged while some annotator's latest
flag on it is not a ``retract``.
"""

from __future__ import annotations

from lsqa.store.bulk import fetch_dicts

_LIVE_REVIEWS = """
    SELECT r.* FROM human_reviews r
    WHERE r.action <> 'undo'
      AND r.id NOT IN (SELECT undoes FROM human_reviews WHERE action = 'undo' AND undoes IS NOT NULL)
"""

# Each annotator's current label per verdict.
_HUMAN_LABELS = f"""
    SELECT l.judgment_id, l.annotator, l.id AS review_id, l.action, l.note, l.created_at,
           CASE WHEN l.action = 'confirm' THEN j.label ELSE l.label END AS label
    FROM (SELECT *, row_number() OVER (PARTITION BY judgment_id, annotator ORDER BY id DESC) AS rn
          FROM ({_LIVE_REVIEWS})) l
    JOIN judgments j ON j.id = l.judgment_id
    WHERE l.rn = 1
"""

_CURRENT_FLAGS = """
    SELECT * FROM (
        SELECT *, row_number() OVER (PARTITION BY question_id, reference, annotator ORDER BY id DESC) AS rn
        FROM reference_flags)
    WHERE rn = 1 AND reason <> 'retract'
"""


def human_labels(con, judge: str | None = None) -> list[dict]:
    """Each annotator's current label for each reviewed verdict (of ``judge``, if given)."""
    sql = f"SELECT h.*, j.judge, j.kind, j.question_id, j.system_a, j.system_b, j.shown_order, j.reference" \
          f" FROM ({_HUMAN_LABELS}) h" \
          " JOIN judgments j ON j.id = h.judgment_id"
    params: list = []
    if judge:
        sql += " WHERE j.judge = ?"
        params.append(judge)
    return fetch_dicts(con, sql + " ORDER BY h.judgment_id, h.annotator", params)


def current_flags(con) -> list[dict]:
    return fetch_dicts(con, f"SELECT id, annotator, question_id, reference, reason, note, created_at"
                            f" FROM ({_CURRENT_FLAGS}) ORDER BY question_id, reference, id")


def flagged_question_ids(con) -> set[str]:
    return {r[0] for r in con.execute(f"SELECT DISTINCT question_id FROM ({_CURRENT_FLAGS})").fetchall()}


def effective_verdicts(con, *, judge: str | None = None, kinds: tuple[str, ...] | None = None,
                       use_overrides: bool = False, exclude_flagged: bool = False) -> list[dict]:
    """Decided verdicts (status ok) with the label the statistics should use.

    With ``use_overrides`` the latest human label (any annotator) replaces the judge's, and a
    verdict the judge failed to give (parse error, call error) counts once a human labelled it; with
    ``exclude_flagged`` questions with a flagged reference are left out.
    """
    latest_human = f"""
        SELECT judgment_id, label AS human_label FROM (
            SELECT *, row_number() OVER (PARTITION BY judgment_id ORDER BY review_id DESC) AS rn
            FROM ({_HUMAN_LABELS})) WHERE rn = 1"""
    sql = f"""
        SELECT j.id, j.judge, j.kind, j.question_id, j.system_a, j.system_b, j.shown_order, j.reference,
               j.label AS judge_label, h.human_label, j.score, q.document_id,
               {"coalesce(h.human_label, j.label)" if use_overrides else "j.label"} AS label
        FROM judgments j
        LEFT JOIN ({latest_human}) h ON h.judgment_id = j.id
        LEFT JOIN questions q ON q.id = j.question_id
        WHERE {"(j.status = 'ok' OR h.human_label IS NOT NULL)" if use_overrides else "j.status = 'ok'"}"""
    params: list = []
    if judge:
        sql += " AND j.judge = ?"
        params.append(judge)
    if kinds:
        sql += " AND j.kind IN (SELECT unnest(?))"
        params.append(list(kinds))
    if exclude_flagged:
        sql += f" AND j.question_id NOT IN (SELECT question_id FROM ({_CURRENT_FLAGS}))"
    return fetch_dicts(con, sql + " ORDER BY j.question_id, j.system_a, j.system_b, j.shown_order", params)
