"""The items open on the Audit page and each tab's back-key trail (migrations 0025, 0028): the
``open_items`` table, read and written here only.

``open_items`` has one row per tab of a person (``annotator``, ``tab``): the verdict the tab has
open (NULL: nothing, its queue ended), the queue it came from, ``seen_review`` (the person's latest
review row of the verdict when it was opened), ``expires_at`` (until when it is held for them), the
tab's trail and when the row last changed. Rows are state, replaced and deleted; nothing here touches
a review, a flag or a skip.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from lsqa.store.bulk import fetch_dicts

TRAIL_MAX = 200  # ids kept per tab: K goes back this far
TAB_KEPT = timedelta(days=30)  # a tab's row (its trail) untouched this long goes
ADJUDICATION = "adjudicate"  # the queue of a disagreement open on the Adjudicate page (lsqa.audit.open_items)
_OPEN = "annotator, tab, judgment_id, queue, seen_review, opened_at, expires_at"


def latest_review(con, annotator: str, judgment_id: str) -> int | None:
    """The id of ``annotator``'s latest review row of the verdict (an undo included), None if none."""
    row = con.execute("SELECT max(id) FROM human_reviews WHERE annotator = ? AND judgment_id = ?",
                      [annotator, judgment_id]).fetchone()
    return None if row[0] is None else int(row[0])


def open_of(con, annotator: str, tab: str) -> dict | None:
    """The row of the item ``annotator``'s tab has open, or None (nothing open there)."""
    rows = fetch_dicts(con, f"SELECT {_OPEN} FROM open_items WHERE annotator = ? AND tab = ? AND judgment_id IS NOT NULL",
                       [annotator, tab])
    return rows[0] if rows else None


def put(con, *, annotator: str, tab: str, judgment_id: str, queue: str, now: datetime, lease_s: float,
        trail: list[str] | None = None) -> dict:
    """Open ``judgment_id`` in the tab (its row replaced), held until ``now + lease_s``, with the
    person's latest review row of it as seen now, and the tab's ``trail`` (None: the one it had). Rows
    of tabs untouched for ``TAB_KEPT`` go at the same time."""
    seen = latest_review(con, annotator, judgment_id)
    gone = con.execute("DELETE FROM open_items WHERE (annotator = ? AND tab = ?) OR updated_at < ?"
                       " RETURNING annotator, tab, trail", [annotator, tab, now - TAB_KEPT]).fetchall()
    if trail is None:
        trail = next((ids for who, t, ids in gone if who == annotator and t == tab), None) or []
    con.execute("INSERT INTO open_items (annotator, tab, judgment_id, queue, seen_review, opened_at, expires_at,"
                " trail, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [annotator, tab, judgment_id, queue, seen, now, now + timedelta(seconds=lease_s),
                 list(trail)[-TRAIL_MAX:], now])
    return {"judgment_id": judgment_id, "queue": queue, "seen_review": seen}


def renew(con, *, annotator: str, tab: str, judgment_id: str, now: datetime, lease_s: float) -> bool:
    """Hold the tab's open item until ``now + lease_s`` again; False when the tab no longer has it open."""
    n = con.execute("UPDATE open_items SET expires_at = ? WHERE annotator = ? AND tab = ? AND judgment_id = ?"
                    " RETURNING 1", [now + timedelta(seconds=lease_s), annotator, tab, judgment_id]).fetchall()
    return bool(n)


def close(con, annotator: str, tab: str, now: datetime) -> None:
    """The tab has no item open any more (its queue ended); its trail stays."""
    con.execute("UPDATE open_items SET judgment_id = NULL, updated_at = ? WHERE annotator = ? AND tab = ?",
                [now, annotator, tab])


def held_elsewhere(con, annotator: str, tab: str, ids: list[str], shared: tuple[str, ...], now: datetime,
                   *, own_tabs: bool = True) -> dict[str, str]:
    """Of ``ids``, those held (not expired) by another tab: by anybody when served from a queue of
    ``shared``, or (``own_tabs``) by another Audit page tab of ``annotator`` whatever its queue (a
    disagreement open on the Adjudicate page, ``ADJUDICATION``, is not an Audit page tab's); each with
    who holds it."""
    if not ids:
        return {}
    # The live rows are one per open tab, a handful: read whole and sorted out here, which costs a
    # quarter of a query that filters them by the candidates (a hundred ids of the queue's head).
    wanted = set(ids)
    held: dict[str, str] = {}
    for judgment_id, holder, holder_tab, queue in con.execute(
            "SELECT judgment_id, annotator, tab, queue FROM open_items WHERE expires_at >= ? ORDER BY annotator",
            [now]).fetchall():
        if judgment_id not in wanted or (holder == annotator and holder_tab == tab):
            continue
        mine = holder == annotator and own_tabs and queue != ADJUDICATION
        if mine or queue in shared:
            if judgment_id not in held or held[judgment_id] == annotator:  # somebody else is named before me
                held[judgment_id] = holder
    return held


def reviewed_by_others_since(con, annotator: str, ids: list[str], after_id: int) -> set[str]:
    """Of ``ids``, those another person reviewed (a review row, an undo included) after row ``after_id``."""
    if not ids:
        return set()
    return {j for (j,) in con.execute(
        "SELECT DISTINCT judgment_id FROM human_reviews WHERE id > $after AND annotator <> $a"
        " AND judgment_id IN (SELECT unnest($ids))", {"after": int(after_id), "a": annotator, "ids": list(ids)}).fetchall()}


def open_items(con) -> list[dict]:
    """Every tab's open item (tabs with nothing open left out)."""
    return fetch_dicts(con, f"SELECT {_OPEN} FROM open_items WHERE judgment_id IS NOT NULL ORDER BY annotator, tab")


def trail_of(con, annotator: str, tab: str | None = None) -> list[str]:
    """The tab's trail (a reload), else ``annotator``'s latest in any tab (a new tab); [] if none."""
    row = con.execute("SELECT trail FROM open_items WHERE annotator = $a ORDER BY tab = $tab DESC, updated_at DESC"
                      " LIMIT 1", {"a": annotator, "tab": tab or ""}).fetchone()
    return list(row[0]) if row else []
