"""Documents, passages, entities with their mentions, and questions."""

from __future__ import annotations

import duckdb

from lsqa.store.bulk import fetch_dicts, insert_rows
from lsqa.text.book import Passage


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


class AmbiguousTitle(KeyError):
    """A title (not an id) that several documents share: naming it must not pick one unseen."""


def resolve_documents(con, keys: list[str]) -> list[str]:
    """Document ids for ids or titles (case-insensitive); unknown keys raise KeyError naming them,
    a title shared by several documents AmbiguousTitle naming the title and every id."""
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
            if len(by_title[key.lower()]) > 1:
                raise AmbiguousTitle(f"title {key!r} is shared by documents {', '.join(sorted(by_title[key.lower()]))}; "
                                     "use the id of the one you mean")
            out.extend(by_title[key.lower()])
        else:
            unknown.append(key)
    if unknown:
        raise KeyError(", ".join(unknown))
    return list(dict.fromkeys(out))


def insert_passages(con, passages: dict[str, list[Passage]]) -> int:
    """Store the passages of each document (``{document_id: its passages}``), all in one statement."""
    return insert_rows(
        con,
        "passages",
        (
            {"document_id": document_id, "ordinal": p.ordinal, "char_start": p.char_start,
             "char_end": p.char_end, "n_tokens": p.n_tokens, "text": p.text}
            for document_id, ps in passages.items() for p in ps
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


def question_texts(con, ids: list[str]) -> dict[str, tuple[str, str, str]]:
    """``{id: (text, reference_1, reference_2)}`` of the stored questions among ``ids``."""
    rows = con.execute("SELECT id, text, coalesce(reference_1, ''), coalesce(reference_2, '') FROM questions "
                       "WHERE id IN (SELECT unnest(?))", [list(ids)]).fetchall()
    return {r[0]: (r[1], r[2], r[3]) for r in rows}


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


def passages_covering(con, asked: list[tuple[str, list[tuple[int, int]]]]) -> list[list[dict]]:
    """For each ``(document_id, spans)`` asked, the passages (in book order) of that book that hold any
    of ``spans`` (char offsets into its full text); one statement for all asked, the lists in the
    order asked."""
    flat = [(n, document_id, int(s), int(e)) for n, (document_id, spans) in enumerate(asked) for s, e in spans]
    out: list[list[dict]] = [[] for _ in asked]
    if not flat:
        return out
    rows = fetch_dicts(con, """
        SELECT DISTINCT x.n, p.ordinal, p.char_start, p.char_end FROM passages p,
             (SELECT unnest(?) AS n, unnest(?) AS document_id, unnest(?) AS s, unnest(?) AS e) x
        WHERE p.document_id = x.document_id AND p.char_start < x.e AND p.char_end > x.s
        ORDER BY x.n, p.ordinal""", [list(column) for column in zip(*flat, strict=True)])
    for r in rows:
        out[r.pop("n")].append(r)
    return out


def books(con) -> list[dict]:
    return fetch_dicts(con, """
        SELECT d.id, d.title, d.author, d.kind, d.word_count, d.n_tokens,
               (SELECT count(*) FROM passages p WHERE p.document_id = d.id) AS passages,
               (SELECT count(*) FROM entities e WHERE e.document_id = d.id) AS entities,
               (SELECT count(*) FROM questions q WHERE q.document_id = d.id) AS questions,
               (SELECT count(DISTINCT a.question_id) FROM answers a JOIN questions q ON q.id = a.question_id
                WHERE q.document_id = d.id) AS answered
        FROM documents d WHERE d.full_text IS NOT NULL ORDER BY d.title""")


def passage_counts(con) -> dict[str, int]:
    """Passages per book (only books that have any)."""
    return dict(con.execute("SELECT document_id, count(*) FROM passages GROUP BY document_id").fetchall())


def passage_page(con, document_id: str, offset: int = 0, limit: int = 20, contains: str = "") -> tuple[list[dict], int]:
    sql = "SELECT ordinal, char_start, char_end, n_tokens, text, count(*) OVER () AS n_total FROM passages" \
          " WHERE document_id = ?"
    params: list = [document_id]
    if contains:
        sql += " AND text ILIKE ?"
        params.append("%" + contains.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%")
        sql = sql.replace("text ILIKE ?", "text ILIKE ? ESCAPE '\\'")
    sql += f" ORDER BY ordinal LIMIT {int(limit)} OFFSET {int(offset)}"
    rows = fetch_dicts(con, sql, params)
    total = int(rows[0]["n_total"]) if rows else 0
    for r in rows:
        r.pop("n_total")
    return rows, total


def text_slice(con, document_id: str, start: int, end: int) -> str:
    row = con.execute("SELECT substr(full_text, ? + 1, ?) FROM documents WHERE id = ?",
                      [int(start), int(max(0, end - start)), document_id]).fetchone()
    return row[0] if row and row[0] is not None else ""


def questions_with_answers(con, document_id: str) -> list[dict]:
    """Questions of a book (those with answers first) with every system's answer."""
    return fetch_dicts(con, """
        SELECT q.id AS question_id, q.origin, q.text AS question, q.reference_1, q.reference_2,
               a.system_name, a.text AS answer, a.status
        FROM questions q LEFT JOIN answers a ON a.question_id = q.id
        WHERE q.document_id = ?
        ORDER BY (SELECT count(*) FROM answers x WHERE x.question_id = q.id) = 0, q.source_index, q.id,
                 a.system_name""", [document_id])


def passages_of_documents(con, document_ids: list[str]) -> list[dict]:
    return fetch_dicts(con, "SELECT document_id, ordinal, text FROM passages"
                            " WHERE document_id IN (SELECT unnest(?)) ORDER BY document_id, ordinal",
                       [list(document_ids)])


def add_reference_corrections(con, rows: list[dict]) -> int:
    """Append corrected references (migration 0024: ``question_id``, ``reference``, ``text``, ``source``,
    ``proposed_by``), beside the questions' own; a row whose text is already the standing correction of
    its (question, reference) is left out. How many were added."""
    standing = {(r["question_id"], r["reference"]): r["text"] for r in reference_corrections(con)}
    new = [r for r in rows if standing.get((r["question_id"], r["reference"])) != r["text"]]
    return insert_rows(con, "reference_corrections", new, on_conflict="error") if new else 0


def reference_corrections(con) -> list[dict]:
    """The standing corrected reference of each (question, reference) that has one, with the original
    beside it (``original``) and where the correction came from."""
    return fetch_dicts(con, """
        SELECT c.question_id, c.reference, c.text, CASE c.reference WHEN '1' THEN q.reference_1 ELSE q.reference_2 END
               AS original, c.source, c.proposed_by, c.created_at
        FROM current_reference_corrections c LEFT JOIN questions q ON q.id = c.question_id
        ORDER BY c.question_id, c.reference""")
