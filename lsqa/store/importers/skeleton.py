"""One import, whatever its input: stage → check → insert, in one write transaction of the workspace.

An input is one record (``Input``), the way a judge kind is one record (``lsqa.judging.kinds``): the
file's columns, the SQL that makes the file's rows (``lsqa.store.importers.rows``) its staged table,
the checks over the whole table — each the query of the first offending line and the words of its
error — and the insert. ``run`` is the frame every import shares: the file read as lines under the
import's memory limit (``lsqa.store.importers.lines``), staged, checked in the record's order (a check
may be the caller's, ``Hook``: what a run config declared is the config's to word), inserted.

Several files, or rows wanted before the write. An input may be several files read as one (``several``:
``path`` is their list, a check's rows start with the file's index and the line, and the file is named).
An input whose rows its caller needs before it writes (the NarrativeQA ingest reads the stories of the
questions' documents first, with no workspace locked) is staged apart (``stage_apart``: a connection of
its own, no workspace attached) and finished in the caller's open write (``run(..., con=, staged=)``):
the same checks and insert over the staged rows, in that one write.

Two ways in, one way on. A regular file (``rows``) is staged in SQL straight from its lines; any other
(``Declined``, before anything is written: a quote inside a bare field, a JSON number, a name beyond plain
ASCII, a bad row...) is restaged by the record (``restage``) in the same write: read by the table reader
(``table``: the file in DuckDB, its first bad line found by SQL and worded by ``wording``), its values
checked in SQL (``values``: each distinct unusual value judged once in Python) and each row's own checks
run in SQL over the whole file, the first row with a problem worded in the row checks' words. Either way
the same checks run over the whole file and the same insert writes it: no import reads a file row by row
in Python (the row-by-row importers are the tests' oracle, tests/support/import_oracle.py).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Union

from lsqa.errors import InputError
from lsqa.store import bulk
from lsqa.store.importers import lines, rows
from lsqa.store.importers.lines import Declined
from lsqa.store.importers.wording import MAX_CELL_CHARS, MAX_TABLE_BYTES

# The hint of every check that finds a question the workspace does not have.
QUESTIONS_FIRST = "import the questions first (lsqa ingest-narrativeqa / lsqa run)"


@dataclass(frozen=True)
class Check:
    """A check over the staged table: ``sql`` selects (line, values...) of each offending row (the
    first line is named); ``words`` formats the error from those values (``{1}``: the first value)."""

    sql: str
    words: str
    hint: str
    # Whether the check may find anything: given the counts ``stage`` returned (a repeat needs two lines).
    applies: Callable[[tuple], bool] = lambda counts: True
    # The columns that put the rows in file order when the line does not (a JSON array's rows have none).
    order: str = ""


@dataclass(frozen=True)
class Hook:
    """A check the caller runs (``run``'s ``hooks[name](con)``): it raises its own InputError."""

    name: str


@dataclass(frozen=True)
class Input:
    """What one kind of input file is to the importer."""

    name: str                       # what the summary counts: "judgments", "answers", "reviews"
    staged: str                     # the TEMP table of its staged rows (staged apart: their name in the write)
    known: tuple[str, ...]          # the columns the file may have (any case, stripped)
    # stage(con, path, **params) -> counts, from rows.ROWS (of ``several`` files, or staged apart: the record
    # stages each file itself, and returns the staged rows); Declined if not exact
    stage: Callable
    insert: Callable                # insert(con, counts, **params) -> what was written
    indexed: str                    # the table whose rows size the memory limit (its id index)
    columns: dict[str, str] = field(default_factory=dict)  # the staged table's columns and SQL types
    checks: tuple[Union[Check, Hook], ...] = ()
    # restage(con, path, **params) -> counts: a file ``stage`` declines, read by the table reader and its
    # values checked in SQL (``lsqa.store.importers.values``) into the same staged table; InputError at a bad row.
    restage: Callable | None = None  # None: a declined file is refused whole (``Declined`` raised)
    extra: bool = True              # keep the other columns as ``extra`` JSON
    fixed: Callable[[Path], dict[str, str]] = field(default=lambda path: {})
    # Several files read as one: ``path`` is their list, ``stage`` stages each itself, and a check selects
    # (file index, line, values...), its error naming that file.
    several: bool = False


def first(con, sql: str, params=(), *, by: str = "1"):
    """The first row (by its first column, the line; ``by``: other columns) of ``sql``, or None."""
    return con.execute(f"SELECT * FROM ({sql}) ORDER BY {by} LIMIT 1", params).fetchone()


def stage_file(con, path: Path, record: Input, max_cell_chars: int, **params):
    """The rows of ``path`` in the record's staged table (its counts), or Declined."""
    rows.stage_rows(con, path, record.known, max_cell_chars, extra=record.extra, fixed=record.fixed(path))
    counts = record.stage(con, path, **params)
    lines.drop(con, rows.ROWS)
    return counts


def check(con, path, record: Input, counts, hooks: dict[str, Callable] | None = None) -> None:
    """The record's checks in order; InputError at the first offending line of the first that finds one
    (of several files, ``path`` their list: the first in file order, naming its file)."""
    for item in record.checks:
        if isinstance(item, Hook):
            (hooks or {})[item.name](con)
            continue
        found = item.applies(counts) and first(con, item.sql.format(staged=record.staged),
                                                by=item.order or ("1, 2" if record.several else "1"))
        if found:
            where, found = (path[found[0]], found[1:]) if record.several else (path, found)
            raise InputError(where, item.words.format(*found), line=found[0], hint=item.hint)


def stage_apart(path, record: Input, *, spill_folder: Path | None, **params):
    """``path`` staged on a connection of its own with no workspace attached, so that none is locked while
    it is read (``lsqa.store.db.scratch``; under the import's memory limit, spilling into ``spill_folder``,
    when one is given and the files are not small: ``lines.bounded``): ``record.stage``'s staged rows as an Arrow table, or, when it declines the file,
    ``record.restage``'s (InputError at the first bad row). Finished by ``run(..., con=, staged=)``."""
    from lsqa.store import db

    files = path if isinstance(path, (list, tuple)) else [path]
    with db.scratch() as con, lines.bounded_memory(con, spill_folder) \
            if spill_folder is not None and lines.bounded(*files) else contextlib.nullcontext():
        try:
            return record.stage(con, path, **params)
        except Declined:
            if record.restage is None:
                raise
        return record.restage(con, path, **params)


def run(workspace, path, record: Input, *, max_bytes: int = MAX_TABLE_BYTES, max_cell_chars: int = MAX_CELL_CHARS,
        declined: bool = True, hooks: dict[str, Callable] | None = None, notes: Callable | None = None,
        con=None, staged=None, **params):
    """Stage, check and insert ``path`` in one write of ``workspace``; what ``record.insert`` returns.
    A file the SQL does not read exactly (``Declined``) is staged by ``record.restage`` (which raises the
    file's worded error), then checked and inserted the same way; with ``declined=False``, None (nothing
    written). ``notes(con)``: called after the checks, before the insert (the summary's look-alike warnings).
    ``con``, ``staged``: the caller's open write of ``workspace`` and the rows ``stage_apart`` staged: they are
    the record's staged table for its checks and insert, in that write (no other is opened)."""
    from lsqa.store.db import begin_again, write

    indexed = f"SELECT count(*) FROM {record.indexed}"

    def finish(con, counts):
        check(con, path, record, counts, hooks)
        if notes is not None:
            notes(con)
        return record.insert(con, counts, **params)

    def restaged(con):
        done = finish(con, record.restage(con, path, **params))
        lines.drop(con, record.staged)
        return done

    def staged_or_restaged(con):
        try:
            return finish(con, stage_file(con, path, record, max_cell_chars, **params))
        except Declined:
            if not declined or record.restage is None or lines.bounded(path):
                raise
        # A small file is restaged in the same write, begun again without what the staging made (a large one in
        # a write of its own, below: outside the import's memory limit, as the row reader read it).
        begin_again(con)
        return restaged(con)

    if con is not None:
        with bulk.registered(con, staged, record.staged):
            return finish(con, staged)
    done = lines.staged_write(workspace, path, max_bytes, lambda con: int(con.execute(indexed).fetchone()[0]),
                              staged_or_restaged)
    if done is not None or not declined:
        return done
    if record.restage is None:
        raise Declined
    with write(workspace) as con:
        return restaged(con)


__all__ = ["Check", "Declined", "Hook", "Input", "QUESTIONS_FIRST", "check", "first", "run", "stage_apart", "stage_file"]
