"""An annotator's actions on the audit queue: reviews (confirm or override), reference flags, undo,
and what the screen reads back about them (my latest action, my recent labels, others' reviews of
the item I have open).

Actions are append-only rows (``lsqa.store.reviews``), saved at once with the annotator's name and
the time: choosing the judge's own label is a ``confirm``, any other label an ``override``. Undo
withdraws the annotator's own latest action: a review gets an ``undo`` row; a flag gets a row that
restores the annotator's previous flag on that reference (or a ``retract``) and names the flag it
withdraws in ``undoes``, so it is never itself taken for the last action.
"""

from __future__ import annotations

from pathlib import Path

from lsqa import store
from lsqa.audit.kept_reads import SKIPS_TABLE, review_change
from lsqa.audit.open_items import check_open
from lsqa.audit.wording import shown_text, to_shown_label
from lsqa.errors import AuditRefused
from lsqa.judging import kinds
from lsqa.store import annotation as annotation_store
from lsqa.store import corpus as corpus_store
from lsqa.store import results as results_store
from lsqa.store import reviews as reviews_store
from lsqa.store.lineage import Change
from lsqa.store.workspace_cache import kept_while_unchanged
from lsqa.team import Person, acting
from lsqa.text.names import name_problem, shown_name
from lsqa.vocabulary import FLAG_REASONS, REFERENCES, SKIP_REASONS

MAX_NOTE_CHARS = 2_000
MAX_ANNOTATOR_CHARS = 100


def annotator_problem(value) -> str:
    """Why ``value`` cannot sign a review ('' when it can): the one name rule (``lsqa.text.names``:
    no control, bidi or invisible character), at most MAX_ANNOTATOR_CHARS characters. The Audit
    page and ``lsqa import-reviews`` both ask here."""
    return name_problem(value, max_chars=MAX_ANNOTATOR_CHARS)


def _annotator(value) -> str:
    if isinstance(value, Person):  # a signed-in person: their stored name passed the rule when added
        return value.name if value.via != "single-user" else _annotator(value.name)
    problem = annotator_problem(value)
    if problem:
        raise AuditRefused(f"annotator {shown_name(value)} {problem}, so it cannot sign a review or flag: give a "
                           f"name (one line of visible text, 1 to {MAX_ANNOTATOR_CHARS} characters)")
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
    record = kinds.get(kind)
    if not isinstance(label, str) or label not in record.labels:
        raise AuditRefused(f"review of verdict {judgment_id}: label {label!r} is not a {record.shown_family} label; "
                           f"use one of {', '.join(record.labels)}")
    return label


def _signer(con, who: Person | str) -> tuple[str, str]:
    """``(name, role)`` that signs a person's action, checked in the writing transaction
    (``lsqa.team.acting``: signed in where the workspace has people, with a role that may review)."""
    return acting(con, who, "review")


def review(workspace: Path, annotator: Person | str, judgment_id: str, label: str, note: str = "",
           sampling: dict | None = None, *, tab: str | None = None) -> dict:
    """Save a human label (system terms) at once: ``confirm`` if it is the judge's, else ``override``.

    ``sampling``: how the verdict was drawn (``{queue, inclusion_prob, stratum}`` from
    ``lsqa.stats.audits.queue``); without it the review is a priority-queue review.

    ``annotator``: a name (a workspace without people) or the signed-in Person (``lsqa.team``).

    ``tab``: the Audit page's tab the decision comes from: then it is written only on the item open
    there, once (``lsqa.audit.open_items.check_open``: not on a stale screen, not twice).

    Raises AuditRefused (nothing written) for a label not of the verdict's kind, an unknown verdict,
    an empty annotator, a note that is not short text or a decision the tab may not make (above);
    NotAllowed for a person who may not review."""
    who, note = annotator, _note(note)
    _annotator(who)
    with store.write(workspace, change=review_change(judgment_id, sampling)) as con:
        annotator, role = _signer(con, who)
        if tab is not None:
            check_open(con, annotator, tab, judgment_id, decision=True)
        j = _verdict(con, judgment_id, "review")
        label = check_label(j["kind"], label, judgment_id)
        action = "confirm" if j["status"] == "ok" and label == j["label"] else "override"
        review_id = reviews_store.add_review(con, annotator=annotator, judgment_id=judgment_id, action=action,
                                             label=label, note=note, role=role, **(sampling or {}))
    return {"id": review_id, "action": action, "label": label}


def confirm(workspace: Path, annotator: Person | str, judgment_id: str, note: str = "",
            sampling: dict | None = None, *, tab: str | None = None) -> dict:
    """Agree with the judge. A verdict without a label (parse error) cannot be confirmed. ``tab``: as
    for ``review``."""
    who, note = annotator, _note(note)
    _annotator(who)
    with store.write(workspace, change=review_change(judgment_id, sampling)) as con:
        annotator, role = _signer(con, who)
        if tab is not None:
            check_open(con, annotator, tab, judgment_id, decision=True)
        j = _verdict(con, judgment_id, "confirm")
        if j["status"] != "ok" or j["label"] is None:
            raise AuditRefused(f"confirm of verdict {judgment_id}: it has no label to confirm; choose a label instead")
        review_id = reviews_store.add_review(con, annotator=annotator, judgment_id=judgment_id, action="confirm",
                                             label=j["label"], note=note, role=role, **(sampling or {}))
    return {"id": review_id, "action": "confirm", "label": j["label"]}


def skip(workspace: Path, annotator: Person | str, judgment_id: str, reason: str = "skip", note: str = "", *,
         tab: str | None = None) -> dict:
    """Pass a verdict over without labelling it: ``skip`` (the note says why) or ``unsure``. Recorded
    (``review_skips``, who and when), never a label: agreement, corrected estimates, overrides and
    the queue read reviews only. AuditRefused (nothing written) for an unknown reason or verdict, or
    from a ``tab`` that does not have the verdict open (``lsqa.audit.open_items.check_open``);
    NotAllowed for a person who may not review."""
    who, note = annotator, _note(note)
    _annotator(who)
    if not isinstance(reason, str) or reason not in SKIP_REASONS:
        raise AuditRefused(f"skip of {judgment_id!r}: reason {reason!r} is unknown; use one of {', '.join(SKIP_REASONS)}")
    with store.write(workspace, change=Change(tables=frozenset({SKIPS_TABLE}))) as con:
        annotator, role = _signer(con, who)
        if tab is not None:
            check_open(con, annotator, tab, judgment_id, decision=False)
        _verdict(con, judgment_id, "skip")
        skip_id = reviews_store.add_skip(con, annotator=annotator, role=role, judgment_id=judgment_id, reason=reason, note=note)
    return {"id": skip_id, "reason": reason}


def _correction(value, reason: str, question_id) -> str:
    """A proposed corrected reference as it is kept ('' for none), or AuditRefused saying what is wrong."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise AuditRefused(f"flag on {question_id!r}: a corrected reference of type {type(value).__name__} cannot "
                           "be kept: write it as text")
    value = value.strip()
    if len(value) > MAX_NOTE_CHARS or "\x00" in value:
        raise AuditRefused(f"flag on {question_id!r}: a corrected reference must be text of at most "
                           f"{MAX_NOTE_CHARS:,} characters without a NUL character: shorten it")
    if value and reason == "retract":
        raise AuditRefused(f"flag on {question_id!r}: a retract withdraws a flag and carries no corrected reference: "
                           "leave the correction empty")
    return value


def flag(workspace: Path, annotator: Person | str, question_id: str, reference: str, reason: str,
         note: str = "", correction: str | None = "") -> dict:
    """Flag NarrativeQA reference ``reference`` (``'1'`` or ``'2'``) of a stored question as wrong,
    ambiguous or unanswerable (``retract`` withdraws), optionally proposing the ``correction`` (the
    reference as it should read; kept with the flag and written to the errata). AuditRefused for
    anything else; NotAllowed for a person who may not review."""
    who, note = annotator, _note(note)
    _annotator(who)
    correction = _correction(correction, reason, question_id)
    if not isinstance(reference, str) or reference not in REFERENCES:
        raise AuditRefused(f"flag on {question_id!r}: reference {reference!r} is not one of the question's "
                           f"references; use '1' or '2'")
    if not isinstance(reason, str) or reason not in FLAG_REASONS:
        raise AuditRefused(f"flag on {question_id!r}: reason {reason!r} is unknown; use one of {', '.join(FLAG_REASONS)}")
    with store.write(workspace) as con:
        annotator, role = _signer(con, who)
        if not isinstance(question_id, str) or not corpus_store.question_ids(con, [question_id]):
            raise AuditRefused(f"flag: no question {question_id!r} in this workspace; flag a question shown in the "
                               "audit queue or the Reference errors page")
        flag_id = reviews_store.add_flag(con, annotator=annotator, question_id=question_id, reference=reference,
                                         reason=reason, note=note, role=role, correction=correction)
    return {"id": flag_id, "reference": reference, "reason": reason, "correction": correction}


def last_action(workspace: Path, annotator: str) -> dict | None:
    if not annotator.strip():
        return None
    with store.connect(workspace) as con:
        return reviews_store.last_action(con, annotator.strip())


def undo_last(workspace: Path, annotator: Person | str, what: str | None = None) -> dict | None:
    """Withdraw the annotator's own latest standing action (only a ``review`` or only a ``flag``
    when ``what`` says so); None when there is nothing to undo. The result carries the question's text.

    Undoing a review writes one review row for one verdict, as a review does, and says so
    (``review_change``): the reads kept across a review stay kept across its undo. The action to
    undo is looked up before the write declares it; if another action of mine lands in between,
    the write is rolled back and made again without the declaration. NotAllowed for a person who
    may not review (checked again in the write)."""
    who = annotator
    annotator = who.name if isinstance(who, Person) else who.strip()
    if not annotator:
        raise ValueError("an annotator name is required")
    with store.connect(workspace) as con:
        _signer(con, who)  # "nothing to undo" is for somebody who may undo; the write checks again
        seen = reviews_store.last_action(con, annotator, what)
    if seen is None:
        return None
    declared = review_change(seen["target"]) if seen["what"] == "review" else None
    try:
        return _undo(workspace, who, what, declared, seen)
    except _ActionMoved:
        return _undo(workspace, who, what, None, None)


class _ActionMoved(Exception):
    """The latest action changed between the look-up and the write that declared what it undoes."""


def _undo(workspace: Path, who: Person | str, what: str | None, declared: Change | None,
          seen: dict | None) -> dict | None:
    with store.write(workspace, change=declared) as con:
        annotator, role = _signer(con, who.strip() if isinstance(who, str) else who)
        last = reviews_store.last_action(con, annotator, what)
        if declared is not None and (last is None or (last["what"], last["id"]) != (seen["what"], seen["id"])):
            raise _ActionMoved  # rolls the transaction back: nothing written, no step recorded
        if last is None:
            return None
        if last["what"] == "review":
            last.update({k: v for k, v in (annotation_store.question_of(con, last["target"]) or {}).items()
                         if k in ("question", "judge", "kind", "shown_order")})
            reviews_store.add_review(con, annotator=annotator, judgment_id=last["target"], action="undo",
                                     undoes=int(last["id"]), note="undo", role=role)
        else:
            last["question"] = annotation_store.question_text(con, last["target"])
            before = reviews_store.flag_before(con, annotator, last["target"], last["reference"], int(last["id"]))
            reason = before["reason"] if before else "retract"
            reviews_store.add_flag(con, annotator=annotator, question_id=last["target"], reference=last["reference"],
                                   reason=reason, note=before["note"] if before else "", undoes=int(last["id"]),
                                   role=role, correction=before["correction"] if before else "")
    return last


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
