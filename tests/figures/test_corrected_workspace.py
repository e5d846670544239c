"""Audits that count (issue 13): sampled queues, recorded probabilities, corrected reports, the CLI
and `lsqa import-reviews`, on the demo workspace."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from lsqa import audit, store
from lsqa.cli import app
from lsqa.dashboard import corrected_view
from lsqa.figures import audits, corrected
from lsqa.store import corpus as corpus_store
from lsqa.store import verdicts as verdicts_store

SXS, YESNO = "lexical-sxs-fc", "lexical-autoais-fc"
runner = CliRunner()


def _review_queue(ws, judge, queue_name, *, rate, stratify="none", flip_every=3):
    """Review every drawn item; every `flip_every`-th gets the other label (a judge that errs)."""
    q = audits.queue(ws, judge, queue_name, rate=rate, stratify=stratify)
    for k, row in enumerate(q["rows"]):
        label = row["label"]
        if k % flip_every == 0:
            label = {"A": "B", "B": "A", "tie": "A", "none": "A", "yes": "no", "no": "yes"}[label]
        audit.review(ws, "ann", row["id"], label, sampling=row["sampling"])
    return q


def test_item_table_is_the_judges_items_as_columns(demo_workspace):
    """``audits.item_table`` (counted in SQL on integer keys) holds what ``audits.judge_items`` (an
    object per item, from every verdict) holds, in the same order, for a side-by-side and a yes/no
    judge; its looked-up verdicts are every verdict of each item holding an audited one, in order."""
    import numpy as np

    from lsqa.stats.sampling import Items
    from lsqa.vocabulary import BINARY, PAIRWISE

    for judge in (SXS, YESNO):
        _review_queue(demo_workspace, judge, "random", rate=0.2)
    with store.connect(demo_workspace) as con:
        for judge, family in ((SXS, PAIRWISE), (YESNO, BINARY)):
            objects = audits.judge_items(con, judge)
            expected = Items.of(objects)
            reviewed = [r["judgment_id"] for r in verdicts_store.sampled_human_labels(con, judge)]
            table, verdicts = audits.item_table(con, judge, family=family, lookup=reviewed)
            assert (table.family, table.systems, table.questions) == (family, expected.systems, expected.questions)
            for column in ("a", "b", "q", "f", "share", "decided", "n_verdicts"):
                np.testing.assert_array_equal(getattr(table, column), getattr(expected, column), err_msg=column)
            holding = [k for k, it in enumerate(objects) if set(it.judgment_ids) & set(reviewed)]
            assert holding and verdicts == [{"item": k, "id": i, "judge_label": label} for k in holding
                                            for i, label in zip(objects[k].judgment_ids, objects[k].judge_labels,
                                                                strict=True)]


def test_random_queue_records_how_each_review_was_sampled(demo_workspace):
    q = _review_queue(demo_workspace, SXS, "random", rate=0.3, stratify="pair")
    assert q["rows"] and q["drawn"] == q["total"]
    with store.connect(demo_workspace) as con:
        rows = verdicts_store.sampled_human_labels(con, SXS)
    assert len(rows) == len(q["rows"])
    assert {r["queue"] for r in rows} == {"random"}
    assert all(r["stratum"].startswith("pair:") and 0 < r["inclusion_prob"] <= 1 for r in rows)
    # Reviewed items leave the queue; the rest of the draw stays in the same order.
    again = audits.queue(demo_workspace, SXS, "random", rate=0.3, stratify="pair")
    assert again["total"] == 0 and again["done"] == q["drawn"]


def test_active_queue_favours_items_the_judge_is_unsure_of(demo_workspace):
    with store.connect(demo_workspace) as con:
        items = audits.judge_items(con, SXS)
        probs = audits.inclusion_probabilities(con, SXS, items, "active", 0.2)
    split = [p for it, p in zip(items, probs, strict=False) if it.f == 0.5]
    sure = [p for it, p in zip(items, probs, strict=False) if it.f in (0.0, 1.0)]
    assert split and sure and sum(split) / len(split) > 1.5 * sum(sure) / len(sure)
    assert all(p > 0 for p in probs)    # every item can be drawn: the estimate stays unbiased


def test_corrected_ranking_reports_audits_used_and_the_judge_beside_it(demo_workspace):
    before = corrected.corrected_ranking(demo_workspace, SXS)
    assert before["method"] == "judge-only" and before["n_usable_audits"] == 0
    assert any("no usable audits" in w for w in before["warnings"])
    # Priority-queue reviews count for overrides but not for the correction.
    first = audit.queue(demo_workspace, audit.Filters(judges=(SXS,), reviewed="all"))["rows"][0]
    audit.review(demo_workspace, "ann", first["id"], "tie")
    q = _review_queue(demo_workspace, SXS, "random", rate=0.3)
    after = corrected.corrected_ranking(demo_workspace, SXS)
    assert after["method"] == "ppi++" and after["design"] == "random"
    assert after["n_usable_audits"] == after["n_audited"] == len(q["rows"])
    assert after["n_reviews_not_used"] >= 1
    for row in after["systems"]:
        assert row["ci_low"] < row["strength"] < row["ci_high"]
        assert row["n_audited"] <= row["n"]
    # The corrected intervals include the judge's errors: wider than the judge-only ones.
    widths = [(r["ci_high"] / r["ci_low"], r["judge_only_ci_high"] / r["judge_only_ci_low"]) for r in after["systems"]]
    assert all(c > j for c, j in widths)
    assert len(after["adjacent"]) == len(after["systems"]) - 1


def test_corrected_accuracy_moves_towards_the_humans(demo_workspace):
    _review_queue(demo_workspace, YESNO, "active", rate=0.5, flip_every=2)
    result = corrected.corrected_accuracy(demo_workspace, YESNO)
    assert result["design"] == "active" and result["n_usable_audits"] > 0
    for row in result["systems"]:
        assert 0 <= row["ci_low"] <= row["ci_high"] <= 1
        assert {"judge_only", "n", "n_audited", "estimate"} <= set(row)


def test_cli_rank_and_accuracy_corrected_json(demo_workspace):
    _review_queue(demo_workspace, SXS, "random", rate=0.3)
    out = runner.invoke(app, ["rank", "--workspace", str(demo_workspace), "--judge", SXS, "--corrected", "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert {"system", "strength", "ci_low", "ci_high", "n", "n_audited", "judge_only_strength"} <= set(data["systems"][0])
    out = runner.invoke(app, ["accuracy", "--workspace", str(demo_workspace), "--judge", YESNO, "--json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["systems"][0]["n"] > 0
    out = runner.invoke(app, ["accuracy", "--workspace", str(demo_workspace), "--judge", YESNO, "--corrected"])
    assert out.exit_code == 0 and "no usable audits" in out.output
    bad = runner.invoke(app, ["rank", "--workspace", str(demo_workspace), "--corrected"])
    assert bad.exit_code == 2 and "--judge" in bad.output


def _verdict_rows(ws, judge):
    with store.connect(ws) as con:
        return [r for r in verdicts_store.effective_verdicts(con, judge=judge) if r["shown_order"] == "ab"]


def test_import_reviews_adds_usable_audits(demo_workspace, tmp_path):
    rows = _verdict_rows(demo_workspace, SXS)[:12]
    path = tmp_path / "reviews.jsonl"
    with path.open("w") as fh:
        for k, r in enumerate(rows):
            # Half the rows name the pair reversed: the label is then given for that order.
            a, b, label = r["system_a"], r["system_b"], "A"
            if k % 2:
                a, b, label = b, a, "B"
            fh.write(json.dumps({"judge": SXS, "question_id": r["question_id"], "system_a": a, "system_b": b,
                                 "label": label, "annotator": "ext", "inclusion_probability": 0.1}) + "\n")
    out = runner.invoke(app, ["import-reviews", str(path), "--workspace", str(demo_workspace)])
    assert out.exit_code == 0, out.output
    with store.connect(demo_workspace) as con:
        got = verdicts_store.sampled_human_labels(con, SXS)
    assert len(got) == 12 and {g["queue"] for g in got} == {"import"}
    assert {g["label"] for g in got} == {"A"}   # reversed rows were swapped back to system terms
    result = corrected.corrected_ranking(demo_workspace, SXS)
    assert result["design"] == "import" and result["n_usable_audits"] == 12


@pytest.mark.parametrize("bad, message", [
    ({"label": "maybe"}, "label"),
    ({"question_id": "nope"}, "no verdict"),
    ({"inclusion_probability": 1.5}, "outside [1e-06, 1]"),
])
def test_import_reviews_refuses_bad_rows_and_writes_nothing(demo_workspace, tmp_path, bad, message):
    rows = _verdict_rows(demo_workspace, SXS)[:3]
    path = tmp_path / "reviews.jsonl"
    with path.open("w") as fh:
        for k, r in enumerate(rows):
            rec = {"judge": SXS, "question_id": r["question_id"], "system_a": r["system_a"],
                   "system_b": r["system_b"], "label": "A", "annotator": "ext"}
            if k == 2:
                rec.update(bad)
            fh.write(json.dumps(rec) + "\n")
    out = runner.invoke(app, ["import-reviews", str(path), "--workspace", str(demo_workspace)])
    assert out.exit_code == 2 and message in out.output and "reviews.jsonl:3:" in out.output
    with store.connect(demo_workspace) as con:
        assert verdicts_store.sampled_human_labels(con, SXS) == []


def override_between_top_two(ws, judge=SXS):
    """Priority-queue reviews that give every verdict between the judge's top system and the next
    one strictly below it to the latter (the demo's top two tie: they give the same answers):
    returns (top, second, {judgment_id: human label} of the reviews that changed a label)."""
    rows = sorted(corrected.corrected_ranking(ws, judge)["systems"], key=lambda r: r["judge_only_rank"])
    top = rows[0]["system"]
    second = next(r["system"] for r in rows if r["judge_only_rank"] > rows[0]["judge_only_rank"])
    with store.connect(ws) as con:
        items = [it for it in audits.judge_items(con, judge) if {it.system_a, it.system_b} == {top, second}]
    changed = {}
    for it in items:
        label = "A" if it.system_a == second else "B"
        for jid, judge_label in zip(it.judgment_ids, it.judge_labels, strict=False):
            audit.review(ws, "ann", jid, label)
            if judge_label != label:
                changed[jid] = label
    return top, second, changed


def test_rank_flips_name_the_overrides_that_moved_them(demo_workspace):
    before = corrected.corrected_ranking(demo_workspace, SXS)
    assert before["flips"] == []        # nothing reviewed: the three rankings are the same fit
    top, second, changed = override_between_top_two(demo_workspace)
    assert changed
    after = corrected.corrected_ranking(demo_workspace, SXS)
    flip = next(f for f in after["flips"] if set(f["systems"]) == {top, second})
    assert flip["judge_only_above"] == top
    assert flip["ranks"]["overrides"][second] < flip["ranks"]["overrides"][top]
    assert "corrected" not in flip["moved_by"]       # priority-queue reviews do not correct
    movers = flip["moved_by"]["overrides"]
    assert movers and flip["change"]["overrides"] > 0
    for mv in movers:
        assert {mv["system_a"], mv["system_b"]} == {top, second}
        assert mv["overridden"] and all(changed[v["judgment_id"]] == v["human_label"] != v["judge_label"]
                                        for v in mv["overridden"])
    rows = corrected_view.ranking_section(after)["flips"]
    row = next(r for r in rows if r["systems"] in (f"{top} / {second}", f"{second} / {top}"))
    assert row["judge-only order"] == f"{top} > {second}" and row["overrides order"] == f"{second} > {top}"
    shown = row["overrides that moved it"]
    with store.connect(demo_workspace) as con:
        text = corpus_store.question_texts(con, [movers[0]["question_id"]])[movers[0]["question_id"]][0]
    assert " ".join(text.split())[:40] in shown                 # the question as a person reads it,
    assert all(mv["question_id"] not in shown for mv in movers)  # never its id (issue 30: no hashes)


def test_accuracy_flips_name_the_audits_and_overrides_that_moved_them(demo_workspace):
    result = corrected.corrected_accuracy(demo_workspace, YESNO)
    assert result["flips"] == []
    by_judge = sorted(result["systems"], key=lambda r: -r["judge_only"])
    top = by_judge[0]["system"]
    second = next(r["system"] for r in by_judge if r["judge_only"] < by_judge[0]["judge_only"])
    # Override every "yes" of the judge's best system to "no": it falls below the second.
    with store.connect(demo_workspace) as con:
        items = [it for it in audits.judge_items(con, YESNO) if it.system_a == top]
    for it in items:
        for jid, label in zip(it.judgment_ids, it.judge_labels, strict=False):
            if label == "yes":
                audit.review(demo_workspace, "ann", jid, "no")
    after = corrected.corrected_accuracy(demo_workspace, YESNO)
    flip = next(f for f in after["flips"] if set(f["systems"]) == {top, second})
    assert flip["ranks"]["overrides"][second] < flip["ranks"]["overrides"][top]
    movers = flip["moved_by"]["overrides"]
    assert movers and all(mv["system_a"] == top and mv["judge_outcome"] == 1.0 and mv["human_outcome"] == 0.0
                          for mv in movers)
