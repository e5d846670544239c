"""The Audit page's desk: the decision bar and the item under it, one block of HTML, acted on through
the dashboard's HTTP front (``lsqa.dashboard.audit_front``) outside any Streamlit script run.

A decision by key used to be a Streamlit run of the page's fragment: the key's button sent the widget
states, the script ran the queue and the item again and Streamlit sent every element of the bar and
the item to the browser, which drew them again. That run cost the server more CPU than a one-button
Streamlit app spends on a whole key, and a team of eight saw the next item seconds late
(docs/decisions/audit-desk.md). Here a key is one HTTP request: the desk writes the decision with
the same library calls, finds the next item with the same queue (``audit_view.where_i_am``) and
answers with the desk's new HTML, which the page's keys.js puts in place of the old.

One tab, one desk: its queue settings (copied from the page's widgets on every page run,
``configure``), where the tab is in the queue (the trail, the open item, what was opened when) and the
buttons last drawn. A request names the desk by its key, a random capability the page drew into its
own HTML (a request with another key finds no desk), and presses a button the desk drew, by the
button's widget key: what the button does and on which item come from the desk, not the request, so
a request can do only what the person's screen offered, as the person the page signed in. A button
that writes acts only on the item drawn on the screen that sent it (``on_screen``), as the page's own
buttons did. The page draws the desk on its runs (``draw``) and acts on it for its own widgets (the
queue tables, the sidebar's settings) under the same lock as the requests.

Never imports streamlit: the page passes its values in, the front passes the request's.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from markdown_it import MarkdownIt

from lsqa import audit
from lsqa.audit.trail import Trail
from lsqa.dashboard import audit_view as view
from lsqa.dashboard import common
from lsqa.errors import LsqaError
from lsqa.judging import guidelines
from lsqa.team import Person
from lsqa.text.highlight import escape

# The page's strings are Markdown with their data escaped (md_escape) and a few tags of its own
# (the stamped position line): CommonMark with HTML on turns them into the desk's HTML.
_MARKDOWN = MarkdownIt("commonmark", {"html": True})
# The guidelines are a workspace's text, written by its admins: Markdown without raw HTML.
_GUIDELINES = MarkdownIt("commonmark", {"html": False})
MAX_DESKS = 500  # desks kept in this process (~0.1 MB each: the queue head, the item); the least used goes first
IDLE_S = 12 * 3600  # a desk unused this long is dropped (its page, if still open, asks for a reload)
CLEAR, KEEP = "clear", "keep"  # what the note field does after a press: cleared (used) or kept as typed


@dataclass
class Desk:
    """One tab's desk. ``state``: the mapping ``audit_view`` reads and writes (the queue settings, the
    trail, the item held, why and when each item was opened), as the page's session held it before."""

    key: str
    workspace: Path
    person: Person | None  # who acts (the library checks what they may do)
    annotator: str  # the name decisions are written under; '' offers no decision
    state: dict
    judge: str | None = None  # the sampled judge of a random / active queue (``view.sampled_judge``)
    lock: threading.RLock = field(default_factory=threading.RLock)
    bar: view.DecisionBar | None = None  # the buttons last drawn: what a request may press
    place: view.Place | None = None
    item: dict | None = None  # the item last drawn (None: the queue has ended)
    revealed: bool = True
    said: str = ""  # what the last press did, shown until the next press
    refused: str = ""  # why the last press wrote nothing, shown until the next press
    follow: bool = False  # a panel of the page follows the item (its fragment runs after each press)
    door: str = ""  # the address of the desk's HTTP door ('' when none serves it: the desk only shows)
    used: float = field(default_factory=time.monotonic)
    drawn: int = 0  # how many times the desk was drawn: each drawing differs, so the page always shows the newest

    @property
    def current_id(self) -> str | None:
        return self.item["id"] if self.item else None


_DESKS: dict[str, Desk] = {}
_DESKS_LOCK = threading.Lock()


def open_desk(workspace: Path, person: Person | None, annotator: str, state: dict) -> Desk:
    """A new desk for a tab (the page's first run): ``state`` is ``view.opening_state``'s."""
    desk = Desk(key=secrets.token_urlsafe(24), workspace=Path(workspace), person=person, annotator=annotator,
                state=dict(state))
    with _DESKS_LOCK:
        now = time.monotonic()
        for k in [k for k, d in _DESKS.items() if now - d.used > IDLE_S]:
            del _DESKS[k]
        while len(_DESKS) >= MAX_DESKS:
            del _DESKS[min(_DESKS, key=lambda k: _DESKS[k].used)]
        _DESKS[desk.key] = desk
    return desk


def desk_of(key: str | None) -> Desk | None:
    """The desk a page drew with ``key``, if this process still has it."""
    if not isinstance(key, str):
        return None
    with _DESKS_LOCK:
        desk = _DESKS.get(key)
    if desk is not None:
        desk.used = time.monotonic()
    return desk


def configure(desk: Desk, settings: Mapping, person: Person | None, annotator: str, judge: str | None, *,
              follow: bool = False, door: str = "") -> None:
    """The page's run: the queue settings its widgets hold now and who is signed in now (a sign-out
    ends every later press), copied into the desk; ``follow``: a panel of the page shows something of
    the item (the page runs its fragment after each press); ``door``: the desk's HTTP door."""
    with desk.lock:
        desk.state.update({k: settings[k] for k in view.SETTING_KEYS if k in settings})
        desk.person, desk.annotator, desk.judge = person, annotator, judge
        desk.follow, desk.door = follow, door


def filters(desk: Desk) -> audit.Filters:
    return view.filters_of(desk.state)


def trail(desk: Desk) -> Trail:
    return Trail(desk.state.setdefault("audit_trail", []), desk.state.get("audit_at", 0))


def _who(desk: Desk) -> Person | str | None:
    return (desk.person or desk.annotator) if desk.annotator else None


# ------------------------------------------------------------------------------- moving and acting

def move(desk: Desk, step: str, *args) -> None:
    """Along the trail: ``back``, ``forward`` or ``open`` an item (``lsqa.audit.trail``)."""
    with desk.lock:
        t = trail(desk)
        getattr(t, step)(*args)
        desk.state["audit_trail"], desk.state["audit_at"] = t.ids, t.at


def reset_trail(desk: Desk) -> None:
    """Other queue settings: a new trail, from the new queue's head."""
    with desk.lock:
        desk.state["audit_trail"], desk.state["audit_at"] = [], 0


def to_queue_head(desk: Desk) -> None:
    """A search typed (``view.to_queue_head``)."""
    with desk.lock:
        view.to_queue_head(desk.state)


def open_from_table(desk: Desk, row: dict) -> None:
    """A row picked in Up next: why it was in the queue is remembered, and it opens."""
    with desk.lock:
        desk.state.setdefault("audit_why", {})[row["id"]] = view.why_shown(row)
        move(desk, "open", row["id"])


@dataclass(frozen=True)
class Pressed:
    """The answer to a press: the desk's new HTML, the item now on it, what happens to the note field,
    and whether the page must run to follow (its queue ended: the next queues it offers are widgets)."""

    html: str
    item: str | None
    note: str
    ended: bool


def press(desk: Desk, button: str, on_screen: str | None, note: str = "") -> Pressed:
    """Press the desk's button ``button`` (a widget key of the bar last drawn) from a screen showing
    item ``on_screen``; the note typed goes with a decision, a skip or a flag. Then the desk drawn
    again. Nothing is written when the button was not drawn, is off, or writes on an item that was
    not the one on that screen. The workspace stays attached for the whole press: the write and the
    reads after it share one attachment (each attachment ends with a checkpoint)."""
    with desk.lock, common.kept_open(desk.workspace):
        note_after, desk.said, desk.refused = KEEP, "", ""
        spec = _drawn_button(desk, button)
        if spec is None or spec.get("disabled"):
            desk.refused = ("Nothing was written: that button is not on this item any more (the desk changed "
                            "since your screen was drawn).")
        elif view.writes(button) and on_screen != desk.current_id:
            desk.refused = view.stale_refusal(desk.current_id or "", desk.current_id, on_screen) or ""
        else:
            note_after = _act(desk, spec["on"], *spec.get("args", ()), note=note)
        html = draw(desk)
        return Pressed(html=html, item=desk.current_id, note=note_after, ended=desk.item is None)


def _drawn_button(desk: Desk, key: str) -> dict | None:
    bar = desk.bar
    if bar is None:
        return None
    return next((b for b in (*bar.nav, *bar.labels, *bar.flags) if b["key"] == key), None)


def _act(desk: Desk, on: str, *args, note: str) -> str:
    """One button's action, as the page's callbacks did it: what the note field does then."""
    ws, st = desk.workspace, desk.state
    who = _who(desk) if on not in ("move", "reason") else None
    try:
        if on == "move":
            move(desk, *args)
            return KEEP
        if on == "reason":
            st["audit_flag_reason"] = args[0]
            return KEEP
        if who is None:
            raise LsqaError("nobody is signed in to act here (sign in, or enter your name)")
        if on == "undo":
            desk.said, again = view.undo_mine_at(ws, who)
            if again:
                move(desk, "open", again)
            return KEEP
        if on == "flag":
            question_id, reference, _ = args
            desk.said = view.flag_reference(ws, who, question_id, reference,
                                            st.get("audit_flag_reason", view.FLAG_REASON_DEFAULT), note)
            return CLEAR
        judgment_id = args[0]
        if on == "skip":
            desk.said = view.skip_item(ws, who, judgment_id, args[1], note, tab=st.get(view.TAB_KEY))
        else:  # decide: confirm (no label) or a label in system terms
            _, kind, shown, label = (*args, None)[:4]
            sampled = (st.get("audit_sampling") or {}).get(judgment_id)
            opened_at = (st.get("audit_opened") or {}).get(judgment_id, 0)
            desk.said = view.save_decision(ws, who, judgment_id, kind, shown, label, note, sampled,
                                           opened_at=opened_at, tab=st.get(view.TAB_KEY))
        move(desk, "forward")
        return CLEAR
    except LsqaError as exc:
        refused = {"flag": "Not flagged", "undo": "Not undone", "skip": "Not skipped"}.get(on, "Not saved")
        desk.refused = f"{refused}: {exc}"
        if on == "decide":
            view.opened_again(st)  # decided already, elsewhere: opened again, it shows what I decided
        return KEEP


def keep_open(desk: Desk) -> None:
    """Renew the hold of the desk's open item (``view.keep_open``; the page calls it every
    ``audit.RENEW_EVERY_S``)."""
    with desk.lock:
        view.keep_open(desk.workspace, _who(desk), desk.state)


# ------------------------------------------------------------------------------------- drawing

def draw(desk: Desk) -> str:
    """Find the item to show now (``view.where_i_am``: the trail, else the queue's head, held for this
    tab) and the desk's HTML for it: the queue's line, what the last press did, the decision bar, the
    item. The verdicts' own parts of the next items of the queue are read with the item's, in one
    batch (``audit.item``'s ``ahead``: a review never changes them); its reviews are read each time."""
    with desk.lock, common.kept_open(desk.workspace):
        st = desk.state
        t = trail(desk)
        holder = _who(desk)
        opened_before = set(st.get("audit_opened") or ())
        place = view.where_i_am(desk.workspace, t, filters(desk), desk.annotator, st, desk.judge, holder)
        st["audit_trail"], st["audit_at"] = t.ids, t.at
        if st.get("audit_reason_for") != place.current_id:  # a flag reason chosen holds for its item only
            st["audit_flag_reason"], st["audit_reason_for"] = view.FLAG_REASON_DEFAULT, place.current_id
        it = audit.item(desk.workspace, place.current_id, ahead=[r["id"] for r in place.upcoming]) \
            if place.current_id else None
        blind = bool(st.get("audit_blind", False))
        revealed = audit.reveal(it, desk.annotator, blind) if it else True
        bar = view.decision_bar(it, revealed, desk.annotator, t, place.remaining, place.why,
                                st.get("audit_flag_reason", view.FLAG_REASON_DEFAULT))
        desk.place, desk.item, desk.revealed, desk.bar = place, it, revealed, bar
        desk.drawn += 1
        return _desk_html(desk, it, revealed, bar, place, just_opened=place.current_id not in opened_before)


def _md(text: str) -> str:
    return _MARKDOWN.renderInline(text)


def _button(spec: dict) -> str:
    """One bar button, as Streamlit drew it: its label, its key in a ``kbd`` (keys.js finds a key's
    button by it), off when ``disabled``; ``data-lsqa-key`` is the widget key a press names."""
    kind = "primary" if spec.get("type") == "primary" else "secondary"
    shortcut = spec.get("shortcut") or ""
    kbd = (f' <kbd aria-label="shortcut {escape(shortcut.lower())}">{escape(shortcut.upper())}</kbd>'
           if shortcut else "")
    title = f' title="{escape(spec["help"])}"' if spec.get("help") else ""
    off = " disabled" if spec.get("disabled") else ""
    writes = " data-lsqa-writes" if view.writes(spec["key"]) else ""
    return (f'<button type="button" class="lsqa-button lsqa-{kind}" data-lsqa-key="{escape(spec["key"])}"'
            f'{writes}{title}{off}><span class="lsqa-label">{escape(spec["label"])}</span>{kbd}</button>')


def _row(specs: list[dict], extra: str = "") -> str:
    return f'<div class="lsqa-row">{"".join(_button(s) for s in specs)}{extra}</div>'


NOTE_PLACEHOLDER = "note (E) · Enter or Esc: back to keys"


def _desk_html(desk: Desk, it: dict | None, revealed: bool, bar: view.DecisionBar, place: view.Place, *,
               just_opened: bool) -> str:
    parts = []
    assigned = desk.state.get("audit_queue") == audit.ASSIGNED
    mine = audit.my_progress(desk.workspace, desk.annotator) if assigned or it is None else None
    if assigned and mine["assigned"]:
        parts.append(f'<p class="lsqa-caption">{mine["done"]:,} of {mine["assigned"]:,} of my assignments done</p>')
    if desk.refused:
        parts.append(f'<div class="lsqa-refused" role="alert">{escape(desk.refused)}</div>')
    if desk.said:
        parts.append(f'<div class="lsqa-said" role="status">{escape(desk.said)}</div>')
    bar_parts = [_row(bar.nav, f'<span class="lsqa-position">{_md(bar.position)}</span>' if it else "")]
    if it is not None:
        if bar.mine:
            bar_parts.append(f'<p class="lsqa-caption">{_md(bar.mine)}</p>')
        bar_parts.append(_row(bar.labels))
        note = (f'<input class="lsqa-note-field" name="note" aria-label="Note (optional, saved with the next action)" '
                f'maxlength="{audit.MAX_NOTE_CHARS}" placeholder="{escape(NOTE_PLACEHOLDER)}" autocomplete="off">')
        bar_parts.append(_row(bar.flags, note))
        if bar.blind_note:
            bar_parts.append(f'<p class="lsqa-caption">{escape(bar.blind_note)}</p>')
    parts.append(f'<div class="lsqa-bar">{"".join(bar_parts)}</div>')
    if it is None:
        parts.append(f'<div class="lsqa-ended" role="status">'
                     f'{_MARKDOWN.render(view.empty_queue_note(filters(desk), desk.state, mine, place.held, desk.judge))}'
                     f'</div>')
    else:
        parts.append(_item_html(desk, it, revealed, place, just_opened))
    return (f'<div class="lsqa-desk st-key-lsqa_keys" data-lsqa-desk="{escape(desk.key)}" '
            f'data-lsqa-door="{escape(desk.door)}" data-lsqa-drawn="{desk.drawn}" '
            f'data-lsqa-follow="{int(desk.follow)}">{"".join(parts)}</div>')


def _item_html(desk: Desk, it: dict, revealed: bool, place: view.Place, just_opened: bool) -> str:
    parts = []
    # Opened by this drawing: nobody can have reviewed it since.
    late = [] if just_opened else view.late_reviewers(desk.workspace, it["id"], desk.annotator,
                                                      place.opened.get(it["id"], 0))
    if late:
        parts.append(f'<div class="lsqa-warning" role="alert">{_md(view.late_warning(late))}</div>')
    if place.other_tab:
        parts.append(f'<div class="lsqa-warning" role="alert">{escape(view.OTHER_TAB_NOTE)}</div>')
    shown = view.item_view(it, revealed, desk.annotator)
    guide = guidelines.for_kind(desk.workspace, it["kind"])
    parts.append(f'<details class="lsqa-guidelines" data-lsqa-keep="guidelines"><summary>'
                 f'{escape(view.guidelines_label(it["kind"], guide))}</summary>{_GUIDELINES.render(guide["text"])}</details>')
    parts.append(f'<p class="lsqa-caption">{_md(shown.caption + " · " + view.evidence_chain_link(it))}</p>')
    parts += [shown.question_html, shown.answers_html]
    if shown.verdict:
        parts.append(f"<p>{_md(shown.verdict)}</p>")
    parts += [f'<p class="lsqa-caption">{_md(line)}</p>' for line in shown.human_labels]
    if shown.unusable:
        parts.append(f'<div class="lsqa-refused" role="alert">{escape(shown.unusable)}</div>')
    if shown.evidence:
        parts.append("<p><b>Evidence</b></p>")
        for ev in shown.evidence:
            parts.append(f'<p class="lsqa-caption">{_md(ev["caption"])}</p>')
            if ev["found"] and ev["folded"]:  # the whole passage unfolds in place of the few sentences
                parts.append(f'<div class="lsqa-card lsqa-evidence"><div class="lsqa-folded">{ev["html"]}</div>'
                             f'<details><summary>Whole passage</summary>{ev["html_full"]}</details></div>')
            elif ev["found"]:
                parts.append(f'<div class="lsqa-card lsqa-evidence">{ev["html"]}</div>')
            else:
                parts.append(ev["html"])
    return "".join(parts)


# Static CSS for the desk's own elements (the page adds it once, beside ``view.STYLE``).
STYLE = ("<style>.lsqa-desk .lsqa-bar{position:sticky;top:3.75rem;z-index:990;background:#fff;"
         "border-bottom:1px solid #ddd;padding:.4rem 0 .5rem;margin-bottom:.75rem}"
         ".lsqa-desk .lsqa-row{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center;margin:.25rem 0}"
         ".lsqa-desk .lsqa-button{font:inherit;font-size:.9rem;padding:.25rem .75rem;border-radius:.5rem;"
         "border:1px solid rgba(49,51,63,.2);background:#fff;color:rgb(49,51,63);cursor:pointer}"
         ".lsqa-desk .lsqa-primary{background:#ff4b4b;border-color:#ff4b4b;color:#fff}"
         ".lsqa-desk .lsqa-button:disabled{opacity:.45;cursor:not-allowed}"
         ".lsqa-desk kbd{font-size:.75rem;margin-left:.4rem;padding:0 .3rem;border:1px solid rgba(49,51,63,.3);"
         "border-radius:.25rem}"
         ".lsqa-desk .lsqa-caption{font-size:.875rem;color:rgba(49,51,63,.6);margin:.25rem 0}"
         ".lsqa-desk .lsqa-note-field{flex:1;min-width:16rem;font:inherit;padding:.25rem .5rem;"
         "border:1px solid rgba(49,51,63,.2);border-radius:.5rem}"
         ".lsqa-desk .lsqa-refused{background:#ffe3e3;color:#7a1010;padding:.5rem .75rem;border-radius:.5rem;margin:.25rem 0}"
         ".lsqa-desk .lsqa-warning{background:#fff3bf;color:#5c4400;padding:.5rem .75rem;border-radius:.5rem;margin:.25rem 0}"
         ".lsqa-desk .lsqa-said{background:#e6fcf5;color:#0b5e42;padding:.5rem .75rem;border-radius:.5rem;margin:.25rem 0}"
         ".lsqa-desk .lsqa-ended{background:#e7f5ff;color:#1c3d5a;padding:.5rem .75rem;border-radius:.5rem}"
         ".lsqa-desk summary{cursor:pointer}"
         ".lsqa-evidence:has(> details[open]) > .lsqa-folded{display:none}</style>")
