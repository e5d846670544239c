"""Documents, passages, entities with their mentions, and questions."""

from __future__ import annotations

import duckdb

from lsqa.book_text import Passage
from lsqa.store.bulk import fetch_dicts, insert_rows


def document_ids(con: duckdb.DuckDBPyConnection) -> set[str]:
    return {r[0] for r in con.execute("SELECT id FROM documents").fetchall()}


def document_by_sha1(con, content_sha1: str) -> dict | None:
    rows = fetch_dicts(con, "SELECT id, title FROM documents WHERE content_sha1 = ?", [content_sha1])
    return rows[0] if rows else None


def documents_by_sha1(con, content_sha1s: list[str]) -> dict[str, str]:
    """content_sha1 → id of the stored documents among ``content_sha1s``."""
    rows = con.execute("SELECT content_sha1, id FROM documents WHERE content_sha1 IN (SELECT unnest(?::VARCHAR[]))",
                       [list(content_sha1s)]).fetchall()
    return dict(rows)


def insert_documents(con, rows: list[dict]) -> int:
    return insert_rows(con, "documents", rows)


def set_document_text(con, document_id: str, **fields) -> None:
    """Fill in text columns of a document that was first known by its summary only."""
    cols = ", ".join(f"{k} = ?" for k in fields)
    con.execute(f"UPDATE documents SET {cols} WHERE id = ?", [*fields.values(), document_id])


def list_documents(con) -> list[dict]:
    return fetch_dicts(
        con,
        "SELECT d.id, d.title, d.author, d.kind, d.set_name, d.source, d.word_count, d.n_tokens,"
        " d.full_text IS NOT NULL AS has_text, length(d.summary) > 0 AS has_summary,"
        " (SELECT count(*) FROM questions q WHERE q.document_id = d.id) AS n_questions,"
        " (SELECT count(*) FROM passages p WHERE p.document_id = d.id) AS n_passages"
        " FROM documents d ORDER BY d.title",
    )


def get_document(con, document_id: str) -> dict | None:
    rows = fetch_dicts(con, "SELECT * FROM documents WHERE id = ?", [document_id])
    return rows[0] if rows else None


def resolve_documents(con, keys: list[str]) -> list[str]:
    """Document ids for ids or titles (case-insensitive); unknown keys raise KeyError naming them."""
    rows = con.execute("SELECT id, lower(title) FROM documents").fetchall()
    by_id = {r[0] for r in rows}
    by_title: dict[str, list[str]] = {}
    for doc_id, title in rows:
        by_title.setdefault(title, []).append(doc_id)
    out, unknown = [], []
    for key in keys:
        if key in by_id:
            out.append(key)
        elif key.lower() in by_title:
            out.extend(by_title[key.lower()])
        else:
            unknown.append(key)
    if unknown:
        raise KeyError(", ".join(unknown))
    return list(dict.fromkeys(out))


def insert_passages(con, document_id: str, passages: list[Passage]) -> int:
    return insert_rows(
        con,
        "passages",
        (
            {"document_id": document_id, "ordinal": p.ordinal, "char_start": p.char_start,
             "char_end": p.char_end, "n_tokens": p.n_tokens, "text": p.text}
            for p in passages
        ),
    )


def get_passages(con, document_id: str) -> list[Passage]:
    rows = con.execute(
        "SELECT ordinal, char_start, char_end, n_tokens, text FROM passages WHERE document_id = ? ORDER BY ordinal",
        [document_id],
    ).fetchall()
    return [Passage(*r) for r in rows]


def insert_entities(con, document_id: str, method: str, entities) -> int:
    """Store ranked entities and their mentions (``entities``: objects with rank, name, mentions)."""
    ent_rows, mention_rows = [], []
    for e in entities:
        entity_id = f"{document_id}:{method}:{e.rank}"
        ent_rows.append({"id": entity_id, "document_id": document_id, "method": method, "rank": e.rank,
                         "name": e.name, "n_mentions": e.n_mentions})
        mention_rows.extend({"entity_id": entity_id, "char_start": m.char_start, "char_end": m.char_end,
                             "text": m.text} for m in e.mentions)
    n = insert_rows(con, "entities", ent_rows)
    insert_rows(con, "mentions", mention_rows)
    return n


def list_entities(con, document_id: str, method: str | None = None, limit: int | None = None) -> list[dict]:
    sql = "SELECT id, document_id, method, rank, name, n_mentions FROM entities WHERE document_id = ?"
    params: list = [document_id]
    if method:
        sql += " AND method = ?"
        params.append(method)
    sql += " ORDER BY method, rank"
    if limit:
        sql += f" LIMIT {int(limit)}"
    return fetch_dicts(con, sql, params)


def entity_mentions(con, entity_id: str) -> list[tuple[int, int, str]]:
    return con.execute(
        "SELECT char_start, char_end, text FROM mentions WHERE entity_id = ? ORDER BY char_start", [entity_id]
    ).fetchall()


def insert_questions(con, rows: list[dict]) -> int:
    return insert_rows(con, "questions", rows)


def question_ids(con, ids: list[str] | None = None) -> set[str]:
    if ids is None:
        return {r[0] for r in con.execute("SELECT id FROM questions").fetchall()}
    found = con.execute("SELECT id FROM questions WHERE id IN (SELECT unnest(?))", [list(ids)]).fetchall()
    return {r[0] for r in found}


def list_questions(con, document_ids: list[str] | None = None, origin: str | None = None) -> list[dict]:
    sql = "SELECT * FROM questions WHERE 1=1"
    params: list = []
    if document_ids is not None:
        sql += " AND document_id IN (SELECT unnest(?))"
        params.append(list(document_ids))
    if origin:
        sql += " AND origin = ?"
        params.append(origin)
    sql += " ORDER BY document_id, origin, source_index, id"
    return fetch_dicts(con, sql, params)
