"""Disagreements, adjudication and comments (issue 34): which verdicts people disagree on, the one
human label the statistics use (adjudicated, else the people's majority, a tie none: docs/statistics.md),
who may adjudicate or comment, the Adjudicate page, `lsqa disagreements --json`, and the errata's
flag times. Counts are made by hand on the small demo workspace."""

from __future__ import annotations

import csv
import html
import io
import json
import re
import shutil
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from lsqa import audit, store, team
from lsqa.audit import reference_errors
from lsqa.dashboard import adjudication_view
from lsqa.dashboard.sign_in_front import exchange
from lsqa.errors import AuditRefused, NotAllowed
from lsqa.figures import analysis, audits, corrected
from lsqa.judging import kinds
from lsqa.store import verdicts as verdicts_store
from lsqa.team import Person
from tests.conftest import PROJECT_ROOT
from tests.support.apptest_text import page_text
from tests.support.bad_input import invoke, snapshot

APP = str(PROJECT_ROOT / "app.py")
ROLES = ("viewer", "annotator", "adjudicator", "admin")
GT = "lexical-gt"        # yes/no, against one reference
SXS = "lexical-sxs-fc"   # side by side, both orders


def _other(kind: str, label: str) -> str:
    return next(lab for lab in kinds.get(kind).labels if lab != label)


def _verdicts(ws: Path, judge: str, n: int) -> list[dict]:
    with store.connect(ws) as con:
        rows = verdicts_store.effective_verdicts(con, judge=judge)
    assert len(rows) >= n
    return rows[:n]


def _split_four(ws: Path) -> tuple[list[str], list[str], list[str]]:
    """Four verdicts of GT: v0 ana and ben confirm; v1 ana confirms, ben overrides (a tie); v2 ana
    alone confirms; v3 ana and ben override, cat confirms (a majority against the judge)."""
    v = _verdicts(ws, GT, 4)
    ids, judge = [r["id"] for r in v], [r["judge_label"] for r in v]
    other = [_other(r["kind"], r["judge_label"]) for r in v]
    for i in ids[:3]:
        audit.confirm(ws, "ana", i)
    audit.confirm(ws, "ben", ids[0])
    audit.review(ws, "ben", ids[1], other[1], "the book says otherwise")
    audit.review(ws, "ana", ids[3], other[3])
    audit.review(ws, "ben", ids[3], other[3])
    audit.confirm(ws, "cat", ids[3])
    return ids, judge, other


def _agreement(ws: Path, a: str, b: str) -> tuple[int, float]:
    res = analysis.agreement(ws, a, b, bootstrap=0)
    return res["n"], res["agreement"]


def test_disagreements_are_listed_and_the_final_label_is_adjudicated_else_the_majority(demo_workspace):
    ws = demo_workspace
    ids, judge, other = _split_four(ws)
    listed = audit.disagreements(ws)
    assert [(d["judgment_id"], d["adjudicated"]) for d in listed] == sorted([(ids[1], None), (ids[3], None)])
    tie = next(d for d in listed if d["judgment_id"] == ids[1])
    assert [(lab["annotator"], lab["label"], lab["note"]) for lab in tie["labels"]] == [
        ("ana", judge[1], ""), ("ben", other[1], "the book says otherwise")]
    assert all(isinstance(lab["created_at"], datetime) for lab in tie["labels"])

    # By hand, judge vs "human" (the final labels): v0 agree, v1 a tie (left out), v2 agree, v3 the
    # majority overrides (disagree) -> 2 of 3. People against each other, per verdict, before any
    # adjudication: ana and ben share v0 (same), v1 (differ), v3 (same) -> 2 of 3.
    assert _agreement(ws, GT, f"human@{GT}") == (3, pytest.approx(2 / 3))
    assert _agreement(ws, f"human:ana@{GT}", f"human:ben@{GT}") == (3, pytest.approx(2 / 3))
    with store.connect(ws) as con:
        over = {r["id"]: r for r in verdicts_store.effective_verdicts(con, judge=GT, use_overrides=True)}
    # The tie is neither a confirm nor an override: the judge's label stays; v3's majority overrides.
    assert (over[ids[1]]["human_label"], over[ids[1]]["label"]) == (None, judge[1])
    assert (over[ids[3]]["human_label"], over[ids[3]]["label"]) == (other[3], other[3])

    audit.adjudicate(ws, "judy", ids[1], other[1], "ben is right: chapter 3")
    # Now v1 counts with ben's label: 2 of 4. ana vs ben is unchanged (their own labels).
    assert _agreement(ws, GT, f"human@{GT}") == (4, pytest.approx(2 / 4))
    assert _agreement(ws, f"human:ana@{GT}", f"human:ben@{GT}") == (3, pytest.approx(2 / 3))
    with store.connect(ws) as con:
        over = {r["id"]: r for r in verdicts_store.effective_verdicts(con, judge=GT, use_overrides=True)}
    assert (over[ids[1]]["human_label"], over[ids[1]]["label"]) == (other[1], other[1])
    listed = audit.disagreements(ws)
    assert listed[0]["judgment_id"] == ids[3]  # the one still open comes first
    done = next(d for d in listed if d["judgment_id"] == ids[1])
    assert done["adjudicated"] == other[1] and done["adjudication"]["adjudicator"] == "judy"
    # An adjudicator may also overrule a majority; the latest adjudication stands.
    audit.adjudicate(ws, "judy", ids[3], judge[3])
    audit.adjudicate(ws, "judy", ids[1], judge[1], "on second reading, ana", replaces=other[1])
    assert _agreement(ws, GT, f"human@{GT}") == (4, pytest.approx(4 / 4))


def test_replacing_a_final_label_must_name_it_and_keeps_what_it_replaced(demo_workspace):
    ws = demo_workspace
    ids, judge, other = _split_four(ws)
    first = audit.adjudicate(ws, "judy", ids[1], other[1], "ben is right")
    assert first["replaced"] is None
    before = snapshot(ws)
    for call, says in ((lambda: audit.adjudicate(ws, "jo", ids[1], judge[1]), "already has the final label"),
                       (lambda: audit.adjudicate(ws, "jo", ids[1], judge[1], replaces=judge[1]),
                        f"is {other[1]!r}, set by judy on .*, not {judge[1]!r}"),
                       (lambda: audit.adjudicate(ws, "jo", ids[1], other[1], replaces=other[1]), "already"),
                       (lambda: audit.adjudicate(ws, "jo", ids[3], judge[3], replaces=other[3]), "no final label yet")):
        with pytest.raises(AuditRefused, match=says) as refused:
            call()
        assert "\n" not in str(refused.value)
    assert snapshot(ws) == before  # nothing written, and the first final label stands
    assert audit.disagreements(ws)[1]["adjudicated"] == other[1]

    again = audit.adjudicate(ws, "jo", ids[1], judge[1], "ana is right after all", replaces=other[1])
    assert (again["replaced"]["label"], again["replaced"]["adjudicator"]) == (other[1], "judy")
    history = audit.adjudication_history(ws, ids[1])
    assert [(h["label"], h["adjudicator"], h["note"]) for h in history] == [
        (other[1], "judy", "ben is right"), (judge[1], "jo", "ana is right after all")]
    assert history[0]["replaces"] is None
    assert (history[1]["replaces"]["label"], history[1]["replaces"]["adjudicator"]) == (other[1], "judy")
    settled = next(d for d in audit.disagreements(ws) if d["judgment_id"] == ids[1])
    assert (settled["adjudicated"], settled["adjudication"]["adjudicator"], settled["n_adjudications"]) == (
        judge[1], "jo", 2)
    with store.connect(ws) as con:  # the latest stands for the statistics
        final = {r["judgment_id"]: r["label"] for r in verdicts_store.final_labels(con, GT)}
    assert final[ids[1]] == judge[1]


def test_the_next_open_disagreement_comes_after_the_one_settled_and_wraps_round(demo_workspace):
    """Five disagreements in the page's order (by verdict id): settling one hands over to the next one
    still open after it, round the end; none left, None."""
    ws = demo_workspace
    v = _verdicts(ws, GT, 5)
    for r in v:
        audit.confirm(ws, "ana", r["id"])
        audit.review(ws, "ben", r["id"], _other(r["kind"], r["judge_label"]))
    rows = adjudication_view.in_order(audit.disagreements(ws))
    ids = [d["judgment_id"] for d in rows]
    assert sorted(ids) == ids and len(ids) == 5
    assert audit.next_open(rows) == ids[0]
    for i in (1, 2):
        audit.adjudicate(ws, "judy", ids[i], "yes")
    rows = adjudication_view.in_order(audit.disagreements(ws))
    assert [d["judgment_id"] for d in rows] == ids  # settling moves nothing in the page's order
    assert audit.next_open(rows, ids[0]) == ids[3]  # past the two settled
    assert audit.next_open(rows, ids[2]) == ids[3]
    assert audit.next_open(rows, ids[4]) == ids[0]  # round the end
    assert audit.next_open(rows, "not-listed") == ids[0]
    for i in (0, 3):
        audit.adjudicate(ws, "judy", ids[i], "no")
    rows = audit.disagreements(ws)
    assert audit.next_open(rows, ids[3]) == ids[4] and audit.next_open(rows, ids[4]) is None
    audit.adjudicate(ws, "judy", ids[4], "no")
    assert audit.next_open(audit.disagreements(ws)) is None


def test_the_corrected_ranking_leaves_a_tie_out_and_uses_the_adjudicated_label(demo_workspace, tmp_path):
    """The same random audits in two workspaces: ws has a tie on one drawn verdict, twin has only
    ann's labels. Before adjudication ws's correction equals twin's without that verdict audited;
    after, twin's with that verdict audited with the adjudicated label."""
    ws = demo_workspace
    twin = tmp_path / "twin.duckdb"
    shutil.copy(ws, twin)
    q = audits.queue(ws, SXS, "random", rate=0.3)
    rows = q["rows"]
    assert len(rows) >= 4
    flip = {"A": "B", "B": "A", "tie": "A", "none": "A"}
    tied = rows[1]
    for k, row in enumerate(rows):
        label = flip[row["label"]] if k % 3 == 0 else row["label"]
        audit.review(ws, "ann", row["id"], label, sampling=row["sampling"])
        if row is not tied:
            audit.review(twin, "ann", row["id"], label, sampling=row["sampling"])
    audit.review(ws, "ben", tied["id"], flip[tied["label"]], sampling=tied["sampling"])  # ann confirmed it

    def strengths(workspace):
        out = corrected.corrected_ranking(workspace, SXS, queue="random")
        return out, {s["system"]: round(s["strength"], 9) for s in out["systems"]}

    before, before_s = strengths(ws)
    assert before["n_usable_audits"] == len(rows) - 1 and before["n_tied_not_used"] == 1
    assert any("tie and nobody adjudicated" in w for w in before["warnings"])
    assert before_s == strengths(twin)[1]

    audit.adjudicate(ws, "judy", tied["id"], flip[tied["label"]])
    audit.review(twin, "ann", tied["id"], flip[tied["label"]], sampling=tied["sampling"])
    after, after_s = strengths(ws)
    assert after["n_usable_audits"] == len(rows) and after["n_tied_not_used"] == 0
    assert not any("tie" in w for w in after["warnings"])
    assert after_s == strengths(twin)[1]
    assert after_s != before_s  # the adjudicated audit moved the corrected strengths


def test_adjudication_refuses_bad_input_and_writes_nothing(demo_workspace):
    ws = demo_workspace
    ids, judge, other = _split_four(ws)
    unlabelled = _verdicts(ws, GT, 6)[5]["id"]
    before = snapshot(ws)
    for call, says in ((lambda: audit.adjudicate(ws, "judy", ids[1], "A"), "not a"),
                       (lambda: audit.adjudicate(ws, "judy", "no-such-verdict", "yes"), "no verdict"),
                       (lambda: audit.adjudicate(ws, "judy", unlabelled, "yes"), "nobody has labelled it"),
                       (lambda: audit.adjudicate(ws, "judy", ids[1], "yes", "x" * 2001), "2,000"),
                       (lambda: audit.comment(ws, "ana", ids[1], "   "), "empty comment"),
                       (lambda: audit.comment(ws, "ana", "no-such-verdict", "hm"), "no verdict"),
                       (lambda: audit.comment(ws, "ana", ids[1], "y" * 2001), "2,000")):
        with pytest.raises(AuditRefused, match=says) as refused:
            call()
        assert "\n" not in str(refused.value)
    assert snapshot(ws) == before


# ------------------------------------------------------------------------------------ roles


@pytest.fixture
def ws(demo_workspace, monkeypatch) -> Path:
    monkeypatch.setenv("LSQA_WORKSPACE", str(demo_workspace))
    return demo_workspace


@pytest.fixture
def people(ws) -> dict[str, dict]:
    """One person per role (name = role), with their token."""
    return {role: team.add_person(ws, role, role) for role in ROLES}


def _signed(added: dict) -> Person:
    """The Person a page holds for somebody signed in with their link (each write checks it again)."""
    return Person(added["name"], added["role"])


def _split_by(ws: Path, people: dict, k: int = 0) -> str:
    """The k-th verdict of GT, which the annotator confirms and the admin overrides: a disagreement."""
    v = _verdicts(ws, GT, k + 1)[k]
    audit.confirm(ws, _signed(people["annotator"]), v["id"])
    audit.review(ws, _signed(people["admin"]), v["id"], _other(v["kind"], v["judge_label"]))
    return v["id"]


@pytest.mark.parametrize("role", ROLES)
def test_adjudicate_and_comment_refuse_what_the_role_may_not_do(ws, people, role):
    jid = _split_by(ws, people)
    me = _signed(people[role])
    for permission, call in (("adjudicate", lambda: audit.adjudicate(ws, me, jid, "yes", "why")),
                             ("review", lambda: audit.comment(ws, me, jid, "look at chapter 2"))):
        before = snapshot(ws)
        if team.may(role, permission):
            call()
            assert snapshot(ws) != before
            continue
        with pytest.raises(NotAllowed) as refused:
            call()
        assert snapshot(ws) == before, f"{role} {permission}: refused but the workspace changed"
        assert role in str(refused.value) and team.PERMISSIONS[permission] in str(refused.value)
    if team.may(role, "adjudicate"):
        assert audit.disagreements(ws)[0]["adjudication"]["adjudicator"] == role
    if team.may(role, "review"):
        assert [(c["author"], c["role"]) for c in audit.comments(ws, jid)] == [(role, role)]


def test_a_plain_name_may_not_adjudicate_once_the_workspace_has_people(ws, people):
    jid = _split_by(ws, people)
    before = snapshot(ws)
    with pytest.raises(NotAllowed, match="not signed in"):
        audit.adjudicate(ws, "admin", jid, "yes")
    with pytest.raises(NotAllowed, match="not signed in"):
        audit.comment(ws, "admin", jid, "hello")
    assert snapshot(ws) == before


# ------------------------------------------------------------------------------------ comments


def test_blind_hides_other_peoples_comments_until_the_reader_decides(demo_workspace):
    ws = demo_workspace
    v = _verdicts(ws, GT, 1)[0]
    audit.comment(ws, "ben", v["id"], "reference 1 looks wrong")
    audit.comment(ws, "ana", v["id"], "my own remark")
    it = audit.item(ws, v["id"])
    revealed = audit.reveal(it, "ana", True)
    assert not revealed
    assert [c["text"] for c in audit.comments(ws, v["id"], reader="ana", revealed=revealed)] == ["my own remark"]
    assert audit.comments(ws, v["id"], reader="", revealed=False) == []
    audit.confirm(ws, "ana", v["id"])
    it = audit.item(ws, v["id"])
    revealed = audit.reveal(it, "ana", True)
    assert revealed
    shown = audit.comments(ws, v["id"], reader="ana", revealed=revealed)
    assert [(c["author"], c["text"]) for c in shown] == [("ben", "reference 1 looks wrong"), ("ana", "my own remark")]
    assert all(isinstance(c["created_at"], datetime) for c in shown)


# ------------------------------------------------------------------------------------ the CLI


def test_disagreements_cli_json_shape(demo_workspace):
    ws = demo_workspace
    ids, judge, other = _split_four(ws)
    audit.adjudicate(ws, "judy", ids[1], other[1])
    result = invoke("disagreements", "--workspace", ws, "--json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert list(out) == ["disagreements"]
    assert [(d["judgment_id"], d["adjudicated"]) for d in out["disagreements"]] == [(ids[3], None), (ids[1], other[1])]
    for d in out["disagreements"]:
        assert list(d) == ["judgment_id", "labels", "adjudicated"]
        for lab in d["labels"]:
            assert list(lab) == ["annotator", "label", "note", "created_at"]
            datetime.fromisoformat(lab["created_at"])
    assert [lab["annotator"] for lab in out["disagreements"][0]["labels"]] == ["ana", "ben", "cat"]
    text = invoke("disagreements", "--workspace", ws)
    assert text.exit_code == 0 and "2 disagreements, 1 not adjudicated" in text.stdout
    missing = invoke("disagreements", "--workspace", ws.parent / "nope.duckdb")
    assert missing.exit_code == 2 and "does not exist" in missing.stderr


# ------------------------------------------------------------------------------------ the page


def _page(ws: Path, added: dict) -> AppTest:
    """The Adjudicate page of ``added`` signed in by a new link of theirs, as the sign-in front does it."""
    at = AppTest.from_file(APP, default_timeout=90)
    session_id, problem = exchange(ws, team.new_link(ws, added["name"])["token"])
    assert session_id, problem
    at.session_state["lsqa_session"] = session_id
    at.run()
    at.switch_page("pages/adjudicate.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


WRITES = ("adj_opt_yes__writes", "adj_opt_no__writes", "adj_replace__writes")


def _writing_buttons(at) -> list[str]:
    return [b.key for b in at.button if b.key and b.key.endswith("__writes")]


def _on_screen(at) -> str | None:
    """The disagreement on screen: the one the decision bar is stamped with (keys.js reads the same)."""
    for m in at.markdown:
        found = re.search(r'data-lsqa-item="([^"]+)"', str(m.value))
        if found:
            return html.unescape(found.group(1))
    return None


def test_the_adjudicate_page_lets_an_adjudicator_set_the_final_label_and_a_viewer_only_read(ws, people):
    jid = _split_by(ws, people)
    audit.comment(ws, _signed(people["annotator"]), jid, "see the last page")
    d = audit.disagreements(ws)[0]

    viewer = _page(ws, people["viewer"])
    text = page_text(viewer)
    assert "1 disagreement, 1 not adjudicated yet" in text and "see the last page" in text
    # the link to the item on the Audit page, relative to this page (it holds under a base path too)
    assert f"(audit?item={jid})" in text
    assert "annotator" in text and "admin" in text
    # The question and the answer (escaped: people's and models' text is never HTML), in the item and the list.
    assert html.escape(d["question"]) in text and html.escape(d["answers"][0]["text"]) in text
    (listed,) = viewer.dataframe[0].value.to_dict("records")
    assert listed["question"] == d["question"] and d["answers"][0]["text"] in listed["answer A (or the answer)"]
    assert not _writing_buttons(viewer) and "adj_note" not in [t.key for t in viewer.text_input]
    before = snapshot(ws)
    for b in viewer.button:
        if b.key != "new_link" and not b.disabled:  # new_link: their own link
            b.click().run()
    assert snapshot(ws) == before

    at = _page(ws, people["adjudicator"])
    assert _on_screen(at) == jid and sorted(_writing_buttons(at)) == ["adj_opt_no__writes", "adj_opt_yes__writes"]
    at.text_input(key="adj_note").input("the answer is in the book")
    at.button(key="adj_opt_yes__writes").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    listed = audit.disagreements(ws)
    assert listed[0]["adjudicated"] == "yes"
    assert listed[0]["adjudication"]["note"] == "the answer is in the book"
    # The only one is settled: the page says so and offers nothing that writes.
    assert "All 1 disagreement is settled" in page_text(at)
    assert not _writing_buttons(at) and _on_screen(at) is None


def test_the_adjudicate_page_moves_to_the_next_open_one_and_asks_before_replacing(ws, people):
    """Three disagreements settled one after the other, each moving to the next open one; then all
    settled; a settled one opened again: a label key asks first (nothing written), the same key again
    replaces, and the item shows who replaced what. A key pressed on a screen that had drawn another
    disagreement writes nothing."""
    ids = sorted(_split_by(ws, people, k) for k in range(3))
    at = _page(ws, people["adjudicator"])
    assert _on_screen(at) == ids[0] and "Disagreement 1 of 3" in page_text(at)

    # The browser had drawn another disagreement when the key was pressed: nothing is written.
    before = snapshot(ws)
    at.text_input(key=adjudication_view.ON_SCREEN_KEY).set_value(ids[1])
    at.button(key="adj_opt_no__writes").click().run()
    assert snapshot(ws) == before and "Not saved: the item changed under your key" in page_text(at)
    assert _on_screen(at) == ids[0]

    for n, (jid, label) in enumerate(zip(ids, ("no", "yes", "no"), strict=False)):
        assert _on_screen(at) == jid
        at.button(key=f"adj_opt_{label}__writes").click().run()
        assert not at.exception and not at.error, [e.value for e in at.error]
        assert {d["judgment_id"]: d["adjudicated"] for d in audit.disagreements(ws)}[jid] == label
        if n < 2:
            assert _on_screen(at) == ids[n + 1] and f"{2 - n} not adjudicated yet" in page_text(at)
    assert "All 3 disagreements are settled" in page_text(at)
    assert not _writing_buttons(at) and _on_screen(at) is None
    assert sum(len(audit.adjudication_history(ws, j)) for j in ids) == 3  # one final label each, no more

    # A settled one opened again from the list: Y asks first and writes nothing.
    at.selectbox[0].set_value(ids[0]).run()
    assert _on_screen(at) == ids[0] and "settled" in page_text(at)
    before = snapshot(ws)
    at.button(key="adj_opt_no__writes").click().run()  # the label that stands: nothing to replace, nothing asked
    assert snapshot(ws) == before and "Replace the final label" not in page_text(at)
    at.button(key="adj_opt_yes__writes").click().run()
    assert snapshot(ws) == before
    assert "Replace the final label" in page_text(at) and "adj_replace__writes" in _writing_buttons(at)
    at.button(key="adj_keep").click().run()  # Keep: asked no more, nothing written
    assert snapshot(ws) == before and "Replace the final label" not in page_text(at)
    at.button(key="adj_opt_yes__writes").click().run()  # asked again
    at.text_input(key="adj_note").input("chapter 3 settles it")
    at.button(key="adj_opt_yes__writes").click().run()  # the same key again: replaced
    assert not at.error, [e.value for e in at.error]
    history = audit.adjudication_history(ws, ids[0])
    assert [(h["label"], h["adjudicator"], h["note"]) for h in history] == [
        ("no", "adjudicator", ""), ("yes", "adjudicator", "chapter 3 settles it")]
    assert "All 3 disagreements are settled" in page_text(at)  # no open one to move to
    at.selectbox[0].set_value(ids[0]).run()
    text = page_text(at)
    assert "Final labels set, oldest first" in text and "replaced **No, not correct** (set by adjudicator)" in text


def test_an_annotator_reads_only_the_disagreements_on_verdicts_they_labelled(ws, people):
    """Blind means blind on Adjudicate too: another annotator's disagreement is on an item this
    annotator may still be asked to label, so its labels are kept from them (and the page says so)."""
    theirs = _split_by(ws, people, 0)      # the annotator took part
    v = _verdicts(ws, GT, 2)[1]            # adjudicator and admin disagree; the annotator never labelled it
    audit.confirm(ws, _signed(people["adjudicator"]), v["id"])
    audit.review(ws, _signed(people["admin"]), v["id"], _other(v["kind"], v["judge_label"]),
                 "the second page disagrees")
    annotator = _signed(people["annotator"])
    shown, kept = audit.disagreements_seen_by(ws, annotator)
    assert [d["judgment_id"] for d in shown] == [theirs] and kept == 1
    for role in ("viewer", "adjudicator", "admin"):
        shown, kept = audit.disagreements_seen_by(ws, _signed(people[role]))
        assert {d["judgment_id"] for d in shown} == {theirs, v["id"]} and kept == 0, role

    text = page_text(_page(ws, people["annotator"]))
    assert "1 more disagreement on verdicts you have not labelled yet is not shown" in text
    assert "1 disagreement, 1 not adjudicated yet" in text
    assert "the second page disagrees" not in text and f"audit?item={v['id']}" not in text
    assert "2 disagreements, 2 not adjudicated yet" in page_text(_page(ws, people["viewer"]))


# ------------------------------------------------------------------------------------ errata


def test_the_errata_carry_when_each_flag_was_set(demo_workspace, monkeypatch):
    monkeypatch.setattr(reference_errors, "suspects", lambda workspace, **_: [])  # the score is not tested here
    ws = demo_workspace
    v = _verdicts(ws, GT, 1)[0]
    start = datetime.now().replace(microsecond=0) - timedelta(seconds=1)
    audit.flag(ws, "alice", v["question_id"], "1", "wrong", "the book says otherwise")
    audit.flag(ws, "bob", v["question_id"], "1", "ambiguous")
    rows = reference_errors.errata(ws)
    assert len(rows) == 1 and rows[0]["annotators"] == ["alice", "bob"]
    times = [datetime.fromisoformat(t) for t in rows[0]["flagged_at"]]
    assert len(times) == 2 and all(start <= t <= datetime.now() + timedelta(seconds=1) for t in times)
    parsed = list(csv.DictReader(io.StringIO(reference_errors.errata_csv(rows).decode("utf-8"), newline="")))
    assert parsed[0]["flagged_at"] == "; ".join(rows[0]["flagged_at"])
    assert json.loads(reference_errors.errata_jsonl(rows))["flagged_at"] == rows[0]["flagged_at"]


def test_the_audit_pages_comments_panel_adds_a_comment_and_hides_others_while_blind(ws):
    v = _verdicts(ws, GT, 1)[0]
    audit.comment(ws, "ben", v["id"], "reference 1 looks wrong")
    at = AppTest.from_file(APP, default_timeout=90)
    at.session_state["annotator"] = "alice"
    at.query_params["item"], at.query_params["blind"] = v["id"], "1"
    at.run()
    at.switch_page("pages/audit.py")
    at.session_state["audit_x_comments"] = True  # unfold "Comments"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert "reference 1 looks wrong" not in page_text(at)  # blind, and alice has not decided
    at.text_area(key=f"audit_comment_{v['id']}").input("the answer names the wrong cat")
    at.button(key=f"audit_comment_{v['id']}_add").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert [(c["author"], c["text"]) for c in audit.comments(ws, v["id"])] == [
        ("ben", "reference 1 looks wrong"), ("alice", "the answer names the wrong cat")]
    assert "the answer names the wrong cat" in page_text(at) and "reference 1 looks wrong" not in page_text(at)
    audit.confirm(ws, "alice", v["id"])  # decided: the others' comments show
    at.run()
    assert "reference 1 looks wrong" in page_text(at)


def test_the_agreement_page_states_the_rule_and_counts_with_the_final_labels(ws):
    ids, judge, other = _split_four(ws)
    at = AppTest.from_file(APP, default_timeout=90)
    at.session_state["annotator"] = "alice"
    at.run()
    at.switch_page("pages/agreement.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert any(audit.FINAL_LABEL_RULE in c.value for c in at.caption)
    docs = " ".join((PROJECT_ROOT / "docs" / "statistics.md").read_text(encoding="utf-8").split())
    assert "## The human label of a verdict" in docs and "**no human label**" in docs
    # The "human" row of GT: the final labels, by hand 3 verdicts (the tie left out), 2 agree.
    rows = [r for df in at.dataframe for r in df.value.to_dict("records")
            if r.get("rater A") == GT and r.get("rater B") == "human"]
    assert [(r["items"], r["agreement %"]) for r in rows] == [(3, 66.7)], rows


def test_an_imported_label_and_an_audit_page_label_that_differ_are_a_disagreement(demo_workspace, tmp_path):
    ws = demo_workspace
    v = _verdicts(ws, SXS, 1)[0]
    path = tmp_path / "gold.jsonl"
    path.write_text(json.dumps({"judge": SXS, "question_id": v["question_id"], "system_a": v["system_a"],
                                "system_b": v["system_b"], "label": "A", "annotator": "gold"}) + "\n",
                    encoding="utf-8")
    out = invoke("import-reviews", path, "--workspace", ws)
    assert out.exit_code == 0, out.output
    with store.connect(ws) as con:
        (imported,) = verdicts_store.human_labels(con, judge=SXS)
    audit.review(ws, "ana", imported["judgment_id"], "B", "B names the right cat")
    (d,) = audit.disagreements(ws)
    assert d["judgment_id"] == imported["judgment_id"]
    assert [(lab["annotator"], lab["label"]) for lab in d["labels"]] == [("gold", "A"), ("ana", "B")]
    with store.connect(ws) as con:  # one against one: a tie, no human label until adjudicated
        assert [r for r in verdicts_store.final_labels(con, SXS) if r["judgment_id"] == d["judgment_id"]] == []


def test_the_final_label_is_a_plurality_and_a_tie_at_the_top_is_none(demo_workspace):
    ws = demo_workspace
    first, second = (r["id"] for r in _verdicts(ws, SXS, 2))
    for who, label in (("p1", "A"), ("p2", "A"), ("p3", "B"), ("p4", "tie")):
        audit.review(ws, who, first, label)     # A twice, B and tie once: A
    for who, label in (("p1", "A"), ("p2", "A"), ("p3", "B"), ("p4", "B")):
        audit.review(ws, who, second, label)    # two against two: none
    with store.connect(ws) as con:
        final = {r["judgment_id"]: (r["label"], r["basis"]) for r in verdicts_store.final_labels(con, SXS)}
    assert final == {first: ("A", "majority")}
    audit.undo_last(ws, "p4")                    # p4's B withdrawn: A, A, B on the second
    with store.connect(ws) as con:
        final = {r["judgment_id"]: (r["label"], r["basis"]) for r in verdicts_store.final_labels(con, SXS)}
    assert final == {first: ("A", "majority"), second: ("A", "majority")}
