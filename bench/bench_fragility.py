"""Fragility of each adjacent pair (``lsqa.stats.fragility``): what it costs a ranking.

For each setting, simulated verdicts (β ~ N(0, 1) sorted, a random pair per verdict, the outcome from
eq. 1 with 10% ties, seed stated) are counted into cells as a workspace's are
(``ranking.counts_from_cells``), then timed:

* ``fragility``: ``adjacent_fragility`` alone (every adjacent pair, removals and label changes), best
  of ``--repeat`` runs, with the refits it made;
* ``rank``: ``reports.rank_counts`` with 1,000 bootstrap rounds (what ``lsqa rank --workspace``
  computes after reading), without and with the fragility, best of ``--repeat``.

Settings: the paper's design (7 systems, 200 questions × 21 pairs = 4,200 verdicts), Chatbot Arena's
size in Huang et al. 2025 (57,477 verdicts; 20 and 64 systems) and 1M verdicts among 20 systems.

    nice .venv/bin/python bench/bench_fragility.py [--repeat 3] [--seed 0]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lsqa.stats import fragility  # noqa: E402
from lsqa.stats.ranking import counts_from_cells, fit_bradley_terry  # noqa: E402
from lsqa.stats.reports import rank_counts  # noqa: E402

SETTINGS = [("paper: 7 systems, 4,200 verdicts", 7, 4_200), ("Arena size: 20 systems, 57,477", 20, 57_477),
            ("Arena size: 64 systems, 57,477", 64, 57_477), ("1M verdicts, 20 systems", 20, 1_000_000)]


def world(m: int, n: int, seed: int):
    rng = np.random.default_rng(seed)
    beta = np.sort(rng.normal(0.0, 1.0, m))[::-1]
    a = rng.integers(0, m, n)
    b = rng.integers(0, m - 1, n)
    b = b + (b >= a)
    p = 1.0 / (1.0 + np.exp(-(beta[a] - beta[b])))
    code = np.where(rng.random(n) < 0.1, 2, np.where(rng.random(n) < p, 0, 1))
    # one cell per (a, b, outcome), as the workspace's SQL count gives them
    key = (a * m + b) * 3 + code
    uniq, n_cell = np.unique(key, return_counts=True)
    return counts_from_cells([f"s{k:02d}" for k in range(m)], uniq // 3 // m, uniq // 3 % m, uniq % 3, n_cell)


def best_of(repeat: int, f):
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - t)
    return min(times), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    print(f"seed {args.seed}, best of {args.repeat}; bootstrap 1,000 rounds over comparisons")
    print(f"{'setting':36} {'fragility':>10} {'rank':>8} {'rank+fragility':>15}  drop (median, min) flip (median, min)")
    for name, m, n in SETTINGS:
        data = world(m, n, args.seed)
        fit = fit_bradley_terry(data)
        t_frag, res = best_of(args.repeat, lambda: fragility.adjacent_fragility(data, fit))
        t_rank, _ = best_of(args.repeat, lambda: rank_counts(data, bootstrap=1000, fragility=False))
        t_both, _ = best_of(args.repeat, lambda: rank_counts(data, bootstrap=1000, fragility=True))
        drops = [r.drop for r in res if r.drop is not None]
        flips = [r.flip for r in res if r.flip is not None]
        print(f"{name:36} {t_frag:9.2f}s {t_rank:7.2f}s {t_both:14.2f}s  "
              f"{int(np.median(drops)):,}, {min(drops):,}{'':8} {int(np.median(flips)):,}, {min(flips):,}")


if __name__ == "__main__":
    main()
