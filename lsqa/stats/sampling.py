"""Audits that count: a judge's verdicts as items, and random / active audit queues with known
inclusion probabilities (used by ``lsqa.stats.corrected_report`` and the Audit page).

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
from dataclasses import dataclass, field
from pathlib import Path

from lsqa import store
from lsqa.store import corpus as corpus_store
from lsqa.store import verdicts as verdicts_store
from lsqa.vocabulary import BINARY, DRAWN_QUEUES, PAIRWISE, item_key

SAMPLED_QUEUES = ("random", "active")
USABLE_QUEUES = DRAWN_QUEUES  # the designs of a draw (migration 0023)
STRATIFY = ("none", "system", "pair")
ACTIVE_UNIFORM_SHARE = 0.25        # τ: the uniform part of the active design
DEFAULT_RATE = 0.10
_OUTCOME = {"A": 1.0, "B": 0.0, "tie": 0.5, "none": 0.5, "yes": 1.0, "no": 0.0}


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
        take only the part before the first ``:`` (:mod:`lsqa.stats.corrected_report`)."""
        if stratify == "system":
            return f"system:{self.system_a}"
        if stratify == "pair":
            return "pair:" + json.dumps([self.system_a, self.system_b], ensure_ascii=False)
        return "all"


def outcome(label: str | None) -> float | None:
    """A label (system terms) as a number: yes/A = 1, no/B = 0, tie/none = ½; None if unknown."""
    return _OUTCOME.get(label) if label is not None else None


def comparisons(labels: list[str | None]) -> tuple[float, float]:
    """Side-by-side verdicts (system terms) as Bradley-Terry comparisons, counted as the ranking
    table counts them (``lsqa.stats.reports.rank_table``, paper §3.2): each verdict is one
    comparison, a tie half a win each, "none" (both answers wrong) no comparison at all. Returns
    (system_a's share of wins among the decided comparisons, ½ if none is decided; how many are
    decided). The corrected and rank-flip fits weight items by it, so that with no audits they are
    the ranking table's fit."""
    wins = [_OUTCOME[x] for x in labels if x in _OUTCOME and x != "none"]
    return (sum(wins) / len(wins) if wins else 0.5), float(len(wins))


def judge_items(con, judge: str) -> list[Item]:
    """The judge's decided verdicts grouped into items (module docstring), in a stable order."""
    items: dict[tuple, Item] = {}
    for r in verdicts_store.effective_verdicts(con, judge=judge):
        value = outcome(r["judge_label"])
        if value is None:
            continue
        fam = r["family"]
        key = item_key(r)
        it = items.get(key)
        if it is None:
            it = items[key] = Item(key, fam, r["question_id"], r["system_a"], r["system_b"] if fam == PAIRWISE else "",
                                   r["document_id"] or "")
        it.judgment_ids.append(r["id"])
        it.judge_outcomes.append(value)
        it.judge_labels.append(r["judge_label"])
    return list(items.values())


def _uniform(judge: str, key: tuple, seed: int) -> float:
    digest = hashlib.sha256(repr((judge, key, seed)).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2 ** 64


def _other_judges_disagreement(con, judge: str, items: list[Item]) -> dict[tuple, float]:
    """Per item: share of other judges' verdicts (same family) whose outcome differs from this judge's."""
    mine = {it.key: it.f for it in items}
    differ: dict[tuple, list[float]] = defaultdict(list)
    for r in verdicts_store.effective_verdicts(con):
        if r["judge"] == judge:
            continue
        key = item_key(r)
        value = outcome(r["judge_label"])
        if key in mine and value is not None:
            differ[key].append(float(abs(value - mine[key]) >= 0.5))
    return {k: sum(v) / len(v) for k, v in differ.items()}


def inclusion_probabilities(con, judge: str, items: list[Item], queue: str, rate: float,
                            stratify: str = "none") -> list[float]:
    """π of every item under the random or active design at audit rate ``rate`` (share of items)."""
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
    others = _other_judges_disagreement(con, judge, items)
    score = [ACTIVE_UNIFORM_SHARE + max(1 - abs(2 * it.f - 1), others.get(it.key, 0.0)) for it in items]
    total = sum(score)
    return [min(1.0, rate * n * s / total) for s in score]


def queue(workspace: Path, judge: str, queue_name: str, *, rate: float = DEFAULT_RATE, stratify: str = "none",
          seed: int = 0, limit: int = 100) -> dict:
    """The next items of a random or active audit queue for one judge, each with its sampling record.

    Returns ``{"rows": [...], "total": drawn items still to review, "drawn": all drawn, "done": reviewed}``;
    each row has the verdict to show (``id``) and ``sampling = {queue, inclusion_prob, stratum}``
    to store with the review.
    """
    with store.connect(workspace) as con:
        items = judge_items(con, judge)
        probs = inclusion_probabilities(con, judge, items, queue_name, rate, stratify)
        # Audited already: drawn (by any design: a verdict keeps its first draw, migration 0023) and
        # labelled. A drawn verdict whose reviews were all undone is shown again.
        reviewed = {r["judgment_id"] for r in verdicts_store.sampled_human_labels(con, judge)
                    if r["inclusion_prob"] is not None}
        titles = {d["id"]: d["title"] for d in corpus_store.list_documents(con)}
    drawn = []
    for it, pi in zip(items, probs):
        u = _uniform(judge, it.key, seed)
        if u < pi:
            drawn.append((u / pi, it, pi))
    drawn.sort(key=lambda t: t[0])
    todo = [(it, pi) for _, it, pi in drawn if not reviewed.intersection(it.judgment_ids)]
    stratum_of = "all" if queue_name == "active" else None
    rows = [{"id": it.judgment_ids[0], "judge": judge, "question_id": it.question_id,
             "title": titles.get(it.document_id, ""), "system_a": it.system_a,
             "system_b": it.system_b, "label": it.judge_labels[0], "status": "ok",
             "inclusion_prob": round(pi, 6), "stratum": stratum_of or it.stratum(stratify),
             "sampling": {"queue": queue_name, "inclusion_prob": pi, "stratum": stratum_of or it.stratum(stratify)}}
            for it, pi in todo[:limit]]
    return {"rows": rows, "total": len(todo), "drawn": len(drawn), "done": len(drawn) - len(todo), "items": len(items)}


def page_queue(workspace: Path, judge: str, queue_name: str, *, rate: float = DEFAULT_RATE,
               stratify: str = "none", page: int = 0, page_size: int = 100) -> dict:
    """:func:`queue` shaped like the Audit page's priority queue (``lsqa.audit.priority_queue``): rows with
    ``priority`` (here the inclusion probability) and ``why``, ``total``, ``page``, ``pages``."""
    q = queue(workspace, judge, queue_name, rate=rate, stratify=stratify, limit=(page + 1) * page_size)
    rows = q["rows"][page * page_size:]
    for r in rows:
        r.update(priority=r["inclusion_prob"], n_reviewers=0, my_label=None, disagreement=0.0,
                 why=f"{queue_name} audit, drawn with probability {r['inclusion_prob']:.3f} ({r['stratum']})")
    return {"rows": rows, "total": q["total"], "page": page, "pages": max(1, -(-q["total"] // page_size)),
            "drawn": q["drawn"], "done": q["done"]}
