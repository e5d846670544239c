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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from lsqa.errors import InputError
from lsqa.vocabulary import WINNER_HINT, normalize_winner

COMPARISON_COLUMNS = ("system_a", "system_b", "winner")
RATING_COLUMNS = ("item_id", "rater", "label")

# Anything larger is refused before reading: a 2 GB table of verdicts is a mistake, not a study.
MAX_TABLE_BYTES = 512 * 1024 * 1024


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
    try:
        size = path.stat().st_size
        if size > MAX_TABLE_BYTES:
            raise InputError(path, f"the file is {size / 2**20:,.0f} MiB, above the {MAX_TABLE_BYTES // 2**20} MiB "
                                   "limit for one table", hint="split it into smaller files")
        data = path.read_bytes()
    except FileNotFoundError:
        raise InputError(path, "file not found") from None
    except IsADirectoryError:
        raise InputError(path, "is a directory, not a file") from None
    except OSError as exc:
        raise InputError(path, f"cannot read the file: {exc.strerror or exc}") from None
    if not data.strip():
        raise InputError(path, "file is empty",
                         hint="expected a header line and data rows (CSV) or one JSON object per line (JSONL)")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise InputError(
            path, f"not valid UTF-8 text (byte 0x{data[exc.start]:02x} at column {col})", line=line,
            hint="save the file as UTF-8",
        ) from None


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


def _read_csv(path: Path, text: str, delimiter: str) -> Table:
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
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
                    raise InputError(path, f"duplicate column name(s) {', '.join(dupes)}", line=reader.line_num)
                table.columns = header
                table.header_line = reader.line_num
                continue
            if len(record) != len(header):
                raise InputError(
                    path, f"row has {len(record)} fields but the header has {len(header)}",
                    line=reader.line_num, hint="quote values that contain the delimiter",
                )
            table.rows.append({k: v.strip() for k, v in zip(header, record)})
            table.lines.append(reader.line_num)
    except csv.Error as exc:
        raise InputError(path, f"malformed CSV: {exc}", line=reader.line_num) from None
    return table


def _read_jsonl(path: Path, text: str) -> Table:
    table = Table(str(path), [])
    columns: dict[str, None] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise InputError(path, f"invalid JSON: {exc.msg} (column {exc.colno})", line=number) from None
        if not isinstance(obj, dict):
            raise InputError(path, f"expected a JSON object per line, got {type(obj).__name__}", line=number)
        row = {_clean_key(k): v for k, v in obj.items()}
        columns.update(dict.fromkeys(row))
        table.rows.append(row)
        table.lines.append(number)
    table.columns = list(columns)
    return table


def _read_json_array(path: Path, text: str) -> Table:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(path, f"invalid JSON: {exc.msg} (column {exc.colno})", line=exc.lineno) from None
    if not isinstance(data, list):
        raise InputError(path, "expected a JSON array of objects (or one JSON object per line)")
    table = Table(str(path), [])
    columns: dict[str, None] = {}
    for k, obj in enumerate(data):
        if not isinstance(obj, dict):
            raise InputError(path, f"element {k} of the JSON array is not an object")
        row = {_clean_key(key): v for key, v in obj.items()}
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
        raise InputError(path, "no data rows", hint="the file has a header or blank lines only")
    _require(table, [_clean_key(c) for c in required], kind)
    return table


def _require(table: Table, required: Sequence[str], kind: str) -> None:
    if kind in ("csv", "tsv"):
        missing = [c for c in required if c not in table.columns]
        if missing:
            raise InputError(
                table.path, f"missing column(s) {', '.join(missing)}", line=table.header_line,
                hint=f"found columns: {', '.join(table.columns) or '(none)'}",
            )
    for row, line in zip(table.rows, table.lines):
        for col in required:
            if col not in row:
                raise InputError(table.path, f"missing column {col}", line=line,
                                 hint=f"this row has: {', '.join(row) or '(nothing)'}")
            value = row[col]
            if value is None or (isinstance(value, str) and not value.strip()):
                raise InputError(table.path, f"empty value in column {col}", line=line)
            if isinstance(value, (dict, list)):
                raise InputError(table.path, f"column {col} must be a plain value, not {type(value).__name__}",
                                 line=line)
            row[col] = str(value).strip()


def records(path: str | Path, *, required: Sequence[str] = (),
            required_any: dict[str, Sequence[str]] | None = None) -> list[tuple[int | None, dict]]:
    """``(line, row)`` pairs of a table, for importers; ``required_any`` maps a meaning to
    alternative column names of which each row must have one (e.g. question_id or item_id)."""
    table = read_table(path, required)
    for name, alternatives in (required_any or {}).items():
        for row, line in zip(table.rows, table.lines):
            if not any(row.get(a) not in (None, "") for a in alternatives):
                raise InputError(table.path, f"missing value for {name} (columns tried: {', '.join(alternatives)})",
                                 line=line)
    return list(zip(table.lines, table.rows))


# --------------------------------------------------------------------------------------------
# The two table kinds the statistics commands read
# --------------------------------------------------------------------------------------------


def load_comparisons(path: str | Path) -> Table:
    """Pairwise verdicts: ``system_a, system_b, winner`` (+ optional ``question_id``).

    ``winner`` is normalised to 'A', 'B', 'tie' or 'none'.
    """

    table = read_table(path, COMPARISON_COLUMNS)
    for row, line in zip(table.rows, table.lines):
        try:
            row["winner"] = normalize_winner(row["winner"])
        except ValueError:
            raise InputError(table.path, f"unknown winner value {row['winner']!r}", line=line,
                             hint=WINNER_HINT) from None
        if row["system_a"] == row["system_b"]:
            raise InputError(table.path, f"system_a and system_b are both {row['system_a']!r}", line=line,
                             hint="a system cannot be compared with itself")
        qid = row.get("question_id")
        if qid is not None and not isinstance(qid, str):
            row["question_id"] = str(qid)
    return table


def load_ratings(path: str | Path) -> Table:
    """Labels in long format: ``item_id, rater, label``; one label per (item, rater)."""
    table = read_table(path, RATING_COLUMNS)
    seen: dict[tuple[str, str], int | None] = {}
    for row, line in zip(table.rows, table.lines):
        key = (row["item_id"], row["rater"])
        if key in seen:
            first = seen[key]
            where = f" (first on line {first})" if first else ""
            raise InputError(table.path, f"rater {key[1]!r} labelled item {key[0]!r} twice{where}", line=line)
        seen[key] = line
    return table
