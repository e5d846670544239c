"""The SQL of ``lsqa ingest-narrativeqa``'s questions as an input: NarrativeQA's question files read and
checked by DuckDB, then written with one INSERT ... SELECT.

``lsqa.corpus.ingest`` decides and words every error; this module only reads and writes (the store
is the one package with SQL). ``stage`` reads the question files (``lsqa.store.importers.rows``: CSV,
quoted or not, or JSONL with ``q_index`` as a number or a text) on a connection with no workspace
attached, while no workspace is locked (the books are read next, which takes longer), and returns
the questions as an Arrow table, in the order and with the values ``lsqa.corpus.ingest`` makes them
row by row. It raises ``Declined`` for any file that row reader would read otherwise or refuse —
a row with a value missing, an unknown document, a ``q_index`` that is not plain digits, a file that
gives ``q_index`` on some rows and not on others, a (document, ``q_index``) repeated with another
text: the row reader then reads the files and words the error. ``first_stored_conflict`` and
``insert`` run in the write.
"""

from __future__ import annotations

from pathlib import Path

from lsqa.store import bulk, db
from lsqa.store.importers import lines as staging
from lsqa.store.importers import rows as staged_rows
from lsqa.store.importers.rows import ROWS, sql_text, strip
from lsqa.store.importers.skeleton import Declined, first

STAGED, DOCUMENTS, FILE_ROWS = "lsqa_import_questions", "lsqa_import_documents", "lsqa_import_file_questions"

# The columns of a NarrativeQA question file the importer reads (the others, such as the tokenised
# texts of qaps.csv or the kind and title of the JSONL copy, are not kept).
REQUIRED = ("document_id", "question", "answer1", "answer2")
COLUMNS = REQUIRED + ("set", "q_index")

# What an ingest writes of a question, in the order of the Arrow table ``stage`` returns.
QUESTION_COLUMNS = ("id", "document_id", "origin", "text", "reference_1", "reference_2", "set_name", "source_index")


def stage(files: list[Path], *, set_name: str, document_ids: list[str], spill_folder: Path, max_bytes: int,
          max_cell_chars: int, max_q_index: int):
    """The questions of ``files`` of the set ``set_name`` (an Arrow table: ``QUESTION_COLUMNS`` and the
    ``file_no`` and ``line`` each came from), each (document, ``q_index``) once, from its first line;
    or Declined. ``document_ids``: the set's documents (``documents.csv``); ``spill_folder``: where
    DuckDB may spill, under the import's memory limit (``lsqa.store.staging.bounded_memory``)."""
    for path in files:
        if path.suffix.lower() not in (".csv", ".jsonl") or not path.is_file() \
                or not 0 < path.stat().st_size <= max_bytes:
            raise Declined  # the row reader says what is wrong with it
    with db.scratch() as con, staging.bounded_memory(con, spill_folder):
        con.execute(f"CREATE TEMP TABLE {DOCUMENTS} AS SELECT unnest(?::VARCHAR[]) AS id", [document_ids])
        con.execute(f"""CREATE TEMP TABLE {STAGED} (file_no INTEGER, line BIGINT, document_id VARCHAR,
                        q_index BIGINT, text VARCHAR, reference_1 VARCHAR, reference_2 VARCHAR)""")
        for file_no, path in enumerate(files):
            staged_rows.stage_rows(con, path, COLUMNS, max_cell_chars, extra=False, numbers=("q_index",))
            _take_file(con, file_no, set_name, max_q_index)
        # One (document, q_index) twice with another text: the row reader names both lines.
        if con.execute(f"""SELECT count(*) FROM (SELECT 1 FROM {STAGED} GROUP BY document_id, q_index
                           HAVING count(DISTINCT (text, reference_1, reference_2)) > 1)""").fetchall()[0][0]:
            raise Declined
        return con.sql(f"""
            SELECT 'nqa:' || document_id || ':' || q_index AS id, document_id, 'narrativeqa' AS origin, text,
                   reference_1, reference_2, {sql_text(set_name)} AS set_name, q_index::INTEGER AS source_index,
                   file_no, line
            FROM {STAGED}
            QUALIFY row_number() OVER (PARTITION BY document_id, q_index ORDER BY file_no, line) = 1
            ORDER BY file_no, line""").to_arrow_table()


def _take_file(con, file_no: int, set_name: str, max_q_index: int) -> None:
    """The questions of one staged file (``ROWS``) into ``STAGED``, with the row reader's ``q_index``:
    the file's own, or, when the file gives none, each document's questions counted from 0 in file order."""
    required = [f"{strip(c)} AS {c}" for c in REQUIRED]
    con.execute(f"""CREATE OR REPLACE TEMP TABLE {FILE_ROWS} AS
                    SELECT line, {', '.join(required)}, "set", q_index FROM {ROWS} ORDER BY line""")
    staging.drop(con, ROWS)
    # The row reader refuses a file with no rows, and a row without one of its columns, in any set.
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
    # A q_index the row reader reads otherwise (" 3", "1e2") or refuses, or given on some rows only
    # (the running count then restarts from a given one: left to the row reader); an unknown document.
    if plain != given or given not in (0, total) or unknown:
        raise Declined
    q_index = "q_index::BIGINT" if given else "row_number() OVER (PARTITION BY document_id ORDER BY line) - 1"
    con.execute(f"""INSERT INTO {STAGED}
                    SELECT {file_no}, line, document_id, {q_index}, question, answer1, answer2
                    FROM {FILE_ROWS} ORDER BY line""").fetchall()
    staging.drop(con, FILE_ROWS)


def first_stored_conflict(con, questions):
    """(file_no, line, q_index, document id, stored text) of the first question the workspace has under
    the same id with another text or other references; None when there is none."""
    with bulk.registered(con, questions) as name:
        return first(con, f"""
            SELECT n.file_no, n.line, n.source_index, n.document_id, q.text FROM {name} n JOIN questions q USING (id)
            WHERE (q.text, coalesce(q.reference_1, ''), coalesce(q.reference_2, ''))
                  IS DISTINCT FROM (n.text, n.reference_1, n.reference_2)
            ORDER BY n.file_no, n.line LIMIT 1""")


def insert(con, questions) -> int:
    """Write the staged questions the workspace does not have yet, in file order; how many were added."""
    with bulk.registered(con, questions) as name:
        added = con.execute(f"""
            INSERT INTO questions BY NAME SELECT {', '.join(QUESTION_COLUMNS)} FROM {name}
            ORDER BY file_no, line ON CONFLICT DO NOTHING""").fetchone()
    return int(added[0]) if added else 0


__all__ = ["Declined", "first_stored_conflict", "insert", "stage"]
