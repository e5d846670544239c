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
reviews of verdicts it leaves out (``_queue_survives``), and the queue without the item just opened,
after reviews by anyone, is brought up to date from the kept head (``_head_brought_up_to_date``): a
review by one person re-reads that verdict's row only, not every session's queue.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from lsqa import store
from lsqa.audit.double_annotation import overlap
from lsqa.audit.kept_reads import REVIEW_TABLES, no_reviews_read
from lsqa.errors import AuditRefused
from lsqa.store import assignments as assignments_store
from lsqa.store import audit_queue as queue_store
from lsqa.store import queue_signals
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
    head = _head_brought_up_to_date(workspace, filters, annotator, size, page_size, exclude)
    if head is None:
        head = _queue_page(workspace, filters, annotator, page=0, page_size=size, exclude=exclude)
    total = head["total"]
    return {"rows": head["rows"][:page_size], "total": total, "page": 0, "pages": max(1, -(-total // page_size))}


def _read_queue(workspace: Path, filters: Filters = Filters(), annotator: str = "", *, page: int = 0,
                page_size: int = PAGE_SIZE, exclude: tuple[str, ...] | list[str] = ()) -> dict:
    """``queue`` read from the workspace, nothing kept or derived (tests and benches compare with it)."""
    return _queue_page.uncached(workspace, filters, annotator, page=page, page_size=page_size, exclude=tuple(exclude))


queue.uncached = _read_queue  # type: ignore[attr-defined]  (as the kept reads have it)


def _head_brought_up_to_date(workspace: Path, filters: Filters, annotator: str, size: int, page_size: int,
                             exclude: tuple[str, ...]) -> dict | None:
    """The head of the queue that leaves out ``exclude``, made from a kept head without reading the
    queue again, or None when it cannot be (then it is read).

    Two things happen between two keys of a person on the Audit page: the page opens one more item
    (the queue asked for next leaves out one verdict more), and people review verdicts — the item
    just decided, and other people's items. The kept head that leaves out ``exclude`` (or all of it
    but its last verdict) is brought up to date with both: the verdict newly left out is taken out
    of its rows, and so is each verdict reviewed since that it leaves out anyway; each other verdict
    reviewed since (by anyone) is read alone (``_rows_of`` with ``ids``) and put back where the queue's
    order puts it, or left out of the queue. A review changes nothing but its own verdict's row: its
    reviewers, my label, whether the filters keep it, and so its place (reviewed verdicts come after
    the others); the other rows, their priority and order stay. A step that is not a review
    (a flag, a setting, a run) makes the head be read again. Kept in turn, under the current version."""
    for base in dict.fromkeys((exclude, exclude[:-1])):
        found = _queue_page.kept_with_changes(workspace, filters, annotator, page=0, page_size=size, exclude=base)
        if found is None:
            continue
        before, version, changes = found
        if not all(c.only_in(*REVIEW_TABLES) and c.judgments for c in changes):
            continue
        reviewed = set().union(*(c.judgments for c in changes)) - set(exclude)
        if base == exclude and not reviewed:
            return before  # kept for this very call (the steps since touched only verdicts it leaves out)
        head = _brought_up_to_date(workspace, filters, annotator, before, set(exclude) - set(base), reviewed, exclude)
        if head is None or len(head["rows"]) < min(page_size, head["total"]):
            continue
        _queue_page.keep_derived(workspace, version, head, filters, annotator, page=0, page_size=size, exclude=exclude)
        return head
    return None


def _brought_up_to_date(workspace: Path, filters: Filters, annotator: str, before: dict, newly_left_out: set[str],
                        reviewed: set[str], exclude: tuple[str, ...]) -> dict | None:
    """``before`` (a kept head) without the verdicts ``newly_left_out``, and with the rows of the
    verdicts ``reviewed`` since read again; None when its total cannot be known without a read (a
    verdict that may lie beyond the kept rows)."""
    rows, total = before["rows"], before["total"]
    complete = len(rows) == total  # every verdict of the queue is in the rows
    ids = {r["id"] for r in rows}
    for jid in newly_left_out | reviewed:
        if jid in ids:
            total -= 1
        elif not complete:
            return None  # it may have been in the queue, beyond the rows: the total is unknown
    shown = [r for r in rows if r["id"] in reviewed]  # their own columns stand: only their reviews are read
    rows = [r for r in rows if r["id"] not in newly_left_out and r["id"] not in reviewed]
    if reviewed:
        unseen = sorted(reviewed - {r["id"] for r in shown})  # beyond a complete head: maybe not in it at all
        inputs = _kept_inputs(workspace)
        with store.connect(workspace) as con:
            fresh = queue_store.review_columns(con, shown, annotator=annotator, reviewed=filters.reviewed,
                                               overlap=inputs["share"], reviewed_by=filters.reviewed_by,
                                               exclude=list(exclude)) if shown else []
            if unseen:
                fresh += _rows_of(con, filters, annotator, exclude=exclude, ids=unseen, limit=len(unseen), **inputs)[0]
        total += len(fresh)
        last = queue_store.sort_key(before["rows"][-1]) if before["rows"] else None
        for r in fresh:  # in the queue's order among the rows, or beyond them (then the head ends before it)
            place = queue_store.sort_key(r)
            if complete or last is None or place < last:
                at = next((i for i, other in enumerate(rows) if queue_store.sort_key(other) > place), len(rows))
                rows.insert(at, r)
    return {"rows": rows, "total": total, "page": 0, "pages": before["pages"]}


@kept_while_unchanged(maxsize=64, survives=_queue_survives)  # a few per person at the dashboard
def _queue_page(workspace: Path, filters: Filters, annotator: str, *, page: int, page_size: int,
                exclude: tuple[str, ...]) -> dict:
    with store.connect(workspace) as con:
        rows, total = _rows_of(con, filters, annotator, exclude=exclude, limit=page_size, offset=page * page_size,
                               **_kept_inputs(workspace))
    return {"rows": rows, "total": total, "page": page, "pages": max(1, -(-total // page_size))}


@kept_while_unchanged(survives=no_reviews_read)
def _signals(workspace: Path) -> str | None:
    """What the kept priority signals stand for (``queue_signals.relation``): a review changes no
    verdict, so it is read again only after other writes."""
    with store.connect(workspace) as con:
        return queue_signals.relation(con)


def _kept_inputs(workspace: Path) -> dict:
    """What every read of the queue needs besides its filters, read once until something other than a
    review changes: the overlap setting and the state of the kept signals."""
    return {"share": overlap(workspace), "signals": _signals(workspace)}


def _rows_of(con, filters: Filters, annotator: str, *, exclude: tuple[str, ...], limit: int, offset: int = 0,
             ids: list[str] | None = None, share: float, signals: str | None) -> tuple[list[dict], int]:
    """The queue's rows as the page shows them (priority and why in words), and its total;
    ``ids``: only these verdicts; ``share`` and ``signals``: ``_kept_inputs``."""
    rows, total = queue_store.audit_queue(
        con, weights=PRIORITY_WEIGHTS, annotator=annotator, judges=filters.judges, systems=filters.systems,
        documents=filters.documents, labels=filters.labels, statuses=filters.statuses,
        reviewed=filters.reviewed, exclude=list(exclude), overlap=share, reviewed_by=filters.reviewed_by,
        questions=filters.questions, search=search_terms(filters.search), limit=limit, offset=offset, ids=ids,
        signals=signals)
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
    return rows, total


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
