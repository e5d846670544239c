"""The values an import takes from a table file the staged SQL declines: found and checked in SQL, each
distinct unusual value worded once in Python.

A file ``lsqa.store.importers.rows`` does not read exactly (a JSON number, a name beyond plain ASCII, a
quote inside a bare field...) is read by the table reader (``lsqa.store.importers.table``: its rows in
TEMP table ``OBJECTS``, the file's own problems worded there). Here each of the import's meanings
(``aliases``: question_id from ``question_id`` or ``item_id``...) takes the first of its columns a row
fills, as text: a text is stripped; a name (not one of ``texts``) follows the one name rule
(``lsqa.text.names``); what is no plain value (empty, a JSON object, list, true / false, NaN) is refused
in ``wording.plain_value``'s words. SQL settles the usual cells (text, and names of printable ASCII
within the limit); every other distinct value is judged once in Python (``cell``) and the verdicts are
joined back; the first row and meaning that fail, in file order, get ``cell``'s error with their line.

``extra``: the row's other columns as one JSON object, keys sorted, in DuckDB's spelling (compact, text
unescaped): the same JSON as the staged SQL's ``json.dumps`` spelling of a regular file, not the same bytes.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from lsqa.errors import InputError
from lsqa.store import bulk
from lsqa.store.importers import lines as staging
from lsqa.store.importers.rows import ascii_text, sql_text, strip
from lsqa.store.importers.table import OBJECTS, stage_objects
from lsqa.store.importers.wording import plain_value
from lsqa.text.names import MAX_NAME_CHARS, name_problem, shown_name

CELLS, VALUES = "lsqa_import_cells", "lsqa_import_values"

# JSON numbers DuckDB may round (beyond 64-bit integers, decimals): read from the row's own text.
_ROUNDED = ("DOUBLE", "UBIGINT", "HUGEINT")


def name(path: Path, line: int | None, column: str, value: str) -> str:
    """A system, rater or question id under the one name rule (``lsqa.text.names``), or InputError."""
    problem = name_problem(value)
    if problem:
        raise InputError(path, f"column {column}: {shown_name(value)} {problem}", line=line,
                         hint=f"use one line of visible text, at most {MAX_NAME_CHARS} characters")
    return value


def cell(path: Path, line: int | None, column: str, value, *, text: bool) -> str:
    """One value of a meaning as the import stores it: a text (``text``) or a name; numbers as text (a
    name's whole number written as an integer), or InputError naming the line."""
    if isinstance(value, float) and not text and math.isfinite(value) and value.is_integer():
        value = int(value)
    out = plain_value(path, line, column, value, numbers=text or not isinstance(value, float))
    if not text:
        name(path, line, column, out)
    return out


def _at(column: str) -> str:
    return sql_text('$."' + column + '"')


def stage(con, path: Path, aliases: dict[str, tuple[str, ...]], *, texts: tuple[str, ...] = (),
          required: tuple[str, ...] = (), extra: bool = True, objects: bool = False) -> str:
    """TEMP table ``VALUES`` (line, k, one text column per meaning, extra) of ``path``'s rows in file
    order, each value checked (see the module's docstring); InputError at the first bad row.
    ``required``: columns every row must fill, refused in the table reader's words (a missing column, an
    empty value) before the aliases are looked at; ``extra=False``: no ``extra`` column; ``objects``: keep
    the table reader's TEMP table ``OBJECTS`` (k, line, obj) for the caller's SQL over the other columns."""
    stage_objects(con, path, required, required_any=aliases)
    return checked(con, path, aliases, texts=texts, extra=extra, objects=objects)


def checked(con, path: Path, aliases: dict[str, tuple[str, ...]], *, texts: tuple[str, ...] = (),
            extra: bool = True, objects: bool = False) -> str:
    """``stage``'s table of the rows the caller staged in ``OBJECTS`` (``table.stage_objects``, its
    ``required`` covering every meaning)."""
    parts = []
    for order, (meaning, names) in enumerate(aliases.items()):
        chosen = "CASE " + " ".join(f"WHEN coalesce(obj ->> {_at(n)}, '') <> '' THEN {sql_text(n)}"
                                    for n in names) + " END"

        def of(f, names=names) -> str:
            return "CASE col " + " ".join(f"WHEN {sql_text(n)} THEN {f(_at(n))}" for n in names) + " END"
        is_text = meaning in texts
        parts.append(f"""
            SELECT k, line, {order} AS o, col, {is_text} AS is_text, type, text,
                   CASE WHEN type = 'VARCHAR' THEN {strip('text')} END AS value,
                   CASE WHEN type IN {_ROUNDED} THEN obj::VARCHAR END AS raw
            FROM (SELECT k, line, obj, col, {of(lambda p: f'json_type(obj, {p})')} AS type,
                         {of(lambda p: f'obj ->> {p}')} AS text
                  FROM (SELECT k, line, obj, {chosen} AS col FROM {OBJECTS}))""")
    settled = (f"type = 'VARCHAR' AND value <> '' AND (is_text OR ({ascii_text('value')} "
               f"AND length(value) <= {MAX_NAME_CHARS}))")
    con.execute(f"CREATE OR REPLACE TEMP TABLE {CELLS} AS SELECT *, {settled} AS settled FROM ({' UNION ALL '.join(parts)})")
    unusual = con.execute(f"SELECT DISTINCT col, is_text, type, text, raw FROM {CELLS} WHERE NOT settled").fetchall()
    judged = []
    for col, is_text, type_, text, raw in unusual:
        value = _python_value(col, type_, text, raw)
        try:
            judged.append({"col": col, "is_text": is_text, "type": type_, "text": text, "raw": raw,
                           "judged": cell(path, None, col, value, text=is_text)})
        except InputError:
            judged.append({"col": col, "is_text": is_text, "type": type_, "text": text, "raw": raw, "judged": None})
    if judged:
        import pyarrow

        with bulk.registered(con, pyarrow.Table.from_pylist(judged)) as table:
            con.execute(f"""CREATE OR REPLACE TEMP TABLE {CELLS} AS
                            SELECT c.* REPLACE (coalesce(j.judged, c.value) AS value,
                                                c.settled OR j.judged IS NOT NULL AS settled)
                            FROM {CELLS} c LEFT JOIN {table} j
                              ON NOT c.settled AND c.col = j.col AND c.is_text = j.is_text AND c.type = j.type
                             AND c.text IS NOT DISTINCT FROM j.text AND c.raw IS NOT DISTINCT FROM j.raw""")
    bad = con.execute(f"SELECT line, col, is_text, type, text, raw FROM {CELLS} WHERE NOT settled "
                      "ORDER BY k, o LIMIT 1").fetchone()
    if bad:
        line, col, is_text, type_, text, raw = bad
        cell(path, line, col, _python_value(col, type_, text, raw), text=is_text)
        raise InputError(path, f"column {col}: not a value this import takes", line=line, hint="write it as text")
    known = sorted({n for names in aliases.values() for n in names})
    pivot = ", ".join(f"any_value(value) FILTER (o = {order}) AS {meaning}" for order, meaning in enumerate(aliases))
    if not extra:
        con.execute(f"""CREATE OR REPLACE TEMP TABLE {VALUES} AS
                        SELECT k, any_value(line) AS line, {pivot} FROM {CELLS} GROUP BY k ORDER BY k""")
        staging.drop(con, CELLS, *(() if objects else (OBJECTS,)))
        return VALUES
    con.execute(f"""
        CREATE OR REPLACE TEMP TABLE {VALUES} AS
        SELECT v.*, coalesce(x.extra, '{{}}') AS extra
        FROM (SELECT k, any_value(line) AS line, {pivot} FROM {CELLS} GROUP BY k) v
        LEFT JOIN (SELECT o.k, '{{' || array_to_string(list(to_json(e.key)::VARCHAR || ':' || e.value::VARCHAR
                                                             ORDER BY e.key), ',') || '}}' AS extra
                   FROM {OBJECTS} o, json_each(o.obj) e
                   WHERE NOT list_contains(?::VARCHAR[], e.key) GROUP BY o.k) x USING (k)
        ORDER BY k""", [known])
    staging.drop(con, CELLS, *(() if objects else (OBJECTS,)))
    return VALUES


def _python_value(col: str, type_: str, text: str | None, raw: str | None):
    """The Python value of one cell, as the row reader's ``json.loads`` makes it."""
    if raw is not None:
        return json.loads(raw)[col]
    if type_ == "VARCHAR":
        return text
    if type_ == "BIGINT":
        return int(text)
    return {"OBJECT": {}, "ARRAY": [], "BOOLEAN": text == "true", "NULL": None}.get(type_, text)


__all__ = ["VALUES", "cell", "checked", "name", "stage"]
