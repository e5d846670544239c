"""The dashboard's plain-data layer without Streamlit: evidence lookup and safe HTML, label
positions, the audit queue's priority, reference-error triage, background jobs."""

from __future__ import annotations

import pytest

from lsqa import audit, highlight, jobs, reference_errors, store
from lsqa.errors import InputError
from lsqa.store import reviews as reviews_store

BOOK = "He sat on the bank.\nThe  water was\ncold and deep. Then he went home… and slept."


def test_find_excerpt_exact_then_whitespace_and_case():
    m = highlight.find_excerpt(BOOK, "He sat on the bank.")
    assert (m.start, m.end, m.how) == (0, 19, "exact")
    m = highlight.find_excerpt(BOOK, "the water was cold")
    assert m.how == "whitespace" and BOOK[m.start:m.end] == "The  water was\ncold"
    assert highlight.find_excerpt(BOOK, "a sentence that is not there") is None
    assert highlight.find_excerpt(BOOK, "x") is None  # too short to mean anything
    assert highlight.find_excerpt(BOOK, "He sat", start=5) is None  # only inside the story span


def test_find_evidence_piece_by_piece_across_an_ellipsis():
    spans = highlight.find_evidence(BOOK, "He sat on the bank ... cold and deep. Then")
    assert [BOOK[m.start:m.end] for m in spans] == ["He sat on the bank", "cold and deep. Then"]


def test_marked_html_escapes_everything_but_its_own_tags():
    text = 'a <script>x</script> & "b" <img onerror=y> c_d_'
    out = highlight.marked_html(text, [(2, 10), (5, 20)])  # overlapping spans merge
    assert out.count("<mark>") == 1
    assert "<script>" not in out and "<img" not in out
    assert "&lt;script&gt;" in out and "&amp;" in out and "&quot;b&quot;" in out
    assert highlight.text_html("line 1\nline 2") == '<div class="lsqa-text">line 1<br>line 2</div>'
    assert "\n" not in highlight.text_html("a\n\nb")  # one line: a raw HTML block, never Markdown
    assert highlight.md_escape("![x](http://e) _a_ $b$") == "\\!\\[x\\]\\(http\\:\u2060//e\\) \\_a\\_ \\$b\\$"


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


def test_suspects_put_a_flagged_reference_first_and_the_errata_keep_it(demo_workspace):
    ws = demo_workspace
    rows = reference_errors.suspects(ws)
    assert rows and rows == sorted(rows, key=lambda r: -r["score"])
    low = rows[-1]
    audit.flag(ws, "alice", low["question_id"], low["reference"], "wrong", "the book says otherwise")
    again = reference_errors.suspects(ws)
    top = again[0]
    assert (top["question_id"], top["reference"]) == (low["question_id"], low["reference"])
    assert top["score"] == 1.0 and "wrong (alice)" in top["flags"] and "flags" in top["evidence"]
    errata = reference_errors.errata(ws)
    assert [(e["question_id"], e["reasons"], e["notes"], e["score"]) for e in errata] == [
        (low["question_id"], ["wrong"], ["alice: the book says otherwise"], 1.0)]


def test_jobs_refuse_a_bad_config_at_once(demo_workspace):
    before = jobs.list_jobs(demo_workspace)
    with pytest.raises(InputError, match="documents is empty"):
        jobs.start(demo_workspace, {"documents": []})
    with pytest.raises(InputError, match=r"systems\[0\]\.context: 'moon' is not none, full"):
        jobs.start(demo_workspace, {"documents": ["x"], "systems": [{"name": "s", "model": "m", "context": "moon"}]})
    assert jobs.list_jobs(demo_workspace) == before  # refused before any job was started


def test_a_job_that_cannot_run_is_failed_not_a_crash(demo_workspace):
    job_id = jobs.start(demo_workspace, {"documents": ["No Such Book"], "systems": [
        {"name": "s", "model": "lsqa/extractive", "context": "none"}]})
    job = jobs.wait(job_id, 60)
    assert job["status"] == "failed" and "No Such Book" in job["error"]
    assert job_id in {j["id"] for j in jobs.list_jobs(demo_workspace)}
