"""``lsqa import-reviews FILE``: human reviews of judge verdicts made elsewhere.

Columns (CSV or JSONL): judge, question_id, system_a, system_b (side by side) or system (yes/no),
reference (optional: which reference a ground-truth rater used), label, annotator; optional
inclusion_probability (the probability with which the item was drawn for review) and stratum.
Each row becomes a review as if made in the Audit page: ``confirm`` when the label is the judge's,
``override`` otherwise, queue ``import`` with the probability. Rows with a probability count as
usable audits for corrected estimates; rows without one count for agreement and overrides only.
A pair given in the other order than the verdict's (system_b, system_a) has its label swapped.
Every row is checked before anything is written; one bad row writes nothing. A row that is already
in the workspace as an imported review (same annotator, verdict, label, probability and stratum:
the same file imported again) is skipped, so importing a file twice adds nothing the second time.
Annotator names follow the one name rule (``lsqa.text.names``); one that looks like another
annotator's gets a warning in the summary's notes.
"""

from __future__ import annotations

from pathlib import Path

from lsqa.audit.actions import MAX_ANNOTATOR_CHARS
from lsqa.judging import kinds
from lsqa.store.importers import reviews as staged_reviews
from lsqa.store.importers import skeleton
from lsqa.store.importers.wording import MAX_CELL_CHARS, MAX_TABLE_BYTES, IngestSummary
from lsqa.store.reviews import MIN_INCLUSION_PROB  # the floor on π (1/π weighs an audit)
from lsqa.text.names import lookalike_warnings


def import_reviews(workspace: str | Path, path: str | Path, *, gold: bool = False) -> IngestSummary:
    """Add the reviews in ``path`` (module docstring); nothing is written when any row is bad.

    ``gold``: the file is a gold set (reference labels, not a person's review): each row is marked
    gold (migration 0015) and never makes a verdict "need a second review". Marked per row, so a
    file imported again with ``gold`` adds its rows as gold (the latest label of each annotator counts).

    One importer (``lsqa.store.importers.reviews``): the file matched and written in SQL; a file the staged
    SQL does not read exactly is read by the table reader and matched, checked and worded in SQL the same way."""
    return _import_reviews(workspace, Path(path), gold, declined=True)


def import_reviews_staged(workspace: str | Path, path: Path, *, gold: bool = False) -> IngestSummary | None:
    """``import_reviews`` when the SQL reads the file exactly; else None, nothing written."""
    return _import_reviews(workspace, Path(path), gold, declined=False)


def _import_reviews(workspace, path: Path, gold: bool, *, declined: bool) -> IngestSummary | None:
    summary = IngestSummary(str(path))

    def notes(con) -> None:
        if not staged_reviews.beyond_ascii(con):
            return  # (names all ASCII: none looks like another)
        summary.notes.extend(lookalike_warnings(staged_reviews.annotators_in_order(con),
                                                staged_reviews.stored_annotators(con), what="annotator"))

    # Every kind's labels as written -> canonical; a scored kind's label may be a score (a file with one is
    # restaged, its labels normalised by the kinds' records).
    labels = [(record.name, record.family, record.pairwise, alias, label)
              for record in kinds.all_kinds() if not record.scored for alias, label in record.aliases.items()]
    done = skeleton.run(workspace, path, staged_reviews.RECORD, max_bytes=MAX_TABLE_BYTES,
                        max_cell_chars=MAX_CELL_CHARS, declined=declined, notes=notes, kinds=labels, kind_of=kinds.get,
                        min_probability=MIN_INCLUSION_PROB, max_annotator_chars=MAX_ANNOTATOR_CHARS,
                        note=f"imported from {path.name}", gold=gold)
    if done is None:
        return None
    added, usable, total = done
    summary.add("reviews", added)
    summary.skip("reviews", total - added)
    summary.notes.append(f"{usable} with an inclusion probability (usable for corrected estimates), "
                         f"{added - usable} without (agreement and overrides only)")
    return summary
