"""A table file loaded into DuckDB as one row per line, for imports checked in SQL.

``lsqa import-judgments`` reads a million verdicts in seconds this way instead of one Python dict
per row: the file goes into a TEMP table of ``(line, text)`` (DuckDB's CSV reader with no quote,
no escape and a delimiter that printable text never holds, so every physical line is one row and
the row's position is its line number), and the importer parses and checks the lines in SQL.

Nothing here refuses a file: when DuckDB cannot read it as plain lines (a control byte, text that
is not UTF-8, a line over DuckDB's line limit), ``load_lines`` says so (None) and the importer
reads the file with the table reader, which finds the problem in SQL and words it (``lsqa.store.importers.table``).

Memory: an import's connection runs under ``memory_limit`` with a spill folder next to the
workspace (``bounded_memory``), so a large file spills to disk instead of growing the process (a file
of at most ``BOUNDED_FROM_BYTES`` runs without: it cannot come near either limit).
DuckDB's ``memory_limit`` and ``temp_directory`` are settings of the *instance*, and every workspace
of a process shares one instance (``lsqa.store.db``): while an import runs, the process's other
connections (a dashboard's pages) run under the same limit; the previous values come back after.
An import that needs more than its limit stops with a WorkspaceError naming the limit and
``LSQA_IMPORT_MEMORY_MB`` (nothing is written: the transaction never committed).
"""

from __future__ import annotations

import atexit
import contextlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, TypeVar

import duckdb

from lsqa.errors import WorkspaceError

T = TypeVar("T")

# The instance's limit while an import runs: the file's lines and staged rows spill past it
# (docs/BENCHMARKS.md: peak resident memory at 1M verdicts). Plus, per verdict the workspace
# already has, room for its share of the table's id index, which DuckDB holds in memory while it
# inserts: 5M verdicts as five files of 1M ran out of memory at the fourth file under 768 MB alone; with
# the one index of migration 0020 they fit at 150 bytes a verdict (peak 1,389 MiB), 200 leaves a margin.
IMPORT_MEMORY_LIMIT_MB = 768
INDEX_BYTES_PER_ROW = 200
# Another base limit for a machine with less (or more) memory to give an import, in MB.
MEMORY_ENV = "LSQA_IMPORT_MEMORY_MB"
MIN_MEMORY_MB = 32

# A file of at most this many bytes is imported without ``bounded_memory``: what an import holds is a small
# multiple of its file (its lines, parsed rows and staged rows: a 51 MB file of 1M verdicts peaks under
# 1 GiB) plus the workspace's index share, and DuckDB's own instance limit (80% of the machine's memory)
# is at least the import's; below a MiB neither limit can be reached, so setting the limit and the spill
# folder and back (and counting the rows indexed to size it) would be five statements that change nothing.
BOUNDED_FROM_BYTES = 1 << 20

# The spill folder an import's DuckDB writes to when it runs out of memory, next to the workspace.
SPILL = ".lsqa-spill"

# How DuckDB words a commit it refused for want of memory (DuckDB 1.4-2.0: a TransactionException, not
# an OutOfMemoryException), depending on what ran out: a new block, a buffer, pinning a spilled block.
_OUT_OF_MEMORY = ("could not allocate", "failed to allocate", "failed to pin")

# A byte no printable line holds: the CSV reader's delimiter, so that a line is one value.
_DELIMITER = "\\x01"


class Declined(Exception):
    """The file is not one an import's SQL reads exactly as its row importer: roll back and let the row
    importer read it (it words the error, if there is one)."""


@dataclass(frozen=True)
class Look:
    """What a file's bytes say before DuckDB reads them (``look``)."""

    cr: bool                 # a carriage return somewhere
    nul: bool                # a NUL byte somewhere
    quote_after_first: bool  # a double quote after the first line
    first: bytes | None      # the first line (without its LF), when it ends within the first piece read


def look(path: Path, chunk: int = 1 << 20) -> Look:
    """``Look`` of ``path``, read in pieces (the file may be the 256 MiB limit), stopping once every flag is
    set: what decides how a file is loaded (``load_lines``: a CR), and lets an import's SQL skip the looks
    at a file with no CR, NUL or quote past its header (``lsqa.store.importers.rows``)."""
    cr = nul = quote = False
    first = None
    with open(path, "rb") as f:
        piece = f.read(chunk)
        end = piece.find(b"\n")
        if end >= 0 or len(piece) < chunk:
            first = piece[:end] if end >= 0 else piece
        rest = piece[end + 1:] if end >= 0 else b""
        while piece and not (cr and nul and quote):
            cr, nul, quote = cr or b"\r" in piece, nul or b"\0" in piece, quote or b'"' in rest
            piece = rest = f.read(chunk)
    return Look(cr, nul, quote, first)


def load_lines(con, path: Path, table: str, text: str = "text", seen: Look | None = None) -> bool:
    """Create TEMP table ``table (line BIGINT, text VARCHAR)`` with every line of ``path`` split at LF
    (``text`` NULL for an empty line); False when DuckDB cannot read the file as plain lines (the
    caller reads it row by row, which says what is wrong). ``text``: SQL of the text kept, over the
    line's own ``text``; ``seen``: the file's ``look``, if the caller took it.

    A CR stays in its line, wherever it is: what a CR means (a CR LF line end, a line end of its own
    for Python, part of a quoted CSV value) is the reader's to say (``lsqa.store.importers.rows``,
    ``lsqa.store.importers.table``)."""
    if (seen or look(path)).cr:
        # DuckDB's CSV reader refuses a CR before the LF in strict mode (and, not strict, takes every CR
        # for a line end, so the line numbers would be wrong): such a file is read whole instead. Chosen
        # before reading: a failed statement would abort the caller's transaction.
        return _load_split(con, path, table, text)
    try:
        con.execute(f"""
            CREATE OR REPLACE TEMP TABLE {table} AS
            SELECT text FROM read_csv('{_quoted(path)}', columns = {{'text': 'VARCHAR'}}, delim = E'{_DELIMITER}',
                                      quote = '', escape = '', header = false, auto_detect = false,
                                      strict_mode = true, null_padding = false, new_line = '\\n')""")
        # CREATE TABLE AS keeps the reader's order (preserve_insertion_order): the rowids are the
        # lines' positions in the file, from an offset (rows not yet committed count from 2**55).
        con.execute(f"""CREATE OR REPLACE TEMP TABLE {table} AS
                        SELECT rowid - (SELECT min(rowid) FROM {table}) + 1 AS line, {text} AS text FROM {table}""")
        return True
    except duckdb.Error:
        return False


def _load_split(con, path: Path, table: str, text: str) -> bool:
    """``load_lines`` for a file with a CR: the whole text split at each LF (the file is at most the 256 MiB
    limit of one table, read in one piece: about three times its size in memory); a BOM at the start
    dropped, as DuckDB's CSV reader and Python's ``utf-8-sig`` drop it. False when DuckDB cannot read the
    file (the caller's transaction is then aborted: it declines)."""
    try:
        con.execute(f"""
            CREATE OR REPLACE TEMP TABLE {table} AS
            WITH f AS (SELECT string_split(content, chr(10)) AS parts FROM read_text('{_quoted(path)}')),
                 u AS (SELECT generate_subscripts(parts, 1) AS line, unnest(parts) AS text, len(parts) AS n FROM f),
                 b AS (SELECT line, CASE WHEN line = 1 AND starts_with(text, chr(65279)) THEN text[2:] ELSE text END
                                    AS text, n FROM u)
            SELECT line, {text} AS text
            FROM (SELECT line, nullif(text, '') AS text FROM b WHERE NOT (line = n AND text = '')) ORDER BY line""")
        return True
    except duckdb.Error:
        return False


def writable_target(workspace, path: Path, max_bytes: int) -> Path | None:
    """The workspace's folder (where ``bounded_memory`` makes its spill folder) when an import's SQL may
    try ``path``: a CSV or JSONL file of at most ``max_bytes`` and a workspace that exists and can be
    written; else None (the row importer reads the file first and says what is wrong with it, before
    the workspace's refusal)."""
    from lsqa.store.db import is_read_only

    if path.suffix.lower() not in (".csv", ".jsonl", ".ndjson"):
        return None
    try:
        if not path.is_file() or not 0 < path.stat().st_size <= max_bytes:
            return None
        folder = Path(workspace).resolve().parent
        if not Path(workspace).is_file() or is_read_only(workspace) or not os.access(folder, os.W_OK):
            return None
    except OSError:
        return None
    return folder


def staged_write(workspace, path: Path, max_bytes: int, indexed_rows: Callable[[object], int],
                 work: Callable[[object], T]) -> T | None:
    """The frame of every import in SQL: ``work(con)`` in one write transaction of ``workspace``, under
    ``bounded_memory`` sized by ``indexed_rows(con)`` (the rows the written table already has; a small file:
    ``bounded``); None,
    nothing written, when ``path`` or the workspace is not for the SQL (``writable_target``) or ``work``
    raises ``Declined`` (the caller then imports the file row by row, which words what is wrong)."""
    from lsqa.store.db import connect, write

    folder = writable_target(workspace, path, max_bytes)
    if folder is None:
        return None
    try:
        # The limit and its spill folder outlive the write: DuckDB may keep the transaction's rows in the
        # spill folder until they are committed (and the audit queue's catch-up after reads them all).
        with contextlib.ExitStack() as bound:
            if bounded(path):
                settings = bound.enter_context(connect(workspace))
                bound.enter_context(bounded_memory(settings, folder, indexed_rows(settings)))
            with write(workspace) as con:
                return work(con)
    except Declined:
        return None


def bounded(*paths: Path) -> bool:
    """Whether an import of ``paths`` runs under ``bounded_memory``: above ``BOUNDED_FROM_BYTES`` together."""
    try:
        return sum(Path(p).stat().st_size for p in paths) > BOUNDED_FROM_BYTES
    except OSError:
        return True  # the reader says what is wrong with the file, under the limit as before


def drop(con, *tables: str) -> None:
    for table in tables:
        con.execute(f"DROP TABLE IF EXISTS {table}")


@contextlib.contextmanager
def bounded_memory(con, folder: Path, indexed_rows: int = 0) -> Iterator[None]:
    """Run the block with ``IMPORT_MEMORY_LIMIT_MB`` (and room for the indexes of ``indexed_rows``) and a spill folder ``SPILL`` inside ``folder`` (the
    workspace's), both instance-wide (see the module's docstring); the old values come back after.

    DuckDB cannot move its spill folder once it has spilled: a process that spilled before keeps the
    folder it used then (its first import's, or DuckDB's default ``.tmp``)."""
    base_mb = _base_limit_mb()
    old_limit, old_temp = con.execute(
        "SELECT current_setting('memory_limit'), current_setting('temp_directory')").fetchone()
    spill = folder / SPILL
    spill.mkdir(exist_ok=True)
    moved = False
    try:
        limit_mb = base_mb + indexed_rows * INDEX_BYTES_PER_ROW // 2**20
        con.execute(f"SET memory_limit = '{limit_mb}MB'")
        try:
            con.execute(f"SET temp_directory = '{_quoted(spill)}'")
            moved = True
            _remove_at_exit(spill)
        except duckdb.NotImplementedException:
            pass  # spilled before, elsewhere: see above
        try:
            yield
        except duckdb.Error as exc:
            # Out of memory while staging (OutOfMemoryException) or while committing (DuckDB then
            # refuses the commit, and may invalidate the process's database: a FatalException on the
            # next use). Either way the transaction did not commit: nothing was written.
            if not isinstance(exc, duckdb.OutOfMemoryException) and not any(
                    words in str(exc) for words in _OUT_OF_MEMORY):
                raise
            raise WorkspaceError(
                f"{folder}: the import needed more memory than the {limit_mb:,} MB it may use (DuckDB: "
                f"{str(exc).splitlines()[0][:160]}); nothing was written. Give it more with "
                f"{MEMORY_ENV}=<MB> (now {base_mb}, plus {INDEX_BYTES_PER_ROW} bytes per verdict the workspace "
                "has), or split the file") from None
    finally:
        try:
            con.execute(f"SET memory_limit = '{old_limit}'")
            if moved:
                con.execute(f"SET temp_directory = '{_quoted(old_temp)}'")
        except duckdb.Error:
            pass  # the folder was used, so it stays DuckDB's; an aborted transaction refuses SET too
        with contextlib.suppress(OSError):
            spill.rmdir()  # only when empty: DuckDB removes its files, the folder may still be its own


_removed_at_exit: set[Path] = set()


def _remove_at_exit(spill: Path) -> None:
    """Take the spill folder away when the process ends. DuckDB keeps an owner file in the folder it
    spills to for as long as its instance lives (``duckdb_temp_<pid>_0_owner``) and removes only the
    file when it is freed, so an import left an empty ``.lsqa-spill`` beside the workspace: at exit the
    host is closed first (``lsqa.store.db.close_host_at_exit``), then the folder goes if empty."""
    if spill in _removed_at_exit:
        return
    _removed_at_exit.add(spill)

    def remove() -> None:
        from lsqa.store.db import close_host_at_exit

        close_host_at_exit()
        with contextlib.suppress(OSError):
            spill.rmdir()

    atexit.register(remove)


def _base_limit_mb() -> int:
    """``IMPORT_MEMORY_LIMIT_MB``, or the environment's ``MEMORY_ENV`` (a whole number of MB)."""
    text = os.environ.get(MEMORY_ENV, "").strip()
    if not text:
        return IMPORT_MEMORY_LIMIT_MB
    if not text.isdigit() or int(text) < MIN_MEMORY_MB:
        raise WorkspaceError(f"{MEMORY_ENV}={text[:40]!r} is not a memory size in MB "
                             f"(a whole number, at least {MIN_MEMORY_MB})")
    return int(text)


def _quoted(path) -> str:
    return str(path).replace("'", "''")
