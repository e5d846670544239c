"""Workspace → corrected estimates: accuracy per system and Bradley-Terry strengths that account
for the judge's errors, with the judge-only figures beside them (math in ``lsqa.stats.corrected``,
wording in ``lsqa.dashboard.corrected_view``).

Usable audits are verdicts drawn with a known inclusion probability — through the random or the active
queue, a random assignment batch, or an import with a probability — each with the design of its draw
(migration 0023: later reviews never change it) and its final human label. One design is used per judge (the one with the most
usable audits unless named), because reviews drawn under different designs do not combine into
one set of inclusion probabilities; the report says how many audits it used and how many reviews
it could not use (priority-queue reviews count for agreement and overrides only).

Also here: for each adjacent pair of the corrected ranking, whether it is separated and about how
many more random audits would separate it (``lsqa.stats.corrected.audits_to_separate``), and the rank
flips between the judge-only, corrected and "overrides" rankings with the audited verdicts that
moved each flip (``lsqa.stats.rank_flips``).

Read in SQL (``lsqa.figures.audits.item_table``): the judge's items as columns, and the verdicts of
the audited or reviewed items only; never a Python object per verdict.
"""

from __future__ import annotations

import math
from collections import Counter
from itertools import groupby
from pathlib import Path

import numpy as np

from lsqa import store
from lsqa.figures.audits import fill_first_ids, item_table
from lsqa.stats import rank_flips, rank_intervals
from lsqa.stats.corrected import FEW_AUDITS, _z, audits_to_separate, design, ppi_bradley_terry, ppi_mean
from lsqa.stats.sampling import USABLE_QUEUES, Items, comparisons, outcome
from lsqa.store import corpus as corpus_store
from lsqa.store import verdicts as verdicts_store
from lsqa.vocabulary import BINARY, PAIRWISE


def _read(con, judge: str, family: str):
    """The judge's items of ``family`` (columns), its audits as drawn (``sampled_human_labels``), its final
    human labels (judgment id → label) and the verdicts of the items any of them touches."""
    sampled = verdicts_store.sampled_human_labels(con, judge)
    finals = {r["judgment_id"]: r["label"] for r in verdicts_store.final_labels(con, judge=judge)
              if outcome(r["label"]) is not None}
    items, verdicts = item_table(con, judge, family=family,
                                 lookup=sorted({r["judgment_id"] for r in sampled} | set(finals)))
    return items, sampled, finals, verdicts


def _audits(sampled: list[dict], by_judgment: dict[str, int], items: Items, queue: str | None,
            labels: dict | None = None):
    """Human outcome, π and strata per item from the chosen design; counts for the report.
    ``by_judgment``: judgment id → item index; ``labels``: filled with item index → the human label
    used (system terms)."""
    latest: dict[int, dict] = {}
    other = 0
    usable_by_queue: Counter = Counter()
    for r in sampled:
        if r["queue"] in USABLE_QUEUES and r["inclusion_prob"] is not None and r["judgment_id"] in by_judgment:
            usable_by_queue[r["queue"]] += 1
    chosen = queue or (usable_by_queue.most_common(1)[0][0] if usable_by_queue else None)
    tied = 0
    for r in sampled:
        k = by_judgment.get(r["judgment_id"])
        drawn = r["queue"] == chosen and r["inclusion_prob"] is not None and k is not None
        if drawn and r["label"] is None and r["basis"] is None:
            tied += 1  # people tie and nobody adjudicated: no human label (lsqa.audit.FINAL_LABEL_RULE)
        usable = drawn and outcome(r["label"]) is not None
        if not usable:
            other += 1
            continue
        latest[k] = r          # one row per verdict; of an item's verdicts, the latest reviewed wins
    human = np.full(len(items), np.nan)
    pi = np.full(len(items), np.nan)
    kinds = {str(r["stratum"]).split(":", 1)[0] for r in latest.values()}
    stratify = "pair" if "pair" in kinds else "system" if "system" in kinds else "none"
    strata = items.strata(stratify)
    for k, r in latest.items():
        human[k] = outcome(r["label"])
        pi[k] = float(r["inclusion_prob"])
        if labels is not None:
            labels[k] = r["label"]
    info = {"design": chosen or "", "n_usable_audits": len(latest), "n_reviews_not_used": other,
            "n_tied_not_used": tied, "usable_by_queue": dict(usable_by_queue)}
    return human, pi, strata, info


def overrides(items: Items, verdicts: list[dict], finals: dict[str, str]) -> rank_flips.Overrides:
    """Item outcomes under "Use human overrides" (the final human label, any queue): only the items
    with a reviewed verdict differ from the judge's (``verdicts``: theirs, in item order)."""
    f = items.f.copy()
    coded = np.stack([items.share, items.decided], axis=1)
    changed: dict[int, list[dict]] = {}
    reviewed = 0
    for k, rows in groupby(verdicts, key=lambda r: r["item"]):
        rows = list(rows)
        if not any(r["id"] in finals for r in rows):
            continue
        values, moved, now = [], [], []
        for r in rows:
            label, value = r["judge_label"], outcome(r["judge_label"])
            if r["id"] in finals:
                reviewed += 1
                human = finals[r["id"]]
                if human != label:
                    moved.append({"judgment_id": r["id"], "judge_label": label, "human_label": human})
                value, label = outcome(human), human
            values.append(value)
            now.append(label)
        f[k] = (1.0 if any(v == 1.0 for v in values) else 0.0) if items.family == BINARY else sum(values) / len(values)
        coded[k] = comparisons(now)
        if moved:
            changed[k] = moved
    return rank_flips.Overrides(f, changed, reviewed, coded)


def answer_audits(workspace: Path, judge: str, *, queue: str | None = None) -> tuple[dict, dict, dict]:
    """A yes/no judge's answers with the usable audits of one design, as :func:`corrected_accuracy`
    reads them: ``(question id, system) → judge outcome`` (1 = right), ``(question id, system) →
    (human outcome, inclusion probability)`` for the audited ones, and the audit counts
    (``design``, ``n_usable_audits``, ...). The long-span gains corrected by audits read them here."""
    with store.connect(workspace) as con:
        items, sampled, _, verdicts = _read(con, judge, BINARY)
    if items is None:
        return {}, {}, {"design": "", "n_usable_audits": 0, "n_reviews_not_used": len(sampled), "n_tied_not_used": 0,
                        "usable_by_queue": {}}
    human, pi, _, info = _audits(sampled, {r["id"]: r["item"] for r in verdicts}, items, queue)
    keys = [(items.questions[q], items.systems[a]) for q, a in zip(items.q.tolist(), items.a.tolist(), strict=False)]
    judged = dict(zip(keys, items.f.tolist(), strict=False))
    audited = {keys[k]: (float(human[k]), float(pi[k])) for k in np.flatnonzero(~np.isnan(human))}
    return judged, audited, info


def _tie_warning(info: dict) -> list[str]:
    """Drawn verdicts left out because people tie on them: the audits are then no longer the sample the
    design drew (which verdicts drop out depends on their labels), so the estimate may be biased."""
    n = info["n_tied_not_used"]
    if not n:
        return []
    return [f"{n} audited verdict{'s' if n > 1 else ''} left out: the people who labelled "
            f"{'them' if n > 1 else 'it'} tie and nobody adjudicated, so the audits are not the sample the design "
            "drew and the estimate may be biased (toward the verdicts people agree on); adjudicate "
            f"{'them' if n > 1 else 'it'} on the Adjudicate page"]


def corrected_accuracy(workspace: Path, judge: str, *, queue: str | None = None, level: float = 0.95) -> dict:
    """Accuracy per system of a yes/no judge: PPI++ estimate and CI beside the judge-only one, and
    the systems that change places between the judge-only, corrected and overrides accuracies."""
    with store.connect(workspace) as con:
        items, sampled, finals, verdicts = _read(con, judge, BINARY)
    if items is None:
        raise ValueError(f"judge {judge!r} has no decided yes/no verdicts in this workspace")
    human, pi, strata, info = _audits(sampled, {r["id"]: r["item"] for r in verdicts}, items, queue)
    over = overrides(items, verdicts, finals)
    f = items.f
    systems = list(items.systems)
    out = []
    warnings: set[str] = set()
    estimates, rows_of = [], []
    for s, system in enumerate(systems):
        idx = np.flatnonzero(items.a == s)
        est = ppi_mean(f[idx], design(human[idx], pi[idx], None if strata is None else strata[idx]), level=level)
        estimates.append(est)
        rows_of.append(idx)
        warnings.update(f"{system}: {w}" for w in est.warnings)
        # An accuracy lies in [0, 1]: the interval is clipped there (the estimate itself is not).
        out.append({"system": system, "estimate": est.estimate, "ci_low": max(0.0, est.ci_low),
                    "ci_high": min(1.0, est.ci_high),
                    "n": est.n, "n_audited": est.n_audited, "judge_only": est.judge_only,
                    "judge_only_ci_low": max(0.0, est.judge_only_ci[0]),
                    "judge_only_ci_high": min(1.0, est.judge_only_ci[1]),
                    "human_only": est.human_only, "lam": est.lam, "method": est.method})
    # 95% simultaneous rank intervals and tiers (lsqa.stats.rank_intervals), corrected and judge-only. As for
    # side by side (ppi_bradley_terry's df), the system with the fewest audits sets the Student-t quantile.
    ranks = rank_intervals.from_estimates([e.estimate for e in estimates], [e.se for e in estimates], level=level,
                                          df=min((e.df for e in estimates if e.df > 0), default=0))
    z = _z(level)
    judge_ranks = rank_intervals.from_estimates([e.judge_only for e in estimates],
                                                [(e.judge_only_ci[1] - e.judge_only_ci[0]) / (2 * z) for e in estimates],
                                                level=level)
    for k, row in enumerate(out):
        row.update(ranks.fields(k), **{f"judge_only_{key}": v for key, v in judge_ranks.fields(k).items()})
    out.sort(key=lambda r: -r["estimate"])
    flips = _with_questions(workspace, judge, items,
                            rank_flips.accuracy_flips(systems, estimates, items, rows_of, human, over))
    return {"judge": judge, "estimand": "accuracy", "level": level, "rank_intervals": ranks.method, "systems": out, **info,
            "n_overridden": over.n_reviewed, "flips": flips,
            "warnings": sorted(warnings) + _tie_warning(info) + _mark_not_estimable(out)}


def _mark_not_estimable(rows: list[dict]) -> list[str]:
    """An interval of zero width (or not finite) says "exactly this value", which a few audits never
    show: with 1-5 audits the variance they leave can be 0 and the interval collapses onto the
    estimate (``9.3955 [9.3955, 9.3955]``). As the judge-only ranking does (``lsqa.stats.reports``),
    such a system is reported *not estimable*: null bounds, ``estimable`` false and a note; the
    judge-only interval beside it gets null bounds too when it has zero width. Returns the warning."""
    bad = []
    for row in rows:
        for prefix in ("", "judge_only_"):
            low, high = row[f"{prefix}ci_low"], row[f"{prefix}ci_high"]
            if low is None or high is None or not (math.isfinite(low) and math.isfinite(high)) \
                    or high - low <= 1e-9 * max(1.0, abs(high)):
                row[f"{prefix}ci_low"] = row[f"{prefix}ci_high"] = None
        row["estimable"] = row["ci_low"] is not None
        row["note"] = "" if row["estimable"] else (
            f"{row['n_audited']} audits of its verdicts leave no spread to measure: an interval would have zero width")
        if not row["estimable"]:
            bad.append(row["system"])
    if not bad:
        return []
    return [f"not estimable: {', '.join(bad)} (the audits leave no spread to measure, so an interval would have "
            "zero width); audit more verdicts of these systems (random queue) before presenting them"]


def _bt_inputs(workspace: Path, judge: str, queue: str | None):
    with store.connect(workspace) as con:
        items, sampled, finals, verdicts = _read(con, judge, PAIRWISE)
    if items is None:
        raise ValueError(f"judge {judge!r} has no decided side-by-side verdicts in this workspace")
    labels: dict[int, str] = {}
    _, pi, strata, info = _audits(sampled, {r["id"]: r["item"] for r in verdicts}, items, queue, labels)
    # The human label stands for every verdict (answer order) of its item, coded like the judge's.
    human = np.full(len(items), np.nan)
    human_weight = np.zeros(len(items))
    for k, label in labels.items():
        human[k], decided = comparisons([label])
        human_weight[k] = decided * items.n_verdicts[k]
    return items, (human, human_weight), pi, strata, info, overrides(items, verdicts, finals)


def _fit(items: Items, human, pi, strata, level: float):
    """The corrected and the judge-only Bradley-Terry fits of a side-by-side judge's items.

    Coded as the ranking table counts verdicts (``sampling.comparisons``: each verdict one
    comparison, ties half a win, "none" none), so that the judge-only fit is the ranking table's
    fit on the same verdicts, with the same identification (mean β = 0): one judge-only ranking on
    the Leaderboard, in ``lsqa rank`` and here. ``human``: (win share, weight) per item.
    """
    human, human_weight = human
    systems = list(items.systems)
    f, weight = items.share, items.decided
    sa, sb = items.a, items.b           # indices into systems
    est = ppi_bradley_terry(systems, sa, sb, f, design(human, pi, strata), level=level, pred_weight=weight,
                            human_weight=human_weight)
    judge = ppi_bradley_terry(systems, sa, sb, f, design(np.full(len(items), np.nan)), level=level,
                              pred_weight=weight)
    return est, judge


def corrected_ranking(workspace: Path, judge: str, *, queue: str | None = None, level: float = 0.95,
                      with_overrides: bool = True) -> dict:
    """Bradley-Terry strengths e^β of a side-by-side judge, corrected by its audits (PPI++), the
    judge-only strengths beside them, adjacent-pair separation with audits needed, and rank flips."""
    items, human, pi, strata, info, over = _bt_inputs(workspace, judge, queue)
    est, judge_fit = _fit(items, human, pi, strata, level)
    # 95% simultaneous rank intervals and tiers of both rankings (lsqa.stats.rank_intervals).
    ranks = rank_intervals.from_covariance(est.beta, est.cov, level=level, df=est.df)
    judge_ranks = rank_intervals.from_covariance(judge_fit.beta, judge_fit.cov, level=level, df=judge_fit.df)
    order = np.argsort(-est.beta, kind="stable")
    low, high = est.ci
    jlow, jhigh = judge_fit.ci
    rows = []
    for rank, k in enumerate(order, start=1):
        rows.append({"rank": rank, "system": est.systems[k], "beta": float(est.beta[k]),
                     "strength": float(np.exp(est.beta[k])), "ci_low": float(np.exp(low[k])),
                     "ci_high": float(np.exp(high[k])), "n": int(est.n_per_system[k]),
                     "n_audited": int(est.n_audited_per_system[k]),
                     "judge_only_strength": float(np.exp(judge_fit.beta[k])),
                     "judge_only_ci_low": float(np.exp(jlow[k])), "judge_only_ci_high": float(np.exp(jhigh[k])),
                     "judge_only_rank": int(1 + np.sum(judge_fit.beta > judge_fit.beta[k] + 1e-12)),
                     **ranks.fields(k), **{f"judge_only_{key}": v for key, v in judge_ranks.fields(k).items()}})
    result = {"judge": judge, "estimand": "bradley-terry", "level": level, "rank_intervals": ranks.method,
              "lam": est.lam, "method": est.method,
              "n": est.n, "n_audited": est.n_audited, "systems": rows, **info,
              "adjacent": adjacent_pairs(est, ranks), "warnings": list(est.warnings) + _tie_warning(info) + _mark_not_estimable(rows)}
    result["n_overridden"] = over.n_reviewed
    result["flips"] = _with_questions(workspace, judge, items, rank_flips.bradley_terry_flips(
        est, judge_fit, items, human[0], over if with_overrides else None))
    return result


QUESTION_CHARS = 80  # a mover's question as a stakeholder reads it, cut on a word


def _with_questions(workspace: Path, judge: str, items: Items, flips: list[dict]) -> list[dict]:
    """Each mover of each flip with its verdict (``judgment_id``: the first of its item) and its
    question's text (``question``), so a flip names the question a person can read instead of its id
    (no hashes on the Leaderboard)."""
    movers = [m for f in flips for ms in f["moved_by"].values() for m in ms]
    if not movers:
        return flips
    ids = sorted({m["question_id"] for m in movers})
    with store.connect(workspace) as con:
        fill_first_ids(con, judge, items, [m["item"] for m in movers])
        texts = corpus_store.question_texts(con, ids)
    for m in movers:
        m["judgment_id"] = items.first_ids.get(m.pop("item"), m["judgment_id"])
        m["question"] = _short(texts[m["question_id"]][0]) if m["question_id"] in texts else m["question_id"]
    return flips


def _short(text: str) -> str:
    text = " ".join(text.split())
    if len(text) <= QUESTION_CHARS:
        return f"“{text}”"
    return f"“{text[:QUESTION_CHARS].rsplit(' ', 1)[0]}…”"


def adjacent_pairs(est, ranks=None) -> list[dict]:
    """For each pair of neighbours in the corrected ranking: separated or not, and about how many
    more random audits would separate them at the current rates (80% power).

    With ``ranks`` (``rank_intervals.from_covariance`` of ``est``) "separated" means the two rank
    intervals shown do not overlap, and ``ratio_low``/``ratio_high`` bound the strength ratio
    e^(β_upper − β_lower) by the same simultaneous intervals; without, the pair's own interval.
    ``too_few_audits``: fewer than FEW_AUDITS audits, too few for the intervals to hold their 95%
    (bench_corrected.py), so the page says so instead of "yes"."""
    order = np.argsort(-est.beta, kind="stable")
    out = []
    z_crit = _z(est.level, est.df) if ranks is None or not np.isfinite(ranks.crit) else ranks.crit
    few = 0 < est.n_audited < FEW_AUDITS
    for upper, lower in zip(order[:-1], order[1:], strict=False):
        diff = float(est.beta[upper] - est.beta[lower])
        var_now = est.diff_se(upper, lower) ** 2
        e = np.zeros(len(est.beta))
        e[upper], e[lower] = 1.0, -1.0
        var_judge = float(e @ est.cov_judge_part @ e) if est.cov_judge_part is not None else 0.0
        separated = (rank_intervals.separated(ranks, upper, lower) if ranks is not None
                     else diff > z_crit * np.sqrt(var_now))
        needed = None
        if est.n_audited and not separated:
            needed = audits_to_separate(diff, var_now, var_judge, est.n_audited, est.n, level=est.level)
            if needed == 0:   # separated pairwise, not yet by the simultaneous rank intervals
                needed = 1
        half = z_crit * np.sqrt(var_now)
        out.append({"upper": est.systems[upper], "lower": est.systems[lower], "difference": diff,
                    "se": float(np.sqrt(var_now)), "separated": bool(separated),
                    "ratio_low": float(np.exp(max(diff - half, -700))), "ratio_high": float(np.exp(min(diff + half, 700))),
                    "too_few_audits": bool(few), "more_audits_needed": 0 if separated else needed})
    return out
