"""How this process's workspace versions follow from one another, so that a kept read can outlive a
change that cannot have touched it (``lsqa.store.workspace_cache``).

A data version (``lsqa.store.db.data_version``) moves with every commit and checkpoint. Two kinds of
step are recorded here, both only when this process made the step itself and saw nothing else
happen between its two ends:

- a checkpoint (DETACH writes the WAL into the file): the data is the same, only its layout moved
  (``change`` is None);
- a write that said what it changed (``lsqa.store.db.write(..., change=Change(...))``), e.g. one
  review: the data differs from the version before only in that.

A version never seen in a step (another process's commit, a write that did not say what it changed)
has no history: every kept read is read again, as before.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Iterator

MAX_STEPS = 4096  # a dashboard makes a few steps per action; the oldest are forgotten
# Steps followed back from one version: a team of eight at the pace of bench/bench_team_load.py (PACE_S)
# makes several steps a second (a review, an item opened, a hold renewed), and a person's kept reads are a
# few seconds old.
MAX_WALK = 256
# Tables no kept read reads (the Audit page's open items and trails, migration 0025: read afresh each
# time): a change in them alone leaves every kept read as it was.
UNKEPT_TABLES = frozenset({"open_items"})


@dataclass(frozen=True)
class Change:
    """What one write changed: the tables it wrote, and the verdicts whose rows it added or changed
    (empty: not said, so a read that depends on which verdicts must not survive it)."""

    tables: frozenset[str]
    judgments: frozenset[str] = frozenset()

    def only_in(self, *tables: str) -> bool:
        return self.tables <= set(tables)

    def unkept_only(self) -> bool:
        """Whether only tables no kept read reads changed (``UNKEPT_TABLES``)."""
        return self.tables <= UNKEPT_TABLES


_steps: OrderedDict = OrderedDict()  # (path, version after) -> (version before, Change | None)
_lock = threading.Lock()


def record(path: str, after: tuple, before: tuple, change: Change | None) -> None:
    """``after`` holds ``before``'s data, changed by ``change`` only (None: nothing changed)."""
    if after == before:
        return
    with _lock:
        _steps[(path, after)] = (before, change)
        _steps.move_to_end((path, after))
        while len(_steps) > MAX_STEPS:
            _steps.popitem(last=False)


def history(path: str, version: tuple) -> Iterator[tuple[tuple, Change | None]]:
    """The versions ``version`` came from, newest first, each with the change made after it."""
    for _ in range(MAX_WALK):
        with _lock:
            step = _steps.get((path, version))
        if step is None:
            return
        yield step
        version = step[0]


def forget() -> None:
    """Forget every step (tests)."""
    with _lock:
        _steps.clear()
