"""Does the overall order hold book by book, and how often would it hold on a new book?

A long-span study ranks systems over all its books together; a stakeholder asks whether the order
holds on the next book. Per book, each system's score is its share of the book's verdicts it won
against the other systems (a tie half a win; side-by-side judges) or its accuracy (yes/no judges),
and the book's order sorts the systems by it. The overall top pair (the leader and the next system
of the overall ranking) *holds* on a book when the leader scores above the next system there
(its wins over it, side by side; its accuracy, yes/no); a book with fewer than :data:`MIN_VERDICTS`
verdicts on that pair says "too few verdicts" and is not counted.

How often it would hold on a new book, two ways, both on the books with enough verdicts:

- **Predictive rate** (beta-binomial): with ``k`` of ``K`` books holding and Jeffreys' prior
  Beta(½, ½) on the share θ of books (of the kind and size studied) on which the order holds, the
  posterior is Beta(k + ½, K − k + ½) and the probability that the next book holds is its mean
  (k + ½) / (K + 1) (posterior predictive of a Bernoulli trial; Gelman et al., *Bayesian Data
  Analysis*, 3rd ed., §2.4 and §2.8), with the central 95% posterior interval of θ.
- **Leave one book out** (Stone 1974, cross-validation): each book in turn is held out, the top
  pair's order is taken from the other books' verdicts pooled, and the held-out book is checked
  against it; the share of held-out books that agree. It asks the question of a new book directly:
  an order learnt without the book, tried on it.

Below :data:`MIN_BOOKS` books with enough verdicts no rate is given ("too few books").

Arrays in, numbers out: the workspace is read by the dashboard (``lsqa.store.leaderboard``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats as sps

MIN_VERDICTS = 5   # verdicts on the top pair (side by side) or answers of each (yes/no) a book needs to count
MIN_BOOKS = 3      # books with enough verdicts below which no rate is given
LEVEL = 0.95


@dataclass(frozen=True)
class Consistency:
    """Per book (arrays of length K books): ``order`` (system indices, best first), ``pair_n`` (the
    verdicts on the top pair, or the fewer of its two systems' answers), ``upper_score`` /
    ``lower_score`` (wins over each other, or accuracies), ``enough`` (at least ``MIN_VERDICTS``),
    ``holds`` (the leader scores above the next system; meaningful where ``enough``). Over the books:
    ``n_books`` with enough verdicts, ``n_hold`` of them holding, ``predictive`` (P(a new book
    holds), None below ``MIN_BOOKS``), ``ci_low`` / ``ci_high`` (95% posterior interval of the share
    of books that hold), ``loo`` (share of held-out books agreeing with the other books' order, None
    below ``MIN_BOOKS``)."""

    order: list[list[int]]
    pair_n: np.ndarray
    upper_score: np.ndarray
    lower_score: np.ndarray
    enough: np.ndarray
    holds: np.ndarray
    n_books: int
    n_hold: int
    predictive: float | None
    ci_low: float | None
    ci_high: float | None
    loo: float | None


def _orders(score: np.ndarray, overall: np.ndarray) -> list[list[int]]:
    """Each book's order: systems by score, best first; a system with no verdicts in the book is left
    out (NaN); equal scores keep the overall order (``overall``: each system's overall rank)."""
    out = []
    for row in score:
        known = [s for s in range(len(row)) if np.isfinite(row[s])]
        out.append(sorted(known, key=lambda s: (-row[s], overall[s])))
    return out


def _summary(upper: np.ndarray, lower: np.ndarray, pair_n: np.ndarray, *, level: float = LEVEL) -> dict:
    """The counts, the predictive rate and leave-one-book-out from each book's top-pair scores."""
    enough = pair_n >= MIN_VERDICTS
    holds = upper > lower
    n_books, n_hold = int(enough.sum()), int((holds & enough).sum())
    out = {"enough": enough, "holds": holds, "n_books": n_books, "n_hold": n_hold,
           "predictive": None, "ci_low": None, "ci_high": None}
    if n_books < MIN_BOOKS:
        return out
    a, b = n_hold + 0.5, n_books - n_hold + 0.5
    alpha = (1 - level) / 2
    out.update(predictive=a / (a + b), ci_low=float(sps.beta.ppf(alpha, a, b)), ci_high=float(sps.beta.ppf(1 - alpha, a, b)))
    return out


def _loo(upper_total: np.ndarray, lower_total: np.ndarray, holds: np.ndarray, enough: np.ndarray) -> float | None:
    """Leave one book out on pooled totals (wins, or accepted answers out of judged ones, summed over
    the other books): the share of the held-out books whose order agrees with the rest's."""
    idx = np.flatnonzero(enough)
    if len(idx) < MIN_BOOKS:
        return None
    up, lo = upper_total.sum(), lower_total.sum()
    agree = [bool(holds[k]) == bool((up - upper_total[k]) > (lo - lower_total[k])) for k in idx]
    return float(np.mean(agree))


def pairwise(wins: np.ndarray, upper: int, lower: int, *, level: float = LEVEL) -> Consistency:
    """``wins[k, s, t]``: in book k, how often system s beat system t (a tie half a win each, a verdict
    with both answers wrong not at all); ``upper``, ``lower``: the overall leader and the next system.
    Score: a system's share of wins over all its decided comparisons in the book. The overall order
    for breaking equal scores is taken as the systems' index order."""
    wins = np.asarray(wins, dtype=float)
    if wins.ndim != 3 or wins.shape[1] != wins.shape[2]:
        raise ValueError(f"wins must be books × systems × systems, not shape {wins.shape}")
    played = wins + wins.transpose(0, 2, 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        score = wins.sum(axis=2) / played.sum(axis=2)
    u, lo = wins[:, upper, lower], wins[:, lower, upper]
    n = u + lo
    s = _summary(u, lo, n, level=level)
    loo = _loo(u, lo, s["holds"], s["enough"])
    return Consistency(order=_orders(score, np.arange(wins.shape[1])), pair_n=n, upper_score=u, lower_score=lo,
                       loo=loo, **s)


def accuracy(accepted: np.ndarray, judged: np.ndarray, upper: int, lower: int, *,
             level: float = LEVEL) -> Consistency:
    """``accepted[k, s]`` of ``judged[k, s]`` answers of system s in book k a yes/no judge accepted;
    ``upper``, ``lower``: the overall leader and the next system. Score: the accuracy; a book counts
    when each of the two has at least ``MIN_VERDICTS`` answers judged there."""
    accepted, judged = np.asarray(accepted, dtype=float), np.asarray(judged, dtype=float)
    if accepted.shape != judged.shape or accepted.ndim != 2:
        raise ValueError(f"accepted and judged must both be books × systems, not {accepted.shape} and {judged.shape}")
    with np.errstate(invalid="ignore", divide="ignore"):
        score = accepted / judged
    u, lo = np.nan_to_num(score[:, upper]), np.nan_to_num(score[:, lower])
    n = np.minimum(judged[:, upper], judged[:, lower])
    s = _summary(u, lo, n, level=level)
    # Pooled accuracy of the other books: accepted over judged, compared through cross-multiplication.
    acc_u, acc_l, n_u, n_l = accepted[:, upper], accepted[:, lower], judged[:, upper], judged[:, lower]
    idx = np.flatnonzero(s["enough"])
    loo = None
    if len(idx) >= MIN_BOOKS:
        agree = []
        for k in idx:
            pu = (acc_u.sum() - acc_u[k]) / max(n_u.sum() - n_u[k], 1)
            pl = (acc_l.sum() - acc_l[k]) / max(n_l.sum() - n_l[k], 1)
            agree.append(bool(s["holds"][k]) == bool(pu > pl))
        loo = float(np.mean(agree))
    return Consistency(order=_orders(score, np.arange(accepted.shape[1])), pair_n=n, upper_score=u, lower_score=lo,
                       loo=loo, **s)
