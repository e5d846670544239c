"""Simultaneous rank intervals (issue 30, item 3): do they cover every system's true rank at once?

Simulated worlds with known truth. A world is covered when *every* system's true rank (by its true
Bradley-Terry β) lies in its 95% rank interval; the bench prints that share per setting with the
mean interval width (rank_high − rank_low + 1, averaged over systems; 1 = exact rank known) and the
mean number of tiers.

* Judge-only Bradley-Terry path (``lsqa.stats.reports.rank_table``: bootstrap over comparisons,
  max-t rank intervals): 4-10 systems with β ~ N(0, spread), a random pair per comparison, the
  outcome drawn from eq. 1 with 10% ties; the judge's own β is the truth here.
* Corrected path (``ppi_bradley_terry`` + ``rank_intervals.from_covariance``): 6-10 systems, every
  pair on the same 20-40 questions, a judge that copies the human outcome with probability
  ``quality`` and otherwise picks its favourite system or the answer shown first (as in
  bench/bench_corrected.py); ``rate`` of the items audited uniformly at random; the humans' β is
  the truth.
* Corrected accuracy path (``ppi_mean`` per system + ``rank_intervals.from_estimates``, as
  ``corrected.corrected_accuracy`` does): 6-10 systems of 150-400 answers each, true accuracies
  from U(0.3, 0.85), a yes/no judge that copies the people with probability ``quality`` and otherwise
  says yes with probability 0.55 (0.8 for its favourite system), ``k`` uniform random audits per system.
  Beside the rank coverage, the share of worlds where every pairwise difference lies in its max-t
  interval (pairwise coverage), with the critical value from the normal (before) and from Student-t
  on the fewest audits' degrees of freedom (now, as side by side).

    nice .venv/bin/python bench/bench_rank_intervals.py [--worlds 500] [--seed 0]
    nice .venv/bin/python bench/bench_rank_intervals.py --only-corrected --systems 100 --questions 4 --worlds 40

``--systems`` / ``--questions`` set the corrected path's world (default 6-10 systems, 20-40 questions per
pair); ``LSQA_BENCH_ROOT`` points the bench at another checkout's ``lsqa`` (before/after figures).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, os.environ.get("LSQA_BENCH_ROOT") or str(Path(__file__).resolve().parents[1]))

from lsqa.stats.corrected import design, ppi_bradley_terry, ppi_mean  # noqa: E402
from lsqa.stats.rank_intervals import from_covariance, from_estimates  # noqa: E402
from lsqa.stats.reports import rank_table  # noqa: E402


def true_ranks(beta: np.ndarray) -> np.ndarray:
    return 1 + np.argsort(np.argsort(-beta, kind="stable"), kind="stable")


def judge_only_world(rng, spread: float, rounds: int):
    m = int(rng.integers(4, 11))
    beta = rng.normal(0, spread, m)
    n = int(rng.integers(200, 2001))
    a = rng.integers(0, m, n)
    b = (a + rng.integers(1, m, n)) % m
    p = 1 / (1 + np.exp(-(beta[a] - beta[b])))
    u = rng.random(n)
    winner = np.where(u < p * 0.9, "A", np.where(u > 1 - (1 - p) * 0.9, "B", "tie"))
    names = [f"s{k}" for k in range(m)]
    rows = [{"system_a": names[x], "system_b": names[y], "winner": w} for x, y, w in zip(a, b, winner, strict=False)]
    result = rank_table(rows, bootstrap=rounds, seed=int(rng.integers(2**31)), fragility=False)
    by_name = {s["system"]: s for s in result["systems"]}
    low = np.array([by_name[s]["rank_low"] for s in names])
    high = np.array([by_name[s]["rank_high"] for s in names])
    tiers = len({s["tier"] for s in result["systems"]})
    return true_ranks(beta), low, high, tiers


SYSTEMS: int | None = None      # corrected path: None = 6-10 systems
QUESTIONS: int | None = None    # ... and 20-40 questions per pair


def corrected_world(rng, quality: float, rate: float):
    m = int(rng.integers(6, 11)) if SYSTEMS is None else SYSTEMS
    beta = rng.normal(0, 0.7, m)
    questions = int(rng.integers(20, 41)) if QUESTIONS is None else QUESTIONS
    ia, ib = np.triu_indices(m, 1)
    a, b = np.repeat(ia, questions), np.repeat(ib, questions)
    flip = rng.random(len(a)) < 0.5
    a, b = np.where(flip, b, a), np.where(flip, a, b)
    n = len(a)
    p_a = 1 / (1 + np.exp(-(beta[a] - beta[b])))
    u = rng.random(n)
    y = np.where(u < p_a * 0.9, 1.0, np.where(u > 1 - (1 - p_a) * 0.9, 0.0, 0.5))
    favourite = int(rng.integers(m))
    honest = rng.random(n) < quality
    fav_pick = np.where(a == favourite, 1.0, np.where(b == favourite, 0.0, np.nan))
    position = np.where(rng.random(n) < 2 / 3, 1.0, 0.0)
    f = np.where(honest, y, np.where(np.isnan(fav_pick), position, fav_pick))
    k = int(rate) if rate >= 1 else max(2, int(round(rate * n)))   # rate ≥ 1: that many audits
    audited = np.zeros(n, dtype=bool)
    audited[rng.choice(n, k, replace=False)] = True
    names = [str(s) for s in range(m)]
    est = ppi_bradley_terry(names, [names[x] for x in a], [names[x] for x in b], f,
                            design(np.where(audited, y, np.nan)))
    ri = from_covariance(est.beta, est.cov, level=est.level, df=est.df)
    return true_ranks(beta), ri.rank_low, ri.rank_high, int(ri.tier.max())


def accuracy_world(rng, quality: float, audits: int):
    """One yes/no world: (true ranks, pairwise and rank coverage before (normal) and now (Student-t))."""
    m = int(rng.integers(6, 11))
    acc = rng.uniform(0.3, 0.85, m)
    favourite = int(rng.integers(m))
    estimates = []
    for s in range(m):
        n = int(rng.integers(150, 401))
        y = (rng.random(n) < acc[s]).astype(float)
        lenient = 0.8 if s == favourite else 0.55
        f = np.where(rng.random(n) < quality, y, (rng.random(n) < lenient).astype(float))
        human = np.full(n, np.nan)
        take = rng.choice(n, audits, replace=False)
        human[take] = y[take]
        estimates.append(ppi_mean(f, design(human)))
    est = np.array([e.estimate for e in estimates])
    se = np.array([e.se for e in estimates])
    df = min((e.df for e in estimates if e.df > 0), default=0)
    truth = true_ranks(acc)
    i, j = np.triu_indices(m, 1)
    err = np.abs((est[i] - est[j]) - (acc[i] - acc[j])) / np.sqrt(se[i] ** 2 + se[j] ** 2)
    out = {}
    for name, d in (("before", 0), ("now", df)):
        ri = from_estimates(est, se, df=d)
        out[name] = (bool(np.all(err <= ri.crit)), bool(np.all((ri.rank_low <= truth) & (truth <= ri.rank_high))),
                     float(np.mean(ri.rank_high - ri.rank_low + 1)))
    return out


def report_accuracy(name: str, worlds: int, draw) -> None:
    sums = {k: np.zeros(3) for k in ("before", "now")}
    t0 = time.perf_counter()
    for _ in range(worlds):
        for k, v in draw().items():
            sums[k] += v
    text = "   ".join(f"{k}: pairwise {v[0] / worlds:6.1%} ranks {v[1] / worlds:6.1%} width {v[2] / worlds:4.2f}"
                       for k, v in sums.items())
    print(f"{name:<40} {text}   ({time.perf_counter() - t0:.0f} s)", flush=True)


def report(name: str, worlds: int, draw) -> dict:
    covered = width = n_tiers = 0.0
    t0 = time.perf_counter()
    for _ in range(worlds):
        truth, low, high, tiers = draw()
        covered += bool(np.all((low <= truth) & (truth <= high)))
        width += float(np.mean(high - low + 1))
        n_tiers += tiers
    secs = time.perf_counter() - t0
    row = {"setting": name, "worlds": worlds, "simultaneous coverage": covered / worlds,
           "mean width (ranks)": width / worlds, "mean tiers": n_tiers / worlds, "seconds": secs}
    print(f"{name:<46} coverage {row['simultaneous coverage']:6.1%}   mean width {row['mean width (ranks)']:5.2f}"
          f"   tiers {row['mean tiers']:4.1f}   ({secs:.0f} s)", flush=True)
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--worlds", type=int, default=500)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rounds", type=int, default=200, help="bootstrap rounds of the judge-only path")
    ap.add_argument("--only-accuracy", action="store_true", help="only the corrected accuracy path")
    ap.add_argument("--only-corrected", action="store_true", help="only the corrected Bradley-Terry path")
    ap.add_argument("--systems", type=int, default=None, help="systems of the corrected path's worlds")
    ap.add_argument("--questions", type=int, default=None, help="questions per pair of the corrected path")
    args = ap.parse_args()
    global SYSTEMS, QUESTIONS
    SYSTEMS, QUESTIONS = args.systems, args.questions
    rng = np.random.default_rng(args.seed)
    print(f"{args.worlds} worlds per setting, seed {args.seed}; 95% simultaneous rank intervals\n")
    if not args.only_corrected:
        judge_only_and_accuracy(args, rng)
    print("\ncorrected by audits (PPI++ covariance, max-t):")
    for quality, rate in ((0.6, 0.10), (0.8, 0.10), (0.8, 0.05), (0.6, 0.20), (0.8, 16)):
        what = f"{rate} audits in all" if rate >= 1 else f"{rate:.0%} audited"
        report(f"  judge copies humans {quality:.0%}, {what}", args.worlds,
               lambda q=quality, r=rate: corrected_world(rng, q, r))


def judge_only_and_accuracy(args, rng) -> None:
    print("corrected accuracy (PPI++ per system, max-t; critical value before: normal, now: Student-t):")
    for quality, audits in ((0.6, 10), (0.8, 10), (0.6, 20), (0.8, 40)):
        report_accuracy(f"  judge copies people {quality:.0%}, {audits} audits/system", args.worlds,
                        lambda q=quality, k=audits: accuracy_world(rng, q, k))
    if args.only_accuracy:
        raise SystemExit(0)
    print()
    print("judge-only Bradley-Terry (bootstrap over comparisons, max-t):")
    for spread in (0.3, 1.0):
        report(f"  β spread {spread}, {args.rounds} bootstrap rounds", args.worlds,
               lambda s=spread: judge_only_world(rng, s, args.rounds))


if __name__ == "__main__":
    main()
