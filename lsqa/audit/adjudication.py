"""Where people disagree on a verdict, the final label an adjudicator sets; and comments on an item
(a team on one dashboard).

A disagreement is a verdict whose people's *current* labels differ (each person's latest review
that was not undone; labels given on the Audit page and labels imported with ``lsqa import-reviews``
alike). Adjudications and comments are append-only rows (migration 0016), signed with the person and
their role, checked inside the writing transaction (``lsqa.team.acting``).

The label the statistics use for a verdict — judge-vs-human agreement, overrides, corrected
estimates — is the final label of ``FINAL_LABEL_RULE``, defined once, in the workspace's
``final_human_labels`` view. Agreement between two people is computed before any adjudication,
from each person's own label.
"""

from __future__ import annotations

from pathlib import Path

from lsqa import store
from lsqa.audit.actions import _note, check_label
from lsqa.errors import AuditRefused
from lsqa.store import adjudications as adjudications_store
from lsqa.store import assignments as assignments_store
from lsqa.store import results as results_store
from lsqa.store import verdicts as verdicts_store
from lsqa.team import Person, acting, may

MAX_COMMENT_CHARS = 2_000

# The rule, in the words the Agreement page and docs/statistics.md use (tests/audit/test_adjudication.py
# checks both say it).
FINAL_LABEL_RULE = (
    "The human label of a verdict is its adjudicated label when an adjudicator set one (Adjudicate page); "
    "otherwise the label that more of the people who labelled it gave than any other label (one person's label "
    "counts as theirs). A tie between people that nobody adjudicated is no human label at all: it is neither a confirm nor an override, "
    "and is left out of judge-vs-human agreement, overrides and corrected estimates until adjudicated. "
    "Agreement between two people compares their own labels, before any adjudication."
)


def _verdict(con, judgment_id) -> dict:
    j = results_store.judgment_label(con, judgment_id) if isinstance(judgment_id, str) else None
    if j is None:
        raise AuditRefused(f"no verdict {judgment_id!r} in this workspace; choose one from `lsqa disagreements` "
                           f"or the Adjudicate page")
    return j


def adjudicate(workspace: Path, who: Person | str, judgment_id: str, label: str, note: str = "", *,
               replaces: str | None = None) -> dict:
    """Set the final label (system terms, one of the verdict's kind's labels) of a verdict people
    labelled. ``{"id", "label", "replaced"}``: ``replaced`` is the adjudication this one replaces
    (``{"id", "label", "adjudicator", "created_at"}``) or None.

    A verdict that already has a final label keeps it unless ``replaces`` names that label (system
    terms): a replacement is asked for explicitly, by someone who saw the label it replaces. The
    replaced row stays (append-only; ``adjudication_history`` shows both, the later one standing).

    NotAllowed (nothing written) unless ``who`` may adjudicate; AuditRefused (nothing written) for an
    unknown verdict, one nobody labelled yet, a label not of its kind, a note that is not short text,
    a final label there already that ``replaces`` does not name (or ``replaces`` without one, or
    naming the label given)."""
    note = _note(note)
    with store.write(workspace) as con:
        adjudicator, role = acting(con, who, "adjudicate")
        j = _verdict(con, judgment_id)
        label = check_label(j["kind"], label, judgment_id)
        if adjudications_store.labelled_by_people(con, judgment_id) == 0:
            raise AuditRefused(f"adjudication of verdict {judgment_id}: nobody has labelled it yet, so there is "
                               f"nothing to resolve; review it on the Audit page instead")
        standing = (adjudications_store.adjudications_of(con, judgment_id) or [None])[-1]
        _check_replacement(judgment_id, standing, label, replaces)
        row_id = adjudications_store.add_adjudication(con, judgment_id=judgment_id, label=label, note=note,
                                                      adjudicator=adjudicator, role=role)
    replaced = None if standing is None else {k: standing[k] for k in ("id", "label", "adjudicator", "created_at")}
    return {"id": row_id, "label": label, "replaced": replaced}


def _check_replacement(judgment_id: str, standing: dict | None, label: str, replaces: str | None) -> None:
    """Refuse (one line) an adjudication that would replace a final label nobody named, or name one
    that is not there: checked inside the write, so two adjudicators cannot replace each other unseen."""
    if standing is None:
        if replaces is not None:
            raise AuditRefused(f"verdict {judgment_id} has no final label yet, so {replaces!r} cannot be replaced: "
                               f"set the final label without replaces")
        return
    was = (f"{standing['label']!r}, set by {standing['adjudicator']} on "
           f"{standing['created_at']:%Y-%m-%d %H:%M}")
    if replaces is None:
        raise AuditRefused(f"verdict {judgment_id} already has the final label {was}: to replace it, name the label "
                           f"it replaces (replaces={standing['label']!r}; the Adjudicate page asks first)")
    if replaces != standing["label"]:
        raise AuditRefused(f"verdict {judgment_id}'s final label is {was}, not {replaces!r}: look at it again "
                           f"before replacing it")
    if label == standing["label"]:
        raise AuditRefused(f"verdict {judgment_id}'s final label is already {label!r}: nothing to replace "
                           f"(add a comment to say more)")


def adjudication_history(workspace: Path, judgment_id: str) -> list[dict]:
    """Every final label set on a verdict, oldest first, the last one standing: ``id, label, note,
    adjudicator, role, created_at`` and ``replaces`` — the row before it (``{"id", "label",
    "adjudicator", "created_at"}``), None for the first. Rows are only ever added, each after
    ``adjudicate`` checked that the one it replaces was the latest, so the row before is the one it
    replaced."""
    with store.connect(workspace) as con:
        rows = adjudications_store.adjudications_of(con, judgment_id)
    before = None
    for r in rows:
        r["replaces"] = before
        before = {k: r[k] for k in ("id", "label", "adjudicator", "created_at")}
    return rows


def next_open(rows: list[dict], after: str | None = None) -> str | None:
    """The disagreement to settle next: the first of ``open_after``; None when every one is settled."""
    return next(iter(open_after(rows, after)), None)


def open_after(rows: list[dict], after: str | None = None) -> list[str]:
    """The disagreements not adjudicated, in the order of ``rows`` (``disagreements``) from the one
    after ``after`` (from the start without ``after`` or when it is not in ``rows``), wrapping round
    to the first, ``after`` left out. The one place the Adjudicate page chooses what comes next: the
    first of them that no other adjudicator has open (``lsqa.audit.open_items``)."""
    ids = [d["judgment_id"] for d in rows]
    start = ids.index(after) + 1 if after in ids else 0
    return [d["judgment_id"] for d in rows[start:] + rows[:start] if d["adjudicated"] is None and d["judgment_id"] != after]


def disagreements(workspace: Path) -> list[dict]:
    """The verdicts whose people's current labels differ, each as ``{"judgment_id", "labels":
    [{"annotator", "label", "note", "created_at"}], "adjudicated": label or None}`` plus what the page
    shows beside it (``judge, kind, question_id, system_a, system_b, reference, judge_label``,
    ``shown_order``, ``question``, ``title`` (the book's), ``references`` (``{"n", "text"}``), ``answers`` in the order the
    judge was shown them (``{"position", "system", "text"}``: A then B side by side, one for a yes/no
    verdict), ``adjudication``: ``{"label", "note", "adjudicator", "created_at"}`` or None, and
    ``n_adjudications``: how many final labels were set, replaced ones included). Not yet adjudicated
    first, then by verdict id."""
    with store.connect(workspace) as con:
        rows = adjudications_store.disagreements(con)
    out: dict[str, dict] = {}
    for r in rows:
        d = out.get(r["judgment_id"])
        if d is None:
            d = out[r["judgment_id"]] = {
                "judgment_id": r["judgment_id"], "labels": [], "adjudicated": r["adjudicated"],
                **{k: r[k] for k in ("judge", "kind", "question_id", "system_a", "system_b", "reference", "judge_label",
                                     "shown_order", "n_adjudications")},
                "question": r["question"] or "", "title": r["title"] or "", "answers": _answers_shown(r),
                "references": [{"n": "1", "text": r["reference_1"] or ""}, {"n": "2", "text": r["reference_2"] or ""}],
                "adjudication": None if r["adjudicated"] is None else {
                    "label": r["adjudicated"], "note": r["adjudication_note"], "adjudicator": r["adjudicator"],
                    "created_at": r["adjudicated_at"]}}
        d["labels"].append({"annotator": r["annotator"], "label": r["label"], "note": r["note"],
                            "created_at": r["created_at"]})
    return sorted(out.values(), key=lambda d: (d["adjudicated"] is not None, d["judgment_id"]))


def _answers_shown(r: dict) -> list[dict]:
    """The verdict's answers in the order its judge was shown them (paper §3.2: ``shown_order``)."""
    a = {"system": r["system_a"], "text": r["answer_a"]}
    if not r["system_b"]:
        return [{"position": "", **a}]
    b = {"system": r["system_b"], "text": r["answer_b"]}
    first, second = (b, a) if r["shown_order"] == "ba" else (a, b)
    return [{"position": "A", **first}, {"position": "B", **second}]


def final_labels(workspace: Path, judge: str | None = None) -> list[dict]:
    """The final human label of every verdict people labelled (of ``judge``, if given), one row each, as
    ``lsqa export`` writes them to ``final_labels`` and ``lsqa labels`` prints them: the label by
    ``FINAL_LABEL_RULE`` (None for a tie), how it was decided (``basis``: adjudicated, single,
    unanimous, majority or tie), the people and their labels, the adjudicator, and whether the verdict
    counts as an audit with its π (``lsqa.store.verdicts.final_label_table``). AuditRefused for a
    judge without verdicts."""
    with store.connect(workspace) as con:
        if judge is not None and not assignments_store.verdict_count(con, judge):
            raise AuditRefused(f"judge {judge!r} has no verdicts in this workspace: give one of the judges "
                               f"`lsqa status` counts, or leave --judge out for every judge")
        return verdicts_store.final_label_table(con, judge)


def disagreements_seen_by(workspace: Path, person: Person | None) -> tuple[list[dict], int]:
    """The disagreements ``person`` may read, and how many are kept from them. An annotator who may
    not adjudicate sees only those on verdicts they labelled themselves: the others are items they may
    still be asked to label, and other people's labels on them would be a prior (blind review, issue
    34). Viewers (who never label) and adjudicators read them all."""
    rows = disagreements(workspace)
    if person is None or not may(person.role, "review") or may(person.role, "adjudicate"):
        return rows, 0
    mine = [d for d in rows if any(lab["annotator"] == person.name for lab in d["labels"])]
    return mine, len(rows) - len(mine)


def comment(workspace: Path, who: Person | str, judgment_id: str, text: str) -> dict:
    """Add a comment on a verdict (a remark for the team, never a label): ``{"id"}``. Needs the review
    permission (NotAllowed, nothing written); AuditRefused for an unknown verdict or an empty or
    over-long text."""
    if not isinstance(text, str) or not text.strip():
        raise AuditRefused("an empty comment cannot be kept: write some text")
    if len(text) > MAX_COMMENT_CHARS:
        raise AuditRefused(f"a comment of {len(text):,} characters cannot be kept: write at most "
                           f"{MAX_COMMENT_CHARS:,} characters")
    text = _note(text).strip()
    with store.write(workspace) as con:
        author, role = acting(con, who, "review")
        _verdict(con, judgment_id)
        row_id = adjudications_store.add_comment(con, judgment_id=judgment_id, author=author, text=text, role=role)
    return {"id": row_id}


def comments(workspace: Path, judgment_id: str, *, reader: str = "", revealed: bool = True) -> list[dict]:
    """A verdict's comments (``author, role, text, created_at``), oldest first. Not ``revealed``
    (blind, and ``reader`` has not decided the item yet: ``lsqa.audit.reveal``): only ``reader``'s own."""
    with store.connect(workspace) as con:
        rows = adjudications_store.comments_of(con, judgment_id)
    if revealed:
        return rows
    return [r for r in rows if reader and r["author"] == reader.strip()]
