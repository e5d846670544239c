"""CSV cells a spreadsheet will not run: the one rule every CSV lsqa writes follows.

A spreadsheet opening a CSV treats a cell that starts with ``=``, ``+``, ``-`` or ``@`` (and, in
some programs, a tab or carriage return before them) as a formula: an answer, a name or a note
reading ``=HYPERLINK(...)`` or ``+cmd|' /C calc'!A0`` would run on the reader's machine. As OWASP's
"CSV Injection" page recommends, such a text cell is written with a single quote in front
(``'=HYPERLINK(...)``), which spreadsheets show as text.

Negative numbers: a cell that is a plain number (``-0.5``, ``+3``, ``-1e-3``) cannot be a formula,
so it is left as it is and a spreadsheet still reads it as a number; numbers stored as numbers
(not text) are never touched. Anything else starting with a sign is quoted. JSONL and Parquet keep
the exact text: the rule is for CSV only. ``lsqa.store.export`` applies the same two patterns
inside DuckDB's COPY (``FORMULA_START``, ``PLAIN_NUMBER``, RE2 syntax, which Python's ``re`` reads
the same).
"""

from __future__ import annotations

import re

# A cell starting with one of these is read as a formula (OWASP: = + - @ tab CR).
FORMULA_START = r"^[=+\-@\t\r]"
# ... unless the whole cell is a plain decimal number, which a spreadsheet reads as that number.
PLAIN_NUMBER = r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?"
QUOTE = "'"

_FORMULA_START = re.compile(FORMULA_START)
_PLAIN_NUMBER = re.compile(PLAIN_NUMBER)


def safe_cell(value):
    """``value`` as a CSV cell no spreadsheet runs: formula-like text gets a leading ``'``.

    Numbers, booleans and None are returned as they are; any other value is compared as its text
    (a list or dict is written as its text by ``csv``, so its text is what a spreadsheet would see)."""
    if value is None or isinstance(value, (bool, int, float)):
        return value
    text = value if isinstance(value, str) else str(value)
    if _FORMULA_START.match(text) and not _PLAIN_NUMBER.fullmatch(text):
        return QUOTE + text
    return value


def read_cell(text: str) -> str:
    """A cell read back from a CSV lsqa wrote: the ``'`` that ``safe_cell`` put in front of formula-like
    text removed (a text that itself began with ``'`` and a formula character reads back without it)."""
    if text.startswith(QUOTE) and _FORMULA_START.match(text[1:]) and not _PLAIN_NUMBER.fullmatch(text[1:]):
        return text[1:]
    return text


def safe_row(row: dict) -> dict:
    """A row (column → value) with every cell passed through ``safe_cell``."""
    return {k: safe_cell(v) for k, v in row.items()}


__all__ = ["FORMULA_START", "PLAIN_NUMBER", "QUOTE", "read_cell", "safe_cell", "safe_row"]
