"""The one Bradley-Terry core (lsqa/stats/bradley_terry.py): its sandwich covariance against statsmodels'
robust (HC0) and cluster-robust covariances of the same logistic regression, the binned cells of a large
data set against the exact per-row fit, and the plain ranking's sandwich from cell counts alone."""

from __future__ import annotations

import numpy as np
import pytest

from lsqa.stats import bradley_terry as bt
from lsqa.stats.ranking import count_comparisons, fit_bradley_terry, sandwich_bradley_terry
from lsqa.stats.style_control import (
    bootstrap_style_controlled,
    fit_style_controlled,
    style_data,
    style_sandwich,
    style_table,
)


def _logit(y, X):
    """statsmodels' logistic regression, imported by the tests that compare with it: statsmodels.api at
    the top of this module was imported by every pytest-xdist worker at collection, slowly."""
    return pytest.importorskip("statsmodels.discrete.discrete_model").Logit(y, X)


def _world(n, m, c, ties, seed):
    rng = np.random.default_rng(seed)
    beta = rng.normal(0, 0.6, m)
    typical = 40 * 1.5 ** rng.uniform(0, 3, m)
    a = rng.integers(0, m, n)
    b = (a + rng.integers(1, m, n)) % m
    la = np.maximum(1, np.round(typical[a] * rng.lognormal(0, 0.5, n)))
    lb = np.maximum(1, np.round(typical[b] * rng.lognormal(0, 0.5, n)))
    p = 1 / (1 + np.exp(-(beta[a] - beta[b] + c * (la - lb) / (la + lb))))
    u = rng.random(n)
    winner = np.where(u < p * (1 - ties), "A", np.where(u > 1 - (1 - p) * (1 - ties), "B", "tie"))
    names = np.array([f"s{k}" for k in range(m)])
    q = np.arange(n) // 4                                   # four comparisons per question
    return names[a], names[b], winner, la, lb, q


def _statsmodels(data, cov_type="HC0", groups=None):
    """Logit of "A won" on +1/−1 columns (the last system the reference) and the length difference."""
    m = len(data.systems)
    X = np.zeros((data.n, m))
    X[np.arange(data.n), data.ia] += 1.0
    X[np.arange(data.n), data.ib] -= 1.0
    X[:, m - 1] = data.d                                    # the reference's column holds d
    kw = {} if groups is None else {"cov_kwds": {"groups": groups, "use_correction": False}}
    return _logit(data.y, X).fit(method="newton", tol=1e-12, maxiter=100, disp=0, cov_type=cov_type, **kw)


def _diff_cov(cov, m):
    """Covariance of β_k − β_ref (k < m − 1) from the covariance of mean-0 β."""
    T = np.eye(m)[: m - 1] - np.eye(m)[m - 1]
    return T @ cov @ T.T


@pytest.mark.parametrize("clustered", [False, True])
def test_sandwich_is_statsmodels_robust_covariance(clustered):
    sa, sb, w, la, lb, q = _world(3000, 5, 2.0, 0.0, seed=1)
    data = style_data(sa, sb, w, la, lb, question_id=q)
    fit = fit_style_controlled(data)
    sw = style_sandwich(data, fit, by_question=clustered)
    ref = _statsmodels(data, "cluster" if clustered else "HC0", data.question if clustered else None)
    m = len(data.systems)
    assert fit.coef == pytest.approx(ref.params[-1], abs=1e-6)
    assert sw.coef_cov[0, 0] == pytest.approx(ref.cov_params()[-1, -1], rel=1e-6)
    np.testing.assert_allclose(_diff_cov(sw.beta_cov, m), np.asarray(ref.cov_params())[: m - 1, : m - 1],
                               rtol=1e-6, atol=1e-12)


def test_plain_sandwich_from_cell_counts_is_the_per_row_robust_covariance():
    sa, sb, w, la, lb, q = _world(2500, 6, 0.0, 0.0, seed=2)
    counts = count_comparisons(sa, sb, w, question_id=q)
    fit = fit_bradley_terry(counts)
    data = style_data(sa, sb, w, la, lb, question_id=q, systems=counts.systems)
    m = len(data.systems)
    X = np.zeros((data.n, m))
    X[np.arange(data.n), data.ia] += 1.0
    X[np.arange(data.n), data.ib] -= 1.0
    for by_question, kw in ((False, {"cov_type": "HC0"}),
                            (True, {"cov_type": "cluster", "cov_kwds": {"groups": data.question,
                                                                        "use_correction": False}})):
        ref = _logit(data.y, X[:, : m - 1]).fit(method="newton", tol=1e-12, disp=0, **kw)
        ours = sandwich_bradley_terry(counts, fit, by_question=by_question)
        np.testing.assert_allclose(_diff_cov(ours, m), ref.cov_params(), rtol=1e-6, atol=1e-12)


def test_binned_cells_give_the_exact_fit_within_1e_4():
    """Above EXACT_MAX_ROWS rows are binned (BINS per covariate, two pseudo-rows per cell, the linear
    term exact): 60,000 verdicts become a few hundred cells, and β and c move by less than 1e-4."""
    sa, sb, w, la, lb, _ = _world(60_000, 8, 2.0, 0.1, seed=3)
    data = style_data(sa, sb, w, la, lb)
    assert data.n > bt.EXACT_MAX_ROWS
    binned, exact = fit_style_controlled(data), fit_style_controlled(data, exact=True)
    assert not binned.exact and exact.exact
    cells = data.cells()
    assert len(cells.pairs) <= 28 * bt.BINS * 2 < data.n / 50
    assert np.max(np.abs(binned.beta - exact.beta)) < 1e-4
    assert abs(binned.coef - exact.coef) < 1e-4
    small = data.rows(np.arange(data.n) < 2000)
    assert small.cells().exact and fit_style_controlled(small).exact


def test_bootstrap_over_cells_agrees_with_the_sandwich():
    """The two intervals the style table offers: the bootstrap's spread over cell resamples and the
    sandwich standard errors agree within 12% (Monte Carlo noise of 400 rounds is about 4%)."""
    sa, sb, w, la, lb, _ = _world(3000, 5, 2.0, 0.15, seed=4)
    data = style_data(sa, sb, w, la, lb)
    fit = fit_style_controlled(data)
    sw = style_sandwich(data, fit)
    boot = bootstrap_style_controlled(data, rounds=400, seed=5)
    assert np.std(boot.coef_samples, ddof=1) == pytest.approx(np.sqrt(sw.coef_cov[0, 0]), rel=0.12)
    np.testing.assert_allclose(np.std(boot.samples, axis=0, ddof=1), np.sqrt(np.diag(sw.beta_cov)), rtol=0.12)


def test_style_table_takes_columns_and_reports_its_intervals():
    sa, sb, w, la, lb, q = _world(1500, 4, 1.0, 0.1, seed=6)
    rows = [{"system_a": a, "system_b": b, "winner": x, "len_a": p, "len_b": r, "question_id": int(k)}
            for a, b, x, p, r, k in zip(sa, sb, w, la, lb, q, strict=False)]
    by_rows = style_table(rows, by_question=True)
    by_cols = style_table({"system_a": sa, "system_b": sb, "winner": w, "len_a": la, "len_b": lb,
                           "question_id": q}, by_question=True)
    assert by_rows == by_cols and by_rows["intervals"] == "sandwich"
    boot = style_table(rows, intervals="bootstrap", bootstrap=100)
    assert boot["intervals"] == "bootstrap" and boot["bootstrap"]["rounds"] == 100
    with pytest.raises(ValueError, match="intervals must be one of"):
        style_table(rows, intervals="jackknife")
