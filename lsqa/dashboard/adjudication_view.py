"""What the Adjudicate page shows: the verdicts whose people disagree, gone through one at a time as a
queue — the question, both answers side by side in the order the judge was shown them (paper §3.2;
a yes/no verdict's answer under its references), every person's label and note, the final label
and who set or replaced it — and the keys and buttons that settle each one.

The page settles the open disagreements one after the other: setting a final label moves to the
next one not adjudicated yet (``lsqa.audit.next_open``), and when none is left the page says so and
offers nothing that writes. Replacing a final label that stands is asked first and named to the
library (``audit.adjudicate(..., replaces=...)``). The keys are the Audit page's (its ``keys.js``,
its decision-bar container and its stale-key guard, ``audit_view.stale_refusal``): a key writes only
on the disagreement on screen when it was pressed.

Reads only (``lsqa.audit``); the page passes the signed-in person to ``audit.adjudicate`` and
``audit.comment``, which check what they may do.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import MutableMapping
from dataclasses import dataclass, field
from pathlib import Path

from lsqa import audit
from lsqa.audit.wording import SHORTCUTS, describe, label_options, shown_text, to_shown_label, to_system_label
from lsqa.dashboard import audit_view, item_cards
from lsqa.dashboard.links import audit_link
from lsqa.team import Person
from lsqa.text.highlight import md_escape as md

# The Audit page's look (cards side by side, the decision bar kept in view) and its hidden field that
# names the item the browser had drawn when a key was pressed (``audit_view.ON_SCREEN_KEY``).
STYLE = audit_view.STYLE
ON_SCREEN_KEY = audit_view.ON_SCREEN_KEY
write_key = audit_view.write_key
stale_refusal = audit_view.stale_refusal


def _when(value) -> str:
    return value.strftime("%Y-%m-%d %H:%M") if value is not None else ""


def _words(d: dict, label: str | None) -> str:
    return describe(d["kind"], label, d["system_a"] or "", d["system_b"] or "")


def said(d: dict, label: str | None) -> str:
    """A stored label (system terms) as the page says it: in the positions shown, as its key's button
    says it ("B is better"), with what it means for the systems on side-by-side verdicts."""
    if label is None:
        return "no label"
    shown = shown_text(d["kind"], to_shown_label(d["kind"], label, d["shown_order"]))
    return f"{shown} ({_words(d, label)})" if d["system_b"] else shown


def disagreements(workspace: Path, person: Person | None) -> tuple[list[dict], str]:
    """The disagreements ``person`` may read (``lsqa.audit.disagreements_seen_by``), in the page's
    order (``in_order``), and a line saying how many are kept from them ('' when none)."""
    rows, kept = audit.disagreements_seen_by(workspace, person)
    rows = in_order(rows)
    if not kept:
        return rows, ""
    return rows, (f"{kept} more disagreement{'' if kept == 1 else 's'} on verdicts you have not labelled yet "
                  f"{'is' if kept == 1 else 'are'} not shown: other people's labels would tell you theirs before "
                  "you decide. Label them on the Audit page first.")


def in_order(rows: list[dict]) -> list[dict]:
    """The page's order: by verdict id, so that settling one never moves another (the library lists
    the open ones first)."""
    return sorted(rows, key=lambda d: d["judgment_id"])


# ------------------------------------------------------------------------------- where I am


@dataclass
class Place:
    """The disagreement on screen (``current``; None when every one is settled and none was opened)
    among ``rows`` (the page's order), its 1-based ``index``, and how many are still open. ``held``:
    open ones passed over because another adjudicator has them open; ``held_by``: who else has the
    one on screen open (it was picked, not served)."""

    rows: list[dict]
    current: str | None
    index: int
    n_open: int
    held: int = 0
    held_by: str = ""

    @property
    def ids(self) -> list[str]:
        return [d["judgment_id"] for d in self.rows]

    @property
    def row(self) -> dict | None:
        return self.rows[self.index - 1] if self.current else None


def place(rows: list[dict], current: str | None, settled: str | None = None) -> Place:
    """Which disagreement to show: the one just ``settled`` hands over to the next open one
    (``audit.next_open``: the one place the next is chosen); else ``current`` while it is still a
    disagreement; else the first open one; None when all are settled."""
    ids = [d["judgment_id"] for d in rows]
    if settled is not None:
        current = audit.next_open(rows, settled)
    elif current not in ids:
        current = audit.next_open(rows)
    return Place(rows=rows, current=current, index=ids.index(current) + 1 if current else 0,
                 n_open=sum(d["adjudicated"] is None for d in rows))


TAB_KEY = "adj_tab"  # this page session's tab id for its hold (lsqa.audit.open_items); never an Audit page tab's
OPEN_KEY = "adj_open"  # {"id", "renewed"}: the disagreement this tab holds


def held_place(workspace: Path, who: Person | None, may_adjudicate: bool, state: MutableMapping, rows: list[dict],
               current: str | None, settled: str | None = None) -> Place:
    """``place``, with holds for an adjudicator (``audit.open_item(..., queue=audit.ADJUDICATION)``): the next
    open disagreement is the first, in the page's order after the one just ``settled`` (round the
    end), that no other adjudicator has open, and it is held for this tab while it is on screen; one
    opened by J, K or the picker is held too, with who else has it open. Without the right to
    adjudicate, nothing is held (``place``)."""
    here = place(rows, current, settled)
    if who is None or not may_adjudicate:
        return here
    tab = state.setdefault(TAB_KEY, "adj-" + secrets.token_hex(8))
    kept = state.get(OPEN_KEY) or {}
    ids = here.ids
    if settled is not None or current not in ids:  # served: the next open one nobody else has open
        candidates = audit.open_after(rows, settled)
        if not candidates:
            return here  # every one settled: nothing to hold
        got = audit.open_item(workspace, who, tab, candidates=candidates, queue=audit.ADJUDICATION)
        state[OPEN_KEY] = {"id": got.id, "renewed": time.monotonic()} if got.id else None
        return Place(rows=rows, current=got.id, index=ids.index(got.id) + 1 if got.id else 0, n_open=here.n_open,
                     held=len(got.held))
    if kept.get("id") != here.current or time.monotonic() - kept.get("renewed", 0) >= audit.RENEW_EVERY_S:
        got = audit.open_item(workspace, who, tab, here.current, queue=audit.ADJUDICATION)
        state[OPEN_KEY] = {"id": here.current, "renewed": time.monotonic(), "held_by": ", ".join(sorted(set(got.held.values())))}
    here.held_by = (state.get(OPEN_KEY) or {}).get("held_by", "")
    return here


def step(ids: list[str], current: str | None, by: int) -> str | None:
    """The disagreement ``by`` places from ``current`` in the page's order, round the end (J / K)."""
    if not ids:
        return None
    if current not in ids:
        return ids[0]
    return ids[(ids.index(current) + by) % len(ids)]


def all_settled(n: int, held: int = 0) -> str:
    """What the page says when no disagreement is left open for me (Markdown): ``held`` open ones are
    open for another adjudicator now."""
    if held:
        return (f"The {held:,} disagreement{'s' if held != 1 else ''} left {'are' if held != 1 else 'is'} open for "
                "another adjudicator right now (held while open, for a few minutes): press J to look at one anyway.")
    return (f"**All {n:,} disagreement{'' if n == 1 else 's'} {'is' if n == 1 else 'are'} settled.** "
            "Nothing is left to adjudicate. Open one below to read it again or to replace its final label.")


# ------------------------------------------------------------------------------- the keys


@dataclass
class Bar:
    """The decision bar, each button as its keyword arguments with ``on``, the page's callback:
    ``move`` (J / K), ``decide`` (a label key: sets the final label, or asks before replacing one),
    ``replace`` (yes, replace), ``keep`` (no)."""

    nav: list[dict]
    position: str = ""  # stamped with the disagreement its buttons write on (item_cards.stamped)
    labels: list[dict] = field(default_factory=list)
    ask: str = ""  # the question before a replacement (Markdown), '' when none is asked
    confirm: list[dict] = field(default_factory=list)
    note: str = ""  # a line under the keys: why there are none, or what a key does here


def decision_bar(here: Place, may_adjudicate: bool, asking: dict | None, cannot: str = "") -> Bar:
    """The keys for the disagreement on screen: J / K move (round the end); A/B/T/X (side by side, in
    the positions shown) or Y/N (yes/no) set the final label and move to the next open one. On a
    settled one the same keys ask first: the label pressed again (or *Replace*) replaces the final
    label, J, K or *Keep* leave it. ``asking``: the replacement asked (``{"judgment_id", "label",
    "replaces"}``). Without the right to adjudicate: J / K only, and ``cannot`` says why."""
    d = here.row
    jid = d["judgment_id"]
    n = len(here.rows)
    nav = [{"label": "Previous", "shortcut": SHORTCUTS["previous"], "on": "move", "args": (-1,), "disabled": n < 2,
            "key": "adj_prev"},
           {"label": "Next", "shortcut": SHORTCUTS["next"], "on": "move", "args": (1,), "disabled": n < 2,
            "key": "adj_next"}]
    standing = d["adjudicated"]
    state = "open" if standing is None else f"settled: **{md(said(d, standing))}**"
    position = item_cards.stamped(f"**Disagreement {here.index:,} of {n:,}** · {here.n_open:,} open · {state}", jid)
    if not may_adjudicate:
        return Bar(nav=nav, position=position, note=cannot)
    labels = []
    for opt in label_options(d["kind"]):
        label = to_system_label(d["kind"], opt["shown"], d["shown_order"])
        labels.append({"label": opt["text"], "shortcut": opt["shortcut"], "on": "decide", "args": (jid, label),
                       "type": "primary" if label == standing else "secondary",
                       "key": write_key(f"adj_opt_{opt['key']}"),
                       "help": "The final label now" if label == standing else None})
    if asking and asking["judgment_id"] == jid:
        key = next(o["shortcut"] for o in label_options(d["kind"])
                   if to_system_label(d["kind"], o["shown"], d["shown_order"]) == asking["label"])
        a = d["adjudication"]
        ask = (f"Replace the final label **{md(said(d, asking['replaces']))}** (set by {md(a['adjudicator'])} on "
               f"{_when(a['created_at'])}) with **{md(said(d, asking['label']))}**? Press {key} again or *Replace*; "
               "J, K or *Keep* leave it as it is.")
        confirm = [{"label": "Replace", "type": "primary", "on": "replace",
                    "args": (jid, asking["label"], asking["replaces"]), "key": write_key("adj_replace")},
                   {"label": "Keep", "on": "keep", "args": (), "key": "adj_keep"}]
        return Bar(nav=nav, position=position, labels=labels, ask=ask, confirm=confirm)
    note = ("A label key sets the final label and moves to the next open disagreement." if standing is None else
            "Settled: a label key asks before it replaces the final label.")
    return Bar(nav=nav, position=position, labels=labels, note=note)


def label_key(d: dict, label: str, asked: dict | None) -> tuple[str, dict | None]:
    """What a label key (``label``, system terms) pressed on ``d`` does, given the replacement
    ``asked`` before it: ``("write", None)`` on an open disagreement (set at once); on a settled one
    ``("ask", replacement)`` the first time, ``("write", replacement)`` when the same replacement was
    asked, ``("same", None)`` for the label that stands. A replacement is ``{"judgment_id", "label",
    "replaces"}``."""
    if d["adjudicated"] is None:
        return "write", None
    if label == d["adjudicated"]:
        return "same", None
    ask = {"judgment_id": d["judgment_id"], "label": label, "replaces": d["adjudicated"]}
    return ("write" if ask == asked else "ask"), ask


def set_final(workspace: Path, who: Person | str, d: dict, label: str, note: str, replaces: str | None = None) -> str:
    """Set (or, naming the label it ``replaces``, replace) ``d``'s final label; what the page says then.
    Raises what ``audit.adjudicate`` refuses (nothing written)."""
    done = audit.adjudicate(workspace, who, d["judgment_id"], label, note, replaces=replaces)
    if done["replaced"] is None:
        return f"Final label set: {said(d, label)}"
    r = done["replaced"]
    return f"Final label replaced: {said(d, r['label'])} (set by {r['adjudicator']}) → {said(d, label)}"


# ------------------------------------------------------------------------------- the item


@dataclass
class Detail:
    """One disagreement as the page draws it: each field one element."""

    caption: str  # book, judge, link to the item on the Audit page (Markdown)
    question_html: str  # the question and its references, stamped with the verdict
    answers_html: str  # the answers side by side in the order shown, stamped with the verdict
    judge: str  # the judge's label (Markdown)
    labels: list[str]  # every person's label and note (Markdown)
    final: str  # the final label that stands, who set it and why ('' when none)
    history: list[str]  # every final label set, oldest first, replacements said so ([] when one or none)
    comments: list[dict]


def detail(workspace: Path, d: dict) -> Detail:
    """One disagreement in full: the question card with its references (the one the verdict used
    marked), the answer cards (A and B in the order the judge was shown them; a yes/no verdict's one
    answer), the judge's label, each person's label with their note and time, the final label and
    its history (``audit.adjudication_history``), the comments."""
    jid = d["judgment_id"]
    question = item_cards.question_card(d["question"], d["references"], used=d["reference"] or None, item_id=jid)
    answers = [((f"Answer {a['position']} · " if a["position"] else "Answer · ") + (a["system"] or ""),
                a["text"] if a["text"] is not None else "[missing]") for a in d["answers"]]
    heading = "Answers, in the order the judge saw them" if d["system_b"] else "Answer"
    labels = [f"**{md(lab['annotator'])}**: {md(said(d, lab['label']))} ({_when(lab['created_at'])})"
              + (f" — {md(lab['note'])}" if lab["note"] else "") for lab in d["labels"]]
    history = audit.adjudication_history(workspace, jid) if d["n_adjudications"] else []
    final = ""
    if history:
        last = history[-1]
        final = (f"Final label **{md(said(d, last['label']))}** set by {md(last['adjudicator'])} on "
                 f"{_when(last['created_at'])}" + (f": {md(last['note'])}" if last["note"] else ""))
    lines = [_history_line(d, h) for h in history] if len(history) > 1 else []
    return Detail(caption=f"{md(d['title'])} · judge **{md(d['judge'])}** ({md(d['kind'])}) · "
                          f"[open on the Audit page]({audit_link(jid)})",
                  question_html=question, answers_html=item_cards.answer_cards(heading, answers, item_id=jid),
                  judge=f"Judge {md(d['judge'])}: **{md(said(d, d['judge_label']))}**",
                  labels=labels, final=final, history=lines, comments=comment_rows(workspace, jid))


def _history_line(d: dict, h: dict) -> str:
    r = h["replaces"]
    what = (f"set **{md(said(d, h['label']))}**" if r is None else
            f"replaced **{md(said(d, r['label']))}** (set by {md(r['adjudicator'])}) with **{md(said(d, h['label']))}**")
    return f"{_when(h['created_at'])} · {md(h['adjudicator'])} {what}" + (f" — {md(h['note'])}" if h["note"] else "")


# ------------------------------------------------------------------------------- the list


def _answer_cell(d: dict, n: int) -> str:
    """The list's n-th answer column: answer A / B as shown; a yes/no verdict's answer, then its reference."""
    if d["system_b"]:
        a = d["answers"][n]
        return f"{a['system']}: {a['text'] or '—'}"
    if n == 0:
        return f"{d['answers'][0]['system']}: {d['answers'][0]['text'] or '—'}"
    refs = [r for r in d["references"] if r["text"] and (not d["reference"] or r["n"] == d["reference"])]
    return " | ".join(f"reference {r['n']}: {r['text']}" for r in refs) or "—"


def table(rows: list[dict]) -> list[dict]:
    """One row per disagreement: the question, both answers (A and B as shown; a yes/no verdict's
    answer and its reference), every person's label and note, the final label if set, the Audit link."""
    return [{"question": d["question"], "answer A (or the answer)": _answer_cell(d, 0),
             "answer B (or the reference)": _answer_cell(d, 1),
             "labels and notes": " · ".join(f"{lab['annotator']}: {said(d, lab['label'])}"
                                            + (f" ({lab['note']})" if lab["note"] else "") for lab in d["labels"]),
             "final label": said(d, d["adjudicated"]) if d["adjudicated"] is not None else "— open",
             "judge": d["judge"], "open": audit_link(d["judgment_id"])} for d in rows]


def choices(rows: list[dict]) -> dict[str, str]:
    """How each disagreement is named in the picker: its place, open or settled, the question, the
    answers' systems, the people. Each name is unique (its place leads it): Streamlit tells a picked
    option by its name, and two verdicts on one question by the same people would be one otherwise."""
    out = {}
    for n, d in enumerate(rows, 1):
        question = d["question"] if len(d["question"]) <= 70 else d["question"][:69] + "…"
        systems = " vs ".join(a["system"] or "?" for a in d["answers"])
        out[d["judgment_id"]] = (f"{n}. {'settled' if d['adjudicated'] is not None else 'open'} · {question} · "
                                 f"{systems} · {', '.join(lab['annotator'] for lab in d['labels'])} · {d['judge']}")
    return out


def comment_rows(workspace: Path, judgment_id: str, *, reader: str = "", revealed: bool = True) -> list[dict]:
    """A verdict's comments as lines to show: ``who``, ``when``, ``text`` (``audit.comments``: only the
    reader's own while blind and undecided)."""
    return [{"who": c["author"], "when": _when(c["created_at"]), "text": c["text"]}
            for c in audit.comments(workspace, judgment_id, reader=reader, revealed=revealed)]
