"""A regular CSV or JSONL file's rows in a DuckDB table, fast, read exactly as ``lsqa.store.importers.table`` reads them.

Every import stages its file here (``lsqa.store.importers.skeleton``); this module turns the file into
TEMP table ``ROWS``: ``line`` (the line the row importer names), one text column per known column
name (NULL when the row has no such column) and, when asked, ``extra``: the other columns as
``json.dumps(extra, sort_keys=True)`` writes them. It raises ``Declined`` for any file it cannot read
exactly as the row reader does; the importer then has that reader word its error.

What it reads (the rest is declined):

- CSV: the header on line 1, plain ASCII on one line, each name once. Records as Python's ``csv``
  module (``strict``, ``doublequote``) splits them: a field is either bare (no quote, no comma) or
  wholly quoted (``""`` for a quote; commas and newlines inside). Values are stripped of Python's
  whitespace (``str.strip``: 29 characters, ``PY_WHITESPACE``). Any text but NUL; a carriage return
  only as a CRLF line end (inside a quoted field it stays in the value, as Python's csv keeps it).
- JSONL: each non-blank line one flat object whose keys are plain ASCII (no escape) and whose values
  are JSON strings (escapes allowed, except ``\\u0000`` and surrogates) or, for the columns the
  importer names as ``numbers``, whole numbers written plainly (``0``, ``17``: no sign, fraction or
  exponent; the column then holds the digits); no control character and no line separator outside
  escapes (Python's ``splitlines`` would cut the line there); CRLF line ends.
- Either: no record longer than the row reader's limit for one value (a shorter one cannot hold a
  value above it), and ``extra`` values in plain ASCII (``json.dumps`` escapes the rest).
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

from lsqa.store.importers import lines as staging
from lsqa.store.importers.lines import Declined

LINES, RECORDS, ROWS = "lsqa_import_lines", "lsqa_import_records", "lsqa_import_rows"

# Python's str.strip() without arguments strips these (str.isspace): the csv reader's cells and the
# importers' values are stripped with it, so DuckDB's trim gets the same set.
PY_WHITESPACE = "".join(c for c in map(chr, range(0x110000)) if c.isspace())

# What a blank JSONL line may hold: Python's whitespace (the row reader strips it), without the characters
# splitlines cuts a line at and the other control characters (both declined wherever they are).
_BLANK_LINE = "".join(c for c in PY_WHITESPACE if len(f"a{c}b".splitlines()) == 1 and (c == "\t" or ord(c) >= 0x20))

# The most distinct keys a JSONL file may use across its lines (each becomes a column expression).
MAX_JSON_KEYS = 64
# The most distinct lists of keys (in their order) checked in Python; a file with more is checked in SQL.
MAX_KEY_LISTS = 1000

# A CSV field: wholly quoted (a quote doubled inside) or bare.
_FIELD = '"(?:[^"]|"")*"|[^,"]*'
# A JSON string value (escapes but not NUL nor a lone surrogate; no control character, nor a character at
# which Python's splitlines cuts a line) and a key (plain ASCII, no escape).
_JSON_STRING = (r'"(?:[^"\\\x00-\x1f\x{85}\x{2028}\x{2029}]|\\["\\/bfnrt]|\\u(?:[0-9a-cA-Ce-fE-F][0-9a-fA-F]{3}|[dD][0-7][0-9a-fA-F]{2})'
                r'|\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2})*"')
_JSON_KEY = r'"[ !#-\[\]-~]*"'
_PAIR = f"[ \\t]*{_JSON_KEY}[ \\t]*:[ \\t]*{_JSON_STRING}[ \\t]*"
# A JSON whole number as json.loads reads it to a Python int without question (ten digits at most).
_JSON_WHOLE = "(?:0|[1-9][0-9]{0,9})"


def _flat_object(numbers: tuple[str, ...]) -> str:
    """The pattern of a JSONL line: a flat object of string values, and of whole numbers for the keys
    ``numbers`` (in any case, with spaces around them: the row reader strips and lowers a key)."""
    pair = _PAIR
    if numbers:
        keys = "|".join("".join(f"[{c.lower()}{c.upper()}]" if c.isalpha() else re.escape(c) for c in name)
                        for name in numbers)
        pair = f"(?:{_PAIR}|[ \\t]*\" *(?:{keys}) *\"[ \\t]*:[ \\t]*{_JSON_WHOLE}[ \\t]*)"
    return f"[ \\t]*\\{{(?:{pair}(?:,{pair})*|[ \\t]*)\\}}[ \\t]*"


def sql_text(value: str) -> str:
    """``value`` as an SQL string literal."""
    return "'" + value.replace("'", "''") + "'"


def strip(name: str) -> str:
    """SQL of Python's ``name.strip()`` (``name`` a column or a lambda's variable): DuckDB's trim with a
    set of characters is the slow part of a staged import, so only a value that begins or ends with
    one of them pays it."""
    ws = sql_text(PY_WHITESPACE)
    return (f"CASE WHEN contains({ws}, left({name}, 1)) OR contains({ws}, right({name}, 1)) "
            f"THEN trim({name}, {ws}) ELSE {name} END")


def json_text(expr: str) -> str:
    """SQL of json.dumps(``expr``) for printable ASCII text: only " and \\ are escaped."""
    return f"""('"' || replace(replace({expr}, '\\', '\\\\'), '"', '\\"') || '"')"""


def ascii_text(expr: str) -> str:
    """SQL: ``expr`` is printable ASCII (a name the one name rule takes whole, text json.dumps keeps)."""
    return f"regexp_full_match({expr}, '[\\x20-\\x7e]*')"


def beyond_ascii(expr: str) -> str:
    """SQL: ``expr`` holds a character outside ASCII, as Python's ``not str.isascii()`` says. Names that are all
    ASCII never look alike (``lsqa.text.names.lookalikes`` compares them with non-ASCII names only), so an import
    whose names and the workspace's are all ASCII reads none of them for its look-alike notes."""
    return f"regexp_matches({expr}, '[^\\x00-\\x7f]')"


def stage_rows(con, path: Path, known: tuple[str, ...], max_cell_chars: int, *, extra: bool,
               fixed: dict[str, str] | None = None, numbers: tuple[str, ...] = ()) -> None:
    """The rows of ``path`` in TEMP table ``ROWS`` (see the module's docstring), or Declined.
    ``known``: the lower-case column names the importer reads; ``extra``: also the others' JSON, with
    the ``fixed`` keys and values besides (the same in every row: ``import-judgments`` keeps the file's
    path as ``imported_from``). A file with a column named like a fixed key is declined: the row
    importer lets the file's value win, which is rare enough to leave to it. ``numbers``: known columns
    whose JSONL value may be a plain whole number (NarrativeQA's ``q_index``), read as its digits."""
    fixed = fixed or {}
    if not set(numbers) <= set(known):
        raise ValueError("numbers must be known columns: json.dumps would write an extra number unquoted")
    seen = staging.look(path)
    if not staging.load_lines(con, path, LINES, seen=seen):
        raise Declined
    # A Declined rolls the write's transaction back, and the TEMP tables made in it with it.
    if path.suffix.lower() == ".csv":
        _csv_rows(con, path, known, max_cell_chars, extra, fixed, seen)
    else:
        _jsonl_rows(con, known, max_cell_chars, extra, fixed, numbers, seen)
    staging.drop(con, LINES)


def _line_end(expr: str) -> str:
    """SQL of ``expr`` without the ``\r`` of a CRLF line end (Python reads ``\r\n`` as one line end)."""
    return f"CASE WHEN ends_with({expr}, chr(13)) THEN {expr}[1:-2] ELSE {expr} END"


def _count(con, sql: str) -> int:
    return int(con.execute(sql).fetchone()[0])


# A CSV field's value from its match, which ends with the delimiter after it: a quoted field's text (``""`` one
# quote) or a bare one.
UNQUOTED_FIELD = """CASE WHEN starts_with(f, '"') THEN replace(f[2:-3], '""', '"') ELSE f[1:-2] END"""


def tiled(found: str, text: str) -> str:
    """SQL: whether the matches ``found`` (each field with the delimiter after it) cover ``text`` with a delimiter
    added exactly. regexp_extract_all skips what does not match, so a shorter total means the record is not one of
    bare and quoted fields (a quote inside a bare field, text after a closing quote)."""
    return f"coalesce(list_sum(list_transform({found}, lambda q: strlen(q))), 0) = strlen({text}) + 1"


def csv_field(delimiter: str) -> str:
    """The regex of one CSV field as Python's csv module (strict, ``doublequote``) reads it, ``delimiter``
    written for a regex (``\\t`` for a tab): wholly quoted (``""`` a quote; any break inside), bare (not
    starting with a quote, no delimiter or break; a quote further in is text), or empty."""
    return f'"(?:[^"]|"")*"|[^{delimiter}"\\n][^{delimiter}\\n]*|'


def _line_states(text: str, delimiter: str) -> tuple[str, str]:
    """SQL of where a CSV line (``text``, its break taken off) leaves the reader: ``'o'`` outside a quoted field (its
    record ends there), ``'i'`` inside one (the record goes on), ``'e'`` at an error of Python's strict csv (a
    character after a closing quote), once from the start of a record and once from inside a quoted field.
    Each is a full match of the line against the fields it may hold, so a quote inside a bare field is text."""
    d, field = delimiter, csv_field(delimiter)
    rest, opened, inside = f"(?:{d}(?:{field}))*", '"(?:[^"]|"")*', '(?:[^"]|"")*'
    from_out = (f"CASE WHEN regexp_full_match({text}, '(?:{field}){rest}') THEN 'o' "
                f"WHEN regexp_full_match({text}, '(?:(?:{field}){d})*{opened}') THEN 'i' ELSE 'e' END")
    from_in = (f"CASE WHEN regexp_full_match({text}, '{inside}') THEN 'i' "
               f"WHEN regexp_full_match({text}, '{inside}\"{rest}') THEN 'o' "
               f"WHEN regexp_full_match({text}, '{inside}\"{rest}{d}{opened}') THEN 'i' ELSE 'e' END")
    return from_out, from_in


def _state_changes(source: str, after: int, delimiter: str) -> str:
    """SQL of the lines of ``source`` past ``after`` where a CSV reader's state changes (it ends the line inside a
    quoted field it started outside, or the other way round), a bare field's quotes being text. Only a line with a
    quote can change the state; what it does is a function of the state it starts in (``_line_states``). The
    state each such line starts in follows from the last line before it that sets the state whatever it starts
    in, and the number of lines since that turn it over (window functions, no running loop)."""
    from_out, from_in = _line_states("t", delimiter)
    # An error ends its record (Python's reader stops there; the record's fields do not tile, and the table
    # reader words it): for the state after it, outside.
    return f"""
        WITH c AS (SELECT line, if(from_out = 'i', 'i', 'o') AS from_out, if(from_in = 'i', 'i', 'o') AS from_in
                   FROM (SELECT line, {from_out} AS from_out, {from_in} AS from_in
                         FROM (SELECT line, {_line_end("coalesce(text, '')")} AS t FROM {source}
                               WHERE line > {after} AND contains(text, '"')))),
        f AS (SELECT *, CASE WHEN from_out = from_in THEN from_out END AS sets,
                     (from_out = 'i' AND from_in = 'o')::INT AS turns,
                     sum((from_out = 'i' AND from_in = 'o')::INT) OVER (ORDER BY line ROWS UNBOUNDED PRECEDING) AS turned
              FROM c),
        s AS (SELECT line, from_out, from_in, coalesce(last_value(sets IGNORE NULLS) OVER before, 'o') AS base,
                     turned - turns - coalesce(last_value(if(sets IS NULL, NULL, turned) IGNORE NULLS) OVER before, 0) AS since
              FROM f WINDOW before AS (ORDER BY line ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)),
        t AS (SELECT line, from_out, from_in, if((base = 'o') = (since % 2 = 0), 'o', 'i') AS starts FROM s)
        SELECT line FROM t WHERE starts <> if(starts = 'o', from_out, from_in)"""


def csv_records(con, source: str, target: str, *, after: int = 0, sep: str = "chr(10)",
                delimiter: str | None = None) -> None:
    """TEMP table ``target (first, line, text, open)``: the CSV records of the lines of ``source`` (``line``,
    ``text``, NULL for an empty line) past line ``after``, as Python's csv module reads a file opened with
    ``newline=''``. A record is its lines joined, each by the break before it (``sep``, SQL over the source's row
    ``l``: an LF by default, where a line still ends with a CRLF's CR), the CR of a CRLF taken off its end;
    ``first`` and ``line`` its first and last line (the last is the one the csv module names); ``open``: a quote
    that no later line closes.

    A record goes on past its line while a quoted field is open. The lines where that state changes come in
    pairs (opening line, closing line), each pair one record of several lines; the lines in between belong to it
    (an ASOF join on the latest opening line). With ``delimiter`` (the file's, written for a regex: the table
    reader, where a bare field may hold a quote) those lines are found by matching each line with a quote against
    the fields it may hold (``_state_changes``); without it (the row path, which declines any record with a quote
    inside a bare field, and so gets the same records for every file it keeps) they are the lines with an odd
    number of quotes. Most files have no such line: each line is then a record, in one plain statement."""
    text = "coalesce(text, '')"
    if delimiter is None:
        changes = f"""SELECT line FROM {source}
                      WHERE line > {after} AND (strlen({text}) - strlen(replace({text}, '"', ''))) % 2 = 1"""
    else:
        changes = _state_changes(source, after, delimiter)
    con.execute(f"CREATE OR REPLACE TEMP TABLE {target} AS {changes} ORDER BY line")
    if not _count(con, f"SELECT count(*) FROM {target}"):
        con.execute(f"""CREATE OR REPLACE TEMP TABLE {target} AS
                        SELECT line AS first, line, {_line_end(text)} AS text, false AS open
                        FROM {source} WHERE line > {after}""")
        return
    # Joined by a constant LF where the breaks are all LFs: string_agg's own separator, no column of breaks.
    lf = sep == "chr(10)"
    joined = _line_end("string_agg(text, chr(10) ORDER BY line)" if lf else
                       "string_agg(CASE WHEN line = span THEN text ELSE sep || text END, '' ORDER BY line)")
    con.execute(f"""
        CREATE OR REPLACE TEMP TABLE {target} AS
        WITH o AS (SELECT line, row_number() OVER (ORDER BY line) AS k, lead(line) OVER (ORDER BY line) AS next
                   FROM {target}),
        spans AS (SELECT line AS first, next AS last FROM o WHERE k % 2 = 1),
        j AS (SELECT l.line, coalesce(l.text, '') AS text, {"" if lf else f"{sep} AS sep,"}
                     CASE WHEN l.line <= coalesce(s.last, l.line) THEN s.first END AS span,
                     s.first IS NOT NULL AND s.last IS NULL AS open
              FROM (SELECT * FROM {source} WHERE line > {after}) l ASOF LEFT JOIN spans s ON l.line >= s.first)
        SELECT line AS first, line, {_line_end('text')} AS text, false AS open FROM j WHERE span IS NULL
        UNION ALL
        SELECT min(line), max(line), {joined}, bool_or(open) FROM j WHERE span IS NOT NULL GROUP BY span""")


def _extra_sql(items: list[tuple[str, str]], fixed: dict[str, str], *, skip_absent: bool = False) -> str:
    """SQL of ``json.dumps({**fixed, **row's others}, sort_keys=True)``: ``items`` are (key, SQL of its
    printable ASCII value, NULL when the row lacks it if ``skip_absent``) of the file's other columns."""
    entries = sorted([(k, sql_text(json.dumps(k) + ": " + json.dumps(v))) for k, v in fixed.items()]
                     + [(k, f"{sql_text(json.dumps(k) + ': ')} || {json_text(v)}") for k, v in items])
    if not entries:
        return "'{}'"
    if skip_absent:  # concat_ws leaves out the NULL entries (a key the row does not have)
        return f"('{{' || concat_ws(', ', {', '.join(e for _, e in entries)}) || '}}')"
    joined = " || ', ' || ".join(e for _, e in entries)
    return f"('{{' || {joined} || '}}')"


def _text(line: bytes) -> str | None:
    """A line's text as DuckDB's reader gives it (UTF-8, a BOM at the start dropped), or None."""
    try:
        return line.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None


def _csv_looks(con) -> tuple[int, str | None, bool]:
    """What decides the way a CSV is read, asked in one statement: the lines with a CR or NUL (a carriage
    return ends a line for Python's csv, newline='': only as the last character of one, CRLF, does it
    end the same line as here), the header, and whether some line keeps a quote once its empty quoted
    fields are bare (the first such line answers: a file of quoted text stops at its first line
    instead of rewriting every line)."""
    return con.execute(f"""
        SELECT (SELECT count(*) FROM {LINES} WHERE contains({_line_end('text')}, chr(13)) OR contains(text, chr(0))),
               (SELECT {_line_end('text')} FROM {LINES} WHERE line = 1),
               EXISTS (SELECT 1 FROM {LINES} WHERE line > 1 AND contains(text, '"')
                                               AND contains({_empty_quoted_as_bare(_line_end('text'))}, '"'))""").fetchone()


def _csv_rows(con, path: Path, known: tuple[str, ...], max_cell_chars: int, extra: bool,
              fixed: dict[str, str], seen: staging.Look) -> None:
    # A file whose bytes hold no CR, no NUL and no quote past its first line answers ``_csv_looks`` without
    # a statement: none, its first line (it loaded, so it is UTF-8; a BOM dropped as DuckDB's reader drops
    # it), no.
    header = None if seen.cr or seen.nul or seen.quote_after_first or seen.first is None else _text(seen.first)
    odd_bytes, text, quoted = _csv_looks(con) if header is None else (0, header, False)
    if odd_bytes:
        raise Declined
    if not text or not text.isascii() or not text.isprintable() or text.count('"') % 2:
        raise Declined  # a header on two lines, or none on line 1
    try:  # one line: Python's own csv reads it
        cells = next(csv.reader([text], strict=True))
    except csv.Error:
        raise Declined from None
    header = [c.strip().lower() for c in cells]
    if not any(header) or len(set(header)) != len(header) or set(fixed) & set(header):
        raise Declined
    if not quoted:
        _bare_csv_rows(con, header, known, max_cell_chars, extra, fixed)
        return
    # Records: a quoted field may hold a line break; the record ends on its last line, the line Python's csv
    # reader names (line_num).
    csv_records(con, LINES, RECORDS, after=1)
    n = len(header)
    # A record's fields, each with the comma after it (the whole match is faster to take than a group),
    # ``tiled`` when they make the whole record. Cells stripped as the csv reader's rows are (``strip`` looks
    # at a cell's ends only), in the same pass: one table of cells, not one of fields and another of cells.
    con.execute(f"""
        CREATE OR REPLACE TEMP TABLE {RECORDS} AS
        SELECT line, open, bytes, tiled, list_transform(fields, lambda c: {strip('c')}) AS cells
        FROM (SELECT line, open, strlen(text) AS bytes,
                     CASE WHEN quoted IS NULL THEN true ELSE {tiled('quoted', 'text')} END AS tiled,
                     CASE WHEN quoted IS NULL THEN string_split(text, ',')
                          ELSE list_transform(quoted, lambda f: {UNQUOTED_FIELD}) END AS fields
              FROM (SELECT line, text, open,
                           CASE WHEN contains(text, '"') THEN regexp_extract_all(text || ',', '(?:{_FIELD}),') END AS quoted
                    FROM {RECORDS}))""")  # in no order: the rows are put in line order once, below
    if _count(con, f"SELECT count(*) FROM {RECORDS} WHERE open OR bytes > {max_cell_chars} OR NOT tiled"):
        raise Declined  # an unterminated quote, a quote inside a bare field, a long record (in bytes: at least its characters)
    # Python's csv: a record of blank cells is skipped; another number of fields than the header's is an error.
    blank = "list_bool_and(list_transform(cells, lambda c: c = ''))"
    if _count(con, f"SELECT count(*) FROM {RECORDS} WHERE len(cells) <> {n} AND NOT {blank}"):
        raise Declined
    columns = [f"{'cells[' + str(header.index(name) + 1) + ']' if name in header else 'NULL'} AS {name}"
               for name in known]
    if extra:
        others = sorted(k for k in header if k not in known)
        if others and _count(con, f"""SELECT count(*) FROM {RECORDS}
                                      WHERE NOT {blank} AND NOT list_bool_and(list_transform(
                                          [{', '.join(f'cells[{header.index(k) + 1}]' for k in others)}],
                                          lambda c: {ascii_text('c')}))"""):
            raise Declined  # json.dumps would escape the non-ASCII
        columns.append(_extra_sql([(k, f"cells[{header.index(k) + 1}]") for k in others], fixed) + " AS extra")
    con.execute(f"""CREATE OR REPLACE TEMP TABLE {ROWS} AS
                    SELECT line, {', '.join(columns)} FROM {RECORDS} WHERE NOT {blank} ORDER BY line""")
    staging.drop(con, RECORDS)  # (only a file with quotes has records of its own)


# A line whose only quotes are empty quoted fields ("", as DuckDB's COPY writes an empty string) read as
# the same line with those fields bare: Python's csv reads "" between commas as ''. The pattern takes
# no quote it should not: a field "" must touch a comma or an end on both sides ("a""b", " """ and
# two "" in a row keep a quote, and such a line goes the quoted way).
def _empty_quoted_as_bare(expr: str) -> str:
    return (f"""CASE WHEN contains({expr}, '"') THEN regexp_replace({expr}, '(^|,)""(,|$)', '\\1\\2', 'g')"""
            f" ELSE {expr} END")


def _bare_csv_rows(con, header: list[str], known: tuple[str, ...], max_cell_chars: int, extra: bool,
                   fixed: dict[str, str]) -> None:
    """``_csv_rows`` for a file with no quote after its header but in empty quoted fields: every line is one
    record, split at its commas once, in one statement (no records put together: at a million lines about a
    third of the time). Lines are in file order in ``LINES`` and a filter keeps that order (DuckDB's
    preserve_insertion_order), so no sort."""
    n = len(header)
    space = "".join(f"\\x{{{ord(c):x}}}" for c in PY_WHITESPACE)
    # Cells stripped as the csv reader's are, but only in a line with whitespace next to a comma or at
    # an end (one test per line instead of two per cell: most lines of names and labels have none).
    edge = f"(?:^|,)[{space}]|[{space}](?:,|$)"
    cell = {name: f"cells[{i + 1}]" for i, name in enumerate(header)}
    columns = [f"{cell.get(name, 'NULL')} AS {name}" for name in known]
    others = sorted(k for k in header if k not in known) if extra else []
    # The row reader refuses a record of another number of fields (blank ones are skipped before) and
    # one over its limit (in bytes: at least its characters); json.dumps would escape non-ASCII extras.
    fits = " AND ".join([f"len(cells) = {n}", f"strlen(text) <= {max_cell_chars}"]
                        + [ascii_text(cell[k]) for k in others])
    if extra:
        columns.append(_extra_sql([(k, cell[k]) for k in others], fixed) + " AS extra")
    con.execute(f"""
        CREATE OR REPLACE TEMP TABLE {ROWS} AS
        SELECT line, {', '.join(columns)}, {fits} AS fits
        FROM (SELECT line, text,
                     CASE WHEN regexp_matches(text, '{edge}')
                          THEN list_transform(string_split(text, ','), lambda c: {strip('c')})
                          ELSE string_split(text, ',') END AS cells
              FROM (SELECT line, {_empty_quoted_as_bare(_line_end('text'))} AS text
                    FROM {LINES} WHERE line > 1 AND text IS NOT NULL)
              WHERE NOT regexp_full_match(text, '[,{space}]*'))""")
    if _count(con, f"SELECT count(*) FROM {ROWS} WHERE NOT fits"):
        raise Declined


def _jsonl_rows(con, known: tuple[str, ...], max_cell_chars: int, extra: bool, fixed: dict[str, str],
                numbers: tuple[str, ...], seen: staging.Look) -> None:
    if seen.cr and _count(con, f"SELECT count(*) FROM {LINES} WHERE ends_with(text, chr(13))"):
        con.execute(f"""CREATE OR REPLACE TEMP TABLE {LINES} AS
                        SELECT line, nullif({_line_end('text')}, '') AS text FROM {LINES} ORDER BY line""")
    pattern = _flat_object(numbers).replace("'", "''")
    space = "".join(f"\\x{{{ord(c):x}}}" for c in _BLANK_LINE)
    # Keys as the row reader makes them (stripped, lower case): each once in a row.
    clean = "list_transform(json_keys(text), lambda k: lower(trim(k)))"
    # One pass over every line: a flat object, or blank to Python's strip — and nowhere a character at which
    # Python's splitlines cuts a line (\x0b, \x0c, \x1c..\x1e, \x85, U+2028, U+2029) or another control one.
    if _count(con, f"""
            SELECT count(*) FROM {LINES}
            WHERE NOT regexp_full_match(text, '(?:{pattern})|[{space}]*')
               OR (contains(text, '{{') AND (length(text) > {max_cell_chars} OR contains(text, '\\u0000')))"""):
        raise Declined
    blank = "(text IS NULL OR NOT contains(text, '{'))"  # every line is now a flat object or blank
    # json_keys only once every line is a flat object (it fails on other text). A file's lines mostly share
    # one list of keys: the distinct lists, each checked here once, are one parse of every line; a file of
    # more different lists than that has them checked line by line in SQL (two more parses).
    lists = con.execute(f"SELECT json_keys(text) AS k FROM {LINES} WHERE NOT {blank} GROUP BY k "
                        f"LIMIT {MAX_KEY_LISTS + 1}").fetchall()
    if len(lists) <= MAX_KEY_LISTS:
        if any(len({k.strip().lower() for k in keys}) != len(keys) for (keys,) in lists):
            raise Declined  # a column twice in one object (as "a" and " A ", say)
        raw_keys = sorted({k for (keys,) in lists for k in keys})
    else:
        if _count(con, f"SELECT count(*) FROM {LINES} WHERE NOT {blank} "
                       f"AND len(list_distinct({clean})) <> len(json_keys(text))"):
            raise Declined
        raw_keys = [r[0] for r in con.execute(
            f"SELECT DISTINCT unnest(json_keys(text)) FROM {LINES} WHERE NOT {blank} ORDER BY 1").fetchall()]
    if len(raw_keys) > MAX_JSON_KEYS:
        raise Declined
    by_clean: dict[str, list[int]] = {}
    for i, key in enumerate(raw_keys):
        by_clean.setdefault(key.strip().lower(), []).append(i + 1)
    if set(fixed) & set(by_clean):
        raise Declined
    paths = "[" + ", ".join(sql_text(f'$."{k}"') for k in raw_keys) + "]" if raw_keys else "[]::VARCHAR[]"

    def value(name: str) -> str:
        found = by_clean.get(name, [])
        return f"coalesce({', '.join(f'v[{i}]' for i in found)})" if found else "NULL"

    columns = [f"{value(name)} AS {name}" for name in known]
    if extra:
        others = sorted(k for k in by_clean if k not in known)
        if others and _count(con, f"""
                SELECT count(*) FROM (SELECT json_extract_string(text, {paths}) AS v FROM {LINES} WHERE NOT {blank})
                WHERE NOT list_bool_and([{', '.join(f'coalesce({ascii_text(value(k))}, true)' for k in others)}])"""):
            raise Declined  # json.dumps would escape the non-ASCII
        columns.append(_extra_sql([(k, value(k)) for k in others], fixed, skip_absent=True) + " AS extra")
    con.execute(f"""
        CREATE OR REPLACE TEMP TABLE {ROWS} AS
        SELECT line, {', '.join(columns)}
        FROM (SELECT line, json_extract_string(text, {paths}) AS v FROM {LINES} WHERE NOT {blank}) ORDER BY line""")


__all__ = ["Declined", "PY_WHITESPACE", "ROWS", "UNQUOTED_FIELD", "ascii_text", "csv_field", "csv_records", "json_text", "sql_text",
           "stage_rows", "strip", "tiled"]
