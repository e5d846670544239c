"""Agreement per verdict (issue 30, item 1): a person's review of one verdict is compared with the
judge's label on that verdict, and two people's labels are paired only on the same verdict.

Before, a person's review of a ground-truth verdict (one reference) was compared with the judge's
label collapsed over both references ("either reference's yes"), so confirming a "no" counted as a
disagreement, and reviews of different judges' verdicts on the same answer were merged into one
item. Every expected figure here is counted by hand from the review rows the test writes.
"""

from __future__ import annotations

import pytest

from lsqa import audit, store
from lsqa.dashboard import agreement_view
from lsqa.figures import analysis

GT = "lexical-gt"
AIS = "lexical-autoais-fc"


def _verdicts(ws, judge):
    with store.connect(ws) as con:
        rows = con.execute("SELECT id, question_id, system_a, reference, label FROM judgments"
                           " WHERE judge = ? AND status = 'ok' ORDER BY question_id, system_a, reference",
                           [judge]).fetchall()
    return [dict(zip(("id", "question_id", "system", "reference", "label"), r, strict=False)) for r in rows]


@pytest.fixture
def reviewed(demo_workspace):
    """ben overrides six of seven ground-truth verdicts; then ana confirms three 'no' verdicts (ben had
    overridden them; on two of them the other reference says yes), and confirms an AutoAIS verdict on the answer
    of ben's seventh verdict (another judge, the same answer)."""
    ws = demo_workspace
    gt = _verdicts(ws, GT)
    by_answer: dict[tuple, list[dict]] = {}
    for v in gt:
        by_answer.setdefault((v["question_id"], v["system"]), []).append(v)
    mixed = [v for vs in by_answer.values() if {x["label"] for x in vs} == {"yes", "no"} for v in vs if v["label"] == "no"]
    ais = {(v["question_id"], v["system"]): v for v in _verdicts(ws, AIS)}
    assert len(mixed) >= 2  # the small demo has two answers one reference accepts and the other rejects
    v1_3 = mixed[:2] + [next(v for v in gt if v["label"] == "no" and v not in mixed)]
    rest = [v for v in gt if v not in v1_3 and (v["question_id"], v["system"]) not in
            {(x["question_id"], x["system"]) for x in v1_3}]
    v7 = next(v for v in rest if (v["question_id"], v["system"]) in ais)
    v4_6 = [v for v in rest if v is not v7][:3]
    flip = {"yes": "no", "no": "yes"}
    rows = []  # (annotator, verdict, label): the rows every expected figure below is counted from
    for v in v1_3 + v4_6:
        audit.review(ws, "ben", v["id"], flip[v["label"]])
        rows.append(("ben", v, flip[v["label"]]))
    audit.confirm(ws, "ben", v7["id"])
    rows.append(("ben", v7, v7["label"]))
    for v in v1_3:
        audit.confirm(ws, "ana", v["id"])
        rows.append(("ana", v, v["label"]))
    other = ais[(v7["question_id"], v7["system"])]
    audit.confirm(ws, "ana", other["id"])
    rows.append(("ana", other, other["label"]))
    return ws, rows


def _by_hand(rows, annotator=None, judge_ids=None):
    """One annotator's latest label per verdict against the judge's label on it; for anyone (the
    "human" rater), the final label of issue 34: each person's latest label, the majority of them,
    and a verdict whose people tie (here: ben overrode, ana confirmed) left out until adjudicated."""
    latest = {}
    for who, v, label in rows:  # rows are in review order
        if (annotator is None or who == annotator) and (judge_ids is None or v["id"] in judge_ids):
            latest.setdefault(v["id"], (v["label"], {}))[1][who] = label
    final = {}
    for vid, (judge_label, people) in latest.items():
        labels = list(people.values())
        top = max(labels.count(x) for x in labels)
        winners = {x for x in labels if labels.count(x) == top}
        if len(winners) == 1:
            final[vid] = (judge_label, winners.pop())
    return len(final), sum(j == h for j, h in final.values())


def test_a_persons_review_is_compared_with_the_verdict_they_reviewed(reviewed):
    ws, rows = reviewed
    gt_ids = {v["id"] for v in _verdicts(ws, GT)}
    for annotator, (n, agree) in (("ana", (3, 3)), ("ben", (7, 1)), (None, (4, 1))):  # None: 3 ties left out
        assert _by_hand(rows, annotator, gt_ids) == (n, agree)  # the hand count itself
        rater = f"human:{annotator}" if annotator else "human"
        result = agreement_view.judge_vs_human(ws, GT, annotator=annotator, bootstrap=0)
        assert (result["n"], result["agreement"]) == (n, pytest.approx(agree / n)), rater
        # The same figure without @judge, as `lsqa agreement --rater-a lexical-gt --rater-b human:ben` reads it.
        alone = analysis.agreement(ws, GT, rater, bootstrap=0)
        assert (alone["n"], alone["agreement"]) == (n, pytest.approx(agree / n)), rater
    # ben's confusion matrix, counted from his rows: rows = the judge, columns = ben.
    ben = {v["id"]: (v["label"], label) for who, v, label in rows if who == "ben"}
    result = agreement_view.judge_vs_human(ws, GT, annotator="ben", bootstrap=0)
    expected = [[sum(1 for j, h in ben.values() if (j, h) == (a, b)) for b in result["labels"]] for a in result["labels"]]
    assert result["confusion"] == expected and sum(map(sum, expected)) == 7


def test_the_agreement_page_shows_the_per_verdict_figures(reviewed):
    ws, rows = reviewed
    view = agreement_view.agreement_overview(ws, bootstrap=0)
    human = {(r["rater_a"], r["rater_b"]): (r["n"], round(r["agreement"], 3)) for r in view["vs_human"] + view["vs_annotator"]}
    assert human[(GT, "human")] == (4, round(1 / 4, 3))  # three ties (ana vs ben) left out: _by_hand
    assert human[(GT, "human:ana")] == (3, 1.0) and human[(GT, "human:ben")] == (7, round(1 / 7, 3))
    assert human[(AIS, "human:ana")] == (1, 1.0) and (AIS, "human:ben") not in human
    shown = {(r["rater A"], r["rater B"]): r["agreement %"] for r in agreement_view.agreement_rows(view["vs_annotator"])}
    assert shown[(GT, "human:ben")] == 14.3 and shown[(GT, "human:ana")] == 100.0


def test_two_people_are_paired_only_on_the_same_verdict(reviewed):
    ws, rows = reviewed
    ana = {v["id"]: label for who, v, label in rows if who == "ana"}
    ben = {v["id"]: label for who, v, label in rows if who == "ben"}
    both = sorted(set(ana) & set(ben))
    assert len(both) == 3  # the AutoAIS verdict ana confirmed is about ben's seventh answer, not his verdict
    agree = sum(ana[k] == ben[k] for k in both)
    pair = analysis.agreement(ws, "human:ana", "human:ben", bootstrap=0)
    assert (pair["n"], pair["agreement"]) == (3, pytest.approx(agree / 3)) and agree == 0
    view = agreement_view.agreement_overview(ws, bootstrap=0, sections=("annotators",))
    assert [(p["rater_a"], p["rater_b"], p["n"]) for p in view["annotator_pairs"]] == [("ana", "ben", 3)]
    assert view["annotators"]["n_items"] == view["annotators"]["n_complete"] == 3
    # Krippendorff's α of two coders over the three shared verdicts, from its definition.
    a, b = [ana[k] for k in both], [ben[k] for k in both]
    values = a + b
    d_o = sum(x != y for x, y in zip(a, b, strict=False)) * 2 / len(values)
    d_e = sum(x != y for i, x in enumerate(values) for j, y in enumerate(values) if i != j) / (len(values) * (len(values) - 1))
    assert view["annotators"]["krippendorff_alpha"] == pytest.approx(1 - d_o / d_e)


def test_judges_are_still_compared_per_answer(reviewed):
    """Two judges never share a verdict: between judges the unit stays the answer (either reference's yes)."""
    ws, _ = reviewed
    gt = analysis.rater_labels(ws, GT)
    assert all(len(key) == 2 for key in gt)  # (question, system)
    pair = analysis.agreement(ws, GT, AIS, bootstrap=0)
    assert pair["n"] == len(set(gt) & set(analysis.rater_labels(ws, AIS))) > 0
