"""What one review changes, so that the audit's kept reads can outlive it.

A review writes one row of human_reviews for one verdict (``review_change``), and a review through a
random or active queue may also record that verdict's draw (audit_draws, migration 0023). Reads that do not
depend on that verdict's reviews are kept across it (lsqa.store.workspace_cache): a decision on the
Audit page then reads neither the queue nor the settings again (decision -> next item).
Each kept read says which declared changes it survives; this module holds what they share.
"""

from __future__ import annotations

from lsqa.store.lineage import Change

REVIEWS_TABLE = "human_reviews"
DRAWS_TABLE = "audit_draws"
REVIEW_TABLES = (REVIEWS_TABLE, DRAWS_TABLE)  # what a review may write
SKIPS_TABLE = "review_skips"  # what a skip writes (lsqa.audit.actions.skip): read by the lead's pace and exports only


def review_change(judgment_id, sampling: dict | None = None) -> Change | None:
    """What a review (or the undo of one) of ``judgment_id`` declares it changes: its own rows of the
    reviews table, for that verdict only, and its draw when the review carries one (``sampling`` with an
    inclusion probability: ``lsqa.store.reviews.add_review``)."""
    if not isinstance(judgment_id, str):
        return None  # refused inside the write (actions._verdict), which then records nothing
    drawn = bool(sampling) and sampling.get("inclusion_prob") is not None
    return Change(tables=frozenset(REVIEW_TABLES if drawn else {REVIEWS_TABLE}), judgments=frozenset({judgment_id}))


def no_reviews_read(change: Change, arguments: dict) -> bool:
    """For reads of verdicts, questions and settings only: no review or skip can change them."""
    return change.only_in(*REVIEW_TABLES, SKIPS_TABLE)
