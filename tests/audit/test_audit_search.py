"""Searching the Audit queue (issue 34, "what annotators expect"): every word typed must occur in the
question or in an answer the verdict judged, any case, no wildcards; a link's ``?q=`` searches and
``?question=`` (the errata's links) holds one question's verdicts. Checked against the small demo
workspace's own texts, counted here from ``audit.item``."""

from __future__ import annotations

from urllib.parse import quote

import pytest
from streamlit.testing.v1 import AppTest

from lsqa import audit
from lsqa.audit import reference_errors
from lsqa.errors import AuditRefused
from tests.conftest import PROJECT_ROOT
from tests.support.apptest_text import as_read
from tests.support.audit_desk import desk_text

APP = str(PROJECT_ROOT / "app.py")
GT = "lexical-gt"


def _all(ws, **filters) -> list[dict]:
    return audit.queue.uncached(ws, audit.Filters(reviewed="all", **filters), "", page_size=100_000)["rows"]


def _texts(ws, jid: str) -> list[str]:
    it = audit.item(ws, jid)
    return [it["question"].lower()] + [(a["text"] or "").lower() for a in it["answers"]]


def test_every_word_must_be_in_the_question_or_a_judged_answer(demo_workspace):
    ws = demo_workspace
    every = _all(ws, judges=(GT,))
    question = audit.item(ws, every[0]["id"])["question"]
    word = max(question.split(), key=len).strip("?.,").upper()  # typed in another case
    found = _all(ws, judges=(GT,), search=f"  {word}  ")
    by_hand = [r["id"] for r in every if any(word.lower() in t for t in _texts(ws, r["id"]))]
    assert [r["id"] for r in found] == by_hand and 0 < len(found) < len(every)

    # Two words: both must occur (each in the question or an answer), in the queue's own order.
    answer = next(a["text"] for r in every for a in audit.item(ws, r["id"])["answers"] if len((a["text"] or "").split()) > 2)
    second = max(answer.split(), key=len).strip("?.,;")
    both = _all(ws, judges=(GT,), search=f"{word} {second}")
    assert [r["id"] for r in both] == [r["id"] for r in every if all(
        any(w.lower() in t for t in _texts(ws, r["id"])) for w in (word, second))]

    # No wildcards: % and _ are letters like any other, so they match nothing here.
    assert _all(ws, search="%") == [] and _all(ws, search="_") == []
    assert _all(ws, search="zzqxj-not-in-any-book") == []


def test_a_question_filter_holds_that_questions_verdicts(demo_workspace):
    ws = demo_workspace
    every = _all(ws)
    qid = every[0]["question_id"]
    assert [r["id"] for r in _all(ws, questions=(qid,))] == [r["id"] for r in every if r["question_id"] == qid]


@pytest.mark.parametrize("text, why", [("w" * 201, "too long"), (" ".join(f"w{i}" for i in range(13)), "too many"),
                                       (None, "must be text")])
def test_a_search_that_cannot_be_run_is_refused_by_name(text, why):
    # search_terms reads no workspace: nothing to compare before and after, only the refusal.
    with pytest.raises(AuditRefused, match=why):
        audit.search_terms(text)
    assert audit.search_terms("Cat\x00 cat\tDOG") == ("cat", "dog")  # control characters are spaces; each word once


def _page(ws, monkeypatch, **params) -> AppTest:
    monkeypatch.setenv("LSQA_WORKSPACE", str(ws))
    at = AppTest.from_file(APP, default_timeout=90)
    at.session_state["annotator"] = "sam"
    for k, v in params.items():
        at.query_params[k] = v
    at.run()
    at.switch_page("pages/audit.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _shown_question(at) -> str:
    return desk_text(at)


def test_the_search_box_narrows_the_queue_and_a_link_searches_too(demo_workspace, monkeypatch):
    ws = demo_workspace
    every = _all(ws, judges=(GT,))
    question = audit.item(ws, every[-1]["id"])["question"]
    word = max(question.split(), key=len).strip("?.,")
    at = _page(ws, monkeypatch, judge=GT)
    at.text_input(key="audit_search").input(word).run()
    assert not at.exception
    first = next(r for r in _all(ws, judges=(GT,), search=word))
    assert audit.item(ws, first["id"])["question"] in _shown_question(at) or word.lower() in _shown_question(at).lower()
    assert f"search “{word}”" in " ".join(str(c.value) for c in at.sidebar.caption)

    at.text_input(key="audit_search").input("zzqxj").run()
    assert "has “zzqxj” in its question or answers" in desk_text(at)

    linked = _page(ws, monkeypatch, q=word, reviewed="all")
    assert linked.text_input(key="audit_search").value == word


def test_the_errata_link_each_flag_to_its_questions_verdicts(demo_workspace, monkeypatch):
    ws = demo_workspace
    r = _all(ws, judges=(GT,))[0]
    audit.flag(ws, "sam", r["question_id"], "1", "wrong", "names the wrong cat")
    rows = reference_errors.errata(ws)
    assert [e["open"] for e in rows] == [f"/audit?question={quote(r['question_id'], safe='')}&reviewed=all"]
    at = _page(ws, monkeypatch, question=r["question_id"], reviewed="all")
    assert "1 question (from a link)" in as_read(" ".join(str(c.value) for c in at.sidebar.caption))
    assert audit.item(ws, r["id"])["question"] in _shown_question(at)
    at.button(key="audit_clear_questions").click().run()
    assert "from a link" not in " ".join(str(c.value) for c in at.sidebar.caption)
