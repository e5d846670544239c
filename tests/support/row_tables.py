"""The row reader: a CSV / JSONL table read one Python row at a time, kept as the oracle the tests compare
lsqa's reader with (``lsqa.store.importers.table``, which reads the file in DuckDB and finds the first bad
line with SQL). Both word a problem with ``lsqa.store.importers.wording``.

Every problem is raised as :class:`lsqa.errors.InputError` naming the file, the line and what is
wrong: missing file, empty file, text that is not UTF-8, malformed CSV / JSON, missing columns,
empty values, unknown winner values, a rater labelling the same item twice.

Format: by suffix (``.csv``, ``.tsv``, ``.jsonl`` / ``.ndjson``, ``.json`` = JSON array or JSONL),
otherwise sniffed from the first character (``{`` JSONL, ``[`` JSON array, else CSV). Column names
are matched case-insensitively and stored lower-case; values of the required columns are stripped
strings.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Sequence

from lsqa.errors import InputError
from lsqa.store.importers.table import COMPARISON_COLUMNS, RATING_COLUMNS, Table  # the result's shape is shared
from lsqa.store.importers.wording import MAX_CELL_CHARS, MAX_TABLE_BYTES, parse_json, plain_value
from lsqa.vocabulary import WINNER_HINT, normalize_winner

# --------------------------------------------------------------------------------------------
# Reading
# --------------------------------------------------------------------------------------------


def _decode(path: Path) -> str:
    import stat

    try:
        info = path.stat()
        if stat.S_ISDIR(info.st_mode):
            raise InputError(path, "is a folder, not a file", hint="give the path of a CSV or JSONL file")
        if not stat.S_ISREG(info.st_mode):
            # A device (/dev/zero), a FIFO or a socket: reading it may never end.
            raise InputError(path, "not a regular file (a device, pipe or socket)",
                             hint="give the path of a CSV or JSONL file")
        if info.st_size > MAX_TABLE_BYTES:
            raise InputError(path, f"the file is {info.st_size / 2**20:,.0f} MiB, above the "
                                   f"{MAX_TABLE_BYTES // 2**20} MiB limit for one table", hint="split it into smaller files")
        with open(path, "rb") as f:
            data = f.read(MAX_TABLE_BYTES + 1)  # the file may have grown since stat
    except FileNotFoundError:
        raise InputError(path, "file not found", hint="check the path") from None
    except OSError as exc:
        raise InputError(path, f"cannot read the file: {exc.strerror or exc}", hint="check the path and its permissions") from None
    if len(data) > MAX_TABLE_BYTES:
        raise InputError(path, f"above the {MAX_TABLE_BYTES // 2**20} MiB limit for one table",
                         hint="split it into smaller files")
    if not data.strip():
        raise InputError(path, "file is empty",
                         hint="write a header line and data rows (CSV) or one JSON object per line (JSONL)")
    if b"\x00" in data:
        at = data.index(b"\x00")
        raise InputError(path, "contains a NUL byte: binary data, not a text table", line=data.count(b"\n", 0, at) + 1,
                         hint="export the table again as UTF-8 CSV or JSONL")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise InputError(
            path, f"not valid UTF-8 text (byte 0x{data[exc.start]:02x} at column {col})", line=line,
            hint="save the file as UTF-8",
        ) from None


def _too_long(path: Path, line: int | None, column: str, value: str) -> InputError:
    return InputError(path, f"column {column} holds {len(value):,} characters, above the {MAX_CELL_CHARS:,} limit "
                            "for one value", line=line, hint="shorten it; see README, Limits")


def _check_sizes(path: Path, line: int | None, row: dict) -> None:
    """Every text value of a JSON row within the size limit and free of NUL (``\\u0000``)."""
    for key, value in row.items():
        for text in (value if isinstance(value, list) else [value]):
            if isinstance(text, str) and len(text) > MAX_CELL_CHARS:
                raise _too_long(path, line, key, text)
            if isinstance(text, str) and "\x00" in text:
                raise InputError(path, f"column {key} contains a NUL character (\\u0000)", line=line,
                                 hint="remove it; text values are plain text")


def _format_of(path: Path, text: str) -> str:
    suffix = path.suffix.lower()
    if suffix == ".csv":
        return "csv"
    if suffix in (".tsv", ".tab"):
        return "tsv"
    if suffix in (".jsonl", ".ndjson"):
        return "jsonl"
    first = text.lstrip()[:1]
    if suffix == ".json":
        return "json" if first == "[" else "jsonl"
    return {"{": "jsonl", "[": "json"}.get(first, "csv")


def _clean_key(key) -> str:
    return str(key).strip().lower()


def _row(path: Path, line: int | None, obj: dict) -> dict:
    """An object's keys as column names; two keys that differ only by case or spaces are one column."""
    row: dict = {}
    for key, value in obj.items():
        column = _clean_key(key)
        if column in row:
            raise InputError(path, f"column {column!r} appears twice in one JSON object (as {key!r} and another "
                                   "spelling)", line=line, hint="keep one value per column")
        row[column] = value
    return row


def _read_csv(path: Path, text: str, delimiter: str) -> Table:
    # strict: an unterminated quote is an error, not the rest of the file swallowed into one value
    csv.field_size_limit(MAX_CELL_CHARS)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    header: list[str] | None = None
    table = Table(str(path), [])
    try:
        for record in reader:
            if not record or all(not cell.strip() for cell in record):
                continue  # blank line
            if header is None:
                header = [_clean_key(c) for c in record]
                dupes = sorted({c for c in header if header.count(c) > 1})
                if dupes:
                    raise InputError(path, f"duplicate column name(s) {', '.join(dupes)}", line=reader.line_num,
                                     hint="give each column its own name")
                table.columns = header
                table.header_line = reader.line_num
                continue
            if len(record) != len(header):
                raise InputError(
                    path, f"row has {len(record)} fields but the header has {len(header)}",
                    line=reader.line_num, hint="quote values that contain the delimiter",
                )
            table.rows.append({k: v.strip() for k, v in zip(header, record, strict=False)})
            table.lines.append(reader.line_num)
    except csv.Error as exc:
        if "field limit" in str(exc):
            raise InputError(path, f"a value above the {MAX_CELL_CHARS:,}-character limit for one value (or an "
                                   "unterminated quote)", line=reader.line_num, hint="shorten it, or close the quote") from None
        raise InputError(path, f"malformed CSV: {exc}", line=reader.line_num,
                         hint="check the quotes on this line: a quote opened must be closed") from None
    return table


def _read_jsonl(path: Path, text: str) -> Table:
    table = Table(str(path), [])
    columns: dict[str, None] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        obj = parse_json(path, raw, number)
        if not isinstance(obj, dict):
            raise InputError(path, f"expected a JSON object per line, got {type(obj).__name__}", line=number,
                             hint="write one JSON object per line")
        row = _row(path, number, obj)
        _check_sizes(path, number, row)
        columns.update(dict.fromkeys(row))
        table.rows.append(row)
        table.lines.append(number)
    table.columns = list(columns)
    return table


def _read_json_array(path: Path, text: str) -> Table:
    data = parse_json(path, text, hint="write a JSON array of objects, or one JSON object per line")
    if not isinstance(data, list):
        raise InputError(path, "expected a JSON array of objects (or one JSON object per line)",
                         hint="write a JSON array of objects, or one JSON object per line")
    table = Table(str(path), [])
    columns: dict[str, None] = {}
    for k, obj in enumerate(data):
        if not isinstance(obj, dict):
            raise InputError(path, f"element {k} of the JSON array is not an object",
                             hint="write a JSON array of objects")
        row = _row(path, None, obj)
        _check_sizes(path, None, row)
        columns.update(dict.fromkeys(row))
        table.rows.append(row)
        table.lines.append(None)
    table.columns = list(columns)
    return table


def read_table(path: str | Path, required: Sequence[str] = ()) -> Table:
    """Read a CSV / TSV / JSONL / JSON-array file; check that ``required`` columns are present and
    non-empty in every row (their values become stripped strings)."""
    path = Path(path)
    text = _decode(path)
    kind = _format_of(path, text)
    if kind == "csv":
        table = _read_csv(path, text, ",")
    elif kind == "tsv":
        table = _read_csv(path, text, "\t")
    elif kind == "jsonl":
        table = _read_jsonl(path, text)
    else:
        table = _read_json_array(path, text)
    if not table.rows:
        raise InputError(path, "no data rows", hint="the file has a header or blank lines only; add rows")
    _require(table, [_clean_key(c) for c in required], kind)
    return table


def _require(table: Table, required: Sequence[str], kind: str) -> None:
    if kind in ("csv", "tsv"):
        missing = [c for c in required if c not in table.columns]
        if missing:
            raise InputError(
                table.path, f"missing column(s) {', '.join(missing)}", line=table.header_line,
                hint=f"add them; found columns: {', '.join(table.columns) or '(none)'}",
            )
    for row, line in zip(table.rows, table.lines, strict=False):
        for col in required:
            if col not in row:
                raise InputError(table.path, f"missing column {col}", line=line,
                                 hint=f"add it; this row has: {', '.join(row) or '(nothing)'}")
            row[col] = plain_value(table.path, line, col, row[col])


def records(path: str | Path, *, required: Sequence[str] = (),
            required_any: dict[str, Sequence[str]] | None = None) -> list[tuple[int | None, dict]]:
    """``(line, row)`` pairs of a table, for importers; ``required_any`` maps a meaning to
    alternative column names of which each row must have one (e.g. question_id or item_id)."""
    table = read_table(path, required)
    for name, alternatives in (required_any or {}).items():
        for row, line in zip(table.rows, table.lines, strict=False):
            if not any(row.get(a) not in (None, "") for a in alternatives):
                raise InputError(table.path, f"missing value for {name} (columns tried: {', '.join(alternatives)})",
                                 line=line, hint="add one of these columns")
    return list(zip(table.lines, table.rows, strict=False))


# --------------------------------------------------------------------------------------------
# The two table kinds the statistics commands read
# --------------------------------------------------------------------------------------------


def load_comparisons(path: str | Path) -> Table:
    """Pairwise verdicts: ``system_a, system_b, winner`` (+ optional ``question_id``).

    ``winner`` is normalised to 'A', 'B', 'tie' or 'none'.
    """

    table = read_table(path, COMPARISON_COLUMNS)
    for row, line in zip(table.rows, table.lines, strict=False):
        try:
            row["winner"] = normalize_winner(row["winner"])
        except ValueError:
            raise InputError(table.path, f"unknown winner value {row['winner']!r}", line=line,
                             hint=WINNER_HINT) from None
        if row["system_a"] == row["system_b"]:
            raise InputError(table.path, f"system_a and system_b are both {row['system_a']!r}", line=line,
                             hint="fix the names: a system cannot be compared with itself")
        qid = row.get("question_id")
        if qid is not None and not isinstance(qid, str):
            row["question_id"] = str(qid)
    return table


def load_ratings(path: str | Path) -> Table:
    """Labels in long format: ``item_id, rater, label``; one label per (item, rater)."""
    table = read_table(path, RATING_COLUMNS)
    seen: dict[tuple[str, str], int | None] = {}
    for row, line in zip(table.rows, table.lines, strict=False):
        key = (row["item_id"], row["rater"])
        if key in seen:
            first = seen[key]
            where = f" (first on line {first})" if first else ""
            raise InputError(table.path, f"rater {key[1]!r} labelled item {key[0]!r} twice{where}", line=line,
                             hint="keep one label per item and rater")
        seen[key] = line
    return table
