"""Workspace → corrected estimates: accuracy per system and Bradley-Terry strengths that account
for the judge's errors, with the judge-only figures beside them (math in ``lsqa.stats.corrected``).

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
"""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

import numpy as np

from lsqa import store
from lsqa.stats import rank_flips
from lsqa.stats import rank_intervals
from lsqa.stats.corrected import FEW_AUDITS, _z, audits_to_separate, design, ppi_bradley_terry, ppi_mean
from lsqa.stats.sampling import USABLE_QUEUES, Item, comparisons, judge_items, outcome
from lsqa.store import corpus as corpus_store
from lsqa.store import verdicts as verdicts_store
from lsqa.vocabulary import BINARY, CORRECTED, JUDGE_ONLY, OVERRIDES, PAIRWISE
from lsqa.store.workspace_cache import kept_while_unchanged
from lsqa.text import numbers


def _audits(con, judge: str, items: list[Item], queue: str | None, labels: dict | None = None):
    """Human outcome, π and stratum per item from the chosen design; counts for the report.
    ``labels``: filled with item index → the human label used (system terms)."""
    by_judgment = {jid: k for k, it in enumerate(items) for jid in it.judgment_ids}
    latest: dict[int, dict] = {}
    other = 0
    usable_by_queue: Counter = Counter()
    rows = verdicts_store.sampled_human_labels(con, judge)
    for r in rows:
        if r["queue"] in USABLE_QUEUES and r["inclusion_prob"] is not None and r["judgment_id"] in by_judgment:
            usable_by_queue[r["queue"]] += 1
    chosen = queue or (usable_by_queue.most_common(1)[0][0] if usable_by_queue else None)
    tied = 0
    for r in rows:
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
    strata = ["all"] * len(items)
    kinds = {str(r["stratum"]).split(":", 1)[0] for r in latest.values()}
    stratify = "pair" if "pair" in kinds else "system" if "system" in kinds else "none"
    for k, it in enumerate(items):
        strata[k] = it.stratum(stratify)
    for k, r in latest.items():
        human[k] = outcome(r["label"])
        pi[k] = float(r["inclusion_prob"])
        if labels is not None:
            labels[k] = r["label"]
    info = {"design": chosen or "", "n_usable_audits": len(latest), "n_reviews_not_used": other,
            "n_tied_not_used": tied, "usable_by_queue": dict(usable_by_queue)}
    return human, pi, strata, info


def answer_audits(workspace: Path, judge: str, *, queue: str | None = None) -> tuple[dict, dict, dict]:
    """A yes/no judge's answers with the usable audits of one design, as :func:`corrected_accuracy`
    reads them: ``(question id, system) → judge outcome`` (1 = right), ``(question id, system) →
    (human outcome, inclusion probability)`` for the audited ones, and the audit counts
    (``design``, ``n_usable_audits``, ...). The long-span gains corrected by audits read them here."""
    with store.connect(workspace) as con:
        items = [it for it in judge_items(con, judge) if it.family == BINARY]
        human, pi, _, info = _audits(con, judge, items, queue)
    judged = {(it.question_id, it.system_a): it.f for it in items}
    audited = {(it.question_id, it.system_a): (float(human[k]), float(pi[k]))
               for k, it in enumerate(items) if not np.isnan(human[k])}
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
        items = [it for it in judge_items(con, judge) if it.family == BINARY]
        if not items:
            raise ValueError(f"judge {judge!r} has no decided yes/no verdicts in this workspace")
        human, pi, strata, info = _audits(con, judge, items, queue)
        over = rank_flips.overrides(con, judge, items)
    f = np.array([it.f for it in items])
    systems = sorted({it.system_a for it in items})
    out = []
    warnings: set[str] = set()
    estimates, rows_of = [], []
    for system in systems:
        idx = np.array([k for k, it in enumerate(items) if it.system_a == system])
        est = ppi_mean(f[idx], design(human[idx], pi[idx], [strata[k] for k in idx]), level=level)
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
    flips = _with_questions(workspace, rank_flips.accuracy_flips(systems, estimates, items, rows_of, human, over))
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


def _bt_inputs(con, judge: str, queue: str | None):
    items = [it for it in judge_items(con, judge) if it.family == PAIRWISE]
    if not items:
        raise ValueError(f"judge {judge!r} has no decided side-by-side verdicts in this workspace")
    labels: dict[int, str] = {}
    _, pi, strata, info = _audits(con, judge, items, queue, labels)
    # The human label stands for every verdict (answer order) of its item, coded like the judge's.
    human = np.full(len(items), np.nan)
    human_weight = np.zeros(len(items))
    for k, label in labels.items():
        human[k], decided = comparisons([label])
        human_weight[k] = decided * len(items[k].judgment_ids)
    return items, (human, human_weight), pi, strata, info, rank_flips.overrides(con, judge, items)


def _fit(items: list[Item], human, pi, strata, level: float):
    """The corrected and the judge-only Bradley-Terry fits of a side-by-side judge's items.

    Coded as the ranking table counts verdicts (``sampling.comparisons``: each verdict one
    comparison, ties half a win, "none" none), so that the judge-only fit is the ranking table's
    fit on the same verdicts, with the same identification (mean β = 0): one judge-only ranking on
    the Leaderboard, in ``lsqa rank`` and here. ``human``: (win share, weight) per item.
    """
    human, human_weight = human
    systems = sorted({it.system_a for it in items} | {it.system_b for it in items})
    coded = np.array([it.comparisons for it in items]).reshape(len(items), 2)
    f, weight = coded[:, 0], coded[:, 1]
    sa, sb = [it.system_a for it in items], [it.system_b for it in items]
    est = ppi_bradley_terry(systems, sa, sb, f, design(human, pi, strata), level=level, pred_weight=weight,
                            human_weight=human_weight)
    judge = ppi_bradley_terry(systems, sa, sb, f, design(np.full(len(items), np.nan)), level=level,
                              pred_weight=weight)
    return est, judge


def corrected_ranking(workspace: Path, judge: str, *, queue: str | None = None, level: float = 0.95,
                      with_overrides: bool = True) -> dict:
    """Bradley-Terry strengths e^β of a side-by-side judge, corrected by its audits (PPI++), the
    judge-only strengths beside them, adjacent-pair separation with audits needed, and rank flips."""
    with store.connect(workspace) as con:
        items, human, pi, strata, info, over = _bt_inputs(con, judge, queue)
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
    result["flips"] = _with_questions(workspace, rank_flips.bradley_terry_flips(
        est, judge_fit, items, human[0], over if with_overrides else None))
    return result


QUESTION_CHARS = 80  # a mover's question as a stakeholder reads it, cut on a word


def _with_questions(workspace: Path, flips: list[dict]) -> list[dict]:
    """Each mover of each flip with its question's text (``question``), so a flip names the question a
    person can read instead of its id (no hashes on the Leaderboard)."""
    ids = sorted({m["question_id"] for f in flips for movers in f["moved_by"].values() for m in movers})
    if not ids:
        return flips
    with store.connect(workspace) as con:
        texts = corpus_store.question_texts(con, ids)
    for f in flips:
        for movers in f["moved_by"].values():
            for m in movers:
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
    for upper, lower in zip(order[:-1], order[1:]):
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


# ------------------------------------------------------------------------------ for the pages

def _fmt_interval(low: float | None, high: float | None, *, percent: bool = False, n_audits: int | None = None) -> str:
    """A CI for a table cell (``lsqa.text.numbers.interval``): a strength's, or with ``percent`` an
    accuracy's in %. With ``n_audits`` (a corrected interval) fewer than FEW_AUDITS audits say
    "too few audits to say" instead of bounds the audits cannot hold (bench_corrected.py)."""
    return numbers.interval(low, high, limit=None if percent else numbers.STRENGTH_LIMIT, scale=100 if percent else 1,
                            n_audits=n_audits, audits_needed=None if n_audits is None else FEW_AUDITS,
                            unbounded="the audits cannot bound this strength")


def _summary(result: dict) -> str:
    used = result["n_usable_audits"]
    text = (f"{used} usable audits ({result['design']} queue)" if used else "no usable audits yet") + \
        f"; {result['n_reviews_not_used']} other reviews not used (priority queue or another design)."
    if "lam" in result and used:
        text += (f" How much the corrected figures lean on the judge's verdicts: {numbers.figure(result['lam'])} "
                 "(0 = on the audits alone, 1 = on every verdict, corrected by the audits).")
    reviewed = result.get("n_overridden", 0)
    text += f" Overrides ranking: {reviewed} reviewed verdicts (any queue) in place of the judge's." if reviewed \
        else " Nothing reviewed yet: the overrides ranking is the judge's."
    if not result.get("flips"):
        text += " No system changes places between the judge-only, corrected and overrides rankings."
    if result.get("estimand") == "bradley-terry":
        text += " " + JUDGE_ONLY_SAME_AS_TABLE
    return text


# What the judge-only columns of a corrected ranking share with the ranking table, and what not.
JUDGE_ONLY_SAME_AS_TABLE = (
    "Judge-only strengths and ranks here are the ranking table's with the switches off (the judge's labels, "
    "all questions: every verdict one comparison, a tie half a win, 'none' left out, strengths scaled to a "
    "geometric mean of 1). Only their intervals differ: here analytic, like the corrected ones, so that the "
    "two compare; in the ranking table, a bootstrap.")


def ranking_section(result: dict) -> dict:
    """Display rows of a corrected ranking: side by side, adjacent pairs, rank flips."""
    n = len(result["systems"])
    audits = result["n_usable_audits"]
    table = [{"tier": r["tier"], "system": r["system"],
              f"{CORRECTED} ranks (95%)": rank_intervals.ranks_text(r["rank_low"], r["rank_high"], n),
              f"{JUDGE_ONLY} ranks (95%)": rank_intervals.ranks_text(r["judge_only_rank_low"],
                                                                    r["judge_only_rank_high"], n),
              "rank": r["rank"], f"{CORRECTED} strength": numbers.figure(r["strength"]),
              f"{CORRECTED} 95% CI": _fmt_interval(r["ci_low"], r["ci_high"], n_audits=audits),
              f"{JUDGE_ONLY} rank": r["judge_only_rank"], f"{JUDGE_ONLY} strength": numbers.figure(r["judge_only_strength"]),
              f"{JUDGE_ONLY} 95% CI": _fmt_interval(r["judge_only_ci_low"], r["judge_only_ci_high"]),
              "verdicts": r["n"], "audited": r["n_audited"]} for r in result["systems"]]
    adjacent = [{"pair": f"{a['upper']} > {a['lower']}", "separated": _separated_text(a, result["n_usable_audits"]),
                 "strength ratio (95%, simultaneous)": _ratio_text(a, result["n_usable_audits"]),
                 AUDITS_TO_SEPARATE: (
                     "—" if a["separated"] else "not within these verdicts" if a["more_audits_needed"] is None
                     else f"about {numbers.count(a['more_audits_needed'])} to tell {a['upper']} from {a['lower']}")}
                for a in result["adjacent"]]
    return {"table": table, "adjacent": adjacent, "flips": flip_rows(result["flips"])}


# What the adjacent pairs' audit count decides: this pair's order, not whether the judge can replace
# people (the certification's own count, ``certification.audits_to_decide``).
AUDITS_TO_SEPARATE = "more random audits to tell the pair apart (not to certify the judge)"


def _separated_text(pair: dict, n_audits: int) -> str:
    """"yes" only when the rank intervals shown do not overlap and the audits are enough to trust them."""
    if pair.get("too_few_audits"):
        return f"too few audits to say ({n_audits}; at least {FEW_AUDITS} needed)"
    return "yes" if pair["separated"] else "no"


def _ratio_text(pair: dict, n_audits: int) -> str:
    """The strength ratio's interval, or why there is none: too few audits, or past RATIO_LIMIT."""
    if "ratio_low" not in pair:
        return "—"
    return numbers.interval(pair["ratio_low"], pair["ratio_high"], limit=numbers.RATIO_LIMIT, suffix="×",
                            n_audits=n_audits, audits_needed=FEW_AUDITS if pair.get("too_few_audits") else None,
                            unbounded=f"{pair['upper']} may be far stronger or weaker than {pair['lower']}")


def _mover_text(m: dict, view: str, binary: bool, question=None, escape=None) -> str:
    """One mover in words; ``question(m)`` renders its question (default: the text, escaped) and
    ``escape`` every other piece (default: none), for a Markdown table whose questions are links."""
    esc = escape or (lambda x: x)
    q = question(m) if question else esc(m.get("question", m["question_id"]))
    where = q if binary else q + esc(f" ({m['system_a']} vs {m['system_b']})")
    if view == OVERRIDES and m["overridden"]:
        return where + esc(": " + ", ".join(f"judge {v['judge_label']} → human {v['human_label']}"
                                            for v in m["overridden"]))
    if binary:
        return where + esc(f" on {m['system_a']}: judge {'yes' if m['judge_outcome'] else 'no'} → "
                           f"human {'yes' if m['human_outcome'] else 'no'}")
    return where + esc(f": judge {_outcome_words(m['judge_outcome'], m)} → human {_outcome_words(m['human_outcome'], m)}")


def _outcome_words(value: float, m: dict) -> str:
    """A side-by-side outcome (1 = system_a better, 0 = system_b, 0.5 = tie or both wrong) in words."""
    if value >= 0.75:
        return f"{m['system_a']} better"
    if value <= 0.25:
        return f"{m['system_b']} better"
    return "tie or both wrong"


def _order(s: str, t: str, ranks: dict[str, int]) -> str:
    if ranks[s] == ranks[t]:
        return f"{s} = {t}"
    return " > ".join(sorted((s, t), key=ranks.get))


def flip_rows(flips: list[dict], *, binary: bool = False, question=None, escape=None) -> list[dict]:
    """One display row per rank flip: the pair's order in each view and, for the corrected and the
    overrides views, the audited verdicts that pulled hardest towards that view's order.

    ``question(mover)``: how a mover's question is shown (default: its text); ``escape``: applied to
    every other piece of text (default: none) -- the Leaderboard's Markdown table links each question
    to its verdict on the Audit page (``leaderboard_view.flip_markdown``)."""
    esc = escape or (lambda x: x)
    rows = []
    for f in flips:
        s, t = f["systems"]
        row = {"systems": esc(f"{s} / {t}"),
               **{f"{view} order": esc(_order(s, t, ranks)) for view, ranks in f["ranks"].items()}}
        for view, label in ((CORRECTED, "random audits that moved it"), (OVERRIDES, "overrides that moved it")):
            movers = f["moved_by"].get(view)
            if movers is None:
                row[label] = esc("—")
                continue
            text = (esc("; ").join(_mover_text(m, view, binary, question, escape) for m in movers)
                    or esc("none pull this way"))
            more = f["n_pushing"][view] - len(movers)
            row[label] = text + (esc(f" (and {more} more)") if more > 0 else "")
        rows.append(row)
    return rows


def accuracy_section(result: dict) -> dict:
    n = len(result["systems"])
    table = [{"tier": r["tier"], "system": r["system"],
              f"{CORRECTED} ranks (95%)": rank_intervals.ranks_text(r["rank_low"], r["rank_high"], n),
              f"{JUDGE_ONLY} ranks (95%)": rank_intervals.ranks_text(r["judge_only_rank_low"],
                                                                    r["judge_only_rank_high"], n),
              f"{CORRECTED} accuracy %": numbers.figure(100 * r["estimate"]),
              f"{CORRECTED} 95% CI %": _fmt_interval(r["ci_low"], r["ci_high"], percent=True, n_audits=r["n_audited"]),
              f"{JUDGE_ONLY} accuracy %": numbers.figure(100 * r["judge_only"]),
              f"{JUDGE_ONLY} 95% CI %": _fmt_interval(r["judge_only_ci_low"], r["judge_only_ci_high"], percent=True),
              "verdicts": r["n"], "audited": r["n_audited"]} for r in result["systems"]]
    return {"table": table, "adjacent": [], "flips": flip_rows(result["flips"], binary=True)}


@kept_while_unchanged()
def board(workspace: Path, judges: dict[str, list[str]]) -> list[dict]:
    """The Leaderboard's "corrected by audits" section: one entry per judge (``judges`` by family)."""
    out = []
    for fam, names in judges.items():
        for judge in names:
            entry = {"judge": judge, "estimand": "bradley-terry" if fam == PAIRWISE else "accuracy",
                     "error": "", "warnings": [], "summary": "", "table": [], "adjacent": [], "flips": [],
                     "raw_flips": []}
            try:
                if fam == PAIRWISE:
                    result = corrected_ranking(workspace, judge)
                    entry.update(ranking_section(result))
                else:
                    result = corrected_accuracy(workspace, judge)
                    entry.update(accuracy_section(result))
            except ValueError as exc:
                entry["error"] = str(exc)
                out.append(entry)
                continue
            entry.update(summary=_summary(result), warnings=result["warnings"], raw_flips=result["flips"])
            out.append(entry)
    return out
