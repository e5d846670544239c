"""Reads for the long-span analysis (``lsqa.stats.longspan``): the questions of the books a study
answered, their entity's mention bounds, the books' story bounds, and the evidence a judge cited."""

from __future__ import annotations

import json

from lsqa.store.bulk import fetch_dicts


def questions_answered_by(con, systems: list[str]) -> list[dict]:
    """Questions any of ``systems`` answered, with their book, entity (name and mention bounds when
    the question came from the entity stage) and references."""
    return fetch_dicts(con, """
        SELECT q.id AS question_id, q.document_id, q.text AS question, q.reference_1, q.reference_2, q.origin,
               nullif(q.entity_id, '') AS entity_id, e.name AS entity,
               m.first_start AS mentions_first, m.last_end AS mentions_last, m.n AS n_mentions
        FROM questions q
        LEFT JOIN entities e ON e.id = q.entity_id
        LEFT JOIN (SELECT entity_id, min(char_start) AS first_start, max(char_end) AS last_end, count(*) AS n
                   FROM mentions GROUP BY entity_id) m ON m.entity_id = q.entity_id
        WHERE q.id IN (SELECT question_id FROM answers WHERE system_name IN (SELECT unnest(?)))
        ORDER BY q.document_id, q.origin, q.source_index, q.id
    """, [list(systems)])


def story_bounds(con, document_ids: list[str]) -> dict[str, dict]:
    """Per book: title, and where the story lies in its stored text (Gutenberg header and footer cut)."""
    rows = fetch_dicts(con, """
        SELECT id, title, coalesce(clean_start, 0) AS story_start,
               coalesce(clean_end, length(full_text), 0) AS story_end, full_text IS NOT NULL AS has_text
        FROM documents WHERE id IN (SELECT unnest(?))
    """, [list(document_ids)])
    return {r["id"]: r for r in rows}


def book_text(con, document_id: str) -> str:
    row = con.execute("SELECT coalesce(full_text, '') FROM documents WHERE id = ?", [document_id]).fetchone()
    return row[0] if row else ""


def cited_evidence(con, judge: str, systems: list[str]) -> list[dict]:
    """The quotes ``judge`` gave as evidence on answers of ``systems`` (JSON lists, as stored)."""
    return fetch_dicts(con, """
        SELECT j.question_id, j.system_a AS system, j.evidence, q.document_id
        FROM judgments j JOIN questions q ON q.id = j.question_id
        WHERE j.judge = ? AND j.system_a IN (SELECT unnest(?)) AND j.evidence NOT IN ('', '[]')
    """, [judge, list(systems)])


def judges_with_evidence(con) -> list[str]:
    return [r[0] for r in con.execute(
        "SELECT DISTINCT judge FROM judgments WHERE evidence NOT IN ('', '[]') ORDER BY judge").fetchall()]


def latest_study_config(con, judge: str) -> dict:
    """The config of the latest run that names ``judge`` (a study config as stored, never secrets),
    or {} when no run names it (verdicts imported from elsewhere)."""
    row = con.execute("SELECT config FROM runs WHERE contains(config, ?) ORDER BY id DESC LIMIT 1",
                      [json.dumps(judge)]).fetchone()
    try:
        return json.loads(row[0]) if row else {}
    except json.JSONDecodeError:
        return {}


def answered(con, systems: list[str]) -> list[tuple[str, str]]:
    """(question id, system) of every answer the systems gave."""
    return con.execute("SELECT question_id, system_name FROM answers WHERE system_name IN (SELECT unnest(?))",
                       [list(systems)]).fetchall()
