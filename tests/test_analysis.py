"""Statistics read from a workspace: human overrides, undo, reference flags, several annotators."""

import pytest

from lsqa import analysis, store
from lsqa.store import reviews, verdicts


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


def test_human_raters_agreement_and_annotator_agreement(demo_workspace):
    with store.connect(demo_workspace) as con:
        ids = [r[0] for r in con.execute("SELECT id FROM judgments WHERE judge = 'lexical-gt' AND status = 'ok'"
                                         " ORDER BY id LIMIT 10").fetchall()]
    with store.write(demo_workspace) as con:
        for i, jid in enumerate(ids):
            reviews.add_review(con, annotator="alice", judgment_id=jid, action="confirm")
            if i < 8:
                reviews.add_review(con, annotator="bob", judgment_id=jid, action="confirm")
            else:
                reviews.add_review(con, annotator="bob", judgment_id=jid, action="override", label="no")
    vs_judge = analysis.agreement(demo_workspace, "lexical-gt", "human:alice", bootstrap=0)
    assert vs_judge["n"] > 0 and vs_judge["agreement"] == 1.0
    between = analysis.annotator_agreement(demo_workspace)
    assert between["annotators"] == ["alice", "bob"] and between["n_items"] == 10
    assert between["krippendorff_alpha"] is not None and between["krippendorff_alpha"] < 1


def test_position_bias_and_self_preference(demo_workspace):
    bias = analysis.position_bias(demo_workspace, "lexical-sxs-fc")
    assert bias["n_both_orders"] > 0 and 0 <= bias["consistency"] <= 1
    table = analysis.self_preference(demo_workspace, ("lexical-sxs-fc", "lexical-gt-sxs"),
                                     ("extractive-fullbook", "nqa-reference-2"))
    assert table["judges"] == ["lexical-sxs-fc", "lexical-gt-sxs"] and len(table["rates"]) == 2


def test_unknown_judge_is_a_clear_error(demo_workspace):
    with pytest.raises(ValueError, match="no decided side-by-side verdicts"):
        analysis.ranking(demo_workspace, "nobody")
