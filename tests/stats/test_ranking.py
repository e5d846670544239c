"""Bradley-Terry (paper §3.2), bootstrap CIs, accuracy CIs (§4.1) and McNemar: lsqa.stats.ranking."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize
from scipy.stats import binomtest

from lsqa.stats.ranking import (
    FALLBACK_PRIOR,
    PAPER_Z,
    accuracy_ci,
    bootstrap_bradley_terry,
    count_comparisons,
    counts_from_win_matrix,
    fit_bradley_terry,
    fit_win_matrix,
    is_strongly_connected,
    log_likelihood,
    mcnemar_test,
    unbounded_systems,
    win_probability,
    win_probability_matrix,
)
from lsqa.vocabulary import normalize_winner
from tests.support.stats_helpers import PRD_PROMPT, load_prd_human

MLE_TOL = 1e-6       # brief: agree with the textbook MLE to 1e-6
EXACT_TOL = 1e-9     # algebraic identities (symmetries, invariances)
SWAP = {"A": "B", "B": "A", "tie": "tie", "none": "none"}


# --------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------


def _counts(rows, **kw):
    return count_comparisons([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows], **kw)


def textbook_mle(W: np.ndarray) -> np.ndarray:
    """Independent reference: minimise the negative of eq. 2 with scipy (BFGS), then centre."""
    W = np.array(W, dtype=float)
    np.fill_diagonal(W, 0.0)
    m = len(W)

    def nll(beta):
        return -np.sum(W * (beta[:, None] - np.logaddexp(beta[:, None], beta[None, :])))

    def grad(beta):
        p = 1.0 / (1.0 + np.exp(beta[None, :] - beta[:, None]))   # p[i, j] = P(i beats j)
        return -(W.sum(axis=1) - ((W + W.T) * p).sum(axis=1))

    res = minimize(nll, np.zeros(m), jac=grad, method="BFGS", options=dict(gtol=1e-11, maxiter=10_000))
    return res.x - res.x.mean()


def synthetic(m=5, per_pair=40, seed=1, tie_rate=0.1):
    rng = np.random.default_rng(seed)
    s = rng.normal(0, 0.8, size=m)
    rows = []
    for i in range(m):
        for j in range(i + 1, m):
            for q in range(per_pair):
                u = rng.random()
                p = 1 / (1 + np.exp(s[j] - s[i]))
                w = "tie" if u < tie_rate else ("A" if rng.random() < p else "B")
                rows.append((f"s{i}", f"s{j}", w, f"q{q}"))
    return rows


# --------------------------------------------------------------------------------------------
# Paper arithmetic and eq. 1 / eq. 2
# --------------------------------------------------------------------------------------------


def test_paper_section_4_2_win_probability():
    # §4.2: full-context Gemini 1.5 Pro (3.4733) vs RAG-4k Gemini 1.5 Pro (0.8159): P = 0.8097.
    # The exact quotient is 0.80978; the paper shows it cut (not rounded) to four decimals.
    p = win_probability(3.4733, 0.8159)
    assert p == pytest.approx(0.8097, abs=1e-4) and int(p * 10_000) / 10_000 == 0.8097
    assert round(100 * p) == 81  # "or in 81% of cases"
    P = win_probability_matrix(np.log([3.4733, 0.8159]))
    assert P[0, 1] == pytest.approx(p, rel=1e-14) and P[0, 1] + P[1, 0] == pytest.approx(1.0, abs=1e-15)


def test_win_probability_matrix_is_overflow_safe():
    P = win_probability_matrix(np.array([800.0, -800.0, 0.0]))
    assert np.all(np.isfinite(P)) and P[0, 1] == 1.0 and P[1, 0] == 0.0 and P[2, 2] == 0.5


@pytest.mark.parametrize("raw, norm", [("A", "A"), ("a", "A"), (" b ", "B"), ("TIE", "tie"), ("None", "none")])
def test_normalize_winner(raw, norm):
    assert normalize_winner(raw) == norm


def test_normalize_winner_rejects_unknown():
    with pytest.raises(ValueError, match="unknown winner"):
        normalize_winner("C")


def test_prd_score_coding_matches_the_prompt(shared_data):
    # The PRD README does not spell out `score`; the three-class prompt it was collected with does.
    prompts = [json.loads(x) for x in (shared_data / PRD_PROMPT).read_text().splitlines() if x.strip()]
    for p in prompts:
        assert ("outputting the number 1 or 2 respectively, or choose 3 if the two assistants are equivalent"
                in p["defaults"]["prompt"])
        assert p["prompt_template"].index("Assistant 1's Answer") < p["prompt_template"].index("Assistant 2's Answer")


def test_prd_vicuna80_human_matches_textbook_mle(shared_data):
    rows = load_prd_human(shared_data)
    assert len(rows) == 7040  # data README: 7,040 human pairwise ratings
    data = count_comparisons([r["system_a"] for r in rows], [r["system_b"] for r in rows],
                             [r["winner"] for r in rows])
    W = data.win_matrix()
    assert is_strongly_connected(W)
    fit = fit_bradley_terry(data)
    assert fit.prior == 0.0 and fit.converged
    ref = textbook_mle(W)
    np.testing.assert_allclose(fit.beta, ref, atol=MLE_TOL, rtol=0)
    # eq. 2 at our estimate is the maximum: not below the reference's value.
    assert log_likelihood(W, fit.strength) >= log_likelihood(W, np.exp(ref)) - 1e-9
    # Score equations of the MLE: observed wins = expected wins, per system.
    N = W + W.T
    np.testing.assert_allclose(W.sum(axis=1), (N * fit.win_probability).sum(axis=1), atol=1e-7)
    assert fit.n_comparisons == 7040 and fit.n_excluded == 0
    assert fit.systems[int(np.argmin(fit.rank))] in ("gpt4", "claude")


def test_prd_cross_check_with_choix(shared_data):
    import choix  # in requirements.txt (tests): a missing choix is a broken install, not a skip

    rows = load_prd_human(shared_data)
    decisive = [r for r in rows if r["winner"] != "tie"]
    data = count_comparisons([r["system_a"] for r in decisive], [r["system_b"] for r in decisive],
                             [r["winner"] for r in decisive])
    idx = {s: k for k, s in enumerate(data.systems)}
    pairs = [(idx[r["system_a"]], idx[r["system_b"]]) if r["winner"] == "A"
             else (idx[r["system_b"]], idx[r["system_a"]]) for r in decisive]
    ref = choix.ilsr_pairwise(len(idx), pairs, alpha=0.0, tol=1e-12)
    np.testing.assert_allclose(fit_bradley_terry(data).beta, ref - ref.mean(), atol=1e-5)


def test_fit_win_matrix_matches_textbook_on_fractional_W():
    W = np.array([[0, 3, 2.5, 7], [1, 0, 4, 2.5], [2.5, 1, 0, 3], [1, 0.5, 2, 0]])
    np.testing.assert_allclose(fit_win_matrix(W).beta, textbook_mle(W), atol=MLE_TOL)


def test_ties_count_half_by_default():
    with_ties = _counts([("x", "y", "tie"), ("x", "y", "A"), ("y", "x", "A"), ("x", "y", "tie")])
    W = with_ties.win_matrix()
    assert W[0, 1] == 2.0 and W[1, 0] == 2.0
    fit = fit_bradley_terry(with_ties)
    assert abs(fit.beta[0] - fit.beta[1]) < EXACT_TOL


def test_none_is_excluded_and_counted():
    data = _counts([("x", "y", "A"), ("x", "y", "none"), ("y", "x", "A"), ("x", "y", "NONE")])
    assert data.n_excluded == 2 and data.n_comparisons == 2
    fit = fit_bradley_terry(data)
    assert fit.n_excluded == 2 and fit.n_comparisons == 2


def test_self_comparison_is_rejected():
    with pytest.raises(ValueError, match="against itself"):
        _counts([("x", "x", "A")])


def test_twenty_systems_match_the_textbook_mle():
    # Speed (about a millisecond per fit) is measured by bench/bench_ranking.py, not asserted here.
    rng = np.random.default_rng(0)
    m = 20
    i, j = np.triu_indices(m, 1)
    s = rng.normal(size=m)
    wins = rng.binomial(50, 1 / (1 + np.exp(s[j] - s[i])))
    W = np.zeros((m, m))
    W[i, j], W[j, i] = wins, 50 - wins
    data = counts_from_win_matrix(W)
    np.testing.assert_allclose(fit_bradley_terry(data).beta, textbook_mle(W), atol=MLE_TOL)


# --------------------------------------------------------------------------------------------
# Davidson (1970) ties
# --------------------------------------------------------------------------------------------


def test_davidson_matches_direct_likelihood():
    rows = synthetic(m=4, per_pair=60, seed=3, tie_rate=0.25)
    data = _counts(rows)
    fit = fit_bradley_terry(data, tie_model="davidson")
    m = len(data.systems)

    def nll(x):  # Davidson in the textbook π form
        pi, nu = np.exp(x[:m]), np.exp(x[m])
        total = 0.0
        for (i, j), (wi, wj, t) in zip(data.pairs, data.counts, strict=False):
            denom = pi[i] + pi[j] + nu * np.sqrt(pi[i] * pi[j])
            tie = nu * np.sqrt(pi[i] * pi[j])
            total -= wi * np.log(pi[i] / denom) + wj * np.log(pi[j] / denom) + t * np.log(tie / denom)
        return total + (x[:m].sum()) ** 2  # pins the shift

    res = minimize(nll, np.zeros(m + 1), method="BFGS", options=dict(gtol=1e-10))
    ref = res.x[:m] - res.x[:m].mean()
    np.testing.assert_allclose(fit.beta, ref, atol=1e-5)
    assert fit.tie_param == pytest.approx(np.exp(res.x[m]), rel=1e-5)


def test_davidson_without_ties_is_plain_bt():
    rows = [r for r in synthetic(m=4, per_pair=30, seed=4, tie_rate=0.0)]
    data = _counts(rows)
    dav, bt = fit_bradley_terry(data, tie_model="davidson"), fit_bradley_terry(data)
    # With no ties the MLE of ν is 0 (a boundary): Davidson is then plain Bradley-Terry.
    assert np.all(np.isfinite(dav.beta)) and dav.tie_param == 0.0
    np.testing.assert_allclose(dav.beta, bt.beta, atol=1e-8)


# --------------------------------------------------------------------------------------------
# Properties
# --------------------------------------------------------------------------------------------

systems_st = st.sampled_from(["s0", "s1", "s2", "s3"])
row_st = st.tuples(systems_st, systems_st, st.sampled_from(["A", "B", "tie", "none", "a", "b"])).filter(
    lambda r: r[0] != r[1]
)
rows_st = st.lists(row_st, min_size=1, max_size=40)
# database=None: no .hypothesis/ example store written into the repo by these tests.
PROPERTY = settings(max_examples=40, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(rows=rows_st, data=st.data())
def test_row_order_does_not_matter(rows, data):
    perm = data.draw(st.permutations(rows))
    systems = sorted({s for r in rows for s in r[:2]})
    a = fit_bradley_terry(_counts(rows, systems=systems))
    b = fit_bradley_terry(_counts(perm, systems=systems))
    np.testing.assert_allclose(a.beta, b.beta, atol=EXACT_TOL)


@pytest.mark.slow
@PROPERTY
@given(rows=rows_st)
def test_swapping_a_and_b_negates_beta(rows):
    systems = sorted({s for r in rows for s in r[:2]})
    fit = fit_bradley_terry(_counts(rows, systems=systems))
    flipped = fit_bradley_terry(_counts([(x, y, SWAP[normalize_winner(w)]) for x, y, w in rows], systems=systems))
    np.testing.assert_allclose(flipped.beta, -fit.beta, atol=1e-8)
    # Swapping the presentation (which answer was shown as A) changes nothing.
    shown = fit_bradley_terry(_counts([(y, x, SWAP[normalize_winner(w)]) for x, y, w in rows], systems=systems))
    np.testing.assert_allclose(shown.beta, fit.beta, atol=1e-8)


@PROPERTY
@given(rows=rows_st)
def test_output_is_always_finite(rows):
    data = _counts(rows)
    if data.n_comparisons == 0:
        return
    fit = fit_bradley_terry(data)
    assert np.all(np.isfinite(fit.beta)) and np.all(np.isfinite(fit.win_probability))
    ci = bootstrap_bradley_terry(data, rounds=50, seed=1)
    assert np.all(np.isfinite(ci.beta_low)) and np.all(np.isfinite(ci.beta_high))


@PROPERTY
@given(rows=rows_st, anchor=systems_st)
def test_anchor_beta_is_exactly_zero(rows, anchor):
    data = _counts(rows)
    assume(anchor in data.systems and data.n_comparisons > 0)
    fit = fit_bradley_terry(data, anchor=anchor)
    assert fit.beta[fit.index(anchor)] == 0.0 and fit.strength[fit.index(anchor)] == 1.0
    free = fit_bradley_terry(data)
    np.testing.assert_allclose(fit.beta, free.beta - free.beta[free.index(anchor)], atol=EXACT_TOL)
    ci = bootstrap_bradley_terry(data, rounds=30, seed=0, anchor=anchor)
    k = fit.index(anchor)
    assert ci.beta_low[k] == 0.0 and ci.beta_high[k] == 0.0


@pytest.mark.slow
@settings(max_examples=15, deadline=None, database=None)
@given(seed=st.integers(0, 10_000))
def test_duplicating_comparisons_keeps_beta_and_narrows_ci(seed):
    rows = synthetic(m=4, per_pair=12, seed=seed, tie_rate=0.1)
    data = _counts(rows)
    W = data.win_matrix()
    # Away from separation: a system with almost no wins (or losses) makes many bootstrap samples
    # fall back to the prior, and its interval need not shrink (seeds 875, 1421, 5292, 6559, 9849
    # failed before). With this filter the property holds for every seed in 0..10000 (checked).
    assume(is_strongly_connected(W) and min(W.sum(axis=0).min(), W.sum(axis=1).min()) >= 3)
    twice = _counts(rows + rows)
    a, b = fit_bradley_terry(data), fit_bradley_terry(twice)
    np.testing.assert_allclose(a.beta, b.beta, atol=EXACT_TOL)
    ca = bootstrap_bradley_terry(data, rounds=300, seed=seed)
    cb = bootstrap_bradley_terry(twice, rounds=300, seed=seed)
    wa, wb = ca.beta_high - ca.beta_low, cb.beta_high - cb.beta_low
    assert np.all(wb < wa)
    assert np.mean(wb) / np.mean(wa) < 0.85  # twice the data: about 1/sqrt(2) = 0.71 as wide (max 0.77 seen)


def test_strong_connectivity_of_a_stack_is_each_graphs_own_by_scipy():
    """``is_strongly_connected`` on a stack of win matrices (a bootstrap's rounds) answers each as
    scipy's strongly connected components do, on graphs from empty to full, one to forty systems,
    including long cycles (the most breadth-first levels) and a stack of one."""
    from scipy import sparse
    from scipy.sparse.csgraph import connected_components

    def scipy_says(W):
        return W.shape[0] <= 1 or connected_components(sparse.csr_matrix(W > 0), directed=True,
                                                        connection="strong")[0] == 1

    rng = np.random.default_rng(11)
    for m in (1, 2, 3, 5, 8, 40):
        for p in (0.0, 0.05, 0.2, 0.5, 1.0):
            stack = (rng.random((60, m, m)) < p) * rng.integers(1, 4, (60, m, m)) * 0.5
            got = is_strongly_connected(stack)
            assert got.shape == (60,) and got.tolist() == [scipy_says(W) for W in stack], (m, p)
            assert is_strongly_connected(stack[:1]).tolist() == [is_strongly_connected(stack[0])]
    cycle = np.roll(np.eye(300), 1, axis=1)  # 0 → 1 → … → 299 → 0: 299 levels each way
    assert is_strongly_connected(cycle) and not is_strongly_connected(cycle[:, ::-1][::-1] * np.tri(300, k=-1))
    assert is_strongly_connected(np.stack([cycle, cycle.T, np.triu(cycle)])).tolist() == [True, True, False]


def test_never_losing_system_gets_finite_top_rank():
    rows = [("champ", o, "A") for o in ("x", "y", "z") for _ in range(10)]
    rows += [("x", "y", "A"), ("y", "z", "A"), ("z", "x", "A"), ("y", "x", "tie")] * 5
    data = _counts(rows)
    assert not is_strongly_connected(data.win_matrix())
    fit = fit_bradley_terry(data)
    assert fit.prior == FALLBACK_PRIOR
    assert np.all(np.isfinite(fit.beta)) and fit.rank[fit.index("champ")] == 1
    ci = bootstrap_bradley_terry(data, rounds=200, seed=0)
    assert np.all(np.isfinite(ci.samples))
    with pytest.raises(ValueError, match="does not exist"):
        fit_bradley_terry(data, prior=0)


def test_never_winning_and_disconnected_systems_are_finite():
    rows = [("a", "b", "A"), ("b", "a", "A"), ("c", "d", "B"), ("d", "c", "tie"), ("e", "a", "B")]
    fit = fit_bradley_terry(_counts(rows))
    assert np.all(np.isfinite(fit.beta)) and fit.rank[fit.index("e")] == 5


def test_explicit_prior_shrinks_towards_equal_strengths():
    data = _counts(synthetic(m=4, per_pair=20, seed=5))
    mle, shrunk = fit_bradley_terry(data), fit_bradley_terry(data, prior=5.0)
    assert np.abs(shrunk.beta).max() < np.abs(mle.beta).max()


# --------------------------------------------------------------------------------------------
# Bootstrap
# --------------------------------------------------------------------------------------------


def test_bootstrap_is_seeded_and_reproducible():
    data = _counts(synthetic(m=5, per_pair=30, seed=7), question_id=None)
    a = bootstrap_bradley_terry(data, rounds=200, seed=11)
    b = bootstrap_bradley_terry(data, rounds=200, seed=11)
    c = bootstrap_bradley_terry(data, rounds=200, seed=12)
    np.testing.assert_array_equal(a.samples, b.samples)
    assert not np.array_equal(a.samples, c.samples)
    fit = fit_bradley_terry(data)
    assert np.all((a.beta_low <= fit.beta) & (fit.beta <= a.beta_high))
    np.testing.assert_allclose(a.strength_low, np.exp(a.beta_low))


def _naive_bootstrap(rows, rounds, seed, by_question):
    """Reference: resample raw rows (or whole questions) and refit each round."""
    rng = np.random.default_rng(seed)
    systems = sorted({s for r in rows for s in r[:2]})
    out = []
    if by_question:
        groups = {}
        for r in rows:
            groups.setdefault(r[3], []).append(r)
        keys = list(groups)
    for _ in range(rounds):
        if by_question:
            pick = rng.integers(0, len(keys), len(keys))
            sample = [r for k in pick for r in groups[keys[k]]]
        else:
            sample = [rows[k] for k in rng.integers(0, len(rows), len(rows))]
        out.append(fit_bradley_terry(_counts(sample, systems=systems)).beta)
    return np.quantile(np.array(out), [0.025, 0.975], axis=0)


@pytest.mark.slow
@pytest.mark.parametrize("by_question", [False, True])
def test_multinomial_bootstrap_matches_raw_row_resampling(by_question):
    # Resampling cells multinomially is the same distribution as resampling rows: CI widths agree.
    rows = synthetic(m=4, per_pair=50, seed=21, tie_rate=0.15)
    data = _counts(rows, question_id=[r[3] for r in rows], systems=sorted({r[0] for r in rows} | {r[1] for r in rows}))
    fast = bootstrap_bradley_terry(data, rounds=1500, seed=3, by_question=by_question)
    low, high = _naive_bootstrap(rows, 400, seed=4, by_question=by_question)
    np.testing.assert_allclose(fast.beta_high - fast.beta_low, high - low, rtol=0.2)


def test_by_question_needs_question_ids():
    data = _counts(synthetic(m=3, per_pair=5))
    with pytest.raises(ValueError, match="question id"):
        bootstrap_bradley_terry(data, rounds=10, by_question=True)


def test_prd_bootstrap_by_question_is_reasonable(shared_data):
    rows = load_prd_human(shared_data)
    data = count_comparisons([r["system_a"] for r in rows], [r["system_b"] for r in rows],
                             [r["winner"] for r in rows], question_id=[r["question_id"] for r in rows])
    assert len(data.question_ids) == 80  # Vicuna80
    fit = fit_bradley_terry(data)
    ci = bootstrap_bradley_terry(data, rounds=1000, seed=0, by_question=True)
    assert np.all((ci.beta_low <= fit.beta) & (fit.beta <= ci.beta_high))
    plain = bootstrap_bradley_terry(data, rounds=1000, seed=0)
    # Ratings of one question are correlated (three raters, same answers): whole-question
    # resampling gives wider intervals on average.
    assert np.mean(ci.beta_high - ci.beta_low) > np.mean(plain.beta_high - plain.beta_low)


def test_davidson_bootstrap_runs():
    data = _counts(synthetic(m=4, per_pair=30, seed=8, tie_rate=0.2))
    ci = bootstrap_bradley_terry(data, rounds=200, seed=0, tie_model="davidson")
    fit = fit_bradley_terry(data, tie_model="davidson")
    assert np.all((ci.beta_low <= fit.beta) & (fit.beta <= ci.beta_high))


# s1 never wins: it ties with s0 (and loses once to it) and loses twice to s2, which only ties s0.
# The wins do not connect the systems; counted as half wins each way, the ties do. Davidson's
# likelihood then rises without end as ν and the spread of β grow together (s0-s2 ties certain,
# s2 beating s1 certain). This was one round of a bootstrap that raised 'Singular matrix'.
NO_DAVIDSON_MLE = [("s0", "s1", "A")] + [("s0", "s1", "tie")] * 9 + [("s0", "s2", "tie")] * 3 + [("s2", "s1", "A")] * 2


def test_davidson_without_a_finite_mle_falls_back_to_the_prior():
    data = _counts(NO_DAVIDSON_MLE, systems=["s0", "s1", "s2"])
    assert is_strongly_connected(data.win_matrix())  # the half-tie check sees nothing wrong
    fit = fit_bradley_terry(data, tie_model="davidson")
    assert fit.converged and fit.prior == FALLBACK_PRIOR
    assert np.all(np.abs(fit.beta) < 10) and 0 < fit.tie_param < 100
    assert fit.beta[fit.index("s1")] == fit.beta.min()  # the one that never won is last
    assert fit_bradley_terry(data).prior == 0.0  # the half model's MLE exists
    with pytest.raises(ValueError, match="does not exist"):
        fit_bradley_terry(data, tie_model="davidson", prior=0)
    ci = bootstrap_bradley_terry(data, rounds=200, seed=0, tie_model="davidson")
    assert ci.n_fallback_rounds == 200 and np.all(np.abs(ci.samples) < 10)
    assert "never beat" in unbounded_systems(data, "davidson")[data.systems.index("s1")]
    assert unbounded_systems(data) == {}


@PROPERTY
@given(rows=rows_st, by_question=st.booleans())
def test_davidson_output_is_always_finite_and_bounded(rows, by_question):
    # Before the fix, 691 of 3,000 random small tables like these raised LinAlgError in the
    # bootstrap, and rounds that did not raise reached |β| > 300.
    data = _counts(rows, question_id=[f"q{k % 5}" for k in range(len(rows))])
    if data.n_comparisons == 0:
        return
    fit = fit_bradley_terry(data, tie_model="davidson")
    ci = bootstrap_bradley_terry(data, rounds=50, seed=1, tie_model="davidson", by_question=by_question)
    assert fit.converged and np.all(np.abs(fit.beta) < 30)
    assert np.all(np.isfinite(ci.samples)) and np.all(np.abs(ci.samples) < 30)


# --------------------------------------------------------------------------------------------
# Accuracy (§4.1, Table 1) and McNemar
# --------------------------------------------------------------------------------------------

# Table 1: accuracy ± CI half-width (percent) for Les Misérables (1,117 questions, §2) and The
# Wild Huntress (1,000 questions).
TABLE_1 = [
    ("les-mis", 1117, 85.6, 2.1), ("les-mis", 1117, 84.6, 2.1), ("les-mis", 1117, 92.2, 1.6),
    ("huntress", 1000, 27.3, 2.8), ("huntress", 1000, 72.2, 2.8), ("huntress", 1000, 72.1, 2.8),
    ("huntress", 1000, 90.0, 1.9),
]


@pytest.mark.parametrize("book, n, acc, half", TABLE_1)
def test_table_1_normal_ci(book, n, acc, half):
    k = round(acc / 100 * n)
    ci = accuracy_ci(k, n, z=PAPER_Z)
    assert round(100 * ci.half_width, 1) == half
    assert ci.low == pytest.approx(ci.p - ci.half_width) and ci.high == pytest.approx(ci.p + ci.half_width)


def test_table_1_no_context_gemini_les_mis_is_1_9_not_1_8():
    # The paper prints 87.7 ± 1.8; its own formula with n = 1,117 gives ±1.9 (1.8 would need
    # accuracy >= 88.8%). We reproduce the formula, not the typo.
    ci = accuracy_ci(round(0.877 * 1117), 1117, z=PAPER_Z)
    assert round(100 * ci.half_width, 1) == 1.9


@pytest.mark.parametrize("k, n", [(0, 10), (3, 10), (50, 100), (97, 100), (1033, 1117)])
def test_wilson_matches_scipy(k, n):
    ours = accuracy_ci(k, n, method="wilson")
    ref = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    assert ours.low == pytest.approx(ref.low, abs=1e-12) and ours.high == pytest.approx(ref.high, abs=1e-12)


def test_normal_ci_is_clipped_to_unit_interval():
    ci = accuracy_ci(10, 10)
    assert ci.high == 1.0 and ci.half_width == 0.0
    # p ± z·sqrt(p(1-p)/n) leaves [0, 1] here: 0.1 - 0.186 < 0 and 0.9 + 0.186 > 1.
    half = PAPER_Z * np.sqrt(0.1 * 0.9 / 10)
    assert half > 0.1
    low = accuracy_ci(1, 10, z=PAPER_Z)
    assert low.low == 0.0 and low.high == pytest.approx(0.1 + half, abs=1e-12)
    assert low.half_width == pytest.approx(half, abs=1e-12)  # the bounds are clipped, the half-width is not
    high = accuracy_ci(9, 10, z=PAPER_Z)
    assert high.high == 1.0 and high.low == pytest.approx(0.9 - half, abs=1e-12)


def test_mcnemar_exact_and_chi2():
    a = [True] * 10 + [False] * 2 + [True] * 30 + [False] * 8   # 10 only-A, 2 only-B
    b = [False] * 10 + [True] * 2 + [True] * 30 + [False] * 8
    exact = mcnemar_test(a, b)
    assert (exact.only_a, exact.only_b, exact.both_correct, exact.neither) == (10, 2, 30, 8)
    assert exact.p_value == pytest.approx(2 * (1 + 12 + 66) / 4096, rel=1e-12)
    chi = mcnemar_test(a, b, method="chi2")
    assert chi.statistic == pytest.approx(49 / 12) and chi.p_value == pytest.approx(0.04331, abs=1e-4)
    assert mcnemar_test([True, False], [True, False]).p_value == 1.0
