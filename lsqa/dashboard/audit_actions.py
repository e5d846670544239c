"""The people's work the Audit, Adjudicate and Reference errors screens call, and its limits: the one
door from those pages to ``lsqa.audit`` (a page imports ``lsqa.dashboard`` only, tests/project/test_layout.py).
Each name is ``lsqa.audit``'s own; a page calls it as ``audit.<name>``."""

from __future__ import annotations

from lsqa.audit import (
    ASSIGN_QUEUES,
    ASSIGNED,
    FINAL_LABEL_RULE,
    LEASE_S,
    MAX_COMMENT_CHARS,
    MAX_NOTE_CHARS,
    MAX_SEARCH_CHARS,
    RENEW_EVERY_S,
    REVIEWED_FILTERS,
    choices,
    comment,
    comments,
    describe_action,
    flag,
    item,
    my_progress,
    open_in,
    overlap,
    progress,
    recent,
    reveal,
    reviewers,
    trail_of,
    undo_last,
)
from lsqa.audit.trail import Trail
from lsqa.judging.guidelines import for_kind as guidelines_for_kind

__all__ = [
    "ASSIGN_QUEUES", "ASSIGNED", "FINAL_LABEL_RULE", "LEASE_S", "MAX_COMMENT_CHARS", "MAX_NOTE_CHARS", "MAX_SEARCH_CHARS",
    "RENEW_EVERY_S", "REVIEWED_FILTERS", "Trail", "choices", "comment", "comments", "describe_action", "flag",
    "guidelines_for_kind", "item", "my_progress", "open_in", "overlap", "progress", "recent", "reveal", "reviewers",
    "trail_of", "undo_last",
]
