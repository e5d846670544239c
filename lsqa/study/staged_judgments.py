"""``lsqa import-judgments`` in SQL: a million verdicts read, checked and written by DuckDB.

The file is loaded as lines (``lsqa.store.staging``), parsed and checked over the whole table in
SQL (``lsqa.store.staged_verdicts``: this module decides and words, the store runs the SQL), its ids computed in SQL (``sha1`` of the \\x1f-joined key, as ``lsqa.store.verdict_ids``) and written
with one INSERT ... SELECT in the write's transaction. Peak memory is DuckDB's limit for the import,
not a Python object per verdict.

The SQL takes only what it can read exactly as the row-by-row importer does (``lsqa.study.imports``):
the files ``lsqa.store.staged_rows`` reads as ``lsqa.corpus.tables`` does (CSV with quoted fields and
CR LF ends, JSONL of flat objects of strings, escapes allowed), and *good* rows: a known kind of answers
that is not scored, names, labels and evidence in printable ASCII within the limits, a label of the
kind, the pairwise rules, shown_order and reference as the row importer takes them. Anything else — a
bad row, a name in another script, a similarity, evidence as a list — and ``import_judgments_staged``
returns None before writing anything: the row importer reads that file and words its error, so the
errors of a bad file stay exactly what they were (tests/test_staged_imports.py compares the two).

The checks over the file's good rows are the row importer's, in its order, with its words: a key
repeated with another label, an unknown question, a rater a run config declared with another kind,
a verdict the workspace has with another label. The first offending line is the one named.
"""

from __future__ import annotations

from pathlib import Path

from lsqa.config import definitions
from lsqa.corpus.tables import MAX_CELL_CHARS, MAX_TABLE_BYTES, IngestSummary
from lsqa.errors import InputError
from lsqa.judging import kinds as judge_kinds
from lsqa.store import staged_verdicts, staging
from lsqa.store import results as results_store
from lsqa.text.names import lookalike_warnings

REPEAT_WHAT = "the verdict of this rater on this item (question, systems, order, reference)"


def _kinds() -> list[tuple[str, str, bool, str, str]]:
    """The kinds the SQL takes, with each label as written → the canonical one. A kind about references
    is refused and a scored kind's label may be a score: those are the row importer's."""
    return [(record.name, record.family, record.pairwise, alias, label)
            for record in judge_kinds.all_kinds() if not (record.about_references or record.scored)
            for alias, label in record.aliases.items()]


def _check(con, path: Path, repeats: bool) -> None:
    """The row importer's checks over the whole file, in its order; InputError at the first line.
    ``repeats``: whether some id is on two lines (else the first check has nothing to find)."""
    repeat = repeats and staged_verdicts.first_repeat(con)
    if repeat:
        line, first_line, first_label, label = repeat
        raise InputError(path, f"{REPEAT_WHAT} repeats line {first_line} with another label "
                               f"({first_label!r}, here {label!r})", line=line,
                         hint="keep one row per item, or give the raters or systems different names")
    unknown = staged_verdicts.first_unknown_question(con)
    if unknown:
        raise InputError(path, f"unknown question id {unknown[1]!r}", line=unknown[0],
                         hint="import the questions first (lsqa ingest-narrativeqa / lsqa run)")
    declared = staged_verdicts.first_declared_conflict(con)
    if declared:
        definitions.check_imported_verdicts(con, path, [declared])
    stored = staged_verdicts.first_stored_conflict(con)
    if stored:
        raise InputError(path, f"rater {stored[1]!r} already has the verdict {stored[2]!r} on this item "
                               "in the workspace", line=stored[0], hint="give the new verdicts another rater name")


def _notes(con) -> list[str]:
    """The look-alike warnings of the row importer: the file's names in order of first appearance."""
    raters, systems = staged_verdicts.names_in_order(con)
    return (lookalike_warnings(raters, results_store.judge_definitions(con), what="rater")
            + lookalike_warnings(systems, results_store.system_definitions(con), what="system"))


def import_judgments_staged(workspace: str | Path, path: Path) -> IngestSummary | None:
    """Import the verdicts of ``path`` in SQL, or None (nothing written) when the file is not one the
    SQL reads exactly as the row importer: the caller then imports it row by row."""
    summary = IngestSummary(str(path))

    def work(con) -> tuple[int, int]:
        total, distinct = staged_verdicts.stage_file(con, path, _kinds(), MAX_CELL_CHARS)
        _check(con, path, repeats=distinct < total)
        summary.notes.extend(_notes(con))
        return staged_verdicts.insert(con, total, distinct), total

    done = staging.staged_write(workspace, path, MAX_TABLE_BYTES, staged_verdicts.verdict_count, work)
    if done is None:
        return None
    added, total = done
    summary.add("judgments", added)
    summary.skip("judgments", total - added)
    return summary


__all__ = ["import_judgments_staged"]
