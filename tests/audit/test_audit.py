"""The audit queue and a human's actions on it (lsqa.audit over lsqa.store's audit reads)."""

from __future__ import annotations

import pytest

from lsqa import audit, store
from lsqa.store import reviews as reviews_store
from lsqa.store import verdicts as verdicts_store
from lsqa.study.imports import import_judgments


def _first_question(workspace) -> str:
    with store.connect(workspace) as con:
        return con.execute("SELECT question_id FROM judgments ORDER BY question_id LIMIT 1").fetchone()[0]

def test_a_yes_no_verdict_on_system_x_bar_y_is_not_the_pair_x_y(demo_workspace, tmp_path):
    """Issue 10, item 2. Before: the queue keyed items as 'question|system' and
    'question|system_a|system_b', so a yes/no verdict on a system named 'x|y' and a side-by-side
    verdict on the pair (x, y) were one item, and each counted as the other's disagreeing judge."""
    q = _first_question(demo_workspace)
    path = tmp_path / "bars.csv"
    path.write_text("question_id,rater,kind,system_a,system_b,label\n"
                    f"{q},bar-yes,absolute,x|y,,yes\n"
                    f"{q},bar-sxs,pairwise,x,y,A\n"
                    f"{q},bar-sxs-2,pairwise,y,x,B\n")
    import_judgments(demo_workspace, path)
    rows = {r["judge"]: r for r in audit.queue(demo_workspace, audit.Filters(
        judges=("bar-yes", "bar-sxs", "bar-sxs-2"), reviewed="all"), "")["rows"]}
    assert (rows["bar-yes"]["n_others"], rows["bar-yes"]["disagreement"]) == (0, 0.0)
    # The two side-by-side judges saw the pair in opposite orders and agree that x won.
    assert (rows["bar-sxs"]["n_others"], rows["bar-sxs"]["disagreement"]) == (1, 0.0)

def test_a_note_that_begins_like_an_undo_is_only_a_note(demo_workspace):
    """Issue 10, item 3. Before: undo was recognised by the note 'undo of flag #N', so a person's
    own note starting that way hid their flag from undo and withdrew flag #N."""
    q = _first_question(demo_workspace)
    first = audit.flag(demo_workspace, "ann", q, "1", "wrong")
    second = audit.flag(demo_workspace, "ann", q, "2", "ambiguous",
                        note=f"undo of flag #{first['id']} would be wrong: both references are poor")
    assert audit.last_action(demo_workspace, "ann")["id"] == second["id"]
    assert audit.undo_last(demo_workspace, "ann")["id"] == second["id"]
    with store.connect(demo_workspace) as con:
        flags = [(f["question_id"], f["reference"], f["reason"]) for f in verdicts_store.current_flags(con)]
    assert flags == [(q, "1", "wrong")]
    assert audit.last_action(demo_workspace, "ann")["id"] == first["id"]
    assert audit.undo_last(demo_workspace, "ann")["id"] == first["id"]
    with store.connect(demo_workspace) as con:
        assert verdicts_store.current_flags(con) == []
    assert audit.last_action(demo_workspace, "ann") is None


def test_labels_are_given_in_shown_positions_and_stored_in_system_terms():
    assert audit.to_system_label("pairwise", "A", "ab") == "A"
    assert audit.to_system_label("pairwise", "A", "ba") == "B"
    assert audit.to_system_label("groundtruth-pairwise", "tie", "ba") == "tie"
    assert audit.to_system_label("absolute", "yes", "ba") == "yes"
    assert [o["shortcut"] for o in audit.label_options("pairwise")] == ["A", "B", "T", "X"]
    assert [o["shortcut"] for o in audit.label_options("groundtruth")] == ["Y", "N"]
    assert not {"C", "R"} & set(audit.SHORTCUTS.values())  # reserved by Streamlit


def test_queue_puts_disagreement_first_and_reviewed_items_last(demo_workspace):
    ws = demo_workspace
    q = audit.queue(ws, audit.Filters(reviewed="all"), "alice", page_size=2000)
    rows = q["rows"]
    assert q["total"] == len(rows) > 0
    priorities = [r["priority"] for r in rows]
    assert priorities == sorted(priorities, reverse=True)
    top = rows[0]
    assert top["disagreement"] > 0 and "other verdicts differ" in top["why"]
    audit.confirm(ws, "bob", top["id"])
    again = audit.queue(ws, audit.Filters(reviewed="all"), "alice", page_size=2000)["rows"]
    assert again[-1]["id"] == top["id"] and again[-1]["n_reviewers"] == 1
    assert top["id"] not in {r["id"] for r in audit.queue(ws, audit.Filters(reviewed="unreviewed"), "alice",
                                                         page_size=2000)["rows"]}
    mine = audit.queue(ws, audit.Filters(reviewed="mine"), "bob")
    assert [r["id"] for r in mine["rows"]] == [top["id"]] and mine["rows"][0]["my_action"] == "confirm"
    assert audit.queue(ws, audit.Filters(judges=("no-such-judge",)), "bob")["total"] == 0


def test_review_is_confirm_when_the_label_is_the_judges(demo_workspace):
    ws = demo_workspace
    row = audit.queue(ws, audit.Filters(judges=("lexical-autoais-fc",)), "")["rows"][0]
    other = "no" if row["label"] == "yes" else "yes"
    assert audit.review(ws, "alice", row["id"], row["label"])["action"] == "confirm"
    assert audit.review(ws, "alice", row["id"], other)["action"] == "override"
    with store.connect(ws) as con:
        assert [r["action"] for r in reviews_store.reviews(con, row["id"])] == ["confirm", "override"]
    with pytest.raises(ValueError):
        audit.review(ws, "  ", row["id"], other)


def test_the_kept_priority_signals_follow_a_changed_verdict(demo_workspace):
    """The queue keeps its priority signals while the verdicts are unchanged (reviews do not change
    them); a verdict whose label changes (a re-judged parse error, an import) makes them recomputed:
    the signals computed over every verdict (``_signals``, the queue's read when the kept ones cannot
    serve), and the kept ones (``lsqa.store.queue_signals``), which the store's writer of verdicts marks."""
    from lsqa.store import audit_queue as queue_store
    from lsqa.store import results as results_store

    ws = demo_workspace
    top = audit.queue(ws, audit.Filters(reviewed="all"), "alice")["rows"][0]
    with store.connect(ws) as con:
        kept = queue_store._signals(con)
        assert queue_store._signals(con) is kept  # the same object: nothing recomputed
    audit.confirm(ws, "bob", top["id"])  # a review: the signals stay
    with store.connect(ws) as con:
        assert queue_store._signals(con) is kept
    flipped = {"A": "B", "B": "A", "yes": "no", "no": "yes"}
    with store.write(ws) as con:  # re-judged, as a re-run stores it (lsqa.study.pipeline)
        row = store.fetch_dicts(con, "SELECT * FROM judgments WHERE id = ?", [top["id"]])[0]
        row.pop("created_at")
        results_store.insert_judgments(con, [{**row, "label": flipped.get(row["label"], "A"), "status": "ok"}],
                                       replace=True)
    with store.connect(ws) as con:
        now = queue_store._signals(con)
        fresh = con.sql(queue_store._SIGNALS).to_arrow_table()
    assert now is not kept
    assert now.sort_by("id").equals(fresh.sort_by("id"))
    assert not now.sort_by("id").equals(kept.sort_by("id"))
    changed = audit.queue(ws, audit.Filters(reviewed="all"), "alice", page_size=5000)["rows"]
    assert next(r for r in changed if r["id"] == top["id"])["disagreement"] != top["disagreement"]
