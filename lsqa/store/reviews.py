"""Human reviews of verdicts and flags on reference answers: append-only.

Nothing here updates or deletes a row. An undo is a new review row that withdraws an earlier
one; a flag is withdrawn by a ``retract`` flag. The current state is derived by reading.
"""

from __future__ import annotations

from lsqa.store.bulk import fetch_dicts
from lsqa.vocabulary import FLAG_REASONS, REFERENCES, REVIEW_ACTIONS



def add_review(con, *, annotator: str, judgment_id: str, action: str, label: str | None = None,
               note: str = "", undoes: int | None = None) -> int:
    if action not in REVIEW_ACTIONS:
        raise ValueError(f"review action must be one of {REVIEW_ACTIONS}, not {action!r}")
    if not annotator.strip():
        raise ValueError("an annotator name is required")
    row = con.execute(
        "INSERT INTO human_reviews (annotator, judgment_id, action, label, note, undoes)"
        " VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
        [annotator.strip(), judgment_id, action, label, note, undoes],
    ).fetchone()
    return int(row[0])


def reviews(con, judgment_id: str | None = None) -> list[dict]:
    if judgment_id is None:
        return fetch_dicts(con, "SELECT * FROM human_reviews ORDER BY id")
    return fetch_dicts(con, "SELECT * FROM human_reviews WHERE judgment_id = ? ORDER BY id", [judgment_id])


def add_flag(con, *, annotator: str, question_id: str, reference: str, reason: str, note: str = "") -> int:
    if reason not in FLAG_REASONS:
        raise ValueError(f"flag reason must be one of {FLAG_REASONS}, not {reason!r}")
    if reference not in REFERENCES:
        raise ValueError(f"reference must be '1' or '2', not {reference!r}")
    if not annotator.strip():
        raise ValueError("an annotator name is required")
    row = con.execute(
        "INSERT INTO reference_flags (annotator, question_id, reference, reason, note)"
        " VALUES (?, ?, ?, ?, ?) RETURNING id",
        [annotator.strip(), question_id, reference, reason, note],
    ).fetchone()
    return int(row[0])


def flags(con) -> list[dict]:
    return fetch_dicts(con, "SELECT * FROM reference_flags ORDER BY id")
