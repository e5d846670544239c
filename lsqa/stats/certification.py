"""Can this judge replace the annotators? A verdict from the audits (issue 30, item 4).

Evidence, per verdict (a person's label is compared with the judge's label on the verdict they
reviewed, never with an item's label collapsed over references or judges):

- **Agreement and per-label recall** from the audits whose inclusion probability π is known (random
  or active queue, or imported with a probability: :mod:`lsqa.stats.sampling`), one design per
  judge as in :mod:`lsqa.stats.corrected_report`, the latest review of each verdict standing for the
  people. Each audit weighs 1/π (Hájek), so an active queue's over-sampled hard verdicts count for
  what they represent. Recall of a label L is the share of the verdicts people labelled L that the
  judge labelled L too (yes/no: the true-positive and true-negative rates; side by side: each
  outcome). Intervals are Clopper-Pearson at the chosen level on the Kish effective sample size
  (Korn & Graubard 1998, "Confidence intervals for proportions with small expected number of
  positive counts estimated from survey data"); with a uniform random queue that is exactly the
  Clopper-Pearson interval of the counts.
- **The people's ceiling**: on verdicts two or more people labelled (the double-annotation overlap,
  :mod:`lsqa.audit.double_annotation`), how often people agree with each other, and how often the
  judge agrees with them on the same verdicts. Descriptive: those verdicts come from any queue.
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
otherwise ``undecided``, with about how many more random audits would decide it at the current
rates: the smallest total at which, the estimates staying where they are, every lower bound would
pass (or the first upper bound would fall below). Adjudicated labels: lsqa stores none yet, so the
audits are the people's word.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from lsqa import store
from lsqa.judging import kinds
from lsqa.stats.sampling import USABLE_QUEUES, judge_items
from lsqa.store import verdicts as verdicts_store
from lsqa.vocabulary import BINARY

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

def clopper_pearson(successes: float, n: float, level: float = 0.95) -> tuple[float, float]:
    """Clopper-Pearson interval of a proportion; ``successes`` and ``n`` may be fractional (an
    effective sample size), as in Korn & Graubard's interval for survey data."""
    from scipy.stats import beta

    if n <= 0:
        return 0.0, 1.0
    alpha = 1 - level
    x = min(max(successes, 0.0), n)
    low = 0.0 if x <= 0 else float(beta.ppf(alpha / 2, x, n - x + 1))
    high = 1.0 if x >= n else float(beta.ppf(1 - alpha / 2, x + 1, n - x))
    return low, high


def weighted_share(hits, weights, level: float = 0.95) -> dict:
    """Hájek share Σw·hit / Σw with a Clopper-Pearson interval on the Kish effective size (Σw)²/Σw²."""
    hits = np.asarray(hits, dtype=float)
    w = np.asarray(weights, dtype=float)
    if len(hits) == 0:
        return {"estimate": None, "ci_low": None, "ci_high": None, "n": 0, "n_effective": 0.0}
    p = float(np.sum(w * hits) / np.sum(w))
    n_eff = float(np.sum(w) ** 2 / np.sum(w ** 2))
    low, high = clopper_pearson(p * n_eff, n_eff, level)
    return {"estimate": p, "ci_low": low, "ci_high": high, "n": int(len(hits)), "n_effective": n_eff}


def _bounds_at(p: float, n_eff: float, level: float) -> tuple[float, float]:
    return clopper_pearson(p * n_eff, n_eff, level)


def audits_to_cross(p: float, n_eff_now: float, n_now: int, threshold: float, level: float,
                    cap: int) -> int | None:
    """The smallest total number of audits n (n_now < n ≤ cap) at which, the share staying at ``p`` and
    the effective size growing in proportion (n_eff_now · n / n_now), the lower bound reaches
    ``threshold`` (p ≥ threshold) or the upper bound falls below it (p < threshold). None when even
    ``cap`` audits would not do (or the share sits on the threshold)."""
    if n_now <= 0 or n_eff_now <= 0 or cap <= n_now:
        return None
    rising = p >= threshold

    def decided(n: int) -> bool:
        low, high = _bounds_at(p, n_eff_now * n / n_now, level)
        return low >= threshold if rising else high < threshold

    if not decided(cap):
        return None
    lo, hi = n_now, cap            # decided(hi) holds; decided(lo) does not (it was undecided at n_now)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if decided(mid) else (mid, hi)
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
    for t, w in zip(tested, won):
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
                   thresholds: Thresholds = Thresholds(), population: int | None = None) -> dict:
    """Agreement, per-label recall, verdict and audits needed from audited verdicts alone (the
    numerics the workspace reader and bench/bench_certify.py share).

    ``judge_labels[k]``, ``human_labels[k]``: the judge's and the people's label of audit k;
    ``inclusion_probs[k]``: its π. ``labels``: the kind's labels in order; ``gate_all``: every label
    gates (a yes/no judge) rather than only those people gave. ``population``: how many verdicts
    could be audited at all (caps ``audits_needed``).
    """
    t = thresholds.check()
    judge_labels, human_labels = list(judge_labels), list(human_labels)
    w = 1.0 / np.asarray(inclusion_probs, dtype=float) if len(human_labels) else np.zeros(0)
    hits = np.array([a == b for a, b in zip(judge_labels, human_labels)], dtype=float)
    n = len(human_labels)
    agreement = weighted_share(hits, w, t.level)
    criteria = []            # (name, share, n_eff, low, high, threshold)
    if n:
        criteria.append(("agreement", agreement["estimate"], agreement["n_effective"], agreement["ci_low"],
                         agreement["ci_high"], t.min_agreement))
    per_label = []
    reasons: list[str] = []
    seen = set(human_labels)
    for label in labels:
        idx = [k for k, h in enumerate(human_labels) if h == label]
        share = weighted_share(hits[idx], w[idx], t.level) if idx else weighted_share([], [], t.level)
        gated = gate_all or label in seen
        row = {"label": label, "n": share["n"], "recall": share["estimate"], "ci_low": share["ci_low"],
               "ci_high": share["ci_high"], "n_effective": share["n_effective"], "gated": gated,
               "judge_said": sum(1 for j in judge_labels if j == label)}
        per_label.append(row)
        if gated and idx:
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
        reasons[:0] = [f"{name} {share:.1%}: even its upper bound {high:.1%} is below {thr:.0%}"
                       for name, share, _, _, high, thr in failing]
    elif len(passing) == len(criteria) and not untested:
        verdict = REPLACEABLE
        reasons[:0] = [f"{name} {share:.1%}: its lower bound {low:.1%} reaches {thr:.0%}"
                       for name, share, _, low, _, thr in criteria]
    else:
        verdict = UNDECIDED
        reasons[:0] = [f"{name} {share:.1%} [{low:.1%}, {high:.1%}]: the interval still holds {thr:.0%}"
                       for name, share, _, low, high, thr in (c for c in criteria if c not in passing)]
    needed = None
    if verdict == UNDECIDED and n and not untested:
        cap = population if population is not None else 100 * n
        heading_down = [c for c in criteria if c[1] < c[5] and c not in passing]
        open_ = [c for c in criteria if c not in passing]
        steps = [audits_to_cross(share, n_eff, n, thr, t.level, cap) for _, share, n_eff, _, _, thr in
                 (heading_down or open_)]
        known = [s for s in steps if s is not None]
        if heading_down and known:
            needed = min(known) - n           # the first upper bound to fall below decides
        elif not heading_down and steps and len(known) == len(steps):
            needed = max(known) - n           # every lower bound must pass
        if needed is None:
            reasons.append(f"at the current rates no number of random audits up to {cap} would decide it"
                           + (" (the judge's verdicts that can be drawn)" if population is not None else ""))
        else:
            reasons.append(f"about {needed} more random audits would decide it, if the rates stay where they are")
    return {"verdict": verdict, "n_audits": n,
            "agreement": {k: agreement[k] for k in ("estimate", "ci_low", "ci_high", "n_effective")},
            "per_label": per_label, "audits_needed": needed, "reasons": reasons, "thresholds": asdict(t)}


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


# ------------------------------------------------------------------------------ from a workspace

def certify(workspace: Path, judge: str, *, queue: str | None = None,
            thresholds: Thresholds = Thresholds()) -> dict:
    """Can ``judge`` replace the annotators in this workspace? (module docstring). JSON-ready:
    ``judge, verdict, n_audits, agreement, per_label, alt_test, audits_needed, thresholds`` and
    ``design, ceiling, reasons, notes``. ValueError (one line, what to do) for an unknown judge or queue."""
    thresholds.check()
    if queue is not None and queue not in USABLE_QUEUES:
        raise ValueError(f"unknown audit queue {queue!r}; use one of {', '.join(USABLE_QUEUES)}")
    with store.connect(workspace) as con:
        verdicts = {r["id"]: r for r in verdicts_store.effective_verdicts(con, judge=judge)}
        if not verdicts:
            raise ValueError(f"judge {judge!r} has no decided verdicts in this workspace; check the name "
                             "(lsqa status lists the judges)")
        n_items = len(judge_items(con, judge))
        sampled = verdicts_store.sampled_human_labels(con, judge)
        labelled = verdicts_store.human_labels(con, judge)
    some = next(iter(verdicts.values()))
    record = kinds.get(some["kind"])
    usable = [r for r in sampled if r["queue"] in USABLE_QUEUES and r["inclusion_prob"] is not None
              and r["judgment_id"] in verdicts and r["label"] is not None]
    by_queue: dict[str, int] = defaultdict(int)
    for r in usable:
        by_queue[r["queue"]] += 1
    design = queue or (max(sorted(by_queue), key=by_queue.get) if by_queue else "")
    audits = [r for r in usable if r["queue"] == design]
    result = certify_audits([verdicts[r["judgment_id"]]["judge_label"] for r in audits], [r["label"] for r in audits],
                            [float(r["inclusion_prob"]) for r in audits], record.labels,
                            gate_all=record.family == BINARY, thresholds=thresholds, population=n_items)
    judge_labels = {v: r["judge_label"] for v, r in verdicts.items()}
    people: dict[str, dict] = defaultdict(dict)
    for r in labelled:
        if r["judgment_id"] in judge_labels and r["label"] is not None:
            people[r["annotator"]][r["judgment_id"]] = r["label"]
    alt = alt_test(judge_labels, people, epsilon=thresholds.epsilon, q=thresholds.fdr_q,
                   min_items=thresholds.min_items_per_annotator)
    _apply_alt_test(result, alt)
    top = ceiling(judge_labels, people, thresholds.level)
    notes = [NO_ADJUDICATION]
    other = len(sampled) - len(audits)
    if other:
        notes.append(f"{other} reviewed verdicts not used for agreement and recall: priority-queue reviews "
                     "(picked for disagreement, not at random) or another design")
    if alt is None:
        notes.append(f"alternative annotator test not run: it needs at least 3 people each labelling "
                     f"{thresholds.min_items_per_annotator} verdicts that someone else labelled too")
    if top is not None and top["people"]["estimate"] < thresholds.min_agreement:
        notes.append(f"people agree with each other on {top['people']['estimate']:.1%} of the verdicts two or more "
                     f"labelled: a minimum agreement of {thresholds.min_agreement:.0%} asks more of the judge "
                     "than of them")
    return {"judge": judge, "verdict": result["verdict"], "n_audits": result["n_audits"],
            "agreement": result["agreement"], "per_label": result["per_label"], "alt_test": alt,
            "audits_needed": result["audits_needed"], "thresholds": result["thresholds"],
            "design": design, "ceiling": top, "reasons": result["reasons"], "notes": notes}


# ------------------------------------------------------------------------------ for the page

def _pct(x) -> str:
    return "—" if x is None else f"{100 * x:.1f}%"


def panel(workspace: Path, judge: str, *, queue: str | None = None, thresholds: Thresholds = Thresholds()) -> dict:
    """The Agreement page's certification panel: :func:`certify` and its figures as display rows."""
    result = certify(workspace, judge, queue=queue, thresholds=thresholds)
    agreement = result["agreement"]
    what = "recall (people said it, the judge too)"
    rows = [{"figure": "agreement with people", "estimate": _pct(agreement["estimate"]),
             f"{thresholds.level:.0%} interval": f"{_pct(agreement['ci_low'])} – {_pct(agreement['ci_high'])}",
             "audits": result["n_audits"], "must reach": f"{thresholds.min_agreement:.0%} (lower bound)"}]
    for r in result["per_label"]:
        rows.append({"figure": f"{what}: {r['label']}", "estimate": _pct(r["recall"]),
                     f"{thresholds.level:.0%} interval": f"{_pct(r['ci_low'])} – {_pct(r['ci_high'])}",
                     "audits": r["n"],
                     "must reach": f"{thresholds.min_recall:.0%} (lower bound)" if r["gated"] else "not gated"})
    top = result["ceiling"]
    ceiling_rows = [] if top is None else [
        {"who": who, "agreement": _pct(top[key]["estimate"]),
         f"{thresholds.level:.0%} interval": f"{_pct(top[key]['ci_low'])} – {_pct(top[key]['ci_high'])}",
         "verdicts": top["n_verdicts"]}
        for who, key in (("people with each other", "people"), ("the judge with the people", "judge"))]
    alt = result["alt_test"]
    alt_rows = [] if alt is None else [
        {"left-out annotator": a["annotator"], "verdicts": a["n"], "judge as good (share)": round(a["judge_advantage"], 3),
         "annotator as good (share)": round(a["annotator_advantage"], 3), "p-value": round(a["p_value"], 4),
         "judge wins": "yes" if a["judge_wins"] else "no"} for a in alt["annotators"]]
    needed = result["audits_needed"]
    headline = {REPLACEABLE: "can replace the annotators on this study",
                NOT_REPLACEABLE: "cannot replace the annotators on this study",
                UNDECIDED: "undecided" + (f": about {needed} more random audits would tell" if needed else "")}
    return {**result, "headline": f"{judge}: {headline[result['verdict']]}", "rows": rows,
            "ceiling_rows": ceiling_rows, "alt_rows": alt_rows}
