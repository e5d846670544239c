"""Assignments and gold labels (issue 34): ``lsqa assign`` gives each annotator their own verdicts
with overlap, an annotator's Audit page opens on them with their progress, a random batch's reviews
count for corrected estimates, gold labels never make a verdict "need a second review", and the
queue filters by who reviewed. Refusals leave the workspace as it was (tests/support/bad_input.py)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from lsqa import audit, store, team
from lsqa.audit.review_import import import_reviews
from lsqa.dashboard import audit_view as view
from lsqa.errors import AuditRefused, NotAllowed
from lsqa.figures import audits, corrected
from lsqa.study import llmbar
from lsqa.team import Person
from tests.conftest import PROJECT_ROOT
from tests.support import audit_desk as desk
from tests.support.apptest_text import page_text, signed_in_page
from tests.support.bad_input import assert_library_refuses, assert_refused, invoke, snapshot

APP = str(PROJECT_ROOT / "app.py")
JUDGE = "lexical-autoais-fc"  # a yes/no judge of the small demo


def _assignments(ws: Path) -> list[dict]:
    with store.connect(ws) as con:
        return con.execute("SELECT judgment_id, annotator, queue, inclusion_prob, batch FROM assignments ORDER BY id"
                           ).fetchdf().to_dict("records")


def _head(ws: Path, annotator: str = "", filters: audit.Filters = audit.Filters(), n: int = 100) -> list[str]:
    return [r["id"] for r in audit.queue.uncached(ws, filters, annotator, page_size=n)["rows"]]


# ----------------------------------------------------------------------------------- assigning


def test_each_verdict_goes_to_per_item_different_people_balanced(demo_workspace):
    done = audit.assign(demo_workspace, JUDGE, ["ana", "ben", "cy"], by="boss", per_item=2, count=6)
    assert done["per_item"] == 2 and done["items"] == 6 and done["judge"] == JUDGE
    assert done["assigned"] == [{"annotator": a, "n_items": 4} for a in ("ana", "ben", "cy")]
    rows = _assignments(demo_workspace)
    per_verdict = Counter(r["judgment_id"] for r in rows)
    assert len(per_verdict) == 6 and set(per_verdict.values()) == {2}
    assert len({(r["judgment_id"], r["annotator"]) for r in rows}) == 12  # two different people each
    assert {r["batch"] for r in rows} == {done["batch"]}
    # Priority: the audit queue's head for the judge, as everybody sees it.
    assert list(per_verdict) == _head(demo_workspace, filters=audit.Filters(judges=(JUDGE,), reviewed="all"), n=6)
    # A second batch continues the queue: nothing assigned twice.
    audit.assign(demo_workspace, JUDGE, ["ana", "ben"], by="boss", per_item=1, count=5)
    again = Counter(r["judgment_id"] for r in _assignments(demo_workspace))
    assert len(again) == 11 and sorted(again.values()) == [1] * 5 + [2] * 6


def test_the_cli_signs_a_batch_with_the_person_named_by_as_and_checks_their_role(team_ws):
    ws = team_ws
    args = ["assign", "--judge", JUDGE, "--annotators", "ana,ben", "--per-item", "1", "--count", "2", "--workspace", ws]
    # Refused, nothing written: nobody named, a person whose stored role may not assign, nobody of that name.
    assert_refused("cli assign without --as", args, workspace=ws, must_name=("--as",))
    assert_refused("cli assign as an annotator", [*args, "--as", "ana"], workspace=ws, must_name=("ana", "annotator"))
    assert_refused("cli assign as an adjudicator", [*args, "--as", "adj"], workspace=ws, must_name=("adj", "admin"))
    assert_refused("cli assign as nobody", [*args, "--as", "zed"], workspace=ws, must_name=("zed",))
    team.revoke_person(ws, "boss")
    assert_refused("cli assign as a revoked admin", [*args, "--as", "boss"], workspace=ws, must_name=("boss",))
    team.add_person(ws, "boss", "admin")
    result = invoke(*args, "--as", "boss", "--json")
    assert result.exit_code == 0, result.stderr
    with store.connect(ws) as con:
        assert con.execute("SELECT DISTINCT assigned_by FROM assignments").fetchall() == [("boss",)]


def test_the_cli_assigns_and_prints_json(demo_workspace):
    result = invoke("assign", "--judge", JUDGE, "--annotators", "ana,ben", "--per-item", "1", "--count", "3",
                    "--workspace", demo_workspace, "--json")
    assert result.exit_code == 0, result.stderr
    out = json.loads(result.stdout)
    assert set(out) == {"judge", "assigned", "per_item", "batch"}
    assert out["judge"] == JUDGE and out["per_item"] == 1
    assert out["assigned"] == [{"annotator": "ana", "n_items": 2}, {"annotator": "ben", "n_items": 1}]
    assert [r["annotator"] for r in _assignments(demo_workspace)] == ["ana", "ben", "ana"]
    # A workspace without people: --as names whoever assigns (default: the login name), never the command.
    invoke("assign", "--judge", JUDGE, "--annotators", "cy", "--per-item", "1", "--count", "1", "--as", "dora",
           "--workspace", demo_workspace)
    with store.connect(demo_workspace) as con:
        signed = [r[0] for r in con.execute("SELECT assigned_by FROM assignments ORDER BY id").fetchall()]
    assert signed[-1] == "dora" and len(set(signed[:3])) == 1 and signed[0] not in ("", "lsqa assign")


def test_a_random_batch_is_a_simple_random_sample_whose_reviews_correct_estimates(demo_workspace):
    with store.connect(demo_workspace) as con:
        n_items = len(audits.judge_items(con, JUDGE))
    done = audit.assign(demo_workspace, JUDGE, ["ana"], by="boss", per_item=1, count=6, queue="random", seed=7)
    rows = _assignments(demo_workspace)
    assert len(rows) == 6 and {r["queue"] for r in rows} == {"random"}
    assert [r["inclusion_prob"] for r in rows] == pytest.approx([6 / n_items] * 6)
    # One verdict per item (an item as the corrected estimates count it).
    with store.connect(demo_workspace) as con:
        items = audits.judge_items(con, JUDGE)
    item_of = {j: k for k, it in enumerate(items) for j in it.judgment_ids}
    assert len({item_of[r["judgment_id"]] for r in rows}) == 6
    # The same seed draws the same items; another seed others.
    other = audit.assign(demo_workspace, JUDGE, ["ben"], by="boss", per_item=1, count=6, queue="random", seed=7)
    assert {r["judgment_id"] for r in _assignments(demo_workspace) if r["batch"] == other["batch"]} == \
        {r["judgment_id"] for r in rows}
    # Ana's queue of assignments carries the draw; her review made from it stores it, and counts.
    q = audit.queue(demo_workspace, audit.Filters(reviewed=audit.ASSIGNED), "ana")
    assert q["total"] == 6 and {r["id"] for r in q["rows"]} == {r["judgment_id"] for r in rows}
    first = q["rows"][0]
    assert first["sampling"] == {"queue": "random", "inclusion_prob": pytest.approx(6 / n_items), "stratum": "all"}
    assert "random sample" in first["why"] and done["batch"]
    before = corrected.corrected_accuracy(demo_workspace, JUDGE)["n_usable_audits"]
    view.save_decision(demo_workspace, "ana", first["id"], audit.item(demo_workspace, first["id"])["kind"], None, None, "", first["sampling"], opened_at=0)
    report = corrected.corrected_accuracy(demo_workspace, JUDGE)
    assert (before, report["n_usable_audits"], report["design"]) == (0, 1, "random")


def test_done_is_a_live_review_by_that_person(demo_workspace):
    audit.assign(demo_workspace, JUDGE, ["ana", "ben"], by="boss", per_item=2, count=3)
    assert audit.my_progress(demo_workspace, "ana") == {"assigned": 3, "done": 0, "open": 3}
    mine = _head(demo_workspace, "ana", audit.Filters(reviewed=audit.ASSIGNED))
    assert len(mine) == 3
    audit.confirm(demo_workspace, "ben", mine[0])  # ben's review is not ana's
    assert audit.my_progress(demo_workspace, "ana")["done"] == 0
    audit.confirm(demo_workspace, "ana", mine[0])
    assert audit.my_progress(demo_workspace, "ana") == {"assigned": 3, "done": 1, "open": 2}
    assert _head(demo_workspace, "ana", audit.Filters(reviewed=audit.ASSIGNED)) == mine[1:]
    audit.undo_last(demo_workspace, "ana")  # undone: open again
    assert audit.my_progress(demo_workspace, "ana")["done"] == 0
    assert {r["annotator"]: (r["assigned"], r["done"]) for r in audit.team_progress(demo_workspace)} == \
        {"ana": (3, 0), "ben": (3, 1)}
    # Assigning writes no review, and nobody unassigned has assignments.
    assert audit.my_progress(demo_workspace, "cy") == {"assigned": 0, "done": 0, "open": 0}


def test_the_queue_of_people_without_assignments_is_unchanged(demo_workspace):
    cases = [("", audit.Filters()), ("cy", audit.Filters()), ("cy", audit.Filters(reviewed="all")),
             ("cy", audit.Filters(judges=(JUDGE,), reviewed="unreviewed")), ("cy", audit.Filters(reviewed="second"))]
    audit.confirm(demo_workspace, "dee", _head(demo_workspace, "dee")[0])
    before = [audit.queue.uncached(demo_workspace, f, who, page_size=300) for who, f in cases]
    audit.assign(demo_workspace, JUDGE, ["ana", "ben"], by="boss", per_item=2, count=20)
    audit.assign(demo_workspace, JUDGE, ["ana"], by="boss", per_item=1, count=5, queue="random")
    after = [audit.queue.uncached(demo_workspace, f, who, page_size=300) for who, f in cases]
    assert after == before
    assert before[4]["total"] == 1  # dee's review makes one verdict need a second review (for cy)


# ------------------------------------------------------------------------------------ refusals


@pytest.fixture
def team_ws(demo_workspace) -> Path:
    for name, role in (("boss", "admin"), ("ana", "annotator"), ("ben", "annotator"), ("vic", "viewer"),
                       ("adj", "adjudicator")):
        team.add_person(demo_workspace, name, role)
    return demo_workspace


def test_refusals_leave_the_workspace_as_it_was(demo_workspace):
    ws = demo_workspace
    cases = [("no verdicts", lambda: audit.assign(ws, "nobody-judge", ["ana"], by="boss", per_item=1), ("nobody-judge",)),
             ("count 0", lambda: audit.assign(ws, JUDGE, ["ana"], by="boss", per_item=1, count=0), ("count",)),
             ("count -3", lambda: audit.assign(ws, JUDGE, ["ana"], by="boss", per_item=1, count=-3), ("count",)),
             ("per-item 0", lambda: audit.assign(ws, JUDGE, ["ana"], by="boss", per_item=0), ("per-item",)),
             ("per-item > people", lambda: audit.assign(ws, JUDGE, ["ana", "ben"], by="boss", per_item=3), ("per-item", "2")),
             ("no people", lambda: audit.assign(ws, JUDGE, [" ", ""], by="boss", per_item=1), ("annotator",)),
             ("bad queue", lambda: audit.assign(ws, JUDGE, ["ana"], by="boss", per_item=1, queue="active"), ("active",))]
    for probe, call, names in cases:
        assert_library_refuses(probe, call, AuditRefused, workspace=ws, must_name=names)
    for probe, args, names in [
            ("cli per-item", ["--judge", JUDGE, "--annotators", "ana", "--per-item", "2"], ("per-item",)),
            ("cli count", ["--judge", JUDGE, "--annotators", "ana,ben", "--count", "0"], ("count",)),
            ("cli judge", ["--judge", "nobody-judge", "--annotators", "ana,ben"], ("nobody-judge",))]:
        assert_refused(probe, ["assign", *args, "--workspace", ws], workspace=ws, must_name=names)


def test_in_a_team_only_admins_assign_and_only_to_people_who_review(team_ws):
    ws = team_ws
    boss = Person("boss", "admin")
    for who in (Person("ana", "annotator"), Person("adj", "adjudicator"), Person("vic", "viewer"), "boss",
                Person("ana", "admin")):  # a forged role: the stored one counts
        assert_library_refuses(f"assign as {who}", lambda who=who: audit.assign(ws, JUDGE, ["ana"], by=who, per_item=1),
                               NotAllowed, workspace=ws)
    assert_library_refuses("unknown name", lambda: audit.assign(ws, JUDGE, ["ana", "zed"], by=boss, per_item=1),
                           AuditRefused, workspace=ws, must_name=("zed",))
    assert_library_refuses("a viewer", lambda: audit.assign(ws, JUDGE, ["ana", "vic"], by=boss, per_item=1),
                           AuditRefused, workspace=ws, must_name=("vic", "viewer"))
    assert_refused("cli unknown name", ["assign", "--judge", JUDGE, "--annotators", "ana,zed", "--as", "boss",
                                        "--workspace", ws], workspace=ws, must_name=("zed",))
    team.revoke_person(ws, "ben")
    assert_library_refuses("revoked", lambda: audit.assign(ws, JUDGE, ["ben"], by=boss, per_item=1),
                           AuditRefused, workspace=ws, must_name=("ben",))
    done = audit.assign(ws, JUDGE, ["ana", "adj"], by=boss, per_item=1, count=2)
    assert [a["n_items"] for a in done["assigned"]] == [1, 1]
    assert {r["annotator"] for r in _assignments(ws)} == {"ana", "adj"}
    with store.connect(ws) as con:
        assert {r[0] for r in con.execute("SELECT assigned_by FROM assignments").fetchall()} == {"boss"}


# --------------------------------------------------------------------------------- gold labels


def _second(ws: Path, who: str = "ana") -> int:
    return audit.queue.uncached(ws, audit.Filters(reviewed="second"), who)["total"]


def test_gold_labels_never_make_a_verdict_need_a_second_review(workspace, shared_data):
    list(llmbar.import_llmbar(workspace, shared_data))  # the demo's LLMBar part: 1,064 gold labels
    with store.connect(workspace) as con:
        assert con.execute("SELECT count(*), count(*) FILTER (WHERE gold) FROM human_reviews").fetchone() == (1064, 1064)
    assert _second(workspace) == 0  # 1,064 before gold labels were told apart
    everything = audit.queue.uncached(workspace, audit.Filters(reviewed="all"), "ana", page_size=5)
    first = everything["rows"][0]["id"]
    audit.confirm(workspace, "ben", first)  # a person's review does
    assert _second(workspace) == 1
    assert _head(workspace, "ana", audit.Filters(reviewed="second")) == [first]
    # Reviewed by: the verdicts ben labelled; the gold set's.
    assert _head(workspace, "ana", audit.Filters(reviewed="all", reviewed_by=("ben",))) == [first]
    assert audit.queue.uncached(workspace, audit.Filters(reviewed="all", reviewed_by=("llmbar-gold",)), "ana"
                                )["total"] == 1064
    assert audit.reviewers(workspace) == ["ben", "llmbar-gold"]


def _review_file(ws: Path, tmp_path: Path, annotator: str, n: int) -> Path:
    rows = audit.queue.uncached(ws, audit.Filters(judges=(JUDGE,), reviewed="all"), "", page_size=n)["rows"]
    path = tmp_path / f"{annotator}.jsonl"
    path.write_text("".join(json.dumps({"judge": JUDGE, "question_id": r["question_id"], "system": r["system_a"],
                                        "reference": r["reference"], "label": "yes", "annotator": annotator}) + "\n"
                            for r in rows))
    return path


def test_import_reviews_gold_marks_each_row(demo_workspace, tmp_path):
    ws = demo_workspace
    path = _review_file(ws, tmp_path, "gold-set", 4)
    import_reviews(ws, path)  # not gold: a person's labels make 4 verdicts need a second review
    assert _second(ws) == 4
    result = invoke("import-reviews", path, "--gold", "--workspace", ws)
    assert result.exit_code == 0, result.stderr
    with store.connect(ws) as con:
        assert con.execute("SELECT gold, count(*) FROM human_reviews GROUP BY gold ORDER BY gold").fetchall() == \
            [(False, 4), (True, 4)]
    assert _second(ws) == 0  # the latest label of the gold set is gold
    assert invoke("import-reviews", path, "--gold", "--workspace", ws).exit_code == 0
    with store.connect(ws) as con:
        assert con.execute("SELECT count(*) FROM human_reviews").fetchone()[0] == 8  # the same file again: nothing


# ----------------------------------------------------------------------------------- dashboard


def _app(ws: Path, name: str, **state) -> AppTest:
    return signed_in_page(APP, ws, name, "pages/audit.py", **state)


@pytest.fixture
def people(demo_workspace, monkeypatch) -> dict[str, str]:
    monkeypatch.setenv("LSQA_WORKSPACE", str(demo_workspace))
    return {name: team.add_person(demo_workspace, name, role)["token"]
            for name, role in (("boss", "admin"), ("ana", "annotator"), ("ben", "annotator"))}


def test_an_admin_assigns_from_the_audit_sidebar(demo_workspace, people):
    at = _app(demo_workspace, "ana")
    assert "Assign items" not in [e.label for e in at.sidebar.expander]  # annotators are not offered it
    at = _app(demo_workspace, "boss", audit_x_assign=True)
    assert "Assign items" in [e.label for e in at.sidebar.expander]
    at.sidebar.selectbox(key="audit_assign_judge").select(JUDGE)
    at.sidebar.multiselect(key="audit_assign_names").select("ana").select("ben")
    at.sidebar.number_input(key="audit_assign_per_item").set_value(1)
    at.sidebar.number_input(key="audit_assign_count").set_value(4)
    before = snapshot(demo_workspace)
    at.sidebar.button(key="audit_assign_go").click().run()
    assert not at.exception, [e.value for e in at.exception]
    rows = _assignments(demo_workspace)
    assert sorted(Counter(r["annotator"] for r in rows).items()) == [("ana", 2), ("ben", 2)]
    with store.connect(demo_workspace) as con:
        assert con.execute("SELECT count(*) FROM human_reviews").fetchone()[0] == 0
    assert snapshot(demo_workspace) != before
    assert "Assigned 4 verdicts of lexical-autoais-fc, each to 1: ana 2, ben 2" in page_text(at)
    # Refused: said on the page, nothing written.
    at.sidebar.multiselect(key="audit_assign_names").unselect("ana").unselect("ben")
    before = snapshot(demo_workspace)
    at.sidebar.button(key="audit_assign_go").click().run()
    assert "Not assigned: no annotators named" in page_text(at) and snapshot(demo_workspace) == before


def test_an_annotator_opens_on_their_assignments_with_their_progress(demo_workspace, people):
    audit.assign(demo_workspace, JUDGE, ["ana"], by=Person("boss", "admin"), per_item=1, count=3)
    mine = _head(demo_workspace, "ana", audit.Filters(reviewed=audit.ASSIGNED))
    at = _app(demo_workspace, "ben")  # nothing assigned: today's priority queue
    assert at.session_state["audit_queue"] == "priority"
    at = _app(demo_workspace, "ana")
    assert at.session_state["audit_queue"] == audit.ASSIGNED
    assert "0 of 3 of my assignments done" in page_text(at)
    assert desk.desk(at).state["audit_trail"] == [mine[0]]  # the first assigned verdict is on screen
    desk.press(at, "audit_confirm")
    assert audit.my_progress(demo_workspace, "ana")["done"] == 1
    assert desk.desk(at).state["audit_trail"][-1] == mine[1]  # the next of mine
    at.run()
    assert "1 of 3 of my assignments done" in page_text(at)
    # Ben filters the queue by who reviewed: only the verdict ana labelled.
    at = _app(demo_workspace, "ben", audit_x_queue=True)
    box = at.sidebar.multiselect(key="audit_reviewed_by")
    assert box.label == "Reviewed by" and box.options == ["ana"]
    box.select("ana").run()
    assert desk.desk(at).state["audit_trail"] == [mine[0]]
    assert "reviewed by ana" in page_text(at)
