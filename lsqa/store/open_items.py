"""The items open on the Audit page and each person's back-key trail (migration 0025): the
``open_items`` and ``audit_trails`` tables, read and written here only.

``open_items`` has one row per tab of a person (``annotator``, ``tab``): the verdict the tab has
open, the queue it came from, ``seen_review`` (the person's latest review row of the verdict when it
was opened) and ``expires_at`` (until when it is held for them). Rows are state, replaced and
deleted; nothing here touches a review, a flag or a skip.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from lsqa.store.bulk import fetch_dicts

TRAIL_MAX = 200  # ids kept per person: K goes back this far
ADJUDICATION = "adjudicate"  # the queue of a disagreement open on the Adjudicate page (lsqa.audit.open_items)


def latest_review(con, annotator: str, judgment_id: str) -> int | None:
    """The id of ``annotator``'s latest review row of the verdict (an undo included), None if none."""
    row = con.execute("SELECT max(id) FROM human_reviews WHERE annotator = ? AND judgment_id = ?",
                      [annotator, judgment_id]).fetchone()
    return None if row[0] is None else int(row[0])


def open_of(con, annotator: str, tab: str) -> dict | None:
    """The row of the item ``annotator``'s tab has open, or None."""
    rows = fetch_dicts(con, "SELECT * FROM open_items WHERE annotator = ? AND tab = ?", [annotator, tab])
    return rows[0] if rows else None


def put(con, *, annotator: str, tab: str, judgment_id: str, queue: str, now: datetime, lease_s: float) -> dict:
    """Open ``judgment_id`` in the tab (its row replaced), held until ``now + lease_s``, with the
    person's latest review row of it as seen now. Rows expired a day ago (tabs long closed) go at the
    same time; a row expired more recently still names its tab's open item (the guard's), only its
    hold on serving has lapsed."""
    seen = latest_review(con, annotator, judgment_id)
    con.execute("DELETE FROM open_items WHERE (annotator = ? AND tab = ?) OR expires_at < ?",
                [annotator, tab, now - timedelta(days=1)])
    con.execute("INSERT INTO open_items (annotator, tab, judgment_id, queue, seen_review, opened_at, expires_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                [annotator, tab, judgment_id, queue, seen, now, now + timedelta(seconds=lease_s)])
    return {"judgment_id": judgment_id, "queue": queue, "seen_review": seen}


def renew(con, *, annotator: str, tab: str, judgment_id: str, now: datetime, lease_s: float) -> bool:
    """Hold the tab's open item until ``now + lease_s`` again; False when the tab no longer has it open."""
    n = con.execute("UPDATE open_items SET expires_at = ? WHERE annotator = ? AND tab = ? AND judgment_id = ?"
                    " RETURNING 1", [now + timedelta(seconds=lease_s), annotator, tab, judgment_id]).fetchall()
    return bool(n)


def close(con, annotator: str, tab: str) -> None:
    """The tab has no item open any more (its queue ended)."""
    con.execute("DELETE FROM open_items WHERE annotator = ? AND tab = ?", [annotator, tab])


def held_elsewhere(con, annotator: str, tab: str, ids: list[str], shared: tuple[str, ...], now: datetime,
                   *, own_tabs: bool = True) -> dict[str, str]:
    """Of ``ids``, those held (not expired) by another tab: by anybody when served from a queue of
    ``shared``, or (``own_tabs``) by another Audit page tab of ``annotator`` whatever its queue (a
    disagreement open on the Adjudicate page, ``ADJUDICATION``, is not an Audit page tab's); each with
    who holds it."""
    if not ids:
        return {}
    rows = con.execute("""
        SELECT judgment_id, any_value(annotator ORDER BY annotator = $a) FROM open_items
        WHERE judgment_id IN (SELECT unnest($ids)) AND expires_at >= $now AND NOT (annotator = $a AND tab = $tab)
          AND ((annotator = $a AND $own AND queue <> $adjudication) OR queue IN (SELECT unnest($shared)))
        GROUP BY judgment_id""", {"a": annotator, "tab": tab, "ids": list(ids), "shared": list(shared),
                                  "now": now, "own": own_tabs, "adjudication": ADJUDICATION}).fetchall()
    return {j: who for j, who in rows}


def reviewed_by_others_since(con, annotator: str, ids: list[str], after_id: int) -> set[str]:
    """Of ``ids``, those another person reviewed (a review row, an undo included) after row ``after_id``."""
    if not ids:
        return set()
    return {j for (j,) in con.execute(
        "SELECT DISTINCT judgment_id FROM human_reviews WHERE id > $after AND annotator <> $a"
        " AND judgment_id IN (SELECT unnest($ids))", {"after": int(after_id), "a": annotator, "ids": list(ids)}).fetchall()}


def open_items(con) -> list[dict]:
    return fetch_dicts(con, "SELECT * FROM open_items ORDER BY annotator, tab")


def trail_of(con, annotator: str, tab: str | None = None) -> list[str]:
    """The tab's trail (a reload), else ``annotator``'s latest saved in any tab (a new tab); [] if none."""
    row = con.execute("SELECT ids FROM audit_trails WHERE annotator = $a ORDER BY tab = $tab DESC, updated_at DESC"
                      " LIMIT 1", {"a": annotator, "tab": tab or ""}).fetchone()
    return list(row[0]) if row else []


def save_trail(con, annotator: str, tab: str, ids: list[str], now: datetime) -> list[str]:
    """Keep the trail of ``annotator``'s tab (its last ``TRAIL_MAX`` ids); trails untouched for 30 days go."""
    ids = list(ids)[-TRAIL_MAX:]
    con.execute("DELETE FROM audit_trails WHERE (annotator = ? AND tab = ?) OR updated_at < ?",
                [annotator, tab, now - timedelta(days=30)])
    con.execute("INSERT INTO audit_trails (annotator, tab, ids, updated_at) VALUES (?, ?, ?, ?)",
                [annotator, tab, ids, now])
    return ids
