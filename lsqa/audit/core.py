"""Auditing judge verdicts by hand: the queue, one item as the judge saw it, and the annotator's actions.

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

Actions are append-only rows (``lsqa.store.reviews``), saved at once with the annotator's name and
the time: choosing the judge's own label is a ``confirm``, any other label an ``override``. Undo
withdraws the annotator's own latest action: a review gets an ``undo`` row; a flag gets a row that
restores the annotator's previous flag on that reference (or a ``retract``) and names the flag it
withdraws in ``undoes``, so it is never itself taken for the last action.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from lsqa import store
from lsqa.text import highlight
from lsqa.text.units import content_words
from lsqa.store import annotation as annotation_store
from lsqa.store import audit_queue as queue_store
from lsqa.store import corpus as corpus_store
from lsqa.store import llm_calls as llm_calls_store
from lsqa.store import results as results_store
from lsqa.store import reviews as reviews_store
from lsqa.store.lineage import Change
from lsqa.errors import AuditRefused
from lsqa.store.workspace_cache import kept_while_unchanged
from lsqa.vocabulary import ABSOLUTE_LABELS, FLAG_REASONS, PAIRWISE_LABELS, REFERENCES, is_pairwise, swap_pairwise

PRIORITY_WEIGHTS = {"failed": 3.0, "disagreement": 2.0, "self_inconsistent": 1.0, "flagged": 0.5}
REVIEWED_FILTERS = {"not_mine": "not reviewed by me", "unreviewed": "not reviewed by anyone",
                    "second": "needs a second review (reviewed by exactly one other person)",
                    "all": "all", "mine": "reviewed by me"}
OVERLAP_KEY = "audit.overlap"  # workspace setting: share of verdicts every annotator reviews
PAGE_SIZE = 100
CONTEXT_CHARS = 350  # book text shown either side of an evidence excerpt when no passage holds it
FOLD_SENTENCES = 2  # sentences kept either side of the marked evidence until the passage is unfolded

# Keyboard shortcuts of the audit screen (Streamlit ≥ 1.52 `st.button(shortcut=...)`; C and R are
# reserved by Streamlit). Labels are given in the positions shown: "A" is the answer shown first.
SHORTCUTS = {
    "next": "J", "previous": "K", "confirm": "V", "undo": "U",
    "shown:A": "A", "shown:B": "B", "shown:tie": "T", "shown:none": "X",
    "yes": "Y", "no": "N",
    "flag:1": "F", "flag:2": "G",
}
# A key per flag reason: it chooses the reason for the next F / G (retracting is Undo's job).
FLAG_REASON_KEYS = {"wrong": "W", "ambiguous": "M", "unanswerable": "Q"}


@dataclass(frozen=True)
class Filters:
    judges: tuple[str, ...] = ()
    systems: tuple[str, ...] = ()
    documents: tuple[str, ...] = ()
    labels: tuple[str, ...] = ()
    statuses: tuple[str, ...] = ()
    reviewed: str = "not_mine"


# A review writes one row of human_reviews for one verdict (``_review_change``). Reads that do not
# depend on that verdict's reviews are kept across it (lsqa.store.workspace_cache): a decision on the
# Audit page then reads neither the queue nor the settings again (issue 12, decision -> next item).
REVIEWS_TABLE = "human_reviews"


def _review_change(judgment_id) -> Change | None:
    if not isinstance(judgment_id, str):
        return None  # refused inside the write (_verdict), which then records nothing
    return Change(tables=frozenset({REVIEWS_TABLE}), judgments=frozenset({judgment_id}))


def _no_reviews_read(change: Change, arguments: dict) -> bool:
    """For reads of verdicts, questions and settings only: no review can change them."""
    return change.only_in(REVIEWS_TABLE)


def _queue_survives(change: Change, arguments: dict) -> bool:
    """A review of verdict X changes only X's row of the queue (its reviewers, my label), so the page
    is the same when X is left out of it, as the Audit page leaves out every item it has opened."""
    return change.only_in(REVIEWS_TABLE) and bool(change.judgments) and change.judgments <= set(arguments["exclude"])


def _item_survives(change: Change, arguments: dict) -> bool:
    """An item shows its own verdict's reviews only."""
    return change.only_in(REVIEWS_TABLE) and bool(change.judgments) and arguments["judgment_id"] not in change.judgments


# ------------------------------------------------------------------------------------- queue

def queue(workspace: Path, filters: Filters = Filters(), annotator: str = "", *, page: int = 0,
          page_size: int = PAGE_SIZE, exclude: tuple[str, ...] | list[str] = ()) -> dict:
    """One page of the audit queue: ``{"rows": [...], "total": n, "page": p, "pages": k}``.

    ``exclude``: verdicts left out (those opened already this session, see ``lsqa.audit.trail``).
    The workspace's overlap setting (``overlap``) decides which verdicts others' reviews take out
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


HEAD_SLACK = 50  # the rows a queue's head may lose to derivations before it is read again


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
        share = _overlap(con)
        rows, total = queue_store.audit_queue(
            con, weights=PRIORITY_WEIGHTS, annotator=annotator, judges=filters.judges, systems=filters.systems,
            documents=filters.documents, labels=filters.labels, statuses=filters.statuses,
            reviewed=filters.reviewed, exclude=list(exclude), overlap=share, limit=page_size,
            offset=page * page_size)
    for r in rows:
        r["priority"] = round(float(r["priority"]), 3)
        r["disagreement"] = round(float(r["disagreement"]), 3)
        r["why"] = reasons(r)
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


@kept_while_unchanged(survives=_no_reviews_read)
def choices(workspace: Path) -> dict:
    with store.connect(workspace) as con:
        return queue_store.queue_choices(con)


# --------------------------------------------------------------------------------- one item

def label_options(kind: str) -> list[dict]:
    """The labels a human can give, as buttons: ``{"key", "shown", "text", "shortcut"}``.

    Side-by-side labels are offered in shown positions (A = the answer shown first); ``to_system_label``
    turns them into system terms for storage.
    """
    if is_pairwise(kind):
        return [{"key": "shown:A", "shown": "A", "text": "A is better", "shortcut": SHORTCUTS["shown:A"]},
                {"key": "shown:B", "shown": "B", "text": "B is better", "shortcut": SHORTCUTS["shown:B"]},
                {"key": "shown:tie", "shown": "tie", "text": "Equal", "shortcut": SHORTCUTS["shown:tie"]},
                {"key": "shown:none", "shown": "none", "text": "None (both wrong)",
                 "shortcut": SHORTCUTS["shown:none"]}]
    return [{"key": "yes", "shown": "yes", "text": "Yes, correct", "shortcut": SHORTCUTS["yes"]},
            {"key": "no", "shown": "no", "text": "No, not correct", "shortcut": SHORTCUTS["no"]}]


def to_system_label(kind: str, shown_label: str, shown_order: str) -> str:
    """A label given in shown positions → system terms (A = system_a won), as verdicts are stored."""
    if is_pairwise(kind) and shown_order == "ba":
        return swap_pairwise(shown_label)
    return shown_label


def to_shown_label(kind: str, label: str | None, shown_order: str) -> str | None:
    return to_system_label(kind, label, shown_order) if label is not None else None  # the swap is its own inverse


def describe(kind: str, label: str | None, system_a: str, system_b: str) -> str:
    """A stored label (system terms) in words."""
    if label is None:
        return "no label"
    if is_pairwise(kind):
        return {"A": f"{system_a} better", "B": f"{system_b} better", "tie": "equal",
                "none": "neither correct"}.get(label, label)
    return label


@kept_while_unchanged(survives=_item_survives)
def item(workspace: Path, judgment_id: str, *, context_chars: int = CONTEXT_CHARS) -> dict | None:
    """One verdict as the judge saw it, with what a human needs to decide.

    ``answers``: in the order shown to the judge (``position`` A / B); ``evidence``: each excerpt
    with where it was found in the story and the passage around it, as escaped HTML with the
    excerpt in ``<mark>``.
    """
    with store.connect(workspace) as con:
        j = results_store.judgment_in_context(con, judgment_id)
        if j is None:
            return None
        systems = [s for s in (j["system_a"], j["system_b"]) if s]
        answers = {a["system_name"]: a for a in results_store.answers_for(con, [j["question_id"]], systems)}
        others = results_store.other_verdicts(con, j["question_id"], systems)
        flags = reviews_store.flags_of(con, j["question_id"])
        labels_now = reviews_store.human_labels_of(con, judgment_id)
        history = reviews_store.review_history(con, judgment_id)
        book = corpus_store.get_document(con, j["document_id"]) if j.get("has_text") else None
        pairwise = is_pairwise(j["kind"])
        if pairwise:
            shown = [j["system_a"], j["system_b"]] if j["shown_order"] == "ab" else [j["system_b"], j["system_a"]]
        else:
            shown = [j["system_a"]]
        shown_answers = [{"position": "AB"[i] if pairwise else "", "system": s,
                          "text": (answers.get(s) or {}).get("text", ""),
                          "status": (answers.get(s) or {}).get("status", "missing")} for i, s in enumerate(shown)]
        evidence = _evidence(con, j, book, shown_answers, context_chars)
    other_rows = [{"judge": o["judge"], "kind": o["kind"], "order": o["shown_order"], "reference": o["reference"],
                   "verdict": describe(o["kind"], o["label"], o["system_a"], o["system_b"]) if o["status"] == "ok"
                   else o["status"], "this": o["id"] == judgment_id} for o in others]
    for lab in labels_now:
        lab["text"] = describe(j["kind"], lab["label"], j["system_a"], j["system_b"])
        lab["shown_label"] = to_shown_label(j["kind"], lab["label"], j["shown_order"])
    try:
        extra = json.loads(j.get("extra") or "{}")
    except json.JSONDecodeError:
        extra = {}
    return {
        "id": j["id"], "judge": j["judge"], "kind": j["kind"], "pairwise": pairwise, "status": j["status"],
        "question_id": j["question_id"], "question": j["question"] or "", "title": j["title"] or "",
        "document_id": j["document_id"], "origin": j["origin"],
        "references": [{"n": "1", "text": j["reference_1"] or ""}, {"n": "2", "text": j["reference_2"] or ""}],
        "reference_used": j["reference"], "flags": flags,
        "system_a": j["system_a"], "system_b": j["system_b"], "shown_order": j["shown_order"],
        "answers": shown_answers,
        "label": j["label"], "raw_label": j["raw_label"], "score": j["score"],
        "label_text": describe(j["kind"], j["label"], j["system_a"], j["system_b"]),
        "shown_label": to_shown_label(j["kind"], j["label"], j["shown_order"]),
        "evidence": evidence, "raw": j["raw"] or "", "extra": extra,
        "prompt_version": f"{j['prompt_id']} v{j['prompt_version']}" if j["prompt_id"] else "",
        "other_verdicts": other_rows, "human_labels": labels_now, "history": history,
        "options": label_options(j["kind"]),
    }


def prompt_of(workspace: Path, judgment_id: str) -> str:
    """The prompt a verdict's judge was sent, as text (one block per message); "" without a call.

    Apart from ``item`` because a prompt can carry a whole book: read only when someone asks to see
    it (the Audit page's "Raw completion and prompt" panel). On a *Les Misérables* verdict of the
    full demo this read was 0.29 s of the item's 0.4 s, paid on every key press (issue 12)."""
    with store.connect(workspace) as con:
        j = results_store.judgment_in_context(con, judgment_id)
        call = llm_calls_store.get_call(con, j["llm_call_key"]) if j and j["llm_call_key"] else None
    return _prompt_text(call)


def _prompt_text(call: dict | None) -> str:
    if not call:
        return ""
    try:
        messages = json.loads(call["messages"])
    except (TypeError, json.JSONDecodeError):
        return str(call.get("messages") or "")
    return "\n\n".join(f"[{m.get('role', '')}]\n{m.get('content', '')}" for m in messages if isinstance(m, dict))


def _evidence(con, j: dict, book: dict | None, answers: list[dict], context_chars: int) -> list[dict]:
    """The judge's evidence: quotes found in the book, one block per passage (several quotes in one
    passage share it), folded to a few sentences around the marks with the whole passage kept for
    unfolding; on side-by-side items each block says which shown answer its quotes share words with.
    Text not found in the book (an explanation, a paraphrase) is kept as a note, its ``A:``/``B:``
    prefix read as the answer it is about."""
    try:
        excerpts = [str(e) for e in json.loads(j["evidence"] or "[]")]
    except json.JSONDecodeError:
        excerpts = [j["evidence"]]
    pairwise = is_pairwise(j["kind"])
    words = {a["position"]: set(content_words(a["text"] or "")) for a in answers} if pairwise else {}
    notes, blocks = [], {}
    full = (book or {}).get("full_text") or ""
    lo, hi = ((book or {}).get("clean_start") or 0), ((book or {}).get("clean_end") or len(full))
    for text in excerpts:
        matches = highlight.find_evidence(full, text, lo, hi) if full else []
        if not matches:
            about = text[:1] if pairwise and text[:2] in ("A:", "B:") else ""
            notes.append({"found": False, "how": "", "where": "", "about": about, "text": text,
                          "html": highlight.text_html(text), "html_full": "", "folded": False})
            continue
        spans = [(m.start, m.end) for m in matches]
        passages = corpus_store.passages_covering(con, j["document_id"], spans)
        if passages:
            lo_p, hi_p = passages[0]["char_start"], passages[-1]["char_end"]
            where = f"passage {passages[0]['ordinal']}" + (f"–{passages[-1]['ordinal']}" if len(passages) > 1 else "")
        else:
            lo_p, hi_p = highlight.word_bounds(full, *highlight.window(len(full), spans[0][0], spans[-1][1],
                                                                       context_chars, lo, hi))
            where = f"characters {spans[0][0]:,}–{spans[-1][1]:,}"
        block = blocks.setdefault((lo_p, hi_p), {"found": True, "how": matches[0].how, "where": where,
                                                 "lo": lo_p, "hi": hi_p, "spans": [], "about": set()})
        block["spans"] += spans
        if pairwise:
            quoted = set(content_words(text))
            block["about"] |= {pos for pos, w in words.items() if quoted & w}
    out = []
    for b in sorted(blocks.values(), key=lambda b: b["lo"]):
        spans = sorted(b.pop("spans"))
        s, e = highlight.sentence_window(full, spans[0][0], spans[-1][1], FOLD_SENTENCES, b["lo"], b["hi"])
        lo_p, hi_p = b.pop("lo"), b.pop("hi")
        b["folded"] = (s, e) != (lo_p, hi_p)
        b["html"] = highlight.marked_html(full[s:e], spans, offset=s)
        b["html_full"] = highlight.marked_html(full[lo_p:hi_p], spans, offset=lo_p)
        b["about"] = " and ".join(sorted(b["about"]))
        out.append(b)
    return out + notes


def evidence_label(ev: dict, pairwise: bool) -> str:
    """Which shown answer a block of evidence is about, in words (side-by-side items only)."""
    if not pairwise:
        return ""
    if ev["about"]:
        return f"answer{'s' if ' and ' in ev['about'] else ''} {ev['about']}"
    return "neither answer's words"


# ------------------------------------------------------------------------------------ actions

MAX_NOTE_CHARS = 2_000
MAX_ANNOTATOR_CHARS = 100


def _annotator(value) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_ANNOTATOR_CHARS or \
            any(ord(c) < 32 for c in value):
        raise AuditRefused(f"annotator {str(value)[:40]!r} cannot sign a review or flag: give a name "
                           f"(one line, 1 to {MAX_ANNOTATOR_CHARS} characters)")
    return value.strip()


def _note(value) -> str:
    """``value`` if it can be kept as a note, else AuditRefused saying what is wrong with it."""
    if not isinstance(value, str):
        raise AuditRefused(f"a note of type {type(value).__name__} cannot be kept: write it as text")
    if len(value) > MAX_NOTE_CHARS:
        raise AuditRefused(f"a note of {len(value):,} characters cannot be kept: write at most "
                           f"{MAX_NOTE_CHARS:,} characters")
    if "\x00" in value:  # DuckDB text cannot hold it; pasted text sometimes brings one
        raise AuditRefused("a note holding a NUL character (\\x00) cannot be kept: remove it and try again")
    return value


def _verdict(con, judgment_id, action: str) -> dict:
    """The verdict's kind, status and label, or AuditRefused naming what to do instead."""
    j = results_store.judgment_label(con, judgment_id) if isinstance(judgment_id, str) else None
    if j is None:
        raise AuditRefused(f"{action}: no verdict {judgment_id!r} in this workspace; choose one from the audit queue")
    return j


def check_label(kind: str, label, judgment_id: str) -> str:
    """``label`` if a human may give it to a verdict of ``kind`` (system terms), else AuditRefused."""
    allowed = PAIRWISE_LABELS if is_pairwise(kind) else ABSOLUTE_LABELS
    if not isinstance(label, str) or label not in allowed:
        family = "side-by-side" if is_pairwise(kind) else "yes/no"
        raise AuditRefused(f"review of verdict {judgment_id}: label {label!r} is not a {family} label; "
                           f"use one of {', '.join(allowed)}")
    return label


def review(workspace: Path, annotator: str, judgment_id: str, label: str, note: str = "",
           sampling: dict | None = None) -> dict:
    """Save a human label (system terms) at once: ``confirm`` if it is the judge's, else ``override``.

    ``sampling``: how the verdict was drawn (``{queue, inclusion_prob, stratum}`` from
    ``lsqa.stats.sampling.queue``); without it the review is a priority-queue review.

    Raises AuditRefused (nothing written) for a label not of the verdict's kind, an unknown verdict,
    an empty annotator or a note that is not short text."""
    annotator, note = _annotator(annotator), _note(note)
    with store.write(workspace, change=_review_change(judgment_id)) as con:
        j = _verdict(con, judgment_id, "review")
        label = check_label(j["kind"], label, judgment_id)
        action = "confirm" if j["status"] == "ok" and label == j["label"] else "override"
        review_id = reviews_store.add_review(con, annotator=annotator, judgment_id=judgment_id, action=action,
                                             label=label, note=note, **(sampling or {}))
    return {"id": review_id, "action": action, "label": label}


def confirm(workspace: Path, annotator: str, judgment_id: str, note: str = "",
            sampling: dict | None = None) -> dict:
    """Agree with the judge. A verdict without a label (parse error) cannot be confirmed."""
    annotator, note = _annotator(annotator), _note(note)
    with store.write(workspace, change=_review_change(judgment_id)) as con:
        j = _verdict(con, judgment_id, "confirm")
        if j["status"] != "ok" or j["label"] is None:
            raise AuditRefused(f"confirm of verdict {judgment_id}: it has no label to confirm; choose a label instead")
        review_id = reviews_store.add_review(con, annotator=annotator, judgment_id=judgment_id, action="confirm",
                                             label=j["label"], note=note, **(sampling or {}))
    return {"id": review_id, "action": "confirm", "label": j["label"]}


def flag(workspace: Path, annotator: str, question_id: str, reference: str, reason: str, note: str = "") -> dict:
    """Flag NarrativeQA reference ``reference`` (``'1'`` or ``'2'``) of a stored question as wrong,
    ambiguous or unanswerable (``retract`` withdraws). AuditRefused for anything else."""
    annotator, note = _annotator(annotator), _note(note)
    if not isinstance(reference, str) or reference not in REFERENCES:
        raise AuditRefused(f"flag on {question_id!r}: reference {reference!r} is not one of the question's "
                           f"references; use '1' or '2'")
    if not isinstance(reason, str) or reason not in FLAG_REASONS:
        raise AuditRefused(f"flag on {question_id!r}: reason {reason!r} is unknown; use one of {', '.join(FLAG_REASONS)}")
    with store.write(workspace) as con:
        if not isinstance(question_id, str) or not corpus_store.question_ids(con, [question_id]):
            raise AuditRefused(f"flag: no question {question_id!r} in this workspace; flag a question shown in the "
                               "audit queue or the Reference errors page")
        flag_id = reviews_store.add_flag(con, annotator=annotator, question_id=question_id, reference=reference,
                                         reason=reason, note=note)
    return {"id": flag_id, "reference": reference, "reason": reason}


def last_action(workspace: Path, annotator: str) -> dict | None:
    if not annotator.strip():
        return None
    with store.connect(workspace) as con:
        return reviews_store.last_action(con, annotator.strip())


def undo_last(workspace: Path, annotator: str, what: str | None = None) -> dict | None:
    """Withdraw the annotator's own latest standing action (only a ``review`` or only a ``flag``
    when ``what`` says so); None when there is nothing to undo. The result carries the question's text.

    Undoing a review writes one review row for one verdict, as a review does, and says so
    (``_review_change``): the reads kept across a review stay kept across its undo. The action to
    undo is looked up before the write declares it; if another action of mine lands in between,
    the write is rolled back and made again without the declaration."""
    annotator = annotator.strip()
    if not annotator:
        raise ValueError("an annotator name is required")
    with store.connect(workspace) as con:
        seen = reviews_store.last_action(con, annotator, what)
    if seen is None:
        return None
    declared = _review_change(seen["target"]) if seen["what"] == "review" else None
    try:
        return _undo(workspace, annotator, what, declared, seen)
    except _ActionMoved:
        return _undo(workspace, annotator, what, None, None)


class _ActionMoved(Exception):
    """The latest action changed between the look-up and the write that declared what it undoes."""


def _undo(workspace: Path, annotator: str, what: str | None, declared: Change | None,
          seen: dict | None) -> dict | None:
    with store.write(workspace, change=declared) as con:
        last = reviews_store.last_action(con, annotator, what)
        if declared is not None and (last is None or (last["what"], last["id"]) != (seen["what"], seen["id"])):
            raise _ActionMoved  # rolls the transaction back: nothing written, no step recorded
        if last is None:
            return None
        if last["what"] == "review":
            last.update({k: v for k, v in (annotation_store.question_of(con, last["target"]) or {}).items()
                         if k in ("question", "judge", "kind", "shown_order")})
            reviews_store.add_review(con, annotator=annotator, judgment_id=last["target"], action="undo",
                                     undoes=int(last["id"]), note="undo")
        else:
            last["question"] = annotation_store.question_text(con, last["target"])
            before = reviews_store.flag_before(con, annotator, last["target"], last["reference"], int(last["id"]))
            reason = before["reason"] if before else "retract"
            reviews_store.add_flag(con, annotator=annotator, question_id=last["target"], reference=last["reference"],
                                   reason=reason, note=before["note"] if before else "", undoes=int(last["id"]))
    return last


@kept_while_unchanged()
def progress(workspace: Path) -> list[dict]:
    with store.connect(workspace) as con:
        return reviews_store.annotator_progress(con)


def describe_action(action: dict | None) -> str:
    """An action in the words of the screen: the label as it was shown, the question by its text."""
    if not action:
        return "nothing to undo"
    question = action.get("question") or action["target"]
    if action["what"] == "review":
        said = shown_text(action["kind"], to_shown_label(action["kind"], action["label"], action["shown_order"])) \
            if action.get("kind") else action["label"]
        return f"your {action['action']} ({said}) on “{question}” ({action.get('judge', '')})"
    return f"your flag '{action['action']}' on reference {action['reference']} of “{question}”"


def shown_text(kind: str, shown_label: str | None) -> str:
    """A label in shown positions, as its button says it ("B is better", "Yes, correct")."""
    for opt in label_options(kind):
        if opt["shown"] == shown_label:
            return opt["text"]
    return shown_label or "no label"


def saved_message(kind: str, shown_label: str, action: str) -> str:
    """What the screen says after a decision: the label as shown, whether it agrees with the judge."""
    agrees = "agrees with the judge" if action == "confirm" else "overrides the judge"
    return f"Saved: {shown_text(kind, shown_label)} ({agrees})"


def reveal(it: dict, annotator: str, blind: bool) -> bool:
    """Whether the judge's label, other annotators' labels and system names may be shown: always,
    unless blind and this annotator has not decided the item yet."""
    if not blind:
        return True
    return any(lab["annotator"] == annotator.strip() for lab in it["human_labels"])


# --------------------------------------------------------------------------- double annotation

def _overlap(con) -> float:
    row = annotation_store.setting(con, OVERLAP_KEY)
    return float(row["value"]) if row else 1.0


@kept_while_unchanged(survives=_no_reviews_read)
def overlap(workspace: Path) -> float:
    """The share of verdicts every annotator reviews (1.0 unless set): the rest are reviewed once."""
    with store.connect(workspace) as con:
        return _overlap(con)


def set_overlap(workspace: Path, share: float, author: str) -> float:
    if not 0.0 <= float(share) <= 1.0:
        raise ValueError(f"overlap must be a share between 0 and 1, not {share!r}")
    with store.write(workspace) as con:
        annotation_store.add_setting(con, OVERLAP_KEY, repr(float(share)), author)
    return float(share)


def opened_marker(workspace: Path) -> int:
    """Remember this when an item is opened: ``reviewed_since`` lists reviews by others after it."""
    with store.connect(workspace) as con:
        return annotation_store.last_review_id(con)


def reviewed_since(workspace: Path, judgment_id: str, annotator: str, marker: int) -> list[dict]:
    """Reviews of the verdict by other annotators after ``marker`` (``opened_marker``), oldest first."""
    with store.connect(workspace) as con:
        rows = annotation_store.reviews_by_others_since(con, judgment_id, annotator.strip(), marker)
    return rows


@kept_while_unchanged()
def recent(workspace: Path, annotator: str, limit: int = 20) -> list[dict]:
    """My current labels, latest first, in the terms I gave them (positions shown, button words)."""
    if not annotator.strip():
        return []
    with store.connect(workspace) as con:
        rows = annotation_store.recent_reviews(con, annotator.strip(), limit)
    return [{"id": r["judgment_id"], "question": r["question"] or r["question_id"], "judge": r["judge"],
             "my label": shown_text(r["kind"], to_shown_label(r["kind"], r["label"], r["shown_order"])),
             "action": r["action"], "note": r["note"], "when": r["created_at"]} for r in rows]
