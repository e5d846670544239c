"""The Leaderboard's reads beyond the ranking itself: one judge's verdicts per book (for the per-book
consistency of the order) and the verdicts on the two leading systems' answers with their texts (for
the examples). The judge's own labels on decided verdicts (status ok), as the plain ranking counts them,
with the final human label beside (``final_human_labels``) where people gave one.
"""

from __future__ import annotations

from lsqa.store.bulk import fetch_dicts
from lsqa.vocabulary import BINARY, PAIRWISE


def books(con, judge: str) -> list[dict]:
    """The books the judge's decided verdicts are on: ``document_id``, ``title`` (in title order)."""
    return fetch_dicts(con, """
        SELECT DISTINCT q.document_id, coalesce(d.title, q.document_id) AS title
        FROM judgments j JOIN questions q ON q.id = j.question_id
        LEFT JOIN documents d ON d.id = q.document_id
        WHERE j.judge = ? AND j.status = 'ok'
        ORDER BY title, q.document_id""", [judge])


def pairwise_by_book(con, judge: str) -> list[dict]:
    """A side-by-side judge's decided verdicts counted per book, pair of systems (as stored) and
    label: ``document_id``, ``system_a``, ``system_b``, ``label``, ``n``."""
    return fetch_dicts(con, """
        SELECT q.document_id, j.system_a, j.system_b, j.label, count(*) AS n
        FROM judgments j JOIN questions q ON q.id = j.question_id
        WHERE j.judge = ? AND j.family = ? AND j.status = 'ok'
        GROUP BY ALL ORDER BY ALL""", [judge, PAIRWISE])


def binary_by_book(con, judge: str) -> list[dict]:
    """A yes/no judge's answers per book and system: ``document_id``, ``system``, ``n`` (answers
    judged), ``accepted`` (answers with a yes under either reference, as accuracy counts them, §5.2)."""
    return fetch_dicts(con, """
        SELECT document_id, system, count(*) AS n, count(*) FILTER (WHERE accepted) AS accepted
        FROM (SELECT q.document_id, j.question_id, j.system_a AS system, bool_or(j.label = 'yes') AS accepted
              FROM judgments j JOIN questions q ON q.id = j.question_id
              WHERE j.judge = ? AND j.family = ? AND j.status = 'ok'
              GROUP BY ALL)
        GROUP BY ALL ORDER BY ALL""", [judge, BINARY])


def pair_verdicts(con, judge: str, upper: str, lower: str) -> list[dict]:
    """The judge's verdicts on the two systems' answers to the same questions, with the question's
    text and book, both answers, the judge's label and the final human label (None when none).

    Side by side: each verdict comparing ``upper`` with ``lower`` (either order). Yes/no: one row
    per question both systems' answers were judged on, ``upper_label`` / ``lower_label`` (yes when a
    reference accepted it), the verdict ids of each (``id`` the upper's first) and whether people
    gave a final label different from the judge's on any of them (``overridden``)."""
    if _family(con, judge) == PAIRWISE:
        return fetch_dicts(con, """
            SELECT j.id, j.question_id, q.text AS question, coalesce(d.title, q.document_id) AS book,
                   j.system_a, j.system_b, j.shown_order, j.label, f.label AS human_label,
                   aa.text AS answer_a, ab.text AS answer_b
            FROM judgments j JOIN questions q ON q.id = j.question_id
            LEFT JOIN documents d ON d.id = q.document_id
            LEFT JOIN final_human_labels f ON f.judgment_id = j.id
            LEFT JOIN answers aa ON aa.question_id = j.question_id AND aa.system_name = j.system_a
            LEFT JOIN answers ab ON ab.question_id = j.question_id AND ab.system_name = j.system_b
            WHERE j.judge = $judge AND j.family = 'pairwise' AND j.status = 'ok'
              AND ((j.system_a = $upper AND j.system_b = $lower) OR (j.system_a = $lower AND j.system_b = $upper))
            ORDER BY j.question_id, j.shown_order, j.id""", {"judge": judge, "upper": upper, "lower": lower})
    return fetch_dicts(con, """
        WITH per AS (
            SELECT j.question_id, j.system_a AS system, bool_or(j.label = 'yes') AS accepted,
                   bool_or(f.label IS NOT NULL AND f.label <> j.label) AS overridden,
                   bool_or(coalesce(f.label, j.label) = 'yes') AS accepted_by_people,
                   min(j.id) AS id
            FROM judgments j LEFT JOIN final_human_labels f ON f.judgment_id = j.id
            WHERE j.judge = $judge AND j.family = 'binary' AND j.status = 'ok' AND j.system_a IN ($upper, $lower)
            GROUP BY ALL)
        SELECT u.id, u.question_id, q.text AS question, coalesce(d.title, q.document_id) AS book,
               u.accepted AS upper_accepted, l.accepted AS lower_accepted,
               u.overridden OR l.overridden AS overridden,
               u.accepted_by_people AS upper_by_people, l.accepted_by_people AS lower_by_people,
               au.text AS answer_upper, al.text AS answer_lower
        FROM per u JOIN per l ON l.question_id = u.question_id AND u.system = $upper AND l.system = $lower
        JOIN questions q ON q.id = u.question_id LEFT JOIN documents d ON d.id = q.document_id
        LEFT JOIN answers au ON au.question_id = u.question_id AND au.system_name = $upper
        LEFT JOIN answers al ON al.question_id = u.question_id AND al.system_name = $lower
        ORDER BY u.question_id""", {"judge": judge, "upper": upper, "lower": lower})


def _family(con, judge: str) -> str | None:
    row = con.execute("SELECT any_value(family) FROM judgments WHERE judge = ?", [judge]).fetchone()
    return row[0] if row else None
