"""``lsqa import-reviews`` in SQL: each row's verdict found, checked and written by DuckDB.

The row importer (``lsqa.audit.review_import.import_reviews_rows``) loads every verdict of the file's
judges into Python and adds one review at a time; here the file is staged and matched to its
verdicts in SQL (``lsqa.store.staged_reviews``: the same rule, the kinds' label aliases) and the new
reviews go in with one INSERT ... SELECT under the import's memory limit. Human annotations already
in the workspace are never changed: rows are only added, numbered by the reviews' own sequence.

The SQL takes files of good rows only (``lsqa.store.staged_rows`` says which CSV and JSONL it reads;
annotators and labels in plain ASCII, a probability written as a plain decimal number). Any row the
row importer would refuse — no verdict, a label not of the verdict's kind, a probability outside
[1e-6, 1], an annotator the name rule refuses — and ``import_reviews_staged`` returns None before
writing anything: the row importer reads the file and words the error, which stays exactly what it was.
"""

from __future__ import annotations

from pathlib import Path

from lsqa.audit.actions import MAX_ANNOTATOR_CHARS
from lsqa.corpus.tables import MAX_CELL_CHARS, MAX_TABLE_BYTES, IngestSummary
from lsqa.judging import kinds as judge_kinds
from lsqa.store import staged_reviews, staging
from lsqa.store.reviews import MIN_INCLUSION_PROB
from lsqa.text.names import lookalike_warnings


def _kinds() -> list[tuple[str, str, bool, str, str]]:
    """Every kind's labels as written → canonical; a scored kind's label may be a score (the row importer's)."""
    return [(record.name, record.family, record.pairwise, alias, label)
            for record in judge_kinds.all_kinds() if not record.scored
            for alias, label in record.aliases.items()]


def import_reviews_staged(workspace: str | Path, path: Path, *, gold: bool = False) -> IngestSummary | None:
    """Import the reviews of ``path`` in SQL, or None (nothing written) when the file is not one the
    SQL reads exactly as the row importer: the caller then imports it row by row."""
    summary = IngestSummary(str(path))

    def work(con) -> tuple[int, int, int]:
        staged_reviews.stage_file(con, path, _kinds(), MAX_CELL_CHARS, min_probability=MIN_INCLUSION_PROB,
                                  max_annotator_chars=MAX_ANNOTATOR_CHARS)
        summary.notes.extend(lookalike_warnings(staged_reviews.annotators_in_order(con),
                                                staged_reviews.stored_annotators(con), what="annotator"))
        return staged_reviews.insert(con, f"imported from {path.name}", gold)

    done = staging.staged_write(workspace, path, MAX_TABLE_BYTES, staged_reviews.review_count, work)
    if done is None:
        return None
    added, usable, total = done
    summary.add("reviews", added)
    summary.skip("reviews", total - added)
    summary.notes.append(f"{usable} with an inclusion probability (usable for corrected estimates), "
                         f"{added - usable} without (agreement and overrides only)")
    return summary


__all__ = ["import_reviews_staged"]
