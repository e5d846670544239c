"""Style control: Bradley-Terry strengths with answer length as a covariate.

The method is LMArena's (Li et al., "Does style matter? Disentangling style and substance in
Chatbot Arena", LMSYS blog, Aug 2024; FastChat ``elo_analysis.py`` / ``arena-rank``): a logistic
regression of the outcome "A wins" on the Bradley-Terry design (+1 in A's system's column, −1 in
B's, as in paper §3.2 eq. 1 with ``γ = e^β``) plus a style feature, fitted jointly:

    logit P(A beats B) = β_A − β_B + c · d,   d = (len_A − len_B) / (len_A + len_B)

``len`` is the answer's length in **words** (whitespace-separated tokens; ``LENGTH_UNIT``), so ``d``
lies in [−1, 1]: 1/3 when A's answer is twice as long as B's. ``c`` (the length coefficient) says how
much a longer answer wins by itself, whoever wrote it; ``β`` are then the "style-controlled"
strengths: what is left of each system's wins once length is accounted for. Unlike Arena, ``d`` is
not standardised by its spread, so ``c`` keeps one meaning across judges and workspaces: an answer
twice as long as the other gains ``c / 3`` in log-odds of winning.

Ties and ``none`` as in :mod:`lsqa.stats.ranking` (``tie_model="half"``): a tie is half a win for
each side (outcome 0.5 in the log-likelihood), a ``none`` verdict (both answers wrong) is left out
and counted. That fit gives the style-controlled strengths, on the plain ranking's scale. The length
coefficient ``c`` is fitted by the same logistic model on the **decisive** verdicts only (A or B):
counting ties as half wins pulls every log-odds towards 0 by about the tie rate, so a judge with 30%
ties would show a coefficient about 30% smaller for the same preference. Among decisive verdicts the
winner's log-odds is exactly ``β_A − β_B + c·d`` under Davidson's (1970) tie model (and under ties
that strike at random), whatever the tie rate, so ``c`` compares across judges that tie more or less
often; with no decisive verdict ``c`` is not estimable (nan). Identification: mean β = 0 (or β_anchor = 0). When the comparison graph is not strongly
connected the plain MLE does not exist and the same fallback ridge ``(λ/2)·Σβ²`` with
``λ = FALLBACK_PRIOR`` is used (also on ``c``), per bootstrap round as in ``bootstrap_bradley_terry``;
so it is where length alone separates the outcomes (Newton does not converge: ``c`` would be infinite).

Fit: Newton's method (IRLS) with step halving on the convex negative log-likelihood. Confidence
intervals: the percentile bootstrap lsqa uses for rankings (Efron & Tibshirani 1993), resampling
comparisons (or whole questions). With a continuous covariate the rows cannot be aggregated per
pair as ``bootstrap_bradley_terry`` does, so each round is a vector of multinomial row weights and
all rounds are fitted together by a batched Newton solver (a round costs one small solve per step).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import sparse
from scipy.stats import rankdata

from lsqa.stats.ranking import (FALLBACK_PRIOR, _identify, accuracy_ci, comparison_groups, count_comparisons,
                                is_strongly_connected, unbounded_systems)
from lsqa.vocabulary import normalize_winner

FEATURES = ("length",)          # the style features `lsqa rank --style-control` accepts
LENGTH_UNIT = "words"           # answers are measured in whitespace-separated words
FEATURE_TEXT = "(len_A - len_B) / (len_A + len_B), answer lengths in words"
_TOL = 1e-10
_MAX_ITER = 100
_MAX_HALVINGS = 30
_SAFE_STEP = 1e-3               # Newton steps below this are taken without a line search (as in ranking)
_CHUNK_CELLS = 4_000_000        # bootstrap rounds per chunk ≈ this / rows (bounds memory)


def length_difference(len_a: Sequence[float], len_b: Sequence[float]) -> np.ndarray:
    """The normalised length difference ``(len_A − len_B) / (len_A + len_B)``; 0 when both are empty."""
    a, b = np.asarray(len_a, dtype=float), np.asarray(len_b, dtype=float)
    if np.any(a < 0) or np.any(b < 0):
        raise ValueError("answer lengths must be >= 0")
    total = a + b
    return np.divide(a - b, total, out=np.zeros_like(total), where=total > 0)


@dataclass(frozen=True)
class StyleData:
    """One row per decided comparison: systems (indices), style feature ``d`` and outcome ``y``
    (1 = A won, 0 = B won, 0.5 = tie)."""

    systems: tuple[str, ...]
    ia: np.ndarray
    ib: np.ndarray
    d: np.ndarray
    y: np.ndarray
    n_excluded: int = 0
    question: np.ndarray | None = None   # question index of each row (for the by-question bootstrap)

    @property
    def n(self) -> int:
        return len(self.y)

    def design(self) -> np.ndarray:
        """Rows × (systems + 1): +1 for A's system, −1 for B's, then ``d``."""
        m = len(self.systems)
        X = np.zeros((self.n, m + 1))
        rows = np.arange(self.n)
        X[rows, self.ia] = 1.0
        X[rows, self.ib] = -1.0
        X[:, m] = self.d
        return X

    @property
    def decisive(self) -> np.ndarray:
        """Rows with a winner (A or B), not a tie: the rows the length coefficient is fitted on."""
        return self.y != 0.5

    def rows(self, keep: np.ndarray) -> StyleData:
        """These data restricted to the rows ``keep`` (same systems, same indices)."""
        q = None if self.question is None else self.question[keep]
        return StyleData(self.systems, self.ia[keep], self.ib[keep], self.d[keep], self.y[keep], self.n_excluded, q)

    def win_matrix(self, weights: np.ndarray | None = None) -> np.ndarray:
        """Eq. 2's ``W`` (ties half a win each) of these rows, optionally weighted (a bootstrap round)."""
        m = len(self.systems)
        w = np.ones(self.n) if weights is None else weights
        W = np.zeros((m, m))
        np.add.at(W, (self.ia, self.ib), w * self.y)
        np.add.at(W, (self.ib, self.ia), w * (1 - self.y))
        return W


def style_data(system_a: Sequence[str], system_b: Sequence[str], winner: Sequence[str],
               len_a: Sequence[float], len_b: Sequence[float], *, question_id: Sequence | None = None,
               systems: Sequence[str] | None = None) -> StyleData:
    """Rows → :class:`StyleData`. ``winner``: 'A', 'B', 'tie' or 'none' (left out and counted)."""
    a, b, w = list(system_a), list(system_b), list(winner)
    if not (len(a) == len(b) == len(w) == len(len_a) == len(len_b)):
        raise ValueError("system_a, system_b, winner and the two lengths must have the same length")
    code = [normalize_winner(x) for x in w]
    names = list(dict.fromkeys(systems if systems is not None else [s for pair in zip(a, b) for s in pair]))
    index = {s: k for k, s in enumerate(names)}
    unknown = sorted({str(s) for s in a + b if s not in index})
    if unknown:
        raise ValueError(f"systems {unknown} are not in the given systems list")
    keep = np.array([c != "none" for c in code], dtype=bool)
    ia = np.array([index[s] for s in a], dtype=np.int64)[keep] if a else np.zeros(0, dtype=np.int64)
    ib = np.array([index[s] for s in b], dtype=np.int64)[keep] if b else np.zeros(0, dtype=np.int64)
    if np.any(ia == ib):
        raise ValueError("a comparison pits a system against itself")
    y = np.array([{"A": 1.0, "B": 0.0, "tie": 0.5}.get(c, np.nan) for c in code], dtype=float)[keep] \
        if code else np.zeros(0)
    d = length_difference(len_a, len_b)[keep] if len(a) else np.zeros(0)
    q = None
    if question_id is not None:
        qs = [str(x) for x, k in zip(question_id, keep) if k]
        qindex = {x: k for k, x in enumerate(dict.fromkeys(qs))}
        q = np.array([qindex[x] for x in qs], dtype=np.int64)
    return StyleData(tuple(str(s) for s in names), ia, ib, d, y, int((~keep).sum()), q)


def _newton(X: np.ndarray, y: np.ndarray, w: np.ndarray, lam: np.ndarray, x0: np.ndarray):
    """Batched penalised logistic regression: rounds × rows weights ``w``, ridge ``lam`` per round.

    The likelihood depends on β only through differences; the penalty ``(Σβ)²/2`` pins mean β = 0
    without changing the fit, so every Hessian is invertible."""
    B, k = x0.shape
    m = k - 1
    e = np.zeros(k)
    e[:m] = 1.0
    ridge = np.ones(k)

    def objective(x):
        eta = x @ X.T
        nll = (w * (np.logaddexp(0.0, eta) - y * eta)).sum(axis=1)
        return nll + 0.5 * lam * (x**2 * ridge).sum(axis=1) + 0.5 * (x @ e) ** 2

    x = x0.copy()
    f = objective(x)
    converged = np.zeros(B, dtype=bool)
    for _ in range(_MAX_ITER):
        eta = x @ X.T
        p = 0.5 * (1.0 + np.tanh(0.5 * eta))  # σ(η) without overflow
        grad = (w * (p - y)) @ X + lam[:, None] * x + (x @ e)[:, None] * e
        H = (X.T[None] * (w * p * (1 - p))[:, None, :]) @ X
        # 1e-9·I only in the Hessian (the fixed point is still the exact optimum): where length
        # separates the outcomes p(1−p) underflows to 0 and the step must stay finite until the
        # caller sees no convergence and refits with the fallback ridge.
        H += (lam[:, None, None] + 1e-9) * np.eye(k) + np.outer(e, e)[None]
        step = -np.linalg.solve(H, grad[..., None])[..., 0]
        t = np.ones(B)
        new = x + step
        if np.abs(step).max() < _SAFE_STEP:  # near the optimum Newton steps are safe: no line search
            x, converged = new, np.abs(step).max(axis=1) < _TOL
            if converged.all():
                break
            f = objective(x)
            continue
        f_new = objective(new)
        for _ in range(_MAX_HALVINGS):
            worse = f_new > f + 1e-12 * np.abs(f)
            if not worse.any():
                break
            t = np.where(worse, t / 2, t)
            new = np.where(worse[:, None], x + t[:, None] * step, new)
            f_new = np.where(worse, objective(new), f_new)
        moved = np.abs(new - x).max(axis=1)
        x, f = new, f_new
        converged = moved < _TOL
        if converged.all():
            break
    return x, converged


def _lam_for(data: StyleData, weights: np.ndarray | None, prior: float | None) -> float:
    if prior is not None:
        if prior < 0:
            raise ValueError("prior must be >= 0")
        return float(prior)
    return 0.0 if is_strongly_connected(data.win_matrix(weights)) else FALLBACK_PRIOR


def _round_priors(data: StyleData, w: np.ndarray, prior: float | None, full_wins: np.ndarray, full_ok: bool,
                  to_cells) -> np.ndarray:
    """Ridge λ per bootstrap round: the fallback where that round's MLE would not exist. A round
    can only lose strong connectivity where a direction that had wins in the data has none."""
    if prior is not None:
        return np.full(len(w), float(prior))
    if not full_ok:
        return np.full(len(w), FALLBACK_PRIOR)
    m = len(data.systems)
    wins = np.asarray((to_cells.T @ w.T).T)
    suspect = np.any((wins == 0) & (full_wins > 0)[None], axis=1)
    lam = np.zeros(len(w))
    for r in np.flatnonzero(suspect):
        if not is_strongly_connected(wins[r].reshape(m, m)):
            lam[r] = FALLBACK_PRIOR
    return lam


@dataclass(frozen=True)
class StyleFit:
    """Style-controlled Bradley-Terry fit: ``beta`` (identified), ``coef`` of the length feature."""

    systems: tuple[str, ...]
    beta: np.ndarray
    coef: float
    n_comparisons: int
    n_excluded: int
    prior: float
    converged: bool

    @property
    def strength(self) -> np.ndarray:
        return np.exp(self.beta)

    @property
    def rank(self) -> np.ndarray:
        return rankdata(-np.round(self.beta, 12), method="min").astype(int)


def fit_style_controlled(data: StyleData, *, anchor: str | None = None, prior: float | None = None) -> StyleFit:
    """Maximum-likelihood ``β`` (all decided verdicts, ties half a win) and length coefficient ``c``
    (decisive verdicts only; module docstring)."""
    m = len(data.systems)
    if m == 0 or data.n == 0:
        raise ValueError("no decided comparisons to fit")

    def fit(sub: StyleData):
        lam = _lam_for(sub, None, prior)
        X, w = sub.design(), np.ones((1, sub.n))
        x, conv = _newton(X, sub.y, w, np.array([lam]), np.zeros((1, m + 1)))
        if not conv[0] and prior is None and lam == 0:
            # Length alone separates the outcomes (e.g. a person who always picked the shorter
            # answer): the MLE of the coefficient is infinite; the fallback ridge keeps it finite.
            lam = FALLBACK_PRIOR
            x, conv = _newton(X, sub.y, w, np.array([lam]), np.zeros((1, m + 1)))
        return x[0], lam, bool(conv[0])

    x, lam, conv = fit(data)
    decisive = data.rows(data.decisive)
    coef = fit(decisive)[0][m] if decisive.n else float("nan")
    return StyleFit(data.systems, _identify(x[:m], data.systems, anchor), float(coef), data.n,
                    data.n_excluded, lam, conv)


@dataclass(frozen=True)
class StyleBootstrap:
    """Percentile intervals of β and of the length coefficient (``samples``: rounds × systems)."""

    level: float
    rounds: int
    seed: int | None
    by_question: bool
    beta_low: np.ndarray
    beta_high: np.ndarray
    coef_low: float
    coef_high: float
    samples: np.ndarray
    coef_samples: np.ndarray
    n_fallback_rounds: int = 0


def bootstrap_style_controlled(data: StyleData, *, rounds: int = 1000, level: float = 0.95, seed: int | None = 0,
                               by_question: bool = False, anchor: str | None = None,
                               prior: float | None = None) -> StyleBootstrap:
    """Percentile bootstrap of :func:`fit_style_controlled`: each round resamples the comparisons
    (multinomial row weights) or, with ``by_question``, whole questions with all their comparisons."""
    if rounds < 1:
        raise ValueError("rounds must be >= 1")
    if not 0 < level < 1:
        raise ValueError("level must be in (0, 1)")
    if by_question and data.question is None:
        raise ValueError("by_question=True needs a question id for every comparison")
    point = fit_style_controlled(data, prior=prior)
    m, n = len(data.systems), data.n
    rng = np.random.default_rng(seed)
    start = np.concatenate([point.beta - point.beta.mean(), [point.coef if np.isfinite(point.coef) else 0.0]])
    samples, coefs = np.empty((rounds, m)), np.full(rounds, np.nan)
    fallback = np.zeros(rounds, dtype=bool)
    chunk = max(1, min(rounds, _CHUNK_CELLS // max(1, n)))

    def solver(sub: StyleData):
        """Fit every round of a chunk on the rows of ``sub`` (all rows for β, the decisive ones for c)."""
        X, k = sub.design(), sub.n
        # Row → directed cell of W (i beat j), for the win matrices of all rounds in one product.
        to_cells = (sparse.csr_matrix((sub.y, (np.arange(k), sub.ia * m + sub.ib)), shape=(k, m * m))
                    + sparse.csr_matrix((1 - sub.y, (np.arange(k), sub.ib * m + sub.ia)), shape=(k, m * m))).tocsc()
        full_wins = np.asarray(to_cells.sum(axis=0)).ravel()
        full_ok = is_strongly_connected(full_wins.reshape(m, m))

        def solve(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            lam = _round_priors(sub, w, prior, full_wins, full_ok, to_cells)
            used = lam > (prior or 0.0)
            x, conv = _newton(X, sub.y, w, lam, np.tile(start, (len(w), 1)))
            redo = np.flatnonzero(~conv & (lam == 0)) if prior is None else np.zeros(0, dtype=int)
            if redo.size:  # rounds where length separates the outcomes: the fallback ridge (fit_style_controlled)
                lam[redo] = FALLBACK_PRIOR
                x[redo], _ = _newton(X, sub.y, w[redo], lam[redo], np.tile(start, (redo.size, 1)))
                used[redo] = True
            return x, used
        return solve

    decisive = data.decisive
    fit_all = solver(data)
    fit_decisive = solver(data.rows(decisive)) if np.isfinite(point.coef) else None
    done = 0
    while done < rounds:
        b = min(chunk, rounds - done)
        if by_question:
            n_q = int(data.question.max()) + 1
            picks = rng.multinomial(n_q, np.full(n_q, 1.0 / n_q), size=b).astype(float)
            w = picks[:, data.question]
        else:
            w = rng.multinomial(n, np.full(n, 1.0 / n), size=b).astype(float)
        x, used = fit_all(w)
        samples[done:done + b] = _identify(x[:, :m], data.systems, anchor)
        if fit_decisive is not None:   # the same round's decisive rows give its length coefficient
            x, used_c = fit_decisive(w[:, decisive])
            coefs[done:done + b] = x[:, m]
            used |= used_c
        fallback[done:done + b] = used
        done += b
    n_fallback = int(fallback.sum())
    alpha = 1.0 - level
    low, high = np.quantile(samples, [alpha / 2, 1 - alpha / 2], axis=0)
    c_low, c_high = np.quantile(coefs, [alpha / 2, 1 - alpha / 2]) if np.isfinite(point.coef) else (np.nan, np.nan)
    return StyleBootstrap(level, rounds, seed, by_question, low, high, float(c_low), float(c_high), samples, coefs,
                          n_fallback)


def longer_wins(data: StyleData, *, level: float = 0.95) -> dict:
    """Share of decisive comparisons of answers of different lengths won by the longer answer
    (Wilson interval): the plain-words companion of the coefficient, which also controls for who
    wrote the answers."""
    decisive = (data.y != 0.5) & (data.d != 0)
    longer_won = ((data.d > 0) & (data.y == 1.0)) | ((data.d < 0) & (data.y == 0.0))
    k, n = int((decisive & longer_won).sum()), int(decisive.sum())
    if n == 0:
        return {"share": None, "ci_low": None, "ci_high": None, "n": 0}
    ci = accuracy_ci(k, n, level=level, method="wilson")
    return {"share": ci.p, "ci_low": ci.low, "ci_high": ci.high, "n": n}


def _finite(x) -> float | None:
    x = float(x)
    return x if np.isfinite(x) else None


def length_coefficient(data: StyleData, *, bootstrap: int = 1000, seed: int = 0, level: float = 0.95) -> dict:
    """The length coefficient with its bootstrap CI and the longer-answer win share, JSON-ready:
    ``{"estimate", "ci_low", "ci_high", "n", "longer_wins": {...}}`` (nulls when nothing is decided)."""
    if data.n == 0:
        return {"estimate": None, "ci_low": None, "ci_high": None, "n": 0, "longer_wins": longer_wins(data)}
    fit = fit_style_controlled(data)
    out = {"estimate": _finite(fit.coef), "ci_low": None, "ci_high": None, "n": data.n, "longer_wins": longer_wins(data, level=level)}
    if bootstrap > 0:
        ci = bootstrap_style_controlled(data, rounds=bootstrap, seed=seed, level=level)
        out.update(ci_low=_finite(ci.coef_low), ci_high=_finite(ci.coef_high))
    return out


def style_table(rows: Sequence[dict], *, bootstrap: int = 1000, seed: int = 0, by_question: bool = False,
                anchor: str | None = None, level: float = 0.95, feature: str = "length") -> dict:
    """Style-controlled ranking of rows with ``system_a, system_b, winner, len_a, len_b`` (+ ``question_id``).

    Returns ``{"feature", "unit", "definition", "coefficient": {"estimate", "ci_low", "ci_high"},
    "longer_wins": {...}, "systems": [{"system", "beta", "strength", "ci_low", "ci_high", "rank",
    "estimable", "note", "rank_low", "rank_high", "tier"}, ...] (strongest first; a system the data do
    not bound has null CI bounds and a note), "n_comparisons", "n_excluded",
    "bootstrap", "converged"}``; ``ci_low`` / ``ci_high`` bound the style-controlled strength e^β.
    """
    if feature not in FEATURES:
        raise ValueError(f"unknown style feature {feature!r}; use one of {', '.join(FEATURES)}")
    rows = list(rows)
    qids = [r.get("question_id") for r in rows] if by_question else None
    data = style_data([r["system_a"] for r in rows], [r["system_b"] for r in rows], [r["winner"] for r in rows],
                      [r["len_a"] for r in rows], [r["len_b"] for r in rows], question_id=qids)
    if data.n == 0:
        raise ValueError("every comparison is 'none' (both answers wrong): nothing to rank")
    fit = fit_style_controlled(data, anchor=anchor)
    counts = count_comparisons([r["system_a"] for r in rows], [r["system_b"] for r in rows],
                               [r["winner"] for r in rows], systems=data.systems)
    ci = ranks = None
    if bootstrap > 0:
        from lsqa.stats.rank_intervals import from_bootstrap

        ci = bootstrap_style_controlled(data, rounds=bootstrap, seed=seed, level=level, by_question=by_question,
                                        anchor=anchor)
        ranks = from_bootstrap(fit.beta, ci.samples, level=level, groups=comparison_groups(counts))
    # A system that always won (or never won) against those it met has no bound in the data: the
    # ridge alone holds it, so its interval is withheld, as in the plain ranking (ranking.unbounded_systems).
    notes = unbounded_systems(counts)
    order = sorted(range(len(fit.systems)), key=lambda k: (fit.rank[k], fit.systems[k]))
    systems = []
    for k in order:
        bounded = ci is not None and k not in notes
        row = {"system": fit.systems[k], "beta": float(fit.beta[k]), "strength": float(fit.strength[k]),
               "ci_low": _finite(np.exp(ci.beta_low[k])) if bounded else None,
               "ci_high": _finite(np.exp(ci.beta_high[k])) if bounded else None, "rank": int(fit.rank[k]),
               "estimable": k not in notes, "note": notes.get(k, "")}
        if ranks is not None:
            row.update(ranks.fields(k))
        systems.append(row)
    return {"feature": feature, "unit": LENGTH_UNIT, "definition": FEATURE_TEXT,
            "coefficient": {"estimate": _finite(fit.coef), "ci_low": _finite(ci.coef_low) if ci else None,
                            "ci_high": _finite(ci.coef_high) if ci else None},
            "longer_wins": longer_wins(data, level=level), "systems": systems,
            "n_comparisons": data.n, "n_excluded": data.n_excluded, "converged": fit.converged,
            "bootstrap": {"rounds": bootstrap, "seed": seed, "by_question": by_question,
                          "fallback_rounds": ci.n_fallback_rounds if ci else 0}}


__all__ = ["FEATURES", "LENGTH_UNIT", "StyleBootstrap", "StyleData", "StyleFit", "bootstrap_style_controlled",
           "fit_style_controlled", "length_coefficient", "length_difference", "longer_wins", "style_data", "style_table"]
