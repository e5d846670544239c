"""Double annotation: the workspace's share of verdicts every annotator reviews (the overlap).

The rest is reviewed once: it leaves everybody's "not reviewed by me" queue as soon as someone
reviewed it (``lsqa.audit.priority_queue``).
"""

from __future__ import annotations

from pathlib import Path

from lsqa import store
from lsqa.audit.kept_reads import no_reviews_read
from lsqa.store import annotation as annotation_store
from lsqa.store.workspace_cache import kept_while_unchanged
from lsqa.team import Person, acting

OVERLAP_KEY = "audit.overlap"  # workspace setting: share of verdicts every annotator reviews


def read_overlap(con) -> float:
    """The overlap, read on an open connection (the queue reads it with its own rows)."""
    row = annotation_store.setting(con, OVERLAP_KEY)
    return float(row["value"]) if row else 1.0


@kept_while_unchanged(survives=no_reviews_read)
def overlap(workspace: Path) -> float:
    """The share of verdicts every annotator reviews (1.0 unless set): the rest are reviewed once."""
    with store.connect(workspace) as con:
        return read_overlap(con)


def set_overlap(workspace: Path, share: float, author: Person | str) -> float:
    """Save a new overlap (a share from 0 to 1) for the workspace, signed by ``author`` (a name in a
    workspace without people, else a signed-in admin: NotAllowed for anyone else)."""
    if not 0.0 <= float(share) <= 1.0:
        raise ValueError(f"overlap must be a share between 0 and 1, not {share!r}")
    with store.write(workspace) as con:
        name, _ = acting(con, author, "settings")
        annotation_store.add_setting(con, OVERLAP_KEY, repr(float(share)), name)
    return float(share)
