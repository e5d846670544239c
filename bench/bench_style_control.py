"""Style control (issue 30): does it recover the people's order when the judge prefers longer answers?

Simulated worlds with known truth. A world has 4-6 systems whose people's strengths β are evenly
spaced 0.5 apart (the people's order), each writing answers of its own typical length, longest for
the *weakest* systems (the adversarial case: length and quality pull apart); an answer's length in
words is its system's typical length times log-normal noise (σ = 0.5). 1,000 comparisons of random
pairs, decisive (ties, counted as half a win each, would shrink every estimate toward 0, the
coefficient included, so its CI could not be checked against the true ``c``); the judge decides with

    logit P(A wins) = β_A − β_B + c · (len_A − len_B) / (len_A + len_B)

with ``c`` = the judge's length preference (0: none, as people). Per setting the bench prints the
share of worlds where the plain Bradley-Terry order (``lsqa.stats.reports.rank_table``) and the
style-controlled order (``lsqa.stats.style_control``) equal the people's order (all of it, every
system in its place), the mean Kendall τ
of each against it, the mean estimated coefficient and how often its 95% bootstrap CI (200 rounds)
covers the true ``c``: the bootstrap's (over cells) and the sandwich's (the default of ``style_table``),
and how often the style-controlled 95% simultaneous rank intervals (sandwich / bootstrap) hold every
system's true rank at once. ``--systems 100 --comparisons 20000`` runs the same at 100 systems (β spaced
0.05 apart, lengths 40·1.5^U(0,4)).

    nice .venv/bin/python bench/bench_style_control.py [--worlds 500] [--seed 0] [--systems 100 --comparisons 20000]

``LSQA_BENCH_ROOT`` points it at another checkout's ``lsqa`` (the before/after figures; a checkout without
sandwich intervals prints "—" for them).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
from scipy.stats import kendalltau

sys.path.insert(0, os.environ.get("LSQA_BENCH_ROOT") or str(Path(__file__).resolve().parents[1]))

from lsqa.stats.rank_intervals import from_bootstrap  # noqa: E402
from lsqa.stats.reports import rank_table  # noqa: E402
from lsqa.stats.style_control import bootstrap_style_controlled, fit_style_controlled, style_data  # noqa: E402

try:
    from lsqa.stats.rank_intervals import from_covariance  # noqa: E402
    from lsqa.stats.style_control import style_sandwich  # noqa: E402
except ImportError:          # a checkout from before the sandwich intervals
    style_sandwich = None

N_COMPARISONS = 1000
ROUNDS = 200
SYSTEMS: int | None = None    # None: 4-6 per world


def world(rng, c: float):
    m = int(rng.integers(4, 7)) if SYSTEMS is None else SYSTEMS
    if SYSTEMS is None:
        beta = 0.5 * (m - 1 - np.arange(m))            # system 0 strongest
        typical = 40 * 1.5 ** np.arange(m)            # ... and the weakest writes the longest answers
    else:
        beta = 0.05 * (m - 1 - np.arange(m))
        typical = 40 * 1.5 ** (4 * np.arange(m) / (m - 1))
    perm = rng.permutation(m)                     # names carry no order
    beta, typical = beta[perm], typical[perm]
    a = rng.integers(0, m, N_COMPARISONS)
    b = (a + rng.integers(1, m, N_COMPARISONS)) % m
    len_a = np.maximum(1, np.round(typical[a] * rng.lognormal(0, 0.5, N_COMPARISONS)))
    len_b = np.maximum(1, np.round(typical[b] * rng.lognormal(0, 0.5, N_COMPARISONS)))
    d = (len_a - len_b) / (len_a + len_b)
    p = 1 / (1 + np.exp(-(beta[a] - beta[b] + c * d)))
    winner = np.where(rng.random(N_COMPARISONS) < p, "A", "B")
    names = [f"s{k}" for k in range(m)]
    rows = [{"system_a": names[x], "system_b": names[y], "winner": w, "len_a": la, "len_b": lb}
            for x, y, w, la, lb in zip(a, b, winner, len_a, len_b, strict=False)]
    return names, beta, rows


def run(worlds: int, seed: int, c: float) -> dict:
    rng = np.random.default_rng(seed)
    plain_ok = style_ok = covered = covered_sw = ranks_sw = ranks_boot = 0
    tau_plain, tau_style, coefs = [], [], []
    for _ in range(worlds):
        names, beta, rows = world(rng, c)
        truth = dict(zip(names, beta, strict=False))
        people = sorted(names, key=lambda s: -truth[s])
        plain = rank_table(rows, bootstrap=0, fragility=False)
        plain_order = [s["system"] for s in plain["systems"]]
        data = style_data([r["system_a"] for r in rows], [r["system_b"] for r in rows], [r["winner"] for r in rows],
                          [r["len_a"] for r in rows], [r["len_b"] for r in rows], systems=names)
        fit = fit_style_controlled(data)
        style_order = sorted(names, key=lambda s: -fit.beta[names.index(s)])
        ci = bootstrap_style_controlled(data, rounds=ROUNDS, seed=int(rng.integers(2**31)))
        true_rank = 1 + np.argsort(np.argsort(-beta, kind="stable"), kind="stable")
        ri = from_bootstrap(fit.beta, ci.samples)
        ranks_boot += bool(np.all((ri.rank_low <= true_rank) & (true_rank <= ri.rank_high)))
        if style_sandwich is not None:
            sw = style_sandwich(data, fit)
            half = 1.959963984540054 * np.sqrt(sw.coef_cov[0, 0])
            covered_sw += fit.coef - half <= c <= fit.coef + half
            ri = from_covariance(fit.beta, sw.beta_cov)
            ranks_sw += bool(np.all((ri.rank_low <= true_rank) & (true_rank <= ri.rank_high)))
        plain_ok += plain_order == people
        style_ok += style_order == people
        tau_plain.append(kendalltau([truth[s] for s in names], [-plain_order.index(s) for s in names])[0])
        tau_style.append(kendalltau([truth[s] for s in names], fit.beta)[0])
        coefs.append(fit.coef)
        covered += ci.coef_low <= c <= ci.coef_high
    return {"plain": plain_ok / worlds, "style": style_ok / worlds, "tau_plain": float(np.mean(tau_plain)),
            "tau_style": float(np.mean(tau_style)), "coef": float(np.mean(coefs)), "coverage": covered / worlds,
            "coverage_sw": covered_sw / worlds if style_sandwich else None, "ranks_boot": ranks_boot / worlds,
            "ranks_sw": ranks_sw / worlds if style_sandwich else None}


def main() -> None:
    global SYSTEMS, N_COMPARISONS, ROUNDS
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worlds", type=int, default=500)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--systems", type=int, default=None, help="systems per world (default 4-6)")
    parser.add_argument("--comparisons", type=int, default=N_COMPARISONS)
    parser.add_argument("--rounds", type=int, default=ROUNDS, help="bootstrap rounds per world")
    parser.add_argument("--preferences", default="0,2,4", help="the judge's length preferences c to simulate")
    args = parser.parse_args()
    SYSTEMS, N_COMPARISONS, ROUNDS = args.systems, args.comparisons, args.rounds
    print(f"{args.worlds} worlds per setting, seed {args.seed}; {N_COMPARISONS} comparisons per world, "
          f"{args.systems or '4-6'} systems, CI of the coefficient from {ROUNDS} bootstrap rounds and the sandwich")
    print(f"{'judge length preference c':>26}  {'people order: plain':>19}  {'style-controlled':>16}  "
          f"{'tau plain':>9}  {'tau style':>9}  {'mean c-hat':>10}  {'CI covers c':>11}  {'sandwich':>8}  "
          f"{'ranks boot':>10}  {'ranks sandwich':>14}  {'s/world':>7}")
    for k, c in enumerate(float(x) for x in args.preferences.split(",")):
        t = time.perf_counter()
        r = run(args.worlds, args.seed + k, c)
        per = (time.perf_counter() - t) / args.worlds
        print(f"{c:>26.1f}  {r['plain']:>19.1%}  {r['style']:>16.1%}  {r['tau_plain']:>9.3f}  {r['tau_style']:>9.3f}"
              f"  {r['coef']:>10.2f}  {r['coverage']:>11.1%}  {_pct(r['coverage_sw']):>8}  {r['ranks_boot']:>10.1%}"
              f"  {_pct(r['ranks_sw']):>14}  {per:>7.3f}", flush=True)


def _pct(x) -> str:
    return "—" if x is None else f"{x:.1%}"


if __name__ == "__main__":
    main()
