"""Fragility of each adjacent pair (``lsqa.stats.fragility``): what it costs a ranking, new beside old.

For each setting, simulated verdicts (β ~ N(0, 1) sorted, a random pair per verdict, the outcome from
eq. 1 with 10% ties, seed stated) are counted into cells as a workspace's are
(``ranking.counts_from_cells``), then timed in CPU seconds (``time.process_time``; the machine is
shared, so wall time says more about the neighbours than about lsqa), best of ``--repeat``:

* ``old``: ``adjacent_fragility`` of the code at ``--old`` (a git revision: its ``ranking.py`` and
  ``fragility.py`` loaded side by side with this tree's), on settings up to ``--old-max-systems``
  systems (beyond, one run takes many minutes: "—"), one run;
* ``new``: this tree's ``adjacent_fragility`` (every adjacent pair, removals and label changes, to
  swap and to make inseparable); ``same``: the swap numbers equal old's;
* ``rank``: ``reports.rank_counts`` with 1,000 bootstrap rounds and without the fragility (what
  ``lsqa rank --workspace`` computes after reading), the yardstick.

BLAS is pinned to one thread (as bench_ranking.py does): on this 2-core shared machine threaded
OpenBLAS spends ~7× the CPU on the batched 100×100 solves, for rank and fragility alike.

    nice .venv/bin/python bench/bench_fragility.py [--repeat 2] [--seed 0] [--old 4939542]
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import importlib  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from lsqa.stats import fragility  # noqa: E402
from lsqa.stats.ranking import counts_from_cells, fit_bradley_terry  # noqa: E402
from lsqa.stats.reports import rank_counts  # noqa: E402

SETTINGS = [("paper: 7 systems, 4,200 verdicts", 7, 4_200), ("Arena size: 20 systems, 57,477", 20, 57_477),
            ("Arena size: 64 systems, 57,477", 64, 57_477), ("Arena size: 100 systems, 57,477", 100, 57_477),
            ("1M verdicts, 20 systems", 20, 1_000_000), ("1M verdicts, 100 systems", 100, 1_000_000)]


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


def old_module(rev: str):
    """``fragility`` as it was at ``rev``, importing the ``ranking`` of ``rev`` (None without git)."""
    tmp = Path(tempfile.mkdtemp(prefix="lsqa-old-"))
    try:
        for name in ("ranking", "fragility"):
            src = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:lsqa/stats/{name}.py"], check=True,
                                 capture_output=True, text=True).stdout
            (tmp / f"old_{name}.py").write_text(src.replace("from lsqa.stats.ranking import", "from old_ranking import"))
    except (OSError, subprocess.CalledProcessError) as err:
        print(f"old code at {rev!r} not available ({err}); only the new column is timed")
        return None
    sys.path.insert(0, str(tmp))
    return importlib.import_module("old_fragility")


def best_of(repeat: int, f):
    times, out = [], None
    for _ in range(repeat):
        t = time.process_time()
        out = f()
        times.append(time.process_time() - t)
    return min(times), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--old", default="4939542", help="git revision of the code to compare with")
    ap.add_argument("--old-max-systems", type=int, default=64)
    args = ap.parse_args()
    old = old_module(args.old)
    print(f"seed {args.seed}, CPU seconds, best of {args.repeat}; old = {args.old}; bootstrap 1,000 rounds; "
          f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')}; load {os.getloadavg()[0]:.1f}")
    print(f"{'setting':34} {'old':>8} {'new':>7} {'old/new':>8} {'same':>5} {'rank':>7}  "
          "drop (median, min) flip (median, min) inseparable: already; drop, flip (median)")
    for name, m, n in SETTINGS:
        data = world(m, n, args.seed)
        fit = fit_bradley_terry(data)
        t_new, res = best_of(args.repeat, lambda data=data, fit=fit: fragility.adjacent_fragility(data, fit))
        t_rank, _ = best_of(args.repeat, lambda data=data: rank_counts(data, bootstrap=1000, fragility=False))
        t_old = same = None
        if old is not None and m <= args.old_max_systems:
            t_old, res_old = best_of(1, lambda data=data, fit=fit: old.adjacent_fragility(data, fit))
            same = [(r.drop, r.flip) for r in res_old] == [(r.drop, r.flip) for r in res]
        drops = [r.drop for r in res if r.drop is not None]
        flips = [r.flip for r in res if r.flip is not None]
        insep = [(r.inseparable_drop, r.inseparable_flip) for r in res if r.inseparable_drop is not None]
        cols = (f"{t_old:7.2f}s {t_new:6.2f}s {t_old / t_new:7.1f}× {'yes' if same else 'NO':>5}" if t_old is not None
                else f"{'—':>8} {t_new:6.2f}s {'—':>8} {'—':>5}")
        print(f"{name:34} {cols} {t_rank:6.2f}s  "
              f"{int(np.median(drops)):,}, {min(drops):,}{'':8} {int(np.median(flips)):,}, {min(flips):,}{'':8} "
              f"{sum(a == 0 for a, _ in insep)}/{len(res)}; "
              f"{int(np.median([a for a, _ in insep])):,}, {int(np.median([b for _, b in insep])):,}", flush=True)


if __name__ == "__main__":
    main()
