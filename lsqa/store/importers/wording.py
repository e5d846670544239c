"""The words of an import: every error a table file or one of its values gets, and the summary printed after.

One wording for every reader of a table file: the SQL reader (``lsqa.store.importers.table``) finds the
first bad line with SQL and words it here; the importers word a value's problem here (``plain_value``);
the tests' row reader (tests/support/row_tables.py, the oracle) words the same problems the same way. Each error
is one line naming the file, the line (when a line is to blame), what is wrong and what to do
(``lsqa.errors.InputError``).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsqa.errors import InputError
from lsqa.text.names import MAX_NAME_CHARS, name_problem, shown_name

# Anything larger is refused before reading: a 2 GB table of verdicts is a mistake, not a study.
# (NarrativeQA's qaps.csv, 47k questions, is ~11 MB.)
MAX_TABLE_BYTES = 256 * 1024 * 1024
# One value (an answer, a question, a name): a 50 MB "answer" is a broken export, not an answer.
MAX_CELL_CHARS = 100_000
# Objects or arrays (tables or lists in TOML) nested deeper than this are refused: no table row or
# config needs more, and a deeper value overflows a recursive parser.
MAX_NESTING = 32

# A question index or a word count above this is a broken file (NarrativeQA's longest book has ~430k
# words, its largest q_index is ~40); it would also not fit the workspace's integer columns.
MAX_WHOLE_NUMBER = 1_000_000_000

CSV_HINT = "write a header line and data rows (CSV) or one JSON object per line (JSONL)"
JSONL_HINT = "write one JSON object per line"
ARRAY_HINT = "write a JSON array of objects, or one JSON object per line"


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


# ----------------------------------------------------------------------------------- the file


def not_a_file(path, *, folder: bool) -> InputError:
    if folder:
        return InputError(path, "is a folder, not a file", hint="give the path of a CSV or JSONL file")
    # A device (/dev/zero), a FIFO or a socket: reading it may never end.
    return InputError(path, "not a regular file (a device, pipe or socket)", hint="give the path of a CSV or JSONL file")


def too_large(path, size: int | None = None) -> InputError:
    if size is None:  # grown since it was measured
        return InputError(path, f"above the {MAX_TABLE_BYTES // 2**20} MiB limit for one table",
                          hint="split it into smaller files")
    return InputError(path, f"the file is {size / 2**20:,.0f} MiB, above the {MAX_TABLE_BYTES // 2**20} MiB limit "
                            "for one table", hint="split it into smaller files")


def not_found(path) -> InputError:
    return InputError(path, "file not found", hint="check the path")


def unreadable(path, exc: OSError) -> InputError:
    return InputError(path, f"cannot read the file: {exc.strerror or exc}", hint="check the path and its permissions")


def empty_file(path) -> InputError:
    return InputError(path, "file is empty", hint=CSV_HINT)


def nul_byte(path, line: int) -> InputError:
    return InputError(path, "contains a NUL byte: binary data, not a text table", line=line,
                      hint="export the table again as UTF-8 CSV or JSONL")


def not_utf8(path, line: int, byte: int, column: int) -> InputError:
    return InputError(path, f"not valid UTF-8 text (byte 0x{byte:02x} at column {column})", line=line,
                      hint="save the file as UTF-8")


def bytes_problem(path, data: bytes) -> InputError | None:
    """The error of a file's bytes that are no text table (a NUL byte, text that is not UTF-8), naming
    the line; None when they are UTF-8 text."""
    if b"\x00" in data:
        at = data.index(b"\x00")
        return nul_byte(path, data.count(b"\n", 0, at) + 1)
    try:
        data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        return not_utf8(path, line, data[exc.start], exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1)
    return None


def no_data_rows(path) -> InputError:
    return InputError(path, "no data rows", hint="the file has a header or blank lines only; add rows")


# ----------------------------------------------------------------------------------- the rows


def too_long(path, line: int | None, column: str, chars: int) -> InputError:
    return InputError(path, f"column {column} holds {chars:,} characters, above the {MAX_CELL_CHARS:,} limit "
                            "for one value", line=line, hint="shorten it; see README, Limits")


def nul_in_value(path, line: int | None, column: str) -> InputError:
    return InputError(path, f"column {column} contains a NUL character (\\u0000)", line=line,
                      hint="remove it; text values are plain text")


def duplicate_columns(path, line: int, names: list[str]) -> InputError:
    return InputError(path, f"duplicate column name(s) {', '.join(names)}", line=line,
                      hint="give each column its own name")


def ragged_row(path, line: int, fields: int, header: int) -> InputError:
    return InputError(path, f"row has {fields} fields but the header has {header}", line=line,
                      hint="quote values that contain the delimiter")


def malformed_csv(path, line: int, message: str) -> InputError:
    if "field limit" in message:
        return InputError(path, f"a value above the {MAX_CELL_CHARS:,}-character limit for one value (or an "
                                "unterminated quote)", line=line, hint="shorten it, or close the quote")
    return InputError(path, f"malformed CSV: {message}", line=line,
                      hint="check the quotes on this line: a quote opened must be closed")


def not_an_object(path, line: int, type_name: str) -> InputError:
    return InputError(path, f"expected a JSON object per line, got {type_name}", line=line, hint=JSONL_HINT)


def not_an_array(path) -> InputError:
    return InputError(path, "expected a JSON array of objects (or one JSON object per line)", hint=ARRAY_HINT)


def element_not_an_object(path, index: int) -> InputError:
    return InputError(path, f"element {index} of the JSON array is not an object", hint="write a JSON array of objects")


def column_twice(path, line: int | None, column: str, key: str) -> InputError:
    return InputError(path, f"column {column!r} appears twice in one JSON object (as {key!r} and another spelling)",
                      line=line, hint="keep one value per column")


def key_twice(path, line: int | None, key: str) -> InputError:
    return InputError(path, f"key {key!r} appears twice in one JSON object", line=line, hint="keep one value per key")


def too_deep(path, line: int | None) -> InputError:
    return InputError(path, f"JSON objects or arrays nested more than {MAX_NESTING} levels deep", line=line,
                      hint="write flatter values: a table row holds text, numbers and short lists")


def half_surrogate(path, line: int | None, half: str) -> InputError:
    return InputError(path, f"a JSON escape \\u{ord(half):04x} is half of a UTF-16 pair, not a character", line=line,
                      hint="write the character itself, or both halves of its escape")


def missing_columns(path, line: int | None, missing: list[str], columns: list[str]) -> InputError:
    return InputError(path, f"missing column(s) {', '.join(missing)}", line=line,
                      hint=f"add them; found columns: {', '.join(columns) or '(none)'}")


def missing_column(path, line: int | None, column: str, present: list[str]) -> InputError:
    return InputError(path, f"missing column {column}", line=line,
                      hint=f"add it; this row has: {', '.join(present) or '(nothing)'}")


def missing_any(path, line: int | None, name: str, alternatives) -> InputError:
    return InputError(path, f"missing value for {name} (columns tried: {', '.join(alternatives)})", line=line,
                      hint="add one of these columns")


# ----------------------------------------------------------------------------------- one JSON text


def nested_deeper_than(value: Any, limit: int = MAX_NESTING) -> bool:
    """Whether tables/lists (dicts/lists) in ``value`` nest more than ``limit`` levels (walked
    without recursion, so a deep value cannot overflow the stack here either)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


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


def parse_json(path, text: str, line: int | None = None, *, hint: str = JSONL_HINT):
    """``text`` (one JSONL line, or a whole JSON file) as JSON, refusing what ``json.loads`` lets
    through or chokes on: a key given twice in one object (the last would silently win), and objects
    or arrays nested more than ``MAX_NESTING`` levels (a RecursionError in the parser). InputError
    names the file and line. The SQL reader words the one line it found bad with it."""
    try:
        data = json.loads(text, object_pairs_hook=_unique_keys)
    except RecursionError:
        data = None
        deep = True
    except _DuplicateKey as exc:
        raise key_twice(path, line, exc.args[0]) from None
    except json.JSONDecodeError as exc:
        raise InputError(path, f"invalid JSON: {exc.msg} (column {exc.colno})",
                         line=line if line is not None else exc.lineno, hint=hint) from None
    else:
        deep = nested_deeper_than(data)
    if deep:
        raise too_deep(path, line)
    # Only a surrogate in the text or an escape of one can put one in the data: most lines have neither.
    half = _lone_surrogate(data) if _SURROGATE.search(text) or _SURROGATE_ESCAPE.search(text) else ""
    if half:
        raise half_surrogate(path, line, half)
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


# ----------------------------------------------------------------------------------- one value


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


def text_list(path, line: int | None, column: str, value) -> list[str]:
    """``value`` of a column of excerpts as a list of texts: a text, or a list of texts."""
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(e, str) for e in items):
        raise InputError(path, f"{column} must be a text or a list of texts, not {json.dumps(value)[:60]}",
                         line=line, hint="write the excerpts as strings")
    return items


def whole_number(path, line: int | None, value, column: str) -> int:
    """``value`` (a cell as the table reader reads it: text, a JSON number or another JSON value) as a
    whole number from 0 to ``MAX_WHOLE_NUMBER``, read as Python's ``float`` reads it (``" 3"``, ``"1e2"``,
    ``true``), or InputError naming the line."""
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        number = None
    if number is None or not number.is_integer() or not 0 <= number <= MAX_WHOLE_NUMBER:
        raise InputError(path, f"{column} must be a whole number from 0 to {MAX_WHOLE_NUMBER:,}, not "
                               f"{str(value)[:40]!r}", line=line, hint="write a number such as 0, 1, 2")
    return int(number)


def named(path, line: int | None, column: str, value: str) -> str:
    """A document id or title under the one name rule (``lsqa.text.names``), or InputError naming the line."""
    problem = name_problem(value)
    if problem:
        raise InputError(path, f"{column} {shown_name(value)} {problem}", line=line,
                         hint=f"use one line of visible text, at most {MAX_NAME_CHARS} characters")
    return value


def table_format(path: Path, first: str) -> str:
    """``csv``, ``tsv``, ``jsonl`` or ``json`` (an array): by suffix, otherwise by ``first``, the first
    character of the text after blanks (``{`` JSONL, ``[`` JSON array, else CSV)."""
    suffix = path.suffix.lower()
    if suffix == ".csv":
        return "csv"
    if suffix in (".tsv", ".tab"):
        return "tsv"
    if suffix in (".jsonl", ".ndjson"):
        return "jsonl"
    if suffix == ".json":
        return "json" if first == "[" else "jsonl"
    return {"{": "jsonl", "[": "json"}.get(first, "csv")


__all__ = ["MAX_CELL_CHARS", "MAX_NESTING", "MAX_TABLE_BYTES", "MAX_WHOLE_NUMBER", "IngestSummary", "bytes_problem",
           "named", "nested_deeper_than", "parse_json", "plain_value", "table_format", "text_list", "whole_number"]
