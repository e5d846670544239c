"""Can a judge replace the annotators, from its audits in a workspace (``lsqa certify``, the Agreement
page's panel, the report): the judge's labels of the verdicts people labelled, their draws and final
labels, read in SQL; the statistics are ``lsqa.stats.certification``'s.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from lsqa import store
from lsqa.judging import kinds
from lsqa.stats.certification import (  # noqa: F401
    NO_ADJUDICATION,
    NOT_REPLACEABLE,
    POWER,
    REPLACEABLE,
    UNDECIDED,
    Thresholds,
    _apply_alt_test,
    alt_test,
    ceiling,
    certify_audits,
)
from lsqa.stats.sampling import OUTCOMES, USABLE_QUEUES
from lsqa.store import verdicts as verdicts_store
from lsqa.text import numbers
from lsqa.vocabulary import BINARY


def certify(workspace: Path, judge: str, *, queue: str | None = None,
            thresholds: Thresholds = Thresholds()) -> dict:
    """Can ``judge`` replace the annotators in this workspace? (module docstring). JSON-ready:
    ``judge, verdict, n_audits, agreement, per_label, alt_test, audits_needed, thresholds`` and
    ``design, ceiling, reasons, notes, rule`` (the bounds' rule, :data:`RULES`). ValueError (one line, what to do) for an unknown judge or queue."""
    thresholds.check()
    if queue is not None and queue not in USABLE_QUEUES:
        raise ValueError(f"unknown audit queue {queue!r}; use one of {', '.join(USABLE_QUEUES)}")
    with store.connect(workspace) as con:
        sampled = verdicts_store.sampled_human_labels(con, judge)
        labelled = verdicts_store.human_labels(con, judge)
        decided = verdicts_store.decided_verdicts(con, judge, sorted({r["judgment_id"] for r in sampled}
                                                                   | {r["judgment_id"] for r in labelled}))
        if not decided["n"]:
            raise ValueError(f"judge {judge!r} has no decided verdicts in this workspace; check the name "
                             "(lsqa status lists the judges)")
        n_items = verdicts_store.judge_item_count(con, judge, OUTCOMES)
    # The judge's label of each verdict somebody labelled: all that agreement, the alt-test and the
    # ceiling compare (never a row per verdict of the judge).
    judge_labels = decided["labels"]
    record = kinds.get(decided["kind"])
    usable = [r for r in sampled if r["queue"] in USABLE_QUEUES and r["inclusion_prob"] is not None
              and r["judgment_id"] in judge_labels and r["label"] is not None]
    by_queue: dict[str, int] = defaultdict(int)
    for r in usable:
        by_queue[r["queue"]] += 1
    design = queue or (max(sorted(by_queue), key=by_queue.get) if by_queue else "")
    audits = [r for r in usable if r["queue"] == design]
    result = certify_audits([judge_labels[r["judgment_id"]] for r in audits], [r["label"] for r in audits],
                            [float(r["inclusion_prob"]) for r in audits], record.labels,
                            gate_all=record.family == BINARY, thresholds=thresholds, population=n_items)
    people: dict[str, dict] = defaultdict(dict)
    for r in labelled:
        if r["judgment_id"] in judge_labels and r["label"] is not None:
            people[r["annotator"]][r["judgment_id"]] = r["label"]
    alt = alt_test(judge_labels, people, epsilon=thresholds.epsilon, q=thresholds.fdr_q,
                   min_items=thresholds.min_items_per_annotator)
    _apply_alt_test(result, alt)
    top = ceiling(judge_labels, people, thresholds.level)
    notes = [NO_ADJUDICATION]
    other = len(sampled) - len(audits)
    if other:
        notes.append(f"{other} reviewed verdicts not used for agreement and recall: priority-queue reviews "
                     "(picked for disagreement, not at random) or another design")
    if alt is None:
        notes.append(f"alternative annotator test not run: it needs at least 3 people each labelling "
                     f"{thresholds.min_items_per_annotator} verdicts that someone else labelled too")
    if top is not None and top["people"]["estimate"] < thresholds.min_agreement:
        notes.append(f"people agree with each other on {numbers.percent(top['people']['estimate'])} of the verdicts two or more "
                     f"labelled: a minimum agreement of {thresholds.min_agreement:.0%} asks more of the judge "
                     "than of them")
    return {"judge": judge, "verdict": result["verdict"], "n_audits": result["n_audits"],
            "agreement": result["agreement"], "per_label": result["per_label"], "alt_test": alt,
            "audits_needed": result["audits_needed"], "thresholds": result["thresholds"],
            "design": design, "ceiling": top, "reasons": result["reasons"], "notes": notes, "rule": result["rule"]}
