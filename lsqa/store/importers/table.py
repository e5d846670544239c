"""A CSV, TSV, JSONL or JSON-array table file read by DuckDB, every problem found by SQL and worded once.

The reader of every table file an import or a command reads whole (NarrativeQA's documents and summaries,
errata, the files of ``lsqa rank`` and ``lsqa agreement``, and the files an import's staged SQL does not
take exactly: ``lsqa.store.importers.skeleton``). The file goes into DuckDB as lines
(``lsqa.store.importers.lines``); SQL parses them (JSON by DuckDB's json functions, CSV records by pattern)
into one JSON object per row and finds the first line of each problem, in the order a reader going down
the file meets them; ``lsqa.store.importers.wording`` words it (the same words as the tests' row reader,
tests/support/row_tables.py, the oracle). Python only stats the file, words the one line found bad (Python's csv
or json module on that line alone, for their exact words), and turns DuckDB's checked rows into dicts.

A CSV's records are put together as Python's csv module reads them: each line with a quote is matched against
the fields it may hold, from the start of a record and from inside a quoted value, so a quote inside an unquoted
cell (``5" tall``) is text, as it is to Python (``lsqa.store.importers.rows.csv_records``; tests/store/
test_table_reader.py compares random files with Python's reading).

Format: by suffix (``.csv``, ``.tsv``, ``.jsonl`` / ``.ndjson``, ``.json`` = JSON array or JSONL),
otherwise sniffed from the first character (``{`` JSONL, ``[`` JSON array, else CSV). Column names
are matched case-insensitively and stored lower-case; values of the required columns are stripped
strings; a CSV's cells are stripped text, a JSON row's values what its JSON says.
"""

from __future__ import annotations

import csv
import io
import json
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from lsqa.errors import InputError
from lsqa.store.importers import lines as staging
from lsqa.store.importers import wording
from lsqa.store.importers.rows import PY_WHITESPACE, UNQUOTED_FIELD, csv_field, csv_records, sql_text, strip, tiled
from lsqa.store.importers.wording import MAX_CELL_CHARS, MAX_NESTING, MAX_TABLE_BYTES

LINES, RECORDS, OBJECTS = "lsqa_table_lines", "lsqa_table_records", "lsqa_table_objects"

COMPARISON_COLUMNS = ("system_a", "system_b", "winner")
RATING_COLUMNS = ("item_id", "rater", "label")

# Where Python's str.splitlines cuts a line besides LF (a JSONL line is what splitlines makes of the text).
_LINE_BREAKS = "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
# Python's type names of JSON values, as DuckDB's json_type names them.
PYTHON_TYPE = {"ARRAY": "list", "VARCHAR": "str", "BIGINT": "int", "UBIGINT": "int", "HUGEINT": "int", "DOUBLE": "float",
                "BOOLEAN": "bool", "NULL": "NoneType", "OBJECT": "dict"}


@dataclass
class Table:
    """Rows of a file as dicts (lower-case column names), with the source line of each row."""

    path: str
    columns: list[str]
    rows: list[dict[str, Any]] = field(default_factory=list)
    lines: list[int | None] = field(default_factory=list)
    header_line: int | None = None   # CSV / TSV only

    def __len__(self) -> int:
        return len(self.rows)

    def column(self, name: str) -> list:
        return [r.get(name) for r in self.rows]

    def to_frame(self):
        """The rows as a pandas DataFrame (one column per column name, plus ``line``)."""
        import pandas as pd

        frame = pd.DataFrame(self.rows, columns=self.columns)
        frame["line"] = self.lines
        return frame


def _at(column: str) -> str:
    """SQL of the JSON path of a column (a key of a row's object)."""
    return sql_text('$."' + column + '"')


def _count(con, sql: str, params=()) -> int:
    return int(con.execute(sql, params).fetchone()[0])


def _first(con, sql: str, params=(), *, by: str = "1"):
    """The first row of ``sql`` by its first column (``by``: other columns), or None."""
    return con.execute(f"SELECT * FROM ({sql}) ORDER BY {by} LIMIT 1", params).fetchone()


# ----------------------------------------------------------------------------------- the file as lines


def _check_file(path: Path) -> None:
    """What the file's entry says before any byte is read: there, a regular file, within the size limit."""
    try:
        info = path.stat()
    except FileNotFoundError:
        raise wording.not_found(path) from None
    except OSError as exc:
        raise wording.unreadable(path, exc) from None
    if stat.S_ISDIR(info.st_mode) or not stat.S_ISREG(info.st_mode):
        raise wording.not_a_file(path, folder=stat.S_ISDIR(info.st_mode))
    if info.st_size > MAX_TABLE_BYTES:
        raise wording.too_large(path, info.st_size)
    if not info.st_size:
        raise wording.empty_file(path)


# A character at which Python's splitlines cuts a line besides LF, as a regular expression.
_BREAK = "[" + "".join(f"\\x{{{ord(c):x}}}" for c in _LINE_BREAKS) + "]"


def _load(con, path: Path) -> tuple[str, bool, bool, bool]:
    """TEMP table ``LINES (line, text)``: the file's lines split at LF, a CRLF's CR dropped (text '' for an
    empty line); InputError when DuckDB cannot read it as UTF-8 text (the bytes say where), at a NUL, or
    when no line holds more than whitespace. Returns the first character of the first such line, and, for
    a file that may be JSONL (by its suffix), whether a line holds another line break (``_split_lines``);
    whether a line still holds a CR that is not a CRLF's: Python's csv module (a file opened with
    ``newline=''``) ends a line there too (old Mac line ends, or a lone CR among LF lines), and so does the CSV
    reader here, keeping the CR where a quoted field spans it (``_split_lines``); and whether ``LINES`` has a
    column ``sep``, the break before each line as the file has it (LF or CRLF: a file with a CR), which a
    quoted CSV field over several lines keeps as Python's csv module keeps it."""
    seen = staging.look(path)
    if not staging.load_lines(con, path, LINES, "coalesce(text, '')", seen=seen):
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise wording.unreadable(path, exc) from None
        raise wording.bytes_problem(path, data) or InputError(
            path, "cannot be read as lines of text", hint="export the table again as UTF-8 CSV or JSONL")
    if seen.cr:
        con.execute(f"""
            CREATE OR REPLACE TEMP TABLE {LINES} AS
            SELECT line, CASE WHEN ends_with(text, chr(13)) THEN text[1:-2] ELSE text END AS text,
                   CASE WHEN lag(ends_with(text, chr(13))) OVER (ORDER BY line) THEN chr(13) || chr(10)
                        ELSE chr(10) END AS sep
            FROM {LINES} ORDER BY line""")
    breaks = (f"EXISTS (SELECT 1 FROM {LINES} WHERE regexp_matches(text, '{_BREAK}'))"
              if wording.table_format(path, "{") == "jsonl" else "false")
    nul, first, split, cr = con.execute(f"""
        SELECT (SELECT min(line) FROM {LINES} WHERE contains(text, chr(0))),
               (SELECT ltrim(text, {sql_text(PY_WHITESPACE)})[1] FROM {LINES} WHERE {strip('text')} <> ''
                ORDER BY line LIMIT 1), {breaks},
               EXISTS (SELECT 1 FROM {LINES} WHERE contains(text, chr(13)))""").fetchone()
    if nul is not None:
        raise wording.nul_byte(path, nul)
    if first is None:  # blank: empty when its bytes are ASCII whitespace alone (a BOM or U+3000 is a blank line)
        ascii_blank = not _count(con, f"SELECT count(*) FROM {LINES} WHERE trim(text, {sql_text(_ASCII_SPACE)}) <> ''")
        raise wording.empty_file(path) if ascii_blank and not _starts_with_bom(path) else wording.no_data_rows(path)
    return first, split, cr, seen.cr


# What ``bytes.strip`` takes away: a file of these bytes alone is empty.
_ASCII_SPACE = " \t\n\r\x0b\x0c"


def _starts_with_bom(path: Path) -> bool:
    with open(path, "rb") as f:
        return f.read(3) == b"\xef\xbb\xbf"


def _split_lines(con, pattern: str = _BREAK, sep: str = "\n", *, seps: bool = False) -> None:
    """``LINES (line, text, sep)`` with each line cut at ``pattern`` too, renumbered in file order; ``sep``: the
    break before a line, as ``LINES.sep`` had it (``seps``) or an LF, and ``sep`` before a piece cut from the line
    above. By default as Python's splitlines makes lines, where a line holds another break than LF (a lone CR, a
    form feed, U+2028...: ``_load`` says so)."""
    before = "sep" if seps else "chr(10)"
    con.execute(f"""
        CREATE OR REPLACE TEMP TABLE {LINES} AS
        SELECT row_number() OVER (ORDER BY line, part) AS line, text,
               CASE WHEN part = 1 THEN before ELSE chr({ord(sep)}) END AS sep
        FROM (SELECT line, before, generate_subscripts(parts, 1) AS part, unnest(parts) AS text
              FROM (SELECT line, {before} AS before, regexp_split_to_array(text, '{pattern}') AS parts FROM {LINES}))
        ORDER BY line""")


# ----------------------------------------------------------------------------------- CSV


def _csv(con, path: Path, delimiter: str, seps: bool = False) -> tuple[list[str], int, int]:
    """``OBJECTS (line, k, obj)`` of a CSV or TSV: each record a JSON object of its stripped cells under the
    header's names; (header, its line, the rows: CREATE TABLE AS answers how many it made). Python's csv module
    (strict) is the dialect: a field bare or wholly quoted (``""`` a quote), a record over several lines where a
    quoted field holds a line break (an LF, or with ``seps`` the one ``LINES.sep`` names: it stays in the field)."""
    d = {"\t": "\\t"}.get(delimiter, delimiter)
    csv_records(con, LINES, RECORDS, sep="l.sep" if seps else "chr(10)", delimiter=d)
    field_sql = csv_field(d)
    con.execute(f"""
        CREATE OR REPLACE TEMP TABLE {RECORDS} AS
        SELECT first, line, open, text, tiled, longest, list_transform(fields, lambda c: {strip('c')}) AS cells
        FROM (SELECT first, line, open, text, {tiled('found', 'text')} AS tiled,
                     list_max(list_transform(fields, lambda f: length(f))) AS longest, fields
              FROM (SELECT *, list_transform(found, lambda f: {UNQUOTED_FIELD}) AS fields
                    FROM (SELECT *, regexp_extract_all(text || E'{d}', '(?:{field_sql}){d}') AS found FROM {RECORDS})))
        WHERE open OR NOT tiled OR NOT list_bool_and(list_transform(cells, lambda c: c = ''))  -- a blank one is skipped
        ORDER BY line""")
    # Python's csv reader meets the problems in file order: the first line of any of them is named. Asked
    # in one statement: the first record it cannot split, the header (the first record before that one),
    # and the first record after the header (before that one) of another number of fields.
    before = "first < coalesce((SELECT first FROM b), first + 1)"
    bad, header_row, ragged = con.execute(f"""
        WITH b AS (SELECT first, line, text, open FROM {RECORDS} WHERE open OR NOT tiled OR longest > {MAX_CELL_CHARS}
                   ORDER BY first LIMIT 1),
             h AS (SELECT line, cells FROM {RECORDS} WHERE {before} ORDER BY line LIMIT 1)
        SELECT (SELECT (first, line, text, open) FROM b), (SELECT (line, cells) FROM h),
               (SELECT (line, len(cells)) FROM {RECORDS}
                WHERE line > (SELECT line FROM h) AND len(cells) <> (SELECT len(cells) FROM h) AND {before}
                ORDER BY line LIMIT 1)""").fetchone()
    if header_row is None:
        _csv_error(path, bad, delimiter)
    header_line, header = header_row[0], [c.strip().lower() for c in header_row[1]]
    dupes = sorted({c for c in header if header.count(c) > 1})
    if dupes:
        raise wording.duplicate_columns(path, header_line, dupes)
    if ragged:
        raise wording.ragged_row(path, ragged[0], ragged[1], len(header))
    if bad:
        _csv_error(path, bad, delimiter)
    pairs = ", ".join(f"{sql_text(name)}, cells[{i + 1}]" for i, name in enumerate(header))
    n = con.execute(f"""CREATE OR REPLACE TEMP TABLE {OBJECTS} AS
                        SELECT line, line AS k, json_object({pairs}) AS obj FROM {RECORDS} WHERE line > ? ORDER BY line""",
                    [header_line]).fetchone()[0]
    staging.drop(con, RECORDS)
    return header, header_line, n


def _csv_error(path: Path, bad: tuple, delimiter: str) -> None:
    """The error of the first record the SQL cannot split (``bad``: first line, last line, text, open),
    in the words of Python's csv module, which names what it met there."""
    first, last, text, is_open = bad
    csv.field_size_limit(MAX_CELL_CHARS)
    reader = csv.reader(io.StringIO(text + "\n" if not is_open else text, newline=""), delimiter=delimiter, strict=True)
    try:
        for _ in reader:
            pass
    except csv.Error as exc:
        # The file ends inside the quote: Python's csv names the file's last line, blank lines included (the
        # record's text ends at its last line's text, so a blank line after it adds no line of its own there).
        at_end = is_open and str(exc) == "unexpected end of data"
        raise wording.malformed_csv(path, last if at_end else first + reader.line_num - 1, str(exc)) from None
    if is_open:
        raise wording.malformed_csv(path, last, "unexpected end of data")
    # Python read the record the SQL could not split: its fields (``csv_field``) are meant to be Python's, and
    # no random file of the tests has found one where they are not.
    raise wording.malformed_csv(path, last, "its fields could not be told apart")


# ----------------------------------------------------------------------------------- JSON


def _jsonl(con, path: Path, *, array: bool, breaks: bool) -> tuple[list[str], int]:
    """``OBJECTS (line, k, obj)`` of a JSONL file (or of a JSON array's elements, line NULL, ``k`` the
    element's index): every object checked in SQL as Python's json module with lsqa's rules reads it,
    the first line of any problem named; the columns in order of first appearance, and the rows."""
    if array:
        text = _first(con, f"SELECT 1, string_agg(text, chr(10) ORDER BY line) FROM {LINES}")[1]
        con.execute(f"CREATE OR REPLACE TEMP TABLE {LINES} AS SELECT NULL::BIGINT AS line, 0 AS k, ? AS text", [text])
        invalid = _invalid_json(con, path, hint=wording.ARRAY_HINT)
        if invalid:
            raise invalid[1]
        if _count(con, f"SELECT count(*) FROM {LINES} WHERE json_type(text) <> 'ARRAY'"):
            raise wording.not_an_array(path)
        con.execute(f"""CREATE OR REPLACE TEMP TABLE {LINES} AS
                        SELECT NULL::BIGINT AS line, generate_subscripts(items, 1) - 1 AS k, unnest(items) AS text
                        FROM (SELECT json_extract(text, '$[*]') AS items FROM {LINES})""")
    else:
        if breaks:
            _split_lines(con)  # a JSONL line's break is no part of any value: no ``sep`` kept
        con.execute(f"CREATE OR REPLACE TEMP TABLE {LINES} AS SELECT line, line AS k, text FROM {LINES} "
                    f"WHERE {strip('text')} <> '' ORDER BY line")
    # Python's reader meets the problems line by line: the first line of any of them is named. The json
    # functions run only on the lines before the first that is not JSON.
    found = [f for f in [_invalid_json(con, path, hint=wording.JSONL_HINT)] if f]
    valid = f"k < {found[0][0]}" if found else "true"
    not_object = _first(con, f"SELECT k, line, json_type(text) FROM {LINES} WHERE {valid} AND json_type(text) <> 'OBJECT'")
    if not_object:
        k, line, type_ = not_object
        found.append((k, wording.element_not_an_object(path, k) if array else
                      wording.not_an_object(path, line, PYTHON_TYPE.get(type_, type_.lower()))))
        valid = f"k < {min(f[0] for f in found)}"
    found += _objects_checked(con, path, valid)
    if found:
        raise min(found, key=lambda f: f[0])[1]
    keys = f"list_transform(json_keys(text), lambda k: lower({strip('k')}))"
    columns = [r[0] for r in con.execute(f"""
        SELECT c FROM (SELECT k, generate_subscripts(cs, 1) AS i, unnest(cs) AS c FROM (SELECT k, {keys} AS cs FROM {LINES}))
        GROUP BY c ORDER BY min((k, i))""").fetchall()]
    # Every key already clean (lower case, stripped); {} has no key to clean.
    clean = f"coalesce(list_bool_and(list_transform(json_keys(text), lambda k: k = lower({strip('k')}))), true)"
    n = con.execute(f"""
        CREATE OR REPLACE TEMP TABLE {OBJECTS} AS
        SELECT line, k, text::JSON AS obj FROM {LINES} WHERE {clean}
        UNION ALL
        SELECT any_value(l.line), l.k,  -- the keys in the file's order, as Python's json module gives them
               to_json(map(list(lower({strip('e.key')}) ORDER BY e.id), list(e.value ORDER BY e.id)))
        FROM {LINES} l, json_each(l.text) e WHERE NOT {clean.replace('text', 'l.text')} GROUP BY l.k""").fetchone()[0]
    return columns, n


# What Python's json module refuses and DuckDB's takes (a comma before a closing bracket, a comment), and
# two objects or arrays in one text (one inside another, or side by side), outside the text's strings.
_AFTER_COMMA, _TWO_OPEN = "',\\s*[\\]}]|/[*/]'", "'[\\[{].*[\\[{]'"
_STRUCTURE = """regexp_replace(text, '"(?:[^"\\\\]|\\\\.)*"', '""', 'g')"""  # the text with every string ""


def _invalid_json(con, path: Path, *, hint: str):
    """(k, error) of the first text of ``LINES`` that is not JSON as Python's json module reads it, or None:
    one DuckDB finds invalid, or that holds what DuckDB takes and Python does not (a comma before a
    closing bracket, a comment), worded by ``wording.parse_json`` (a lone surrogate, too... are its words)."""
    bad = _first(con, f"""SELECT k, line, text FROM {LINES}
                          WHERE NOT json_valid(text)
                             -- (the text outside its strings only when the whole text has one: the faster test)
                             OR (regexp_matches(text, {_AFTER_COMMA}) AND regexp_matches({_STRUCTURE}, {_AFTER_COMMA}))""")
    if not bad:
        return None
    try:
        wording.parse_json(path, bad[2], bad[1], hint=hint)
    except InputError as exc:
        return bad[0], exc
    return bad[0], InputError(path, "invalid JSON", line=bad[1], hint=hint)


def _objects_checked(con, path: Path, valid: str) -> list[tuple[int, InputError]]:
    """(k, error) of the first object (among the ``valid`` ones) that breaks a rule past JSON's syntax,
    each found by SQL: no key twice in one object (at any depth) nor two keys that are one column (case,
    spaces), no nesting deeper than ``MAX_NESTING``, no text value of a column above ``MAX_CELL_CHARS`` or
    holding NUL. Only the objects that could break one are looked into."""
    names = f"list_transform(json_keys(text), lambda k: lower({strip('k')}))"
    suspects = con.execute(f"""CREATE OR REPLACE TEMP TABLE {RECORDS} AS
                    SELECT line, k, text, regexp_replace({_STRUCTURE}, '[^\\[\\]{{}}]', '', 'g') AS brackets
                    FROM {LINES}
                    WHERE {valid} AND (length(text) > {MAX_CELL_CHARS} OR contains(text, '\\u0000')
                                       OR len(list_distinct({names})) <> len(json_keys(text))
                                       OR (regexp_matches(text, {_TWO_OPEN}) AND regexp_matches({_STRUCTURE}, {_TWO_OPEN})))"""
                           ).fetchone()[0]  # (CREATE TABLE AS answers the rows it made)
    if not suspects:  # most files: no object could break a rule, and none of the looks below is planned
        return []
    found: list[tuple[int, int, InputError]] = []
    # Depth: a pass takes every innermost pair away; what is left after MAX_NESTING passes nests deeper.
    # (Looked at first: DuckDB's json_tree of a text 100,000 deep would hold 100,000 paths of its depth.)
    peeled = "brackets"
    for _ in range(MAX_NESTING):
        peeled = f"regexp_replace({peeled}, '\\{{\\}}|\\[\\]', '', 'g')"
    con.execute(f"""CREATE OR REPLACE TEMP TABLE {RECORDS} AS
                    SELECT *, length(brackets) > {2 * MAX_NESTING} AND {peeled} <> '' AS deep FROM {RECORDS}""")
    deep = _first(con, f"SELECT k, line FROM {RECORDS} WHERE deep")
    if deep:
        found.append((deep[0], 0, wording.too_deep(path, deep[1])))
    twice = _first(con, f"""SELECT r.k, r.line, t.key FROM (SELECT * FROM {RECORDS} WHERE NOT deep) r, json_tree(r.text) t
                            WHERE t.parent IS NOT NULL
                            GROUP BY r.k, r.line, t.parent, t.key HAVING count(*) > 1""")
    if twice:
        found.append((twice[0], 0, wording.key_twice(path, twice[1], twice[2])))
    spelled = _first(con, f"SELECT k, line, json_keys(text) FROM {RECORDS} WHERE len(list_distinct({names})) <> len(json_keys(text))")
    if spelled:
        seen: set[str] = set()
        for key in spelled[2]:
            if key.strip().lower() in seen:
                found.append((spelled[0], 1, wording.column_twice(path, spelled[1], key.strip().lower(), key)))
                break
            seen.add(key.strip().lower())
    # A text value, or a text in a list value, as Python's check of sizes walks them (key by key).
    texts = f"""
        SELECT r.k, r.line, e.id, e.key, s FROM {RECORDS} r, json_each(r.text) e,
             unnest(CASE WHEN e.type = 'VARCHAR' THEN [e.value ->> '$']
                         WHEN e.type = 'ARRAY' THEN list_transform(
                             list_filter(range(json_array_length(e.value)::BIGINT),
                                         lambda i: json_type(e.value, '$[' || i || ']') = 'VARCHAR'),
                             lambda i: e.value ->> ('$[' || i || ']'))
                         ELSE []::VARCHAR[] END) AS u(s)"""
    big = _first(con, f"SELECT k, id, line, key, length(s), contains(s, chr(0)) FROM ({texts}) "
                      f"WHERE length(s) > {MAX_CELL_CHARS} OR contains(s, chr(0))", by="1, 2")  # key by key
    if big:
        _, _, line, key, chars, _nul = big
        column = key.strip().lower()
        found.append((big[0], 2, wording.too_long(path, line, column, chars) if chars > MAX_CELL_CHARS
                      else wording.nul_in_value(path, line, column)))
    staging.drop(con, RECORDS)
    return [(k, error) for k, _, error in sorted(found, key=lambda f: f[:2])[:1]]


# ----------------------------------------------------------------------------------- the table


def _stage(con, path: Path) -> tuple[str, list[str], int | None]:
    """``OBJECTS`` of the file (its format, columns and header line); InputError at the first problem."""
    _check_file(path)
    first, breaks, cr, seps = _load(con, path)
    kind = wording.table_format(path, first)
    if kind in ("csv", "tsv"):
        if cr:
            _split_lines(con, "\\x{d}", "\r", seps=seps)
        columns, header_line, n = _csv(con, path, "," if kind == "csv" else "\t", seps=seps)
    else:
        (columns, n), header_line = _jsonl(con, path, array=kind == "json", breaks=breaks), None
    staging.drop(con, LINES)
    if not n:
        raise wording.no_data_rows(path)
    return kind, columns, header_line


def _require(con, path: Path, kind: str, columns: list[str], header_line: int | None, required: Sequence[str],
             required_any: dict[str, Sequence[str]]) -> None:
    """The first row without a value ``required`` needs, or with one that is no plain value, worded by
    ``wording.plain_value``; then the first without any of ``required_any``'s alternatives."""
    if kind in ("csv", "tsv"):
        missing = [c for c in required if c not in columns]
        if missing:
            raise wording.missing_columns(path, header_line, missing, columns)
    checks = []
    for order, col in enumerate(required):
        at = _at(col)
        # (Each cell's type and text taken once, below: repeated in each test, they made the statement slow to plan.)
        checks.append(f"""
            SELECT k, line, {order} AS o, {sql_text(col)} AS col, type, value, json_keys(obj) AS present
            FROM (SELECT k, line, obj, json_type(obj, {at}) AS type, obj ->> {at} AS value FROM {OBJECTS})
            WHERE type IS NULL OR type IN ('NULL', 'OBJECT', 'ARRAY', 'BOOLEAN')
               OR (type = 'VARCHAR' AND {strip('value')} = '')
               OR (type = 'DOUBLE' AND NOT isfinite(TRY_CAST(value AS DOUBLE)))""")
    # Each meaning's first row without any of its alternatives ([line]: a JSON array's row has none), asked
    # in the same statement as the first row of the checks above; the first meaning that has one is named.
    lacking = [f"""(SELECT [line] FROM {OBJECTS}
                    WHERE NOT ({' OR '.join(f"coalesce(obj ->> {_at(a)}, '') <> ''" for a in alternatives)})
                    ORDER BY k LIMIT 1)""" for alternatives in required_any.values()]
    first = [f"""(SELECT (k, line, o, col, type, value, present) FROM ({' UNION ALL '.join(checks)})
                  ORDER BY k, o LIMIT 1)"""] if checks else []
    if not first + lacking:
        return
    found = con.execute(f"SELECT {', '.join(first + lacking)}").fetchone()
    bad = found[0] if checks else None
    if bad:
        _, line, _, col, type_, value, present = bad
        if type_ is None:
            raise wording.missing_column(path, line, col, present)
        wording.plain_value(path, line, col, _json_value(con, bad))
    for (name, alternatives), bad in zip(required_any.items(), found[len(first):], strict=True):
        if bad is not None:
            raise wording.missing_any(path, bad[0], name, alternatives)


def _json_value(con, bad: tuple):
    """The Python value of the offending cell (one value, for its words)."""
    _, _, _, col, type_, value, _ = bad
    if type_ == "VARCHAR":
        return value
    if type_ == "DOUBLE":
        return float(value)
    return {"NULL": None, "OBJECT": {}, "ARRAY": [], "BOOLEAN": value == "true"}.get(type_, value)


def _rows(con, required: Sequence[str]) -> tuple[list[int | None], list[dict]]:
    """The staged rows as dicts, the required columns' values as stripped text. Every row was checked in
    SQL: its JSON text, as DuckDB hands it back, becomes Python values with ``json.loads`` (the C decoder
    keeps what DuckDB's types would round: a 23-digit integer, the keys' order)."""
    lines, rows = [], []
    decode = json.loads
    for line, text in con.execute(f"SELECT line, obj::VARCHAR FROM {OBJECTS} ORDER BY k").fetchall():
        row = decode(text)
        for col in required:
            row[col] = str(row[col]).strip()
        lines.append(line)
        rows.append(row)
    return lines, rows


def read_table(path: str | Path, required: Sequence[str] = (), *,
               required_any: dict[str, Sequence[str]] | None = None, check=None) -> Table:
    """Read a CSV / TSV / JSONL / JSON-array file; check that ``required`` columns are present and
    non-empty in every row (their values become stripped strings), and that each row has one of the
    alternatives of each ``required_any`` meaning (e.g. question_id or item_id). InputError names the
    file and the first line at fault. ``check(con, path)``: the caller's checks over TEMP table ``OBJECTS``
    (line, k: the row's place, obj: the row as JSON), after these."""
    from lsqa.store.db import scratch

    path = Path(path)
    required = [c.strip().lower() for c in required]
    with scratch() as con:  # (its TEMP tables go with the connection)
        columns, header_line = stage_objects(con, path, required, required_any=required_any)
        if check is not None:
            check(con, path)
        lines, rows = _rows(con, required)
    return Table(str(path), columns, rows, lines, header_line)


def stage_objects(con, path: Path, required: Sequence[str] = (), *,
                  required_any: dict[str, Sequence[str]] | None = None) -> tuple[list[str], int | None]:
    """``read_table``'s reading and checks on ``con`` (an import's write, say), its rows left in TEMP table
    ``OBJECTS`` (line, k: the row's place, obj: the row as JSON, keys lower-case) for the caller's SQL;
    (columns, header line). ``required``: lower-case names."""
    kind, columns, header_line = _stage(con, path)
    _require(con, path, kind, columns, header_line, list(required), required_any or {})
    return columns, header_line


# ----------------------------------------------------------------------------------- the statistics commands' tables


def _text(column: str) -> str:
    """SQL of a required column's value as the rows hold it (stripped text)."""
    return strip(f"(obj ->> {_at(column)})")


def load_comparisons(path: str | Path) -> Table:
    """Pairwise verdicts: ``system_a, system_b, winner`` (+ optional ``question_id``).

    ``winner`` is normalised to 'A', 'B', 'tie' or 'none'; the first row with another winner, or with one
    system on both sides, is found by SQL."""
    from lsqa.vocabulary import WINNER_HINT, WINNERS

    by_key = {w.lower(): w for w in WINNERS}

    def check(con, path: Path) -> None:
        found = _first(con, f"""
            SELECT k, line, NOT list_contains(?::VARCHAR[], lower({_text('winner')})), {_text('winner')},
                   {_text('system_a')}
            FROM {OBJECTS}
            WHERE NOT list_contains(?::VARCHAR[], lower({_text('winner')})) OR {_text('system_a')} = {_text('system_b')}""",
                       [list(by_key), list(by_key)])
        if found and found[2]:
            raise InputError(path, f"unknown winner value {found[3]!r}", line=found[1], hint=WINNER_HINT)
        if found:
            raise InputError(path, f"system_a and system_b are both {found[4]!r}", line=found[1],
                             hint="fix the names: a system cannot be compared with itself")

    table = read_table(path, COMPARISON_COLUMNS, check=check)
    for row in table.rows:
        row["winner"] = by_key[row["winner"].lower()]
        if row.get("question_id") is not None and not isinstance(row["question_id"], str):
            row["question_id"] = str(row["question_id"])
    return table


def load_ratings(path: str | Path) -> Table:
    """Labels in long format: ``item_id, rater, label``; one label per (item, rater): the first row that
    repeats one is found by SQL."""

    def check(con, path: Path) -> None:
        twice = _first(con, f"""
            SELECT k, line, item, rater, first_line FROM (
                SELECT k, line, {_text('item_id')} AS item, {_text('rater')} AS rater,
                       min(k) OVER w AS first_k, arg_min(line, k) OVER w AS first_line
                FROM {OBJECTS} WINDOW w AS (PARTITION BY {_text('item_id')}, {_text('rater')}))
            WHERE k > first_k""")
        if twice:
            _, line, item, rater, first = twice
            where = f" (first on line {first})" if first else ""
            raise InputError(path, f"rater {rater!r} labelled item {item!r} twice{where}", line=line,
                             hint="keep one label per item and rater")

    return read_table(path, RATING_COLUMNS, check=check)


__all__ = ["COMPARISON_COLUMNS", "OBJECTS", "PYTHON_TYPE", "RATING_COLUMNS", "Table", "load_comparisons", "load_ratings", "read_table",
           "stage_objects"]
