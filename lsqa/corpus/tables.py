"""Small, strict loaders for CSV / JSONL tables (comparisons for ``lsqa rank``, ratings for
``lsqa agreement``).

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
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from lsqa.config.schema import MAX_NESTING, nested_deeper_than
from lsqa.errors import InputError
from lsqa.vocabulary import WINNER_HINT, normalize_winner


@dataclass
class IngestSummary:
    """What an import did, printed by the command line and shown by the dashboard."""

    source: str
    added: dict[str, int] = field(default_factory=dict)
    skipped: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def add(self, key: str, n: int = 1) -> None:
        self.added[key] = self.added.get(key, 0) + n

    def skip(self, key: str, n: int = 1) -> None:
        self.skipped[key] = self.skipped.get(key, 0) + n

    def lines(self) -> list[str]:
        out = [f"{self.source}:"]
        for k, v in self.added.items():
            out.append(f"  added   {v:>7,} {k}")
        for k, v in self.skipped.items():
            if v:
                    out.append(f"  skipped {v:>7,} {k} (already in the workspace)")
        out.extend(f"  note: {n}" for n in self.notes)
        return out

    def to_dict(self) -> dict:
        return {"source": self.source, "added": self.added, "skipped": self.skipped, "notes": self.notes}


COMPARISON_COLUMNS = ("system_a", "system_b", "winner")
RATING_COLUMNS = ("item_id", "rater", "label")

# Anything larger is refused before reading: a 2 GB table of verdicts is a mistake, not a study.
# (NarrativeQA's qaps.csv, 47k questions, is ~11 MB.)
MAX_TABLE_BYTES = 256 * 1024 * 1024
# One value (an answer, a question, a name): a 50 MB "answer" is a broken export, not an answer.
MAX_CELL_CHARS = 100_000


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


class _DuplicateKey(ValueError):
    pass


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict:
    # json.loads keeps the last of two equal keys: one of the two values would be dropped unseen.
    obj: dict = {}
    for key, value in pairs:
        if key in obj:
            raise _DuplicateKey(key)
        obj[key] = value
    return obj


def parse_json(path, text: str, line: int | None = None, *, hint: str = "write one JSON object per line"):
    """``text`` as JSON, refusing what ``json.loads`` lets through or chokes on: a key given twice in
    one object (the last would silently win), and objects or arrays nested more than ``MAX_NESTING``
    levels (a RecursionError in the parser). InputError names the file and line."""
    try:
        data = json.loads(text, object_pairs_hook=_unique_keys)
    except RecursionError:
        data = None
        deep = True
    except _DuplicateKey as exc:
        raise InputError(path, f"key {exc.args[0]!r} appears twice in one JSON object", line=line,
                         hint="keep one value per key") from None
    except json.JSONDecodeError as exc:
        raise InputError(path, f"invalid JSON: {exc.msg} (column {exc.colno})",
                         line=line if line is not None else exc.lineno, hint=hint) from None
    else:
        deep = nested_deeper_than(data)
    if deep:
        raise InputError(path, f"JSON objects or arrays nested more than {MAX_NESTING} levels deep", line=line,
                         hint="write flatter values: a table row holds text, numbers and short lists")
    # Only a surrogate in the text or an escape of one can put one in the data: most lines have neither,
    # and walking every value of every line cost nearly half as much as parsing NarrativeQA's questions
    # (docs/benchmarks-log/2026-12-06-figures-from-code-comments.md).
    half = _lone_surrogate(data) if _SURROGATE.search(text) or _SURROGATE_ESCAPE.search(text) else ""
    if half:
        raise InputError(path, f"a JSON escape \\u{ord(half):04x} is half of a UTF-16 pair, not a character", line=line,
                         hint="write the character itself, or both halves of its escape")
    return data


_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _lone_surrogate(value) -> str:
    """The first lone surrogate in a parsed JSON value's texts (keys too), '' when none: json.loads lets
    ``"\\ud800"`` through as a str that no UTF-8 can hold (storing it would fail deep in pyarrow)."""
    if isinstance(value, str):
        found = _SURROGATE.search(value)
        return found.group() if found else ""
    if isinstance(value, dict):
        return next((h for item in value.items() for h in map(_lone_surrogate, item) if h), "")
    if isinstance(value, list):
        return next((h for h in map(_lone_surrogate, value) if h), "")
    return ""


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


def plain_value(path, line: int | None, column: str, value, *, numbers: bool = True) -> str:
    """``value`` of a required column as stripped text; refuses what would be stored as something
    it is not: empty, a JSON object or list (Python's repr), null, NaN or Infinity ("nan" as a
    system name), true/false."""
    if value is None or (isinstance(value, str) and not value.strip()):
        raise InputError(path, f"empty value in column {column}", line=line, hint="give a value")
    if isinstance(value, (dict, list)):
        raise InputError(path, f"column {column} must be a plain value, not a JSON "
                               f"{'object' if isinstance(value, dict) else 'array'}", line=line,
                         hint="write it as text")
    if isinstance(value, bool) or (isinstance(value, (int, float)) and not numbers):
        raise InputError(path, f"column {column} must be text, not {json.dumps(value)}", line=line,
                         hint="write it in quotes")
    if isinstance(value, float) and not math.isfinite(value):
        raise InputError(path, f"column {column} is {value!r} (a JSON NaN or Infinity), not a value", line=line,
                         hint="write the value it stands for")
    return str(value).strip()


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
