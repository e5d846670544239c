"""Reading tabular input files (CSV or JSONL) record by record, with errors that name the line.

Used by every importer. A record is a dict of column name to value; the line number given with
it is the file's line (CSV: the header is line 1; JSONL: one object per line).
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Iterator, Mapping, Sequence

from lsqa.errors import InputError

# Anything larger is refused before reading: a 2 GB CSV of verdicts is a mistake, not a study.
MAX_TABLE_BYTES = 512 * 1024 * 1024


def _open_text(path: Path) -> str:
    if not path.is_file():
        raise InputError(path, "no such file")
    size = path.stat().st_size
    if size == 0:
        raise InputError(path, "the file is empty")
    if size > MAX_TABLE_BYTES:
        raise InputError(path, f"the file is {size / 2**20:,.0f} MiB, above the {MAX_TABLE_BYTES // 2**20} MiB limit",
                         hint="split it into smaller files")
    data = path.read_bytes()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputError(path, f"not valid UTF-8 (byte 0x{data[exc.start]:02x})", line=line,
                         hint="save the file as UTF-8") from None


def file_format(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson", ".json"):
        return "jsonl"
    if suffix in (".csv", ".tsv"):
        return "csv"
    raise InputError(path, f"unknown file type '{suffix}'", hint="use .csv or .jsonl")


def _check_columns(path: Path, line: int, rec: Mapping, required: Sequence[str],
                   required_any: Mapping[str, Sequence[str]]) -> None:
    missing = [c for c in required if c not in rec]
    missing += [f"{name} (or {' / '.join(alts)})" for name, alts in required_any.items()
                if not any(a in rec for a in alts)]
    if missing:
        raise InputError(path, f"missing column(s): {', '.join(missing)}", line=line)


def read_records(path: str | Path, *, required: Sequence[str] = (),
                 required_any: Mapping[str, Sequence[str]] | None = None) -> Iterator[tuple[int, dict]]:
    """Yield ``(line_number, record)`` for each row; raise InputError on the first bad one.

    ``required`` columns must be present; ``required_any`` maps a meaning to alternative column
    names of which one must be present (e.g. ``question_id`` or ``item_id``).
    """
    path = Path(path)
    required_any = required_any or {}
    fmt = file_format(path)
    text = _open_text(path)
    if not text.strip():
        raise InputError(path, "the file holds only white space")
    n = 0
    if fmt == "jsonl":
        for line_no, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(path, f"not valid JSON ({exc.msg})", line=line_no) from None
            if not isinstance(rec, dict):
                raise InputError(path, "each line must be a JSON object", line=line_no)
            _check_columns(path, line_no, rec, required, required_any)
            n += 1
            yield line_no, rec
    else:
        delimiter = "\t" if path.suffix.lower() == ".tsv" else ","
        reader = csv.DictReader(io.StringIO(text, newline=""), delimiter=delimiter)
        if not reader.fieldnames:
            raise InputError(path, "no header row", line=1)
        _check_columns(path, 1, dict.fromkeys(reader.fieldnames), required, required_any)
        try:
            for rec in reader:
                if None in rec:
                    raise InputError(path, "more values than header columns", line=reader.line_num)
                n += 1
                yield reader.line_num, rec
        except csv.Error as exc:
            raise InputError(path, f"malformed CSV ({exc})", line=reader.line_num) from None
    if n == 0:
        raise InputError(path, "no records after the header")
