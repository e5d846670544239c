"""Corrected accuracy (PPI++ mean) under the active queue's unequal inclusion probabilities: coverage of
the 95% intervals at 20, 50 and 100 audits, the interval before and now side by side.

World. One system's ``N`` answers with a true accuracy drawn from U(0.3, 0.85) (the truth is that
accuracy, as in bench/bench_corrected.py); the judge gives the people's label with probability ``q``,
otherwise "yes" with probability 0.55. Three other yes/no judges of the family label the same answers:

* ``others``: each gives the people's label 80% of the time, else the other one;
* ``shared``: each repeats this judge's label half the time (errors the family shares, so the active
  queue sees no disagreement on them), else the people's label 85% of the time.

Audits: the active queue of ``lsqa.stats.sampling`` (yes/no items: its uncertainty is the share of
the other judges that disagree): ``π ∝ τ + uncertainty`` with ``τ = ACTIVE_UNIFORM_SHARE``, scaled to
the expected number of audits and capped at 1, a Poisson sample (``U < π``), weights ``1/π``.

Intervals. *now*: ``ppi_mean`` as shipped (Student-t on the effective audits, ``(Σw²)²/Σw⁴`` per
stratum, less the strata and λ). *before*: the same estimate and standard error with the t quantile
on ``audits − strata − 1`` degrees of freedom (the count of audits, as before the change). A last row
checks that equal probabilities give the same interval as before.

    nice .venv/bin/python bench/bench_corrected_unequal_pi.py --worlds 2000 --seed 0
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lsqa.stats.corrected import _z, design, ppi_mean  # noqa: E402
from lsqa.stats.sampling import ACTIVE_UNIFORM_SHARE  # noqa: E402

OTHER_JUDGES = 3


def world(rng, n_items: int, audits: int, quality: float, kind: str):
    """Truth, the judge's outcomes, the people's labels on the drawn answers and their π."""
    truth = rng.uniform(0.3, 0.85)
    y = (rng.random(n_items) < truth).astype(float)
    f = np.where(rng.random(n_items) < quality, y, (rng.random(n_items) < 0.55).astype(float))
    if kind == "others":
        others = [np.where(rng.random(n_items) < 0.8, y, 1 - y) for _ in range(OTHER_JUDGES)]
    elif kind == "shared":
        others = [np.where(rng.random(n_items) < 0.5, f, np.where(rng.random(n_items) < 0.85, y, 1 - y))
                  for _ in range(OTHER_JUDGES)]
    else:  # "equal": uniform random audits
        others = None
    if others is None:
        score = np.ones(n_items)
    else:
        score = ACTIVE_UNIFORM_SHARE + np.mean([o != f for o in others], axis=0)
    pi = np.minimum(1.0, audits * score / score.sum())
    drawn = rng.random(n_items) < pi
    return truth, f, np.where(drawn, y, np.nan), np.where(drawn, pi, np.nan)


def cell(rng, worlds: int, n_items: int, audits: int, quality: float, kind: str) -> dict:
    hit_now = hit_before = 0
    width_now, width_before, same = [], [], 0
    for _ in range(worlds):
        truth, f, human, pi = world(rng, n_items, audits, quality, kind)
        est = ppi_mean(f, design(human, pi))
        n_aud = est.n_audited
        df_before = max(1, n_aud - 1 - 1) if 1 < n_aud < n_items else 0
        half = _z(0.95, df_before) * est.se
        low, high = est.estimate - half, est.estimate + half
        hit_now += est.ci_low <= truth <= est.ci_high
        hit_before += low <= truth <= high
        width_now.append(est.ci_high - est.ci_low)
        width_before.append(high - low)
        same += abs((est.ci_high - est.ci_low) - (high - low)) < 1e-12
    wn, wb = np.array(width_now), np.array(width_before)
    return {"kind": kind, "items": n_items, "audits": audits, "quality": quality, "worlds": worlds,
            "before": hit_before / worlds, "now": hit_now / worlds, "width_before": float(np.mean(wb)),
            "width_now": float(np.mean(wn)), "median_ratio": float(np.median(wn / wb)), "same": same / worlds}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--worlds", type=int, default=1000, help="worlds per cell (>= 500 for the figures)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--items", type=int, nargs="+", default=[300, 1000])
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    t0 = time.perf_counter()
    print(f"{args.worlds} worlds per cell, seed {args.seed}; coverage of the 95% interval of the corrected accuracy")
    print(f"{'world':<8}{'items':>6}{'q':>5}{'audits':>7}{'before':>9}{'now':>8}{'width before':>14}"
          f"{'width now':>11}{'median now/before':>19}")
    rows = []
    for kind in ("others", "shared"):
        for n_items in args.items:
            for quality in (0.4, 0.6, 0.8):
                for audits in (20, 50, 100):
                    r = cell(rng, args.worlds, n_items, audits, quality, kind)
                    rows.append(r)
                    print(f"{kind:<8}{n_items:>6}{quality:>5}{audits:>7}{r['before']:>9.3f}{r['now']:>8.3f}"
                          f"{r['width_before']:>14.3f}{r['width_now']:>11.3f}{r['median_ratio']:>19.3f}", flush=True)
    for audits in (20, 50, 100):
        r = cell(rng, args.worlds, args.items[0], audits, 0.6, "equal")
        print(f"{'equal':<8}{args.items[0]:>6}{0.6:>5}{audits:>7}{r['before']:>9.3f}{r['now']:>8.3f}"
              f"{r['width_before']:>14.3f}{r['width_now']:>11.3f}{r['median_ratio']:>19.3f}"
              f"   same interval in {r['same']:.1%} of worlds", flush=True)
    for label, key in (("before", "before"), ("now", "now")):
        for audits in (20, 50, 100):
            cov = [r[key] for r in rows if r["audits"] == audits]
            print(f"{label:>6}, {audits:>3} audits: coverage {min(cov):.3f}-{max(cov):.3f} over {len(cov)} cells")
    print(f"total {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
