"""Rank flips (issue 13): which systems change places between the judge-only, corrected and
overrides rankings, and which audited verdicts moved each flip (lsqa.stats.rank_flips)."""

from __future__ import annotations

import numpy as np
import pytest

from lsqa.stats import corrected as C
from lsqa.stats import rank_flips as R
from lsqa.stats.sampling import Item

NAMES = ["s0", "s1", "s2", "s3"]


def _world(seed, beta, favour):
    """Pairs of 4 systems; a judge that picks s0 whenever it is in the pair with probability `favour`."""
    rng = np.random.default_rng(seed)
    n_items = 2400
    a = rng.integers(0, 4, n_items)
    b = (a + rng.integers(1, 4, n_items)) % 4
    y = rng.binomial(1, 1 / (1 + np.exp(-(beta[a] - beta[b])))).astype(float)
    fav = rng.random(n_items) < favour
    f = np.where(fav & (a == 0), 1.0, np.where(fav & (b == 0), 0.0, y))
    sa, sb = [NAMES[k] for k in a], [NAMES[k] for k in b]
    items = [Item((str(k), sa[k], sb[k]), "pairwise", str(k), sa[k], sb[k], judgment_ids=[f"j{k}"],
                  judge_outcomes=[f[k]], judge_labels=["A" if f[k] else "B"]) for k in range(n_items)]
    return rng, a, b, y, f, sa, sb, items


def _no_audits(n):
    return C.design(np.full(n, np.nan))


def test_rank_flip_names_the_random_audits_that_moved_the_corrected_ranking():
    rng, a, b, y, f, sa, sb, items = _world(11, np.array([0.0, 0.6, 0.0, -0.6]), favour=1.0)
    idx = rng.choice(len(f), 600, replace=False)
    human = np.full(len(f), np.nan)
    human[idx] = y[idx]
    est = C.ppi_bradley_terry(NAMES, sa, sb, f, C.design(human))
    judge = C.ppi_bradley_terry(NAMES, sa, sb, f, _no_audits(len(f)))
    flips = R.bradley_terry_flips(est, judge, items, human, None)
    flip = next(x for x in flips if set(x["systems"]) == {"s0", "s1"})
    assert flip["judge_only_above"] == "s0"
    assert flip["ranks"]["corrected"]["s1"] < flip["ranks"]["corrected"]["s0"]
    movers = flip["moved_by"]["corrected"]
    assert movers and all(int(mv["question_id"]) in set(idx.tolist()) for mv in movers)
    # The audits that pull s1 above s0 hardest are ones where the human overruled a pick of s0.
    assert all({mv["system_a"], mv["system_b"]} & {"s0", "s1"} for mv in movers)
    assert all(mv["human_outcome"] != mv["judge_outcome"] for mv in movers)
    assert "overrides" not in flip["ranks"]


def test_rank_flip_names_the_overrides_that_moved_it_and_their_pulls_add_up():
    # The judge picks s0 40% of the time it is in a pair, which lifts it above s1; a reviewer
    # overrides every one of its wrong verdicts on s0 (what the priority queue shows first).
    _, a, b, y, f, sa, sb, items = _world(11, np.array([0.0, 0.4, 0.0, -0.6]), favour=0.4)
    wrong = np.flatnonzero(((a == 0) | (b == 0)) & (f != y))
    f_over = f.copy()
    f_over[wrong] = y[wrong]
    changed = [[] for _ in items]
    for k in wrong:
        changed[k] = [{"judgment_id": f"j{k}", "judge_label": items[k].judge_labels[0],
                       "human_label": "A" if y[k] else "B"}]
    over = R.Overrides(f_over, changed, len(wrong))
    judge = C.ppi_bradley_terry(NAMES, sa, sb, f, _no_audits(len(f)))
    flips = R.bradley_terry_flips(judge, judge, items, np.full(len(f), np.nan), over)
    flip = next(x for x in flips if set(x["systems"]) == {"s0", "s1"})
    assert flip["judge_only_above"] == "s0" and flip["ranks"]["overrides"]["s1"] < flip["ranks"]["overrides"]["s0"]
    assert "corrected" not in flip["moved_by"]          # no audits, nothing to attribute there
    movers = flip["moved_by"]["overrides"]
    assert len(movers) == R.MOVERS_SHOWN
    for mv in movers:
        k = int(mv["question_id"])
        assert k in set(wrong.tolist()) and {mv["system_a"], mv["system_b"]} == {"s0", "s1"}
        assert mv["overridden"] == changed[k]
    assert flip["n_pushing"]["overrides"] <= len(wrong)
    # First order: the pulls of all overrides add up to the change of the pair's difference.
    fit = C.ppi_bradley_terry(NAMES, sa, sb, f_over, _no_audits(len(f)))
    pulls = C.label_pulls(NAMES, sa, sb, fit.beta, f_over - f)
    total = float(np.sum(pulls[:, 1] - pulls[:, 0]))
    change = (fit.beta[1] - fit.beta[0]) - (judge.beta[1] - judge.beta[0])
    assert flip["change"]["overrides"] == pytest.approx(change, rel=1e-9) and change > 0
    assert total == pytest.approx(change, rel=0.1)


def test_no_reviews_no_flips():
    _, _, _, _, f, sa, sb, items = _world(3, np.array([0.0, 0.4, 0.0, -0.6]), favour=0.4)
    judge = C.ppi_bradley_terry(NAMES, sa, sb, f, _no_audits(len(f)))
    over = R.Overrides(f.copy(), [[] for _ in items], 0)
    assert R.bradley_terry_flips(judge, judge, items, np.full(len(f), np.nan), over) == []
