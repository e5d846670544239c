"""Benchmark: Bradley-Terry + 1,000 bootstrap rounds (lsqa.stats.ranking) against raw-row refitting.

Run:  .venv/bin/python bench/bench_ranking.py          (about 1-2 minutes on 2 cores)

Two scales, synthetic outcomes drawn from known strengths (seeded):
  (a) paper scale: 7 systems x 200 questions x all 21 pairs = 4,200 comparisons (§3.2, c = 200)
  (b) arena scale: 1,000,000 comparisons among 100 systems

Methods, each doing one point fit plus 1,000 percentile-bootstrap rounds:
  lsqa      aggregate raw rows once into per-pair cell counts; each round is a multinomial draw
            over the cells; all rounds fitted together by the batched Newton solver.
  raw-LR    the baseline: what arena-style tools did before aggregating. Each round resamples the
            raw rows with replacement and refits Bradley-Terry by logistic regression on those
            rows (scipy L-BFGS on the per-row log-likelihood, ties = half a win).
  raw-W     a middle ground, for reference: resample raw rows, aggregate them into W, fit W with
            lsqa's solver (one round at a time).
Baselines on (b) time only a few rounds and extrapolate linearly to 1,000 (printed as such).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

# One BLAS thread for every method (set before numpy loads): on a small shared machine, OpenBLAS
# threads spin against other processes and make batched small solves erratic. Override by
# exporting OPENBLAS_NUM_THREADS yourself.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402
from scipy.optimize import minimize  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lsqa.stats.ranking import (  # noqa: E402
    bootstrap_bradley_terry,
    count_comparisons,
    counts_from_win_matrix,
    fit_bradley_terry,
)

ROUNDS = 1000
TARGET_PAPER_S = 0.3
TARGET_ARENA_S = 15.0
TARGET_SPEEDUP = 50.0


# --------------------------------------------------------------------------------------------
# Synthetic data
# --------------------------------------------------------------------------------------------


def paper_scale(seed=0):
    """7 systems, 200 questions, every pair on every question; 5% 'none', 5% ties."""
    rng = np.random.default_rng(seed)
    m, q = 7, 200
    beta = rng.normal(0, 0.8, m)
    i, j = np.triu_indices(m, 1)
    a = np.repeat(i, q)
    b = np.repeat(j, q)
    qid = np.tile(np.arange(q), len(i))
    flip = rng.random(a.size) < 0.5            # randomised presentation order (§3.2)
    a, b = np.where(flip, b, a), np.where(flip, a, b)
    return _outcomes(rng, beta, a, b, qid, none_rate=0.05, tie_rate=0.05)


def arena_scale(seed=0, n=1_000_000, m=100):
    rng = np.random.default_rng(seed)
    beta = rng.normal(0, 1.0, m)
    a = rng.integers(0, m, n)
    b = (a + rng.integers(1, m, n)) % m
    return _outcomes(rng, beta, a, b, None, none_rate=0.0, tie_rate=0.1)


def _outcomes(rng, beta, a, b, qid, none_rate, tie_rate):
    p = 1 / (1 + np.exp(beta[b] - beta[a]))
    u = rng.random(a.size)
    win = np.where(rng.random(a.size) < p, "A", "B")
    winner = np.where(u < none_rate, "none", np.where(u < none_rate + tie_rate, "tie", win))
    names = np.array([f"sys{k:03d}" for k in range(len(beta))])
    return dict(system_a=names[a].tolist(), system_b=names[b].tolist(), winner=winner.tolist(),
                question_id=None if qid is None else qid.tolist(), beta=beta)


# --------------------------------------------------------------------------------------------
# Baselines
# --------------------------------------------------------------------------------------------


def _raw_arrays(rows):
    """Raw rows as index arrays: ia, ib, y (1 = a won, 0 = b won, 0.5 = tie), 'none' dropped."""
    names = sorted(set(rows["system_a"]) | set(rows["system_b"]))
    idx = {s: k for k, s in enumerate(names)}
    ia = np.array([idx[s] for s in rows["system_a"]])
    ib = np.array([idx[s] for s in rows["system_b"]])
    w = np.array(rows["winner"])
    keep = w != "none"
    y = np.where(w == "A", 1.0, np.where(w == "B", 0.0, 0.5))
    return len(names), ia[keep], ib[keep], y[keep]


def fit_raw_lr(m, ia, ib, y, x0=None):
    """Bradley-Terry as logistic regression on raw rows (L-BFGS), β centred to mean 0."""

    def f(beta):
        d = beta[ia] - beta[ib]
        s = 1 / (1 + np.exp(-d))
        nll = np.sum(np.logaddexp(0, d) - y * d)
        g_row = s - y
        grad = np.bincount(ia, g_row, minlength=m) - np.bincount(ib, g_row, minlength=m)
        return nll, grad

    res = minimize(f, np.zeros(m) if x0 is None else x0, jac=True, method="L-BFGS-B",
                   options=dict(maxiter=1000, gtol=1e-8, ftol=1e-14))
    return res.x - res.x.mean()


def bootstrap_raw_lr(m, ia, ib, y, rounds, seed):
    rng = np.random.default_rng(seed)
    out = np.empty((rounds, m))
    n = ia.size
    for r in range(rounds):
        pick = rng.integers(0, n, n)
        out[r] = fit_raw_lr(m, ia[pick], ib[pick], y[pick])
    return out


def bootstrap_raw_w(m, ia, ib, y, rounds, seed):
    rng = np.random.default_rng(seed)
    out = np.empty((rounds, m))
    n = ia.size
    for r in range(rounds):
        pick = rng.integers(0, n, n)
        a, b, yy = ia[pick], ib[pick], y[pick]
        W = np.bincount(a * m + b, yy, minlength=m * m) + np.bincount(b * m + a, 1 - yy, minlength=m * m)
        out[r] = fit_bradley_terry(counts_from_win_matrix(W.reshape(m, m))).beta
    return out


# --------------------------------------------------------------------------------------------
# Timing
# --------------------------------------------------------------------------------------------


def timed(fn, *args, **kw):
    t0 = time.perf_counter()
    out = fn(*args, **kw)
    return out, time.perf_counter() - t0


def run_lsqa(rows, rounds, seed, by_question=False):
    t0 = time.perf_counter()
    data = count_comparisons(rows["system_a"], rows["system_b"], rows["winner"],
                             question_id=rows["question_id"] if by_question else None)
    t1 = time.perf_counter()
    fit = fit_bradley_terry(data)
    t2 = time.perf_counter()
    ci = bootstrap_bradley_terry(data, rounds=rounds, seed=seed, by_question=by_question)
    t3 = time.perf_counter()
    return data, fit, ci, dict(aggregate=t1 - t0, fit=t2 - t1, bootstrap=t3 - t2, total=t3 - t0)


def scenario(label, rows, baseline_rounds, seed=0, by_question_too=False):
    print(f"\n=== {label}: {len(rows['winner']):,} comparisons, {len(rows['beta'])} systems ===")
    run_lsqa(rows, 5, seed)  # warm-up (imports, BLAS threads)
    data, fit, ci, t = run_lsqa(rows, ROUNDS, seed)
    print(f"lsqa     aggregate {t['aggregate']:.3f} s + fit {t['fit'] * 1000:.1f} ms + "
          f"{ROUNDS} rounds {t['bootstrap']:.3f} s = {t['total']:.3f} s")
    result = dict(label=label, n=len(rows["winner"]), m=len(rows["beta"]), lsqa=t)
    if by_question_too:
        _, _, _, tq = run_lsqa(rows, ROUNDS, seed, by_question=True)
        print(f"lsqa     --by-question: {tq['total']:.3f} s total ({ROUNDS} rounds)")
        result["lsqa_by_question"] = tq

    m, ia, ib, y = _raw_arrays(rows)
    # Baseline point fit + rounds (extrapolated if fewer than ROUNDS).
    ref_fit, t_fit = timed(fit_raw_lr, m, ia, ib, y)
    samples, t_boot = timed(bootstrap_raw_lr, m, ia, ib, y, baseline_rounds, seed)
    per_1000 = t_fit + t_boot * ROUNDS / baseline_rounds
    note = ("" if baseline_rounds == ROUNDS
            else f"  (timed {baseline_rounds} rounds, x{ROUNDS // baseline_rounds} extrapolated)")
    print(f"raw-LR   fit {t_fit:.3f} s + {baseline_rounds} rounds {t_boot:.3f} s -> {per_1000:.2f} s for "
          f"{ROUNDS} rounds{note}")
    _, t_w = timed(bootstrap_raw_w, m, ia, ib, y, baseline_rounds, seed)
    per_1000_w = t_w * ROUNDS / baseline_rounds
    print(f"raw-W    {baseline_rounds} rounds {t_w:.3f} s -> {per_1000_w:.2f} s for {ROUNDS} rounds{note}")

    # Same estimator? Compare point estimates (names sorted in the baseline, first-seen in lsqa).
    names = sorted(set(rows["system_a"]) | set(rows["system_b"]))
    ours = np.array([fit.beta[fit.index(s)] for s in names])
    print(f"check    |beta_lsqa - beta_rawLR| max = {np.max(np.abs(ours - ref_fit)):.1e}; "
          f"lsqa fallback-prior rounds: {ci.n_fallback_rounds}")
    if baseline_rounds == ROUNDS:
        lo, hi = np.quantile(samples, [0.025, 0.975], axis=0)
        ours_w = np.array([(ci.beta_high - ci.beta_low)[fit.index(s)] for s in names])
        rel = np.median(np.abs(ours_w - (hi - lo)) / (hi - lo))
        print(f"check    CI widths lsqa vs raw-LR bootstrap: median relative difference {rel:.1%} "
              f"(Monte Carlo noise of two independent 1,000-round bootstraps)")
    speed = per_1000 / t["total"]
    speed_w = per_1000_w / t["total"]
    print(f"speed-up lsqa vs raw-LR: {speed:.0f}x;  vs raw-W: {speed_w:.1f}x")
    result.update(raw_lr=per_1000, raw_w=per_1000_w, speedup=speed, speedup_w=speed_w,
                  baseline_rounds=baseline_rounds)
    return result


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arena-baseline-rounds", type=int, default=20)
    ap.add_argument("--paper-baseline-rounds", type=int, default=ROUNDS)
    args = ap.parse_args(argv)
    print(f"python {platform.python_version()}, numpy {np.__version__}, {os.cpu_count()} cores, "
          f"{platform.machine()}, OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')}; "
          f"{ROUNDS} bootstrap rounds; seed 0")
    t_all = time.perf_counter()
    a = scenario("(a) paper scale", paper_scale(0), args.paper_baseline_rounds, by_question_too=True)
    b = scenario("(b) arena scale", arena_scale(0), args.arena_baseline_rounds)
    print("\n=== targets ===")
    checks = [
        (f"(a) lsqa total < {TARGET_PAPER_S} s", a["lsqa"]["total"] < TARGET_PAPER_S, f"{a['lsqa']['total']:.3f} s"),
        (f"(b) lsqa total < {TARGET_ARENA_S} s", b["lsqa"]["total"] < TARGET_ARENA_S, f"{b['lsqa']['total']:.2f} s"),
        (f"(b) >= {TARGET_SPEEDUP:.0f}x faster than raw-LR", b["speedup"] >= TARGET_SPEEDUP, f"{b['speedup']:.0f}x"),
    ]
    for name, ok, value in checks:
        print(f"{'PASS' if ok else 'FAIL'}  {name}: {value}")
    print(f"\nbench wall time {time.perf_counter() - t_all:.0f} s")
    return 0 if all(ok for _, ok, _ in checks) else 1


if __name__ == "__main__":
    raise SystemExit(main())
