"""The audit queue and a human's actions on it (lsqa.audit over lsqa.store's audit reads)."""

from __future__ import annotations

from lsqa import audit, store
from lsqa.ingest import import_judgments
from lsqa.store import verdicts as verdicts_store

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
