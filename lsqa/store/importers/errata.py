"""An errata file's corrected references (``lsqa ingest-narrativeqa --errata``), read by the table reader and
checked in SQL.

The file: the Reference errors page's download (CSV or JSONL), or any table with ``question_id``,
``reference`` and ``correction``. The table reader (``lsqa.store.importers.table``) reads it and refuses its
own problems; ``question_id`` and ``reference`` are checked as texts (``lsqa.store.importers.values``).
Then SQL finds the first row, in file order, that breaks a rule, each worded here: a reference other than
1 or 2; a correction that is no text (a JSON number is the text it reads as), or only spaces; a correction
above the size limit or with a NUL; one (question, reference) corrected twice with different texts (the
first line named); ``annotators`` that are neither a text nor a list of texts. A row with an empty
correction is a flag without a proposal: passed over. A CSV cell loses the ``'`` lsqa's errata CSV put in
front of formula-like text (``lsqa.text.csv_cells.read_cell``); each distinct such cell, and each JSON
number DuckDB may spell otherwise than Python, is read once in Python.
"""

from __future__ import annotations

import json
from pathlib import Path

from lsqa.errors import InputError
from lsqa.store import bulk
from lsqa.store.bulk import fetch_dicts
from lsqa.store.corpus import add_reference_corrections
from lsqa.store.importers import skeleton, values
from lsqa.store.importers.rows import sql_text, strip
from lsqa.store.importers.skeleton import Check, Input
from lsqa.store.importers.table import OBJECTS, PYTHON_TYPE, stage_objects
from lsqa.store.importers.wording import MAX_CELL_CHARS
from lsqa.text import csv_cells

REQUIRED = ("question_id", "reference")
STAGED, JUDGED = "lsqa_import_errata", "lsqa_import_errata_judged"
# The corrections in the ingest's write: one per (question, reference), from its first row (``read``'s, and ``k``).
KEPT = "lsqa_import_errata_kept"

# Types of a JSON number DuckDB may spell otherwise than Python's str() (a decimal, beyond 64 bits).
_ROUNDED = ("DOUBLE", "UBIGINT", "HUGEINT")


def _at(column: str) -> str:
    return sql_text('$."' + column + '"')


def read(path: str | Path) -> list[dict]:
    """The corrected references of the errata file ``path``: one dict per (question, reference), in file order,
    with ``question_id``, ``reference``, ``text``, ``line``, ``source`` (file:line) and ``proposed_by`` (the
    row's ``annotators``); InputError naming the file and the first line at fault (see the module's
    docstring), or when no row has a correction."""
    return skeleton.stage_apart(Path(path), RECORD, spill_folder=None).drop_columns(["k"]).to_pylist()


def _stage(con, path: Path):
    """The corrected references of ``path`` as ``read`` gives them, with each one's row ``k`` (an Arrow table);
    ``con`` is ``skeleton.stage_apart``'s own, its TEMP tables going with it."""
    return _read(con, path)


def _read(con, path: Path):
    columns, header_line = stage_objects(con, path, REQUIRED)
    csv_file = header_line is not None
    if "correction" not in columns:
        raise InputError(path, "no correction column", line=header_line,
                         hint="add a correction column with the corrected reference (lsqa's errata file has one)")
    table = values.checked(con, path, {c: (c,) for c in REQUIRED}, rules=dict.fromkeys(REQUIRED, "text"), extra=False, objects=True)
    c, a = _at("correction"), _at("annotators")
    con.execute(f"""
        CREATE OR REPLACE TEMP TABLE {STAGED} AS
        SELECT v.k, v.line, v.question_id, v.reference, json_type(o.obj, {c}) AS c_type, o.obj ->> {c} AS c_text,
               json_type(o.obj, {a}) AS a_type, o.obj ->> {a} AS a_text, o.obj::VARCHAR AS raw
        FROM {table} v JOIN {OBJECTS} o USING (k) ORDER BY k""")
    # What SQL does not settle, read once per distinct value in Python: a CSV cell starting with ', a JSON
    # number DuckDB may spell otherwise, a list of annotators.
    quoted = "starts_with({0}, '''')" if csv_file else "false"
    unusual_c = f"c_type IN {_ROUNDED} OR (c_type = 'VARCHAR' AND {quoted.format('c_text')})"
    unusual_a = f"a_type = 'ARRAY' OR (a_type = 'VARCHAR' AND {quoted.format('a_text')})"
    judged = []
    for column, type_, text, raw in con.execute(f"""
            SELECT 'correction', c_type, c_text, any_value(raw) FROM {STAGED} WHERE {unusual_c} GROUP BY ALL
            UNION ALL
            SELECT 'annotators', a_type, a_text, any_value(raw) FROM {STAGED} WHERE {unusual_a} GROUP BY ALL""").fetchall():
        judged.append({"col": column, "type": type_, "text": text, "read": _read_cell(column, type_, text, raw)})
    import pyarrow

    schema = pyarrow.schema([("col", pyarrow.string()), ("type", pyarrow.string()), ("text", pyarrow.string()),
                             ("read", pyarrow.string())])
    with bulk.registered(con, pyarrow.Table.from_pylist(judged, schema=schema)) as name:
        con.execute(f"CREATE OR REPLACE TEMP TABLE {JUDGED} AS SELECT * FROM {name}")

    def read_back(column: str, type_: str, text: str) -> str:
        return f"""(SELECT j.read FROM {JUDGED} j WHERE j.col = '{column}' AND j.type = {type_}
                    AND j.text IS NOT DISTINCT FROM {text})"""
    correction = f"""CASE WHEN c_type IS NULL OR c_type = 'NULL' THEN ''
                          WHEN {unusual_c} THEN {read_back('correction', 'c_type', 'c_text')}
                          WHEN c_type IN ('VARCHAR', 'BIGINT') THEN c_text END"""
    annotators = f"""CASE WHEN a_type IS NULL OR a_type = 'NULL' THEN ''
                          WHEN {unusual_a} THEN {read_back('annotators', 'a_type', 'a_text')}
                          WHEN a_type = 'VARCHAR' THEN a_text END"""
    con.execute(f"""
        CREATE OR REPLACE TEMP TABLE {STAGED} AS
        SELECT *, text <> '' AS kept,
               first_value(text) OVER w AS first_text, first_value(line) OVER w AS first_line,
               first_value(k) OVER w AS first_k
        FROM (SELECT *, {strip(f'({correction})')} AS text, {annotators} AS proposed_by FROM {STAGED})
        WINDOW w AS (PARTITION BY question_id, reference, text <> '' ORDER BY k)
        ORDER BY k""")
    bad = con.execute(f"""
        SELECT * FROM (
            SELECT k, 0 AS o, line, question_id, reference, NULL AS what FROM {STAGED} WHERE reference NOT IN ('1', '2')
            UNION ALL SELECT k, 1, line, question_id, reference, c_type FROM {STAGED}
                      WHERE c_type IN ('BOOLEAN', 'OBJECT', 'ARRAY')
            UNION ALL SELECT k, 2, line, question_id, reference, NULL FROM {STAGED}
                      WHERE c_type = 'VARCHAR' AND c_text <> '' AND text = ''
            UNION ALL SELECT k, 3, line, question_id, reference, NULL FROM {STAGED}
                      WHERE kept AND (length(text) > {MAX_CELL_CHARS} OR contains(text, chr(0)))
            UNION ALL SELECT k, 4, line, question_id, reference, first_line::VARCHAR FROM {STAGED}
                      WHERE kept AND text <> first_text
            UNION ALL SELECT k, 5, line, question_id, reference, a_type FROM {STAGED}
                      WHERE kept AND k = first_k AND a_type IS NOT NULL AND a_type <> 'NULL' AND proposed_by IS NULL)
        ORDER BY k, o LIMIT 1""").fetchone()
    if bad:
        _refuse(path, *bad[1:])
    out = con.sql(f"""
        SELECT question_id, reference, text, line, CASE WHEN line IS NULL THEN $name ELSE $name || ':' || line END
               AS source, proposed_by, k
        FROM {STAGED} WHERE kept AND k = first_k ORDER BY k""", params={"name": path.name}).to_arrow_table()
    if not out.num_rows:
        raise InputError(path, "no corrected reference: every correction cell is empty",
                         hint="write the corrected reference in the correction column of the rows to correct")
    return out


def _read_cell(column: str, type_: str, text: str, raw: str) -> str | None:
    """One cell SQL does not settle, as its text (None: no text; its row is refused if it comes to it)."""
    if type_ == "VARCHAR":
        return csv_cells.read_cell(text)
    value = json.loads(raw)[column]
    if column == "correction":
        return str(value)  # a JSON number ("3") is the text it reads as
    return "; ".join(value) if isinstance(value, list) and all(isinstance(v, str) for v in value) else None


def _refuse(path: Path, o: int, line, question_id: str, reference: str, what) -> None:
    """The error of the first row found bad (``o``: which rule)."""
    if o == 0:
        raise InputError(path, f"reference {reference!r} is not 1 or 2", line=line,
                         hint="write which reference of the question is corrected: 1 or 2")
    if o in (1, 5):
        column = "correction" if o == 1 else "annotators"
        raise InputError(path, f"column {column} must be text, not {PYTHON_TYPE.get(what, what.lower())}", line=line,
                         hint="write it as text in quotes")
    if o == 2:
        raise InputError(path, f"the correction of reference {reference} of {question_id!r} is only spaces", line=line,
                         hint="write the corrected reference, or leave the cell empty")
    if o == 3:
        raise InputError(path, "a correction above the size limit or with a NUL character", line=line, hint="shorten it")
    raise InputError(path, f"reference {reference} of {question_id!r} is corrected twice with different texts "
                           f"(first at line {what})", line=line, hint="keep one correction per question and reference")


def _insert(con, counts) -> tuple[int, int, int]:
    """(added, equal to the reference they correct, all): the corrections (``KEPT``) not equal to the reference
    they correct, appended beside the questions' own (``lsqa.store.corpus.add_reference_corrections`` leaves
    out one that is already the standing correction), in file order."""
    same = """(SELECT CASE s.reference WHEN '1' THEN coalesce(q.reference_1, '') ELSE coalesce(q.reference_2, '') END
                FROM questions q WHERE q.id = s.question_id) = s.text"""
    (total, n_same), = con.execute(f"SELECT count(*), count(*) FILTER ({same}) FROM {KEPT} s").fetchall()
    rows = fetch_dicts(con, f"""SELECT question_id, reference, text, source, proposed_by FROM {KEPT} s
                               WHERE NOT coalesce({same}, false) ORDER BY k""")
    return add_reference_corrections(con, rows), n_same, total


# An errata file: staged apart (``skeleton.stage_apart``: read before the workspace is locked, and by
# ``lsqa ingest-narrativeqa`` before it reads the folder), finished in the ingest's write (``skeleton.run``).
RECORD = Input(
    name="corrected references", staged=KEPT, known=REQUIRED + ("correction", "annotators"), stage=_stage,
    insert=_insert, indexed="reference_corrections", extra=False,
    columns={"question_id": "VARCHAR", "reference": "VARCHAR", "text": "VARCHAR", "line": "BIGINT",
             "source": "VARCHAR", "proposed_by": "VARCHAR", "k": "BIGINT"},
    checks=(
        Check("SELECT s.line, s.question_id, s.k FROM {staged} s WHERE NOT EXISTS "
              "(SELECT 1 FROM questions q WHERE q.id = s.question_id)",
              "no question {1!r} in this workspace", "ingest its NarrativeQA set first, or remove the row", order="3"),
    ))


__all__ = ["RECORD", "REQUIRED", "read"]
