"""Audits that count: a judge's verdicts as items, and random / active audit queues with known
inclusion probabilities (read from a workspace by ``lsqa.figures.audits``).

Items. A yes/no verdict rates one answer: item = (question, system), the judge's outcome ``f`` is
1 when it accepts the answer under either reference (paper §5.2). A side-by-side verdict rates a
pair: item = (question, system_a, system_b) in system terms, ``f`` = the mean over the orders the
judge saw of 1 (system_a better), 0 (system_b) or ½ (tie, none), so a judge that flips with the
order gives ½.

Queues (Poisson sampling; Zrnic & Candès 2024 for the active one). Each item gets a fixed
pseudo-random ``U`` in [0, 1) from its key, the judge and the seed, and an inclusion probability
``π``: ``random`` gives every item the audit rate (``stratify="system"`` / ``"pair"``: the same
number of draws in every stratum), ``active`` gives more to items where the judge is least
certain (its own orders or references disagree, or the other judges of its family disagree with
it), ``π ∝ τ + uncertainty``, mixed with a uniform share ``τ`` so that every item can be drawn.
An item is drawn when ``U < π``, and the queue lists drawn items by ``U/π``: any prefix of it is
again a Poisson sample with probabilities proportional to ``π`` (those with ``U < tπ``), so an
annotator may stop at any point and the Hájek weights of ``lsqa.stats.corrected`` stay exact.
Skipping items by looking at them would break this; the queue therefore only moves forward.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from lsqa.vocabulary import BINARY, DRAWN_QUEUES, PAIRWISE

SAMPLED_QUEUES = ("random", "active")
USABLE_QUEUES = DRAWN_QUEUES  # the designs of a draw (migration 0023)
STRATIFY = ("none", "system", "pair")
ACTIVE_UNIFORM_SHARE = 0.25        # τ: the uniform part of the active design
DEFAULT_RATE = 0.10
OUTCOMES = {"A": 1.0, "B": 0.0, "tie": 0.5, "none": 0.5, "yes": 1.0, "no": 0.0}


@dataclass
class Item:
    key: tuple
    family: str                         # vocabulary.BINARY | vocabulary.PAIRWISE
    question_id: str
    system_a: str
    system_b: str
    document_id: str = ""
    judgment_ids: list[str] = field(default_factory=list)
    judge_outcomes: list[float] = field(default_factory=list)
    judge_labels: list[str] = field(default_factory=list)

    @property
    def f(self) -> float:
        if self.family == BINARY:
            return 1.0 if any(o == 1.0 for o in self.judge_outcomes) else 0.0
        return sum(self.judge_outcomes) / len(self.judge_outcomes)

    @property
    def comparisons(self) -> tuple[float, float]:
        """A side-by-side item as the ranking table counts it: (system_a's win share, decided
        comparisons) over the judge's verdicts (:func:`comparisons`)."""
        return comparisons(self.judge_labels)

    def stratum(self, stratify: str) -> str:
        """The item's stratum under ``stratify`` as stored with a review: ``all``, ``system:<name>``
        or ``pair:["<a>", "<b>"]``. The pair is JSON, not ``a|b``: system names may contain any
        character, and ("a|b", "c") and ("a", "b|c") are two strata (each has its own π). Readers
        take only the part before the first ``:`` (:mod:`lsqa.figures.corrected`)."""
        if stratify == "system":
            return f"system:{self.system_a}"
        if stratify == "pair":
            return "pair:" + json.dumps([self.system_a, self.system_b], ensure_ascii=False)
        return "all"


def outcome(label: str | None) -> float | None:
    """A label (system terms) as a number: yes/A = 1, no/B = 0, tie/none = ½; None if unknown."""
    return OUTCOMES.get(label) if label is not None else None


def comparisons(labels: list[str | None]) -> tuple[float, float]:
    """Side-by-side verdicts (system terms) as Bradley-Terry comparisons, counted as the ranking
    table counts them (``lsqa.stats.reports.rank_table``, paper §3.2): each verdict is one
    comparison, a tie half a win each, "none" (both answers wrong) no comparison at all. Returns
    (system_a's share of wins among the decided comparisons, ½ if none is decided; how many are
    decided). The corrected and rank-flip fits weight items by it, so that with no audits they are
    the ranking table's fit."""
    wins = [OUTCOMES[x] for x in labels if x in OUTCOMES and x != "none"]
    return (sum(wins) / len(wins) if wins else 0.5), float(len(wins))


@dataclass
class Items:
    """A judge's items as columns (one entry per item), the form the corrected fits, the rank flips
    and certification read: a million verdicts are a few arrays, never an :class:`Item` each.

    ``a``, ``b``: indices into ``systems`` (``b`` = -1 for a yes/no item); ``q``: index into
    ``questions``; ``f``: the judge's outcome (:attr:`Item.f`); ``share``, ``decided``: the
    comparisons the ranking table counts (:attr:`Item.comparisons`); ``n_verdicts``: how many
    verdicts (:attr:`Item.judgment_ids`); ``first_ids``: the first verdict
    of an item, where known (a mover's link)."""

    family: str
    systems: list[str]
    questions: list[str]
    a: np.ndarray
    b: np.ndarray
    q: np.ndarray
    f: np.ndarray
    share: np.ndarray
    decided: np.ndarray
    n_verdicts: np.ndarray
    first_ids: dict[int, str] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.f)

    @property
    def system_a(self) -> np.ndarray:
        return np.asarray(self.systems, dtype=object)[self.a]

    @property
    def system_b(self) -> np.ndarray:
        return np.asarray([*self.systems, ""], dtype=object)[self.b]

    def key(self, k: int) -> tuple[str, str, str]:
        """Item ``k`` as (question, system A, system B; '' for a yes/no item)."""
        return (self.questions[self.q[k]], self.systems[self.a[k]], self.systems[self.b[k]] if self.b[k] >= 0 else "")

    def strata(self, stratify: str) -> np.ndarray | None:
        """Every item's :meth:`Item.stratum`; None for ``none`` (one stratum: what ``design`` makes of None)."""
        if stratify == "system":
            return np.asarray([f"system:{s}" for s in self.systems], dtype=object)[self.a]
        if stratify == "pair":
            pairs = {(a, b): f"pair:{json.dumps([self.systems[a], self.systems[b]], ensure_ascii=False)}"
                     for a, b in set(zip(self.a.tolist(), self.b.tolist(), strict=False))}
            return np.asarray([pairs[(a, b)] for a, b in zip(self.a.tolist(), self.b.tolist(), strict=False)], dtype=object)
        return None

    @classmethod
    def of(cls, items: Sequence[Item]) -> Items:
        """:class:`Item` objects as columns (small item lists: tests, the benches)."""
        systems = sorted({it.system_a for it in items} | {it.system_b for it in items if it.family == PAIRWISE})
        questions = sorted({it.question_id for it in items})
        si, qi = {s: k for k, s in enumerate(systems)}, {s: k for k, s in enumerate(questions)}
        coded = np.array([it.comparisons for it in items], dtype=float).reshape(len(items), 2)
        return cls(items[0].family if items else PAIRWISE, systems, questions,
                   np.array([si[it.system_a] for it in items], dtype=np.int64),
                   np.array([si[it.system_b] if it.family == PAIRWISE else -1 for it in items], dtype=np.int64),
                   np.array([qi[it.question_id] for it in items], dtype=np.int64),
                   np.array([it.f for it in items], dtype=float), coded[:, 0], coded[:, 1],
                   np.array([len(it.judgment_ids) for it in items], dtype=float),
                   {k: it.judgment_ids[0] for k, it in enumerate(items) if it.judgment_ids})


def uniform(judge: str, key: tuple, seed: int) -> float:
    digest = hashlib.sha256(repr((judge, key, seed)).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2 ** 64


def inclusion_probabilities(items: list[Item], queue: str, rate: float, stratify: str = "none",
                            others: dict[tuple, float] | None = None) -> list[float]:
    """π of every item under the random or active design at audit rate ``rate`` (share of items).
    ``others``: per item key, the share of the other judges' verdicts (same family) whose outcome
    differs from this judge's (the active design's second signal; none when not given)."""
    if queue not in SAMPLED_QUEUES:
        raise ValueError(f"queue must be one of {SAMPLED_QUEUES}, not {queue!r}")
    if not 0 < rate <= 1:
        raise ValueError("the audit rate must be in (0, 1]")
    if stratify not in STRATIFY:
        raise ValueError(f"stratify must be one of {STRATIFY}, not {stratify!r}")
    n = len(items)
    if queue == "random":
        if stratify == "none":
            return [rate] * n
        sizes: dict[str, int] = defaultdict(int)
        for it in items:
            sizes[it.stratum(stratify)] += 1
        per_stratum = rate * n / len(sizes)       # the same number of draws in every stratum
        return [min(1.0, per_stratum / sizes[it.stratum(stratify)]) for it in items]
    others = others or {}
    score = [ACTIVE_UNIFORM_SHARE + max(1 - abs(2 * it.f - 1), others.get(it.key, 0.0)) for it in items]
    total = sum(score)
    return [min(1.0, rate * n * s / total) for s in score]
