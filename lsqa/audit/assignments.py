"""Assignments: give each annotator their own verdicts of one judge to review, with overlap,
and say how far each has got.

A batch chooses ``count`` verdicts of the judge and gives each to ``per_item`` of the named people,
round the list (item i goes to the people from position ``i · per_item`` on), so that everybody gets
the same number, give or take one. How the verdicts are chosen:

- ``priority``: the head of the audit queue (``lsqa.audit.priority_queue``: verdicts nobody reviewed
  first, then the most in need of a human), leaving out verdicts an earlier batch assigned.
- ``random``: a simple random sample of ``count`` of the judge's items (an item as
  ``lsqa.stats.sampling`` counts them: one answer, or one pair in both orders), one verdict each,
  drawn with the seed. Each item was drawn with probability ``π = count / items``, recorded with the
  assignment and, as the batch's draw, in ``audit_draws`` (migration 0023; a verdict drawn before keeps
  its first draw): once the verdict has a final human label (its assignee's review, or anyone's) it
  counts for corrected estimates as a random-queue review does. The review made from the
  "My assignments" queue carries the draw too (queue ``random``).

An assignment is done once its annotator has a live review of the verdict. Assigning writes only
the ``assignments`` table and a random batch's draws: never a review. Refused, with nothing written: a judge without verdicts,
a count or per-item below 1, more per item than people, names that are not people of a workspace
that has people (or are viewers there), and anybody but an admin in a workspace with people.
"""

from __future__ import annotations

import random
import secrets
from datetime import datetime, timezone
from pathlib import Path

from lsqa import store
from lsqa.audit.actions import annotator_problem
from lsqa.audit.priority_queue import PRIORITY_WEIGHTS
from lsqa.errors import AuditRefused
from lsqa.store import assignments as assignments_store
from lsqa.store import audit_queue as queue_store
from lsqa.store import people as people_store
from lsqa.store import reviews as reviews_store
from lsqa.store import verdicts as verdicts_store
from lsqa.store.workspace_cache import kept_while_unchanged
from lsqa.team import Person, acting, may
from lsqa.text.names import shown_name
from lsqa.vocabulary import item_key

ASSIGN_QUEUES = ("priority", "random")
DEFAULT_COUNT = 50
DEFAULT_PER_ITEM = 2


def _people(con, names) -> list[str]:
    """The annotators named, each once, in the order given; AuditRefused naming the first that is not
    one (not a person of a workspace with people, a viewer there, or not a name at all)."""
    if isinstance(names, str):
        names = names.split(",")
    out: list[str] = []
    for raw in names:
        name = raw.strip() if isinstance(raw, str) else raw
        if name in out:
            continue
        problem = annotator_problem(name)
        if problem:
            raise AuditRefused(f"annotator {shown_name(raw)} {problem}: give the annotators as a comma-separated list of names")
        out.append(name)
    if not out:
        raise AuditRefused("no annotators named: give at least one name")
    if people_store.has_people(con):
        for name in out:
            row = people_store.person(con, name)
            if row is None or row["revoked_at"] is not None:
                raise AuditRefused(f"{shown_name(name)} is not a person of this workspace: `lsqa users list` shows "
                                   f"who is; add them first with `lsqa users add {name} --role annotator`")
            if not may(row["role"], "review"):
                raise AuditRefused(f"{name} is a {row['role']} here and may not review: give them the annotator "
                                   f"role first, or leave them out")
    return out


def _by_priority(con, judge: str, count: int) -> list[dict]:
    """The head of the audit queue for ``judge`` (everybody's view), verdicts assigned before left out."""
    taken = {j for j, _ in assignments_store.assigned_pairs(con, judge)}
    rows, _ = queue_store.audit_queue(con, weights=PRIORITY_WEIGHTS, judges=[judge], reviewed="all",
                                      exclude=sorted(taken), limit=count)
    return [{"judgment_id": r["id"], "queue": "priority", "inclusion_prob": None, "stratum": ""} for r in rows]


def _at_random(con, judge: str, count: int, seed: int) -> list[dict]:
    """A simple random sample of ``count`` of the judge's decided items (module docstring), one
    verdict each (the first in the items' order, as ``lsqa.stats.sampling`` shows one)."""
    items: dict[tuple, str] = {}
    for r in verdicts_store.effective_verdicts(con, judge=judge):
        if r["judge_label"] is not None:
            items.setdefault(item_key(r), r["id"])
    keys = sorted(items, key=repr)
    chosen = random.Random(f"{judge}\x00{seed}").sample(keys, min(count, len(keys)))
    pi = len(chosen) / len(keys) if keys else 0.0
    return [{"judgment_id": items[k], "queue": "random", "inclusion_prob": pi, "stratum": "all"} for k in chosen]


def assign(workspace: Path, judge: str, annotators, *, by: Person | str, per_item: int = DEFAULT_PER_ITEM,
           count: int = DEFAULT_COUNT, queue: str = "priority", seed: int = 0) -> dict:
    """Give ``count`` verdicts of ``judge`` to ``per_item`` of ``annotators`` each (module docstring):
    ``{"judge", "assigned": [{"annotator", "n_items"}], "per_item", "batch", "queue", "items"}``
    (``items``: verdicts chosen; ``n_items``: new assignments of each person in this batch).

    ``by``: who assigns, recorded as ``assigned_by``: a name in a workspace without people, else a
    person whose stored role is admin (signed in on the dashboard, or named with ``lsqa assign --as``:
    ``lsqa.team.named``). Raises AuditRefused or NotAllowed, with nothing written."""
    if queue not in ASSIGN_QUEUES:
        raise AuditRefused(f"queue {queue!r} is not one of {', '.join(ASSIGN_QUEUES)}: use one of them")
    for what, value in (("count", count), ("per-item", per_item)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise AuditRefused(f"{what} {value!r} is not a whole number of at least 1: give one")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise AuditRefused(f"seed {seed!r} is not a whole number: give one")
    with store.write(workspace) as con:
        assigned_by = acting(con, by, "assign")[0] or "(one-person workspace)"
        people = _people(con, annotators)
        if per_item > len(people):
            raise AuditRefused(f"per-item {per_item} is more than the {len(people)} annotator(s) named: each verdict "
                               f"goes to per-item different people: give more names or a smaller per-item")
        if not isinstance(judge, str) or not assignments_store.verdict_count(con, judge):
            raise AuditRefused(f"judge {shown_name(judge)} has no verdicts in this workspace: "
                               f"run `lsqa agreement` to list the judges there are")
        chosen = _by_priority(con, judge, count) if queue == "priority" else _at_random(con, judge, count, seed)
        batch = f"{datetime.now(timezone.utc):%Y%m%dT%H%M%SZ}-{secrets.token_hex(3)}"
        before = assignments_store.assigned_pairs(con, judge)
        rows, n = [], dict.fromkeys(people, 0)
        for i, c in enumerate(chosen):
            for k in range(per_item):
                who = people[(i * per_item + k) % len(people)]
                if (c["judgment_id"], who) in before:
                    continue  # a random batch may draw a verdict somebody was given already
                rows.append({**c, "batch": batch, "judge": judge, "annotator": who, "assigned_by": assigned_by})
                n[who] += 1
        assignments_store.add_assignments(con, rows)
        if queue == "random":  # the batch is the draw: its verdicts are audits of it (migration 0023)
            reviews_store.record_draws(con, [{**c, "batch": batch} for c in chosen])
    return {"judge": judge, "assigned": [{"annotator": a, "n_items": n[a]} for a in people], "per_item": per_item,
            "batch": batch, "queue": queue, "items": len(chosen)}


@kept_while_unchanged()
def my_progress(workspace: Path, annotator: str) -> dict:
    """``{"assigned", "done", "open"}`` for ``annotator``: verdicts assigned to them, reviewed, still open."""
    if not annotator:
        return {"assigned": 0, "done": 0, "open": 0}
    with store.connect(workspace) as con:
        p = assignments_store.progress(con, annotator)
    return {**p, "open": p["assigned"] - p["done"]}


@kept_while_unchanged()
def team_progress(workspace: Path) -> list[dict]:
    """Per annotator with assignments: assigned, done, open."""
    with store.connect(workspace) as con:
        return assignments_store.team_progress(con)
