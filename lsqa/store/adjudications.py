"""Adjudications and comments on verdicts (migration 0016): append-only rows, and the verdicts whose
people disagree.

People's current labels are the ``human_labels`` view (each person's latest live review; imported
reviews alike); the final label of a verdict is ``final_human_labels`` (the rule is in the migration).
"""

from __future__ import annotations

from lsqa.store.bulk import fetch_dicts


def add_adjudication(con, *, judgment_id: str, label: str, note: str, adjudicator: str, role: str = "") -> int:
    row = con.execute("INSERT INTO adjudications (judgment_id, label, note, adjudicator, role) VALUES (?, ?, ?, ?, ?)"
                      " RETURNING id", [judgment_id, label, note, adjudicator, role]).fetchone()
    return int(row[0])


def add_comment(con, *, judgment_id: str, author: str, text: str, role: str = "") -> int:
    row = con.execute("INSERT INTO item_comments (judgment_id, author, role, text) VALUES (?, ?, ?, ?) RETURNING id",
                      [judgment_id, author, role, text]).fetchone()
    return int(row[0])


def comments_of(con, judgment_id: str) -> list[dict]:
    """A verdict's comments, oldest first."""
    return fetch_dicts(con, "SELECT id, judgment_id, author, role, text, created_at FROM item_comments"
                            " WHERE judgment_id = ? ORDER BY id", [judgment_id])


def disagreements(con) -> list[dict]:
    """Every person's current label on each verdict where people's current labels differ, with the
    verdict's latest adjudication (label, note, adjudicator, time; None when there is none) and how
    many adjudications it has had (``n_adjudications``), and what a person reads to settle it: the
    question and its references, the book's title, the order the judge was shown the answers in and the answers'
    texts (``answer_a`` of ``system_a``, ``answer_b`` of ``system_b``; None when missing). One row
    per (verdict, person), ordered by verdict then label time."""
    return fetch_dicts(con, """
        WITH split AS (
            SELECT judgment_id FROM human_labels WHERE label IS NOT NULL
            GROUP BY judgment_id HAVING count(DISTINCT label) > 1
        ), adjudicated AS (
            SELECT * FROM (SELECT *, row_number() OVER (PARTITION BY judgment_id ORDER BY id DESC) AS rn,
                                  count(*) OVER (PARTITION BY judgment_id) AS n_adjudications
                           FROM adjudications) WHERE rn = 1
        )
        SELECT h.judgment_id, h.annotator, h.label, h.note, h.created_at, h.action,
               j.judge, j.kind, j.question_id, j.system_a, j.system_b, j.reference, j.label AS judge_label,
               j.shown_order, q.text AS question, q.reference_1, q.reference_2, d.title,
               aa.text AS answer_a, ab.text AS answer_b,
               a.label AS adjudicated, a.note AS adjudication_note, a.adjudicator, a.created_at AS adjudicated_at,
               coalesce(a.n_adjudications, 0) AS n_adjudications
        FROM human_labels h
        JOIN split s ON s.judgment_id = h.judgment_id
        JOIN judgments j ON j.id = h.judgment_id
        LEFT JOIN questions q ON q.id = j.question_id
        LEFT JOIN documents d ON d.id = q.document_id
        LEFT JOIN answers aa ON aa.question_id = j.question_id AND aa.system_name = j.system_a
        LEFT JOIN answers ab ON ab.question_id = j.question_id AND ab.system_name = j.system_b AND j.system_b <> ''
        LEFT JOIN adjudicated a ON a.judgment_id = h.judgment_id
        WHERE h.label IS NOT NULL
        ORDER BY h.judgment_id, h.created_at, h.review_id""")


def adjudications_of(con, judgment_id: str) -> list[dict]:
    """Every adjudication of a verdict, oldest first (the last one stands): ``id, label, note,
    adjudicator, role, created_at``."""
    return fetch_dicts(con, "SELECT id, label, note, adjudicator, role, created_at FROM adjudications"
                            " WHERE judgment_id = ? ORDER BY id", [judgment_id])


def labelled_by_people(con, judgment_id: str) -> int:
    """How many people hold a current label on the verdict."""
    return int(con.execute("SELECT count(*) FROM human_labels WHERE judgment_id = ? AND label IS NOT NULL",
                           [judgment_id]).fetchone()[0])
