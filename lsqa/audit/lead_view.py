"""The lead's view of a team: per person, items done, time per item, agreement with the final label,
and what is left of their assignments (the per-annotator figures of Label Studio's and Argilla's
team dashboards). Admins only (``lsqa.team.roles``: ``oversee``); the command line's owner too.

The figures, each from the one place that defines its concept:

- ``items_done``: verdicts the person has a current label of (``human_labels``: their latest live
  review of each verdict; an undone review does not count, a changed label counts once; imported
  reviews count, they are the person's labels).
- ``median_seconds_per_item``: the median time from the person's action before a decision to the
  decision (``lsqa.store.reviews.review_pace``), over Audit-page decisions only (an import carries the
  time of the import). A gap longer than ``BREAK_SECONDS`` is a break, not time on the item: the
  decision after it starts a new sitting and is not timed. ``timed_items`` says how many gaps the
  median is of; None when none.
- ``agreement_with_final``: of the person's labels whose verdict has a final label
  (``final_human_labels``: adjudicated, else the people's majority) that somebody else had a say in
  (another person labelled it, or somebody else adjudicated it), the share equal to it
  (``agreed_with_final`` of ``compared_with_final``). A verdict only this person labelled is left
  out: its final label is their own, which would agree with itself. None when nothing is compared.
- ``assigned`` / ``assignments_open``: verdicts assigned to the person, and those they have not
  reviewed yet (``lsqa.store.assignments``).
"""

from __future__ import annotations

from pathlib import Path

from lsqa import store
from lsqa.store import assignments as assignments_store
from lsqa.store import people as people_store
from lsqa.store import reviews as reviews_store
from lsqa.store.workspace_cache import kept_while_unchanged
from lsqa.team import Person, acting

BREAK_SECONDS = 600  # ten minutes without an action is a break, not time spent on the next item

FIGURES = ("items_done", "median_seconds_per_item", "timed_items", "agreed_with_final", "compared_with_final",
           "agreement_with_final", "assigned", "assignments_open")


def team_figures(workspace: Path, *, by: Person | str | None) -> list[dict]:
    """One row per person (everybody added with ``lsqa users add``, then anybody else with a review or
    an assignment): ``{"annotator", "role", **FIGURES}`` (module docstring), people of the workspace
    first in the order added.

    ``by``: who asks. None is the workspace file's owner (the command line: whoever runs it can open
    the file anyway); else a person whose stored role may ``oversee`` (admin), checked as a write is
    (``lsqa.team.acting``). NotAllowed otherwise."""
    if by is not None:
        with store.connect(workspace) as con:
            acting(con, by, "oversee")
    return _figures(workspace)


@kept_while_unchanged()
def _figures(workspace: Path) -> list[dict]:
    with store.connect(workspace) as con:
        people = people_store.list_people(con)
        done = {r["annotator"]: r["reviewed"] for r in reviews_store.annotator_progress(con)}
        pace = {r["annotator"]: r for r in reviews_store.review_pace(con, BREAK_SECONDS)}
        agreement = {r["annotator"]: r for r in reviews_store.agreement_with_final(con)}
        assigned = {r["annotator"]: r for r in assignments_store.team_progress(con)}
    roles = {p["name"]: p["role"] for p in people}
    others = sorted((set(done) | set(pace) | set(agreement) | set(assigned)) - set(roles))
    rows = []
    for name in [p["name"] for p in people] + others:
        timing, agreeing, work = pace.get(name), agreement.get(name), assigned.get(name)
        compared = agreeing["compared"] if agreeing else 0
        agreed = agreeing["agreed"] if agreeing else 0
        rows.append({
            "annotator": name, "role": roles.get(name, ""),
            "items_done": int(done.get(name, 0)),
            "median_seconds_per_item": round(float(timing["median_seconds"]), 1) if timing else None,
            "timed_items": int(timing["timed"]) if timing else 0,
            "agreed_with_final": int(agreed), "compared_with_final": int(compared),
            "agreement_with_final": round(agreed / compared, 3) if compared else None,
            "assigned": int(work["assigned"]) if work else 0,
            "assignments_open": int(work["open"]) if work else 0,
        })
    return rows
