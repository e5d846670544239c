"""Reads kept while the workspace is unchanged (``lsqa.store.workspace_cache``): the data version that keys
them moves with every commit, from this process or another, and never with a read."""

from __future__ import annotations

import re
import threading
from pathlib import Path

import pytest

from lsqa import audit, store
from lsqa.audit import actions, kept_reads, priority_queue
from lsqa.dashboard import common
from lsqa.store import workspace_cache
from lsqa.store.db import data_version
from tests.conftest import run_python

SET_OVERLAP = """
import sys
from lsqa import audit
audit.set_overlap(sys.argv[1], float(sys.argv[2]), "other-process")
"""


@pytest.fixture
def made(workspace):
    """A workspace that exists (migrated), with no data."""
    with store.connect(workspace):
        pass
    return workspace


def counted_read():
    """A cached read that counts how often it really reads, and what it saw."""
    calls = []

    @workspace_cache.kept_while_unchanged()
    def overlap_read(ws, *, extra=()):
        calls.append(extra)
        return {"overlap": audit.overlap.uncached(ws), "extra": list(extra)}

    return overlap_read, calls


def test_reads_leave_the_version_as_it_is(made):
    before = data_version(made)
    with store.connect(made) as con:
        con.execute("SELECT count(*) FROM judgments").fetchall()
    audit.queue(made)
    assert data_version(made) == before


def test_a_commit_in_this_process_moves_the_version_attached_or_not(made):
    v0 = data_version(made)
    audit.set_overlap(made, 0.3, "me")  # its own connection: committed and checkpointed
    v1 = data_version(made)
    assert v1 != v0
    with common.kept_open(made):  # attached for a whole render: the commit stays in the WAL
        v2 = data_version(made)
        audit.set_overlap(made, 0.4, "me")
        v3 = data_version(made)
        assert v3 != v2
    assert len({v0, v1, v3, data_version(made)}) == 4


def test_a_commit_from_another_process_moves_the_version(made):
    before = data_version(made)
    done = run_python(SET_OVERLAP, made, 0.25)
    assert done.returncode == 0, done.stderr
    assert data_version(made) != before


def test_a_missing_workspace_has_no_version_and_is_read_every_time(tmp_path):
    assert data_version(tmp_path / "none.duckdb") is None


def test_a_kept_read_is_read_again_after_any_commit(made):
    read, calls = counted_read()
    assert read(made)["overlap"] == read(made)["overlap"] == 1.0  # the default
    assert len(calls) == 1  # the second came from what was kept

    done = run_python(SET_OVERLAP, made, 0.25)  # another process: the CLI, another dashboard
    assert done.returncode == 0, done.stderr
    assert read(made)["overlap"] == 0.25
    audit.set_overlap(made, 0.5, "me")  # this process
    assert read(made)["overlap"] == 0.5
    assert len(calls) == 3


def test_a_commit_by_another_thread_during_a_render_is_seen(made):
    read, calls = counted_read()
    with common.kept_open(made):
        assert read(made)["overlap"] == 1.0
        writer = threading.Thread(target=audit.set_overlap, args=(made, 0.7, "other-session"))
        writer.start()
        writer.join()
        assert read(made)["overlap"] == 0.7
    assert len(calls) == 2


def test_arguments_are_part_of_the_key_and_lists_count_as_tuples(made):
    read, calls = counted_read()
    read(made, extra=["a"])
    read(made, extra=("a",))
    read(made, extra=["b"])
    assert calls == [["a"], ["b"]]


def test_callers_get_copies(made):
    read, _ = counted_read()
    first = read(made, extra=["a"])
    first["extra"].append("changed by a caller")
    first["overlap"] = 99
    assert read(made, extra=["a"]) == {"overlap": 1.0, "extra": ["a"]}


def test_turned_off_by_the_environment(made, monkeypatch):
    read, calls = counted_read()
    monkeypatch.setenv("LSQA_READ_CACHE", "0")
    read(made)
    read(made)
    assert len(calls) == 2


def test_audit_queue_and_item_follow_a_review(demo_workspace):
    """The Audit page's reads: a review takes the item out of my queue and shows in its labels."""
    first = audit.queue(demo_workspace, annotator="ann")["rows"][0]
    assert audit.queue(demo_workspace, annotator="ann")["rows"][0]["id"] == first["id"]
    assert audit.item(demo_workspace, first["id"])["human_labels"] == []

    audit.confirm(demo_workspace, "ann", first["id"])
    assert audit.queue(demo_workspace, annotator="ann")["rows"][0]["id"] != first["id"]
    assert [lab["annotator"] for lab in audit.item(demo_workspace, first["id"])["human_labels"]] == ["ann"]
    assert [r["id"] for r in audit.recent(demo_workspace, "ann")] == [first["id"]]


CONFIRM_AS_CAROL = """
import sys
from lsqa import audit
audit.confirm(sys.argv[1], "carol", sys.argv[2], "seen from the command line")
"""


def test_the_open_audit_page_shows_a_review_made_by_another_process(demo_workspace, monkeypatch):
    """alice has an item open (its reads kept); carol reviews it from another process; alice's next
    render shows carol's label: the kept reads are not served after a commit elsewhere."""
    from tests.dashboard.test_dashboard_pages import SXS, audit_first_of, open_app
    from tests.support.audit_desk import desk_text

    monkeypatch.setenv("LSQA_WORKSPACE", str(demo_workspace))
    alice = open_app("alice", "audit")
    item = audit_first_of(alice, SXS)
    alice.run()
    assert "carol" not in desk_text(alice)

    done = run_python(CONFIRM_AS_CAROL, demo_workspace, item["id"])
    assert done.returncode == 0, done.stderr
    alice.run()
    assert re.search(r"carol: confirm → .* — seen from the command line", desk_text(alice)), desk_text(alice)


DASHBOARD_READS = """
import sys
from lsqa import audit
from lsqa.dashboard import corpus_view
from lsqa.audit import reference_errors
from lsqa.errors import WorkspaceError
for read in (audit.queue, audit.item, corpus_view.books, reference_errors.suspects):
    try:
        read(sys.argv[1]) if read is not audit.item else read(sys.argv[1], "x")
    except WorkspaceError as exc:
        print(str(exc).splitlines()[0])
    else:
        print("no refusal")
"""


@pytest.mark.parametrize("kind", ["folder", "fifo", "device", "unreadable"])
def test_kept_reads_of_a_bad_path_give_the_workspace_refusal_and_never_hang(tmp_path, kind):
    """The data version looks at a path before any read: it must neither open a FIFO (that blocks
    forever) nor raise its own error; the read then refuses the path as it always did."""
    import os
    import stat

    path = {"device": Path("/dev/null")}.get(kind, tmp_path / "ws.duckdb")
    if kind == "folder":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "unreadable":
        if os.geteuid() == 0:
            pytest.skip("root reads a file whatever its mode")
        path.write_bytes(b"x" * 100)
        path.chmod(0)
    assert data_version(path) is None
    done = run_python(DASHBOARD_READS, path, timeout=120)  # in another process, with a deadline
    lines = done.stdout.splitlines()
    assert done.returncode == 0 and len(lines) == 4, done.stderr
    assert all(line.startswith(f"workspace {path}") for line in lines), lines
    if kind == "fifo":
        assert stat.S_ISFIFO(path.lstat().st_mode)


# ----------------------------------------------------------- kept across a change this process knows
# (lsqa.store.lineage): a checkpoint, and a review declared as such


def uncached_queue_calls(monkeypatch) -> list:
    """Count the audit queue's real reads (its SQL), whatever the cache serves."""
    from lsqa.store import audit_queue as queue_store

    calls = []

    def counting(real):
        def counted(con, *args, **kwargs):
            calls.append(kwargs.get("exclude"))
            return real(con, *args, **kwargs)
        return counted

    # A page of the queue, or the reviews of rows a kept page shows (bringing it up to date).
    monkeypatch.setattr(queue_store, "audit_queue", counting(queue_store.audit_queue))
    monkeypatch.setattr(queue_store, "review_columns", counting(queue_store.review_columns))
    return calls


def test_a_checkpoint_alone_keeps_every_read(made):
    """A render ends by detaching the workspace, which writes the WAL into the file: the version moves,
    the data does not."""
    read, calls = counted_read()
    with common.kept_open(made):
        audit.set_overlap(made, 0.3, "me")  # commits into the WAL
        assert read(made)["overlap"] == 0.3
        in_wal = data_version(made)
    assert data_version(made) != in_wal  # checkpointed on detach
    assert read(made)["overlap"] == 0.3
    assert len(calls) == 1


FILTERS = [audit.Filters(), audit.Filters(reviewed="mine"), audit.Filters(reviewed="all"),
           audit.Filters(reviewed="unreviewed"), audit.Filters(reviewed="second")]


@pytest.mark.parametrize("overlap", [1.0, 0.5])
@pytest.mark.parametrize("filters", FILTERS, ids=lambda f: f.reviewed)
def test_my_review_keeps_the_queue_that_leaves_its_item_out_and_it_equals_a_fresh_read(
        demo_workspace, monkeypatch, filters, overlap):
    """The Audit page leaves every item it opened out of the queue: my review of one of them changes
    nothing the queue shows, so the kept queue is served, and it is what a fresh read gives."""
    audit.set_overlap(demo_workspace, overlap, "setup")
    audit.confirm(demo_workspace, "bob", audit.queue(demo_workspace, annotator="bob")["rows"][3]["id"])
    calls = uncached_queue_calls(monkeypatch)
    rows = audit.queue(demo_workspace, annotator="ann")["rows"][:2]
    opened = [r["id"] for r in rows]
    kept = audit.queue(demo_workspace, filters, "ann", exclude=opened)
    audit.confirm(demo_workspace, "ann", opened[0], "kept across")
    assert audit.queue(demo_workspace, filters, "ann", exclude=opened) == kept
    audit.review(demo_workspace, "ann", opened[1], other_label(rows[1]))  # an override
    assert audit.queue(demo_workspace, filters, "ann", exclude=opened) == kept
    assert len(calls) == 2  # the first two reads; none after the reviews
    assert audit.queue.uncached(demo_workspace, filters, "ann", exclude=opened) == kept


WALK_FILTERS = [audit.Filters(), audit.Filters(reviewed="all"), audit.Filters(reviewed="unreviewed"),
                audit.Filters(reviewed="second")]


@pytest.mark.parametrize("overlap", [1.0, 0.5])
@pytest.mark.parametrize("filters", WALK_FILTERS, ids=lambda f: f.reviewed)
def test_walking_the_queue_takes_each_item_opened_out_of_the_kept_head(demo_workspace, monkeypatch, filters, overlap):
    """The Audit page opens the queue's head; the next key asks for the queue without it. That queue
    is made from the kept head (one real read per HEAD_SLACK + 1 items opened), a decision on the item
    between the two included, and every page equals a fresh read."""
    audit.set_overlap(demo_workspace, overlap, "setup")
    for row in audit.queue(demo_workspace, annotator="bob")["rows"][:28:2]:  # one other reviewer: "second"
        audit.confirm(demo_workspace, "bob", row["id"])
    monkeypatch.setattr(priority_queue, "HEAD_SLACK", 6)  # the module that reads it
    calls = uncached_queue_calls(monkeypatch)
    opened, fresh_reads = [], 0
    for step in range(20):
        page = audit.queue(demo_workspace, filters, "ann", page_size=4, exclude=opened)
        assert page == audit.queue.uncached(demo_workspace, filters, "ann", page_size=4, exclude=opened), step
        fresh_reads += 1
        if not page["rows"]:
            break
        opened.append(page["rows"][0]["id"])  # J or the decision opens the next
        if step % 3 == 1:  # a decision on it, before the queue without it is asked for, as on the page
            audit.confirm(demo_workspace, "ann", opened[-1])
    steps = len(opened)
    assert steps >= 12, f"too few verdicts to walk with {filters}"
    # a real read, then one each time the head ran short of a page (4 + 6 rows: 6 may go)
    assert len(calls) - fresh_reads == -(-steps // (priority_queue.HEAD_SLACK + 1)), (steps, len(calls) - fresh_reads)


def test_an_item_opened_from_beyond_the_kept_head_reads_the_queue_again(demo_workspace, monkeypatch):
    """An item opened from a link or my recent reviews may lie past the kept rows: whether it is in
    the queue at all is then unknown, so the queue is read, not derived."""
    deep = audit.queue(demo_workspace, annotator="ann", page_size=400)["rows"]
    assert len(deep) > 200
    audit.queue(demo_workspace, annotator="ann", page_size=4)  # the head kept: 4 + HEAD_SLACK rows
    calls = uncached_queue_calls(monkeypatch)
    beyond = [deep[-1]["id"]]
    page = audit.queue(demo_workspace, annotator="ann", page_size=4, exclude=beyond)
    assert len(calls) == 1
    assert page == audit.queue.uncached(demo_workspace, annotator="ann", page_size=4, exclude=beyond)
    assert page["total"] == audit.queue(demo_workspace, annotator="ann", page_size=4)["total"] - 1


def test_a_derived_queue_never_hides_another_process_commit(demo_workspace):
    """The queue without the item just opened is made from a kept head only under the version that
    head was kept for: a review from another process in between is seen."""
    unreviewed = audit.Filters(reviewed="unreviewed")
    head = audit.queue(demo_workspace, unreviewed, "ann", page_size=4)["rows"]  # kept
    done = run_python(CONFIRM_AS_CAROL, demo_workspace, head[1]["id"])  # not the item I open
    assert done.returncode == 0, done.stderr
    after = audit.queue(demo_workspace, unreviewed, "ann", page_size=4, exclude=[head[0]["id"]])
    assert head[1]["id"] not in {r["id"] for r in after["rows"]}
    assert after == audit.queue.uncached(demo_workspace, unreviewed, "ann", page_size=4, exclude=[head[0]["id"]])


def test_a_head_used_for_a_derived_queue_is_not_kept_as_its_own_after_a_review(demo_workspace, monkeypatch):
    """My decision on the item just opened leaves the queue without it derivable from the kept head,
    but that head, asked for itself, shows the decision (the item leaves the unreviewed queue)."""
    unreviewed = audit.Filters(reviewed="unreviewed")
    opened = audit.queue(demo_workspace, unreviewed, "ann", page_size=4)["rows"][0]["id"]  # kept
    audit.confirm(demo_workspace, "ann", opened)
    calls = uncached_queue_calls(monkeypatch)
    after = audit.queue(demo_workspace, unreviewed, "ann", page_size=4, exclude=[opened])
    assert len(calls) == 0  # derived
    assert after == audit.queue.uncached(demo_workspace, unreviewed, "ann", page_size=4, exclude=[opened])
    whole = audit.queue(demo_workspace, unreviewed, "ann", page_size=4)
    assert opened not in {r["id"] for r in whole["rows"]}
    assert whole == audit.queue.uncached(demo_workspace, unreviewed, "ann", page_size=4)


def other_label(row: dict) -> str:
    """A label a human may give this verdict that is not the judge's (an override)."""
    from lsqa.judging import kinds

    return next(lab for lab in kinds.get(row["kind"]).labels if lab != row["label"])


def test_a_review_of_an_item_the_queue_shows_reads_it_again(demo_workspace, monkeypatch):
    calls = uncached_queue_calls(monkeypatch)
    first = audit.queue(demo_workspace, annotator="ann")["rows"][0]["id"]
    audit.confirm(demo_workspace, "ann", first)
    fresh = audit.queue(demo_workspace, annotator="ann")
    assert first not in [r["id"] for r in fresh["rows"]]
    assert len(calls) == 2


def test_an_item_is_kept_across_a_review_of_another_item_only(demo_workspace):
    rows = audit.queue(demo_workspace, annotator="ann")["rows"]
    this, other = rows[0]["id"], rows[1]["id"]
    audit.item(demo_workspace, this)
    audit.confirm(demo_workspace, "ann", other)
    assert audit.item(demo_workspace, this) == audit.item.uncached(demo_workspace, this)
    audit.confirm(demo_workspace, "ann", this)
    assert [lab["annotator"] for lab in audit.item(demo_workspace, this)["human_labels"]] == ["ann"]


@pytest.mark.parametrize("write", ["confirm", "review", "undo"])
def test_a_declared_review_changes_no_table_but_the_reviews(demo_workspace, write):
    """What audit.review, audit.confirm and the undo of a review declare they change
    (lineage.Change) is what they change: a declaration that said less would serve stale reads."""
    from tests.support.bad_input import changed_tables, snapshot

    row = audit.queue(demo_workspace, annotator="ann")["rows"][0]
    judgment_id = row["id"]
    if write == "undo":
        audit.review(demo_workspace, "ann", judgment_id, other_label(row))
    before = snapshot(demo_workspace)
    if write == "confirm":
        audit.confirm(demo_workspace, "ann", judgment_id)
    elif write == "review":
        audit.review(demo_workspace, "ann", judgment_id, other_label(row))
    else:
        assert audit.undo_last(demo_workspace, "ann")["target"] == judgment_id
    assert changed_tables(before, snapshot(demo_workspace)) == [audit.REVIEWS_TABLE]
    assert kept_reads.review_change(judgment_id).tables == {audit.REVIEWS_TABLE}


def test_the_queue_is_kept_across_the_undo_of_my_review_and_equals_a_fresh_read(demo_workspace, monkeypatch):
    """U on the Audit page undoes my review of an item the queue leaves out: the queue is not read
    again, and it is what a fresh read gives."""
    unreviewed = audit.Filters(reviewed="unreviewed")
    opened = audit.queue(demo_workspace, unreviewed, "ann", page_size=4)["rows"][0]["id"]
    audit.confirm(demo_workspace, "ann", opened)
    kept = audit.queue(demo_workspace, unreviewed, "ann", page_size=4, exclude=[opened])
    shown = audit.item(demo_workspace, opened)  # kept too, and the undo changes it
    assert [lab["annotator"] for lab in shown["human_labels"]] == ["ann"]
    calls = uncached_queue_calls(monkeypatch)
    assert audit.undo_last(demo_workspace, "ann")["target"] == opened
    assert audit.queue(demo_workspace, unreviewed, "ann", page_size=4, exclude=[opened]) == kept
    assert len(calls) == 0
    assert audit.item(demo_workspace, opened) == audit.item.uncached(demo_workspace, opened) != shown
    assert kept == audit.queue.uncached(demo_workspace, unreviewed, "ann", page_size=4, exclude=[opened])
    whole = audit.queue(demo_workspace, unreviewed, "ann", page_size=4)  # the item is unreviewed again
    assert opened in {r["id"] for r in whole["rows"]}
    assert whole == audit.queue.uncached(demo_workspace, unreviewed, "ann", page_size=4)


def test_an_undo_whose_action_moved_before_its_write_writes_nothing_then_undoes_the_latest(demo_workspace):
    """The action to undo is looked up before the write that declares it. If another action of mine
    lands in between (a flag from another tab), that write is rolled back, and the undo is made
    again, undeclared, on the latest action."""
    from tests.support.bad_input import snapshot

    row = audit.queue(demo_workspace, annotator="ann")["rows"][0]
    audit.confirm(demo_workspace, "ann", row["id"])
    with store.connect(demo_workspace) as con:
        from lsqa.store import reviews as reviews_store

        seen = reviews_store.last_action(con, "ann")
    audit.flag(demo_workspace, "ann", row["question_id"], "1", "wrong", "from another tab")
    before = snapshot(demo_workspace)
    with pytest.raises(actions._ActionMoved):
        actions._undo(demo_workspace, "ann", None, kept_reads.review_change(row["id"]), seen)
    assert snapshot(demo_workspace) == before
    undone = audit.undo_last(demo_workspace, "ann")
    assert (undone["what"], undone["target"]) == ("flag", row["question_id"])
    assert audit.undo_last(demo_workspace, "ann")["target"] == row["id"]  # then the confirm


def test_a_commit_by_another_process_after_my_review_is_not_hidden(demo_workspace):
    """Steps are recorded only for this process's own commits: carol's review from the command line
    (another process) moves the version with no recorded step, so the queue is read again."""
    opened = [r["id"] for r in audit.queue(demo_workspace, annotator="ann")["rows"][:1]]
    audit.queue(demo_workspace, annotator="ann", exclude=opened)
    audit.confirm(demo_workspace, "ann", opened[0])
    kept = audit.queue(demo_workspace, annotator="ann", exclude=opened)  # kept across my review
    assert kept["rows"][0]["n_reviewers"] == 0
    done = run_python(CONFIRM_AS_CAROL, demo_workspace, kept["rows"][0]["id"])
    assert done.returncode == 0, done.stderr
    fresh = audit.queue(demo_workspace, annotator="ann", exclude=opened)
    assert fresh != kept  # carol's item now counts a reviewer, and goes after the unreviewed ones
    assert fresh == audit.queue.uncached(demo_workspace, annotator="ann", exclude=opened)


def test_a_step_is_recorded_while_another_thread_only_reads(made):
    """Another session's page run reading the workspace changes nothing: my declared write is still a step."""
    from lsqa.store import lineage
    from lsqa.store.lineage import Change

    lineage.forget()
    opened, release = threading.Event(), threading.Event()

    def other_session():
        with store.connect(made) as con:
            con.execute("SELECT count(*) FROM workspace_settings").fetchall()
            opened.set()
            release.wait(10)

    other = threading.Thread(target=other_session)
    other.start()
    opened.wait(10)
    try:
        with store.write(made, change=Change(frozenset({"workspace_settings"}))) as con:
            con.execute("INSERT INTO workspace_settings (key, value, author) VALUES ('k', 'v', 'me')")
        changes = [change for _, change in lineage.history(str(made.resolve()), data_version(made))]
        assert changes[:1] == [Change(frozenset({"workspace_settings"}))], changes
    finally:
        release.set()
        other.join()


@pytest.mark.parametrize("how", ["write", "transaction"])
def test_no_step_is_recorded_while_another_thread_writes(made, how):
    """A write that says what it changes cannot vouch for another thread's commit in between."""
    from lsqa.store import lineage
    from lsqa.store.lineage import Change

    lineage.forget()
    opened, release = threading.Event(), threading.Event()

    def other_session():
        if how == "write":
            with store.write(made):
                opened.set()
                release.wait(10)
        else:
            with store.connect(made) as con, store.transaction(con):
                opened.set()
                release.wait(10)

    other = threading.Thread(target=other_session)
    other.start()
    opened.wait(10)
    try:
        before = data_version(made)
        with store.write(made, change=Change(frozenset({"workspace_settings"}))) as con:
            con.execute("INSERT INTO workspace_settings (key, value, author) VALUES ('k', 'v', 'me')")
        assert list(lineage.history(str(made.resolve()), data_version(made))) == []
    finally:
        release.set()
        other.join()
    with store.write(made, change=Change(frozenset({"workspace_settings"}))) as con:
        con.execute("INSERT INTO workspace_settings (key, value, author) VALUES ('k', 'w', 'me')")
    # Alone, both steps are recorded: the write, then the checkpoint of its own DETACH.
    changes = [change for _, change in lineage.history(str(made.resolve()), data_version(made))]
    assert changes[:2] == [None, Change(frozenset({"workspace_settings"}))], changes
    assert before != data_version(made)


def test_declared_writes_of_two_threads_at_once_take_turns_and_both_are_steps(made):
    """Two sessions deciding at the same moment: each declared write is a step of its own, so the
    reads kept before them can still be judged against each change."""
    from lsqa.store import lineage
    from lsqa.store.lineage import Change

    lineage.forget()
    go = threading.Barrier(2)
    changes = [Change(frozenset({"workspace_settings"}), frozenset({f"j{n}"})) for n in range(2)]

    def decide(n: int):
        go.wait(10)
        with store.write(made, change=changes[n]) as con:
            con.execute("INSERT INTO workspace_settings (key, value, author) VALUES (?, 'v', 'me')", [f"k{n}"])

    with common.kept_open(made):  # the page's run keeps the file attached: no checkpoint between
        threads = [threading.Thread(target=decide, args=(n,)) for n in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        steps = [change for _, change in lineage.history(str(made.resolve()), data_version(made))]
    assert sorted(steps[:2], key=lambda c: sorted(c.judgments)) == changes, steps


@pytest.mark.parametrize("overlap", [1.0, 0.5])
@pytest.mark.parametrize("filters", FILTERS + [audit.Filters(reviewed="all", reviewed_by=("bob",))],
                         ids=lambda f: f.reviewed + ("_by" if f.reviewed_by else ""))
def test_other_peoples_reviews_change_my_kept_queue_by_their_rows_only(demo_workspace, monkeypatch, filters, overlap):
    """A team on one server: bob and carol review items of the queue I have open (the head they were
    served, and items further down), between my keys. My next queue is my kept head with those rows
    read again, not the queue read again, and it equals a fresh read: the items they reviewed leave
    it, or move behind the unreviewed ones, or join it ("second", "reviewed by bob")."""
    from lsqa.store import audit_queue as queue_store

    audit.set_overlap(demo_workspace, overlap, "setup")
    bob_head = audit.queue.uncached(demo_workspace, annotator="bob", page_size=40)["rows"]
    reads, real, real_rows = [], queue_store.audit_queue, queue_store.review_columns

    def counted(con, **kwargs):
        reads.append((step, kwargs["annotator"], kwargs.get("ids")))
        return real(con, **kwargs)

    def counted_rows(con, rows, **kwargs):  # the reviews of rows the kept head shows
        reads.append((step, kwargs["annotator"], [r["id"] for r in rows]))
        return real_rows(con, rows, **kwargs)

    opened = []
    for step in range(8):
        monkeypatch.setattr(queue_store, "audit_queue", counted)
        monkeypatch.setattr(queue_store, "review_columns", counted_rows)
        page = audit.queue(demo_workspace, filters, "ann", exclude=opened)
        monkeypatch.setattr(queue_store, "audit_queue", real)
        monkeypatch.setattr(queue_store, "review_columns", real_rows)
        assert page == audit.queue.uncached(demo_workspace, filters, "ann", exclude=opened), step
        audit.confirm(demo_workspace, "bob", bob_head[step]["id"])  # bob's decisions, near the head
        audit.review(demo_workspace, "carol", bob_head[20 + step]["id"], other_label(bob_head[20 + step]))
        if page["rows"]:
            opened.append(page["rows"][0]["id"])  # the page opens my queue's head; I decide every other one
            if step % 2:
                audit.confirm(demo_workspace, "ann", opened[-1])
    whole = [ids for _, who, ids in reads if who == "ann" and ids is None]
    rows = {}  # per step after the first: the rows read again (those the kept head shows, those beyond it)
    for at, who, ids in reads:
        if who == "ann" and ids is not None:
            rows.setdefault(at, []).extend(ids)
    assert len(whole) == 1, reads  # the first read; after it, the reviewed rows only
    assert sorted(rows) == list(range(1, 8)) and all(1 <= len(ids) <= 2 for ids in rows.values()), rows
