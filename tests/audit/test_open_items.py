"""Items held while open and the guard every decision from the Audit page passes (lsqa.audit.open_items),
without a browser: on a private copy of the small demo workspace, with the real DuckDB file.

A decision from a tab is written only on the item open there and only once (a repeat, a stale screen,
a second tab and a queue that has ended write nothing); a change is a decision made on the item opened
again; an item served from a shared queue goes to one person at a time (threads asking at once
included) until its hold lapses; the back-key trail is kept per person; opening an item changes no
table but its own, and keeps every kept read; a workspace from before the trails moved into it keeps them.
"""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest

from lsqa import audit, store
from lsqa.audit import open_items
from lsqa.audit.trail import Trail
from lsqa.dashboard import audit_view as view
from lsqa.errors import AuditRefused
from lsqa.store import reviews as reviews_store
from tests.support.migrations import workspace_before

GT = "lexical-gt"


def _rows(ws, who: str) -> list[dict]:
    with store.connect(ws) as con:
        return [r for r in reviews_store.reviews(con) if r["annotator"] == who]


def _head(ws, n: int = 6, judge: str = GT) -> list[str]:
    return [r["id"] for r in audit.queue(ws, audit.Filters(judges=(judge,)), "")["rows"][:n]]


def test_a_decision_is_written_on_the_tabs_open_item_once(demo_workspace):
    ws = demo_workspace
    x, y = _head(ws, 2)
    assert audit.open_item(ws, "ann", "t1", candidates=[x, y], queue="priority").id == x
    audit.review(ws, "ann", x, "yes", tab="t1")
    for again in (lambda: audit.review(ws, "ann", x, "no", tab="t1"),  # a key held, a click sent twice
                  lambda: audit.confirm(ws, "ann", x, tab="t1")):
        with pytest.raises(AuditRefused, match="open it again"):
            again()
    with pytest.raises(AuditRefused, match="not the item open in this tab"):
        audit.review(ws, "ann", y, "yes", tab="t1")  # a stale screen: y is not open here
    with pytest.raises(AuditRefused, match="not the item open in this tab"):
        audit.skip(ws, "ann", y, tab="t1")
    assert [(r["judgment_id"], r["label"]) for r in _rows(ws, "ann")] == [(x, "yes")]
    # Opened again (K, My recent reviews): it records what I decided, and one key changes it.
    assert audit.open_item(ws, "ann", "t1", x).seen_review == _rows(ws, "ann")[-1]["id"]
    audit.review(ws, "ann", x, "no", tab="t1")
    with pytest.raises(AuditRefused):
        audit.review(ws, "ann", x, "yes", tab="t1")
    assert [r["label"] for r in _rows(ws, "ann")] == ["yes", "no"]
    # An undo opens the item again: a decision after it is a decision, once.
    assert audit.undo_last(ws, "ann")["target"] == x
    audit.open_item(ws, "ann", "t1", x)
    audit.review(ws, "ann", x, "yes", tab="t1")
    assert [r["label"] if r["action"] != "undo" else "undo" for r in _rows(ws, "ann")] == ["yes", "no", "undo", "yes"]
    # Without a tab (the command line, imports) nothing changes: the guard is the page's.
    audit.review(ws, "ann", y, "yes")
    assert len(_rows(ws, "ann")) == 5


def test_a_queue_that_has_ended_closes_the_tab_and_refuses_every_decision(demo_workspace):
    ws = demo_workspace
    (x,) = _head(ws, 1)
    audit.open_item(ws, "ann", "t1", candidates=[x])
    audit.review(ws, "ann", x, "yes", tab="t1")
    assert audit.open_item(ws, "ann", "t1", candidates=[]).id is None  # nothing left: closed
    assert audit.open_in(ws, "ann", "t1") is None
    for label in ("yes", "no", "yes", "no", "yes"):
        with pytest.raises(AuditRefused, match="nothing is open there"):
            audit.review(ws, "ann", x, label, tab="t1")
    with pytest.raises(AuditRefused, match="nothing is open there"):
        audit.confirm(ws, "ann", x, tab="t1")
    assert len(_rows(ws, "ann")) == 1


def test_a_second_tab_never_adds_a_second_decision(demo_workspace):
    ws = demo_workspace
    x, y = _head(ws, 2)
    first = audit.open_item(ws, "ann", "t1", candidates=[x, y])
    assert first.id == x and not first.other_tab
    # The second tab is served the next item: x is open in my first tab.
    served = audit.open_item(ws, "ann", "t2", candidates=[x, y])
    assert served.id == y and served.held == {x: "ann"}
    # Opened there by hand (a link, K) it is said to be open in the other tab too; one decision is kept.
    assert audit.open_item(ws, "ann", "t2", x).other_tab
    audit.review(ws, "ann", x, "no", tab="t2")
    with pytest.raises(AuditRefused, match="another tab"):
        audit.review(ws, "ann", x, "yes", tab="t1")
    assert [(r["judgment_id"], r["label"]) for r in _rows(ws, "ann")] == [(x, "no")]


def test_an_item_served_from_a_shared_queue_goes_to_one_person_until_its_hold_lapses(demo_workspace, monkeypatch):
    ws = demo_workspace
    ids = _head(ws, 4)
    assert audit.open_item(ws, "ann", "a1", candidates=ids, queue="random").id == ids[0]
    assert audit.open_item(ws, "ben", "b1", candidates=ids, queue="random").id == ids[1]
    assert audit.open_item(ws, "cat", "c1", candidates=ids[:2], queue="random").id is None  # both held
    # A candidate somebody reviewed after the queue was read is passed over (it may have left the queue).
    marker = audit.opened_marker(ws)
    audit.review(ws, "dan", ids[2], "yes")
    got = audit.open_item(ws, "cat", "c1", candidates=ids, queue="random", read_after=marker)
    assert got.id == ids[3] and got.held[ids[2]] == "(reviewed meanwhile)"
    assert audit.open_item(ws, "cat", "c1", candidates=ids[2:], queue="random",
                           read_after=audit.opened_marker(ws)).id == ids[2]  # a read after it: served
    audit.close_item(ws, "cat", "c1")
    # An assignment is a person's own: ben's assigned item is served to ann's assignments too.
    assert audit.open_item(ws, "ben", "b1", candidates=[ids[2]], queue=audit.ASSIGNED).id == ids[2]
    assert audit.open_item(ws, "ann", "a2", candidates=[ids[2]], queue=audit.ASSIGNED).id == ids[2]
    # Renewed, a hold lasts; a tab closed is not renewed, and its item is served again after LEASE_S.
    assert audit.keep_open(ws, "ann", "a1", ids[0]) and not audit.keep_open(ws, "ann", "a1", ids[3])
    later = open_items._now() + timedelta(seconds=audit.LEASE_S + 1)
    monkeypatch.setattr(open_items, "_now", lambda: later)
    assert audit.open_item(ws, "cat", "c1", candidates=ids[:2], queue="random").id == ids[0]


def test_two_people_asking_at_once_never_get_the_same_item(demo_workspace):
    ws = demo_workspace
    ids = _head(ws, 40, judge="lexical-sxs-fc")
    got: dict[str, list[str]] = {"ann": [], "ben": []}
    start = threading.Barrier(2)

    def work(name: str):
        start.wait()
        for i in range(15):
            got[name].append(audit.open_item(ws, name, f"{name}-{i}", candidates=ids, queue="priority").id)

    threads = [threading.Thread(target=work, args=(n,)) for n in got]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    served = got["ann"] + got["ben"]
    assert None not in served and len(set(served)) == 30  # every tab its own item, none twice


def test_the_trail_is_kept_per_person_and_a_reload_finds_its_item(demo_workspace):
    ws = demo_workspace
    x, y, z = _head(ws, 3)
    audit.open_item(ws, "ann", "t1", candidates=[x], trail=[])
    audit.open_item(ws, "ann", "t1", candidates=[y], trail=[x])
    audit.open_item(ws, "ann", "t1", x, trail=[y, x])  # K back to x, moved to the end as Trail.open does
    assert audit.trail_of(ws, "ann") == [y, x] and audit.trail_of(ws, "ben") == []
    tab = "0123456789abcdef"
    audit.open_item(ws, "ann", tab, candidates=[z], trail=[x])  # a tab that went x, z
    audit.open_item(ws, "ann", "t1", z, trail=[y, x, z])  # t1 later: my latest trail
    assert audit.trail_of(ws, "ann", tab) == [x, z] and audit.trail_of(ws, "ann") == [y, x, z]
    # A reload of the tab (its id in the address) is back on z, with K back to x along its own trail.
    again = view.opening_state({"tab": [tab]}, dict, stored_trail=lambda t: audit.trail_of(ws, "ann", t),
                               open_in=lambda t: audit.open_in(ws, "ann", t))
    assert again[view.TAB_KEY] == tab
    trail = Trail(again["audit_trail"], again["audit_at"])
    assert trail.current(None) == z
    trail.back()
    assert trail.current(None) == x
    # A new tab: my latest trail, at its end (the queue's head), under a new tab id.
    new = view.opening_state({}, dict, stored_trail=lambda t: audit.trail_of(ws, "ann", t),
                             open_in=lambda t: audit.open_in(ws, "ann", t))
    assert new["audit_trail"] == [y, x, z] and new["audit_at"] == 3 and new[view.TAB_KEY] != tab
    # A new tab whose link names a queue of its own starts a new trail, as choosing other settings does.
    linked = view.opening_state({"judge": [GT]}, lambda: {"judges": [GT], "systems": []},
                                stored_trail=lambda t: audit.trail_of(ws, "ann", t))
    assert linked["audit_trail"] == [] and linked["audit_judges"] == [GT]


def test_opening_an_item_writes_only_its_own_tables_and_keeps_the_kept_reads(demo_workspace):
    from tests.support.bad_input import changed_tables, snapshot

    ws = demo_workspace
    q = audit.queue(ws, audit.Filters(), "ann")
    before = snapshot(ws)
    audit.open_item(ws, "ann", "t1", candidates=[r["id"] for r in q["rows"]], trail=[])
    assert set(changed_tables(before, snapshot(ws))) <= set(open_items.OPEN_CHANGE.tables)
    from lsqa.audit import priority_queue

    kept = priority_queue._queue_page.kept_only(ws, audit.Filters(), "ann", page=0,
                                                page_size=audit.PAGE_SIZE + audit.HEAD_SLACK, exclude=())
    assert kept is not None and kept[0]["rows"][:audit.PAGE_SIZE] == q["rows"]  # still kept after the hold's commit


def test_where_i_am_serves_holds_and_ends(demo_workspace):
    """The page's view: the head is the first item not held elsewhere; a queue with nothing left has
    no current item and its tab refuses decisions; K back to a decided item says what I decided."""
    ws = demo_workspace
    filters = audit.Filters(judges=(GT,), questions=tuple({audit.item(ws, i)["question_id"] for i in _head(ws, 1)}))
    total = audit.queue(ws, filters, "ann")["total"]
    assert total >= 2
    state, other = view.opening_state({}, dict), view.opening_state({}, dict)
    view.restore_settings(state)
    view.restore_settings(other)
    trail, trail_b = Trail(state["audit_trail"], 0), Trail(other["audit_trail"], 0)
    here = view.where_i_am(ws, trail, filters, "ann", state, None, "ann")
    there = view.where_i_am(ws, trail_b, filters, "ben", other, None, "ben")
    assert here.current_id and there.current_id and here.current_id != there.current_id

    def decide_all(here):
        while here.current_id:
            it = audit.item(ws, here.current_id)
            view.save_decision(ws, "ann", it["id"], it["kind"], "yes", "yes", "", None, 0, tab=state[view.TAB_KEY])
            trail.forward()
            here = view.where_i_am(ws, trail, filters, "ann", state, None, "ann")
        return here

    here = decide_all(here)
    assert here.current_id is None and here.held == 1 and len(_rows(ws, "ann")) == total - 1  # ben's is held
    assert "open for somebody else" in view.empty_queue_note(filters, state, held=here.held)
    audit.close_item(ws, "ben", other[view.TAB_KEY])
    trail.forward()
    here = decide_all(view.where_i_am(ws, trail, filters, "ann", state, None, "ann"))
    assert here.current_id is None and here.held == 0 and trail.can_go_back()
    n = len(_rows(ws, "ann"))
    assert n == total
    for label in ("yes", "no"):
        with pytest.raises(AuditRefused):
            view.save_decision(ws, "ann", trail.ids[-1], "groundtruth", label, label, "", None, 0, tab=state[view.TAB_KEY])
    assert len(_rows(ws, "ann")) == n
    assert "Nothing left in this queue" in view.empty_queue_note(filters, state)
    assert [q["key"] for q in view.next_queues({**state, "audit_judges": [GT]}, {"open": 2})] == \
        ["audit_next_assigned", "audit_next_priority"]
    assert view.next_queues(state, {"open": 0}) == []  # the whole priority queue ended: nothing else to offer
    assert "All 19 of your assignments are done" in view.empty_queue_note(
        audit.Filters(reviewed=audit.ASSIGNED), {**state, "audit_queue": audit.ASSIGNED}, {"assigned": 19, "done": 19})
    # K goes back to a decided item: it says what I decided, and one key changes it.
    trail.back()
    back = view.where_i_am(ws, trail, filters, "ann", state, None, "ann")
    it = audit.item(ws, back.current_id)
    bar = view.decision_bar(it, True, "ann", trail, back.remaining, back.why, "wrong")
    assert bar.mine.startswith("You decided: **Yes")
    view.save_decision(ws, "ann", it["id"], it["kind"], "no", "no", "", None, 0, tab=state[view.TAB_KEY])
    assert len(_rows(ws, "ann")) == n + 1


def test_blind_hides_the_queue_reasons(demo_workspace):
    ws = demo_workspace
    rows = audit.queue(ws, audit.Filters(judges=(GT,)), "ann")["rows"]
    row = next(r for r in rows if r["why"] != "—")
    it = audit.item(ws, row["id"])
    why = {row["id"]: view.why_shown(row)}
    seen = view.decision_bar(it, True, "ann", Trail([row["id"]], 0), 3, why, "wrong").position
    blind = view.decision_bar(it, False, "ann", Trail([row["id"]], 0), 3, why, "wrong").position
    assert row["why"] in seen and row["why"] not in blind and "priority" not in blind and "hidden while blind" in blind
    assert all({"priority", "why"}.isdisjoint(r) for r in view.up_next_table(rows, blind=True))
    assert all({"priority", "why"} <= set(r) for r in view.up_next_table(rows, blind=False))


def test_a_disagreement_open_for_one_adjudicator_is_passed_over_for_another(demo_workspace):
    """The Adjudicate page's holds: judy's open disagreement is not served to jo; an Audit page tab of
    judy's does not hold it for jo, nor does judy's Adjudicate tab keep the verdict from her own Audit
    page; picking it anyway holds it too and says who else has it open."""
    ws = demo_workspace
    ids = _head(ws, 4)
    judy = audit.open_item(ws, "judy", "adj-1", candidates=ids, queue=audit.ADJUDICATION)
    assert judy.id == ids[0]
    jo = audit.open_item(ws, "jo", "adj-2", candidates=ids, queue=audit.ADJUDICATION)
    assert jo.id == ids[1] and jo.held == {ids[0]: "judy"}
    audit.open_item(ws, "judy", "audit-tab", ids[2])  # judy's Audit page: not an adjudication hold
    assert audit.open_item(ws, "jo", "adj-2", candidates=ids[2:], queue=audit.ADJUDICATION).id == ids[2]
    mine = audit.open_item(ws, "judy", "audit-2", candidates=ids, queue="priority")
    assert mine.id == ids[0] and not mine.other_tab  # her adjudication hold is not an Audit page tab
    picked = audit.open_item(ws, "jo", "adj-2", ids[0], queue=audit.ADJUDICATION)
    assert picked.id == ids[0] and picked.held == {ids[0]: "judy"}
    assert audit.open_after([{"judgment_id": j, "adjudicated": None} for j in ids], ids[1]) == [ids[2], ids[3], ids[0]]


def test_migration_0028_keeps_every_trail_and_open_item(tmp_path):
    """A workspace at migration 0027 with a tab holding an item and a trail, and a trail of a tab with
    nothing open: after 0028 (trails moved into open_items) both trails read back, the open item is
    still the tab's, the other tab has nothing open, and the next item opened extends its tab's trail."""
    ws, con = workspace_before(tmp_path, "0028")
    con.execute("INSERT INTO open_items VALUES ('ann', 't1', 'j2', 'priority', NULL, now()::TIMESTAMP,"
                " now()::TIMESTAMP + INTERVAL 3 MINUTE)")
    con.execute("INSERT INTO audit_trails VALUES ('ann', 't1', ['j1', 'j2'], now()::TIMESTAMP - INTERVAL 1 MINUTE),"
                " ('ann', 't0', ['j0'], now()::TIMESTAMP - INTERVAL 1 HOUR)")
    con.close()
    assert audit.trail_of(ws, "ann", "t1") == ["j1", "j2"]  # connecting migrates to 0028
    assert audit.trail_of(ws, "ann", "t0") == ["j0"] and audit.trail_of(ws, "ann") == ["j1", "j2"]
    assert audit.open_in(ws, "ann", "t1") == "j2" and audit.open_in(ws, "ann", "t0") is None
    with store.connect(ws) as con:
        assert not con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'audit_trails'"
                               " AND database_name = current_database()").fetchone()[0]
    assert audit.open_item(ws, "ann", "t0", "j3", trail=["j0"]).id == "j3"
    assert audit.trail_of(ws, "ann", "t0") == ["j0", "j3"] and audit.open_in(ws, "ann", "t0") == "j3"
