"""What the Adjudicate page shows (issue 34): the verdicts whose people disagree, as a table linking to
each item on the Audit page, and one of them in full — question, references, answers, each person's
label with note and time, the adjudication so far, comments, and the labels an adjudicator may set.

Reads only (``lsqa.audit``); the page passes the signed-in person to ``audit.adjudicate`` and
``audit.comment``, which check what they may do.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

from lsqa import audit
from lsqa.audit.wording import describe
from lsqa.judging import kinds
from lsqa.team import Person
from lsqa.text.highlight import md_escape as md

AUDIT_PAGE = "/audit"


def audit_link(judgment_id: str) -> str:
    """The Audit page opened on one verdict (``?item=``, the parameter the Audit page reads)."""
    return f"{AUDIT_PAGE}?item={quote(judgment_id, safe='')}"


def _when(value) -> str:
    return value.strftime("%Y-%m-%d %H:%M") if value is not None else ""


def _words(d: dict, label: str | None) -> str:
    return describe(d["kind"], label, d["system_a"] or "", d["system_b"] or "")


def disagreements(workspace: Path, person: Person | None) -> tuple[list[dict], str]:
    """The disagreements ``person`` may read (``lsqa.audit.disagreements_seen_by``: not yet adjudicated
    first), and a line saying how many are kept from them ('' when none)."""
    rows, kept = audit.disagreements_seen_by(workspace, person)
    if not kept:
        return rows, ""
    return rows, (f"{kept} more disagreement{'' if kept == 1 else 's'} on verdicts you have not labelled yet "
                  f"{'is' if kept == 1 else 'are'} not shown: other people's labels would tell you theirs before "
                  "you decide. Label them on the Audit page first.")


def table(rows: list[dict]) -> list[dict]:
    """One row per disagreement: the labels in words, the final label if set, and the Audit link."""
    return [{"open": audit_link(d["judgment_id"]), "judge": d["judge"],
             "labels": " · ".join(f"{lab['annotator']}: {_words(d, lab['label'])}" for lab in d["labels"]),
             "final label": _words(d, d["adjudicated"]) if d["adjudicated"] is not None else "— not yet",
             "last label": _when(max(lab["created_at"] for lab in d["labels"]))} for d in rows]


def choice(d: dict) -> str:
    """How a disagreement is named in the picker."""
    state = "adjudicated" if d["adjudicated"] is not None else "open"
    people = ", ".join(lab["annotator"] for lab in d["labels"])
    return f"{d['judge']} · {people} · {state} · {d['judgment_id'][:10]}"


def detail(workspace: Path, d: dict) -> dict:
    """One disagreement in full: ``question``, ``title``, ``references`` (text, and which the judge
    used), ``answers`` (label, text), ``judge_label``, ``labels`` (who, label in words, note, when),
    ``adjudication`` (Markdown, people's text escaped; '' when none), ``comments``, ``options`` (system-term label → words) and ``link``."""
    it = audit.item(workspace, d["judgment_id"]) or {}
    pairwise = it.get("pairwise", False)
    answers = [{"label": f"Answer {a['position']} ({a['system']})" if pairwise else f"Answer ({a['system']})",
                "text": a["text"] or f"({a['status']})"} for a in it.get("answers", [])]
    refs = [{"label": f"Reference {r['n']}" + (" (the one this verdict used)" if r["n"] == it.get("reference_used")
                                                 else ""), "text": r["text"]} for r in it.get("references", [])]
    a = d["adjudication"]
    adjudication = "" if a is None else (f"Final label **{md(_words(d, a['label']))}** set by {md(a['adjudicator'])} "
                                         f"on {_when(a['created_at'])}" + (f": {md(a['note'])}" if a["note"] else ""))
    return {
        "judgment_id": d["judgment_id"], "link": audit_link(d["judgment_id"]),
        "question": it.get("question", ""), "title": it.get("title", ""), "references": refs, "answers": answers,
        "judge": d["judge"], "judge_label": _words(d, d["judge_label"]),
        "labels": [{"who": lab["annotator"], "label": _words(d, lab["label"]), "note": lab["note"],
                    "when": _when(lab["created_at"])} for lab in d["labels"]],
        "adjudication": adjudication,
        "comments": comment_rows(workspace, d["judgment_id"]),
        "options": {label: md(_words(d, label)) for label in kinds.get(d["kind"]).labels},  # radio options are Markdown
    }


def comment_rows(workspace: Path, judgment_id: str, *, reader: str = "", revealed: bool = True) -> list[dict]:
    """A verdict's comments as lines to show: ``who``, ``when``, ``text`` (``audit.comments``: only the
    reader's own while blind and undecided)."""
    return [{"who": c["author"], "when": _when(c["created_at"]), "text": c["text"]}
            for c in audit.comments(workspace, judgment_id, reader=reader, revealed=revealed)]
