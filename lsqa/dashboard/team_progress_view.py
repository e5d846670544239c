"""The Audit page's "Team progress" table for admins: per person, items done, median seconds per item,
agreement with the final label and assignments still open (``lsqa.audit.team_figures``, which
refuses anybody but an admin: the page's showing the table only to admins is a courtesy, not the guard).
"""

from __future__ import annotations

from pathlib import Path

from lsqa import audit
from lsqa.team import Person

TITLE = "Team progress"

# Column shown: the figure of lsqa.audit.team_figures it shows.
COLUMNS = {"person": "annotator", "role": "role", "done": "items_done", "s per item (median)": "median_seconds_per_item",
           "timed": "timed_items", "agrees with final": "agreement_with_final", "of": "compared_with_final",
           "assigned": "assigned", "left": "assignments_open"}

HELP = (f"Done: verdicts the person has a current label of. Seconds per item: median time from their action "
        f"before a decision to the decision, on this page; a gap over {audit.BREAK_SECONDS // 60} minutes is a "
        f"break and not counted (timed: how many gaps). Agrees with final: share of their labels equal to the "
        f"final label (adjudicated, else the majority), of verdicts somebody else also labelled or adjudicated. "
        f"Left: assigned verdicts they have not reviewed yet.")


def rows(workspace: Path, who: Person | str) -> list[dict]:
    """The table's rows for ``who`` (NotAllowed unless they may oversee: admins)."""
    return [{shown: r[key] for shown, key in COLUMNS.items()} for r in audit.team_figures(workspace, by=who)]
