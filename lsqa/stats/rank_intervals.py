"""Simultaneous 95% rank intervals and tiers: the ranks each system can plausibly hold, for all systems at once.

Method (the standard construction from pairwise comparisons):

1. Simultaneous intervals for every pairwise difference ``d_ij = β_i − β_j`` (i < j):
   ``d̂_ij ± c·se_ij``, where ``c`` is the ``level`` quantile of the studentised maximum
   ``max_{i<j} |d*_ij − d̂_ij| / se_ij`` ("max-t", Tukey's honest significant difference in its
   bootstrap form). ``c`` comes from the bootstrap rounds of the Bradley-Terry fit
   (:func:`from_bootstrap`; judge-only and overrides rankings, ``lsqa.stats.ranking``) or from a
   multivariate normal / Student-t with the estimates' covariance (:func:`from_covariance`; the
   PPI++ corrected estimates of ``lsqa.stats.corrected``, and accuracies).
2. ``rank_low_i = 1 + #{j: d_ji significantly > 0}`` and ``rank_high_i = m − #{j: d_ij significantly > 0}``.
   On the event that every pairwise interval holds (probability ≥ ``level``), every system's true
   rank lies in its interval: the coverage is simultaneous over all systems.

This is the construction of Mogstad, Romano, Shaikh & Wilhelm (2024, "Inference for ranks with
applications to mobility across neighbourhoods and academic achievement across countries", Rev.
Econ. Stud. 91(1)), of Al Mohamad, Goeman & van Zwet (2022, "Simultaneous confidence intervals for
ranks with application to ranking institutions", Biometrics 78(1), Tukey's HSD) and of the joint
rank confidence sets of Klein, Wright & Wieczorek (2020, "A joint confidence region for an overall
ranking of populations", JRSS C 69(3)); Chatzi et al. (2024, "Prediction-powered ranking of large
language models", NeurIPS) build the same rank sets from prediction-powered (judge + human)
estimates, as :func:`from_covariance` does with the PPI++ covariance.

Pairs that cannot be compared count as "not significant" (conservative): systems in comparison
groups never linked to each other, and pairs whose difference has zero estimated spread (every
bootstrap round the same: too few comparisons to say).

Tiers. Walk the systems strongest first (point estimate); the first opens tier 1; each next system
joins the current tier when its rank interval overlaps the rank interval of the tier's first system,
and otherwise opens the next tier. So every member of a tier could share a rank with the tier's top
system, and a system in a lower tier ranks below the top of every tier above it with 95% confidence
(simultaneously). Two neighbours in different tiers are not necessarily separated from each other:
:func:`separated` says that for a pair (their rank intervals do not overlap).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

MC_DRAWS = 20_000      # normal / t draws for the max-t critical value of from_covariance
MC_SEED = 20241202     # fixed: the same estimates always give the same intervals
_MC_BLOCK_CELLS = 2_000_000  # draws × pairs per block of the max-t simulation (bounds memory)


@dataclass(frozen=True)
class RankIntervals:
    """Simultaneous rank intervals (1 = strongest) and tiers, one entry per system in input order.

    ``significant[i, j]`` is True when system i is significantly stronger than j (simultaneously);
    ``crit`` the max-t critical value used (``nan`` when no pair could be tested)."""

    rank_low: np.ndarray
    rank_high: np.ndarray
    tier: np.ndarray
    significant: np.ndarray
    crit: float
    level: float
    method: str

    def fields(self, k: int) -> dict:
        """The JSON fields of system ``k``."""
        return {"rank_low": int(self.rank_low[k]), "rank_high": int(self.rank_high[k]), "tier": int(self.tier[k])}


def _pairs(m: int) -> tuple[np.ndarray, np.ndarray]:
    return np.triu_indices(m, k=1)


def _comparable(m: int, groups: Sequence[int] | None) -> np.ndarray:
    if groups is None:
        return np.ones((m, m), dtype=bool)
    g = np.asarray(groups)
    return g[:, None] == g[None, :]


def _intervals(beta: np.ndarray, diff_se: np.ndarray, crit: float, comparable: np.ndarray,
               level: float, method: str) -> RankIntervals:
    m = len(beta)
    d = beta[:, None] - beta[None, :]
    with np.errstate(invalid="ignore"):
        sig = comparable & (diff_se > 0) & np.isfinite(crit) & (d - crit * diff_se > 0)
    np.fill_diagonal(sig, False)
    low = 1 + sig.sum(axis=0)          # systems significantly above k
    high = m - sig.sum(axis=1)         # systems significantly below k
    return RankIntervals(low, high, tiers(beta, low, high), sig, float(crit), level, method)


def tiers(beta: Sequence[float], rank_low: Sequence[int], rank_high: Sequence[int]) -> np.ndarray:
    """Tier of each system (1 = top), by the rule of the module docstring: along the point order,
    a system joins the current tier when its rank interval overlaps that of the tier's first system."""
    beta = np.asarray(beta, dtype=float)
    order = np.argsort(-beta, kind="stable")
    out = np.zeros(len(beta), dtype=int)
    tier, lead = 0, None
    for k in order:
        if lead is None or rank_low[k] > rank_high[lead] or rank_high[k] < rank_low[lead]:
            tier, lead = tier + 1, k
        out[k] = tier
    return out


def from_bootstrap(beta: Sequence[float], samples: np.ndarray, *, level: float = 0.95,
                   groups: Sequence[int] | None = None) -> RankIntervals:
    """Rank intervals from the point estimate ``beta`` (m,) and bootstrap rounds ``samples`` (B, m).

    ``se_ij`` is the bootstrap standard deviation of ``β_i − β_j``; ``c`` the ``level`` quantile over
    rounds of the largest studentised deviation of any comparable pair (max-t bootstrap)."""
    beta = np.asarray(beta, dtype=float)
    samples = np.asarray(samples, dtype=float)
    m = len(beta)
    if samples.ndim != 2 or samples.shape[1] != m:
        raise ValueError("samples must be rounds × systems")
    i, j = _pairs(m)
    comparable = _comparable(m, groups)
    diffs = samples[:, i] - samples[:, j]
    se = diffs.std(axis=0, ddof=1) if len(samples) > 1 else np.zeros(len(i))
    use = comparable[i, j] & (se > 0) & np.all(np.isfinite(diffs), axis=0)
    if use.any():
        t = np.abs(diffs[:, use] - (beta[i] - beta[j])[use]) / se[use]
        crit = float(np.quantile(t.max(axis=1), level))
    else:
        crit = float("nan")
    full = np.zeros((m, m))
    full[i, j] = full[j, i] = np.where(use, se, 0.0)
    return _intervals(beta, full, crit, comparable, level, "max-t bootstrap")


def from_covariance(beta: Sequence[float], cov: np.ndarray, *, level: float = 0.95, df: int = 0,
                    groups: Sequence[int] | None = None) -> RankIntervals:
    """Rank intervals from estimates ``beta`` (m,) with covariance ``cov`` (m, m).

    ``c`` is the ``level`` quantile of ``max_{i<j} |Z_i − Z_j| / se_ij`` for ``Z ~ N(0, cov)``
    (divided by ``sqrt(χ²_df / df)``, a multivariate t, when ``df > 0``: the corrected estimates'
    intervals use Student-t on the audits' degrees of freedom), by Monte Carlo with a fixed seed."""
    beta = np.asarray(beta, dtype=float)
    cov = np.asarray(cov, dtype=float)
    m = len(beta)
    if cov.shape != (m, m):
        raise ValueError("cov must be m × m")
    i, j = _pairs(m)
    comparable = _comparable(m, groups)
    var = np.diag(cov)[i] + np.diag(cov)[j] - 2 * cov[i, j]
    se = np.sqrt(np.clip(var, 0, None))
    use = comparable[i, j] & (se > 1e-12 * max(1.0, float(np.max(np.abs(beta), initial=0.0))))
    crit = float("nan")
    if use.any():
        rng = np.random.default_rng(MC_SEED)
        # Z = L·ε with L a square root of cov (eigen-decomposition: cov is singular, mean-0 β).
        w, v = np.linalg.eigh((cov + cov.T) / 2)
        root = v * np.sqrt(np.clip(w, 0, None))
        z = rng.standard_normal((MC_DRAWS, m)) @ root.T
        if df > 0:
            z /= np.sqrt(rng.chisquare(df, MC_DRAWS) / df)[:, None]
        iu, ju, su = i[use], j[use], se[use]
        # In blocks of draws: 20,000 draws × 4,950 pairs (100 systems) at once would take 0.8 GB.
        block = max(1, _MC_BLOCK_CELLS // len(iu))
        tmax = np.concatenate([(np.abs(z[s:s + block, iu] - z[s:s + block, ju]) / su).max(axis=1)
                               for s in range(0, MC_DRAWS, block)])
        crit = float(np.quantile(tmax, level))
    full = np.zeros((m, m))
    full[i, j] = full[j, i] = np.where(use, se, 0.0)
    return _intervals(beta, full, crit, comparable, level, "max-t normal" if df <= 0 else f"max-t Student-t ({df} df)")


def from_estimates(estimate: Sequence[float], se: Sequence[float], *, level: float = 0.95, df: int = 0) -> RankIntervals:
    """Rank intervals for independent estimates (per-system accuracies) with standard errors ``se``."""
    se = np.asarray(se, dtype=float)
    return from_covariance(estimate, np.diag(se ** 2), level=level, df=df)


def separated(ri: RankIntervals, upper: int, lower: int) -> bool:
    """True when the two systems' rank intervals do not overlap: with 95% confidence (jointly with
    every other statement these intervals make) ``upper`` ranks above ``lower``."""
    return bool(ri.rank_high[upper] < ri.rank_low[lower] or ri.rank_high[lower] < ri.rank_low[upper])


def ranks_text(low: int | None, high: int | None, n: int | None = None) -> str:
    """A rank interval in words for a table cell: "1", "2–4"; "any of 1–n" when nothing is known."""
    if low is None or high is None:
        return "not available (no intervals were computed)"
    if low == high:
        return str(low)
    if n is not None and low == 1 and high == n:
        return f"any of 1–{n}"
    return f"{low}–{high}"


def for_accuracies(correct: Sequence[int], n: Sequence[int], *, level: float = 0.95) -> RankIntervals:
    """Rank intervals of per-system accuracies ``correct / n`` (a yes/no judge's ranking, Table 1).

    Each accuracy's standard error is taken at ``(k + ½)/(n + 1)`` (Jeffreys' posterior mean), so that
    a system at 0% or 100% still has a spread; systems are treated as independent, which is
    conservative when they answered the same questions (their errors correlate positively)."""
    k = np.asarray(correct, dtype=float)
    n = np.asarray(n, dtype=float)
    p = (k + 0.5) / (n + 1)
    return from_estimates(k / np.maximum(n, 1), np.sqrt(p * (1 - p) / np.maximum(n, 1)), level=level)
