"""The annotation workflow's logic without a browser (issue 12): the trail of opened items, folded
evidence on word boundaries, the second-review queue, the overlap, late reviews, guidelines, messages
in the terms shown. The browser tests (tests/browser/test_annotation_browser.py) drive the same through the page."""

from __future__ import annotations

import re

from lsqa import audit, store
from lsqa.audit import reference_errors
from lsqa.audit.trail import Trail
from lsqa.figures import analysis
from lsqa.judging import guidelines
from lsqa.text import highlight

AIS, SXS = "lexical-autoais-fc", "lexical-sxs-fc"


def test_trail_goes_back_and_counts_what_was_opened():
    t = Trail()
    assert t.current("a") == "a" and t.position(remaining=9) == (1, 10)
    t.forward()
    assert t.current("b") == "b" and t.position(remaining=8) == (2, 10)  # 'a' reviewed: still counted
    t.back()
    assert t.current("c") == "a" and not t.can_go_back() and t.can_go_forward(remaining=0)
    t.open("b")  # reopening an item already in the trail moves it to the end
    assert t.ids == ["a", "b"] and t.current(None) == "b"
    t.forward()
    assert t.current(None) is None and t.at == 2  # the queue has ended: no item, never the last one again
    assert t.can_go_back() and not t.can_go_forward(remaining=0)
    t.back()
    assert t.current(None) == "b"  # K goes back to the last item opened


def test_folded_evidence_is_whole_sentences_on_word_boundaries():
    text = "First one here. Second sentence is here. The quoted words sit here. Fourth one. Fifth one. Sixth."
    i = text.index("quoted")
    s, e = highlight.sentence_window(text, i, i + 12, sentences=1)
    assert text[s:e] == "Second sentence is here. The quoted words sit here. Fourth one."
    s, e = highlight.word_bounds(text, 3, 37)  # both ends inside a word ("First", "here")
    assert text[s:e] == "one here. Second sentence is"
    long = "word " * 400
    s, e = highlight.sentence_window(long, 1000, 1010, max_chars=100)
    assert e - s <= 220 and long[s] != " " and (s == 0 or long[s - 1] == " ")


def test_evidence_blocks_one_per_passage_labelled_by_answer(demo_workspace):
    rows = audit.queue(demo_workspace, audit.Filters(judges=(SXS,), reviewed="all"), "", page_size=400)["rows"]
    seen = 0
    for r in rows[:60]:
        it = audit.item(demo_workspace, r["id"])
        found = [e for e in it["evidence"] if e["found"]]
        wheres = [e["where"] for e in found]
        assert len(wheres) == len(set(wheres))
        for e in found:
            seen += 1
            assert "<mark>" in e["html"] and len(e["html"]) <= len(e["html_full"])
            assert audit.evidence_label(e, True).startswith(("answer", "neither"))
    assert seen


def test_second_review_queue_overlap_and_late_reviews(demo_workspace):
    ws = demo_workspace
    f = audit.Filters(judges=(AIS,))
    first = audit.queue(ws, f, "ann")["rows"][:2]
    total = audit.queue(ws, f, "ann")["total"]
    marker = audit.opened_marker(ws)
    audit.confirm(ws, "bob", first[0]["id"])
    assert [r["annotator"] for r in audit.reviewed_since(ws, first[0]["id"], "ann", marker)] == ["bob"]
    second = audit.queue(ws, audit.Filters(judges=(AIS,), reviewed="second"), "ann")
    assert [r["id"] for r in second["rows"]] == [first[0]["id"]]
    assert audit.queue(ws, audit.Filters(judges=(AIS,), reviewed="second"), "bob")["total"] == 0
    assert audit.queue(ws, f, "ann")["total"] == total  # overlap 1.0: everybody sees everything
    audit.set_overlap(ws, 0.0, "ann")
    assert audit.queue(ws, f, "ann")["total"] == total - 1  # reviewed once is enough
    audit.set_overlap(ws, 1.0, "ann")
    assert audit.queue(ws, f, "ann", exclude=[first[1]["id"]])["total"] == total - 1


def test_messages_in_the_terms_shown_and_undo_names_the_question(demo_workspace):
    ws = demo_workspace
    row = next(r for r in audit.queue(ws, audit.Filters(judges=(SXS,)), "fay")["rows"] if r["shown_order"] == "ba")
    it = audit.item(ws, row["id"])
    label = audit.to_system_label(it["kind"], "B", it["shown_order"])
    saved = audit.review(ws, "fay", row["id"], label)
    assert label == "A" and audit.saved_message(it["kind"], "B", saved["action"]).startswith("Saved: B is better")
    assert audit.recent(ws, "fay")[0]["my label"] == "B is better"
    said = audit.describe_action(audit.undo_last(ws, "fay"))
    assert it["question"] in said and "B is better" in said and not re.search(r"[0-9a-f]{10}", said)


def test_blind_reveals_after_my_decision(demo_workspace):
    ws = demo_workspace
    row = audit.queue(ws, audit.Filters(judges=(SXS,)), "bea")["rows"][0]
    audit.confirm(ws, "otto", row["id"])
    it = audit.item(ws, row["id"])
    assert audit.reveal(it, "bea", blind=False) and not audit.reveal(it, "bea", blind=True)
    audit.review(ws, "bea", row["id"], "tie")
    assert audit.reveal(audit.item(ws, row["id"]), "bea", blind=True)


def test_guidelines_default_per_kind_and_edited_per_workspace(demo_workspace):
    ws = demo_workspace
    assert "supported by the book" in guidelines.for_kind(ws, "absolute")["text"]
    assert "agrees with the reference" in guidelines.for_kind(ws, "groundtruth")["text"]
    saved = guidelines.save(ws, "absolute", "Our rule.", "gus")
    assert saved["text"] == "Our rule." and saved["edited_by"] == "gus" and not saved["is_default"]
    assert guidelines.for_kind(ws, "pairwise")["is_default"]
    with store.connect(ws) as con:
        assert con.execute("SELECT count(*) FROM workspace_settings").fetchone()[0] == 1


def test_reference_selection_is_by_question(demo_workspace):
    ws = demo_workspace
    rows = reference_errors.suspects(ws)
    key = reference_errors.row_key(rows[3])
    audit.flag(ws, "rex", key[0], key[1], "wrong")
    assert reference_errors.find(reference_errors.suspects(ws), key) < 3
    undone = audit.undo_last(ws, "rex", "flag")
    assert undone["question"] == rows[3]["question"]
    assert reference_errors.find(reference_errors.suspects(ws), key) == 3


def test_reviewed_by_two_counts_the_items_of_the_pair_table(demo_workspace):
    ws = demo_workspace
    rows = audit.queue(ws, audit.Filters(judges=(SXS,), reviewed="all"), "", page_size=1000)["rows"]
    # Two people are paired per verdict (issue 30): both orders of one pair are two verdicts.
    pair = [r for r in rows if (r["question_id"], {r["system_a"], r["system_b"]}) ==
            (rows[0]["question_id"], {rows[0]["system_a"], rows[0]["system_b"]})]
    for r in pair + [rows[-1]]:
        audit.confirm(ws, "al", r["id"])
        audit.confirm(ws, "bo", r["id"])
    shared = set(analysis.rater_labels(ws, "human:al")) & set(analysis.rater_labels(ws, "human:bo"))
    assert analysis.annotator_agreement(ws)["n_items"] == len(shared) == 3 and len(pair) == 2
