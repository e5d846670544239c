"""Reads and writes of the annotation workflow: workspace settings, my recent reviews, reviews by others
since I opened an item.

Settings are append-only (``workspace_settings``, migration 0008): the latest row per key holds.
"""

from __future__ import annotations

from lsqa.store import verdict_ids
from lsqa.store.bulk import fetch_dicts


def setting(con, key: str) -> dict | None:
    """The latest value of a setting with who set it and when, or None when it was never set."""
    rows = fetch_dicts(con, "SELECT key, value, author, created_at FROM workspace_settings WHERE key = ?"
                            " ORDER BY id DESC LIMIT 1", [key])
    return rows[0] if rows else None


def add_setting(con, key: str, value: str, author: str = "") -> int:
    row = con.execute("INSERT INTO workspace_settings (key, value, author) VALUES (?, ?, ?) RETURNING id",
                      [key, value, author.strip()]).fetchone()
    return int(row[0])


def recent_reviews(con, annotator: str, limit: int = 20) -> list[dict]:
    """The annotator's current labels, latest first, with the question, to reopen and change."""
    return fetch_dicts(con, f"""
        SELECT h.judgment_id, h.review_id, h.action, h.label, h.note, h.created_at,
               j.judge, j.kind, j.question_id, j.system_a, j.system_b, j.shown_order, q.text AS question
        FROM human_labels h JOIN judgments j ON j.id = h.judgment_id
        LEFT JOIN questions q ON q.id = j.question_id
        WHERE h.annotator = ?
        ORDER BY h.review_id DESC LIMIT {int(limit)}""", [annotator])


def last_review_id(con) -> int:
    """The newest review row id: an item opened now counts reviews after it as 'after I opened it'."""
    return int(con.execute("SELECT coalesce(max(id), 0) FROM human_reviews").fetchone()[0])


def reviews_by_others_since(con, judgment_id: str, annotator: str, after_id: int) -> list[dict]:
    """Review rows on a verdict by other annotators newer than ``after_id``."""
    return fetch_dicts(con, """
        SELECT id, annotator, action, label, created_at FROM human_reviews
        WHERE judgment_id = ? AND annotator <> ? AND id > ? ORDER BY id""", [judgment_id, annotator, int(after_id)])


def question_of(con, judgment_id: str) -> dict | None:
    verdict, params = verdict_ids.one_verdict(judgment_id)
    rows = fetch_dicts(con, f"""
        SELECT j.id, j.judge, j.kind, j.question_id, j.system_a, j.system_b, j.shown_order, j.label,
               q.text AS question
        FROM {verdict} j LEFT JOIN questions q ON q.id = j.question_id""", params)
    return rows[0] if rows else None


def question_text(con, question_id: str) -> str:
    row = con.execute("SELECT text FROM questions WHERE id = ?", [question_id]).fetchone()
    return row[0] if row and row[0] else ""
