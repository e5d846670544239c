"""Annotation guidelines per judge kind: what "correct" means for the verdict under review (against
the NarrativeQA reference or against the book), and what to flag and why.

Each workspace can rewrite them (``workspace_settings``, append-only: the latest edit is shown, the
old ones stay as history). The defaults are each kind's record's ``guideline``
(``lsqa.judging.kinds``) and follow the paper: AutoAIS-style judges (§3.1) rate an answer against the book, ground-truth raters (§5.2) against the two references, side-by-side judges
(§3.2) compare two answers; Appendix E's finding that many references are wrong is why flags exist.
"""

from __future__ import annotations

from pathlib import Path

from lsqa import store
from lsqa.judging import kinds
from lsqa.store import annotation as annotation_store
from lsqa.store.lineage import Change
from lsqa.store.workspace_cache import kept_while_unchanged
from lsqa.team import Person, acting

KEY_PREFIX = "guidelines:"


def default(kind: str) -> str:
    """The kind's own guideline text (its record's); ``UnknownJudgeKind`` for a kind no record describes."""
    return kinds.get(kind).guideline


def _settings_untouched(change: Change, arguments: dict) -> bool:
    return "workspace_settings" not in change.tables


@kept_while_unchanged(survives=_settings_untouched)  # the Audit desk shows them with every item
def for_kind(workspace: Path, kind: str) -> dict:
    """``{"kind", "text", "edited_by", "edited_at", "is_default"}`` for a judge kind
    (``UnknownJudgeKind`` for a kind no record describes)."""
    text = default(kind)
    with store.connect(workspace) as con:
        row = annotation_store.setting(con, KEY_PREFIX + kind)
    if row is None:
        return {"kind": kind, "text": text, "edited_by": "", "edited_at": None, "is_default": True}
    return {"kind": kind, "text": row["value"], "edited_by": row["author"], "edited_at": row["created_at"],
            "is_default": False}


def save(workspace: Path, kind: str, text: str, author: Person | str) -> dict:
    """Store a new version of the guidelines for ``kind`` in the workspace (empty text: the default again).
    ``author``: a name (a workspace without people) or a signed-in admin; NotAllowed for anyone else."""
    if not (author.name if isinstance(author, Person) else author).strip():
        raise ValueError("an annotator name is required to edit the guidelines")
    fallback = default(kind)  # an unknown kind is refused before anything is written
    with store.write(workspace) as con:
        name, _ = acting(con, author.strip() if isinstance(author, str) else author, "guidelines")
        annotation_store.add_setting(con, KEY_PREFIX + kind, text.strip() or fallback, name)
    return for_kind(workspace, kind)
