"""Corrected estimates: many judge verdicts plus a few audited human labels, with valid intervals.

Prediction-powered inference with power tuning (PPI++, Angelopoulos, Duchi & Zrnic 2023) for
two estimands of the paper:

* the accuracy of each system under a yes/no judge (§4.1, Table 1): a mean (:func:`ppi_mean`);
* Bradley-Terry strengths under a side-by-side judge (§3.2, eq. 1-2), fitted as the logistic
  loss of PPI++ as in Boyeau et al. (2024, "AutoEval done right") (:func:`ppi_bradley_terry`).

Setting. There are ``N`` items (answers, or question × pair), each with the judge's prediction
``f_i`` in [0, 1]. An audited subset carries the human label ``Y_i``; item ``i`` was audited with
a known inclusion probability ``π_i`` (uniform or stratified random audits, or "active" audits
that favour items where the judge is least sure; Zrnic & Candès 2024, "Active statistical
inference"). With ``ξ_i`` = 1 for audited items and the weights ``w_i = 1/π_i`` normalised within
each stratum ``h`` so that they sum to the stratum size ``N_h`` (Hájek), the estimating equation
of an M-estimator with per-item gradient ``g(θ; y)`` is

    0 = (1/N) Σ_i [ λ g(θ; f_i) + ξ_i w_i (g(θ; Y_i) − λ g(θ; f_i)) ].

``λ = 0`` is the humans-only estimate, ``λ = 1`` classical PPI; PPI++ picks the ``λ`` in [0, 1]
that minimises the estimated variance. The audits are a subsample of the same items, so the
variance is that of the influence terms (the Bernoulli/Poisson-sampling form of active
inference, with the rectifier centred on its stratum mean, which the Hájek normalisation makes
exact): ``ψ_i = λ g_f,i + ḡ_r,h + ξ_i w_i (g_r,i − ḡ_r,h)``, ``g_r = g_Y − λ g_f``, and
``Cov(θ̂) = H⁻¹ Cov(ψ) H⁻¹ / N``. For uniform audits and ``λ`` fixed this is ppi-python's
``ppi_mean_ci`` / ``ppi_logistic_ci`` with the whole verdict set as the "unlabeled" data (the
tests check both on the same inputs). Since ``ψ`` is linear in ``λ`` the optimal ``λ`` is closed
form: ``λ* = −tr(M Cov(A, B) M')/tr(M Cov(B) M')`` for ``ψ = A + λB``.

Unequal inclusion probabilities. The variance above weights audit ``i`` by ``w_i²``; with unequal
``π`` a few audits of rarely drawn items (large ``w``) carry most of it, so it rests on fewer audits
than were made. The Student-t quantile of the intervals therefore takes, per stratum, the effective
number of audits of a variance weighted by ``w²``, ``(Σ w²)² / Σ w⁴`` (Satterthwaite's (1946)
approximation with equal variance within the stratum; Kish's effective sample size taken to the
second moment), which is the stratum's count of audits when its ``π`` are equal, so uniform and
stratified random audits keep ``audits − strata`` degrees of freedom. Chosen by simulation over Kish's
``(Σ w)² / Σ w²`` (too small a change) and a variance floor per level of ``π`` (too wide) with the active
queue's ``π`` at 20-100 audits (``bench/bench_corrected_unequal_pi.py``).

Few audits. With a handful of audits on a yes/no judge that agrees with the humans, the audits
often show no disagreement at all and the rectifier's sample variance is zero (or nearly so): the
interval would then claim the judge is never wrong. :func:`ppi_mean` therefore floors the
rectifier's variance at its value on the audits augmented by one pseudo-audit spread evenly over
the four corners of the (human, judge) square: the disagreement rate's estimate becomes
``(k + ½)/(n + 1)``, the posterior mean under Jeffreys' Beta(½, ½) prior, in the spirit of
Agresti & Min (2005, "Simple improved confidence intervals for comparing matched proportions"),
who add pseudo-counts to the paired 2 × 2 table for the same reason. The floor binds only when the
sample variance is below it; ``bench/bench_corrected.py`` measures the coverage it gives.

Edge cases: no usable audit → the judge-only estimate with a warning (its interval reflects only
sampling noise, not the judge's errors); every item audited → the humans-only estimate (``ψ`` no
longer depends on ``λ``). Side-by-side outcomes are coded 1 (system_a better), 0 (system_b) and
0.5 (tie); an item may count for several comparisons or none (``pred_weight`` / ``human_weight``:
its verdicts in both answer orders, "none" = both answers wrong = no comparison), which is how the
Leaderboard's callers make the judge-only fit the ranking table's (``lsqa.stats.sampling.comparisons``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.special import ndtri, stdtrit
from scipy.stats import norm

from lsqa.stats import bradley_terry as bt
from lsqa.vocabulary import JUDGE_ONLY

RIDGE = 1e-8            # numerical floor on the Bradley-Terry Hessian (β is identified by mean 0)
FALLBACK_RIDGE = 0.1    # Gaussian prior on β when the pseudo-data leave some strength unbounded
MAX_ABS_BETA = 15.0
NEWTON_MAX_ITER = 100
POWER = 0.8             # power of the "audits to separate" estimate
FEW_AUDITS = 30         # below this the intervals rest on few audits (a warning says so)
PSEUDO_AUDIT = 1.0      # Jeffreys: one pseudo-audit over the (human, judge) corners, see the module docstring
CORNERS = ((0.0, 0.0), (0.0, 1.0), (1.0, 0.0), (1.0, 1.0))


@dataclass(frozen=True)
class Design:
    """How the audited items were chosen: one entry per item (``nan`` probability = not audited)."""

    human: np.ndarray          # (N,) human label in [0, 1], nan where not audited
    inclusion: np.ndarray      # (N,) inclusion probability π_i of audited items, nan elsewhere
    strata: np.ndarray         # (N,) stratum id per item (post-strata for the Hájek weights)

    @property
    def audited(self) -> np.ndarray:
        return ~np.isnan(self.human)


def _floats(values: Sequence[float | None]) -> np.ndarray:
    """``values`` as a float array, None as nan (a float array is copied as it is, without a Python
    float per entry)."""
    if isinstance(values, np.ndarray) and values.dtype.kind == "f":
        return values.astype(float)
    return np.array([np.nan if v is None else float(v) for v in values], dtype=float)


def design(human: Sequence[float | None], inclusion: Sequence[float | None] | float | None = None,
           strata: Sequence | None = None) -> Design:
    """Build a :class:`Design`; ``inclusion`` None = equal probabilities (uniform random audits)."""
    y = _floats(human)
    n = len(y)
    if inclusion is None or np.isscalar(inclusion):
        p = np.full(n, 1.0 if inclusion is None else float(inclusion))
    else:
        p = _floats(inclusion)
        if len(p) != n:
            raise ValueError("inclusion must have one entry per item")
    audited = ~np.isnan(y)
    bad = audited & ~((p > 0) & (p <= 1))
    if bad.any():
        raise ValueError(f"item {int(np.flatnonzero(bad)[0])}: an audited item needs an inclusion probability in (0, 1]")
    if np.any(audited & ((y < 0) | (y > 1))):
        raise ValueError("human labels must lie in [0, 1]")
    p = np.where(audited, p, np.nan)
    s = np.zeros(n, dtype=np.int64) if strata is None else np.unique(np.asarray(strata, dtype=object).astype(str),
                                                                     return_inverse=True)[1]
    return Design(y, p, s)


@dataclass(frozen=True)
class _Weights:
    """Hájek weights and the strata actually used (a stratum without audits is pooled)."""

    w: np.ndarray              # (N,) normalised 1/π on audited items, 0 elsewhere
    strata: np.ndarray         # (N,) stratum index used
    warnings: tuple[str, ...]
    small_sample: np.ndarray   # (N,) sqrt(n_h / (n_h − 1)): unbiased variance within each stratum
    df: int                    # degrees of freedom of the audit part: effective audits − strata (module docstring)


def _hajek_weights(d: Design) -> _Weights:
    audited = d.audited
    strata = d.strata
    warnings: list[str] = []
    counts = np.bincount(strata[audited], minlength=strata.max() + 1)
    if np.any(counts[np.bincount(strata) > 0] < 2):
        warnings.append("some strata have fewer than 2 usable audits: the audits are pooled into one stratum")
        strata = np.zeros_like(strata)
        counts = np.array([audited.sum()])
    raw = np.where(audited, 1.0 / np.where(audited, d.inclusion, 1.0), 0.0)
    size = np.bincount(strata).astype(float)
    total = np.bincount(strata, weights=raw, minlength=len(size))
    with np.errstate(invalid="ignore", divide="ignore"):
        w = np.where(audited, raw * size[strata] / total[strata], 0.0)
        # No audit sampling where every item of the stratum was audited: no correction there.
        full = counts >= np.bincount(strata, minlength=len(counts))
        small = np.sqrt(np.where((counts > 1) & ~full, counts / np.maximum(counts - 1, 1), 1.0))[strata]
    n_strata = int(np.count_nonzero(counts))
    # Effective audits of each stratum for the variance, (Σw²)²/Σw⁴: the count when π is equal (module docstring).
    w2 = np.bincount(strata, weights=w ** 2)
    w4 = np.bincount(strata, weights=w ** 4)
    effective = float(np.sum(np.divide(w2 ** 2, w4, out=np.zeros_like(w2), where=w4 > 0)))
    return _Weights(w, strata, tuple(warnings), small, int(np.floor(effective + 1e-9)) - n_strata)


def _stratum_means(values: np.ndarray, wts: _Weights) -> np.ndarray:
    """Hájek mean of ``values`` (N, d) over the audits of each item's stratum, broadcast to items."""
    k = wts.strata.max() + 1
    sums = np.zeros((k, values.shape[1]))
    np.add.at(sums, wts.strata, wts.w[:, None] * np.nan_to_num(values))
    size = np.bincount(wts.strata, minlength=k).astype(float)
    return (sums / size[:, None])[wts.strata]


def _influence_parts(g_y: np.ndarray, g_f: np.ndarray, wts: _Weights) -> tuple[np.ndarray, np.ndarray]:
    """``ψ = A + λB`` (both (N, d)): the influence terms of the estimating equation, centred per stratum."""
    xi_w = (wts.w * wts.small_sample)[:, None]
    mean_y = _stratum_means(g_y, wts)
    mean_f = _stratum_means(g_f, wts)
    a = mean_y + xi_w * (np.nan_to_num(g_y) - mean_y)
    b = g_f - mean_f - xi_w * (g_f - mean_f)
    return a, b


def _cov(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    xc, yc = x - x.mean(0), y - y.mean(0)
    return xc.T @ yc / max(1, len(x) - 1)


def _optimal_lambda(a: np.ndarray, b: np.ndarray, m: np.ndarray) -> float:
    """λ in [0, 1] minimising tr(M Cov(A + λB) M'), the summed variances of the reported estimates."""
    den = np.trace(m @ _cov(b, b) @ m.T)
    if den <= 1e-15:
        return 1.0
    num = np.trace(m @ (_cov(a, b) + _cov(b, a)) @ m.T) / 2
    return float(np.clip(-num / den, 0.0, 1.0))


def _z(level: float, df: int = 0) -> float:
    """Two-sided critical value: Student-t with ``df`` degrees of freedom when the variance rests on
    few audits (``df`` = audits − strata), the normal quantile otherwise (``df`` = 0)."""
    if not 0 < level < 1:
        raise ValueError("level must be in (0, 1)")
    q = 0.5 + level / 2
    # The ufuncs scipy.stats' t.ppf / norm.ppf evaluate, without their per-call argument checks.
    return float(stdtrit(df, q) if df > 0 else ndtri(q))


# --------------------------------------------------------------------------------------------
# Means (accuracy of one system under a yes/no judge)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MeanEstimate:
    """A PPI++ mean with its interval, and the judge-only and humans-only estimates beside it."""

    estimate: float
    se: float
    ci_low: float
    ci_high: float
    lam: float
    n: int                      # items (verdicts) of the judge
    n_audited: int              # audited items used
    judge_only: float
    judge_only_ci: tuple[float, float]
    human_only: float | None
    human_only_ci: tuple[float, float] | None
    method: str                 # ppi++ | JUDGE_ONLY (no usable audits) | human-only
    warnings: tuple[str, ...] = ()
    se_judge_part: float = 0.0  # the part of the variance that more audits would not shrink
    audit_effects: np.ndarray | None = None   # (N,) each audit's pull away from the judge, w(Y − f)/N
    df: int = 0                 # Student-t degrees of freedom of the interval (0 = normal)


def _rectifier_floor(y: np.ndarray, f: np.ndarray, wts: _Weights, lam: float) -> float:
    """Variance to add to N·Var(θ̂) so that, in every sampled stratum, the rectifier ``Y − λf`` has
    at least its variance on the audits plus one pseudo-audit spread over the four corners of the
    (human, judge) square (module docstring). For λ = 1 and no disagreement among ``n`` uniform
    audits the rectifier is 0 on every audit and ±1 on two corners of weight ¼: its floored
    variance is ``1/(2(n + 1))``, i.e. ``1/(2n(n + 1))`` on the estimate."""
    audited = wts.w > 0
    r = y - lam * f
    corner_r = np.array([hy - lam * hf for hy, hf in CORNERS])
    share = PSEUDO_AUDIT / len(CORNERS)
    strata, w = wts.strata, wts.w
    k = int(strata.max()) + 1
    n_h = np.bincount(strata[audited], minlength=k)
    # Strata with audits but not every item audited (where every item is, there is no sampling).
    sampled = (n_h > 0) & (n_h < np.bincount(strata, minlength=k))
    if not sampled.any():
        return 0.0
    wsum = np.bincount(strata, w, k)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.bincount(strata, w * r, k) / wsum
        dev2 = np.bincount(strata, w * (r - mean[strata]) ** 2, k) / wsum
        r2 = np.bincount(strata, w * r * r, k) / wsum
    n_h, mean, dev2, r2 = n_h[sampled], mean[sampled], dev2[sampled], r2[sampled]
    sample = dev2 * n_h / np.maximum(n_h - 1, 1)
    total = n_h + PSEUDO_AUDIT
    m1 = (n_h * mean + share * corner_r.sum()) / total
    m2 = (n_h * r2 + share * (corner_r ** 2).sum()) / total
    w2 = np.bincount(strata, w * w, k)[sampled]
    return float(np.sum(np.maximum(0.0, m2 - m1 ** 2 - sample) * w2) / len(y))


def _mean_ci(est: float, se: float, z: float) -> tuple[float, float]:
    return float(est - z * se), float(est + z * se)


def ppi_mean(pred: Sequence[float], d: Design, *, lam: float | None = None, level: float = 0.95) -> MeanEstimate:
    """PPI++ estimate of E[Y] from predictions ``pred`` (N,) and the audits in ``d``.

    Closed forms (tested): λ = 0 → the weighted mean of the audited labels with variance
    Σ w²(Y − Ȳ)²/N² (for uniform audits: the sample variance / n); all audited → the mean of Y;
    every audit agreeing with the judge and λ = 1 → variance var(f)/N + 1/(2n(n + 1)) (the floor).
    """
    f = np.asarray(pred, dtype=float)
    n_items = len(f)
    if n_items == 0:
        raise ValueError("no items")
    if len(d.human) != n_items:
        raise ValueError("the design must have one entry per prediction")
    z = _z(level)
    judge = float(f.mean())
    judge_se = float(f.std(ddof=1) / np.sqrt(n_items)) if n_items > 1 else 0.0
    judge_ci = _mean_ci(judge, judge_se, z)
    audited = d.audited
    n_aud = int(audited.sum())
    if n_aud == 0:
        return MeanEstimate(judge, judge_se, *judge_ci, 1.0, n_items, 0, judge, judge_ci, None, None, JUDGE_ONLY,
                            ("no usable audits: this is the judge's estimate, its interval ignores the judge's errors",),
                            judge_se)
    wts = _hajek_weights(d)
    y = np.where(audited, d.human, 0.0)
    # g(θ; y) = y − θ up to sign; the sign does not change variances, so use the labels directly.
    a, b = _influence_parts(y[:, None], f[:, None], wts)
    lam_tuned = lam is None
    if lam is None:
        lam = 1.0 if n_aud == n_items else _optimal_lambda(a, b, np.eye(1))
    psi = a + lam * b
    est = float(lam * f.mean() + (wts.w * (y - lam * f)).sum() / n_items)
    se = float(np.sqrt((_cov(psi, psi)[0, 0] + _rectifier_floor(y, f, wts, lam)) / n_items))
    # Humans only (λ = 0) on the same audits, with the same floor.
    h_est = float((wts.w * y).sum() / n_items)
    h_se = float(np.sqrt((_cov(a, a)[0, 0] + _rectifier_floor(y, f, wts, 0.0)) / n_items))
    judge_part = float(np.sqrt(max(0.0, lam ** 2 * f.var(ddof=1) / n_items))) if n_items > 1 else 0.0
    method = "human-only" if n_aud == n_items else "ppi++"
    # Student-t on the audits' degrees of freedom, one fewer when λ was fitted on those same audits
    # (it is a regression coefficient of Y on f: bench_corrected.py, few audits, +0.3 points coverage).
    sampled = n_aud < n_items
    df = max(1, wts.df - int(lam_tuned)) if sampled and wts.df > 0 else 0
    crit = _z(level, df)
    crit_human = _z(level, wts.df if sampled else 0)
    warnings = list(wts.warnings)
    if n_aud < FEW_AUDITS:
        warnings.append(f"only {n_aud} usable audits: the interval rests on few human labels and is wide")
    # Σ effects = estimate − judge-only exactly when λ = 1 (and nearly so for the λ ≈ 1 of an agreeing judge).
    effects = wts.w * (y - f) / n_items
    return MeanEstimate(est, se, *_mean_ci(est, se, crit), float(lam), n_items, n_aud, judge, judge_ci,
                        h_est, _mean_ci(h_est, h_se, crit_human), method, tuple(warnings), judge_part, effects, df)


# --------------------------------------------------------------------------------------------
# Bradley-Terry (side-by-side judges)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BTEstimate:
    """PPI++ Bradley-Terry log-strengths β (mean 0), their covariance, and what went into them."""

    systems: tuple[str, ...]
    beta: np.ndarray
    cov: np.ndarray
    level: float
    lam: float
    n: int
    n_audited: int
    method: str                        # ppi++ | JUDGE_ONLY (no usable audits) | human-only
    n_per_system: np.ndarray
    n_audited_per_system: np.ndarray
    warnings: tuple[str, ...] = ()
    cov_judge_part: np.ndarray | None = None   # the covariance more audits would not shrink
    audit_effects: Pulls | None = None         # (N, m): each audited item's pull on β (0 elsewhere)
    ridge: float = 0.0
    df: int = 0                                # Student-t degrees of freedom of the intervals (0 = normal)

    @property
    def se(self) -> np.ndarray:
        return np.sqrt(np.clip(np.diag(self.cov), 0, None))

    @property
    def ci(self) -> tuple[np.ndarray, np.ndarray]:
        z = _z(self.level, self.df)
        return self.beta - z * self.se, self.beta + z * self.se

    def diff_se(self, i: int, j: int) -> float:
        v = self.cov[i, i] + self.cov[j, j] - 2 * self.cov[i, j]
        return float(np.sqrt(max(v, 0.0)))


def _fit_weighted_bt(m: int, a: np.ndarray, b: np.ndarray, target: np.ndarray, count: np.ndarray,
                     ridge: float) -> tuple[np.ndarray, bool]:
    """Minimise Σ_k [−target_k s_k + count_k log(1 + e^{s_k})] + ridge/2 |β|², s = β_a − β_b, mean β = 0.

    The loss depends on the items only through each pair's sums of ``target`` and ``count``, so it is
    the one Bradley-Terry core's fit (``lsqa.stats.bradley_terry``) on per-pair pseudo-counts: wins of
    the lower index ``Σ target``, of the other ``Σ (count − target)`` (orientation-adjusted)."""
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    flip = a != lo
    wins_lo = np.where(flip, count - target, target)
    uniq, inv = np.unique(lo * m + hi, return_inverse=True)
    P = len(uniq)
    c = np.zeros((1, P, 3))
    c[0, :, 0] = np.bincount(inv, wins_lo, P)
    c[0, :, 1] = np.bincount(inv, count, P) - c[0, :, 0]
    prob = bt.Problem(m, np.column_stack([uniq // m, uniq % m]), c, "half", np.array([ridge]), np.zeros(1))
    x, _, conv = bt.newton(prob, np.zeros((1, m)))
    beta = x[0] - x[0].mean()
    return beta, bool(conv[0])


@dataclass(frozen=True)
class _Influence:
    """Per-item influence terms of the form ``α_i·U[stratum_i] + ρ_i·x_i`` (x_i = e_a − e_b), stored
    without the (N, m) matrix: ``U`` (strata, m), ``alpha`` (N,), ``rho`` (N,)."""

    U: np.ndarray
    alpha: np.ndarray
    rho: np.ndarray


def _gram_items(m: int, a: np.ndarray, b: np.ndarray, h: np.ndarray) -> np.ndarray:
    return bt.gram_rows(m, a, b, None, h)


def _infl_cov(p: _Influence, q: _Influence, a: np.ndarray, b: np.ndarray, strata: np.ndarray, m: int) -> np.ndarray:
    """``_cov`` of two influence matrices (sample covariance, N − 1), from their parts: O(N) memory."""
    n = len(p.alpha)
    k = p.U.shape[0]
    aa = np.bincount(strata, p.alpha * q.alpha, k)
    sp = np.bincount(strata, p.alpha, k)
    sq = np.bincount(strata, q.alpha, k)

    def per_stratum(alpha, rho):     # Σ_{i∈h} α_i ρ_i x_i, (strata, m)
        v = alpha * rho
        return (np.bincount(strata * m + a, v, k * m) - np.bincount(strata * m + b, v, k * m)).reshape(k, m)

    def total(rho):                  # Σ_i ρ_i x_i
        return np.bincount(a, rho, m) - np.bincount(b, rho, m)

    s = (p.U.T * aa) @ q.U + p.U.T @ per_stratum(p.alpha, q.rho) + per_stratum(q.alpha, p.rho).T @ q.U \
        + _gram_items(m, a, b, p.rho * q.rho)
    mp = (p.U.T @ sp + total(p.rho)) / n
    mq = (q.U.T @ sq + total(q.rho)) / n
    return (s - n * np.outer(mp, mq)) / max(1, n - 1)


def _optimal_lambda_parts(A: _Influence, B: _Influence, mat: np.ndarray, cov) -> float:
    """:func:`_optimal_lambda` on influence parts."""
    den = np.trace(mat @ cov(B, B) @ mat.T)
    if den <= 1e-15:
        return 1.0
    num = np.trace(mat @ (cov(A, B) + cov(B, A)) @ mat.T) / 2
    return float(np.clip(-num / den, 0.0, 1.0))


def _bt_fit(m, a, b, f, y, wts: _Weights, lam: float, ridge: float, cf: np.ndarray, cy: np.ndarray):
    target = lam * cf * f + wts.w * (cy * y - lam * cf * f)
    count = lam * cf + wts.w * (cy - lam * cf)
    return _fit_weighted_bt(m, a, b, target, count, ridge)


class Pulls:
    """An (N, m) matrix of first-order pulls ``r_k·(H⁻¹[a_k] − H⁻¹[b_k])`` (item k's effect on β), held as
    its factors: a column (``pulls[:, j]``, what the rank-flip table reads) costs O(N), and the whole
    matrix (``np.asarray(pulls)``, any other index) is built only when asked, so a million verdicts
    among 100 systems never hold the 800 MB it would take."""

    def __init__(self, r: np.ndarray, a: np.ndarray, b: np.ndarray, h_inv: np.ndarray):
        self.r, self.a, self.b, self.h_inv = r, a, b, h_inv

    @property
    def shape(self) -> tuple[int, int]:
        return (len(self.r), len(self.h_inv))

    def __len__(self) -> int:
        return len(self.r)

    def column(self, j: int) -> np.ndarray:
        return self.r * (self.h_inv[self.a, j] - self.h_inv[self.b, j])

    def __getitem__(self, key):
        if isinstance(key, tuple) and len(key) == 2 and isinstance(key[1], (int, np.integer)):
            return self.column(int(key[1]))[key[0]]
        return np.asarray(self)[key]

    def __array__(self, dtype=None, copy=None):
        out = self.r[:, None] * (self.h_inv[self.a] - self.h_inv[self.b])
        return out if dtype is None else out.astype(dtype)


def ppi_bradley_terry(systems: Sequence[str], system_a: Sequence[str], system_b: Sequence[str],
                      pred: Sequence[float], d: Design, *, lam: float | None = None,
                      level: float = 0.95, pred_weight: Sequence[float] | None = None,
                      human_weight: Sequence[float] | None = None) -> BTEstimate:
    """PPI++ Bradley-Terry strengths from per-item judge outcomes ``pred`` (1 = system_a better,
    0 = system_b, 0.5 = tie) and the human outcomes in ``d`` on the audited items. ``system_a`` /
    ``system_b``: names, or integer arrays of indices into ``systems`` (:func:`system_indices`).

    The fit is the paper's eq. 2 with ties as half wins, solved for the rectified pseudo-data
    (``target = λf + ξw(Y − λf)`` wins out of ``count = λ + ξw(1 − λ)`` comparisons per item) by the
    one Bradley-Terry core on per-pair sums.
    ``pred_weight`` / ``human_weight`` (default 1): how many decided comparisons the item counts for
    under the judge's and the human's label (``pred`` / ``Y`` are then the win shares among them):
    the number of verdicts (answer orders) of the item, 0 for "none" (both answers wrong), so that
    with no audits the fit is exactly the ranking table's (``lsqa.stats.reports.rank_table``: every
    verdict a comparison, ties half a win, "none" left out). Then ``target = λ c_f f +
    ξw(c_Y Y − λ c_f f)``, ``count = λ c_f + ξw(c_Y − λ c_f)``. The covariance is the PPI++ sandwich
    ``H⁻¹ Cov(ψ) H⁻¹ / N``, assembled per pair and stratum (no items × systems matrix).
    """
    names = tuple(dict.fromkeys(systems))
    if len(names) != len(systems) and isinstance(system_a, np.ndarray) and system_a.dtype.kind in "iu":
        raise ValueError("systems has repeats: give the items' systems by name, not by index")
    a, b, f, cf, cy = _bt_items(names, system_a, system_b, pred, d, pred_weight, human_weight)
    n_items = len(f)
    m = len(names)
    audited = d.audited
    n_aud = int(audited.sum())
    y = np.where(audited, d.human, 0.0)
    cy = np.where(audited, cy, 0.0)
    per_system = np.bincount(a, minlength=m) + np.bincount(b, minlength=m)
    aud_per_system = np.bincount(a[audited], minlength=m) + np.bincount(b[audited], minlength=m)
    wts, lam_used, method, warnings = _bt_weights(d, n_aud, n_items, lam)

    ridge = 0.0
    beta, ok = _bt_fit(m, a, b, f, y, wts, lam_used, ridge, cf, cy)
    if not ok or np.max(np.abs(beta)) > MAX_ABS_BETA:
        ridge = FALLBACK_RIDGE
        warnings.append("some strengths are unbounded on these data: a weak prior on β keeps them finite")
        beta, ok = _bt_fit(m, a, b, f, y, wts, lam_used, ridge, cf, cy)

    strata = wts.strata
    n_strata = int(strata.max()) + 1
    size = np.bincount(strata, minlength=n_strata).astype(float)

    def stratum_mean(v: np.ndarray) -> np.ndarray:       # _stratum_means of a per-item scalar
        return (np.bincount(strata, wts.w * np.nan_to_num(v), n_strata) / size)[strata]

    def stratum_vec(r: np.ndarray) -> np.ndarray:        # Hájek mean of r_i·x_i per stratum, (strata, m)
        v = wts.w * np.nan_to_num(r)
        return (np.bincount(strata * m + a, v, n_strata * m)
                - np.bincount(strata * m + b, v, n_strata * m)).reshape(n_strata, m) / size[:, None]

    def hessian(bt_, lam_h):
        # Each item's curvature weight: λ c_f plus its stratum's audit mean of c_Y − λ c_f (1 when
        # every weight is 1; c_f alone without audits).
        weight = cf if n_aud == 0 else lam_h * cf + stratum_mean(cy - lam_h * cf)
        mu = bt.sigmoid(bt_[a] - bt_[b])
        h = _gram_items(m, a, b, np.maximum(weight, 0.0) * mu * (1 - mu)) / n_items + ridge / n_items * np.eye(m)
        return h + 1.0 / m  # fixes the mean-0 direction; the inverse is then the constrained one

    center = np.eye(m) - 1.0 / m
    xi_w = wts.w * wts.small_sample

    def residuals(bt_):
        mu = bt.sigmoid(bt_[a] - bt_[b])
        return cf * (mu - f), cy * (mu - y)      # g_f = r_f·x, g_y = r_y·x

    def parts(bt_) -> tuple[_Influence, _Influence]:
        r_f, r_y = residuals(bt_)
        if n_aud == 0:   # ψ = g_f ("A" with λ = 1 is folded in)
            return _Influence(np.zeros((n_strata, m)), np.zeros(n_items), r_f), \
                _Influence(np.zeros((n_strata, m)), np.zeros(n_items), np.zeros(n_items))
        alpha = 1.0 - xi_w
        return (_Influence(stratum_vec(r_y), alpha, xi_w * r_y),
                _Influence(-stratum_vec(r_f), alpha, alpha * r_f))

    def cov_of(p, q):
        return _infl_cov(p, q, a, b, strata, m)

    h_inv = center @ np.linalg.inv(hessian(beta, lam_used)) @ center
    if n_aud and lam is None and n_aud < n_items:
        a_part, b_part = parts(beta)
        lam_used = _optimal_lambda_parts(a_part, b_part, h_inv, cov_of)
        beta, ok = _bt_fit(m, a, b, f, y, wts, lam_used, ridge, cf, cy)
        h_inv = center @ np.linalg.inv(hessian(beta, lam_used)) @ center
    a_part, b_part = parts(beta)
    scale = lam_used if n_aud else 0.0
    psi = _Influence(a_part.U + scale * b_part.U, a_part.alpha, a_part.rho + scale * b_part.rho) if n_aud else a_part
    cov = h_inv @ cov_of(psi, psi) @ h_inv / n_items
    r_f, r_y = residuals(beta)
    judge = _Influence(np.zeros((n_strata, m)), np.zeros(n_items), lam_used * r_f)
    judge_part = h_inv @ cov_of(judge, judge) @ h_inv / n_items
    effects = None
    if n_aud:
        # An audited item's pull on β: −H⁻¹ ξw (g_Y − λ g_f) / N (the one-step influence of its label).
        r = np.where(audited, -wts.w * (r_y - lam_used * r_f) / n_items, 0.0)
        effects = Pulls(r, a, b, h_inv)
    if not ok:
        warnings.append("the Bradley-Terry fit did not converge")
    if 0 < n_aud < FEW_AUDITS:
        warnings.append(f"only {n_aud} usable audits: the intervals are rough (coverage falls below 95%)")
    # Each β rests mostly on the audits of its own system: the fewest of those set the t quantile.
    df = max(1, int(aud_per_system.min()) - 1) if 0 < n_aud < n_items else 0
    return BTEstimate(names, beta, cov, level, float(lam_used), n_items, n_aud, method, per_system,
                      aud_per_system, tuple(warnings), judge_part, effects, ridge, df)


def system_indices(names: Sequence[str], system_a, system_b) -> tuple[np.ndarray, np.ndarray]:
    """Each item's two systems as indices into ``names`` (distinct): from names, or from integer arrays
    that are such indices already (a million items then need no Python lookup each). ValueError
    naming a system that is not in ``names``."""
    if all(isinstance(x, np.ndarray) and x.dtype.kind in "iu" for x in (system_a, system_b)):
        a, b = system_a.astype(np.int64), system_b.astype(np.int64)
        out = [k for x in (a, b) for k in x[(x < 0) | (x >= len(names))][:1].tolist()]
        if out:
            raise ValueError(f"system index {out[0]} is not in the systems list ({len(names)} systems)")
        return a, b
    index = {s: k for k, s in enumerate(names)}
    try:
        return (np.array([index[s] for s in system_a], dtype=np.int64),
                np.array([index[s] for s in system_b], dtype=np.int64))
    except KeyError as exc:
        raise ValueError(f"system {exc.args[0]!r} is not in the systems list") from None


def _bt_items(names: tuple[str, ...], system_a: Sequence[str], system_b: Sequence[str], pred: Sequence[float],
              d: Design, pred_weight: Sequence[float] | None, human_weight: Sequence[float] | None):
    """``(a, b, f, c_f, c_Y)`` of ``ppi_bradley_terry``'s items as arrays (system indices into ``names``,
    judge outcomes, weights; 1 by default), or a ValueError naming the input that does not fit."""
    a, b = system_indices(names, system_a, system_b)
    f = np.asarray(pred, dtype=float)
    n_items = len(f)
    if not (len(a) == len(b) == n_items == len(d.human)):
        raise ValueError("system_a, system_b, pred and the design need one entry per item")
    if n_items == 0:
        raise ValueError("no comparisons")
    if np.any(a == b):
        raise ValueError("an item compares a system with itself")
    cf = np.ones(n_items) if pred_weight is None else np.asarray(pred_weight, dtype=float)
    cy = np.ones(n_items) if human_weight is None else np.asarray(human_weight, dtype=float)
    if len(cf) != n_items or len(cy) != n_items or np.any(cf < 0) or np.any(cy < 0):
        raise ValueError("pred_weight and human_weight need one non-negative entry per item")
    return a, b, f, cf, cy


def _bt_weights(d: Design, n_aud: int, n_items: int, lam: float | None) -> tuple[_Weights, float, str, list[str]]:
    """``(weights, λ, method, warnings)`` ``ppi_bradley_terry`` starts from: the audits' Hájek weights
    and the given λ (1 by default), or, without audits, none and the judge's fit alone (λ = 1)."""
    if n_aud == 0:
        wts = _Weights(np.zeros(n_items), np.zeros(n_items, dtype=np.int64), (), np.ones(n_items), 0)
        no_audits = "no usable audits: this is the judge's ranking, its intervals ignore the judge's errors"
        return wts, 1.0, JUDGE_ONLY, [no_audits]
    wts = _hajek_weights(d)
    method = "human-only" if n_aud == n_items else "ppi++"
    return wts, 1.0 if lam is None else float(lam), method, list(wts.warnings)


def label_pulls(systems: Sequence[str], system_a: Sequence[str], system_b: Sequence[str], beta: np.ndarray,
                change: Sequence[float]) -> Pulls:
    """(N, m) (a :class:`Pulls`): how far changing item ``k``'s outcome by ``change[k]`` moves β (mean 0), to first order.

    The Bradley-Terry score equation Σ_k (σ(s_k) − y_k) x_k = 0 moves by −Δy_k x_k when item k's
    outcome changes by Δy_k, so β moves by H⁻¹ x_k Δy_k with H = Σ σ'(s_k) x_k x_k' at ``beta``
    (one Newton step; Cook's influence of a label). Used to say which overridden verdicts moved a
    rank flip between the judge-only and the overrides rankings. ``system_a`` / ``system_b``: names, or
    indices into ``systems`` (:func:`system_indices`).
    """
    m = len(systems)
    a, b = system_indices(systems, system_a, system_b)
    mu = bt.sigmoid(beta[a] - beta[b])
    center = np.eye(m) - 1.0 / m
    hess = _gram_items(m, a, b, mu * (1 - mu)) + RIDGE * np.eye(m) + 1.0 / m
    h_inv = center @ np.linalg.inv(hess) @ center
    return Pulls(np.asarray(change, dtype=float), a, b, h_inv)


# --------------------------------------------------------------------------------------------
# Power analysis: audits needed to separate two estimates
# --------------------------------------------------------------------------------------------


def audits_to_separate(diff: float, var_now: float, var_judge: float, n_audited: int, n_total: int,
                       *, level: float = 0.95, power: float = POWER) -> int | None:
    """About how many more random audits make ``|diff|`` significant at ``level`` with ``power``.

    PPI variance ≈ (judge part, which does not shrink with audits) + (rectifier part) ∝ 1/n; at
    the current rates the rectifier part after ``k`` more audits is ``(var_now − var_judge)·n/(n+k)``.
    Returns 0 when already separated, None when even auditing every item would not do it.
    """
    z = _z(level) + float(norm.ppf(power))
    if n_audited <= 0:
        return None
    if abs(diff) >= _z(level) * np.sqrt(max(var_now, 0.0)):
        return 0
    target = (diff / z) ** 2
    rect = max(var_now - var_judge, 1e-18)
    if target <= var_judge:
        return None
    n_needed = n_audited * rect / (target - var_judge)
    k = int(np.ceil(n_needed - n_audited))
    if n_audited + k > n_total:
        return None
    return max(k, 1)
