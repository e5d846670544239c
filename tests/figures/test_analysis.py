"""Statistics read from a workspace: human overrides, undo, reference flags, several annotators."""

import numpy as np
import pytest

from lsqa import audit, store
from lsqa.figures import analysis
from lsqa.store import reviews, verdicts
from lsqa.study.imports import import_judgments


def _pairwise_verdict(ws, judge="lexical-sxs-rag4k", label="A"):
    with store.connect(ws) as con:
        return con.execute("SELECT id, question_id, system_a, system_b, label FROM judgments"
                           " WHERE judge = ? AND status = 'ok' AND label = ? ORDER BY id LIMIT 1",
                           [judge, label]).fetchone()


def _winner_counts(rows):
    out = {}
    for r in rows:
        out[r["winner"]] = out.get(r["winner"], 0) + 1
    return out


def test_override_counts_only_with_the_switch_and_undo_withdraws_it(demo_workspace):
    jid, qid, a, b, label = _pairwise_verdict(demo_workspace)
    before = _winner_counts(analysis.comparison_rows(demo_workspace, "lexical-sxs-rag4k"))
    with store.write(demo_workspace) as con:
        rid = reviews.add_review(con, annotator="ann", judgment_id=jid, action="override", label="B")
    after_judge = _winner_counts(analysis.comparison_rows(demo_workspace, "lexical-sxs-rag4k"))
    after_human = _winner_counts(analysis.comparison_rows(demo_workspace, "lexical-sxs-rag4k", use_overrides=True))
    assert after_judge == before
    assert after_human["A"] == before["A"] - 1 and after_human["B"] == before.get("B", 0) + 1
    with store.write(demo_workspace) as con:
        reviews.add_review(con, annotator="ann", judgment_id=jid, action="undo", undoes=rid)
    assert _winner_counts(analysis.comparison_rows(demo_workspace, "lexical-sxs-rag4k", use_overrides=True)) == before
    with store.connect(demo_workspace) as con:
        assert len(reviews.reviews(con, jid)) == 2  # append-only: the override is still there, withdrawn


def test_flag_removes_question_from_ranking_until_retracted(demo_workspace):
    _, qid, *_ = _pairwise_verdict(demo_workspace)
    n_all = len(analysis.comparison_rows(demo_workspace, "lexical-sxs-rag4k", exclude_flagged=True))
    with store.write(demo_workspace) as con:
        reviews.add_flag(con, annotator="ann", question_id=qid, reference="1", reason="wrong", note="summary error")
    rows = analysis.comparison_rows(demo_workspace, "lexical-sxs-rag4k", exclude_flagged=True)
    assert qid not in {r["question_id"] for r in rows} and len(rows) < n_all
    assert qid in {r["question_id"] for r in analysis.comparison_rows(demo_workspace, "lexical-sxs-rag4k")}
    with store.write(demo_workspace) as con:
        reviews.add_flag(con, annotator="ann", question_id=qid, reference="1", reason="retract")
        assert verdicts.flagged_question_ids(con) == set()
    assert len(analysis.comparison_rows(demo_workspace, "lexical-sxs-rag4k", exclude_flagged=True)) == n_all


def _alpha_two_coders(a, b):
    """Krippendorff's α, nominal, two coders, no missing values, written out from the definition."""
    values = a + b
    n = len(values)
    d_o = sum(x != y for x, y in zip(a, b, strict=False)) * 2 / n
    d_e = sum(x != y for i, x in enumerate(values) for j, y in enumerate(values) if i != j) / (n * (n - 1))
    return 1 - d_o / d_e


def test_human_raters_agreement_and_annotator_agreement(demo_workspace):
    with store.connect(demo_workspace) as con:
        ids = [r[0] for r in con.execute("SELECT id FROM judgments WHERE judge = 'lexical-gt' AND status = 'ok' AND reference = '1'"
                                         " ORDER BY id LIMIT 10").fetchall()]
    alice = ["yes", "yes", "no", "no", "yes", "no", "yes", "yes", "no", "yes"]
    bob = ["yes", "no", "no", "no", "yes", "no", "yes", "no", "no", "yes"]
    with store.write(demo_workspace) as con:
        for jid, la, lb in zip(ids, alice, bob, strict=False):
            reviews.add_review(con, annotator="alice", judgment_id=jid, action="override", label=la)
            reviews.add_review(con, annotator="bob", judgment_id=jid, action="override", label=lb)
    between = analysis.annotator_agreement(demo_workspace)
    assert between["annotators"] == ["alice", "bob"] and between["n_items"] == between["n_complete"] == 10
    assert between["krippendorff_alpha"] == pytest.approx(_alpha_two_coders(alice, bob), abs=1e-12)
    pair = analysis.agreement(demo_workspace, "human:alice", "human:bob", bootstrap=0)
    assert pair["n"] == 10 and pair["agreement"] == pytest.approx(0.8)
    # Reviews of one judge's verdicts are that judge's human reference; other judges' are not mixed in.
    assert analysis.agreement(demo_workspace, "lexical-gt", "human:alice@lexical-gt", bootstrap=0)["n"] == 10
    with pytest.raises(ValueError, match="not found"):
        analysis.agreement(demo_workspace, "lexical-autoais-fc", "human@lexical-autoais-fc", bootstrap=0)


def test_a_human_label_rescues_a_verdict_the_judge_failed_to_give(demo_workspace):
    with store.write(demo_workspace) as con:
        jid = con.execute("SELECT id FROM judgments WHERE judge = 'lexical-sxs-rag4k' ORDER BY id LIMIT 1").fetchone()[0]
        con.execute("UPDATE judgments SET status = 'parse_error', label = NULL WHERE id = ?", [jid])  # crafted
    n = len(analysis.comparison_rows(demo_workspace, "lexical-sxs-rag4k", use_overrides=True))
    with store.write(demo_workspace) as con:
        reviews.add_review(con, annotator="ann", judgment_id=jid, action="override", label="tie")
    rows = analysis.comparison_rows(demo_workspace, "lexical-sxs-rag4k", use_overrides=True)
    assert len(rows) == n + 1 and len(analysis.comparison_rows(demo_workspace, "lexical-sxs-rag4k")) == n


def test_position_bias_and_self_preference(demo_workspace):
    ws = demo_workspace
    # Reference figures straight from the judgments table (labels are in system terms, raw_label
    # in shown positions).
    with store.connect(ws) as con:
        rows = con.execute("SELECT question_id, system_a, system_b, shown_order, label, raw_label FROM judgments"
                           " WHERE judge = 'lexical-sxs-fc' AND status = 'ok'").fetchall()
    by_order = {"ab": {}, "ba": {}}
    for q, a, b, order, label, _ in rows:
        by_order[order][(q, a, b)] = label
    both = set(by_order["ab"]) & set(by_order["ba"])
    same = sum(by_order["ab"][k] == by_order["ba"][k] for k in both)
    decisive = [r[5] for r in rows if r[5] in ("A", "B")]
    bias = analysis.position_bias(ws, "lexical-sxs-fc")
    assert len(both) > 0 and bias["n_both_orders"] == len(both) == len(by_order["ab"])  # both_orders = true
    assert bias["consistency"] == pytest.approx(same / len(both), abs=1e-12)
    assert bias["n_decisive"] == len(decisive) > 0
    assert bias["first_position_rate"] == pytest.approx(decisive.count("A") / len(decisive), abs=1e-12)
    # Crafted: one consistent decisive pair turned round in order 'ba'; consistency drops by one item.
    key = next(k for k in sorted(both) if by_order["ab"][k] == by_order["ba"][k] in ("A", "B"))
    with store.write(ws) as con:
        con.execute("UPDATE judgments SET label = ? WHERE judge = 'lexical-sxs-fc' AND question_id = ? AND system_a = ?"
                    " AND system_b = ? AND shown_order = 'ba'", [{"A": "B", "B": "A"}[by_order["ba"][key]], *key])
    changed = analysis.position_bias(ws, "lexical-sxs-fc")
    assert changed["consistency"] == pytest.approx((same - 1) / len(both), abs=1e-12)

    systems = ("extractive-fullbook", "nqa-reference-2")
    judges = ("lexical-sxs-fc", "lexical-gt-sxs")
    expected = []
    with store.connect(ws) as con:
        for judge in judges:
            verdicts = con.execute(
                "SELECT question_id, system_a, system_b, shown_order, label FROM judgments"
                " WHERE judge = ? AND status = 'ok' AND ((system_a = ? AND system_b = ?) OR (system_a = ? AND system_b = ?))"
                " ORDER BY question_id, system_a, system_b, shown_order", [judge, *systems, *reversed(systems)]).fetchall()
            first = {}
            for q, a, b, _, label in verdicts:  # one verdict per pair: order 'ab' when the judge saw both
                first.setdefault((q, a, b), {"A": a, "B": b}.get(label, label))
            winners = list(first.values())
            assert winners, judge
            expected.append([winners.count(system) / len(winners) for system in systems])
    table = analysis.self_preference(ws, judges, systems)
    assert table["judges"] == list(judges) and table["systems"] == list(systems)
    np.testing.assert_allclose(table["rates"], expected, atol=1e-12)


def test_unknown_judge_is_a_clear_error(demo_workspace):
    with pytest.raises(ValueError, match="no decided side-by-side verdicts"):
        analysis.ranking(demo_workspace, "nobody")


TOM_KITTEN = "2c5f448df18172babaac38806e1fb699a8baf65b"


def test_a_person_who_confirms_every_verdict_of_a_judge_agrees_with_it_fully(demo_workspace):
    """A ground-truth rater with both references says yes if either does; the human rater must be read
    the same way. Before, the latest of the two reviews stood for the answer, so confirming a 'yes'
    (reference 1) and then a 'no' (reference 2) counted as disagreeing with the judge's 'yes'."""
    with store.connect(demo_workspace) as con:
        rows = con.execute("SELECT id, label FROM judgments WHERE judge = 'lexical-gt' AND status = 'ok'"
                           " ORDER BY question_id, system_a, reference").fetchall()
        mixed = con.execute("""SELECT count(*) FROM (SELECT question_id, system_a FROM judgments
                               WHERE judge = 'lexical-gt' GROUP BY ALL HAVING count(DISTINCT label) = 2)""").fetchone()[0]
    assert mixed > 0  # the demo has answers one reference accepts and the other rejects
    for jid, _ in sorted(rows, key=lambda r: r[1] == "no"):  # every 'no' confirmed after the 'yes'
        audit.confirm(demo_workspace, "alice", jid)
    for rater in ("human@lexical-gt", "human:alice@lexical-gt"):
        result = analysis.agreement(demo_workspace, "lexical-gt", rater, bootstrap=0)
        assert result["agreement"] == 1.0, rater
    # Per verdict (issue 30): alice's label on each verdict is the judge's label on it.
    assert analysis.rater_labels(demo_workspace, "human:alice@lexical-gt") == analysis.rater_labels(
        demo_workspace, "lexical-gt", per_verdict=True)


def test_a_system_name_with_a_bar_keeps_its_verdicts_apart(demo_workspace, tmp_path):
    """Before: verdict items were 'question|system' strings split on '|', so a system named
    'rag|4k' was counted as a system 'rag' and self-preference missed its comparisons."""
    q = f"nqa:{TOM_KITTEN}"
    path = tmp_path / "bars.csv"
    path.write_text("question_id,rater,kind,system_a,system_b,label\n"
                    f"{q}:1,bar-judge,absolute,rag|4k,,yes\n"
                    f"{q}:2,bar-judge,absolute,rag|4k,,no\n"
                    f"{q}:3,bar-judge,absolute,rag|4k,,yes\n"
                    f"{q}:1,bar-judge,absolute,rag,,no\n"
                    f"{q}:1,bar-sxs,pairwise,rag|4k,rag,A\n"
                    f"{q}:2,bar-sxs,pairwise,rag|4k,rag,B\n"
                    f"{q}:3,bar-sxs,pairwise,rag|4k,rag,A\n"
                    f"{q}:1,bar-sxs-2,pairwise,rag|4k,rag,B\n"
                    f"{q}:2,bar-sxs-2,pairwise,rag|4k,rag,B\n"
                    f"{q}:3,bar-sxs-2,pairwise,rag|4k,rag,A\n")
    import_judgments(demo_workspace, path)
    acc = {r["system"]: (r["n"], r["correct"]) for r in analysis.accuracy(demo_workspace, "bar-judge")}
    assert acc == {"rag|4k": (3, 2), "rag": (1, 0)}
    pref = analysis.self_preference(demo_workspace, ("bar-sxs", "bar-sxs-2"), ("rag|4k", "rag"))
    assert pref["judges"] == ["bar-sxs", "bar-sxs-2"] and pref["systems"] == ["rag|4k", "rag"]
    assert pref["counts"] == [[2, 1], [1, 2]]  # each judge's preferences for rag|4k and rag


def test_the_agreement_overview_gives_the_figures_of_each_pair_computed_alone(demo_workspace):
    """agreement_view.agreement_overview shares the raters' labels across its pairs; every figure must
    equal the same pair computed on its own."""
    from lsqa.dashboard import agreement_view

    ws = demo_workspace
    for judge, annotators in (("lexical-sxs-fc", ("ann", "bob")), ("lexical-autoais-fc", ("ann",))):
        rows = audit.queue(ws, audit.Filters(judges=(judge,), reviewed="all"), "", page_size=12)["rows"]
        for n, v in enumerate(rows):
            for a in annotators:  # bob disagrees with the judge on every third item
                label = v["label"] if (a == "ann" or n % 3) else ("none" if v["label"] != "none" else "A")
                audit.review(ws, a, v["id"], label)
    view = agreement_view.agreement_overview(ws, bootstrap=200)
    assert view["vs_human"] and view["vs_annotator"] and view["pairs"] and view["annotator_pairs"]
    for res in view["pairs"]:
        alone = analysis.agreement(ws, res["rater_a"], res["rater_b"], bootstrap=200)
        assert (res["n"], res["agreement"], res["kappa"], res["kappa_ci"]) == \
            (alone["n"], alone["agreement"], alone["kappa"], alone["kappa_ci"])
    for res in view["vs_human"] + view["vs_annotator"]:
        who = res["rater_b"]
        alone = agreement_view.judge_vs_human(ws, res["rater_a"], annotator=who.partition(":")[2] or None, bootstrap=200)
        assert (res["n"], res["agreement"], res["kappa"]) == (alone["n"], alone["agreement"], alone["kappa"])
    bob = [r for r in view["vs_annotator"] if r["rater_a"] == "lexical-sxs-fc" and r["rater_b"].endswith("bob")]
    assert bob and bob[0]["agreement"] < 1.0


def test_each_agreement_section_alone_equals_its_part_of_the_whole_report(demo_workspace):
    """The Agreement page computes only its open tab: each section asked alone must give exactly
    that part of the full report, and nothing of the other parts."""
    from lsqa.dashboard import agreement_view

    ws = demo_workspace
    rows = audit.queue(ws, audit.Filters(judges=("lexical-sxs-fc",), reviewed="all"), "", page_size=6)["rows"]
    for n, v in enumerate(rows):
        audit.review(ws, "ann", v["id"], v["label"])
        audit.review(ws, "bob", v["id"], v["label"] if n % 2 else ("none" if v["label"] != "none" else "A"))
    whole = agreement_view.agreement_overview(ws, bootstrap=0)
    every_part = set()
    for section, parts in agreement_view.AGREEMENT_SECTIONS.items():
        alone = agreement_view.agreement_overview(ws, bootstrap=0, sections=(section,))
        assert set(alone) == {"families", "annotator_names", *parts}, section
        for part in parts:
            assert alone[part] == whole[part], (section, part)
        every_part |= set(parts)
    assert set(whole) == {"families", "annotator_names", *every_part}
    assert whole["vs_human"] and whole["annotator_pairs"] and whole["position"]
    with pytest.raises(ValueError, match="unknown agreement section.*'bias'"):
        agreement_view.agreement_overview(ws, bootstrap=0, sections=("bais",))
