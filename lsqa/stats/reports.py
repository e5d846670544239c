"""Statistics as JSON-ready reports: plain rows in, dicts out (paper §3.2 rankings, Fig. 4 agreement).

Shared by the command line (rows from a file), the workspace analysis (rows from verdicts) and the
dashboard. numpy / scipy are imported inside the functions so that importing this stays cheap.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Optional

from lsqa.errors import NoVerdicts


def _finite(x) -> Optional[float]:
    """JSON has no NaN / inf: undefined numbers become null."""
    x = float(x)
    return x if math.isfinite(x) else None


def rank_table(
    rows: Iterable[Mapping],
    *,
    bootstrap: int = 1000,
    seed: int = 0,
    by_question: bool = False,
    anchor: Optional[str] = None,
    tie_model: str = "half",
    level: float = 0.95,
    fragility: bool = True,
) -> dict:
    """Bradley-Terry ranking (paper §3.2) of rows with ``system_a, system_b, winner`` (+ ``question_id``).

    Returns ``{"systems": [{"system", "beta", "strength", "ci_low", "ci_high", "rank", "group",
    "estimable", "note", "rank_low", "rank_high", "tier"}, ...] (strongest first), "adjacent": [{"upper", "lower",
    "separated", "fragility"}, ...] (``rank_counts``), "win_probability": {sys_i: {sys_j: P(i beats j)}},
    "n_comparisons", "n_excluded", "warnings"}``; ``ci_low`` / ``ci_high`` bound the strength e^β
    (null when ``bootstrap=0`` or when the data cannot bound it).

    Honest intervals: a system the data do not bound (it always won, or never won, against the
    systems it met; ``ranking.unbounded_systems``) and a bootstrap interval of zero width (every
    resample the same: too few comparisons) are reported as not estimable, with null bounds and a
    note, never as a point. Systems in groups never compared with each other get a warning and a
    ``group`` number: their strengths are comparable only within a group.
    ``rank_low`` / ``rank_high`` / ``tier``: 95% simultaneous rank intervals and tiers from the same
    bootstrap rounds (``lsqa.stats.rank_intervals``; null when ``bootstrap=0``).
    Raises NoVerdicts when nothing is left to rank, ValueError for unusable rows.
    """
    from lsqa.stats.ranking import count_comparisons

    rows = list(rows)
    if not rows:
        raise NoVerdicts("no comparisons")
    qids = None
    if by_question:
        qids = [r.get("question_id") for r in rows]
        if any(q is None or str(q).strip() == "" for q in qids):
            raise ValueError("resampling by question needs a question_id in every row")
        qids = [str(q) for q in qids]
    data = count_comparisons(
        [r["system_a"] for r in rows], [r["system_b"] for r in rows], [r["winner"] for r in rows], qids
    )
    return rank_counts(data, bootstrap=bootstrap, seed=seed, by_question=by_question, anchor=anchor,
                       tie_model=tie_model, level=level, fragility=fragility)


class _AnalyticCI:
    """Strength intervals from a covariance (no rounds: no interval for the win probabilities)."""

    samples = None

    def __init__(self, low, high):
        self.strength_low, self.strength_high = low, high


def _win_probability(fit, ci, upper: int, lower: int, level: float) -> dict:
    """P(upper beats lower), eq. 1 of the paper, with its percentile interval over the same
    bootstrap rounds as the strengths (null bounds without a bootstrap)."""
    estimate = _finite(fit.win_probability[upper, lower])
    if ci is None or ci.samples is None:
        return {"estimate": estimate, "ci_low": None, "ci_high": None}
    import numpy as np

    diff = np.clip(ci.samples[:, upper] - ci.samples[:, lower], -700, 700)
    low, high = np.nanquantile(1 / (1 + np.exp(-diff)), [(1 - level) / 2, (1 + level) / 2])
    return {"estimate": estimate, "ci_low": _finite(low), "ci_high": _finite(high)}


def rank_counts(
    data,
    *,
    bootstrap: int = 1000,
    seed: int = 0,
    by_question: bool = False,
    anchor: Optional[str] = None,
    tie_model: str = "half",
    level: float = 0.95,
    fragility: bool = True,
    intervals: str = "bootstrap",
) -> dict:
    """``rank_table`` of comparisons already counted (``lsqa.stats.ranking.ComparisonCounts``, with the
    per-question cells when ``by_question``): what a workspace's verdicts are ranked from.

    ``adjacent``: each pair of neighbours (strongest first) with ``separated`` (their rank intervals do not
    overlap; null without a bootstrap), ``win_probability`` ``{"estimate", "ci_low", "ci_high"}`` (P(upper
    beats lower), eq. 1, with its bootstrap percentile interval) and ``fragility`` ``{"drop": n, "flip": n,
    "inseparable": {"drop": n, "flip": n}}``, the fewest verdicts removed / relabelled that swap them, or that
    bring the analytic ``level`` interval of their difference to 0 (0 when it already reaches it), confirmed by a
    refit (``lsqa.stats.fragility``; null where none up to every verdict does). ``fragility=False`` leaves
    ``adjacent`` empty (simulations that need no such list). ``intervals="sandwich"`` (ties as half a win):
    the strengths' intervals and the rank intervals from the analytic sandwich covariance
    (``ranking.sandwich_bradley_terry``, ``rank_intervals.from_covariance``) instead of ``bootstrap`` rounds;
    the win probabilities then have no interval."""
    from lsqa.stats.ranking import bootstrap_bradley_terry, comparison_groups, fit_bradley_terry, unbounded_systems

    if data.n_comparisons == 0:
        raise NoVerdicts("every comparison is 'none' (both answers wrong): nothing to rank")
    fit = fit_bradley_terry(data, tie_model=tie_model, anchor=anchor)
    if intervals not in ("bootstrap", "sandwich"):
        raise ValueError(f"intervals must be 'bootstrap' or 'sandwich', not {intervals!r}")
    ci = None
    order = sorted(range(len(fit.systems)), key=lambda k: (fit.rank[k], fit.systems[k]))
    groups = comparison_groups(data)
    ranks = None
    if bootstrap > 0 and intervals == "sandwich":
        import numpy as np
        from scipy.stats import norm

        from lsqa.stats.rank_intervals import from_covariance
        from lsqa.stats.ranking import sandwich_bradley_terry

        cov = sandwich_bradley_terry(data, fit, by_question=by_question)
        half = float(norm.ppf(0.5 + level / 2)) * np.sqrt(np.clip(np.diag(cov), 0, None))
        ci = _AnalyticCI(np.exp(fit.beta - half), np.exp(fit.beta + half))
        ranks = from_covariance(fit.beta, cov, level=level, groups=groups)
    elif bootstrap > 0:
        ci = bootstrap_bradley_terry(data, rounds=bootstrap, level=level, seed=seed, by_question=by_question,
                                     tie_model=tie_model, anchor=anchor)
    if ci is not None and ranks is None:
        from lsqa.stats.rank_intervals import from_bootstrap

        ranks = from_bootstrap(fit.beta, ci.samples, level=level, groups=groups)
    notes = unbounded_systems(data, tie_model)
    systems = []
    for k in order:
        low = _finite(ci.strength_low[k]) if ci else None
        high = _finite(ci.strength_high[k]) if ci else None
        if ci and k not in notes and fit.systems[k] != anchor and (low is None or high is None or high - low <= 1e-9 * high):
            notes[k] = ("every bootstrap round gave the same strength: too few comparisons to resample"
                        if ci.samples is not None else "no spread in the data: too few comparisons")
        systems.append({
            "system": fit.systems[k],
            "beta": _finite(fit.beta[k]),
            "strength": _finite(fit.strength[k]),
            "ci_low": None if k in notes else low,
            "ci_high": None if k in notes else high,
            "rank": int(fit.rank[k]),
            "group": int(groups[k]),
            "estimable": k not in notes,
            "note": notes.get(k, ""),
            **(ranks.fields(k) if ranks else {"rank_low": None, "rank_high": None, "tier": None}),
        })
    warnings = []
    n_groups = len(set(groups.tolist()))
    if n_groups > 1:
        members = [", ".join(fit.systems[k] for k in order if groups[k] == g) for g in dict.fromkeys(groups[order])]
        warnings.append(f"the systems fall into {n_groups} groups never compared with each other ({' | '.join(members)}): "
                        "strengths are comparable only within a group; compare systems across groups to rank them together")
    if notes:
        warnings.append("not estimable: " + "; ".join(f"{fit.systems[k]} ({notes[k]})" for k in order if k in notes)
                        + "; add comparisons where these systems lose and win")
    win_probability = {
        fit.systems[i]: {fit.systems[j]: _finite(fit.win_probability[i, j]) for j in order if j != i}
        for i in order
    }
    adjacent = []
    if fragility:
        from lsqa.stats.fragility import adjacent_fragility
        from lsqa.stats.rank_intervals import separated

        adjacent = [{"upper": fit.systems[f.upper], "lower": fit.systems[f.lower],
                     "separated": None if ranks is None else separated(ranks, f.upper, f.lower),
                     "fragility": f.fields(),
                     "win_probability": _win_probability(fit, ci, f.upper, f.lower, level)}
                    for f in adjacent_fragility(data, fit, level=level)]
    return {
        "systems": systems,
        "win_probability": win_probability,
        "n_comparisons": data.n_comparisons,
        "n_excluded": data.n_excluded,
        "warnings": warnings,
        "adjacent": adjacent,
    }


def agreement_table(
    rows: Iterable[Mapping],
    rater_a: str,
    rater_b: str,
    *,
    labels: Optional[Sequence[str]] = None,
    bootstrap: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> dict:
    """Agreement of two raters over the items both labelled, from long-format rows
    (``item_id, rater, label``).

    Returns ``{"n", "agreement", "kappa", "kappa_ci", "labels", "confusion"}``; ``confusion`` is
    a list of rows in the order of ``labels``, rows = rater A (paper Fig. 4). Undefined κ → null.
    """
    from lsqa.stats.agreement import compare_raters, paired_labels

    rows = list(rows)
    if rater_a == rater_b:
        raise ValueError(f"the two raters are both {rater_a!r}: name two different raters")
    raters = sorted({str(r["rater"]) for r in rows})
    for rater in (rater_a, rater_b):
        if rater not in raters:  # e.g. a judge nobody has reviewed yet: nothing to compare
            raise NoVerdicts(f"rater {rater!r} not found; use one of the raters {raters}")
    _, la, lb = paired_labels(
        [r["item_id"] for r in rows], [r["rater"] for r in rows], [r["label"] for r in rows], rater_a, rater_b
    )
    if not la:
        raise NoVerdicts(f"raters {rater_a!r} and {rater_b!r} have no item in common")
    res = compare_raters(la, lb, labels=labels, rounds=bootstrap, level=level, seed=seed)
    ci = [_finite(res.kappa_ci[0]), _finite(res.kappa_ci[1])]
    return {
        "n": res.n,
        "agreement": res.agreement,
        "kappa": _finite(res.kappa),
        "kappa_ci": None if bootstrap <= 0 or ci[0] is None else ci,
        "labels": list(res.labels),
        "confusion": res.confusion.matrix.astype(int).tolist(),
    }
