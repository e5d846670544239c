"""The corrected-estimate core (lsqa.stats.corrected): closed forms, and ppi-python on the same inputs."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import norm
from scipy.stats import t as student_t

from lsqa.stats import corrected as C


def _without_the_oracles_notes(test):
    """ppi-python's own calls warn on every run (its logistic fit passes scikit-learn's deprecated ``penalty``;
    numba multiplies a strided array): notes about the oracle, not about lsqa, kept out of the suite's output."""
    test = pytest.mark.filterwarnings("ignore:'penalty' was deprecated:FutureWarning")(test)
    return pytest.mark.filterwarnings("ignore:'@' is faster on contiguous arrays")(test)


@pytest.fixture(scope="module")
def ppi_py():
    """ppi-python, the test-only oracle pinned in requirements.txt (imported only by the slow tests:
    numba makes the import itself take a while)."""
    return pytest.importorskip("ppi_py")


def _binary_world(seed=0, n_items=2000, n_audit=200, agree=0.8):
    rng = np.random.default_rng(seed)
    y = rng.binomial(1, 0.6, n_items).astype(float)
    f = np.where(rng.random(n_items) < agree, y, 1 - y)
    idx = np.sort(rng.choice(n_items, n_audit, replace=False))
    human = np.full(n_items, np.nan)
    human[idx] = y[idx]
    return y, f, idx, human


def _bt_world(seed=1, m=5, n_items=2000, n_audit=300, agree=0.75):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, m, n_items)
    b = (a + rng.integers(1, m, n_items)) % m
    beta = np.linspace(-1, 1, m)
    y = rng.binomial(1, 1 / (1 + np.exp(-(beta[a] - beta[b])))).astype(float)
    f = np.where(rng.random(n_items) < agree, y, 1 - y)
    idx = np.sort(rng.choice(n_items, n_audit, replace=False))
    human = np.full(n_items, np.nan)
    human[idx] = y[idx]
    names = [f"s{k}" for k in range(m)]
    return names, a, b, y, f, idx, human


# ------------------------------------------------------------------------------------- means

def test_mean_humans_only_is_the_sample_mean_with_its_standard_error():
    y, f, idx, human = _binary_world()
    est = C.ppi_mean(f, C.design(human), lam=0.0)
    n = len(idx)
    assert est.estimate == pytest.approx(y[idx].mean(), abs=1e-12)
    # Closed form: sample variance (ddof 1) / n, t quantile with n − 1 degrees of freedom.
    assert est.se == pytest.approx(y[idx].std(ddof=1) / np.sqrt(n), rel=1e-3)
    assert est.ci_high - est.estimate == pytest.approx(student_t.ppf(0.975, n - 1) * est.se, rel=1e-9)


def test_mean_with_every_item_audited_is_the_humans_mean_whatever_lambda():
    y, f, _, _ = _binary_world(n_audit=10)
    for lam in (None, 0.0, 0.3, 1.0):
        est = C.ppi_mean(f, C.design(y), lam=lam)
        assert est.estimate == pytest.approx(y.mean())
        assert est.se == pytest.approx(y.std(ddof=1) / np.sqrt(len(y)), rel=1e-9)
        assert est.method == "human-only"


def test_mean_without_audits_is_the_judge_with_a_warning():
    _, f, _, _ = _binary_world()
    est = C.ppi_mean(f, C.design(np.full(len(f), np.nan)))
    assert est.method == "judge-only" and est.n_audited == 0
    assert est.estimate == pytest.approx(f.mean())
    assert any("no usable audits" in w for w in est.warnings)


@pytest.mark.slow  # ppi-python compiles with numba on first use (~1 min)
@pytest.mark.parametrize("lam", [0.5, 1.0])
def test_mean_matches_ppi_python_for_a_fixed_lambda(lam, ppi_py):
    y, f, idx, human = _binary_world()
    est = C.ppi_mean(f, C.design(human), lam=lam)
    point = ppi_py.ppi_mean_pointestimate(y[idx], f[idx], f, lam=lam)
    low, high = ppi_py.ppi_mean_ci(y[idx], f[idx], f, lam=lam, alpha=0.05)
    assert est.estimate == pytest.approx(float(point[0]), abs=1e-12)
    # ppi-python treats the verdicts as a sample independent of the audits (normal quantile, ddof
    # 0); here the audits are a subsample of them, which adds the term 2λ·cov(f, Y − λf)/N (t
    # quantile, ddof 1): the widths agree to a few percent.
    assert (est.ci_high - est.ci_low) == pytest.approx(float(high[0] - low[0]), rel=0.05)


def test_mean_power_tuning_is_the_regression_coefficient_and_narrows_the_interval():
    y, f, idx, human = _binary_world(agree=0.9)
    est = C.ppi_mean(f, C.design(human))
    # Subsample setting: the variance-minimising λ is cov(Y, f) / var(f) on the audits (clipped).
    expected = np.cov(y[idx], f[idx])[0, 1] / f[idx].var(ddof=1)
    assert est.lam == pytest.approx(min(1.0, expected), rel=0.05)
    classical = C.ppi_mean(f, C.design(human), lam=0.0)
    assert est.ci_high - est.ci_low < 0.7 * (classical.ci_high - classical.ci_low)


def test_mean_with_no_disagreement_on_the_audits_keeps_a_jeffreys_floor():
    # 12 audits that all agree with the judge: the rectifier is 0 on every audit, so the plain
    # PPI variance would be the judge's sampling noise alone. Closed form with the floor (one
    # pseudo-audit over the four corners of the (human, judge) square, rectifier ±1 on two of
    # them): var(f)/N + 1/(2n(n + 1)).
    rng = np.random.default_rng(7)
    f = (rng.random(400) < 0.6).astype(float)
    idx = rng.choice(400, 12, replace=False)
    human = np.full(400, np.nan)
    human[idx] = f[idx]
    est = C.ppi_mean(f, C.design(human), lam=1.0)
    n, big_n = 12, 400
    assert est.estimate == pytest.approx(f.mean(), abs=1e-12)
    assert est.se == pytest.approx(np.sqrt(f.var(ddof=1) / big_n + 1 / (2 * n * (n + 1))), rel=1e-9)
    # With 60 disagreements in 200 audits the sample variance is above the floor: nothing added
    # (so the ppi-python comparisons above still hold as they are).
    y, f2, _, human2 = _binary_world(agree=0.7, n_audit=200)
    wts = C._hajek_weights(C.design(human2))
    assert C._rectifier_floor(np.nan_to_num(human2), f2, wts, 1.0) == 0.0


def test_mean_intervals_cover_with_few_audits_of_an_agreeing_judge():
    # 10 uniform audits out of 200 answers, a judge that agrees with the humans 90% of the time:
    # a third of the draws see no disagreement at all. Without a floor on the rectifier's
    # variance these 95% intervals covered ~90% of the time (bench_corrected.py, issue 13).
    rng = np.random.default_rng(13)
    hits, draws = 0, 1500
    for _ in range(draws):
        truth = rng.uniform(0.3, 0.85)
        y = (rng.random(200) < truth).astype(float)
        f = np.where(rng.random(200) < 0.8, y, (rng.random(200) < 0.55).astype(float))
        human = np.full(200, np.nan)
        idx = rng.choice(200, 10, replace=False)
        human[idx] = y[idx]
        est = C.ppi_mean(f, C.design(human))
        hits += est.ci_low <= truth <= est.ci_high
    assert 0.93 <= hits / draws <= 0.985


@pytest.mark.slow  # ppi-python compiles with numba on first use (~1 min)
def test_mean_with_unequal_inclusion_probabilities_is_the_hajek_estimate(ppi_py):
    rng = np.random.default_rng(3)
    n_items = 3000
    y = rng.binomial(1, 0.5, n_items).astype(float)
    f = np.where(rng.random(n_items) < 0.7, y, 1 - y)
    pi = np.where(f == 1, 0.3, 0.05)     # audits favour items the judge calls "yes"
    take = rng.random(n_items) < pi
    human = np.where(take, y, np.nan)
    est = C.ppi_mean(f, C.design(human, np.where(take, pi, np.nan)), lam=0.0)
    w = 1 / pi[take]
    assert est.estimate == pytest.approx(np.sum(w * y[take]) / np.sum(w), abs=1e-12)
    naive = y[take].mean()      # ignoring the design is biased towards the judge's "yes"
    assert abs(est.estimate - y.mean()) < abs(naive - y.mean())
    # ppi-python's weighted estimate (weights normalised like ours) on the same audits
    point = ppi_py.ppi_mean_pointestimate(y[take], f[take], f, lam=0.0, w=w)
    assert est.estimate == pytest.approx(float(point[0]), abs=1e-12)


def test_mean_intervals_cover_under_the_active_queues_unequal_probabilities():
    # 20 expected audits of 300 answers drawn by the active queue (π ∝ τ + the share of three other
    # judges that disagree, lsqa.stats.sampling), a judge right 40% of the time: the t quantile on the
    # count of audits covered ~92% (bench_corrected_unequal_pi.py); on the effective audits of the
    # variance, (Σw²)²/Σw⁴, it covers ≥ 94%. Equal π: the same degrees of freedom as before.
    rng = np.random.default_rng(44)
    now = before = 0
    draws = 1500
    for _ in range(draws):
        truth = rng.uniform(0.3, 0.85)
        y = (rng.random(300) < truth).astype(float)
        f = np.where(rng.random(300) < 0.4, y, (rng.random(300) < 0.55).astype(float))
        score = 0.25 + np.mean([np.where(rng.random(300) < 0.8, y, 1 - y) != f for _ in range(3)], axis=0)
        pi = np.minimum(1.0, 20 * score / score.sum())
        take = rng.random(300) < pi
        est = C.ppi_mean(f, C.design(np.where(take, y, np.nan), np.where(take, pi, np.nan)))
        assert 1 <= est.df < est.n_audited - 2 or est.n_audited < 4
        now += est.ci_low <= truth <= est.ci_high
        half = student_t.ppf(0.975, max(1, est.n_audited - 2)) * est.se     # the count of audits, as before
        before += abs(est.estimate - truth) <= half
    assert now / draws >= 0.94 and before / draws < 0.93
    y, f, idx, human = _binary_world(n_audit=40)
    assert C.ppi_mean(f, C.design(human, 0.02)).df == 40 - 2     # equal π: audits − strata − λ


def test_design_refuses_an_audit_without_a_probability():
    with pytest.raises(ValueError, match="inclusion probability"):
        C.design([1.0, None], [0.0, None])


# ------------------------------------------------------------------------------ Bradley-Terry

def _logistic_design(a, b, m):
    x = np.zeros((len(a), m))
    x[np.arange(len(a)), a] = 1.0
    x[np.arange(len(a)), b] = -1.0
    return x[:, 1:]   # system 0 is the reference (β_0 = 0), as in Boyeau et al.


@pytest.mark.slow  # ppi-python compiles with numba on first use (~1 min)
@pytest.mark.parametrize("lam", [0.0, 0.5, 1.0])
@_without_the_oracles_notes
def test_bradley_terry_point_estimate_matches_ppi_python_logistic(lam, ppi_py):
    names, a, b, y, f, idx, human = _bt_world()
    est = C.ppi_bradley_terry(names, [names[k] for k in a], [names[k] for k in b], f, C.design(human), lam=lam)
    x = _logistic_design(a, b, len(names))
    theta = ppi_py.ppi_logistic_pointestimate(x[idx], y[idx], f[idx], x, f, lam=lam)
    ref = np.r_[0.0, theta]
    np.testing.assert_allclose(est.beta, ref - ref.mean(), atol=2e-5)


@pytest.mark.slow  # ppi-python compiles with numba on first use (~1 min)
@_without_the_oracles_notes
def test_bradley_terry_intervals_agree_with_ppi_python(ppi_py):
    names, a, b, y, f, idx, human = _bt_world()
    est = C.ppi_bradley_terry(names, [names[k] for k in a], [names[k] for k in b], f, C.design(human), lam=1.0)
    x = _logistic_design(a, b, len(names))
    low, high = ppi_py.ppi_logistic_ci(x[idx], y[idx], f[idx], x, f, lam=1.0, alpha=0.05)
    ours = np.array([est.diff_se(k, 0) for k in range(1, len(names))]) * norm.ppf(0.975)
    np.testing.assert_allclose(ours, (high - low) / 2, rtol=0.12)


def test_bradley_terry_humans_only_when_everything_is_audited():
    names, a, b, y, f, _, _ = _bt_world(n_audit=10)
    sa, sb = [names[k] for k in a], [names[k] for k in b]
    everything = C.ppi_bradley_terry(names, sa, sb, f, C.design(y))
    humans = C.ppi_bradley_terry(names, sa, sb, y, C.design(np.full(len(y), np.nan)))  # y as "judge"
    assert everything.method == "human-only"
    np.testing.assert_allclose(everything.beta, humans.beta, atol=1e-8)
    np.testing.assert_allclose(everything.cov, humans.cov, rtol=1e-6, atol=1e-12)


def test_bradley_terry_without_audits_is_the_plain_fit_with_a_warning():
    from lsqa.stats.ranking import count_comparisons, fit_bradley_terry

    names, a, b, y, f, _, _ = _bt_world()
    sa, sb = [names[k] for k in a], [names[k] for k in b]
    est = C.ppi_bradley_terry(names, sa, sb, f, C.design(np.full(len(f), np.nan)))
    fit = fit_bradley_terry(count_comparisons(sa, sb, ["A" if v else "B" for v in f], systems=names))
    np.testing.assert_allclose(est.beta, fit.beta, atol=1e-7)
    assert est.method == "judge-only" and any("no usable audits" in w for w in est.warnings)


def test_bradley_terry_correction_removes_a_judges_favouritism():
    rng = np.random.default_rng(5)
    m, n_items = 6, 6000
    a = rng.integers(0, m, n_items)
    b = (a + rng.integers(1, m, n_items)) % m
    beta = np.zeros(m)
    y = rng.binomial(1, 0.5, n_items).astype(float)
    # The judge always picks system 0 when it is in the pair: judge-only puts it far ahead.
    f = np.where(a == 0, 1.0, np.where(b == 0, 0.0, y))
    idx = rng.choice(n_items, 1200, replace=False)
    human = np.full(n_items, np.nan)
    human[idx] = y[idx]
    names = [f"s{k}" for k in range(m)]
    sa, sb = [names[k] for k in a], [names[k] for k in b]
    judge = C.ppi_bradley_terry(names, sa, sb, f, C.design(np.full(n_items, np.nan)))
    fixed = C.ppi_bradley_terry(names, sa, sb, f, C.design(human))
    assert judge.beta[0] > 2.0
    low, high = fixed.ci
    assert low[0] <= beta[0] <= high[0]
    assert abs(fixed.beta[0]) < 0.4


def test_bradley_terry_on_system_indices_is_the_fit_on_names():
    # A million items are given as indices into the systems (no lookup per item): the same fit,
    # covariance and pulls as by name, and an index outside the systems is refused in one line.
    names, a, b, y, f, idx, human = _bt_world()
    sa, sb = [names[k] for k in a], [names[k] for k in b]
    by_name = C.ppi_bradley_terry(names, sa, sb, f, C.design(human))
    by_index = C.ppi_bradley_terry(names, a.astype(np.int32), b, f, C.design(human))
    np.testing.assert_array_equal(by_index.beta, by_name.beta)
    np.testing.assert_array_equal(by_index.cov, by_name.cov)
    change = np.where(np.isnan(human), 0.0, np.nan_to_num(human) - f)
    np.testing.assert_array_equal(np.asarray(C.label_pulls(names, a, b, by_name.beta, change)),
                                  np.asarray(C.label_pulls(names, sa, sb, by_name.beta, change)))
    with pytest.raises(ValueError, match="system index 5 is not in the systems list"):
        C.ppi_bradley_terry(names, np.where(a == 0, 5, a), b, f, C.design(human))
    with pytest.raises(ValueError, match="systems has repeats"):
        C.ppi_bradley_terry([*names, names[0]], a, b, f, C.design(human))


def test_design_of_float_arrays_is_the_design_of_their_values():
    _, f, _, human = _binary_world()
    pi = np.where(np.isnan(human), np.nan, 0.25)
    from_lists = C.design([None if np.isnan(v) else float(v) for v in human], [None if np.isnan(v) else v for v in pi])
    from_arrays = C.design(human, pi)
    np.testing.assert_array_equal(from_arrays.human, from_lists.human)
    np.testing.assert_array_equal(from_arrays.inclusion, from_lists.inclusion)
    assert from_arrays.human is not human  # a copy: the caller's array is not the design's


def test_audits_to_separate_closed_form():
    # var = judge part 0.01 + rectifier 0.04 at n = 100; |d| = 0.4 < 1.96·√0.05 is not separated.
    # 80% power needs se ≤ 0.4/2.80: rectifier ≤ (0.4/2.80)² − 0.01, i.e. n' = 100·0.04/that.
    z = norm.ppf(0.975) + norm.ppf(0.8)
    rect_needed = (0.4 / z) ** 2 - 0.01
    expected = int(np.ceil(100 * 0.04 / rect_needed - 100))
    assert C.audits_to_separate(0.4, 0.05, 0.01, 100, 10_000) == expected
    assert C.audits_to_separate(2.0, 0.05, 0.01, 100, 10_000) == 0          # already separated
    assert C.audits_to_separate(0.1, 0.05, 0.01, 100, 10_000) is None       # judge part alone too wide
