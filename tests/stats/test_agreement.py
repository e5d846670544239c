"""Rater agreement (paper §5.1, Fig. 4): lsqa.stats.agreement, checked against published figures."""

from __future__ import annotations

import re

import numpy as np
import pytest

from lsqa.stats.agreement import (
    SWAP_POSITIONS,
    acceptance_table,
    agreement_mask,
    category_counts,
    cohen_kappa,
    compare_raters,
    confusion_matrix,
    fleiss_kappa,
    infer_labels,
    kappa_bootstrap_ci,
    kappa_from_confusion,
    krippendorff_alpha_nominal,
    paired_labels,
    percent_agreement,
    pivot_ratings,
    position_consistency,
    preference_table,
    self_preference,
)
from tests.support.stats_helpers import LLMBAR_JUDGES, LLMBAR_SETS, load_llmbar

# --------------------------------------------------------------------------------------------
# LLMBar: reproduce the authors' statistics.json exactly
# --------------------------------------------------------------------------------------------
#
# How the authors define each figure (princeton-nlp/LLMBar, LLMEvaluator/evaluate.py, read from the
# data layout and checked here): each item of result.json has a gold `label` (1 or 2: which output
# is better) and, in results[-1], the judge's winner for the original order ("swap = False") and
# for the swapped order ("swap = True"), the latter already mapped back to the original numbering.
#   correct_False / correct_True  = verdict == gold in that order       "k / n = {k/n*100}%"
#   correct_both                  = verdict == gold in both orders      "k / n = {k/n*100}%"
#   correct_average               = (correct_False + correct_True) / 2 / n * 100, "{...}%"
#   equal                         = same verdict in both orders (position consistency)
#   kappa_agreement               = Cohen's κ between the two orders' verdicts
#   kappa_False / kappa_True      = Cohen's κ between a verdict and gold, where the authors first
#                                   map the verdict "1" -> 1 and anything else ("2", None) -> 0 but
#                                   keep gold as 1 / 2 (so κ is over the labels {0, 1, 2}).
# Percentages are Python's repr of k / n * 100 (no rounding), and κ is a full float, so both are
# compared exactly (as strings for the "k / n = x%" figures).

FIGURES = ("correct_False", "correct_True", "correct_average", "correct_both", "equal", "kappa_agreement",
           "kappa_False", "kappa_True", "kappa_average")


def _authors_verdict_code(v):
    # evaluate.py: `int(output) if output in ("0", "1") else 0`
    return int(v) if v in ("0", "1") else 0


def _our_figure(items, figure):
    first = [it["results"][-1]["swap = False"]["winner"] for it in items]
    second = [it["results"][-1]["swap = True"]["winner"] for it in items]
    gold = [str(it["label"]) for it in items]
    pc = position_consistency(first, second, reference=gold)  # swap=None: already mapped back
    n = pc.n
    if figure == "correct_False":
        return f"{pc.correct_first} / {n} = {pc.accuracy_first * 100}%"
    if figure == "correct_True":
        return f"{pc.correct_second} / {n} = {pc.accuracy_second * 100}%"
    if figure == "correct_both":
        return f"{pc.correct_both} / {n} = {pc.accuracy_both * 100}%"
    if figure == "correct_average":
        return f"{pc.accuracy_average * 100}%"
    if figure == "equal":
        return f"{pc.consistent} / {n} = {pc.consistency * 100}%"
    if figure == "kappa_agreement":
        # Through the general κ of position_consistency; the authors' 0/1 recoding of the
        # verdicts is a relabelling, which leaves κ unchanged (checked below as well).
        assert cohen_kappa([_authors_verdict_code(v) for v in first],
                           [_authors_verdict_code(v) for v in second]) == pc.kappa
        return pc.kappa
    gold_int = [it["label"] for it in items]
    k_false = cohen_kappa([_authors_verdict_code(v) for v in first], gold_int)
    k_true = cohen_kappa([_authors_verdict_code(v) for v in second], gold_int)
    return {"kappa_False": k_false, "kappa_True": k_true, "kappa_average": (k_false + k_true) / 2}[figure]


@pytest.mark.parametrize("figure", FIGURES)
@pytest.mark.parametrize("judge", LLMBAR_JUDGES)
@pytest.mark.parametrize("dataset", LLMBAR_SETS)
def test_llmbar_statistics_reproduced_exactly(shared_data, dataset, judge, figure):
    items, published = load_llmbar(shared_data, dataset, judge)
    ours = _our_figure(items, figure)
    assert ours == published[figure]  # exact: same string / same float


@pytest.mark.parametrize("judge", LLMBAR_JUDGES)
@pytest.mark.parametrize("dataset", LLMBAR_SETS)
def test_llmbar_counts_parse_back(shared_data, dataset, judge):
    # The published "k / n = x%" strings are k / n * 100 with no rounding.
    items, published = load_llmbar(shared_data, dataset, judge)
    k, n, pct = re.fullmatch(r"(\d+) / (\d+) = (.+)%", published["equal"]).groups()
    assert int(n) == len(items) and float(pct) == int(k) / int(n) * 100


def test_llmbar_verdicts_are_already_in_original_order(shared_data):
    # In the swapped run, "Output (a)" is the original output 2, and the stored winner says "2".
    items, _ = load_llmbar(shared_data, "MT-Bench", "GPT-4")
    checked = 0
    for it in items:
        swapped = it["results"][-1]["swap = True"]
        if swapped["completion"][0] == "Output (a)":
            assert swapped["winner"] == "2"
            checked += 1
        elif swapped["completion"][0] == "Output (b)":
            assert swapped["winner"] == "1"
            checked += 1
    # Not vacuous: every one of the 200 swapped verdicts names an output and was checked.
    assert checked == len(items) == 200


# --------------------------------------------------------------------------------------------
# Cohen's κ, confusion matrix, percent agreement
# --------------------------------------------------------------------------------------------


def test_cohen_kappa_textbook_example():
    # 50 items: yes/yes 20, yes/no 5, no/yes 10, no/no 15 -> p_o = .7, p_e = .5, κ = .4
    a = ["yes"] * 25 + ["no"] * 25
    b = ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15
    assert cohen_kappa(a, b) == pytest.approx(0.4, abs=1e-12)
    assert percent_agreement(a, b) == 0.7
    conf = confusion_matrix(a, b)
    assert conf.labels == ("yes", "no")
    np.testing.assert_array_equal(conf.matrix, [[20, 5], [10, 15]])
    assert conf.per_label() == {"yes": (25, 30), "no": (25, 20)}


@pytest.mark.slow
def test_kappa_matches_sklearn_on_random_multiclass_labels():
    sk = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(0)
    labels = ["A", "B", "tie", "none"]
    for _ in range(20):
        a = rng.choice(labels, 200, p=[0.4, 0.3, 0.2, 0.1]).tolist()
        b = [x if rng.random() < 0.6 else rng.choice(labels) for x in a]
        assert cohen_kappa(a, b) == pytest.approx(sk.cohen_kappa_score(a, b), abs=1e-12)


def test_confusion_rows_are_rater_a_and_label_order_can_be_given():
    a, b = ["A", "A", "B", "none"], ["B", "A", "B", "tie"]
    conf = confusion_matrix(a, b)
    assert conf.labels == ("A", "B", "tie", "none")
    assert conf.matrix[0, 1] == 1 and conf.matrix[3, 2] == 1  # A said A / B said B; A none / B tie
    given = confusion_matrix(a, b, labels=["none", "tie", "B", "A"])
    np.testing.assert_array_equal(given.matrix, conf.matrix[::-1, ::-1])
    with pytest.raises(ValueError, match="not in the label list"):
        confusion_matrix(a, b, labels=["A", "B"])


@pytest.mark.parametrize("values, expected", [
    ([["B", "A"], ["tie"]], ["A", "B", "tie"]),
    ([["no", "yes"]], ["yes", "no"]),
    ([[2, 1, 3]], [1, 2, 3]),
    ([["2", "10", "1"]], ["1", "2", "10"]),
    ([["good", "bad", "good"]], ["good", "bad"]),
])
def test_infer_labels(values, expected):
    assert infer_labels(*values) == expected


def test_kappa_edge_cases():
    assert cohen_kappa(["A", "B", "A"], ["A", "B", "A"]) == 1.0
    assert np.isnan(cohen_kappa(["A", "A"], ["A", "A"]))  # no expected disagreement: undefined
    # Relabelling both raters consistently leaves κ unchanged.
    a, b = ["A", "B", "B", "tie", "A"], ["A", "B", "A", "tie", "B"]
    m = {"A": "x", "B": "y", "tie": "z"}
    assert cohen_kappa([m[x] for x in a], [m[x] for x in b]) == pytest.approx(cohen_kappa(a, b), abs=1e-15)
    with pytest.raises(ValueError, match="same items"):
        cohen_kappa(["A"], ["A", "B"])


def test_kappa_bootstrap_ci_is_seeded_and_matches_item_resampling():
    rng = np.random.default_rng(5)
    a = rng.choice(["A", "B", "tie"], 300).tolist()
    b = [x if rng.random() < 0.7 else rng.choice(["A", "B", "tie"]) for x in a]
    res = compare_raters(a, b, rounds=2000, seed=1)
    assert res.kappa_ci == compare_raters(a, b, rounds=2000, seed=1).kappa_ci
    assert res.kappa_ci[0] < res.kappa < res.kappa_ci[1]
    # Reference: resample items, recompute κ.
    idx = np.random.default_rng(2).integers(0, 300, size=(500, 300))
    ks = [cohen_kappa([a[i] for i in row], [b[i] for i in row], labels=["A", "B", "tie"]) for row in idx]
    lo, hi = np.quantile(ks, [0.025, 0.975])
    assert res.kappa_ci == pytest.approx((lo, hi), abs=0.02)


def test_kappa_from_confusion_and_ci_degenerate():
    assert kappa_from_confusion(np.array([[5, 0], [0, 5]])) == 1.0
    # One label throughout: κ is undefined in every round, and so is its CI.
    assert all(np.isnan(kappa_bootstrap_ci(np.array([[4, 0], [0, 0]]), rounds=50)))
    low, high = kappa_bootstrap_ci(np.array([[40, 5], [5, 50]]), rounds=500, seed=0)
    assert low < kappa_from_confusion(np.array([[40, 5], [5, 50]])) < high


def test_paper_fig4_style_agreement_rate():
    # Fig. 4a reports 356 agreements out of 500 trials = 71.2%.
    a = ["A"] * 356 + ["A"] * 144
    b = ["A"] * 356 + ["B"] * 144
    assert percent_agreement(a, b) == 0.712


# --------------------------------------------------------------------------------------------
# Position consistency and self-preference (§5.1)
# --------------------------------------------------------------------------------------------


def test_position_consistency_with_raw_positions():
    first = ["A", "A", "B", "tie", "A"]
    # Swapped presentation: a consistent judge names the other position for the same answer.
    second_raw = ["B", "A", "A", "tie", "A"]
    pc = position_consistency(first, second_raw, swap=SWAP_POSITIONS, reference=["A", "B", "B", "tie", "A"])
    assert pc.consistent == 3 and pc.consistency == 0.6
    # Mapped back, the second order reads A, B, B, tie, B.
    assert (pc.correct_first, pc.correct_second, pc.correct_both) == (4, 4, 3)
    assert pc.accuracy_average == 0.8


def test_missing_verdicts_are_a_label_of_their_own():
    first, second = ["1", None, "2", None], ["1", None, "1", "2"]
    pc = position_consistency(first, second)
    assert pc.consistent == 2  # "1"/"1" and None/None, as LLMBar's `equal` counts them
    conf = confusion_matrix(first, second)
    assert conf.labels == ("1", "2", None) and conf.matrix[2, 2] == 1 and conf.n == 4


def test_self_preference_two_by_two():
    # Judge G prefers its own family's answers (source "gemini") 60% of the time, judge T does so
    # 40%; each judge prefers "gpt4" 30% / 50%; the rest are ties.
    judges = ["G"] * 10 + ["T"] * 10
    choices = ["gemini"] * 6 + ["gpt4"] * 3 + ["tie"] + ["gemini"] * 4 + ["gpt4"] * 5 + ["tie"]
    table = preference_table(judges, choices, sources=["gemini", "gpt4"])
    np.testing.assert_allclose(table.rates, [[0.6, 0.3], [0.4, 0.5]])
    bias = self_preference(table, {"G": "gemini", "T": "gpt4"})
    assert bias == pytest.approx({"G": 0.2, "T": 0.2})


def test_self_preference_from_absolute_verdicts():
    judges = ["G"] * 8 + ["T"] * 8
    sources = (["gemini"] * 4 + ["gpt4"] * 4) * 2
    accepted = [1, 1, 1, 1, 1, 1, 0, 0] + [1, 1, 0, 0, 1, 1, 1, 1]
    table = acceptance_table(judges, sources, accepted)
    np.testing.assert_allclose(table.rates, [[1.0, 0.5], [0.5, 1.0]])
    assert self_preference(table, {"G": "gemini", "T": "gpt4"}) == {"G": 0.5, "T": 0.5}


# --------------------------------------------------------------------------------------------
# Several raters
# --------------------------------------------------------------------------------------------

FLEISS_EXAMPLE = [  # Fleiss (1971) style worked example: 10 items, 14 raters, 5 categories; κ = 0.210
    [0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7],
]


def test_fleiss_kappa_worked_example():
    assert round(fleiss_kappa(FLEISS_EXAMPLE), 3) == 0.210


def test_fleiss_kappa_two_raters_is_scotts_pi():
    rng = np.random.default_rng(3)
    a = rng.choice(["A", "B", "tie"], 100).tolist()
    b = [x if rng.random() < 0.5 else rng.choice(["A", "B", "tie"]) for x in a]
    labels, table = category_counts([a, b])
    p_o = percent_agreement(a, b)
    shares = np.array([(a.count(x) + b.count(x)) / 200 for x in labels])
    scott = (p_o - np.sum(shares**2)) / (1 - np.sum(shares**2))
    assert fleiss_kappa(table) == pytest.approx(scott, abs=1e-12)
    with pytest.raises(ValueError, match="same number"):
        fleiss_kappa([[2, 0], [1, 0]])


def test_krippendorff_alpha_nominal_worked_example():
    # Krippendorff (2011), "Computing Krippendorff's alpha-reliability": 4 coders, 12 units with
    # missing values; nominal α = 0.743.
    N = None
    data = [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, N, N, N],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, N, 3],
        [N, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, N],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, N],
    ]
    assert round(krippendorff_alpha_nominal(data), 3) == 0.743
    assert krippendorff_alpha_nominal([["a", "b", "a"], ["a", "b", "a"]]) == 1.0


def test_long_format_helpers():
    items = ["q1", "q1", "q2", "q2", "q3"]
    raters = ["x", "y", "x", "y", "x"]
    labels = ["A", "A", "B", "tie", "A"]
    ids, ra, rb = paired_labels(items, raters, labels, "x", "y")
    assert ids == ["q1", "q2"] and ra == ["A", "B"] and rb == ["A", "tie"]
    _, _, matrix = pivot_ratings(items, raters, labels)
    assert matrix[1] == ["A", "tie", None]
    with pytest.raises(ValueError, match="more than once"):
        pivot_ratings(["q1", "q1"], ["x", "x"], ["A", "B"])
    with pytest.raises(ValueError, match="not found"):
        paired_labels(items, raters, labels, "x", "z")
    assert agreement_mask(ra, rb).tolist() == [True, False]
