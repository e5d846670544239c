"""Simulation bench of ``lsqa certify`` re-checked after every batch of audits: does the gate keep false
certification at most 2.5% however often a team looks, still certify a good judge, and do the "about N
more audits" it suggests decide it?

Each world is a population of 20,000 yes/no verdicts, the people's "yes" share drawn from [0.3, 0.7],
and a judge that is wrong on exactly (1 − a) of them, at random (its recall of each label is then about
``a`` too). Audits arrive one by one, either

- **random**: a simple random sample without replacement (equal π), or
- **active**: draws with probability ∝ 0.25 + the judge's uncertainty (uniform on [0.3, 1] where it is
  wrong, [0, 0.5] where it is right, so its errors are drawn about twice as often), each weighed 1/π:
  unequal weights, correlated with the judge's errors (Kish effective size about 0.8 n).

A team re-runs the gate after every ``step`` audits (10 or 50) up to 1,000 and stops at the first
decision ("replaceable" or "not replaceable"). The gate is ``lsqa.stats.certification.certify_audits``
with the defaults of ``lsqa certify`` (agreement ≥ 0.90, each recall ≥ 0.80, level 0.95), the function
the command calls, under its rule (``sequence``: the anytime-valid confidence sequence) and, side by
side, the fixed-n Clopper-Pearson bounds it used before (``fixed-n``). A judge whose true agreement is
0.88, 0.89 or 0.90 is not replaceable: certifying it is a false certification (target ≤ 2.5%). A
95%-accurate judge should be certified by 1,000 audits in ≥ 95% of worlds.

The advice: a 95% (and a 93%) judge, random audits; after ``--first`` audits, if undecided, the gate
suggests N more (80% probability under the same rule); the team audits exactly N more and checks once:
decided in ≥ 80% of those worlds is the target for the 95% judge (the 93% one, nearer the threshold,
shows where the advice is weaker).

The same worlds (seeded per world) are used for both rules. Default run, about 25 minutes of one core:

    .venv/bin/python bench/bench_certify_sequential.py --worlds 500 --seed 0
"""

from __future__ import annotations

import argparse
import time
from collections import Counter

import numpy as np

from lsqa.stats.certification import FIXED_N, NOT_REPLACEABLE, REPLACEABLE, SEQUENCE, UNDECIDED, certify_audits

POPULATION = 20_000
MAX_AUDITS = 1_000
LABELS = ("yes", "no")
FALSE_TRUTHS = (0.88, 0.89, 0.90)
GOOD = 0.95


def world(rng, agreement: float):
    """People's and the judge's labels of one population, and where the judge is wrong."""
    people = np.where(rng.random(POPULATION) < rng.uniform(0.3, 0.7), "yes", "no")
    wrong = np.zeros(POPULATION, dtype=bool)
    wrong[rng.choice(POPULATION, size=round((1 - agreement) * POPULATION), replace=False)] = True
    judge = np.where(wrong, np.where(people == "yes", "no", "yes"), people)
    return people, judge, wrong


def stream(rng, wrong, design: str, n: int):
    """The first ``n`` audits in order (indices) and their inclusion probabilities."""
    if design == "random":
        return rng.permutation(POPULATION)[:n], np.full(n, n / POPULATION)
    score = 0.25 + np.where(wrong, rng.uniform(0.3, 1.0, POPULATION), rng.uniform(0.0, 0.5, POPULATION))
    p = score / score.sum()
    idx = rng.choice(POPULATION, size=n, p=p)                   # draws one by one, ∝ score
    return idx, np.minimum(1.0, n * p[idx])


def recheck(seed: int, design: str, agreement: float, step: int, rule: str):
    """One world re-checked every ``step`` audits: (verdict at the first decision or undecided, audits then)."""
    rng = np.random.default_rng(seed)
    people, judge, wrong = world(rng, agreement)
    idx, pi = stream(rng, wrong, design, MAX_AUDITS)
    for n in range(step, MAX_AUDITS + 1, step):
        r = certify_audits(judge[idx[:n]], people[idx[:n]], pi[:n], LABELS, gate_all=True, rule=rule,
                           population=POPULATION, advise=False)
        if r["verdict"] != UNDECIDED:
            return r["verdict"], n
    return UNDECIDED, MAX_AUDITS


def follow_advice(seed: int, agreement: float, first: int, rule: str):
    """Undecided after ``first`` random audits → (suggested N, verdict after exactly N more); None when decided
    already or no N is given."""
    rng = np.random.default_rng(seed)
    people, judge, wrong = world(rng, agreement)
    order = rng.permutation(POPULATION)
    pi = np.full(POPULATION, 0.05)
    r = certify_audits(judge[order[:first]], people[order[:first]], pi[:first], LABELS, gate_all=True, rule=rule,
                       population=POPULATION)
    if r["verdict"] != UNDECIDED or r["audits_needed"] is None:
        return None
    n = first + r["audits_needed"]
    r2 = certify_audits(judge[order[:n]], people[order[:n]], pi[:n], LABELS, gate_all=True, rule=rule,
                        population=POPULATION, advise=False)
    return r["audits_needed"], r2["verdict"]


def sequences(worlds: int, seed: int) -> dict:
    """The choice of sequence, on the agreement alone (i.i.d. audits, a look every 10 up to 1,000, 0.90 the
    threshold): how often each one-sided rule at 2.5% ever puts its lower bound at or above 0.90. The
    gate's mixture (uniform prior beyond the bound) against a mixture whose prior is Beta(45, 5) beyond it
    (concentrated near the bound) and a betting sequence (aGRAPA bets, Waudby-Smith & Ramdas 2024)."""
    from scipy.special import betainc, betaln

    looks = np.arange(10, MAX_AUDITS + 1, 10)
    cut = np.log(1 / 0.025)

    def mixture(s, n, a, b):           # prior Beta(a, b) truncated to [0.9, 1]
        f = n - s
        return (betaln(s + a, f + b) + np.log(betainc(f + b, s + a, 0.1)) - betaln(a, b)
                - np.log(betainc(b, a, 0.1)) - s * np.log(0.9) - f * np.log(0.1))

    out = {}
    for truth in (0.88, 0.90, 0.93, 0.95):
        rng = np.random.default_rng(seed + int(truth * 100))
        x = (rng.random((worlds, MAX_AUDITS)) < truth).astype(float)
        s = np.cumsum(x, axis=1)[:, looks - 1]
        rows = {"mixture, uniform beyond (the gate)": mixture(s, looks, 1, 1) >= cut,
                "mixture, Beta(45, 5) beyond": mixture(s, looks, 45, 5) >= cut}
        log_k, mean, var, total = np.zeros(worlds), np.full(worlds, 0.5), np.full(worlds, 0.25), np.zeros(worlds)
        crossed = np.zeros((worlds, len(looks)), dtype=bool)
        for t in range(MAX_AUDITS):
            d = mean - 0.9
            bet = np.clip(d / (var + d * d), 0, 0.5 / 0.9)
            log_k += np.log1p(bet * (x[:, t] - 0.9))
            total += x[:, t]
            mean = (0.5 + total) / (t + 2)
            var = (0.25 + total * (1 - mean) ** 2 + (t + 1 - total) * mean ** 2) / (t + 2)
            if (t + 1) % 10 == 0:
                crossed[:, (t + 1) // 10 - 1] = log_k >= cut
        rows["betting (aGRAPA)"] = crossed
        out[truth] = {name: (hit.any(axis=1).mean(), np.median(looks[hit.argmax(axis=1)][hit.any(axis=1)])
                             if hit.any() else None) for name, hit in rows.items()}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worlds", type=int, default=500, help="worlds per row (500)")
    parser.add_argument("--advice-worlds", type=int, default=500, help="worlds per advice row (500)")
    parser.add_argument("--seed", type=int, default=0, help="world k of a row uses seed + k (0)")
    parser.add_argument("--steps", default="10,50", help="audits between looks (10,50)")
    parser.add_argument("--designs", default="random,active", help="random,active")
    parser.add_argument("--first", type=int, default=50, help="audits before following the advice (50)")
    args = parser.parse_args()
    start = time.perf_counter()
    ok = True
    print(f"{args.worlds} worlds per row, seeds {args.seed}..{args.seed + args.worlds - 1}; re-checked every `step` "
          f"audits up to {MAX_AUDITS}, stopping at the first decision")
    print(f"{'design':7} {'step':>4} {'judge':>6} {'rule':8} {'certified':>10} {'not repl.':>10} {'undecided':>10} "
          f"{'median audits to certify':>25}")
    for design in args.designs.split(","):
        for step in (int(s) for s in args.steps.split(",")):
            for agreement in (*FALSE_TRUTHS, GOOD):
                for rule in (SEQUENCE, FIXED_N):
                    runs = [recheck(args.seed + k, design, agreement, step, rule) for k in range(args.worlds)]
                    counts = Counter(v for v, _ in runs)
                    share = {v: counts[v] / args.worlds for v in (REPLACEABLE, NOT_REPLACEABLE, UNDECIDED)}
                    at = [n for v, n in runs if v == REPLACEABLE]
                    print(f"{design:7} {step:4} {agreement:6.0%} {rule:8} {share[REPLACEABLE]:10.1%} "
                          f"{share[NOT_REPLACEABLE]:10.1%} {share[UNDECIDED]:10.1%} "
                          f"{int(np.median(at)) if at else '—':>25}", flush=True)
                    if rule == SEQUENCE:
                        ok &= share[REPLACEABLE] <= 0.025 if agreement in FALSE_TRUTHS else share[REPLACEABLE] >= 0.95
    print(f"\nadvice: random audits, undecided after {args.first}: suggested N more, then exactly N more audited and "
          f"checked once ({args.advice_worlds} worlds, seeds {args.seed + 10_000}..)")
    for agreement in (GOOD, 0.93):
        for rule in (SEQUENCE, FIXED_N):
            runs = [follow_advice(args.seed + 10_000 + k, agreement, args.first, rule) for k in range(args.advice_worlds)]
            runs = [r for r in runs if r is not None]
            if not runs:
                print(f"judge {agreement:.0%} {rule:8}: never undecided with a suggestion after {args.first}")
                continue
            needed = [n for n, _ in runs]
            after = Counter(v for _, v in runs)
            decided = 1 - after[UNDECIDED] / len(runs)
            print(f"judge {agreement:.0%} {rule:8}: undecided with a suggestion in {len(runs)} worlds, suggested median "
                  f"{int(np.median(needed))} more ({min(needed)}-{max(needed)}); after them decided in {decided:.1%} "
                  f"({after[REPLACEABLE]} replaceable, {after[NOT_REPLACEABLE]} not)", flush=True)
            if rule == SEQUENCE and agreement == GOOD:        # the target; 93% shows where the advice is weaker
                ok &= decided >= 0.8
    print(f"\nchoice of sequence: agreement alone, i.i.d. audits, a look every 10 up to {MAX_AUDITS}, threshold 0.90 "
          f"({args.worlds} worlds per truth, seed {args.seed} + 100 × truth): share ever certified (median audits)")
    for truth, rows in sequences(args.worlds, args.seed).items():
        print(f"truth {truth:.2f}: " + "; ".join(f"{name} {share:.1%} ({'—' if at is None else int(at)})"
                                                 for name, (share, at) in rows.items()))
    print(f"\ntargets (sequence: false certification ≤ 2.5% at 0.88-0.90, ≥ 95% certified at 0.95, ≥ 80% decided "
          f"after the advice): {'met' if ok else 'NOT MET'}; {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
