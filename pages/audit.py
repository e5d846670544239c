"""Audit: go through judge verdicts by hand, most in need of a human first, from the keyboard.

Keys: J next · K previous · V confirm · A/B/T/X (side by side, in the positions shown) or Y/N
(yes/no) to give a label · S skip, D unsure (recorded, not a label) · W/M/Q flag reason (wrong /
ambiguous / unanswerable, for this item) · F / G flag reference 1 / 2 · U undo my last action (its
item opens again) · E write a note (the note field takes the focus) · ? the keys. Enter or Esc leaves a field and gives the keys back; keys pause
while a widget has the focus, and a key writes only on the item on screen when it was pressed.
Every action is saved at once (append-only, with the annotator's name and the time). Layout and
wiring only: what is shown is made in ``lsqa.dashboard.audit_view``.
"""

import functools

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager

if PagesManager.uses_pages_directory:  # opened before app.py ran (pages/ auto-discovery): see app.py
    PagesManager.uses_pages_directory = False
    st.rerun()

from lsqa.dashboard import (  # noqa: E402
    LsqaError,
    common,
    sign_in,  # noqa: E402
    ui,  # noqa: E402
)
from lsqa.dashboard import audit_actions as audit  # noqa: E402
from lsqa.dashboard import audit_view as view  # noqa: E402
from lsqa.dashboard.audit_actions import Trail, guidelines_for_kind  # noqa: E402

workspace = common.current_workspace()
ss = st.session_state
presence = sign_in.presence_of(ss, workspace, st.get_option("server.address"))
who = presence.person  # passed to every write: the library checks who may do it (lsqa.team)
annotator = presence.name if presence.may("review") else ""  # my queue, my recent reviews; '' offers no decision keys

st.html(ui.keys_script(), unsafe_allow_javascript=True)
st.markdown(view.STYLE, unsafe_allow_html=True)
st.title("Audit judge verdicts")


def _act(refused: str, act, *args, **kwargs) -> bool:
    """A decision, a flag or an undo, saved at once: its message, or why it was refused (then False)."""
    try:
        ss.audit_msg = act(workspace, who, *args, **kwargs)
    except LsqaError as exc:
        ss.audit_refused = f"{refused}: {exc}"
        return False
    ss.audit_decided = True  # see review(): the sidebar's progress table counts it
    return True


# ------------------------------------------------------------------------------------ filters


@functools.cache  # once per run (the page's code runs anew each time), and only when needed
def choices() -> dict:
    """What the queue's filters offer: judges, systems, books, labels, statuses."""
    return audit.choices(workspace)


if "audit_trail" not in ss:
    ss.update(view.opening_state({p: st.query_params.get_all(p) for p in view.LINK_PARAMETERS}, choices,
                                 lambda jid: audit.item(workspace, jid) is not None,
                                 lambda: audit.my_progress(workspace, annotator)["open"],
                                 lambda tab: audit.trail_of(workspace, annotator, tab),
                                 lambda tab: audit.open_in(workspace, annotator, tab)))
if st.query_params.get("tab") != ss[view.TAB_KEY]:
    st.query_params["tab"] = ss[view.TAB_KEY]  # a reload is this tab again: it finds its open item
view.restore_settings(ss)


def _reset_trail():
    ss.audit_trail, ss.audit_at = [], 0


def _lazy_expander(label: str, key: str, where=st):
    """An expander whose content is built only while it is open (opening it reruns the page); it
    stays open from item to item. Built closed, the item's tables and the prompt (up to 20,000
    characters) were sent and drawn on every J, and the sidebar's queue settings on every new tab."""
    box = where.expander(label, key=key, on_change="rerun")
    return box if box.open else None


def _clear_questions():
    ss.audit_questions = []
    _reset_trail()


def search_sidebar():
    """Text search over the questions and the answers judged (always shown: people search often);
    a link's question filter (the errata's links) with a way out of it."""
    st.sidebar.text_input("Search questions and answers", key="audit_search", max_chars=audit.MAX_SEARCH_CHARS,
                          on_change=view.to_queue_head, args=(ss,), placeholder="words; Enter searches, Esc gives the keys back",
                          help="Every word must occur in the question or in an answer the verdict judged "
                               "(any case). Searches the queue chosen below: choose Show: all to search every verdict.")
    if ss.get("audit_questions"):
        st.sidebar.button("Show every question", key="audit_clear_questions", on_click=_clear_questions,
                          help="This queue holds only the question a link opened it on.")


def queue_settings_sidebar():
    """Filters, which queue, blind mode: set once per session, so folded (and not built) until opened."""
    global summary
    summary = st.sidebar.empty()  # filled by the item's fragment (sidebar_counts): a decision changes its count
    box = _lazy_expander("Queue settings", "audit_x_queue", st.sidebar)
    if box is None:
        view.settings_as_last_used(ss)
    if box is None:
        return
    with box:
        for w in view.filter_widgets(choices(), audit.reviewers(workspace)):
            st.multiselect(w["label"], w["options"], format_func=w["format_func"], key=w["key"], on_change=_reset_trail)
        st.radio("Show", list(audit.REVIEWED_FILTERS), format_func=audit.REVIEWED_FILTERS.get, key="audit_reviewed",
                 on_change=_reset_trail)
        st.toggle("Blind (no judge label, no other annotator's label, no system names until I decide)",
                  key="audit_blind")
        sampled_queue_choice()


def sampled_queue_choice():
    """Priority queue, or a random / active audit queue for one judge: their reviews
    carry the inclusion probability, so they also correct the Leaderboard's estimates."""
    st.selectbox("Audit queue", list(view.QUEUE_CHOICES), format_func=view.QUEUE_CHOICES.get, key="audit_queue",
                 on_change=_reset_trail,
                 help="priority: most in need of a human first. My assignments: the verdicts assigned to me "
                      "that I have not reviewed yet. random / active: a sample with known "
                      "probabilities, for corrected estimates; review in order, without skipping.")
    if ss.audit_queue in ("priority", audit.ASSIGNED):
        return
    st.caption(view.sampling_caption(sampled_judge()))
    st.select_slider("Audit rate", [0.05, 0.1, 0.2, 0.3, 0.5], key="audit_rate", on_change=_reset_trail)
    if ss.audit_queue == "random":
        st.radio("Stratify by", ["none", "system", "pair"], key="audit_stratify", horizontal=True,
                 on_change=_reset_trail)


def sampled_judge() -> str | None:
    return view.sampled_judge(ss, choices)


def overlap_sidebar():
    """The workspace's double-annotation setting: the share of verdicts every annotator reviews."""
    share = audit.overlap(workspace)
    st.sidebar.caption(view.overlap_caption(share))
    box = _lazy_expander("Double annotation", "audit_x_overlap", st.sidebar)
    if box is None:
        return
    with box, st.form("audit_overlap_form", border=False):
        new = st.slider("Overlap: share of verdicts every annotator reviews", 0, 100, view.percent(share),
                        step=5, format="%d%%", key="audit_overlap_pct",
                        help="The rest is reviewed once: it leaves everybody's 'not reviewed by me' queue "
                             "as soon as someone reviewed it. Saved in the workspace.")
        if st.form_submit_button("Save overlap", disabled=not presence.may("settings")):
            _act("Not saved", view.save_overlap, new)
            st.rerun()


def assign_sidebar():
    """Admins: give annotators their own verdicts of a judge, with overlap (``lsqa assign``'s one call)."""
    if not presence.may("assign"):
        return
    box = _lazy_expander("Assign items", "audit_x_assign", st.sidebar)
    if box is None:
        return
    people = view.assignable(workspace)
    # Plain widgets and a callback, not a form: the panel is folded and rarely used, so its reruns
    # cost nothing while items are reviewed, and a callback acts before the page runs again.
    with box:
        st.selectbox("Judge", choices()["judges"], key="audit_assign_judge")
        if people is None:
            st.text_input("Annotators (comma-separated)", key="audit_assign_names")
        else:
            st.multiselect("Annotators", people, key="audit_assign_names")
        st.number_input("Reviews per verdict", 1, 20, 2, key="audit_assign_per_item")
        st.number_input("Verdicts", 1, 100_000, 50, key="audit_assign_count")
        st.radio("Choose", list(audit.ASSIGN_QUEUES), key="audit_assign_queue", horizontal=True,
                 help="priority: the audit queue's head, verdicts assigned before left out. random: a "
                      "simple random sample of the judge's items; their reviews count for corrected estimates.")
        st.number_input("Seed", 0, 2**31 - 1, 0, key="audit_assign_seed")
        st.button("Assign", key="audit_assign_go", on_click=_assign)


def _assign():
    _act("Not assigned", view.assign_items, *(ss.get(f"audit_assign_{k}") for k in
                                              ("judge", "names", "per_item", "count", "queue", "seed")))


search_sidebar()
queue_settings_sidebar()
assign_sidebar()
overlap_sidebar()
view.remember_settings(ss)
filters = view.filters_of(ss)
blind = bool(ss.get("audit_blind", False))

if not annotator:
    st.warning(sign_in.cannot_act_note(presence, "review", "review and flag"))


# ----------------------------------------------------------------------- where I am (the trail)
def where_i_am():
    """The trail of items opened this session, the queue after it and the item to show now. Run
    inside the fragment below: a review changes the queue. The names are the page's own (global):
    the decision bar, the tables and the key callbacks read them, on a whole run and a fragment's alike."""
    global trail, here
    trail = Trail(ss.audit_trail, ss.audit_at)
    here = view.where_i_am(workspace, trail, filters, annotator, ss, sampled_judge(), who if annotator else None)


# ------------------------------------------------------------------------------------ actions
def _move(step: str, *args):
    """Along the trail: ``back``, ``forward`` or ``open`` an item (``lsqa.audit.trail``)."""
    t = Trail(ss.audit_trail, ss.audit_at)
    getattr(t, step)(*args)
    ss.audit_at = t.at


def _decide(judgment_id: str, kind: str, shown: str, label: str | None = None):
    """Confirm the judge's label (no ``label``) or give mine (in system terms). Saved by the run this
    key starts (``_save_decision``), inside the attachment that run keeps anyway: one of the
    callback's own would be detached (a checkpoint, after a write) and attached again in between,
    a cost paid by every decision (docs/benchmarks-log/2026-12-02-0425-browser-ninth-pass.md)."""
    ss.audit_pending = (judgment_id, kind, shown, label, ss.get("audit_note", ""), here.sampled.get(judgment_id))


def _save_decision():
    """The decision of this run's key, if any: saved, then the next item, with a message in the terms
    shown. Refused (a note the store cannot keep, a workspace that cannot be written), the item
    stays, with the reason and the note as typed."""
    pending = ss.pop("audit_pending", None)
    if pending is None:
        return
    stale = view.stale_refusal(pending[0], ss.get("audit_shown"), ss.get(view.ON_SCREEN_KEY))
    if stale:  # pressed on an item no longer on screen (the last run moved on): nothing is written
        ss.audit_refused = stale
        return
    opened_at = ss.get("audit_opened", {}).get(pending[0], 0)  # before where_i_am() in a whole run
    if _act("Not saved", view.save_decision, *pending, opened_at=opened_at, tab=ss[view.TAB_KEY]):
        ss.audit_note = ""
        ss.audit_shown = None  # decided: a key pressed on this item from now on writes nothing
        _move("forward")
    else:
        view.opened_again(ss)  # refused (decided already, elsewhere): shown again with what I decided


def _on_screen(judgment_id: str) -> bool:
    """Whether the item a key or click was pressed on is the one on screen; if not, the page says so."""
    stale = view.stale_refusal(judgment_id, ss.get("audit_shown"), ss.get(view.ON_SCREEN_KEY))
    if stale:
        ss.audit_refused = stale
    return stale is None


def _flag(question_id: str, reference: str, judgment_id: str):
    if not _on_screen(judgment_id):
        return
    if _act("Not flagged", view.flag_reference, question_id, reference, ss.get("audit_flag_reason", view.FLAG_REASON_DEFAULT),
            ss.get("audit_note", "")):
        ss.audit_note = ""


def _reason(reason: str):
    ss.audit_flag_reason = reason


def _skip(judgment_id: str, reason: str):
    """Pass the item over (skip, unsure): recorded, not a label; the next item."""
    if _on_screen(judgment_id) and _act("Not skipped", view.skip_item, judgment_id, reason, ss.get("audit_note", ""),
                                        tab=ss[view.TAB_KEY]):
        ss.audit_note = ""
        ss.audit_shown = None
        _move("forward")


def _undo():
    """Withdraw my last action; a review undone opens its item again (to decide it anew)."""
    try:
        ss.audit_msg, again = view.undo_mine_at(workspace, who)
    except LsqaError as exc:
        ss.audit_refused = f"Not undone: {exc}"
        return
    ss.audit_decided = True
    if again:
        _move("open", again)


# ------------------------------------------------------------------------------------- the item
def decision_bar(it: dict | None, revealed: bool):
    """Navigation, the labels, the flags and the note, in one bar that stays at the top of the view.
    Each row is one horizontal container, not columns: a column is an element of its own, drawn again
    on every key (docs/BENCHMARKS.md, ninth pass)."""
    bar = view.decision_bar(it, revealed, annotator, trail, here.remaining, here.why,
                            ss.get("audit_flag_reason", view.FLAG_REASON_DEFAULT))
    with st.container(key="lsqa_keys"):
        nav = st.container(horizontal=True, vertical_alignment="center")
        _buttons(nav, bar.nav)
        if it is None:  # the queue has ended: no decision button, and the library refuses any decision from here
            mine = audit.my_progress(workspace, annotator)
            st.info(view.empty_queue_note(filters, ss, mine, here.held, sampled_judge()))
            for q in view.next_queues(ss, mine):
                st.button(q["label"], key=q["key"], on_click=_switch_queue, args=(q["settings"],))
            return
        nav.markdown(bar.position, unsafe_allow_html=True)  # stamped with the item its buttons write on (keys.js)
        if bar.mine:
            st.caption(bar.mine)
        _buttons(st.container(horizontal=True), bar.labels)
        flags = st.container(horizontal=True, vertical_alignment="center")
        _buttons(flags, bar.flags)
        flags.text_input("Note (optional, saved with the next action)", key="audit_note", max_chars=audit.MAX_NOTE_CHARS,
                         label_visibility="collapsed", placeholder="note (E; optional; Enter or Esc gives the keys back)")
        if bar.blind_note:
            st.caption(bar.blind_note)


def _switch_queue(settings: dict):
    """Open the next queue an ended one offers (``view.next_queues``)."""
    for k, v in settings.items():
        ss[k] = ss[f"_{k}"] = v
    _reset_trail()
    ss.audit_switched = True  # the sidebar and the filters are the whole page's: see _review()


def _buttons(where, specs: list[dict]):
    """One button per spec (``view.decision_bar``), its ``on`` the callback it calls."""
    callbacks = {"move": _move, "undo": _undo, "decide": _decide, "reason": _reason, "flag": _flag, "skip": _skip}
    for spec in specs:
        where.button(**{k: v for k, v in spec.items() if k != "on"}, on_click=callbacks[spec["on"]])


def show_item(it: dict, revealed: bool):
    late = view.late_reviewers(workspace, it["id"], annotator, here.opened.get(it["id"], 0))
    if late:
        st.warning(view.late_warning(late))
    if here.other_tab:
        st.warning(view.OTHER_TAB_NOTE)
    # One element each, not columns of elements: every element is drawn again on each key (lsqa.dashboard.item_cards).
    shown = view.item_view(it, revealed, annotator)
    st.caption(f"{shown.caption} · {view.evidence_chain_link(it)}")  # one element: each is redrawn per key
    st.markdown(shown.question_html, unsafe_allow_html=True)
    st.markdown(shown.answers_html, unsafe_allow_html=True)
    if shown.verdict:
        st.markdown(shown.verdict)
    for line in shown.human_labels:
        st.caption(line)
    if shown.unusable:
        st.error(shown.unusable)
    show_evidence(it["id"], shown.evidence)


def drawn_here(item_id: str):
    """The hidden field the browser sends back with every key and click (``view.ON_SCREEN_KEY``): drawn
    after the question and answers, it names their item once the browser has drawn them. A click sent
    from a screen still showing the item before carries that item, and writes nothing (``_on_screen``)."""
    ss[view.ON_SCREEN_KEY] = item_id
    st.text_input("Item on screen", key=view.ON_SCREEN_KEY, label_visibility="collapsed")


def show_evidence(item_id: str, evidence: list[dict]):
    """Quotes in their passage, folded to a few sentences (unfold for the whole passage)."""
    if not evidence:
        return
    st.markdown("**Evidence**")
    for n, ev in enumerate(evidence):
        st.caption(ev["caption"])
        if ev["found"]:
            with st.container(border=True, key=f"audit_evidence_{n}"):
                unfold = ev["folded"] and st.toggle("Whole passage", key=f"audit_unfold_{item_id}_{n}")
                st.markdown(ev["html_full"] if unfold else ev["html"], unsafe_allow_html=True)
        else:
            st.markdown(ev["html"], unsafe_allow_html=True)


def show_guidelines(kind: str):
    """The workspace's guidelines for this judge kind; an admin may edit them (a new version)."""
    g = guidelines_for_kind(workspace, kind)
    box = _lazy_expander(view.guidelines_label(kind, g), f"audit_x_guidelines_{kind}")
    if box is None:
        return
    with box:
        st.markdown(g["text"])
        with st.form(f"audit_guidelines_{kind}", border=False):
            text = st.text_area("Edit the guidelines for this workspace", g["text"], height=220,
                                key=f"audit_guidelines_text_{kind}")
            if st.form_submit_button("Save guidelines", disabled=not presence.may("guidelines")):
                _act("Not saved", view.save_guidelines, kind, text)
                st.rerun()


def show_raw(it: dict):
    st.code(it["raw"] or "(empty)", language=None, wrap_lines=True)
    prompt = view.prompt_shown(workspace, it["id"])
    if prompt:
        st.code(prompt, language=None, wrap_lines=True)


def show_details(it: dict, revealed: bool):
    panels = (("Other verdicts on these answers", "audit_x_others",
               lambda: st.dataframe(it["other_verdicts"], hide_index=True, width="stretch")),
              ("Review history of this verdict", "audit_x_history",
               lambda: st.dataframe(it["history"], hide_index=True, width="stretch")),
              ("Raw completion and prompt", "audit_x_raw", lambda: show_raw(it)))
    for label, key, show in panels:
        box = _lazy_expander(label, key)
        if box is None:
            continue
        with box:
            if revealed:
                show()
            else:
                st.caption("Hidden while blind, until you decide.")


def show_comments(it: dict, revealed: bool):
    """Comments on this verdict (author, time), folded: while blind and undecided only my own."""
    key = f"audit_comment_{it['id']}"

    def add():  # a callback: it runs before the page, so the new comment is drawn at once
        said = lambda ws, me, jid, text: (audit.comment(ws, me, jid, text), "Comment added")[1]  # noqa: E731
        if _act("Comment not saved", said, it["id"], ss.get(key, "")):
            ss[key] = ""

    def draw():
        for c in audit.comments(workspace, it["id"], reader=annotator, revealed=revealed):
            st.markdown(f"- {view.md(c['author'])} ({c['created_at']:%Y-%m-%d %H:%M}): {view.md(c['text'])}")
        if annotator:
            st.text_area("Comment", key=key, max_chars=audit.MAX_COMMENT_CHARS)
            st.button("Add comment", key=f"{key}_add", on_click=add)
    _folded("Comments", "audit_x_comments", draw)


def _folded(label: str, key: str, draw) -> None:
    """``draw()`` inside a panel built only while open (``_lazy_expander``)."""
    box = _lazy_expander(label, key)
    if box is not None:
        with box:
            draw()


def _row_picked(rows: list[dict], key: str, **options) -> int | None:
    """A table of ``rows``, one of which a person may pick to open it: the index of the row picked, if any.

    A pick is used once: the table after it is a new widget (a count of picks in its key), with
    nothing selected. Keyed by the place on the trail instead, a later place could meet a key whose
    old selection was still kept, open that row again, and so on: the page reran without end, and a
    key pressed meanwhile waited for a quiet page that never came."""
    n = ss.get("audit_picks", 0)
    picked = st.dataframe(rows, hide_index=True, width="stretch", on_select="rerun", selection_mode="single-row",
                          key=f"{key}_{n}", **options)
    sel = picked.selection.rows if picked else []
    if sel:
        ss.audit_picks = n + 1
    return sel[0] if sel else None


def my_recent_reviews():
    """My latest decisions: pick one to open it again and change it (a new review row). Folded until
    opened: built open, the table changed with every decision and drawing it again made a decision
    → next item slower than J (docs/benchmarks-log/2026-12-01-1610-browser-sixth-pass.md)."""
    _folded("My recent reviews (pick one to open it again and change it)", "audit_x_recent", _recent_table)


def _recent_table():
    mine = audit.recent(workspace, annotator)
    if not mine:
        st.caption(view.no_recent_note(annotator))
        return
    picked = _row_picked(view.recent_table(mine), "audit_recent")
    if picked is not None:
        _move("open", mine[picked]["id"])
        st.rerun()


def up_next():
    """The queue after this item. Folded until opened, as My recent reviews: its table, drawn again on
    every key, made a keypress slower on screen (docs/benchmarks-log/2026-12-01-1955-browser-seventh-pass.md).
    Its label stays the same from item to item: a new label would be a new panel, folded again."""
    _folded("Up next (pick one to open it)", "audit_x_next", _up_next_table)


def _up_next_table():
    st.caption(view.up_next_caption(here.remaining, here.upcoming))
    picked = _row_picked(view.up_next_table(here.upcoming, blind), "audit_table", height=300)
    if picked is not None:
        row = here.upcoming[picked]
        here.why[row["id"]] = view.why_shown(row)
        _move("open", row["id"])
        st.rerun()


@st.fragment
def review():
    """The trail, the decision bar, the item and the two tables. A fragment: J, K and the decision keys
    rerun this part only, not the navigation and the sidebar (keypress -> next item)."""
    try:
        _review()
    except LsqaError as exc:  # a fragment's rerun does not pass through app.py's guard either
        st.error(str(exc))


def _review():
    with common.kept_open(workspace):  # a fragment's rerun does not pass through app.py's
        if ss.pop("audit_switched", False) and ss.get("audit_run") == "keys":
            st.rerun(scope="app")  # another queue chosen in this fragment: the page's filters follow
        _save_decision()
        where_i_am()
        if ss.get("audit_reason_for") != here.current_id:  # a flag reason chosen holds for its item only
            ss.audit_flag_reason, ss.audit_reason_for = view.FLAG_REASON_DEFAULT, here.current_id
        if "audit_msg" in ss:
            st.toast(ss.pop("audit_msg"))
        if "audit_refused" in ss:
            st.error(ss.pop("audit_refused"))
        it = audit.item(workspace, here.current_id) if here.current_id else None
        revealed = audit.reveal(it, annotator, blind) if it else True
        ss.audit_shown = None  # until the item is on screen, a key writes nothing
        decision_bar(it, revealed)
        if it is not None:
            show_guidelines(it["kind"])
            show_item(it, revealed)
            ss.audit_shown = it["id"]  # its question and answers are drawn: a key pressed from now on writes on it
            drawn_here(it["id"])
            show_details(it, revealed)
            show_comments(it, revealed)
        my_recent_reviews()
        up_next()
        if here.upcoming and sampled_judge() is None and ss.get("audit_run") == "keys":
            # Read ahead the item J or a decision opens next: kept, it is drawn without a read then
            # (a review of this item leaves it kept), while this read runs as I look at this one.
            view.read_ahead(workspace, annotator, ss, here, filters)
        sidebar_counts()


def sidebar_counts():
    """The queue's line (my assignments done) and the open progress table, in the sidebar's slots:
    drawn by this fragment, after the item, so that a decision made by key counts in them without a
    run of the whole page. Read again on a whole run and after my own action; otherwise (J, K) the
    counts read with the last ones are drawn again (a fragment's run clears what it drew before)."""
    again = ss.pop("audit_decided", False) or ss.get("audit_run") == "page"
    if again or "audit_mine" not in ss:
        ss.audit_mine = audit.my_progress(workspace, annotator)
    summary.caption(view.queue_summary(ss, ss.audit_mine))
    if progress_box is not None:
        if again or "audit_progress_rows" not in ss:
            ss.audit_progress_rows = audit.progress(workspace)
        progress_box.dataframe(ss.audit_progress_rows, hide_index=True, width="stretch")


@st.fragment(run_every=audit.RENEW_EVERY_S)
def keep_open():
    """While this tab is open, its item stays held for me (``lsqa.audit.open_items``): renewed every
    ``audit.RENEW_EVERY_S`` seconds; a closed tab frees it within ``audit.LEASE_S``."""
    if annotator:
        with common.kept_open(workspace):
            view.keep_open(workspace, who, ss)


keep_open()
# The sidebar's last panel, filled by the fragment after the item (sidebar_counts; J -> the next item first).
progress_box = _lazy_expander("Progress of every annotator", "audit_x_progress", st.sidebar)
# The read ahead for the next key (the next item) is left to the fragment's own reruns: a new tab or
# a page switch is done sooner without it.
ss.audit_run = "page"
review()
ss.audit_run = "keys"
if presence.may("oversee"):  # admins: the lead's view (the library refuses anybody else)
    from lsqa.dashboard import team_progress_view  # noqa: E402

    team_box = _lazy_expander(team_progress_view.TITLE, "audit_x_team", st.sidebar)
    if team_box is not None:
        team_box.dataframe(team_progress_view.rows(workspace, who), hide_index=True, width="stretch")
        team_box.caption(team_progress_view.HELP)
