"""Rank flips: which systems change places between the judge-only,
the corrected and the "overrides" rankings (``lsqa.vocabulary.RANKING_VIEWS``), and which audited
verdicts moved each flip.

The three rankings here are fitted on the same items, coded the same way (``lsqa.stats.sampling``: a
side-by-side item counts as the ranking table counts its verdicts, each verdict one comparison, ties
half a win, "none" no comparison (``sampling.comparisons``); a yes/no item is accepted under either
reference), so they differ only by their labels, and the judge-only one is the Leaderboard's ranking
table:

* judge-only: the judge's outcomes;
* corrected: PPI++ on the judge's outcomes and the usable (random / active / imported) audits;
* overrides: the judge's outcomes with the final human label (adjudicated, else the people's majority;
  a tie keeps the judge's) wherever someone reviewed, through
  any queue (what "Use human overrides" shows).

A verdict that moved a flip is one whose human label pulls the lower-ranked system of the pair
(by the judge) above the other. Pulls are first-order influences: for the corrected ranking the
audit's term in the PPI++ estimating equation (``BTEstimate.audit_effects``, ``MeanEstimate
.audit_effects``); for overrides the Newton step of changing the item's outcome from the judge's to
the human's (``lsqa.stats.corrected.label_pulls``; for an accuracy, exactly the change over the system's
item count). Pulls of all movers of a view add up, to first order, to that view's change of the
pair's difference, which the flip reports beside them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from lsqa.stats.corrected import label_pulls
from lsqa.stats.sampling import Item, Items
from lsqa.vocabulary import CORRECTED, JUDGE_ONLY, OVERRIDES

MOVERS_SHOWN = 3


@dataclass
class Overrides:
    """The judge's items with human labels in place of the judge's wherever someone reviewed
    (read from a workspace by ``lsqa.figures.corrected.overrides``)."""

    f: np.ndarray                   # (N,) item outcome with overrides
    changed: Sequence[list[dict]] | Mapping[int, list[dict]]  # per item (all, or those with any): the
    #                                 verdicts whose human label differs from the judge's
    n_reviewed: int                 # verdicts of these items with a human label
    coded: np.ndarray | None = None  # (N, 2) win share and decided comparisons with overrides
    #                                  (``sampling.comparisons`` of each item's labels); None: (f, 1)

    def changed_at(self, k: int) -> list[dict]:
        if isinstance(self.changed, Mapping):
            return self.changed.get(k, [])
        return self.changed[k]


def ranks(names: tuple[str, ...] | list[str], scores: np.ndarray) -> dict[str, int]:
    """1 + the number of systems strictly ahead (equal scores share a rank)."""
    return {s: int(1 + np.sum(scores > scores[k] + 1e-12)) for k, s in enumerate(names)}


def find_flips(names: list[str] | tuple[str, ...], scores: dict[str, np.ndarray], pulls: dict[str, np.ndarray | None],
               items: Items | list[Item], new_outcome: dict[str, np.ndarray], over: Overrides | None = None) -> list[dict]:
    """Pairs of systems whose order differs between views, each with the verdicts that moved it.

    ``scores[view]`` (m,) per system; ``pulls[view]`` (N, m): item k's pull on each system's score
    in that view relative to the judge's (None: no pulls, e.g. no audits); ``new_outcome[view]``
    (N,): the item's human outcome in that view (shown beside the judge's); ``over``: which
    verdicts of each item were overridden (listed with the overrides view's movers).
    """
    items = items if isinstance(items, Items) else Items.of(items)
    names = list(names)
    rank_of = {view: ranks(names, sc) for view, sc in scores.items()}
    out = []
    for i, s in enumerate(names):
        for t in names[i + 1:]:
            order = {view: int(np.sign(r[t] - r[s])) for view, r in rank_of.items()}   # +1: s above t
            if len(set(order.values()) - {0}) < 2:
                continue
            judge_sign = order[JUDGE_ONLY] or next(v for v in order.values() if v)
            above, below = (s, t) if judge_sign > 0 else (t, s)
            up, down = names.index(below), names.index(above)
            entry = {"systems": [s, t], "ranks": {v: {s: r[s], t: r[t]} for v, r in rank_of.items()},
                     "judge_only_above": above, "moved_by": {}, "change": {}}
            for view, pull in pulls.items():
                if pull is None or order[view] == judge_sign:
                    continue
                toward = pull[:, up] - pull[:, down]            # > 0: pulls `below` up past `above`
                entry["change"][view] = float((scores[view][up] - scores[view][down])
                                              - (scores[JUDGE_ONLY][up] - scores[JUDGE_ONLY][down]))
                movers = []
                for k in np.argsort(-toward, kind="stable")[:MOVERS_SHOWN]:
                    if toward[k] <= 0:
                        break
                    question, system_a, system_b = items.key(k)
                    movers.append({"judgment_id": items.first_ids.get(int(k)), "item": int(k),
                                   "question_id": question, "system_a": system_a, "system_b": system_b,
                                   "judge_outcome": float(items.f[k]), "human_outcome": float(new_outcome[view][k]),
                                   "pull": float(toward[k]),
                                   "overridden": over.changed_at(int(k)) if over is not None and view == OVERRIDES
                                   else []})
                entry["moved_by"][view] = movers
                entry.setdefault("n_pushing", {})[view] = int(np.sum(toward > 1e-12))
            out.append(entry)
    return out


def bradley_terry_flips(est, judge_fit, items: Items | list[Item], human: np.ndarray,
                        over: Overrides | None) -> list[dict]:
    """Flips between the judge-only, corrected (``est``) and overrides Bradley-Terry rankings.
    A mover's ``judgment_id`` is None where ``items.first_ids`` does not know it (``item``: its index)."""
    from lsqa.stats.corrected import design, ppi_bradley_terry

    items = items if isinstance(items, Items) else Items.of(items)
    names = est.systems
    scores = {JUDGE_ONLY: judge_fit.beta, CORRECTED: est.beta}
    pulls: dict[str, np.ndarray | None] = {CORRECTED: est.audit_effects}
    new = {CORRECTED: human}
    if over is not None:
        # The items' systems as indices into names (the fits' order), without a lookup per item.
        index = {s: k for k, s in enumerate(names)}
        to_names = np.array([index.get(s, -1) for s in items.systems], dtype=np.int64)
        sa, sb = to_names[items.a], to_names[items.b]
        # Coded as the judge-only fit (the ranking table's counting), so that the overrides ranking is
        # the Leaderboard's "Use human overrides" one on these verdicts.
        judge_coded = np.stack([items.share, items.decided], axis=1)
        coded = over.coded if over.coded is not None else np.stack([over.f, np.ones(len(items))], axis=1)
        fit = ppi_bradley_terry(names, sa, sb, coded[:, 0], design(np.full(len(items), np.nan)), level=est.level,
                                pred_weight=coded[:, 1])
        scores[OVERRIDES] = fit.beta
        if over.n_reviewed:
            # An item's change of wins minus its change of decided comparisons times P(a beats b):
            # its change of the score equation, whose first-order effect label_pulls gives.
            d = fit.beta[sa] - fit.beta[sb]
            change = (coded[:, 0] * coded[:, 1] - judge_coded[:, 0] * judge_coded[:, 1]) \
                - (coded[:, 1] - judge_coded[:, 1]) / (1 + np.exp(-d))
            pulls[OVERRIDES] = label_pulls(names, sa, sb, fit.beta, change)
        else:
            pulls[OVERRIDES] = None
        new[OVERRIDES] = over.f
    return find_flips(names, scores, pulls, items, new, over)


def accuracy_flips(systems: list[str], estimates: list, items: Items | list[Item], idx: list[np.ndarray],
                   human: np.ndarray, over: Overrides | None) -> list[dict]:
    """Flips between the judge-only, corrected and overrides accuracies of a yes/no judge.

    ``estimates[k]`` is system k's ``MeanEstimate`` over its items ``idx[k]``.
    """
    items = items if isinstance(items, Items) else Items.of(items)
    n_items, m = len(items), len(systems)
    f = items.f
    scores = {JUDGE_ONLY: np.array([e.judge_only for e in estimates]), CORRECTED: np.array([e.estimate for e in estimates])}
    corrected = np.zeros((n_items, m))
    for k, (e, rows) in enumerate(zip(estimates, idx, strict=False)):
        if e.audit_effects is not None:
            corrected[rows, k] = e.audit_effects
    pulls: dict[str, np.ndarray | None] = {CORRECTED: corrected if any(e.n_audited for e in estimates) else None}
    new = {CORRECTED: human}
    if over is not None:
        moved = np.zeros((n_items, m))
        scores[OVERRIDES] = np.array([over.f[rows].mean() for rows in idx])
        for k, rows in enumerate(idx):
            moved[rows, k] = (over.f[rows] - f[rows]) / len(rows)
        pulls[OVERRIDES] = moved if over.n_reviewed else None
        new[OVERRIDES] = over.f
    return find_flips(systems, scores, pulls, items, new, over)
