"""A judge's verdicts as audit items and its random / active audit queues, read from the workspace
(the sampling itself, with its inclusion probabilities, is ``lsqa.stats.sampling``).

Two reads of one judge's items: :func:`judge_items`, one :class:`~lsqa.stats.sampling.Item` per
item with all its verdicts (the audit queue, assignments: what an annotator is shown), and
:func:`item_table`, the same items as columns counted in SQL (``lsqa.stats.sampling.Items``), which
the corrected figures, the rank flips and certification read: a million verdicts are a few arrays.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import numpy as np

from lsqa import store
from lsqa.stats.sampling import DEFAULT_RATE, OUTCOMES, Item, Items, outcome, uniform
from lsqa.stats.sampling import inclusion_probabilities as _probabilities
from lsqa.store import corpus as corpus_store
from lsqa.store import verdicts as verdicts_store
from lsqa.vocabulary import BINARY, PAIRWISE, item_key


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
    for it, pi in zip(items, probs, strict=False):
        u = uniform(judge, it.key, seed)
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


def item_table(con, judge: str, *, family: str, lookup=()) -> tuple[Items | None, list[dict]]:
    """:func:`judge_items` of one ``family`` as columns, counted in SQL
    (``lsqa.store.verdicts.judge_item_table``): the same items in the same order with the same
    outcomes. ``lookup``: judgment ids whose items' verdicts to return as well (``item``, ``id``,
    ``judge_label`` rows; for audits and overrides)."""
    t, verdicts = verdicts_store.judge_item_table(con, judge, OUTCOMES, family=family, lookup=lookup)
    if t is None:
        return None, []
    f = np.where(t["any_one"], 1.0, 0.0) if t["family"] == BINARY else t["mean"].astype(float)
    return Items(t["family"], t["systems"], t["questions"], t["a"].astype(np.int64), t["b"].astype(np.int64),
                 t["q"].astype(np.int64), f, t["share"].astype(float), t["decided"].astype(float),
                 t["n"].astype(float)), verdicts


def fill_first_ids(con, judge: str, items: Items, ks) -> None:
    """Look up the first verdict of items ``ks`` whose id ``items.first_ids`` does not hold yet."""
    missing = sorted({int(k) for k in ks} - set(items.first_ids))
    found = verdicts_store.first_verdicts(con, judge, [items.key(k) for k in missing])
    items.first_ids.update({k: found[items.key(k)] for k in missing if items.key(k) in found})


def inclusion_probabilities(con, judge: str, items: list[Item], queue: str, rate: float,
                            stratify: str = "none") -> list[float]:
    """``lsqa.stats.sampling.inclusion_probabilities`` of a judge's items in a workspace: the active
    design also reads how the other judges of its family rated each item."""
    others = _other_judges_disagreement(con, judge, items) if queue == "active" else None
    return _probabilities(items, queue, rate, stratify, others)
