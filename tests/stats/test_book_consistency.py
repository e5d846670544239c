"""Per-book consistency of the order (lsqa.stats.book_consistency): the counts, the beta-binomial
predictive rate and leave one book out, on arrays built by hand; the rate's calibration simulated."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from lsqa.stats import book_consistency as bc


def books(pairs: list[tuple[float, float]], n_sys: int = 3) -> np.ndarray:
    """wins[k, s, t] with system 0 against system 1 as given per book, and both beating system 2."""
    wins = np.zeros((len(pairs), n_sys, n_sys))
    for k, (a, b) in enumerate(pairs):
        wins[k, 0, 1], wins[k, 1, 0] = a, b
        wins[k, 0, 2] = wins[k, 1, 2] = 5
    return wins


def test_counts_prediction_and_leave_one_out_by_hand():
    # 5 books: the leader above in 3, below in 1, even in 1; a sixth with too few verdicts (3 < 5).
    r = bc.pairwise(books([(6, 2), (5, 3), (7, 1), (2, 6), (4, 4), (2, 1)]), 0, 1)
    assert r.enough.tolist() == [True] * 5 + [False]
    assert (r.n_books, r.n_hold) == (5, 3)
    assert r.predictive == pytest.approx(3.5 / 6)                       # (k + ½) / (K + 1)
    assert (r.ci_low, r.ci_high) == pytest.approx(tuple(sps.beta.ppf([0.025, 0.975], 3.5, 2.5)))
    # Leave one out: the other books pooled always put the leader above; 3 of the 5 held-out books agree.
    assert r.loo == pytest.approx(3 / 5)
    assert r.order[0] == [0, 1, 2] and r.order[3] == [1, 0, 2]
    assert r.order[4] == [0, 1, 2]  # even: the overall order breaks the tie


def test_one_book_and_too_few_books_give_no_rate():
    one = bc.pairwise(books([(9, 1)]), 0, 1)
    assert (one.n_books, one.n_hold, one.predictive, one.loo) == (1, 1, None, None)
    two = bc.pairwise(books([(9, 1), (1, 9), (1, 1)]), 0, 1)
    assert (two.n_books, two.predictive) == (2, None)


def test_yes_no_accuracies_per_book():
    accepted = np.array([[8, 5], [6, 7], [9, 2], [1, 0]])
    judged = np.array([[10, 10], [10, 10], [10, 10], [2, 2]])
    r = bc.accuracy(accepted, judged, 0, 1)
    assert r.enough.tolist() == [True, True, True, False]
    assert (r.n_books, r.n_hold) == (3, 2) and r.loo == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match="books × systems"):
        bc.accuracy(accepted, judged[:, :1], 0, 1)


def test_the_predictive_rate_is_calibrated_over_many_worlds():
    """Seed 7, 2,000 worlds: each draws θ (the share of books on which the order holds) from the
    prior, Beta(½, ½), 12 books of which Binomial(12, θ) hold, and a 13th book; in each band of
    predictions, the predicted P(the 13th holds) matches how often it did, to 0.04."""
    rng = np.random.default_rng(7)
    predicted, happened = [], []
    for _ in range(2000):
        theta = rng.beta(0.5, 0.5)
        holds = rng.uniform(size=13) < theta
        pairs = [(6, 2) if h else (2, 6) for h in holds[:12]]
        predicted.append(bc.pairwise(books(pairs), 0, 1).predictive)
        happened.append(holds[12])
    predicted, happened = np.array(predicted), np.array(happened)
    for low, high in ((0, 0.3), (0.3, 0.7), (0.7, 1.0)):
        band = (predicted >= low) & (predicted < high)
        assert abs(predicted[band].mean() - happened[band].mean()) < 0.04, (low, high, predicted[band].mean(), happened[band].mean())
