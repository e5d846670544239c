"""Annotation guidelines per judge kind: what "correct" means for the verdict under review (against
the NarrativeQA reference or against the book), and what to flag and why.

Each workspace can rewrite them (``workspace_settings``, append-only: the latest edit is shown, the
old ones stay as history). The defaults follow the paper: AutoAIS-style judges (§3.1) rate an
answer against the book, ground-truth raters (§5.2) against the two references, side-by-side judges
(§3.2) compare two answers; Appendix E's finding that many references are wrong is why flags exist.
"""

from __future__ import annotations

from pathlib import Path

from lsqa import store
from lsqa.store import annotation as annotation_store

KEY_PREFIX = "guidelines:"

_FLAGS = """
**Flag a reference** (keys F / G for reference 1 / 2, after choosing the reason: W wrong, M ambiguous,
Q unanswerable) when the NarrativeQA reference itself is the problem, not the answer:
- *wrong*: the book says otherwise (references were written from summaries, not the book — paper App. E);
- *ambiguous*: the question allows several readings and the reference picks one;
- *unanswerable*: the book does not answer the question.

A flag does not change the verdict: decide the verdict too."""

DEFAULTS = {
    "absolute": """**Correct means: supported by the book.** The judge read the book (or the passages shown) and
said whether the answer is entailed by it (AutoAIS, paper §3.1). Say *Yes* when the story supports the
answer, even if the NarrativeQA references say something else; *No* when the story contradicts it or
says nothing about it. Check the highlighted evidence: the judge's quotes are marked in their passage.""" + _FLAGS,
    "groundtruth": """**Correct means: agrees with the reference.** This rater compared the answer with one
NarrativeQA reference (the one marked "used by this rater", paper §5.2). Say *Yes* when the answer means
the same as that reference, even in other words; *No* otherwise. If the answer is right by the book but
the reference is wrong, say *No* and flag the reference.""" + _FLAGS,
    "similarity": """**Correct means: close enough to the reference.** A similarity rater scored the answer
against the NarrativeQA references. Say *Yes* when the answer says what a reference says; *No* otherwise.
A wrong reference gets a flag.""" + _FLAGS,
    "pairwise": """**Better means: more correct by the book.** The judge saw the two answers in the order
shown (A first) with the book or retrieved passages (paper §3.2). Choose the answer that the story
supports better; *Equal* when both are equally right; *None* when neither is. Length and style do not
count. Labels are given in the positions shown; systems are named only after you decide when blind.""" + _FLAGS,
    "groundtruth-pairwise": """**Better means: closer to the references.** This rater compared the two answers
with the NarrativeQA references, not the book. Choose the answer closer to the references; *Equal* or
*None* as above. When the references are wrong, decide by them anyway and flag them.""" + _FLAGS,
}


def default(kind: str) -> str:
    return DEFAULTS.get(kind, DEFAULTS["absolute"])


def for_kind(workspace: Path, kind: str) -> dict:
    """``{"kind", "text", "edited_by", "edited_at", "is_default"}`` for a judge kind."""
    with store.connect(workspace) as con:
        row = annotation_store.setting(con, KEY_PREFIX + kind)
    if row is None:
        return {"kind": kind, "text": default(kind), "edited_by": "", "edited_at": None, "is_default": True}
    return {"kind": kind, "text": row["value"], "edited_by": row["author"], "edited_at": row["created_at"],
            "is_default": False}


def save(workspace: Path, kind: str, text: str, author: str) -> dict:
    """Store a new version of the guidelines for ``kind`` in the workspace (empty text: the default again)."""
    if not author.strip():
        raise ValueError("an annotator name is required to edit the guidelines")
    with store.write(workspace) as con:
        annotation_store.add_setting(con, KEY_PREFIX + kind, text.strip() or default(kind), author)
    return for_kind(workspace, kind)
