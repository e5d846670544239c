"""Can this judge replace the annotators? A verdict from the audits.

Evidence, per verdict (the people's label of a verdict is compared with the judge's label on that
verdict, never with an item's label collapsed over references or judges):

- **Agreement and per-label recall** from the audits whose inclusion probability π is known (random
  or active queue, or imported with a probability: :mod:`lsqa.stats.sampling`), one design per
  judge as in :mod:`lsqa.figures.corrected`, with the sampling record the store gives each
  audited verdict (:func:`lsqa.store.verdicts.sampled_human_labels`). The people's label of an audit
  is the verdict's **final human label** (the ``final_human_labels`` view): the adjudicated label
  when an adjudicator set one, else the label most of the people gave; a tie nobody adjudicated
  has none and is left out (:data:`NO_ADJUDICATION`, docs/statistics.md). Each audit weighs 1/π
  (Hájek), so an active queue's over-sampled hard verdicts count for what they represent. Recall of
  a label L is the share of the verdicts people labelled L that the judge labelled L too (yes/no: the
  true-positive and true-negative rates; side by side: each outcome).
- **Bounds valid at every look.** Teams re-run the verdict after every batch of audits, so each
  bound is one end of a *confidence sequence* (Robbins 1970; Howard, Ramdas, McAuliffe & Sekhon
  2021, "Time-uniform, nonparametric, nonasymptotic confidence sequences"): a one-sided beta-binomial
  mixture, the likelihood ratio against the bound averaged over a uniform prior beyond it, a
  nonnegative supermartingale, so by Ville's inequality the bound is wrong at *any* number of audits
  with probability at most (1 − level)/2 — however often, and whenever, one looks. With unequal
  weights the share and its effective successes are taken on the Kish effective size (Σw)²/Σw², as
  in Korn & Graubard's fixed-n interval (1998); bench/bench_certify_sequential.py checks both
  designs. There a betting sequence (Waudby-Smith & Ramdas 2024, JRSS-B) certified a little less
  often and depends on the order of the audits; the mixture uses only the counts.
- **Several criteria at once.** ``replaceable`` needs every lower bound to pass: it is an
  intersection-union test (Berger 1982), wrong only if some criterion that truly fails its
  threshold has its lower bound cross it, which each sequence allows with probability ≤ (1 − level)/2,
  so no split of the error is needed. ``not replaceable`` needs any one upper bound below its
  threshold: a union, so its error is at most the number of criteria times (1 − level)/2 (measured
  far lower: the mixture bounds are conservative).
- **The people's ceiling**: on verdicts two or more people labelled (the double-annotation overlap,
  :mod:`lsqa.audit.double_annotation`), how often people agree with each other, and how often the
  judge agrees with them on the same verdicts. Descriptive (fixed-n Clopper-Pearson intervals): those
  verdicts come from any queue.
- **The Alternative Annotator Test** (Calderon, Reichart & Dror, ACL 2025, "The Alternative Annotator
  Test for LLM-as-a-Judge", https://aclanthology.org/2025.acl-long.782/; procedure as in the authors'
  code, github.com/nitaytech/AltTest) where at least three people labelled the same verdicts: leave
  one annotator j out; on each verdict j labelled with at least one other person, score the judge
  and j by their agreement with the others (accuracy); W_f = 1 when the judge scores at least as
  high as j, W_h = 1 when j scores at least as high as the judge; a one-sided one-sample t-test of
  d = W_h − W_f against ε (H1: mean d < ε, i.e. the judge's advantage probability exceeds j's minus
  ε); the Benjamini-Yekutieli procedure at q over the annotators' p-values; the winning rate ω is the
  share of annotators rejected (the judge "wins"); ω ≥ 0.5 passes. Annotators with fewer than 30
  such verdicts are left out (the paper's minimum for the t-test). ε = 0.15 by default, the paper's
  rule of thumb for skilled annotators (0.2 experts, 0.1 crowd workers).

The verdict: ``replaceable`` when the lower bound of the agreement reaches ``min_agreement`` and the
lower bound of every gated recall reaches ``min_recall`` (both labels of a yes/no judge; for side by
side each outcome the people gave in the audits) and the alternative annotator test, if it ran,
passed; ``not replaceable`` when an upper bound falls below its threshold or the test ran and failed;
otherwise ``undecided``, with about how many more random audits would decide it with 80%
probability under the same bounds, taking the current rates as the truth
(:func:`audits_to_decide`).
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import asdict, dataclass

import numpy as np

from lsqa.stats.corrected import POWER
from lsqa.text import numbers

REPLACEABLE, NOT_REPLACEABLE, UNDECIDED = "replaceable", "not replaceable", "undecided"
VERDICTS = (REPLACEABLE, NOT_REPLACEABLE, UNDECIDED)
NO_ADJUDICATION = ("the people's label of each audited verdict is its final label: adjudicated, else the people's "
                   "majority; a tie nobody adjudicated is left out (docs/statistics.md)")


@dataclass(frozen=True)
class Thresholds:
    """What a judge must show to be called replaceable (the defaults are stated in docs/statistics.md)."""

    min_agreement: float = 0.90           # lower bound of its agreement with people
    min_recall: float = 0.80              # lower bound of each gated per-label recall
    level: float = 0.95                   # of every interval
    epsilon: float = 0.15                 # alt-test: the judge's cost-benefit allowance (paper: skilled annotators)
    fdr_q: float = 0.05                   # alt-test: Benjamini-Yekutieli level
    min_items_per_annotator: int = 30     # alt-test: the t-test's minimum per annotator (paper)

    def check(self) -> Thresholds:
        """Itself, or ValueError naming the threshold and what to give instead."""
        for name in ("min_agreement", "min_recall"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not 0 < value <= 1 or math.isnan(value):
                raise ValueError(f"--{name.replace('_', '-')} {value!r} is not a share; give a number in (0, 1], "
                                 f"e.g. {getattr(Thresholds, name)}")
        if not 0.5 <= self.level < 1:
            raise ValueError(f"--level {self.level!r} is outside [0.5, 1); use e.g. 0.95")
        if not 0 <= self.epsilon < 1:
            raise ValueError(f"--epsilon {self.epsilon!r} is outside [0, 1); use 0.1 (crowd workers), 0.15 (skilled) "
                             "or 0.2 (experts), as Calderon et al. suggest")
        if not 0 < self.fdr_q < 1:
            raise ValueError(f"the FDR level {self.fdr_q!r} is outside (0, 1); use e.g. 0.05")
        if self.min_items_per_annotator < 2:
            raise ValueError("min-items-per-annotator must be at least 2; use 30, the paper's minimum")
        return self


# ------------------------------------------------------------------------------ intervals

SEQUENCE, FIXED_N = "sequence", "fixed-n"
RULES = {
    SEQUENCE: "anytime-valid confidence sequence: a one-sided beta-binomial mixture per bound (uniform prior "
              "beyond the bound; Robbins 1970, Howard et al. 2021) on the Kish effective number of audits, each "
              "bound at half of 1 − level, so re-checking after every batch keeps its error",
    FIXED_N: "fixed-n Clopper-Pearson on the Kish effective number of audits (valid for one look only)",
}
PLANNING_QUANTILE = 0.4  # of each recall's Jeffreys posterior, for "about N more audits" (bench_certify_sequential)
DRAWS = 2_000           # simulated futures behind "about N more audits" (a fixed seed: the same answer each time)


def clopper_pearson(successes: float, n: float, level: float = 0.95) -> tuple[float, float]:
    """Clopper-Pearson interval of a proportion; ``successes`` and ``n`` may be fractional (an
    effective sample size), as in Korn & Graubard's interval for survey data. Valid at one fixed n."""
    from scipy.stats import beta

    if n <= 0:
        return 0.0, 1.0
    alpha = 1 - level
    x = min(max(successes, 0.0), n)
    low = 0.0 if x <= 0 else float(beta.ppf(alpha / 2, x, n - x + 1))
    high = 1.0 if x >= n else float(beta.ppf(1 - alpha / 2, x + 1, n - x))
    return low, high


def _log_mixture_above(successes, n, p0, slope: bool = False):
    """log M_n(p0), the one-sided Robbins mixture against H0: p ≤ p0 (Robbins 1970; Howard, Ramdas,
    McAuliffe & Sekhon 2021, "Time-uniform, nonparametric, nonasymptotic confidence sequences", the
    conjugate beta-binomial mixture): the likelihood ratio of Bernoulli(θ) to Bernoulli(p0) over the
    ``n`` trials, averaged over θ uniform on [p0, 1]. For every p ≤ p0 each factor has mean ≤ 1, so
    M is a nonnegative supermartingale from 1 and, by Ville's inequality, P(M_n ≥ 1/a at any n) ≤ a.
    Arrays broadcast; fractional counts (effective sizes) are allowed. ``slope``: also d log M / d p0."""
    from scipy.special import betainc, betaln, xlog1py, xlogy

    s = np.asarray(successes, dtype=float)
    f = np.asarray(n, dtype=float) - s
    p0 = np.asarray(p0, dtype=float)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        # ∫_{p0}^1 θ^s (1 − θ)^f dθ / (1 − p0) over p0^s (1 − p0)^f; betainc(f+1, s+1, 1 − p0) = 1 − I_{p0}(s+1, f+1)
        log_tail = betaln(s + 1, f + 1) + np.log(betainc(f + 1, s + 1, 1 - p0))
        log_at = xlogy(s, p0) + xlog1py(f, -p0)
        value = log_tail - np.log1p(-p0) - log_at
        if not slope:
            return value
        return value, -np.exp(log_at - log_tail) + (1 + f) / (1 - p0) - s / p0


def _low_passes(successes, n, threshold: float, level: float, rule: str):
    """Whether the lower bound reaches ``threshold`` (arrays): the test behind :func:`bounds`."""
    from scipy.special import betainc

    s, n = np.broadcast_arrays(np.asarray(successes, dtype=float), np.asarray(n, dtype=float))
    a = (1 - level) / 2
    if threshold <= 0:
        return np.ones(s.shape, dtype=bool)
    if threshold >= 1:
        return np.zeros(s.shape, dtype=bool)
    if rule == FIXED_N:             # Clopper-Pearson: low ≥ t ⇔ P(Beta(s, n − s + 1) ≤ t) ≤ a
        ok = s > 0
        out = np.zeros(s.shape, dtype=bool)
        out[ok] = betainc(s[ok], n[ok] - s[ok] + 1, threshold) <= a
        return out
    return (s > threshold * n) & (_log_mixture_above(s, n, threshold) >= np.log(1 / a))


def decides(successes, n, threshold: float, level: float, rule: str = SEQUENCE) -> tuple[np.ndarray, np.ndarray]:
    """(lower bound ≥ ``threshold``, upper bound < ``threshold``) for arrays of counts, without
    computing the bounds (upper bounds by symmetry: the upper bound of p is 1 − the lower of 1 − p)."""
    s, n = np.asarray(successes, dtype=float), np.asarray(n, dtype=float)
    # the upper bound is below 1 exactly when some trial failed (the failures' lower bound is then above 0)
    high = (n - s > 0) if threshold >= 1 else _low_passes(n - s, n, 1 - threshold, level, rule)
    return _low_passes(s, n, threshold, level, rule), high & (n > 0)


def _sequence_low(successes, n, level: float) -> np.ndarray:
    """Lower ends of the confidence sequence: sup{p0 : M_n(p0) ≥ 2/(1 − level)}, M falling as p0 rises
    to the share (where M ≤ 1): Newton's method kept inside a bracket [rejected, not rejected] (a
    bisection step when it would leave it), and the last point found rejected returned (≤ 1e-10 short)."""
    s, n = np.broadcast_arrays(np.asarray(successes, dtype=float), np.asarray(n, dtype=float))
    cut = np.log(2 / (1 - level))
    live = (s > 0) & (n > 0)
    share = np.where(live, s / np.where(live, n, 1), 0.5)
    lo, hi = np.zeros(s.shape), share.copy()
    x = np.clip(share - 3 * np.sqrt((share * (1 - share) + 1 / np.maximum(n, 1)) / np.maximum(n, 1)), share / 2, share)
    for _ in range(40):
        g, dg = _log_mixture_above(s, n, x, slope=True)
        rejected = g >= cut
        lo, hi = np.where(rejected, x, lo), np.where(rejected, hi, x)
        with np.errstate(divide="ignore", invalid="ignore"):
            step = x - (g - cut) / dg
        inside = np.isfinite(step) & (step > lo) & (step < hi)
        x, before = np.where(inside, step, (lo + hi) / 2), x
        if np.all((np.abs(x - before) < 1e-12) | ~live):
            break
    x = np.maximum(x - 1e-10, lo)           # make sure the value returned was itself rejected
    lo = np.where(_log_mixture_above(s, n, x) >= cut, x, lo)
    return np.where(live, lo, 0.0)


def bounds_many(successes, n, level: float = 0.95, rule: str = SEQUENCE) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper bounds of proportions from ``successes`` of ``n`` trials (arrays; fractional
    counts: effective sizes), each one-sided at (1 − level)/2: the confidence sequence (``SEQUENCE``:
    they hold at every n at once, however often the audits are re-checked) or Clopper-Pearson
    (``FIXED_N``). The upper bound of p is 1 − the lower bound of 1 − p. No trials: [0, 1]."""
    from scipy.stats import beta

    n = np.atleast_1d(np.asarray(n, dtype=float))
    s = np.clip(np.atleast_1d(np.asarray(successes, dtype=float)), 0.0, n)
    if rule == FIXED_N:
        a = (1 - level) / 2
        with np.errstate(invalid="ignore", divide="ignore"):
            low = np.where(s > 0, beta.ppf(a, np.maximum(s, 1e-300), n - s + 1), 0.0)
            high = np.where(s < n, beta.ppf(1 - a, s + 1, np.maximum(n - s, 1e-300)), 1.0)
    else:
        both = _sequence_low(np.concatenate([s, n - s]), np.concatenate([n, n]), level)
        low, high = both[:len(s)], 1 - both[len(s):]
    empty = n <= 0
    return np.where(empty, 0.0, low), np.where(empty, 1.0, high)


def bounds(successes: float, n: float, level: float = 0.95, rule: str = SEQUENCE) -> tuple[float, float]:
    """:func:`bounds_many` of one proportion."""
    low, high = bounds_many([successes], [n], level, rule)
    return float(low[0]), float(high[0])


def _kish(hits, weights) -> tuple[float, float]:
    """Hájek share Σw·hit / Σw and Kish effective size (Σw)²/Σw² of one group of audits."""
    return float(np.sum(weights * hits) / np.sum(weights)), float(np.sum(weights) ** 2 / np.sum(weights ** 2))


def weighted_shares(hits, weights, groups, level: float = 0.95, rule: str = SEQUENCE) -> list[dict]:
    """For each group (index array) of audits: the Hájek share with :func:`bounds_many` on the Kish
    effective size, the share times it standing for the successes (as in Korn & Graubard's interval)."""
    hits, w = np.asarray(hits, dtype=float), np.asarray(weights, dtype=float)
    stats = [_kish(hits[g], w[g]) if len(g) else (None, 0.0) for g in groups]
    full = [k for k, g in enumerate(groups) if len(g)]
    low, high = bounds_many([stats[k][0] * stats[k][1] for k in full], [stats[k][1] for k in full], level, rule) \
        if full else ([], [])
    out = [{"estimate": None, "ci_low": None, "ci_high": None, "n": 0, "n_effective": 0.0} for _ in groups]
    for k, lo, hi in zip(full, low, high, strict=False):
        out[k] = {"estimate": stats[k][0], "ci_low": float(lo), "ci_high": float(hi), "n": int(len(groups[k])),
                  "n_effective": stats[k][1]}
    return out


def weighted_share(hits, weights, level: float = 0.95, rule: str = SEQUENCE) -> dict:
    """:func:`weighted_shares` of all the audits given."""
    return weighted_shares(hits, weights, [np.arange(len(hits))], level, rule)[0]


def planning_rate(share: float, n_eff: float, q: float) -> float:
    """The ``q`` quantile of the Jeffreys posterior Beta(s + ½, n − s + ½) of a proportion (s = share ·
    n, the effective successes; Brown, Cai & DasGupta 2001): a planning value for the share that is
    kept off 0 and 1 (a run of audits that all agree does not promise that every later one will)
    and, away from the median, leans against the verdict as a pilot-based sample size should
    (Browne 1995, "On the use of a pilot sample for sample size determination")."""
    from scipy.stats import beta

    s = share * n_eff
    return float(beta.ppf(q, s + 0.5, n_eff - s + 0.5))


def audits_to_decide(hits, weights, human_labels, gated: list[str], thresholds: Thresholds, *, cap: int,
                     rule: str = SEQUENCE, power: float = POWER) -> int | None:
    """About how many more random audits would decide the verdict with probability ``power`` (as
    :func:`lsqa.stats.corrected.audits_to_separate` is an 80%-power figure): the smallest k (n + k ≤
    ``cap``) at which, taking the current estimates as the truth, the bounds of ``rule`` after the k-th
    more audit pass every threshold or put one below its threshold in at least ``power`` of
    :data:`DRAWS` simulated futures (seeded by k: the same answer every time). A future audit's
    people's label is drawn from the weighted shares of the labels so far, and the judge agrees with
    it at that label's recall, planned as :func:`planning_rate` at :data:`PLANNING_QUANTILE` (at 1 −
    it when a share is below its threshold, heading for "not replaceable"): the plain estimate makes
    the figure too small whenever it is luckier than the truth (after 50 audits of a 95% judge, 75-87%
    of worlds decided instead of 80%, bench/bench_certify_sequential.py). The audits so far stay, and
    each criterion's effective size grows as its raw count does. One look, at n + k: re-checking on
    the way only adds chances to decide. None when ``cap`` audits would not do."""
    hits, w = np.asarray(hits, dtype=float), np.asarray(weights, dtype=float)
    labels = np.asarray(human_labels, dtype=str)
    n = len(hits)
    if n == 0 or cap <= n:
        return None
    seen = np.unique(labels).tolist()
    share = np.array([w[labels == x].sum() for x in seen]) / w.sum()
    def now(mask):
        p, n_eff = _kish(hits[mask], w[mask])
        return p * n_eff, n_eff, int(mask.sum())

    criteria = [(None, *now(np.ones(n, dtype=bool)), thresholds.min_agreement)]
    criteria += [(seen.index(x), *now(labels == x), thresholds.min_recall) for x in gated]
    # heading up (every share at or above its threshold): plan with lower recalls; heading down: higher ones
    q = PLANNING_QUANTILE if all(s_eff >= thr * n_eff for _, s_eff, n_eff, _, thr in criteria) \
        else 1 - PLANNING_QUANTILE
    recall = np.array([planning_rate(*_kish(hits[labels == x], w[labels == x]), q) for x in seen])

    def p_decided(k: int) -> float:
        rng = np.random.default_rng(k)              # the same futures for the same k, whatever the search order
        counts = rng.multinomial(k, share, size=DRAWS)
        new_hits = rng.binomial(counts, recall)
        all_low, any_high = np.ones(DRAWS, dtype=bool), np.zeros(DRAWS, dtype=bool)
        for which, s_eff, n_eff, n_raw, thr in criteria:
            k_c, h_c = (counts.sum(axis=1), new_hits.sum(axis=1)) if which is None else \
                (counts[:, which], new_hits[:, which])
            scale = n_eff / n_raw                      # effective audits per raw audit, as so far
            low, high = decides(s_eff + scale * h_c, n_eff + scale * k_c, thr, thresholds.level, rule)
            all_low &= low
            any_high |= high
        return float(np.mean(all_low | any_high))

    if p_decided(cap - n) < power:
        return None
    lo, hi = 0, cap - n             # p_decided(hi) ≥ power; search the smallest such k
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if p_decided(mid) >= power else (mid, hi)
    return hi


# ------------------------------------------------------------------------------ the alt-test

def benjamini_yekutieli(p_values: list[float], q: float) -> list[bool]:
    """Which hypotheses the Benjamini-Yekutieli step-up procedure rejects at FDR level ``q``
    (valid under any dependence between the tests)."""
    m = len(p_values)
    if m == 0:
        return []
    harmonic = sum(1.0 / k for k in range(1, m + 1))
    order = sorted(range(m), key=lambda i: p_values[i])
    last = -1
    for rank, i in enumerate(order, start=1):
        if p_values[i] <= rank / m * q / harmonic:
            last = rank
    rejected = set(order[:last]) if last > 0 else set()
    return [i in rejected for i in range(m)]


def _one_sided_p(d: np.ndarray, epsilon: float) -> float:
    """p-value of H0: mean(d) ≥ ε against H1: mean(d) < ε (one-sample t-test). When every d is the
    same the t statistic is undefined: the sample then says the mean outright (p 0 or 1)."""
    from scipy.stats import ttest_1samp

    if np.all(d == d[0]):
        return 0.0 if d[0] < epsilon else 1.0
    return float(ttest_1samp(d, epsilon, alternative="less").pvalue)


def alt_test(judge_labels: dict, people: dict[str, dict], *, epsilon: float = Thresholds.epsilon,
             q: float = Thresholds.fdr_q, min_items: int = Thresholds.min_items_per_annotator) -> dict | None:
    """The Alternative Annotator Test (module docstring) of a judge's labels (``verdict → label``)
    against ``people`` (``annotator → {verdict → label}``); None when fewer than three annotators
    have ``min_items`` verdicts labelled by the judge and at least one other person."""
    by_verdict: dict = defaultdict(dict)
    for who, labels in people.items():
        for v, label in labels.items():
            if v in judge_labels:
                by_verdict[v][who] = label
    shared = {v: h for v, h in by_verdict.items() if len(h) >= 2}
    tested = []
    for who in sorted(people):
        mine = [v for v, h in shared.items() if who in h]
        if len(mine) < min_items:
            continue
        w_f, w_h = [], []
        for v in mine:
            others = [label for other, label in shared[v].items() if other != who]
            judge_score = sum(judge_labels[v] == o for o in others) / len(others)
            human_score = sum(shared[v][who] == o for o in others) / len(others)
            w_f.append(1.0 if judge_score >= human_score else 0.0)
            w_h.append(1.0 if human_score >= judge_score else 0.0)
        d = np.array(w_h) - np.array(w_f)
        tested.append({"annotator": who, "n": len(mine), "judge_advantage": float(np.mean(w_f)),
                       "annotator_advantage": float(np.mean(w_h)), "p_value": _one_sided_p(d, epsilon)})
    if len(tested) < 3:
        return None
    won = benjamini_yekutieli([t["p_value"] for t in tested], q)
    for t, w in zip(tested, won, strict=False):
        t["judge_wins"] = bool(w)
    omega = sum(won) / len(tested)
    return {"epsilon": epsilon, "fdr_q": q, "winning_rate": omega, "passed": omega >= 0.5,
            "advantage_probability": float(np.mean([t["judge_advantage"] for t in tested])),
            "n_annotators": len(tested), "n_verdicts": len({v for v, h in shared.items()
                                                             if any(t["annotator"] in h for t in tested)}),
            "annotators": tested}


# ------------------------------------------------------------------------------ the people's ceiling

def ceiling(judge_labels: dict, people: dict[str, dict], level: float = 0.95) -> dict | None:
    """On the verdicts two or more people labelled: the mean share of agreeing pairs of people, and
    of people agreeing with the judge, per verdict (intervals treat each verdict as one trial)."""
    by_verdict: dict = defaultdict(list)
    for labels in people.values():
        for v, label in labels.items():
            if v in judge_labels:
                by_verdict[v].append(label)
    shared = {v: ls for v, ls in by_verdict.items() if len(ls) >= 2}
    if not shared:
        return None
    pair_shares, judge_shares = [], []
    for v, ls in shared.items():
        pairs = [(a, b) for i, a in enumerate(ls) for b in ls[i + 1:]]
        pair_shares.append(sum(a == b for a, b in pairs) / len(pairs))
        judge_shares.append(sum(judge_labels[v] == x for x in ls) / len(ls))
    n = len(shared)
    people_share, judge_share = float(np.mean(pair_shares)), float(np.mean(judge_shares))
    p_low, p_high = clopper_pearson(people_share * n, n, level)
    j_low, j_high = clopper_pearson(judge_share * n, n, level)
    return {"n_verdicts": n, "n_annotators": len([a for a, ls in people.items() if set(ls) & set(shared)]),
            "people": {"estimate": people_share, "ci_low": p_low, "ci_high": p_high},
            "judge": {"estimate": judge_share, "ci_low": j_low, "ci_high": j_high}}


# ------------------------------------------------------------------------------ the verdict

def certify_audits(judge_labels, human_labels, inclusion_probs, labels: tuple[str, ...], *, gate_all: bool,
                   thresholds: Thresholds = Thresholds(), population: int | None = None, rule: str = SEQUENCE,
                   advise: bool = True) -> dict:
    """Agreement, per-label recall, verdict and audits needed from audited verdicts alone (the
    numerics the workspace reader and the benches share).

    ``judge_labels[k]``, ``human_labels[k]``: the judge's and the people's label of audit k;
    ``inclusion_probs[k]``: its π. ``labels``: the kind's labels in order; ``gate_all``: every label
    gates (a yes/no judge) rather than only those people gave. ``population``: how many verdicts
    could be audited at all (caps ``audits_needed``). ``rule``: ``SEQUENCE`` (the gate: bounds valid
    at every look) or ``FIXED_N`` (Clopper-Pearson, for comparison in bench/bench_certify_sequential.py);
    ``advise=False`` skips ``audits_needed`` (None), which simulates futures.
    """
    t = thresholds.check()
    if rule not in RULES:
        raise ValueError(f"unknown certification rule {rule!r}; use one of {', '.join(RULES)}")
    said = np.asarray(judge_labels if isinstance(judge_labels, np.ndarray) else list(judge_labels), dtype=str)
    people = np.asarray(human_labels if isinstance(human_labels, np.ndarray) else list(human_labels), dtype=str)
    n = len(people)
    w = 1.0 / np.asarray(inclusion_probs, dtype=float) if n else np.zeros(0)
    hits = (said == people).astype(float)
    judge_said = dict(zip(*np.unique(said, return_counts=True), strict=False))
    groups = [np.arange(n)] + [np.flatnonzero(people == label) if n else np.zeros(0, dtype=int) for label in labels]
    agreement, *shares = weighted_shares(hits, w, groups, t.level, rule)
    criteria = []            # (name, share, n_eff, low, high, threshold)
    if n:
        criteria.append(("agreement", agreement["estimate"], agreement["n_effective"], agreement["ci_low"],
                         agreement["ci_high"], t.min_agreement))
    per_label = []
    gated_seen: list[str] = []
    reasons: list[str] = []
    seen = set(np.unique(people).tolist())
    for label, idx, share in zip(labels, groups[1:], shares, strict=False):
        gated = gate_all or label in seen
        row = {"label": label, "n": share["n"], "recall": share["estimate"], "ci_low": share["ci_low"],
               "ci_high": share["ci_high"], "n_effective": share["n_effective"], "gated": gated,
               "judge_said": int(judge_said.get(label, 0))}
        per_label.append(row)
        if gated and len(idx):
            gated_seen.append(label)
            criteria.append((f"recall of {label!r}", share["estimate"], share["n_effective"], share["ci_low"],
                             share["ci_high"], t.min_recall))
        elif gated and n:
            reasons.append(f"no audit where people said {label!r} yet: its recall is unknown")
    failing = [c for c in criteria if c[4] < c[5]]
    passing = [c for c in criteria if c[3] >= c[5]]
    untested = n and gate_all and any(r["n"] == 0 for r in per_label)
    if not n:
        verdict = UNDECIDED
        reasons.insert(0, "no random or active audits of this judge yet: draw some from the random queue "
                          "(Audit page) and review them in order")
    elif failing:
        verdict = NOT_REPLACEABLE
        reasons[:0] = [f"{name} {numbers.percent(share)}: even its upper bound {numbers.percent(high)} is below {thr:.0%}"
                       for name, share, _, _, high, thr in failing]
    elif len(passing) == len(criteria) and not untested:
        verdict = REPLACEABLE
        reasons[:0] = [f"{name} {numbers.percent(share)}: its lower bound {numbers.percent(low)} reaches {thr:.0%}"
                       for name, share, _, low, _, thr in criteria]
    else:
        verdict = UNDECIDED
        reasons[:0] = [f"{name} {numbers.percent(share)} [{numbers.percent(low)}, {numbers.percent(high)}]: the interval still holds {thr:.0%}"
                       for name, share, _, low, high, thr in (c for c in criteria if c not in passing)]
    needed = None
    if verdict == UNDECIDED and n and not untested and advise:
        cap = population if population is not None else 100 * n
        needed = audits_to_decide(hits, w, people, gated_seen, t, cap=cap, rule=rule)
        if needed is None:
            reasons.append(f"at the current rates no number of random audits up to {cap} would decide it with "
                           f"{POWER:.0%} probability"
                           + (" (the judge's verdicts that can be drawn)" if population is not None else ""))
        else:
            reasons.append(f"about {needed} more random audits would decide it with {POWER:.0%} probability, "
                           "if the current rates are the true ones")
    return {"verdict": verdict, "n_audits": n,
            "agreement": {k: agreement[k] for k in ("estimate", "ci_low", "ci_high", "n_effective")},
            "per_label": per_label, "audits_needed": needed, "reasons": reasons, "thresholds": asdict(t),
            "rule": RULES[rule]}


def _apply_alt_test(result: dict, alt: dict | None) -> None:
    """The alt-test, when it ran, must pass too: failing it means people agree with each other better
    than with the judge (Calderon et al.), whatever the agreement bounds say."""
    if alt is None or alt["passed"]:
        if alt is not None:
            result["reasons"].append(f"alternative annotator test passed: the judge wins against "
                                     f"{alt['winning_rate']:.0%} of {alt['n_annotators']} annotators (ε = "
                                     f"{alt['epsilon']})")
        return
    result["reasons"].insert(0, f"alternative annotator test failed: the judge wins against only "
                                f"{alt['winning_rate']:.0%} of {alt['n_annotators']} annotators (ε = "
                                f"{alt['epsilon']}; 50% passes)")
    if result["verdict"] != NOT_REPLACEABLE:
        result["verdict"], result["audits_needed"] = NOT_REPLACEABLE, None
