"""Final labels that leave the workspace: `lsqa export`'s final_labels file and `lsqa labels --json`, one
row per verdict with a human label (adjudicated, majority, single, unanimous; a tie marked without a
label), with the people, the adjudicator and whether the verdict counts as an audit with its π. Checked
against a hand count of a scripted team's day, every row written by the library's own write functions
(reviews, an undo, an adjudication, a random assignment) as signed-in people."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from lsqa import audit, store, team
from lsqa.figures import analysis
from lsqa.judging import kinds
from lsqa.store import verdicts as verdicts_store
from lsqa.team import Person
from tests.support.bad_input import assert_refused, invoke

JUDGE = "lexical-autoais-fc"  # a yes/no judge of the small demo
ANA, BEN, CAT = Person("ana", "annotator"), Person("ben", "annotator"), Person("cat", "annotator")
ADJ, BOSS = Person("adj", "adjudicator"), Person("boss", "admin")


def _other(kind: str, label: str) -> str:
    return next(lab for lab in kinds.get(kind).labels if lab != label)


def team_day(ws: Path) -> dict:
    """A team's day on seven verdicts of JUDGE, and the final label of each by hand:
    v0 ana, ben confirm                      -> the judge's label, unanimous
    v1 ana confirms, ben overrides           -> a tie: no label
    v2 ana alone confirms                    -> the judge's label, single
    v3 ana, ben override, cat confirms       -> the other label, majority
    v4 ana confirms, ben overrides, adj sets the other label -> the other label, adjudicated by adj
    v5 ana overrides, then undoes it         -> no row (nobody's label stands)
    r  cat reviews a verdict boss assigned at random (π recorded) -> single, counts as an audit"""
    for name, role in (("boss", "admin"), ("ana", "annotator"), ("ben", "annotator"), ("cat", "annotator"),
                       ("adj", "adjudicator")):
        team.add_person(ws, name, role)
    done = audit.assign(ws, JUDGE, ["cat"], by=BOSS, per_item=1, count=1, queue="random", seed=5)
    with store.connect(ws) as con:
        drawn = con.execute("SELECT judgment_id, inclusion_prob, stratum FROM assignments WHERE batch = ?",
                            [done["batch"]]).fetchone()
        rows = [r for r in verdicts_store.effective_verdicts(con, judge=JUDGE) if r["id"] != drawn[0]][:6]
    v = [r["id"] for r in rows]
    judge = [r["judge_label"] for r in rows]
    other = [_other(r["kind"], r["judge_label"]) for r in rows]
    audit.confirm(ws, ANA, v[0])
    audit.confirm(ws, BEN, v[0])
    audit.confirm(ws, ANA, v[1])
    audit.review(ws, BEN, v[1], other[1], "the book says otherwise")
    audit.confirm(ws, ANA, v[2])
    audit.review(ws, ANA, v[3], other[3])
    audit.review(ws, BEN, v[3], other[3])
    audit.confirm(ws, CAT, v[3])
    audit.confirm(ws, ANA, v[4])
    audit.review(ws, BEN, v[4], other[4])
    audit.adjudicate(ws, ADJ, v[4], other[4], "chapter 3")
    audit.review(ws, ANA, v[5], other[5])
    audit.undo_last(ws, ANA)
    with store.connect(ws) as con:
        random_judge_label = con.execute("SELECT label FROM judgments WHERE id = ?", [drawn[0]]).fetchone()[0]
    audit.confirm(ws, CAT, drawn[0], sampling={"queue": "random", "inclusion_prob": drawn[1], "stratum": drawn[2]})
    no_audit = {"audit": False, "audit_queue": "priority", "inclusion_prob": None}
    expected = {
        v[0]: {"label": judge[0], "basis": "unanimous", "people": ["ana", "ben"], "people_labels": [judge[0]] * 2,
               "adjudicator": None, **no_audit},
        v[1]: {"label": None, "basis": "tie", "people": ["ana", "ben"], "people_labels": [judge[1], other[1]],
               "adjudicator": None, **no_audit},
        v[2]: {"label": judge[2], "basis": "single", "people": ["ana"], "people_labels": [judge[2]],
               "adjudicator": None, **no_audit},
        v[3]: {"label": other[3], "basis": "majority", "people": ["ana", "ben", "cat"],
               "people_labels": [other[3], other[3], judge[3]], "adjudicator": None, **no_audit},
        v[4]: {"label": other[4], "basis": "adjudicated", "people": ["ana", "ben"],
               "people_labels": [judge[4], other[4]], "adjudicator": "adj", **no_audit},
        drawn[0]: {"label": random_judge_label, "basis": "single", "people": ["cat"],
                   "people_labels": [random_judge_label], "adjudicator": None, "audit": True,
                   "audit_queue": "random", "inclusion_prob": pytest.approx(drawn[1])},
    }
    return {"expected": expected, "undone": v[5], "pi": drawn[1]}


def _picked(rows: list[dict]) -> dict:
    keys = ("label", "basis", "people", "people_labels", "adjudicator", "audit", "audit_queue", "inclusion_prob")
    return {r["judgment_id"]: {k: r[k] for k in keys} for r in rows}


def test_final_labels_match_a_hand_count_of_a_teams_day(demo_workspace, tmp_path):
    ws = demo_workspace
    day = team_day(ws)
    rows = audit.final_labels(ws, JUDGE)
    assert _picked(rows) == day["expected"]
    assert day["undone"] not in {r["judgment_id"] for r in rows}
    assert 0 < day["pi"] < 1
    # One definition: the label is the view's (what agreement and the corrected estimates read).
    with store.connect(ws) as con:
        view = {r["judgment_id"]: r["label"] for r in verdicts_store.final_labels(con, judge=JUDGE)}
    assert {r["judgment_id"]: r["label"] for r in rows if r["label"] is not None} == view
    assert all(r["judge"] == JUDGE and r["question_id"] for r in rows)

    # `lsqa labels --json` prints the same rows; the export writes them (CSV and JSONL).
    printed = invoke("labels", "--judge", JUDGE, "--json", "--workspace", str(ws))
    assert printed.exit_code == 0, printed.output
    assert _picked(json.loads(printed.stdout)["final_labels"]) == day["expected"]
    for fmt in ("csv", "jsonl"):
        out = tmp_path / f"export-{fmt}"
        written = analysis.export(ws, out, fmt)
        assert written[f"final_labels.{fmt}"] == len(rows)
        if fmt == "jsonl":
            exported = [json.loads(line) for line in (out / "final_labels.jsonl").read_text().splitlines()]
        else:
            with open(out / "final_labels.csv", newline="", encoding="utf-8") as f:
                exported = list(csv.DictReader(f))
            for r in exported:  # CSV: lists as JSON arrays, empty cells for None, true/false
                r.update(people=json.loads(r["people"]), people_labels=json.loads(r["people_labels"]),
                         label=r["label"] or None, adjudicator=r["adjudicator"] or None,
                         audit=r["audit"] == "true",
                         inclusion_prob=float(r["inclusion_prob"]) if r["inclusion_prob"] else None)
        assert _picked([r for r in exported if r["judge"] == JUDGE]) == day["expected"], fmt


def test_labels_refuses_an_unknown_judge(demo_workspace):
    assert_refused("labels unknown judge", ["labels", "--judge", "nobody-judge", "--workspace", demo_workspace],
                   workspace=demo_workspace, must_name=("nobody-judge",))
