"""Assignments of verdicts to annotators: the ``assignments`` table (migration 0015), read
and written here only. Append-only: a batch adds rows; an assignment is done once its annotator has a
live review of the verdict (the ``human_labels`` view), which nothing here writes or removes.
"""

from __future__ import annotations

from lsqa.store.bulk import fetch_dicts

# One row per (verdict, annotator) still to be reviewed by that annotator, and its batch's draw.
OPEN_SQL = """
    SELECT a.judgment_id, a.annotator, any_value(a.queue ORDER BY (a.queue = 'random') DESC, a.id) AS queue,
           any_value(a.inclusion_prob ORDER BY (a.queue = 'random') DESC, a.id) AS inclusion_prob,
           any_value(a.stratum ORDER BY (a.queue = 'random') DESC, a.id) AS stratum, min(a.id) AS first_id
    FROM assignments a
    WHERE NOT EXISTS (SELECT 1 FROM human_labels h WHERE h.judgment_id = a.judgment_id AND h.annotator = a.annotator)
    GROUP BY a.judgment_id, a.annotator"""


def add_assignments(con, rows: list[dict]) -> int:
    """Insert one batch: each row has batch, judge, judgment_id, annotator, assigned_by, queue,
    inclusion_prob, stratum."""
    if not rows:
        return 0
    con.executemany(
        "INSERT INTO assignments (batch, judge, judgment_id, annotator, assigned_by, queue, inclusion_prob, stratum)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [[r["batch"], r["judge"], r["judgment_id"], r["annotator"], r["assigned_by"], r["queue"],
          r["inclusion_prob"], r["stratum"]] for r in rows])
    return len(rows)


def assigned_pairs(con, judge: str) -> set[tuple[str, str]]:
    """(verdict, annotator) of every assignment ever made for ``judge``'s verdicts."""
    return {(j, a) for j, a in con.execute(
        "SELECT DISTINCT judgment_id, annotator FROM assignments WHERE judge = ?", [judge]).fetchall()}


def assignments(con) -> list[dict]:
    return fetch_dicts(con, "SELECT * FROM assignments ORDER BY id")


def open_assignments(con, annotator: str) -> list[dict]:
    """The verdicts assigned to ``annotator`` that they have not reviewed yet, in the order assigned,
    each with how its batch drew it (a random batch's wins when a verdict is in several)."""
    return fetch_dicts(con, f"SELECT * FROM ({OPEN_SQL}) WHERE annotator = ? ORDER BY first_id", [annotator])


def progress(con, annotator: str) -> dict:
    """``{"assigned", "done"}``: distinct verdicts assigned to ``annotator``, and how many of them
    they have a live review of."""
    assigned, done = con.execute("""
        SELECT count(*), count(h.judgment_id) FROM (SELECT DISTINCT judgment_id FROM assignments WHERE annotator = $a) a
        LEFT JOIN (SELECT judgment_id FROM human_labels WHERE annotator = $a) h USING (judgment_id)""",
                                 {"a": annotator}).fetchone()
    return {"assigned": int(assigned), "done": int(done)}


def team_progress(con) -> list[dict]:
    """Per annotator with assignments: verdicts assigned, done, open."""
    return fetch_dicts(con, """
        SELECT a.annotator, count(*) AS assigned, count(h.judgment_id) AS done, count(*) - count(h.judgment_id) AS open
        FROM (SELECT DISTINCT judgment_id, annotator FROM assignments) a
        LEFT JOIN human_labels h USING (judgment_id, annotator)
        GROUP BY a.annotator ORDER BY a.annotator""")



def verdict_count(con, judge: str) -> int:
    """How many verdicts ``judge`` has (any status): a judge with none cannot be assigned."""
    return int(con.execute("SELECT count(*) FROM judgments WHERE judge = ?", [judge]).fetchone()[0])
