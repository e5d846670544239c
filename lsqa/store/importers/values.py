"""The values an import takes from a table file the staged SQL declines: found and checked in SQL, each
distinct unusual value worded once in Python.

A file ``lsqa.store.importers.rows`` does not read exactly (a JSON number, a name beyond plain ASCII, a
quote inside a bare field...) is read by the table reader (``lsqa.store.importers.table``: its rows in
TEMP table ``OBJECTS``, the file's own problems worded there). Here each of the import's meanings
(``aliases``: question_id from ``question_id`` or ``item_id``...) takes the first of its columns a row
fills (not absent, null or ''); a meaning no column fills is an error unless it is ``optional`` (then
'', or '[]' for a list). Each meaning keeps its value by its rule (``cell``):

- ``name`` (the default): stripped text under the one name rule (``lsqa.text.names``); a whole number
  as an integer;
- ``text``: stripped text, numbers as text; ``plain``: as a name, without the name rule;
- ``texts``: a text or a list of texts, stored as the JSON list ``json.dumps`` writes;
- ``any``: whatever the row holds as Python's ``str`` writes it, stripped; ``scalar``: the same, but
  a JSON object or list is refused.

What is no plain value where one is needed (empty, a JSON object, list, true / false, NaN) is refused
in ``wording.plain_value``'s words. SQL settles the usual cells (text, and names of printable ASCII
within the limit); every other distinct value is judged once in Python (``cell``) and the verdicts are
joined back. The first row and meaning that fail, in file order, get ``cell``'s error with their line;
or, ``deferred``, each row keeps the place of its first failing meaning (``bad``) for the caller to
order among its own checks, and ``fail`` words it.

``extra``: the row's other columns as one JSON object, keys sorted, in DuckDB's spelling (compact, text
unescaped), with the ``fixed`` entries of a key the row lacks: the same JSON as the staged SQL's
``json.dumps`` spelling of a regular file, not the same bytes.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from lsqa.errors import InputError
from lsqa.store import bulk
from lsqa.store.importers import lines as staging
from lsqa.store.importers.rows import ascii_text, json_text, sql_text, strip
from lsqa.store.importers.table import OBJECTS, stage_objects
from lsqa.store.importers.wording import plain_value, text_list
from lsqa.text.names import MAX_NAME_CHARS, name_problem, shown_name

CELLS, VALUES = "lsqa_import_cells", "lsqa_import_values"
RULES = ("name", "text", "plain", "texts", "any", "scalar")

# JSON numbers DuckDB may round (beyond 64-bit integers, decimals): read from the row's own text.
_ROUNDED = ("DOUBLE", "UBIGINT", "HUGEINT")


def name(path: Path, line: int | None, column: str, value: str) -> str:
    """A system, rater or question id under the one name rule (``lsqa.text.names``), or InputError."""
    problem = name_problem(value)
    if problem:
        raise InputError(path, f"column {column}: {shown_name(value)} {problem}", line=line,
                         hint=f"use one line of visible text, at most {MAX_NAME_CHARS} characters")
    return value


def cell(path: Path, line: int | None, column: str, value, *, rule: str = "name") -> str:
    """One value of a meaning as the import stores it, by its ``rule`` (the module's docstring), or
    InputError naming the line."""
    if rule in ("any", "scalar"):
        if rule == "scalar" and isinstance(value, (dict, list)):
            plain_value(path, line, column, value)
        return str(value).strip()
    if rule == "texts":
        return json.dumps(text_list(path, line, column, value))
    if isinstance(value, float) and rule != "text" and math.isfinite(value) and value.is_integer():
        value = int(value)
    out = plain_value(path, line, column, value, numbers=rule == "text" or not isinstance(value, float))
    if rule == "name":
        name(path, line, column, out)
    return out


def _at(column: str) -> str:
    return sql_text('$."' + column + '"')


def _settled(rule: str) -> tuple[str, str]:
    """SQL of (whether a chosen cell is settled without Python, its value then) under ``rule``, over the
    cell's ``type``, ``text`` and ``stripped`` text (computed once: repeated in each test, the expressions
    made the statement slow to plan)."""
    stripped = "stripped"
    if rule == "texts":
        return f"type = 'VARCHAR' AND {ascii_text('text')}", f"CASE WHEN type = 'VARCHAR' THEN '[' || {json_text('text')} || ']' END"
    if rule in ("any", "scalar"):
        return "type IN ('VARCHAR', 'BIGINT')", f"CASE WHEN type = 'VARCHAR' THEN {stripped} WHEN type = 'BIGINT' THEN text END"
    value = f"CASE WHEN type = 'VARCHAR' THEN {stripped} END"
    if rule == "name":
        return (f"type = 'VARCHAR' AND {stripped} <> '' AND {ascii_text(stripped)} "
                f"AND length({stripped}) <= {MAX_NAME_CHARS}"), value
    return f"type = 'VARCHAR' AND {stripped} <> ''", value


def stage(con, path: Path, aliases: dict[str, tuple[str, ...]], *, rules: dict[str, str] | None = None,
          optional: tuple[str, ...] = (), required: tuple[str, ...] = (), deferred: bool = False,
          extra: bool = True, fixed: dict[str, str] | None = None, objects: bool = False) -> str:
    """TEMP table ``VALUES`` (k, line, one text column per meaning, extra; ``bad`` if ``deferred``) of
    ``path``'s rows in file order, each value checked (see the module's docstring); InputError at the first
    bad row (``deferred``: ``fail`` words it; ``done`` drops what it needs). ``required``: columns every row
    must fill, refused in the table reader's words (a missing column, an empty value) before the aliases
    are looked at; ``objects``: keep the table reader's TEMP table ``OBJECTS`` (k, line, obj) for the
    caller's SQL over the other columns."""
    stage_objects(con, path, required, required_any={m: n for m, n in aliases.items() if m not in optional})
    return checked(con, path, aliases, rules=rules, deferred=deferred, extra=extra, fixed=fixed, objects=objects)


def checked(con, path: Path, aliases: dict[str, tuple[str, ...]], *, rules: dict[str, str] | None = None,
            deferred: bool = False, extra: bool = True, fixed: dict[str, str] | None = None,
            objects: bool = False) -> str:
    """``stage``'s table of the rows the caller staged in ``OBJECTS`` (``table.stage_objects``, its
    ``required`` covering every meaning)."""
    rules = rules or {}
    parts = []
    for order, (meaning, names) in enumerate(aliases.items()):
        rule = rules.get(meaning, "name")
        chosen = "CASE " + " ".join(f"WHEN coalesce(obj ->> {_at(n)}, '') <> '' THEN {sql_text(n)}"
                                    for n in names) + " END"

        def of(f, names=names) -> str:
            return "CASE col " + " ".join(f"WHEN {sql_text(n)} THEN {f(_at(n))}" for n in names) + " END"
        settled, value = _settled(rule)
        whole = "type IN ('ARRAY', 'OBJECT') OR " if rule in ("texts", "any", "scalar") else ""
        parts.append(f"""
            SELECT k, line, {order} AS o, col, {sql_text(rule)} AS rule, type, text,
                   CASE WHEN col IS NULL THEN {sql_text('[]' if rule == 'texts' else '')} ELSE {value} END AS value,
                   CASE WHEN {whole}type IN {_ROUNDED} THEN obj::VARCHAR END AS raw,
                   col IS NULL OR coalesce({settled}, false) AS settled
            FROM (SELECT *, {strip('text')} AS stripped
                  FROM (SELECT k, line, obj, col, {of(lambda p: f'json_type(obj, {p})')} AS type,
                               {of(lambda p: f'obj ->> {p}')} AS text
                        FROM (SELECT k, line, obj, {chosen} AS col FROM {OBJECTS})))""")
    con.execute(f"CREATE OR REPLACE TEMP TABLE {CELLS} AS {' UNION ALL '.join(parts)}")
    unusual = con.execute(f"SELECT DISTINCT col, rule, type, text, raw FROM {CELLS} WHERE NOT settled").fetchall()
    judged = []
    for col, rule, type_, text, raw in unusual:
        try:
            out = cell(path, None, col, _python_value(col, type_, text, raw), rule=rule)
        except InputError:
            out = None
        judged.append({"col": col, "rule": rule, "type": type_, "text": text, "raw": raw, "judged": out})
    if judged:
        import pyarrow

        with bulk.registered(con, pyarrow.Table.from_pylist(judged)) as table:
            con.execute(f"""CREATE OR REPLACE TEMP TABLE {CELLS} AS
                            SELECT c.* REPLACE (CASE WHEN c.settled THEN c.value ELSE j.judged END AS value,
                                                c.settled OR j.judged IS NOT NULL AS settled)
                            FROM {CELLS} c LEFT JOIN {table} j
                              ON NOT c.settled AND c.col = j.col AND c.rule = j.rule AND c.type = j.type
                             AND c.text IS NOT DISTINCT FROM j.text AND c.raw IS NOT DISTINCT FROM j.raw""")
    if not deferred and unusual:  # (every cell settled in SQL: none can fail)
        fail(con, path)
    known = sorted({n for names in aliases.values() for n in names})
    pivot = ", ".join(f"any_value(value) FILTER (o = {order}) AS {meaning}" for order, meaning in enumerate(aliases))
    bad = ", min(o) FILTER (NOT settled) AS bad" if deferred else ""
    if extra:
        entries = f"""SELECT o.k, e.key, e.value::VARCHAR AS value FROM {OBJECTS} o, json_each(o.obj) e
                      WHERE NOT list_contains(?::VARCHAR[], e.key)"""
        for key, value in (fixed or {}).items():
            entries += (f" UNION ALL SELECT k, {sql_text(key)}, {sql_text(json.dumps(value))} FROM {OBJECTS}"
                        f" WHERE json_type(obj, {_at(key)}) IS NULL")
        con.execute(f"""
            CREATE OR REPLACE TEMP TABLE {VALUES} AS
            SELECT v.*, coalesce(x.extra, '{{}}') AS extra
            FROM (SELECT k, any_value(line) AS line, {pivot}{bad} FROM {CELLS} GROUP BY k) v
            LEFT JOIN (SELECT k, '{{' || array_to_string(list(to_json(key)::VARCHAR || ':' || value ORDER BY key), ',')
                                 || '}}' AS extra
                       FROM ({entries}) GROUP BY k) x USING (k)
            ORDER BY k""", [known])
    else:
        con.execute(f"""CREATE OR REPLACE TEMP TABLE {VALUES} AS
                        SELECT k, any_value(line) AS line, {pivot}{bad} FROM {CELLS} GROUP BY k ORDER BY k""")
    if not objects:
        staging.drop(con, OBJECTS)
    if not deferred:
        staging.drop(con, CELLS)
    return VALUES


def fail(con, path: Path, k: int | None = None) -> None:
    """InputError of the first failing meaning of row ``k`` (of the file's first failing row: None), if any."""
    where = "" if k is None else f"AND k = {int(k)}"
    bad = con.execute(f"SELECT line, col, rule, type, text, raw FROM {CELLS} WHERE NOT settled {where} "
                      "ORDER BY k, o LIMIT 1").fetchone()
    if bad:
        line, col, rule, type_, text, raw = bad
        cell(path, line, col, _python_value(col, type_, text, raw), rule=rule)
        raise InputError(path, f"column {col}: not a value this import takes", line=line, hint="write it as text")


def done(con) -> None:
    """Drop what a ``deferred`` stage kept for ``fail``."""
    staging.drop(con, CELLS, VALUES)


def judged_table(con, table: str, columns: dict[str, str], rows: list[dict]) -> None:
    """TEMP table ``table`` of ``rows`` (dicts of ``columns``' names), each column of its SQL type: the
    verdicts Python gave on a few distinct values, for SQL to join back."""
    import pyarrow

    data = pyarrow.Table.from_pydict({c: [r[c] for r in rows] for c in columns})
    with bulk.registered(con, data) as name:
        con.execute(f"CREATE OR REPLACE TEMP TABLE {table} AS SELECT "
                    + ", ".join(f"CAST({c} AS {kind}) AS {c}" for c, kind in columns.items()) + f" FROM {name}")


def _python_value(col: str, type_: str, text: str | None, raw: str | None):
    """The Python value of one cell, as the row reader's ``json.loads`` makes it."""
    if raw is not None:
        return json.loads(raw)[col]
    if type_ == "VARCHAR":
        return text
    if type_ == "BIGINT":
        return int(text)
    return {"OBJECT": {}, "ARRAY": [], "BOOLEAN": text == "true", "NULL": None}.get(type_, text)


__all__ = ["RULES", "VALUES", "cell", "checked", "done", "fail", "judged_table", "name", "stage"]
