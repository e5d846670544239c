"""``lsqa ingest-narrativeqa``'s input in SQL: NarrativeQA's question files as one input record (``RECORD``:
several files, the set's documents as a parameter), its documents and summary files read and checked by
DuckDB, the questions written with one INSERT ... SELECT.

The question files are read one of two ways into the same Arrow table (``QUESTION_COLUMNS`` and the
``file_no`` and ``line`` each came from, each (document, ``q_index``) once, from its first line):

- ``stage``, fast: the files read as lines (``lsqa.store.importers.rows``: CSV, quoted or not, or JSONL
  with ``q_index`` as a number or a text). It raises ``Declined`` for any file it does not read exactly
  — a row with a value missing, an unknown document, a ``q_index`` that is not plain digits, a file that
  gives ``q_index`` on some rows and not on others, a (document, ``q_index``) repeated with another text;
- ``restage``, any file: the table reader (``lsqa.store.importers.table``) reads each file, its values
  are checked in SQL (``lsqa.store.importers.values``: each distinct unusual ``q_index`` judged once
  by ``wording.whole_number``), and the first bad row, file by file, is worded here.

The skeleton (``skeleton.stage_apart``) tries the first, then the second, on a connection with no workspace
attached, while no workspace is locked (the books are read next, which takes longer); the record's check (a
question the workspace has with another text) and insert run in the ingest's write (``skeleton.run``). The
rules: a row of another set (``set`` given and not the set read) is passed over; a row's document must be one
of the set's; a ``q_index`` is a whole number (``" 3"``, ``"1e2"`` and ``true`` read as Python's ``float``
reads them), and a row without one takes the next of its document in its file (after the last given one, else
from 0); a (document, ``q_index``) given again with another text or other references is refused at that line,
naming the first. ``documents`` and ``summaries`` read the other two files (the table reader, checked in SQL).
"""

from __future__ import annotations

import json
from pathlib import Path

from lsqa.errors import InputError
from lsqa.store import bulk, db
from lsqa.store.importers import lines as staging
from lsqa.store.importers import rows as staged_rows
from lsqa.store.importers import values, wording
from lsqa.store.importers.rows import ROWS, ascii_text, sql_text, strip
from lsqa.store.importers.skeleton import Check, Declined, Input, first
from lsqa.store.importers.table import OBJECTS, stage_objects
from lsqa.store.importers.wording import MAX_CELL_CHARS, MAX_TABLE_BYTES, MAX_WHOLE_NUMBER
from lsqa.text.names import MAX_NAME_CHARS, name_problem

STAGED, DOCUMENTS, FILE_ROWS = "lsqa_import_questions", "lsqa_import_documents", "lsqa_import_file_questions"
# The staged questions in the ingest's write: each (document, ``q_index``) once (``QUESTION_COLUMNS``, file_no, line).
KEPT = "lsqa_import_questions_kept"
JUDGED = "lsqa_import_judged"

# The columns of NarrativeQA's documents.csv every row must fill.
DOCUMENT_COLUMNS = ("document_id", "set", "kind", "wiki_title")
# What ``documents`` returns of a document of the set (beside its first ``line``).
DOCUMENT_FIELDS = ("kind", "wiki_title", "story_start", "story_end", "story_url")

# The columns of a NarrativeQA question file the importer reads (the others, such as the tokenised
# texts of qaps.csv or the kind and title of the JSONL copy, are not kept).
REQUIRED = ("document_id", "question", "answer1", "answer2")
COLUMNS = REQUIRED + ("set", "q_index")

# What an ingest writes of a question, in the order of the Arrow table ``stage`` returns.
QUESTION_COLUMNS = ("id", "document_id", "origin", "text", "reference_1", "reference_2", "set_name", "source_index")


def _documents_of_set(con, document_ids: list[str]) -> None:
    con.execute(f"CREATE OR REPLACE TEMP TABLE {DOCUMENTS} AS SELECT unnest(?::VARCHAR[]) AS id", [document_ids])


def _create_staged(con) -> None:
    con.execute(f"""CREATE OR REPLACE TEMP TABLE {STAGED} (file_no INTEGER, line BIGINT, document_id VARCHAR,
                    q_index BIGINT, text VARCHAR, reference_1 VARCHAR, reference_2 VARCHAR)""")


def _questions(con, set_name: str):
    """``STAGED`` as ``stage`` returns it: each (document, ``q_index``) once, from its first line."""
    return con.sql(f"""
        SELECT 'nqa:' || document_id || ':' || q_index AS id, document_id, 'narrativeqa' AS origin, text,
               reference_1, reference_2, {sql_text(set_name)} AS set_name, q_index::INTEGER AS source_index,
               file_no, line
        FROM {STAGED}
        QUALIFY row_number() OVER (PARTITION BY document_id, q_index ORDER BY file_no, line) = 1
        ORDER BY file_no, line""").to_arrow_table()


def stage(con, files: list[Path], *, set_name: str, document_ids: list[str]):
    """The staged questions (see ``RECORD``), fast (the files read as lines, ``lsqa.store.importers.rows``),
    or Declined (the tables it made dropped). ``document_ids``: the set's documents (``documents``)."""
    for path in files:
        if path.suffix.lower() not in (".csv", ".jsonl") or not path.is_file() \
                or not 0 < path.stat().st_size <= MAX_TABLE_BYTES:
            raise Declined  # the table reader says what is wrong with it
    _documents_of_set(con, document_ids)
    _create_staged(con)
    try:
        for file_no, path in enumerate(files):
            staged_rows.stage_rows(con, path, COLUMNS, MAX_CELL_CHARS, extra=False, numbers=("q_index",))
            _take_file(con, file_no, set_name, MAX_WHOLE_NUMBER)
        # One (document, q_index) twice with another text: ``restage`` names both lines.
        if con.execute(f"""SELECT count(*) FROM (SELECT 1 FROM {STAGED} GROUP BY document_id, q_index
                           HAVING count(DISTINCT (text, reference_1, reference_2)) > 1)""").fetchall()[0][0]:
            raise Declined
    except Declined:
        staging.drop(con, ROWS, FILE_ROWS)
        raise
    return _questions(con, set_name)


def _take_file(con, file_no: int, set_name: str, max_q_index: int) -> None:
    """The questions of one staged file (``ROWS``) into ``STAGED``, with ``restage``'s ``q_index``:
    the file's own, or, when the file gives none, each document's questions counted from 0 in file order."""
    required = [f"{strip(c)} AS {c}" for c in REQUIRED]
    con.execute(f"""CREATE OR REPLACE TEMP TABLE {FILE_ROWS} AS
                    SELECT line, {', '.join(required)}, "set", q_index FROM {ROWS} ORDER BY line""")
    staging.drop(con, ROWS)
    # ``restage`` refuses a file with no rows, and a row without one of its columns, in any set.
    counts = con.execute(f"""
        SELECT count(*), count(*) FILTER ({' OR '.join(f"coalesce({c}, '') = ''" for c in REQUIRED)}) FROM {FILE_ROWS}
        """).fetchall()[0]
    if not counts[0] or counts[1]:
        raise Declined
    con.execute(f"""CREATE OR REPLACE TEMP TABLE {FILE_ROWS} AS
                    SELECT * FROM {FILE_ROWS} WHERE "set" IS NULL OR "set" = {sql_text(set_name)} ORDER BY line""")
    given, plain, unknown, total = con.execute(f"""
        SELECT count(*) FILTER (coalesce(q_index, '') <> ''),
               count(*) FILTER (regexp_full_match(q_index, '[0-9]{{1,10}}') AND TRY_CAST(q_index AS BIGINT) <= {max_q_index}),
               count(*) FILTER (document_id NOT IN (SELECT id FROM {DOCUMENTS})),
               count(*)
        FROM {FILE_ROWS}""").fetchall()[0]
    # A q_index ``restage`` reads otherwise (" 3", "1e2") or refuses, or given on some rows only (the
    # running count then restarts from a given one: left to ``restage``); an unknown document.
    if plain != given or given not in (0, total) or unknown:
        raise Declined
    q_index = "q_index::BIGINT" if given else "row_number() OVER (PARTITION BY document_id ORDER BY line) - 1"
    con.execute(f"""INSERT INTO {STAGED}
                    SELECT {file_no}, line, document_id, {q_index}, question, answer1, answer2
                    FROM {FILE_ROWS} ORDER BY line""").fetchall()
    staging.drop(con, FILE_ROWS)


def _at(column: str) -> str:
    return sql_text('$."' + column + '"')


def restage(con, files: list[Path], *, set_name: str, document_ids: list[str]):
    """``stage``'s staged questions from files it declines: each file read by the table reader and checked in
    SQL, file by file (see the module's docstring); InputError at the first bad row."""
    _documents_of_set(con, document_ids)
    _create_staged(con)
    for file_no in range(len(files)):
        _restage_file(con, files, file_no, set_name)
    return _questions(con, set_name)


def _python_value(raw: str, column: str):
    """One cell of a row as Python's json module reads it (``raw``: the row's JSON object)."""
    return json.loads(raw)[column]


def _restage_file(con, files: list[Path], file_no: int, set_name: str) -> None:
    """The questions of ``files[file_no]`` into ``STAGED``; InputError at its first bad row (the table's
    own problems first, then row by row: an unknown document, a bad ``q_index``, a repeat with another
    text, the first in file order)."""
    path = files[file_no]
    table = values.stage(con, path, {c: (c,) for c in REQUIRED}, rules=dict.fromkeys(REQUIRED, "text"), required=REQUIRED, extra=False,
                         objects=True)
    q, kept = _at("q_index"), _at("set")
    con.execute(f"""
        CREATE OR REPLACE TEMP TABLE {FILE_ROWS} AS
        SELECT v.k, v.line, v.document_id, v.question, v.answer1, v.answer2,
               v.document_id IN (SELECT id FROM {DOCUMENTS}) AS known, t AS q_type, x AS q_text,
               t IS NOT NULL AND t <> 'NULL' AND NOT (t = 'VARCHAR' AND x = '') AS given,
               CASE WHEN (t = 'VARCHAR' AND regexp_full_match(x, '[0-9]{{1,10}}')) OR t = 'BIGINT'
                    THEN TRY_CAST(x AS BIGINT) END AS plain
        FROM (SELECT *, json_type(obj, {q}) AS t, obj ->> {q} AS x FROM {OBJECTS}
              WHERE json_type(obj, {kept}) IS NULL
                 OR (json_type(obj, {kept}) = 'VARCHAR' AND obj ->> {kept} = {sql_text(set_name)})) o
        JOIN {table} v USING (k)
        ORDER BY k""")
    # Each distinct q_index SQL does not settle (" 3", "1e2", true, 4.0, -1...) judged once in Python.
    settled = f"plain BETWEEN 0 AND {MAX_WHOLE_NUMBER}"
    judged = []
    for q_type, q_text, raw in con.execute(f"""
            SELECT q_type, q_text, any_value(o.obj::VARCHAR) FROM {FILE_ROWS} f JOIN {OBJECTS} o USING (k)
            WHERE given AND NOT coalesce({settled}, false) GROUP BY ALL""").fetchall():
        value = q_text if q_type == "VARCHAR" else _python_value(raw, "q_index")
        try:
            number = wording.whole_number(path, None, value, "q_index")
        except InputError:
            number = None
        judged.append({"q_type": q_type, "q_text": q_text, "number": number})
    if judged:
        import pyarrow

        with bulk.registered(con, pyarrow.Table.from_pylist(
                judged, schema=pyarrow.schema([("q_type", pyarrow.string()), ("q_text", pyarrow.string()),
                                               ("number", pyarrow.int64())]))) as name:
            con.execute(f"""CREATE OR REPLACE TEMP TABLE {FILE_ROWS} AS
                            SELECT f.* REPLACE (CASE WHEN f.given AND NOT coalesce(f.{settled}, false)
                                                     THEN j.number ELSE f.plain END AS plain)
                            FROM {FILE_ROWS} f LEFT JOIN {name} j
                              ON f.q_type = j.q_type AND f.q_text IS NOT DISTINCT FROM j.q_text
                            ORDER BY k""")
    # The first row the reader stops at for itself (an unknown document, then a bad q_index)...
    stop = first(con, f"SELECT f.k, f.line, f.document_id, f.known, f.q_type, f.q_text, o.obj::VARCHAR "
                      f"FROM {FILE_ROWS} f JOIN {OBJECTS} o USING (k) WHERE NOT f.known OR (f.given AND f.plain IS NULL)")
    # ... and the rows before it, each without a q_index counted on from its document's last one in the file.
    con.execute(f"""
        INSERT INTO {STAGED}
        SELECT {file_no}, line, document_id,
               coalesce(max(q) OVER (PARTITION BY document_id, run), 0)
                 + row_number() OVER (PARTITION BY document_id, run ORDER BY k) - 1,
               question, answer1, answer2
        FROM (SELECT *, CASE WHEN given THEN plain END AS q,
                     sum(given::INTEGER) OVER (PARTITION BY document_id ORDER BY k) AS run
              FROM {FILE_ROWS} WHERE k < coalesce(?, k + 1))
        ORDER BY k""", [stop[0] if stop else None]).fetchall()
    repeat = first(con, f"""
        SELECT line, first_file, first_line, q_index, document_id FROM (
            SELECT file_no, line, document_id, q_index, (text, reference_1, reference_2) AS said,
                   first_value((text, reference_1, reference_2)) OVER w AS first_said,
                   first_value(file_no) OVER w AS first_file, first_value(line) OVER w AS first_line
            FROM {STAGED} WINDOW w AS (PARTITION BY document_id, q_index ORDER BY file_no, line))
        WHERE file_no = {file_no} AND said <> first_said""")
    staging.drop(con, FILE_ROWS, table, OBJECTS)
    if repeat:
        line, first_file, first_line, q_index, doc_id = repeat
        raise InputError(path, f"question {q_index} of document {doc_id} repeats {files[first_file]}:{first_line} "
                               "with another text", line=line, hint="keep one row per (document_id, q_index)")
    if stop:
        _, line, doc_id, known, q_type, q_text, raw = stop
        if not known:
            raise InputError(path, f"question for unknown document_id {doc_id!r} (not in documents.csv)",
                             line=line, hint="add the document to documents.csv or fix the id")
        wording.whole_number(path, line, q_text if q_type == "VARCHAR" else _python_value(raw, "q_index"), "q_index")
        raise InputError(path, "q_index: not a value this import takes", line=line, hint="write a number such as 0, 1, 2")


def documents(path: Path, set_name: str) -> dict[str, dict]:
    """NarrativeQA's documents of ``set_name`` (documents.csv, by the table reader) by id: ``line`` (the
    id's first), ``DOCUMENT_FIELDS`` and ``story_word_count`` (0 when not given); InputError at the first
    bad row, in file order: a ``document_id`` repeating an earlier row with other values; in the set,
    a ``document_id`` or ``wiki_title`` against the one name rule (``wording.named``), a
    ``story_word_count`` that is no whole number (``wording.whole_number``). Each distinct value SQL does
    not settle (a name beyond printable ASCII, a count not of plain digits) is judged once in Python."""
    with db.scratch() as con:  # (its TEMP tables go with the connection)
        return _documents(con, path, set_name)


def _documents(con, path: Path, set_name: str) -> dict[str, dict]:
    stage_objects(con, path, DOCUMENT_COLUMNS)
    text = {c: strip(f"(obj ->> {_at(c)})") for c in DOCUMENT_COLUMNS}
    fields = ", ".join([f"coalesce(obj ->> {_at(c)}, '') AS {c}" for c in DOCUMENT_FIELDS[2:]]
                       + [f"obj ->> {_at('story_word_count')} AS story_word_count"])
    con.execute(f"""
        CREATE OR REPLACE TEMP TABLE {FILE_ROWS} AS
        SELECT k, line, {text['document_id']} AS document_id, {text['set']} = {sql_text(set_name)} AS in_set,
               {text['kind']} AS kind, {text['wiki_title']} AS wiki_title, {fields},
               obj::VARCHAR AS said, first_value(obj::VARCHAR) OVER w AS first_said, first_value(line) OVER w AS first_line
        FROM {OBJECTS} WINDOW w AS (PARTITION BY {text['document_id']} ORDER BY k)
        ORDER BY k""")
    plain_name = f"{ascii_text('{0}')} AND length({{0}}) <= {MAX_NAME_CHARS}"
    digits = f"regexp_full_match(story_word_count, '[0-9]{{1,10}}') AND TRY_CAST(story_word_count AS BIGINT) <= {MAX_WHOLE_NUMBER}"
    # Each distinct name or count SQL does not settle, judged once in Python (True: fine, or the count).
    unusual = con.execute(f"""
        SELECT DISTINCT 'name', value FROM (SELECT unnest([document_id, wiki_title]) AS value FROM {FILE_ROWS} WHERE in_set)
        WHERE NOT ({plain_name.format('value')})
        UNION ALL
        SELECT DISTINCT 'count', story_word_count FROM {FILE_ROWS}
        WHERE in_set AND coalesce(story_word_count, '') <> '' AND NOT ({digits})""").fetchall()
    judged = [{"what": what, "value": value, "ok": _judged(what, value)} for what, value in unusual]
    if judged:
        import pyarrow

        schema = pyarrow.schema([("what", pyarrow.string()), ("value", pyarrow.string()), ("ok", pyarrow.int64())])
        with bulk.registered(con, pyarrow.Table.from_pylist(judged, schema=schema)) as name:
            con.execute(f"CREATE OR REPLACE TEMP TABLE {JUDGED} AS SELECT * FROM {name}")

    def verdict(what: str, column: str) -> str:
        # (Nothing judged: no verdict to look up, and no subquery for DuckDB to plan.)
        return f"(SELECT ok FROM {JUDGED} j WHERE j.what = '{what}' AND j.value = {column})" if judged else "NULL::BIGINT"
    # The count of words, asked by the check of each row and by the rows returned (not a table of its own).
    words = f"""CASE WHEN coalesce(story_word_count, '') = '' THEN 0 WHEN {digits} THEN story_word_count::BIGINT
                     ELSE {verdict('count', 'story_word_count')} END"""

    def bad_name(column: str) -> str:
        return f"(NOT ({plain_name.format(column)}) AND {verdict('name', column)} IS NULL)"
    found = con.execute(f"""
        SELECT * FROM (
            SELECT k, 0 AS o, line, first_line, document_id, NULL AS value FROM {FILE_ROWS} WHERE said <> first_said
            UNION ALL SELECT k, 1, line, NULL, 'document_id', document_id FROM {FILE_ROWS} WHERE in_set AND {bad_name('document_id')}
            UNION ALL SELECT k, 2, line, NULL, 'wiki_title', wiki_title FROM {FILE_ROWS} WHERE in_set AND {bad_name('wiki_title')}
            UNION ALL SELECT k, 3, line, NULL, 'story_word_count', story_word_count FROM {FILE_ROWS}
                      WHERE in_set AND ({words}) IS NULL)
        ORDER BY k, o LIMIT 1""").fetchone()
    if found:
        _, o, line, first_line, column, value = found
        if o == 0:
            raise InputError(path, f"document_id {column!r} repeats line {first_line} with other values", line=line,
                             hint="keep one row per document")
        if o == 3:
            wording.whole_number(path, line, value, column)
        wording.named(path, line, column, value)
        raise InputError(path, f"{column}: not a value this import takes", line=line, hint="write it as text")
    keys = ("line",) + DOCUMENT_FIELDS + ("story_word_count",)
    rows = con.execute(f"""SELECT document_id, line, {', '.join(DOCUMENT_FIELDS)}, {words} FROM {FILE_ROWS}
                           WHERE in_set AND said = first_said AND line = first_line""").fetchall()
    return {row[0]: dict(zip(keys, row[1:], strict=True)) for row in rows}


def _judged(what: str, value: str) -> int | None:
    """A value SQL does not settle, judged by the rule that words it: 1 (a fine name) or the count; None
    when refused (the first row holding it is worded with its line)."""
    if what == "name":
        return None if name_problem(value) else 1
    try:
        return wording.whole_number(Path(), None, value, "story_word_count")
    except InputError:
        return None


def summaries(files: list[Path], document_ids: list[str]) -> dict[str, str]:
    """The summary of each of ``document_ids`` in NarrativeQA's summary files (``document_id``, ``summary``:
    every row fills both, read by the table reader, values checked in SQL), the last row of an id winning."""
    if not files:
        return {}
    with db.scratch() as con:  # (its TEMP tables go with the connection)
        con.execute(f"CREATE OR REPLACE TEMP TABLE {DOCUMENTS} AS SELECT unnest(?::VARCHAR[]) AS id", [document_ids])
        con.execute(f"CREATE OR REPLACE TEMP TABLE {FILE_ROWS} (file_no INTEGER, k BIGINT, document_id VARCHAR, summary VARCHAR)")
        for file_no, path in enumerate(files):
            table = values.stage(con, path, {"document_id": ("document_id",), "summary": ("summary",)},
                                 rules={"document_id": "text", "summary": "text"}, required=("document_id", "summary"), extra=False)
            con.execute(f"INSERT INTO {FILE_ROWS} SELECT {file_no}, k, document_id, summary FROM {table} "
                        f"WHERE document_id IN (SELECT id FROM {DOCUMENTS})")
            staging.drop(con, table)
        return dict(con.execute(f"SELECT document_id, arg_max(summary, (file_no, k)) FROM {FILE_ROWS} "
                                "GROUP BY document_id").fetchall())


def _insert(con, questions) -> int:
    """Write the staged questions (``KEPT``: ``questions``, staged apart) the workspace does not have yet, in
    file order; how many were added."""
    added = con.execute(f"""
        INSERT INTO questions BY NAME SELECT {', '.join(QUESTION_COLUMNS)} FROM {KEPT}
        ORDER BY file_no, line ON CONFLICT DO NOTHING""").fetchone()
    return int(added[0]) if added else 0


# The questions of ``lsqa ingest-narrativeqa``: its question files as one input, staged apart (before the
# ingest reads the stories of their documents, with no workspace locked: ``skeleton.stage_apart``) and finished
# in the ingest's write (``skeleton.run(..., con=, staged=)``). Parameters: ``set_name``, ``document_ids``.
RECORD = Input(
    name="questions", staged=KEPT, known=COLUMNS, stage=stage, insert=_insert, indexed="questions",
    columns={c: "INTEGER" if c == "source_index" else "VARCHAR" for c in QUESTION_COLUMNS}
    | {"file_no": "INTEGER", "line": "BIGINT"},
    restage=restage, extra=False, several=True,
    checks=(
        Check("""SELECT n.file_no, n.line, n.source_index, n.document_id, left(q.text, 60)
                 FROM {staged} n JOIN questions q USING (id)
                 WHERE (q.text, coalesce(q.reference_1, ''), coalesce(q.reference_2, ''))
                       IS DISTINCT FROM (n.text, n.reference_1, n.reference_2)""",
              "question {1} of document {2} is already in the workspace with another text ({3!r})",
              "keep the published text, or import the changed set into a new workspace"),
    ))


__all__ = ["DOCUMENT_COLUMNS", "RECORD", "Declined", "documents", "restage", "stage", "summaries"]
