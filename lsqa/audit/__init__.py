"""People's work on judge verdicts: the queue, one item, reviews, flags, adjudication, comments, reference errors, imports."""

from lsqa.audit.actions import (
    MAX_ANNOTATOR_CHARS,
    MAX_NOTE_CHARS,
    check_label,
    confirm,
    flag,
    last_action,
    opened_marker,
    recent,
    review,
    reviewed_since,
    skip,
    undo_last,
)
from lsqa.audit.adjudication import (
    FINAL_LABEL_RULE,
    MAX_COMMENT_CHARS,
    adjudicate,
    adjudication_history,
    comment,
    comments,
    disagreements,
    disagreements_seen_by,
    final_labels,
    next_open,
    open_after,
)
from lsqa.audit.assignments import ASSIGN_QUEUES, assign, my_progress, team_progress
from lsqa.audit.double_annotation import OVERLAP_KEY, overlap, set_overlap
from lsqa.audit.judged_item import CONTEXT_CHARS, FOLD_SENTENCES, as_shown, blind_copy, item, prompt_of, reveal
from lsqa.audit.kept_reads import REVIEWS_TABLE
from lsqa.audit.lead_view import BREAK_SECONDS, team_figures
from lsqa.audit.open_items import (
    ADJUDICATION,
    LEASE_S,
    RENEW_EVERY_S,
    SHARED_QUEUES,
    Opened,
    close_item,
    keep_open,
    open_in,
    open_item,
    trail_of,
)
from lsqa.audit.priority_queue import (
    ASSIGNED,
    HEAD_SLACK,
    MAX_SEARCH_CHARS,
    PAGE_SIZE,
    PRIORITY_WEIGHTS,
    REVIEWED_FILTERS,
    Filters,
    choices,
    progress,
    queue,
    reasons,
    reviewers,
    search_terms,
)
from lsqa.audit.wording import (
    FLAG_REASON_KEYS,
    SHORTCUTS,
    describe,
    describe_action,
    evidence_label,
    label_options,
    saved_message,
    shown_text,
    to_shown_label,
    to_system_label,
)

__all__ = [
    # the queue (priority_queue)
    "PRIORITY_WEIGHTS", "REVIEWED_FILTERS", "PAGE_SIZE", "HEAD_SLACK", "Filters", "queue", "reasons", "choices",
    "progress", "reviewers", "ASSIGNED", "MAX_SEARCH_CHARS", "search_terms",
    # assignments
    "ASSIGN_QUEUES", "assign", "my_progress", "team_progress",
    # the lead's view of the team (lead_view)
    "BREAK_SECONDS", "team_figures",
    # the overlap setting (double_annotation)
    "OVERLAP_KEY", "overlap", "set_overlap",
    # one item (judged_item)
    "CONTEXT_CHARS", "FOLD_SENTENCES", "item", "prompt_of", "reveal", "as_shown", "blind_copy",
    # actions
    "MAX_NOTE_CHARS", "MAX_ANNOTATOR_CHARS", "check_label", "review", "confirm", "skip", "flag", "last_action", "undo_last",
    "opened_marker", "reviewed_since", "recent",
    # keys and words (wording)
    "SHORTCUTS", "FLAG_REASON_KEYS", "label_options", "to_system_label", "to_shown_label", "describe", "shown_text",
    "saved_message", "describe_action", "evidence_label",
    # disagreements, final labels and comments (adjudication)
    "FINAL_LABEL_RULE", "MAX_COMMENT_CHARS", "adjudicate", "adjudication_history", "disagreements",
    "disagreements_seen_by", "next_open", "open_after", "final_labels", "comment", "comments",
    # what a review changes (kept_reads)
    "REVIEWS_TABLE",
    # items held while open, the decision guard, the trail kept per person (open_items)
    "ADJUDICATION", "LEASE_S", "RENEW_EVERY_S", "SHARED_QUEUES", "Opened", "open_item", "keep_open", "close_item", "open_in", "trail_of",
]
