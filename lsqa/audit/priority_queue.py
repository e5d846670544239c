"""The audit queue: the verdicts most in need of a human first, filtered, a page at a time, kept
across my own decisions; what the queue's filters offer; how far each annotator has got.

Priority (what most needs a human first). For each verdict, with weights ``PRIORITY_WEIGHTS``::

    priority = 3.0 · [the judge's output could not be used (parse_error / error)]
             + 2.0 · disagreement            share of the other judges' verdicts on the same item
                                             with another outcome (0…1)
             + 1.0 · [self-inconsistent]     the same judge gave the same item different outcomes:
                                             the two presentation orders of a side-by-side pair
                                             (position bias), or the two references of a
                                             ground-truth rater (the references disagree)
             + 0.5 · [a reference of the question is flagged]

An item is one answer (question, system) for yes/no verdicts — AutoAIS (paper §3.1), ground
truth (§5.2), similarity — and one pair (question, {system_a, system_b}) for side-by-side verdicts
(§3.2), whatever order was shown. Outcomes are compared within a family: yes/no, or the winning
system / tie / none. So a book-grounded AutoAIS "yes" that the ground-truth raters call "no" (the
paper's sign of a wrong NarrativeQA reference, §5.2 and Appendix E) scores high, and so does a
side-by-side judge that flips with the order. Verdicts that nobody has reviewed come before
reviewed ones; ties keep a stable order (question, judge, pair).

Reading the queue is most of a keypress on the Audit page: a page is kept across my
reviews of verdicts it leaves out (``_queue_survives``), and the queue without the item just opened
is derived from the kept head (``_head_without_the_last_opened``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from lsqa import store
from lsqa.audit.double_annotation import read_overlap
from lsqa.audit.kept_reads import REVIEW_TABLES, no_reviews_read
from lsqa.errors import AuditRefused
from lsqa.store import assignments as assignments_store
from lsqa.store import audit_queue as queue_store
from lsqa.store import reviews as reviews_store
from lsqa.store.lineage import Change
from lsqa.store.workspace_cache import kept_while_unchanged

PRIORITY_WEIGHTS = queue_store.PRIORITY_WEIGHTS  # defined where the kept priority is computed (lsqa.store.queue_signals)
REVIEWED_FILTERS = {"not_mine": "not reviewed by me", "unreviewed": "not reviewed by anyone",
                    "second": "needs a second review (reviewed by exactly one other person)",
                    "all": "all", "mine": "reviewed by me"}
ASSIGNED = "assigned"  # the queue of my open assignments (not a choice of the "Show" filter: a queue of its own)
PAGE_SIZE = 100
HEAD_SLACK = 50  # the rows a queue's head may lose to derivations before it is read again


@dataclass(frozen=True)
class Filters:
    """Which verdicts the queue holds: empty tuples mean any; ``reviewed`` is a key of ``REVIEWED_FILTERS``,
    or ``ASSIGNED`` (my open assignments: ``lsqa.audit.assignments``); ``reviewed_by``: only verdicts
    one of these annotators has a current label for; ``questions``: only verdicts on these questions
    (the errata's links); ``search``: text every word of which occurs in the question or in an answer
    the verdict judged (``search_terms``)."""

    judges: tuple[str, ...] = ()
    systems: tuple[str, ...] = ()
    documents: tuple[str, ...] = ()
    labels: tuple[str, ...] = ()
    statuses: tuple[str, ...] = ()
    reviewed: str = "not_mine"
    reviewed_by: tuple[str, ...] = ()
    questions: tuple[str, ...] = ()
    search: str = ""


MAX_SEARCH_CHARS = 200
MAX_SEARCH_TERMS = 12


def search_terms(text: str) -> tuple[str, ...]:
    """The words a queue search looks for: lower case, each once, control characters dropped (a
    search box's text, or a link's ``?q=``). Each must occur, as typed, in the question or one of
    the verdict's answers; no wildcards, so ``%`` or ``_`` are letters like any other. AuditRefused
    for a text over ``MAX_SEARCH_CHARS`` characters or of more than ``MAX_SEARCH_TERMS`` words."""
    if not isinstance(text, str):
        raise AuditRefused(f"a search must be text, not {type(text).__name__}: type some words")
    if len(text) > MAX_SEARCH_CHARS:
        raise AuditRefused(f"a search of {len(text):,} characters is too long: use at most {MAX_SEARCH_CHARS} "
                           "characters, a few words of the question or an answer")
    cleaned = "".join(c if c.isprintable() else " " for c in text).lower()
    terms = tuple(dict.fromkeys(cleaned.split()))
    if len(terms) > MAX_SEARCH_TERMS:
        raise AuditRefused(f"a search of {len(terms)} words is too many: use at most {MAX_SEARCH_TERMS} words")
    return terms


def _queue_survives(change: Change, arguments: dict) -> bool:
    """A review of verdict X changes only X's row of the queue (its reviewers, my label), so the page
    is the same when X is left out of it, as the Audit page leaves out every item it has opened."""
    return change.only_in(*REVIEW_TABLES) and bool(change.judgments) and change.judgments <= set(arguments["exclude"])


def queue(workspace: Path, filters: Filters = Filters(), annotator: str = "", *, page: int = 0,
          page_size: int = PAGE_SIZE, exclude: tuple[str, ...] | list[str] = ()) -> dict:
    """One page of the audit queue: ``{"rows": [...], "total": n, "page": p, "pages": k}``.

    ``exclude``: verdicts left out (those opened already this session, see ``lsqa.audit.trail``).
    The workspace's overlap setting (``lsqa.audit.double_annotation``) decides which verdicts others' reviews take out
    of the "not reviewed by me" queue.

    The first page is read with ``HEAD_SLACK`` rows more than it shows. When the Audit page opens
    the queue's head, the queue it asks for next leaves out one verdict more; that one is taken out
    of the kept rows instead of reading again (``_head_without_the_last_opened``): the order and
    the filters of the others do not depend on what is left out. A decision on that verdict in
    between changes only its own row, which is taken out.
    """
    exclude = tuple(exclude)
    if page > 0:
        return _queue_page(workspace, filters, annotator, page=page, page_size=page_size, exclude=exclude)
    size = page_size + HEAD_SLACK
    head = _head_without_the_last_opened(workspace, filters, annotator, size, page_size, exclude)
    if head is None:
        head = _queue_page(workspace, filters, annotator, page=0, page_size=size, exclude=exclude)
    total = head["total"]
    return {"rows": head["rows"][:page_size], "total": total, "page": 0, "pages": max(1, -(-total // page_size))}


def _read_queue(workspace: Path, filters: Filters = Filters(), annotator: str = "", *, page: int = 0,
                page_size: int = PAGE_SIZE, exclude: tuple[str, ...] | list[str] = ()) -> dict:
    """``queue`` read from the workspace, nothing kept or derived (tests and benches compare with it)."""
    return _queue_page.uncached(workspace, filters, annotator, page=page, page_size=page_size, exclude=tuple(exclude))


queue.uncached = _read_queue  # type: ignore[attr-defined]  (as the kept reads have it)


def _head_without_the_last_opened(workspace: Path, filters: Filters, annotator: str, size: int, page_size: int,
                                  exclude: tuple[str, ...]) -> dict | None:
    """The head of the queue that leaves out ``exclude``, made from the kept head that leaves out all
    but its last verdict, or None when it cannot be (nothing kept, or too few rows left to fill a
    page, or that verdict may lie beyond the kept rows). The steps since the head was kept are
    judged for the queue asked for (``judged_for``), so my review of that verdict keeps the head
    usable. Kept in turn, under the version the head was found for."""
    if not exclude:
        return None
    kept = _queue_page.kept_only(workspace, filters, annotator, page=0, page_size=size, exclude=exclude[:-1],
                                 judged_for={"exclude": exclude})
    if kept is None:
        return None
    before, version = kept
    last = exclude[-1]
    rows = [r for r in before["rows"] if r["id"] != last]
    if len(rows) < len(before["rows"]):
        total = before["total"] - 1
    elif len(before["rows"]) == before["total"]:
        total = before["total"]  # every matching verdict is in the rows, and that one is not
    else:
        return None
    if len(rows) < min(page_size, total):
        return None
    head = {"rows": rows, "total": total, "page": 0, "pages": max(1, -(-total // size))}
    _queue_page.keep_derived(workspace, version, head, filters, annotator, page=0, page_size=size, exclude=exclude)
    return head


@kept_while_unchanged(survives=_queue_survives)
def _queue_page(workspace: Path, filters: Filters, annotator: str, *, page: int, page_size: int,
                exclude: tuple[str, ...]) -> dict:
    with store.connect(workspace) as con:
        share = read_overlap(con)
        rows, total = queue_store.audit_queue(
            con, weights=PRIORITY_WEIGHTS, annotator=annotator, judges=filters.judges, systems=filters.systems,
            documents=filters.documents, labels=filters.labels, statuses=filters.statuses,
            reviewed=filters.reviewed, exclude=list(exclude), overlap=share, reviewed_by=filters.reviewed_by,
            questions=filters.questions, search=search_terms(filters.search), limit=page_size, offset=page * page_size)
        drawn = ({a["judgment_id"]: a for a in assignments_store.open_assignments(con, annotator)}
                 if filters.reviewed == ASSIGNED else {})
    for r in rows:
        r["priority"] = round(float(r["priority"]), 3)
        r["disagreement"] = round(float(r["disagreement"]), 3)
        r["why"] = reasons(r)
        a = drawn.get(r["id"])
        if a is not None and a["queue"] == "random" and a["inclusion_prob"] is not None:
            # Drawn by a random batch: the review carries the draw, so it counts for corrected estimates.
            r["sampling"] = {"queue": "random", "inclusion_prob": float(a["inclusion_prob"]), "stratum": a["stratum"]}
            r["why"] = f"assigned to you (random sample, drawn with probability {a['inclusion_prob']:.3f}); {r['why']}"
        elif a is not None:
            r["why"] = f"assigned to you; {r['why']}"
    return {"rows": rows, "total": total, "page": page, "pages": max(1, -(-total // page_size))}


def reasons(row: dict) -> str:
    """The priority in words, for the queue table."""
    out = []
    if row["status"] != "ok":
        out.append(row["status"].replace("_", " "))
    if row.get("disagreement"):
        out.append(f"{row['disagreement']:.0%} of {row['n_others']} other verdicts differ")
    if row.get("self_inconsistent"):
        out.append("judge flips with order/reference")
    if row.get("flagged"):
        out.append("reference flagged")
    return "; ".join(out) or "—"


@kept_while_unchanged(survives=no_reviews_read)
def choices(workspace: Path) -> dict:
    """What the queue's filters offer: judges, systems, books, labels, statuses."""
    with store.connect(workspace) as con:
        return queue_store.queue_choices(con)


@kept_while_unchanged()
def reviewers(workspace: Path) -> list[str]:
    """Who has a current label on some verdict: what the queue's "Reviewed by" filter offers."""
    with store.connect(workspace) as con:
        return reviews_store.reviewers(con)


@kept_while_unchanged()
def progress(workspace: Path) -> list[dict]:
    """Per annotator: verdicts labelled (confirmed / overridden), current flags, last activity."""
    with store.connect(workspace) as con:
        return reviews_store.annotator_progress(con)
