"""Items held while open, and the guard every decision from the Audit page passes.

Each browser tab of a person (a *tab*: a random id the page keeps in its address, so that a reload
is the same tab) has at most one item open (``open_items``, migration 0025). Opening one records
the person's latest review row of that verdict as seen then (``seen_review``). Two rules follow:

- **A decision is written only on the tab's open item, once.** ``check_open`` (called inside the
  writing transaction of ``lsqa.audit.actions.review`` / ``confirm`` / ``skip`` when they are given a
  tab) refuses, with nothing written, a decision on any other verdict (a stale screen, a queue that
  has ended: the tab has nothing open) and a decision when the person's latest review row of the
  verdict is no longer the one seen when it was opened (a held key, a second tab that decided it
  first, a click sent twice). A person changes a decision by opening the item again (K, *My recent
  reviews*): the item then shows what they decided, and one key changes it.
- **An item served from a shared queue is held.** ``open_item`` serves the first candidate not held
  by another tab: another person's, when that tab was served it from a shared queue (priority,
  random, active: the same verdict would be reviewed twice where once was meant), or another tab of
  the same person's, whatever its queue. A hold lasts ``LEASE_S`` seconds and the page renews it every
  ``RENEW_EVERY_S`` seconds while the tab is open (``keep_open``), so a closed tab frees its item
  within ``LEASE_S``. Serving is one transaction under a lock of this process (the only one that can
  write the workspace while it is attached), so two people asking at once never get the same item.

The Adjudicate page holds the same way (``queue=ADJUDICATION``, by a person who may adjudicate): a
disagreement open for one adjudicator is passed over when the next is served to another, so two
adjudicators settling the list at once never settle the same one.

Label Studio's task locking while an annotator has a task open and Prodigy's "No tasks available"
(a queue that ends and saves nothing after) are the models. Each person's back-key trail is kept
here too (``trail_of``; saved in the tab's row with every item opened), so K goes back along it after a
reload (the tab's own) and in a new tab (the person's latest).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from lsqa import store
from lsqa.errors import AuditRefused
from lsqa.store import open_items as open_store
from lsqa.store.lineage import Change
from lsqa.team import Person, acting

LEASE_S = 180.0  # an item served is held this long for its tab ...
RENEW_EVERY_S = 60.0  # ... and renewed this often while the tab is open
SHARED_QUEUES = ("priority", "random", "active")  # served to one person at a time
OPENED = "opened"  # an item opened by hand (a link, K, a table), not served from a queue
ADJUDICATION = open_store.ADJUDICATION  # a disagreement open on the Adjudicate page (served or picked)
OPEN_CHANGE = Change(tables=frozenset({"open_items"}))  # what opening, renewing, closing write

_serving = threading.Lock()


def _now() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)


def _name(who: Person | str) -> str:
    return who.name if isinstance(who, Person) else str(who).strip()


@dataclass
class Opened:
    """What ``open_item`` opened in the tab: ``id`` (None: no candidate left, the tab has nothing open),
    ``seen_review`` (the person's latest review row of it then), ``other_tab`` (another tab of the
    same person has it open too), ``held`` (the candidates held elsewhere, by whom: the ones passed over
    and any after the one served; the page counts them when nothing is left for this tab)."""

    id: str | None
    seen_review: int | None = None
    other_tab: bool = False
    held: dict[str, str] = field(default_factory=dict)


def open_item(workspace: Path, who: Person | str, tab: str, judgment_id: str | None = None, *,
              candidates: list[str] | tuple[str, ...] = (), queue: str = OPENED,
              trail: list[str] | None = None, read_after: int | None = None) -> Opened:
    """Open an item in ``who``'s ``tab``: ``judgment_id`` when given (a link, K, a table), else the first
    of ``candidates`` (the queue's head first) not held elsewhere, served from ``queue``. No candidate
    left: the tab's open item is closed (a decision from it is refused) and ``Opened.id`` is None.
    ``trail``: the tab's trail, saved as the person's with the item opened at its end (unless it is
    on it already). ``read_after``: the newest review row when the candidates were read
    (``opened_marker``): of a shared queue, a candidate somebody else reviewed since is passed over
    too (it may have left the queue: "not reviewed by anyone" — the next read says). NotAllowed for a
    person who may not review; AuditRefused for an empty tab.

    ``queue=ADJUDICATION`` (the Adjudicate page; the person must be allowed to adjudicate): the first
    candidate no other adjudicator holds, held as a shared queue's item is; ``judgment_id`` given, it
    is held all the same and ``Opened.held`` names who else has it open, if anybody."""
    if not isinstance(tab, str) or not tab:
        raise AuditRefused("an item is opened in a tab: give the page's tab id")
    adjudicating = queue == ADJUDICATION
    shared = (ADJUDICATION,) if adjudicating else SHARED_QUEUES
    with _serving, store.write(workspace, change=OPEN_CHANGE) as con:
        name, _ = acting(con, who, "adjudicate" if adjudicating else "review")
        now, held = _now(), {}
        picked = judgment_id is not None
        if judgment_id is None:
            held = open_store.held_elsewhere(con, name, tab, list(candidates), shared, now, own_tabs=not adjudicating)
            if read_after is not None and queue in SHARED_QUEUES:
                held.update(dict.fromkeys(open_store.reviewed_by_others_since(con, name, list(candidates), read_after)
                                          - held.keys(), "(reviewed meanwhile)"))
            judgment_id = next((c for c in candidates if c not in held), None)
        if judgment_id is None:
            open_store.close(con, name, tab, now)
            return Opened(None, held=held)
        if trail is not None and judgment_id not in trail:
            trail = [*trail, judgment_id]
        row = open_store.put(con, annotator=name, tab=tab, judgment_id=judgment_id, queue=queue, now=now,
                             lease_s=LEASE_S, trail=trail)
        if adjudicating:
            other_tab = False
            if picked:  # who else has it open (served, the candidates passed over are ``held``)
                held = open_store.held_elsewhere(con, name, tab, [judgment_id], shared, now, own_tabs=False)
        elif picked:
            other_tab = bool(open_store.held_elsewhere(con, name, tab, [judgment_id], (), now))
        else:  # served: the candidates held by my other tabs were passed over, so it is held by none of them
            other_tab = False
    return Opened(judgment_id, row["seen_review"], other_tab, held)


def keep_open(workspace: Path, who: Person | str, tab: str, judgment_id: str) -> bool:
    """Renew the hold of the tab's open item (``RENEW_EVERY_S``); False when the tab has it no longer."""
    with store.write(workspace, change=OPEN_CHANGE) as con:
        name, _ = acting(con, who, "review")
        return open_store.renew(con, annotator=name, tab=tab, judgment_id=judgment_id, now=_now(), lease_s=LEASE_S)


def close_item(workspace: Path, who: Person | str, tab: str) -> None:
    """The tab has nothing open (its queue ended): a decision from it is refused."""
    with store.write(workspace, change=OPEN_CHANGE) as con:
        name, _ = acting(con, who, "review")
        open_store.close(con, name, tab, _now())


def open_in(workspace: Path, annotator: str, tab: str) -> str | None:
    """The verdict ``annotator``'s tab has open (a reload of the tab finds its item), None if none."""
    if not annotator or not tab:
        return None
    with store.connect(workspace) as con:
        row = open_store.open_of(con, annotator, tab)
    return row["judgment_id"] if row else None


def trail_of(workspace: Path, annotator: str, tab: str | None = None) -> list[str]:
    """The back-key trail of ``annotator``'s ``tab`` as last saved (a reload), else their latest in any
    tab (a new tab); oldest first, [] for nobody."""
    if not annotator:
        return []
    with store.connect(workspace) as con:
        return open_store.trail_of(con, annotator, tab)


def check_open(con, annotator: str, tab: str, judgment_id: str, *, decision: bool) -> None:
    """Inside a write: AuditRefused (nothing written) unless ``judgment_id`` is the item open in the
    person's tab and, for a ``decision``, their latest review row of it is still the one seen when it
    was opened (module docstring)."""
    row = open_store.open_of(con, annotator, tab)
    if row is None or row["judgment_id"] != judgment_id:
        now = "nothing is open there (its queue has ended)" if row is None else "another item is open there"
        raise AuditRefused(f"verdict {judgment_id} is not the item open in this tab ({now}): nothing was written; "
                           "decide the item on screen")
    if decision and open_store.latest_review(con, annotator, judgment_id) != row["seen_review"]:
        raise AuditRefused(f"you decided verdict {judgment_id} after it was opened here (in this tab, another tab "
                           "or a key pressed twice): nothing more was written; open it again (K, or My recent "
                           "reviews) to change your decision")
