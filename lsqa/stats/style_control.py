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

Fit: the one Bradley-Terry core (:mod:`lsqa.stats.bradley_terry`), on the rows collapsed per (pair,
length cell): exact up to ``bradley_terry.EXACT_MAX_ROWS`` rows, binned with a two-point rule above (a
million verdicts become tens of thousands of cells). Confidence intervals: by default the sandwich (robust)
covariance of the fit (Huber 1967; White 1980; clustered by question with ``by_question``), as arena-rank
reports for LMArena's style control; the rank intervals and tiers come from the same covariance
(:func:`lsqa.stats.rank_intervals.from_covariance`). ``intervals="bootstrap"`` keeps the percentile
bootstrap (Efron & Tibshirani 1993), each round a multinomial draw over the cells' outcome counts (or over
questions), all rounds fitted together by the core's batched Newton solver: no round refits the rows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import sparse
from scipy.stats import norm, rankdata

from lsqa.stats import bradley_terry as bt
from lsqa.stats.ranking import (
    FALLBACK_PRIOR,
    _identify,
    accuracy_ci,
    comparison_groups,
    counts_from_cells,
    is_strongly_connected,
    unbounded_systems,
)
from lsqa.vocabulary import WINNERS, normalize_winner

FEATURES = ("length",)          # the style features `lsqa rank --style-control` accepts
LENGTH_UNIT = "words"           # answers are measured in whitespace-separated words
FEATURE_TEXT = "(len_A - len_B) / (len_A + len_B), answer lengths in words"
INTERVALS = ("sandwich", "bootstrap")
_CHUNK_CELLS = 4_000_000        # bootstrap rounds per chunk ≈ this / cells (bounds memory)


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
    (1 = A won, 0 = B won, 0.5 = tie). ``d`` is (N,) for one feature or (N, k) for k style features
    (each from A's side, e.g. length, then markdown or list counts)."""

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

    @property
    def features(self) -> np.ndarray:
        """The style features as (N, k)."""
        return np.asarray(self.d, dtype=float).reshape(self.n, -1)

    def design(self) -> np.ndarray:
        """Rows × (systems + k): +1 for A's system, −1 for B's, then the features."""
        m = len(self.systems)
        z = self.features
        X = np.zeros((self.n, m + z.shape[1]))
        rows = np.arange(self.n)
        X[rows, self.ia] = 1.0
        X[rows, self.ib] = -1.0
        X[:, m:] = z
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
        W = np.bincount(self.ia * m + self.ib, w * self.y, m * m) + np.bincount(self.ib * m + self.ia,
                                                                                  w * (1 - self.y), m * m)
        return W.reshape(m, m)

    def cells(self, exact: bool | None = None) -> bt.CovariateCells:
        """These rows collapsed per (pair, feature cell) for the core (``bradley_terry.covariate_cells``)."""
        return bt.covariate_cells(self.ia, self.ib, self.y, self.features, exact=exact)

    def core_rows(self, by_question: bool = False) -> bt.Rows:
        return bt.Rows(self.ia, self.ib, self.y, self.features, cluster=self.question if by_question else None)


def _as_array(values) -> np.ndarray:
    return values if isinstance(values, np.ndarray) else np.asarray(list(values))


def style_data(system_a: Sequence[str], system_b: Sequence[str], winner: Sequence[str],
               len_a: Sequence[float], len_b: Sequence[float], *, question_id: Sequence | None = None,
               systems: Sequence[str] | None = None) -> StyleData:
    """Rows → :class:`StyleData`. ``winner``: 'A', 'B', 'tie' or 'none' (left out and counted). Columns
    may be lists or numpy arrays (a million rows take well under a second)."""
    a, b, w = _as_array(system_a), _as_array(system_b), _as_array(winner)
    if not (len(a) == len(b) == len(w) == len(len_a) == len(len_b)):
        raise ValueError("system_a, system_b, winner and the two lengths must have the same length")
    # Few distinct values: normalise and index each once, then map (as ranking.count_comparisons).
    wu, winv = np.unique(w.astype(str), return_inverse=True) if len(w) else (np.array([], dtype=str), np.zeros(0, int))
    code = np.array([WINNERS.index(normalize_winner(v)) for v in wu], dtype=np.int64)[winv]
    if systems is not None:
        names = list(dict.fromkeys(systems))
    else:
        both = np.empty(2 * len(a), dtype=object)
        both[0::2], both[1::2] = a, b
        uniq, first = np.unique(both.astype(str), return_index=True) if len(a) else (np.array([]), np.array([], int))
        names = [str(x) for x in uniq[np.argsort(first)]]        # order of first appearance
    index = {s: k for k, s in enumerate(names)}
    su = np.unique(np.concatenate([a.astype(str), b.astype(str)])) if len(a) else np.array([], dtype=str)
    unknown = sorted(str(s) for s in su if s not in index)
    if unknown:
        raise ValueError(f"systems {unknown} are not in the given systems list")
    keep = code != 3
    ia = _index(a.astype(str), index)[keep]
    ib = _index(b.astype(str), index)[keep]
    if np.any(ia == ib):
        raise ValueError("a comparison pits a system against itself")
    y = np.array([1.0, 0.0, 0.5, np.nan])[code][keep]
    d = length_difference(len_a, len_b)[keep] if len(a) else np.zeros(0)
    q = None
    if question_id is not None:
        qs = _as_array(question_id).astype(str)[keep]
        _, first, inv = np.unique(qs, return_index=True, return_inverse=True)
        q = np.argsort(np.argsort(first))[inv].astype(np.int64)   # indices in order of first appearance
    return StyleData(tuple(str(s) for s in names), ia, ib, d, y, int((~keep).sum()), q)


def _index(values: np.ndarray, index: dict) -> np.ndarray:
    uniq, inv = np.unique(values, return_inverse=True) if len(values) else (np.array([], dtype=str), np.zeros(0, int))
    return np.array([index[s] for s in uniq], dtype=np.int64)[inv] if len(uniq) else np.zeros(0, dtype=np.int64)


def _lam_for(data: StyleData, prior: float | None) -> float:
    if prior is not None:
        if prior < 0:
            raise ValueError("prior must be >= 0")
        return float(prior)
    return 0.0 if is_strongly_connected(data.win_matrix()) else FALLBACK_PRIOR


@dataclass(frozen=True)
class _CoreFit:
    x: np.ndarray                 # β (mean 0), then the features' coefficients
    lam: float
    converged: bool
    cells: bt.CovariateCells


def _fit_core(sub: StyleData, prior: float | None, exact: bool | None = None) -> _CoreFit:
    """The core's fit of ``sub``: the plain MLE, or the fallback ridge where it does not exist (the
    comparison graph is not strongly connected, or a feature alone separates the outcomes)."""
    m, k = len(sub.systems), sub.features.shape[1]
    cells = sub.cells(exact)
    lam = _lam_for(sub, prior)

    def solve(lam_):
        prob = bt.Problem(m, cells.pairs, cells.counts[None], "half", np.array([lam_]), np.zeros(1),
                          z=cells.z, offset=cells.offset)
        x, _, conv = bt.newton(prob, np.zeros((1, m + k)))
        return x[0], bool(conv[0])

    x, conv = solve(lam)
    if not conv and prior is None and lam == 0:
        # A feature alone separates the outcomes (e.g. a person who always picked the shorter
        # answer): the MLE of its coefficient is infinite; the fallback ridge keeps it finite.
        lam = FALLBACK_PRIOR
        x, conv = solve(lam)
    return _CoreFit(x, lam, conv, cells)


@dataclass(frozen=True)
class StyleFit:
    """Style-controlled Bradley-Terry fit: ``beta`` (identified), ``coef`` of the (first) style feature,
    ``coefs`` of all of them."""

    systems: tuple[str, ...]
    beta: np.ndarray
    coef: float
    n_comparisons: int
    n_excluded: int
    prior: float
    converged: bool
    coefs: np.ndarray | None = None
    exact: bool = True            # False: the rows were binned before fitting (bradley_terry.covariate_cells)

    @property
    def strength(self) -> np.ndarray:
        return np.exp(self.beta)

    @property
    def rank(self) -> np.ndarray:
        return rankdata(-np.round(self.beta, 12), method="min").astype(int)


def _fits(data: StyleData, prior: float | None, exact: bool | None = None) -> tuple[_CoreFit, _CoreFit | None]:
    m = len(data.systems)
    if m == 0 or data.n == 0:
        raise ValueError("no decided comparisons to fit")
    decisive = data.decisive
    return _fit_core(data, prior, exact), (_fit_core(data.rows(decisive), prior, exact) if decisive.any() else None)


def _style_fit(data: StyleData, full: _CoreFit, dec: _CoreFit | None, anchor: str | None) -> StyleFit:
    m, k = len(data.systems), data.features.shape[1]
    coefs = dec.x[m:] if dec is not None else np.full(k, np.nan)
    return StyleFit(data.systems, _identify(full.x[:m], data.systems, anchor), float(coefs[0]), data.n,
                    data.n_excluded, full.lam, full.converged, coefs, full.cells.exact)


def fit_style_controlled(data: StyleData, *, anchor: str | None = None, prior: float | None = None,
                         exact: bool | None = None) -> StyleFit:
    """Maximum-likelihood ``β`` (all decided verdicts, ties half a win) and length coefficient ``c``
    (decisive verdicts only; module docstring). ``exact``: fit on exact cells whatever the number of
    rows (default: exact up to ``bradley_terry.EXACT_MAX_ROWS`` rows, binned above)."""
    full, dec = _fits(data, prior, exact)
    return _style_fit(data, full, dec, anchor)


@dataclass(frozen=True)
class StyleSandwich:
    """Sandwich (robust) covariances of the style-controlled fit: ``beta_cov`` (m × m, mean-0 β, or
    anchored) from the fit on every decided verdict, ``coef_cov`` (k × k) from the fit on the decisive ones."""

    beta_cov: np.ndarray
    coef_cov: np.ndarray | None
    by_question: bool


def style_sandwich(data: StyleData, fit: StyleFit, *, by_question: bool = False, anchor: str | None = None,
                   full: _CoreFit | None = None, dec: _CoreFit | None = None) -> StyleSandwich:
    """The sandwich covariance ``H⁻¹ J H⁻¹`` of the fit (``bradley_terry.sandwich``), the scores summed per
    question first with ``by_question`` (cluster-robust)."""
    if by_question and data.question is None:
        raise ValueError("by_question=True needs a question id for every comparison")
    m = len(data.systems)
    if full is None:
        full, dec = _fits(data, fit.prior if fit.prior > 0 else None)
    cov = bt.sandwich(m, full.x, data.core_rows(by_question), full.lam)
    beta_cov = bt.identify_cov(cov[:m, :m], m, data.systems, anchor)
    coef_cov = None
    if dec is not None:
        sub = data.rows(data.decisive)
        coef_cov = bt.sandwich(m, dec.x, sub.core_rows(by_question), dec.lam)[m:, m:]
    return StyleSandwich(beta_cov, coef_cov, by_question)


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


def _round_lams(m: int, cells: bt.CovariateCells, counts: np.ndarray, prior: float | None) -> np.ndarray:
    """Ridge λ per round: the fallback where that round's MLE would not exist. A round can only lose
    strong connectivity where a direction that had wins in the data has none."""
    b = counts.shape[0]
    if prior is not None:
        return np.full(b, float(prior))
    pairs = cells.pairs
    full_W = np.zeros((m, m))
    np.add.at(full_W, (pairs[:, 0], pairs[:, 1]), cells.counts[:, 0] + 0.5 * cells.counts[:, 2])
    np.add.at(full_W, (pairs[:, 1], pairs[:, 0]), cells.counts[:, 1] + 0.5 * cells.counts[:, 2])
    if not is_strongly_connected(full_W):
        return np.full(b, FALLBACK_PRIOR)
    fi = pairs[:, 0] * m + pairs[:, 1]
    fj = pairs[:, 1] * m + pairs[:, 0]
    to_w = sparse.csr_matrix((np.ones(2 * len(fi)), (np.r_[np.arange(len(fi)), np.arange(len(fi)) + len(fi)],
                                                      np.r_[fi, fj])), shape=(2 * len(fi), m * m))
    dirs = np.concatenate([counts[..., 0] + 0.5 * counts[..., 2], counts[..., 1] + 0.5 * counts[..., 2]], axis=1)
    W = np.asarray((to_w.T @ dirs.T).T)
    suspect = np.any((W == 0) & (full_W.reshape(-1) > 0)[None], axis=1)
    lam = np.zeros(b)
    lam[np.flatnonzero(suspect)[~is_strongly_connected(W[suspect].reshape(-1, m, m))]] = FALLBACK_PRIOR
    return lam


def _bootstrap_core(m: int, k: int, core: _CoreFit, slots: np.ndarray, prior: float | None):
    """Fit the rounds ``slots`` ((B, 3·source cells) resampled outcome counts) of one fit's cells."""
    cells = core.cells
    counts = cells.round_counts(slots)
    offset = slots @ cells.slot_offset if cells.slot_offset.size else None
    lam = _round_lams(m, cells, counts, prior)
    used = lam > (prior or 0.0)
    start = np.tile(core.x, (len(slots), 1))

    def solve(rows):
        prob = bt.Problem(m, cells.pairs, counts[rows], "half", lam[rows], np.zeros(len(rows)), z=cells.z,
                          offset=None if offset is None else offset[rows])
        return bt.newton(prob, start[rows])

    x, _, conv = solve(np.arange(len(slots)))
    redo = np.flatnonzero(~conv & (lam == 0)) if prior is None else np.zeros(0, dtype=int)
    if redo.size:  # rounds where a feature separates the outcomes: the fallback ridge (as fit_style_controlled)
        lam[redo] = FALLBACK_PRIOR
        x[redo], _, _ = solve(redo)
        used[redo] = True
    return x, used


def bootstrap_style_controlled(data: StyleData, *, rounds: int = 1000, level: float = 0.95, seed: int | None = 0,
                               by_question: bool = False, anchor: str | None = None,
                               prior: float | None = None) -> StyleBootstrap:
    """Percentile bootstrap of :func:`fit_style_controlled`: each round resamples the comparisons (a
    multinomial draw over the cells' outcome counts) or, with ``by_question``, whole questions with all
    their comparisons (a multinomial over questions, summed into the cells); rounds are fitted in
    batches by the core, never one row at a time."""
    if rounds < 1:
        raise ValueError("rounds must be >= 1")
    if not 0 < level < 1:
        raise ValueError("level must be in (0, 1)")
    if by_question and data.question is None:
        raise ValueError("by_question=True needs a question id for every comparison")
    full, dec = _fits(data, prior)
    m, k = len(data.systems), data.features.shape[1]
    rng = np.random.default_rng(seed)
    samples, coefs = np.empty((rounds, m)), np.full(rounds, np.nan)
    fallback = np.zeros(rounds, dtype=bool)
    decisive = data.decisive
    n_q = int(data.question.max()) + 1 if by_question and data.n else 0

    def per_question(core: _CoreFit, question: np.ndarray):
        return sparse.csr_matrix((np.ones(len(question)), (question, core.cells.slot_of_row)),
                                 shape=(n_q, 3 * core.cells.n_source))

    q_full = per_question(full, data.question) if by_question else None
    q_dec = per_question(dec, data.question[decisive]) if by_question and dec is not None else None
    p_full = np.bincount(full.cells.slot_of_row, minlength=3 * full.cells.n_source) / data.n
    # The decisive rows are a subset of each round's rows: the round's draws of decisive slots.
    dec_map = None
    if dec is not None and not by_question:
        rows_full = full.cells.slot_of_row[decisive]
        rows_dec = dec.cells.slot_of_row
        pair_slots, first = np.unique(rows_full * (3 * dec.cells.n_source) + rows_dec, return_index=True)
        weight = np.bincount(np.searchsorted(pair_slots, rows_full * (3 * dec.cells.n_source) + rows_dec),
                             minlength=len(pair_slots)).astype(float)
        src = pair_slots // (3 * dec.cells.n_source)
        dst = pair_slots % (3 * dec.cells.n_source)
        # A full slot of decisive rows maps to one or more decisive slots, in proportion to their rows.
        tot = np.bincount(src, weight, 3 * full.cells.n_source)
        dec_map = sparse.csr_matrix((weight / tot[src], (src, dst)), shape=(3 * full.cells.n_source,
                                                                            3 * dec.cells.n_source))
    chunk = max(1, min(rounds, _CHUNK_CELLS // max(1, 3 * full.cells.n_source)))
    done = 0
    while done < rounds:
        b = min(chunk, rounds - done)
        if by_question:
            picks = rng.multinomial(n_q, np.full(n_q, 1.0 / n_q), size=b).astype(float)
            slots = np.asarray((q_full.T @ picks.T).T)
            slots_dec = np.asarray((q_dec.T @ picks.T).T) if q_dec is not None else None
        else:
            slots = rng.multinomial(data.n, p_full, size=b).astype(float)
            slots_dec = np.asarray((dec_map.T @ slots.T).T) if dec_map is not None else None
        x, used = _bootstrap_core(m, k, full, slots, prior)
        samples[done:done + b] = _identify(x[:, :m], data.systems, anchor)
        if slots_dec is not None:   # the same round's decisive rows give its length coefficient
            x, used_c = _bootstrap_core(m, k, dec, slots_dec, prior)
            coefs[done:done + b] = x[:, m]
            used |= used_c
        fallback[done:done + b] = used
        done += b
    alpha = 1.0 - level
    low, high = np.quantile(samples, [alpha / 2, 1 - alpha / 2], axis=0)
    c_low, c_high = np.quantile(coefs, [alpha / 2, 1 - alpha / 2]) if dec is not None else (np.nan, np.nan)
    return StyleBootstrap(level, rounds, seed, by_question, low, high, float(c_low), float(c_high), samples, coefs,
                          int(fallback.sum()))


def longer_wins(data: StyleData, *, level: float = 0.95) -> dict:
    """Share of decisive comparisons of answers of different lengths won by the longer answer
    (Wilson interval): the plain-words companion of the coefficient, which also controls for who
    wrote the answers."""
    d = data.features[:, 0]
    decisive = (data.y != 0.5) & (d != 0)
    longer_won = ((d > 0) & (data.y == 1.0)) | ((d < 0) & (data.y == 0.0))
    k, n = int((decisive & longer_won).sum()), int(decisive.sum())
    if n == 0:
        return {"share": None, "ci_low": None, "ci_high": None, "n": 0}
    ci = accuracy_ci(k, n, level=level, method="wilson")
    return {"share": ci.p, "ci_low": ci.low, "ci_high": ci.high, "n": n}


def _finite(x) -> float | None:
    x = float(x)
    return x if np.isfinite(x) else None


def _check_intervals(intervals: str) -> None:
    if intervals not in INTERVALS:
        raise ValueError(f"intervals must be one of {INTERVALS}, not {intervals!r}")


def length_coefficient(data: StyleData, *, bootstrap: int = 1000, seed: int = 0, level: float = 0.95,
                       intervals: str = "sandwich") -> dict:
    """The length coefficient with its CI and the longer-answer win share, JSON-ready:
    ``{"estimate", "ci_low", "ci_high", "n", "longer_wins": {...}}`` (nulls when nothing is decided).
    ``bootstrap = 0``: no interval; else the sandwich interval, or ``bootstrap`` rounds of the percentile
    bootstrap with ``intervals="bootstrap"``."""
    _check_intervals(intervals)
    if data.n == 0:
        return {"estimate": None, "ci_low": None, "ci_high": None, "n": 0, "longer_wins": longer_wins(data)}
    full, dec = _fits(data, None)
    fit = _style_fit(data, full, dec, None)
    out = {"estimate": _finite(fit.coef), "ci_low": None, "ci_high": None, "n": data.n, "longer_wins": longer_wins(data, level=level)}
    if bootstrap > 0 and dec is not None:
        if intervals == "bootstrap":
            ci = bootstrap_style_controlled(data, rounds=bootstrap, seed=seed, level=level)
            out.update(ci_low=_finite(ci.coef_low), ci_high=_finite(ci.coef_high))
        else:
            sw = style_sandwich(data, fit, full=full, dec=dec)
            half = float(norm.ppf(0.5 + level / 2)) * np.sqrt(max(sw.coef_cov[0, 0], 0.0))
            out.update(ci_low=_finite(fit.coef - half), ci_high=_finite(fit.coef + half))
    return out


def _row_columns(rows) -> tuple[dict, int]:
    """Rows as dicts, or columns (a mapping of names to sequences): the columns either way."""
    if isinstance(rows, Mapping):
        cols = dict(rows)
        return cols, len(cols["system_a"])
    rows = list(rows)
    keys = ("system_a", "system_b", "winner", "len_a", "len_b")
    cols = {k: [r[k] for r in rows] for k in keys}
    cols["question_id"] = [r.get("question_id") for r in rows]
    return cols, len(rows)


def style_table(rows: Sequence[dict] | Mapping[str, Sequence], *, bootstrap: int = 1000, seed: int = 0,
                by_question: bool = False, anchor: str | None = None, level: float = 0.95, feature: str = "length",
                intervals: str = "sandwich") -> dict:
    """Style-controlled ranking of rows with ``system_a, system_b, winner, len_a, len_b`` (+ ``question_id``),
    given as dicts or as columns (a mapping of those names to sequences or arrays).

    Returns ``{"feature", "unit", "definition", "coefficient": {"estimate", "ci_low", "ci_high"},
    "longer_wins": {...}, "systems": [{"system", "beta", "strength", "ci_low", "ci_high", "rank",
    "estimable", "note", "rank_low", "rank_high", "tier"}, ...] (strongest first; a system the data do
    not bound has null CI bounds and a note), "n_comparisons", "n_excluded", "intervals",
    "bootstrap", "converged"}``; ``ci_low`` / ``ci_high`` bound the style-controlled strength e^β.
    ``bootstrap = 0`` computes no interval; otherwise ``intervals`` says how: the sandwich covariance
    (default) or ``bootstrap`` rounds of the percentile bootstrap. Rank intervals and tiers come from
    the same covariance (``rank_intervals.from_covariance``) or rounds (``from_bootstrap``).
    """
    if feature not in FEATURES:
        raise ValueError(f"unknown style feature {feature!r}; use one of {', '.join(FEATURES)}")
    _check_intervals(intervals)
    cols, _ = _row_columns(rows)
    qids = cols.get("question_id") if by_question else None
    data = style_data(cols["system_a"], cols["system_b"], cols["winner"], cols["len_a"], cols["len_b"],
                      question_id=qids)
    if data.n == 0:
        raise ValueError("every comparison is 'none' (both answers wrong): nothing to rank")
    full, dec = _fits(data, None)
    fit = _style_fit(data, full, dec, anchor)
    m = len(data.systems)
    # Counts per pair (ties half a win, 'none' left out) for the groups and the unbounded systems.
    code = np.where(data.y == 1.0, 0, np.where(data.y == 0.0, 1, 2))
    counts = counts_from_cells(data.systems, data.ia, data.ib, code, np.ones(data.n, dtype=np.int64))
    groups = comparison_groups(counts)
    from lsqa.stats.rank_intervals import from_bootstrap, from_covariance

    beta_low = beta_high = None
    coef_ci = (None, None)
    ranks = None
    fallback_rounds = 0
    if bootstrap > 0 and intervals == "bootstrap":
        ci = bootstrap_style_controlled(data, rounds=bootstrap, seed=seed, level=level, by_question=by_question,
                                        anchor=anchor)
        beta_low, beta_high, coef_ci = ci.beta_low, ci.beta_high, (ci.coef_low, ci.coef_high)
        ranks = from_bootstrap(fit.beta, ci.samples, level=level, groups=groups)
        fallback_rounds = ci.n_fallback_rounds
    elif bootstrap > 0:
        sw = style_sandwich(data, fit, by_question=by_question, anchor=anchor, full=full, dec=dec)
        z = float(norm.ppf(0.5 + level / 2))
        se = np.sqrt(np.clip(np.diag(sw.beta_cov), 0, None))
        beta_low, beta_high = fit.beta - z * se, fit.beta + z * se
        if sw.coef_cov is not None:
            half = z * np.sqrt(max(sw.coef_cov[0, 0], 0.0))
            coef_ci = (fit.coef - half, fit.coef + half)
        ranks = from_covariance(fit.beta, sw.beta_cov, level=level, groups=groups)
    # A system that always won (or never won) against those it met has no bound in the data: the
    # ridge alone holds it, so its interval is withheld, as in the plain ranking (ranking.unbounded_systems).
    notes = unbounded_systems(counts)
    order = sorted(range(m), key=lambda k: (fit.rank[k], fit.systems[k]))
    systems = []
    for k in order:
        bounded = beta_low is not None and k not in notes
        row = {"system": fit.systems[k], "beta": float(fit.beta[k]), "strength": float(fit.strength[k]),
               "ci_low": _finite(np.exp(beta_low[k])) if bounded else None,
               "ci_high": _finite(np.exp(beta_high[k])) if bounded else None, "rank": int(fit.rank[k]),
               "estimable": k not in notes, "note": notes.get(k, "")}
        if ranks is not None:
            row.update(ranks.fields(k))
        systems.append(row)
    return {"feature": feature, "unit": LENGTH_UNIT, "definition": FEATURE_TEXT,
            "coefficient": {"estimate": _finite(fit.coef),
                            "ci_low": None if coef_ci[0] is None else _finite(coef_ci[0]),
                            "ci_high": None if coef_ci[1] is None else _finite(coef_ci[1])},
            "longer_wins": longer_wins(data, level=level), "systems": systems,
            "n_comparisons": data.n, "n_excluded": data.n_excluded, "converged": fit.converged,
            "intervals": intervals if bootstrap > 0 else None, "exact": fit.exact,
            "bootstrap": {"rounds": bootstrap if intervals == "bootstrap" else 0, "seed": seed,
                          "by_question": by_question, "fallback_rounds": fallback_rounds}}


__all__ = ["FEATURES", "INTERVALS", "LENGTH_UNIT", "StyleBootstrap", "StyleData", "StyleFit", "StyleSandwich",
           "bootstrap_style_controlled", "fit_style_controlled", "length_coefficient", "length_difference",
           "longer_wins", "style_data", "style_sandwich", "style_table"]
