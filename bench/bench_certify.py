"""Simulation bench of ``lsqa certify`` (issue 30, item 4): does the verdict say ``replaceable`` for a
judge that agrees with people 95% of the time, given 400 random audits, in at least 90% of worlds,
and never for a judge at 75%? And do the "about N more audits" it gives when undecided decide it?

Each world is a population of 4,000 verdicts with a people's label each and a judge that is right
with probability ``a`` (its errors spread evenly over the other labels): yes/no worlds with a share of
people's "yes" drawn from [0.3, 0.7], side-by-side worlds with outcomes A / B / tie drawn around
40 / 40 / 20%. From it 400 audits are drawn: a simple random sample (π = 400 / 4,000 each), or an
active-style Poisson sample with π ∝ 0.25 + the judge's uncertainty (higher on the verdicts it gets
wrong) and expected size 400, weighted 1/π. The verdict is ``lsqa.stats.certification.certify_audits``
with the defaults of ``lsqa certify`` (agreement lower bound ≥ 90%, every gated recall ≥ 80%, 95%
intervals), the same function the command calls, under its rule (``--rule sequence``: bounds valid at
every look) or the fixed-n Clopper-Pearson bounds it used before (``--rule fixed-n``). The ≥ 90% target
was set for the fixed-n bounds at this one look; bench/bench_certify_sequential.py checks the gate as
teams use it, re-checked after every batch.

    .venv/bin/python bench/bench_certify.py --worlds 500 --seed 0 [--rule fixed-n]
"""

from __future__ import annotations

import argparse
import time
from collections import Counter

import numpy as np

from lsqa.stats.certification import NOT_REPLACEABLE, REPLACEABLE, RULES, SEQUENCE, UNDECIDED, certify_audits

POPULATION = 4_000
YES_NO = ("yes", "no")
SIDE_BY_SIDE = ("A", "B", "tie", "none")


def world(rng, family: str, agreement: float):
    """People's labels and the judge's for one population of verdicts."""
    if family == "yes/no":
        p_yes = rng.uniform(0.3, 0.7)
        people = np.where(rng.random(POPULATION) < p_yes, "yes", "no")
        labels = YES_NO
    else:
        shares = rng.dirichlet([40, 40, 20])
        people = rng.choice(["A", "B", "tie"], size=POPULATION, p=shares)
        labels = SIDE_BY_SIDE
    wrong = rng.random(POPULATION) >= agreement
    given = np.array(YES_NO if family == "yes/no" else ("A", "B", "tie"))
    position = np.searchsorted(np.sort(given), people)           # the people's label among the sorted ones
    shift = rng.integers(1, len(given), POPULATION)                 # an error: any other label, evenly
    judge = np.where(wrong, np.sort(given)[(position + shift) % len(given)], people)
    return people, judge, labels, wrong


def draw(rng, wrong, design: str, n: int):
    """Indices of the audited verdicts and their inclusion probabilities."""
    if design == "random":
        idx = rng.choice(POPULATION, size=n, replace=False)
        return idx, np.full(n, n / POPULATION)
    uncertainty = np.where(wrong, rng.uniform(0.3, 1.0, POPULATION), rng.uniform(0.0, 0.5, POPULATION))
    score = 0.25 + uncertainty
    pi = np.minimum(1.0, n * score / score.sum())
    idx = np.flatnonzero(rng.random(POPULATION) < pi)
    return idx, pi[idx]


def run(worlds: int, seed: int, audits: int, rule: str) -> dict:
    rng = np.random.default_rng(seed)
    out = {}
    for family in ("yes/no", "side by side"):
        for design in ("random", "active"):
            for agreement in (0.95, 0.75):
                verdicts = Counter()
                for _ in range(worlds):
                    people, judge, labels, wrong = world(rng, family, agreement)
                    idx, pi = draw(rng, wrong, design, audits)
                    r = certify_audits(judge[idx], people[idx], pi, labels, gate_all=family == "yes/no",
                                       population=POPULATION, rule=rule, advise=False)
                    verdicts[r["verdict"]] += 1
                out[(family, design, agreement)] = verdicts
    return out


def follow_advice(worlds: int, seed: int, first: int, rule: str) -> dict:
    """Yes/no worlds at 95%, random audits: undecided after ``first`` audits, then the suggested number
    more drawn from the same population: how often is it then decided, and how?"""
    rng = np.random.default_rng(seed + 1)
    undecided, after, needed = 0, Counter(), []
    for _ in range(worlds):
        people, judge, labels, wrong = world(rng, "yes/no", 0.95)
        order = rng.permutation(POPULATION)
        r = certify_audits(judge[order[:first]], people[order[:first]], np.full(first, first / POPULATION), labels,
                           gate_all=True, population=POPULATION, rule=rule)
        if r["verdict"] != UNDECIDED or r["audits_needed"] is None:
            continue
        undecided += 1
        n = first + r["audits_needed"]
        needed.append(r["audits_needed"])
        r2 = certify_audits(judge[order[:n]], people[order[:n]], np.full(n, n / POPULATION), labels, gate_all=True,
                            population=POPULATION, rule=rule, advise=False)
        after[r2["verdict"]] += 1
    return {"undecided": undecided, "after": after, "needed": needed}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worlds", type=int, default=500)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--audits", type=int, default=400)
    parser.add_argument("--first", type=int, default=60, help="audits before following the advice")
    parser.add_argument("--rule", default=SEQUENCE, choices=sorted(RULES), help="the bounds (default: the gate's)")
    args = parser.parse_args()
    start = time.perf_counter()
    table = run(args.worlds, args.seed, args.audits, args.rule)
    print(f"{args.worlds} worlds per row, seed {args.seed}, {args.audits} audits (expected, active); bounds: "
          f"{RULES[args.rule]}")
    print(f"{'family':14} {'design':7} {'judge':>6} {'replaceable':>12} {'not repl.':>10} {'undecided':>10}")
    ok = True
    for (family, design, agreement), v in table.items():
        share = {k: v[k] / args.worlds for k in (REPLACEABLE, NOT_REPLACEABLE, UNDECIDED)}
        print(f"{family:14} {design:7} {agreement:6.0%} {share[REPLACEABLE]:12.1%} {share[NOT_REPLACEABLE]:10.1%} "
              f"{share[UNDECIDED]:10.1%}")
        if design == "random":
            ok &= share[REPLACEABLE] >= 0.9 if agreement == 0.95 else v[REPLACEABLE] == 0
    advice = follow_advice(args.worlds, args.seed, args.first, args.rule)
    decided = sum(advice["after"][k] for k in (REPLACEABLE, NOT_REPLACEABLE))
    if advice["undecided"]:
        print(f"yes/no at 95%, {args.first} random audits: undecided in {advice['undecided']} worlds, suggested "
              f"median {int(np.median(advice['needed']))} more (range {min(advice['needed'])}-{max(advice['needed'])}); "
              f"after drawing them decided in {decided / advice['undecided']:.1%} "
              f"({advice['after'][REPLACEABLE]} replaceable, {advice['after'][NOT_REPLACEABLE]} not)")
    print(f"targets (random audits: ≥ 90% replaceable at 95%, never at 75%): {'met' if ok else 'NOT MET'}; "
          f"{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
