"""``lsqa import-answers`` in SQL: a million answers read, checked and written by DuckDB.

The file is staged by ``lsqa.store.staged_answers`` (the SQL; this module decides and words) and
written with two INSERT ... SELECT in the write's transaction, under the import's memory limit
(``lsqa.store.staging.bounded_memory``). It takes CSV — quoted fields too, with commas, quotes and
newlines inside, LF or CRLF, answers in any script — and JSONL of string values with JSON's escapes;
the rules are in ``lsqa.store.staged_rows``. Names (question ids, systems) in plain ASCII within the
name limit, ``extra`` columns in plain ASCII. Anything else — a bad row, a number in JSON, a system
name in another script — and ``import_answers_staged`` returns None before writing anything: the row
importer (``lsqa.study.imports.import_answers_rows``) reads that file and words its error.

The checks over the file's rows are the row importer's, in its order, with its words: a (question,
system) repeated with another answer, an unknown question, a system a run config gave a model, an
answer the workspace has with another text. The first offending line is the one named.
"""

from __future__ import annotations

from pathlib import Path

from lsqa.config import definitions
from lsqa.corpus.tables import MAX_CELL_CHARS, MAX_TABLE_BYTES, IngestSummary
from lsqa.errors import InputError
from lsqa.store import staged_answers, staging
from lsqa.store import results as results_store
from lsqa.text.names import lookalike_warnings

REPEAT_WHAT = "the answer of this system to this question"


def _check(con, path: Path) -> list[str]:
    """The row importer's checks over the whole file, in its order; InputError at the first line.
    Returns the file's systems (sorted)."""
    repeat = staged_answers.first_repeat(con)
    if repeat:
        line, first_line, first, here = repeat
        raise InputError(path, f"{REPEAT_WHAT} repeats line {first_line} with another answer ({first!r}, here {here!r})",
                         line=line, hint="keep one row per item, or give the raters or systems different names")
    unknown = staged_answers.first_unknown_question(con)
    if unknown:
        raise InputError(path, f"unknown question id {unknown[1]!r}", line=unknown[0],
                         hint="import the questions first (lsqa ingest-narrativeqa / lsqa run)")
    systems = staged_answers.systems(con)
    definitions.check_imported_systems(con, path, systems)
    stored = staged_answers.first_stored_conflict(con)
    if stored:
        line, system, question_id, old = stored
        raise InputError(path, f"system {system!r} already has another answer to {question_id} "
                               f"in the workspace ({old[:60]!r})", line=line,
                         hint="give the new answers another system name")
    return systems


def import_answers_staged(workspace: str | Path, path: Path) -> IngestSummary | None:
    """Import the answers of ``path`` in SQL, or None (nothing written) when the file is not one the
    SQL reads exactly as the row importer: the caller then imports it row by row."""
    summary = IngestSummary(str(path))

    def work(con) -> tuple[int, int, int]:
        staged_answers.stage_file(con, path, MAX_CELL_CHARS)
        systems = _check(con, path)
        summary.notes.extend(lookalike_warnings(systems, results_store.system_definitions(con), what="system"))
        return staged_answers.insert(con)

    done = staging.staged_write(workspace, path, MAX_TABLE_BYTES, staged_answers.answer_count, work)
    if done is None:
        return None
    added_systems, added, total = done
    summary.add("systems", added_systems)
    summary.add("answers", added)
    summary.skip("answers", total - added)
    return summary


__all__ = ["import_answers_staged"]
