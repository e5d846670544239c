"""Agreement between raters (human or LLM judges): paper §5.1 and Fig. 4.

* Two raters on the same items: percent agreement, Cohen's κ (Cohen 1960) with a seeded bootstrap
  CI, and the confusion matrix of Fig. 4 (rows = rater A) with per-label counts
  (:func:`compare_raters`).
* A judge that saw each pair in both answer orders: position consistency, κ between the orders
  and, given gold labels, accuracy per order, on both orders and on average
  (:func:`position_consistency`).
* The self-preference 2×2 of §5.1: two judges × two answer sources, how often each judge prefers
  (or accepts) each source's answers, and each judge's excess preference for its own source
  (:func:`preference_table`, :func:`acceptance_table`, :func:`self_preference`).
* Several raters: Fleiss' κ (Fleiss 1971) and Krippendorff's α for nominal data (Krippendorff 2011,
  "Computing Krippendorff's alpha-reliability"), which allows missing ratings.

Labels are kept as they occur (``"A"``, ``"B"``, ``"tie"``, ``"none"``, ``"yes"``, ``1``...). The
label order of a confusion matrix is the one given, else inferred by :func:`infer_labels`.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from numbers import Real

import numpy as np

from lsqa.vocabulary import ABSOLUTE_LABELS, PAIRWISE_LABELS

# Label vocabularies with a natural order; labels drawn from one of them are shown in this order.
KNOWN_LABEL_ORDERS: tuple[tuple[str, ...], ...] = (
    PAIRWISE_LABELS,
    tuple(label.lower() for label in PAIRWISE_LABELS),
    ABSOLUTE_LABELS,
    ("Yes", "No"),
    ("True", "False"),
    ("correct", "incorrect"),
)
# A verdict given with the two answers presented swapped, mapped back to the original order.
SWAP_POSITIONS: Mapping = {"A": "B", "B": "A", "a": "b", "b": "a", "1": "2", "2": "1", 1: 2, 2: 1}
DEFAULT_BOOTSTRAP = 1000


# --------------------------------------------------------------------------------------------
# Labels and confusion matrices
# --------------------------------------------------------------------------------------------


def _is_missing(x) -> bool:
    return x is None or (isinstance(x, float) and np.isnan(x))


def infer_labels(*sequences: Sequence[Hashable]) -> list:
    """Label order for the values in ``sequences`` (missing values ignored).

    A known vocabulary (A/B/tie/none, yes/no...) keeps its natural order; numeric labels (numbers,
    or strings such as "1", "2") are sorted by value; anything else keeps the order of first
    appearance.
    """
    seen = list(dict.fromkeys(x for seq in sequences for x in seq if not _is_missing(x)))
    for order in KNOWN_LABEL_ORDERS:
        if all(isinstance(x, str) and x in order for x in seen):
            return [x for x in order if x in seen]
    if seen and all(isinstance(x, Real) and not isinstance(x, bool) for x in seen):
        return sorted(seen)
    if seen and all(isinstance(x, str) and _as_number(x) is not None for x in seen):
        return sorted(seen, key=_as_number)  # "1", "2", "10": numeric order, as read from a file
    return seen


def _as_number(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if np.isfinite(value) else None


@dataclass(frozen=True)
class Confusion:
    """Counts ``matrix[i, j]`` of items that rater A labelled ``labels[i]`` and rater B ``labels[j]``."""

    labels: tuple
    matrix: np.ndarray

    @property
    def n(self) -> int:
        return int(self.matrix.sum())

    def per_label(self) -> dict:
        """``{label: (count by rater A, count by rater B)}``."""
        rows, cols = self.matrix.sum(axis=1), self.matrix.sum(axis=0)
        return {lab: (int(r), int(c)) for lab, r, c in zip(self.labels, rows, cols, strict=False)}


def _check_paired(a: Sequence, b: Sequence) -> tuple[list, list]:
    a, b = list(a), list(b)
    if len(a) != len(b):
        raise ValueError(f"the two raters must label the same items ({len(a)} vs {len(b)} labels)")
    if not a:
        raise ValueError("no items to compare")
    return a, b


def confusion_matrix(a: Sequence, b: Sequence, labels: Sequence | None = None) -> Confusion:
    """Fig. 4-style confusion matrix of two raters over the same items (rows = rater A).

    A missing verdict (None / NaN, e.g. an unparsable judge answer) counts as a label of its own,
    ``None``, placed last when the order is inferred.
    """
    a, b = _check_paired(a, b)
    a = [None if _is_missing(x) else x for x in a]
    b = [None if _is_missing(x) else x for x in b]
    if labels is None:
        labels = infer_labels(a, b)
        if None in a or None in b:
            labels.append(None)
    labels = list(labels)
    index = {lab: k for k, lab in enumerate(labels)}
    unknown = [x for x in dict.fromkeys(a + b) if x not in index]
    if unknown:
        raise ValueError(f"labels {unknown} are not in the label list {labels}")
    K = len(labels)
    ia = np.fromiter((index[x] for x in a), dtype=np.int64, count=len(a))
    ib = np.fromiter((index[x] for x in b), dtype=np.int64, count=len(b))
    matrix = np.bincount(ia * K + ib, minlength=K * K).reshape(K, K)
    return Confusion(tuple(labels), matrix)


def agreement_mask(a: Sequence, b: Sequence) -> np.ndarray:
    """Per item: did the two raters give the same label? (Two missing verdicts count as equal.)"""
    a, b = _check_paired(a, b)
    same = ((x == y) or (_is_missing(x) and _is_missing(y)) for x, y in zip(a, b, strict=False))
    return np.fromiter(same, dtype=bool, count=len(a))


def percent_agreement(a: Sequence, b: Sequence) -> float:
    """Share of items with identical labels (the 'trace / total' of Fig. 4)."""
    mask = agreement_mask(a, b)
    return int(mask.sum()) / len(mask)


def kappa_from_confusion(matrix: np.ndarray) -> float:
    """Cohen's κ (Cohen 1960) of a K×K confusion matrix, in its disagreement form.

    ``κ = 1 − Σ_{i≠j} o_ij / Σ_{i≠j} e_ij`` with ``e_ij`` the counts expected from the marginals,
    which equals ``(p_o − p_e) / (1 − p_e)``. NaN when the expected disagreement is 0 (both
    raters used one and the same label throughout: κ is undefined).
    """
    M = np.asarray(matrix, dtype=float)
    n = M.sum()
    expected = np.outer(M.sum(axis=0), M.sum(axis=1)) / n
    off = 1.0 - np.eye(len(M))
    denom = np.sum(off * expected)
    if denom == 0:
        return float("nan")
    return float(1.0 - np.sum(off * M) / denom)


def _kappa_batch(M: np.ndarray) -> np.ndarray:
    """κ for a stack of confusion matrices (…, K, K); NaN where undefined."""
    n = M.sum(axis=(-2, -1))
    rows, cols = M.sum(axis=-1), M.sum(axis=-2)
    agree = np.trace(M, axis1=-2, axis2=-1)
    exp_agree = np.sum(rows * cols, axis=-1) / n
    with np.errstate(divide="ignore", invalid="ignore"):
        k = 1.0 - (n - agree) / (n - exp_agree)
    return np.where(n - exp_agree > 0, k, np.nan)


def cohen_kappa(a: Sequence, b: Sequence, labels: Sequence | None = None) -> float:
    """Cohen's κ between two raters over the same items."""
    return kappa_from_confusion(confusion_matrix(a, b, labels).matrix)


def kappa_bootstrap_ci(
    matrix: np.ndarray, *, rounds: int = DEFAULT_BOOTSTRAP, level: float = 0.95, seed: int | None = 0
) -> tuple[float, float]:
    """Percentile bootstrap CI of Cohen's κ, resampling items.

    Resampling n items with replacement is a multinomial draw over the K² cells of the confusion
    matrix, so all rounds are drawn and scored at once. Rounds where κ is undefined are dropped;
    (nan, nan) if κ is undefined in every round.
    """
    M = np.asarray(matrix, dtype=float)
    n = int(round(M.sum()))
    if n == 0:
        return float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    draws = rng.multinomial(n, (M / M.sum()).reshape(-1), size=rounds).reshape(rounds, *M.shape)
    k = _kappa_batch(draws.astype(float))
    k = k[np.isfinite(k)]
    if k.size == 0:
        return float("nan"), float("nan")
    alpha = 1.0 - level
    low, high = np.quantile(k, [alpha / 2, 1 - alpha / 2])
    return float(low), float(high)


@dataclass(frozen=True)
class RaterAgreement:
    """Two raters over the same ``n`` items."""

    n: int
    agreement: float                  # percent agreement, 0..1
    kappa: float                      # Cohen's κ (NaN if undefined)
    kappa_ci: tuple[float, float]     # percentile bootstrap CI
    confusion: Confusion              # rows = rater A

    @property
    def labels(self) -> tuple:
        return self.confusion.labels


def compare_raters(
    a: Sequence,
    b: Sequence,
    *,
    labels: Sequence | None = None,
    rounds: int = DEFAULT_BOOTSTRAP,
    level: float = 0.95,
    seed: int | None = 0,
) -> RaterAgreement:
    """Percent agreement, Cohen's κ with a bootstrap CI and the confusion matrix (Fig. 4)."""
    conf = confusion_matrix(a, b, labels)
    n = conf.n
    ci = kappa_bootstrap_ci(conf.matrix, rounds=rounds, level=level, seed=seed) if rounds else (float("nan"),) * 2
    return RaterAgreement(
        n=n,
        agreement=int(np.trace(conf.matrix)) / n,
        kappa=kappa_from_confusion(conf.matrix),
        kappa_ci=ci,
        confusion=conf,
    )


# --------------------------------------------------------------------------------------------
# Position consistency (a judge that saw each pair in both orders)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PositionConsistency:
    """One judge, each item judged with the answers in the original and in the swapped order.

    Counts and rates over ``n`` items. ``consistent`` / ``consistency``: same verdict in both
    orders (after mapping the swapped verdict back). ``kappa``: Cohen's κ between the two orders.
    With gold labels: ``correct_first`` / ``correct_second`` (verdict equals gold in that order),
    ``correct_both`` (in both), ``accuracy_average`` (pooled over both orders).
    """

    n: int
    consistent: int
    consistency: float
    kappa: float
    correct_first: int | None = None
    correct_second: int | None = None
    correct_both: int | None = None

    def _rate(self, k):
        return None if k is None else k / self.n

    @property
    def accuracy_first(self):
        return self._rate(self.correct_first)

    @property
    def accuracy_second(self):
        return self._rate(self.correct_second)

    @property
    def accuracy_both(self):
        return self._rate(self.correct_both)

    @property
    def accuracy_average(self):
        if self.correct_first is None:
            return None
        return (self.correct_first + self.correct_second) / 2 / self.n


def unswap(verdicts: Sequence, swap: Mapping = SWAP_POSITIONS) -> list:
    """Map verdicts given on swapped answer positions back to the original order (A↔B, 1↔2)."""
    return [swap.get(v, v) if not _is_missing(v) else v for v in verdicts]


def position_consistency(
    first: Sequence,
    second: Sequence,
    *,
    swap: Mapping | None = None,
    reference: Sequence | None = None,
    labels: Sequence | None = None,
) -> PositionConsistency:
    """Position consistency of a judge that saw each pair in both orders.

    ``first``: verdicts with the answers in the original order. ``second``: verdicts with the
    answers swapped; pass ``swap=SWAP_POSITIONS`` if they name the presented positions, or
    ``swap=None`` if they are already expressed in the original order. ``reference``: gold labels
    in the original order, for accuracy per order. Consistency and κ go through
    :func:`agreement_mask` and :func:`cohen_kappa`, accuracies through :func:`agreement_mask`.
    """
    first, second = _check_paired(first, second)
    if swap is not None:
        second = unswap(second, swap)
    same = agreement_mask(first, second)
    n = len(first)
    result = dict(n=n, consistent=int(same.sum()), consistency=int(same.sum()) / n,
                  kappa=cohen_kappa(first, second, labels))
    if reference is not None:
        ok1 = agreement_mask(first, reference)
        ok2 = agreement_mask(second, reference)
        result.update(correct_first=int(ok1.sum()), correct_second=int(ok2.sum()),
                      correct_both=int((ok1 & ok2).sum()))
    return PositionConsistency(**result)


# --------------------------------------------------------------------------------------------
# Self-preference (§5.1): judges × answer sources
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class JudgeSourceTable:
    """``counts[j, s]``: verdicts of judge j favouring (or accepting) source s, out of ``totals[j]``
    (or ``totals[j, s]``); ``rates = counts / totals``."""

    judges: tuple
    sources: tuple
    counts: np.ndarray
    totals: np.ndarray
    rates: np.ndarray

    def rate(self, judge, source) -> float:
        return float(self.rates[self.judges.index(judge), self.sources.index(source)])


def preference_table(judges: Sequence, choices: Sequence, sources: Sequence | None = None) -> JudgeSourceTable:
    """Side-by-side form of the §5.1 2×2: how often each judge prefers each source's answer.

    ``choices[k]`` is the source whose answer judge ``judges[k]`` preferred, or anything else
    (tie, none) for no preference; rates are over all of that judge's verdicts, so a row of the
    table need not sum to 1.
    """
    judges, choices = list(judges), list(choices)
    if len(judges) != len(choices):
        raise ValueError("judges and choices must have the same length")
    jl = list(dict.fromkeys(judges))
    sl = list(sources) if sources is not None else [c for c in dict.fromkeys(choices) if not _is_missing(c)]
    counts = np.zeros((len(jl), len(sl)), dtype=np.int64)
    totals = np.zeros(len(jl), dtype=np.int64)
    jidx, sidx = {j: k for k, j in enumerate(jl)}, {s: k for k, s in enumerate(sl)}
    for j, c in zip(judges, choices, strict=False):
        totals[jidx[j]] += 1
        if c in sidx:
            counts[jidx[j], sidx[c]] += 1
    rates = counts / np.maximum(totals, 1)[:, None]
    return JudgeSourceTable(tuple(jl), tuple(sl), counts, totals, rates)


def acceptance_table(judges: Sequence, sources: Sequence, accepted: Sequence[bool]) -> JudgeSourceTable:
    """Absolute form of the §5.1 2×2: the share of each source's answers each judge accepts."""
    judges, sources, accepted = list(judges), list(sources), [bool(x) for x in accepted]
    if not (len(judges) == len(sources) == len(accepted)):
        raise ValueError("judges, sources and accepted must have the same length")
    jl, sl = list(dict.fromkeys(judges)), list(dict.fromkeys(sources))
    counts = np.zeros((len(jl), len(sl)), dtype=np.int64)
    totals = np.zeros((len(jl), len(sl)), dtype=np.int64)
    jidx, sidx = {j: k for k, j in enumerate(jl)}, {s: k for k, s in enumerate(sl)}
    for j, s, ok in zip(judges, sources, accepted, strict=False):
        totals[jidx[j], sidx[s]] += 1
        counts[jidx[j], sidx[s]] += ok
    with np.errstate(invalid="ignore", divide="ignore"):
        rates = np.where(totals > 0, counts / np.maximum(totals, 1), np.nan)
    return JudgeSourceTable(tuple(jl), tuple(sl), counts, totals, rates)


def self_preference(table: JudgeSourceTable, own_source: Mapping) -> dict:
    """Each judge's excess preference for its own source's answers.

    For judge j with own source s: ``rate[j, s] − mean over the other judges of rate[k, s]``.
    Positive = j favours its own family more than the other judges do (§5.1's bias).
    """
    out = {}
    for j, judge in enumerate(table.judges):
        if judge not in own_source:
            continue
        s = table.sources.index(own_source[judge])
        others = [k for k in range(len(table.judges)) if k != j]
        if not others:
            raise ValueError("self-preference needs at least two judges")
        out[judge] = float(table.rates[j, s] - np.mean(table.rates[others, s]))
    return out


# --------------------------------------------------------------------------------------------
# Several raters: Fleiss' κ and Krippendorff's α
# --------------------------------------------------------------------------------------------


def category_counts(ratings: Sequence[Sequence], labels: Sequence | None = None) -> tuple[list, np.ndarray]:
    """Items × categories counts from a raters × items label matrix (None / NaN = missing)."""
    rows = [list(r) for r in ratings]
    if not rows or len({len(r) for r in rows}) != 1:
        raise ValueError("ratings must be a non-empty raters × items matrix")
    labels = list(labels) if labels is not None else infer_labels(*rows)
    index = {lab: k for k, lab in enumerate(labels)}
    n_items = len(rows[0])
    table = np.zeros((n_items, len(labels)), dtype=np.int64)
    for r in rows:
        for i, x in enumerate(r):
            if _is_missing(x):
                continue
            if x not in index:
                raise ValueError(f"label {x!r} is not in the label list {labels}")
            table[i, index[x]] += 1
    return labels, table


def fleiss_kappa(table: np.ndarray) -> float:
    """Fleiss' κ (Fleiss 1971) from an items × categories count table, same number of raters per item.

    ``κ = (P̄ − P̄_e) / (1 − P̄_e)`` with ``P̄`` the mean pairwise agreement per item and
    ``P̄_e = Σ_j p_j²`` from the overall category shares.
    """
    T = np.asarray(table, dtype=float)
    per_item = T.sum(axis=1)
    if T.ndim != 2 or T.shape[0] == 0:
        raise ValueError("table must be items × categories")
    n = per_item[0]
    if not np.all(per_item == n) or n < 2:
        raise ValueError("Fleiss' kappa needs the same number (>= 2) of ratings for every item")
    p = T.sum(axis=0) / T.sum()
    P_i = (np.sum(T * T, axis=1) - n) / (n * (n - 1))
    P_bar, P_e = P_i.mean(), np.sum(p * p)
    if P_e == 1:
        return float("nan")
    return float((P_bar - P_e) / (1 - P_e))


def krippendorff_alpha_nominal(ratings: Sequence[Sequence], labels: Sequence | None = None) -> float:
    """Krippendorff's α for nominal data from a raters × units matrix (None / NaN = missing).

    Coincidence matrix ``o_ck = Σ_u Σ_{pairs of ratings (c, k) in unit u} 1 / (m_u − 1)`` over units
    with at least two ratings; ``α = 1 − (n − 1)·Σ_{c≠k} o_ck / Σ_{c≠k} n_c n_k``.
    """
    _, U = category_counts(ratings, labels)
    U = U.astype(float)
    m_u = U.sum(axis=1)
    U = U[m_u >= 2]
    m_u = m_u[m_u >= 2]
    if U.shape[0] == 0:
        raise ValueError("Krippendorff's alpha needs units with at least two ratings")
    weighted = U / (m_u - 1)[:, None]
    o = weighted.T @ U - np.diag(weighted.sum(axis=0))
    n_c = o.sum(axis=1)
    n = n_c.sum()
    off = 1.0 - np.eye(len(n_c))
    d_o = np.sum(off * o)
    d_e = np.sum(off * np.outer(n_c, n_c))
    if d_e == 0:
        return float("nan")
    return float(1.0 - (n - 1) * d_o / d_e)


def pivot_ratings(items: Sequence, raters: Sequence, labels: Sequence) -> tuple[list, list, list[list]]:
    """Long format (one row per item, rater, label) to a raters × items matrix with None gaps.

    Raises ValueError when a rater labelled the same item twice.
    """
    items, raters, labels = list(items), list(raters), list(labels)
    if not (len(items) == len(raters) == len(labels)):
        raise ValueError("items, raters and labels must have the same length")
    item_ids, rater_ids = list(dict.fromkeys(items)), list(dict.fromkeys(raters))
    iidx, ridx = {x: k for k, x in enumerate(item_ids)}, {x: k for k, x in enumerate(rater_ids)}
    matrix: list[list] = [[None] * len(item_ids) for _ in rater_ids]
    for it, ra, lab in zip(items, raters, labels, strict=False):
        row = matrix[ridx[ra]]
        if row[iidx[it]] is not None:
            raise ValueError(f"rater {ra!r} labelled item {it!r} more than once")
        row[iidx[it]] = lab
    return item_ids, rater_ids, matrix


def paired_labels(items: Sequence, raters: Sequence, labels: Sequence, rater_a, rater_b) -> tuple[list, list, list]:
    """The items labelled by both raters (in order of first appearance) and their two labels."""
    item_ids, rater_ids, matrix = pivot_ratings(items, raters, labels)
    for r in (rater_a, rater_b):
        if r not in rater_ids:
            raise ValueError(f"rater {r!r} not found; use one of the raters {rater_ids}")
    ra, rb = matrix[rater_ids.index(rater_a)], matrix[rater_ids.index(rater_b)]
    keep = [k for k in range(len(item_ids)) if ra[k] is not None and rb[k] is not None]
    return [item_ids[k] for k in keep], [ra[k] for k in keep], [rb[k] for k in keep]
