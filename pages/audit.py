"""Audit: go through judge verdicts by hand, most in need of a human first, from the keyboard.

Keys: J next · K previous · V confirm · A/B/T/X (side by side, in the positions shown) or Y/N
(yes/no) to give a label · S skip, D unsure (recorded, not a label) · W/M/Q flag reason (wrong /
ambiguous / unanswerable, for this item) · F / G flag reference 1 / 2 · U undo my last action (its
item opens again) · E write a note (the note field takes the focus) · ? the keys. Enter or Esc leaves a field and gives the keys back; keys pause
while a widget has the focus, and a key writes only on the item on screen when it was pressed.
Every action is saved at once (append-only, with the annotator's name and the time). The decision
bar and the item are the tab's desk (``lsqa.dashboard.audit_desk``): drawn here on the page's runs,
pressed through the dashboard's HTTP door without one. Layout and wiring only: what is shown is made
in ``lsqa.dashboard.audit_view`` and ``audit_desk``.
"""

import functools

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager

if PagesManager.uses_pages_directory:  # opened before app.py ran (pages/ auto-discovery): see app.py
    PagesManager.uses_pages_directory = False
    st.rerun()

from lsqa.dashboard import (  # noqa: E402
    LsqaError,
    audit_desk,
    audit_front,
    common,
    sign_in,  # noqa: E402
    ui,  # noqa: E402
)
from lsqa.dashboard import audit_actions as audit  # noqa: E402
from lsqa.dashboard import audit_view as view  # noqa: E402
from lsqa.dashboard.audit_actions import guidelines_for_kind  # noqa: E402

workspace = common.current_workspace()
ss = st.session_state
presence = sign_in.presence_of(ss, workspace, st.get_option("server.address"))
who = presence.person  # passed to every write: the library checks who may do it (lsqa.team)
annotator = presence.name if presence.may("review") else ""  # my queue, my recent reviews; '' offers no decision keys

st.html(ui.keys_script(), unsafe_allow_javascript=True)
st.markdown(view.STYLE + audit_desk.STYLE, unsafe_allow_html=True)
st.title("Audit judge verdicts")


def _act(refused: str, act, *args, **kwargs) -> bool:
    """A decision, a flag or an undo, saved at once: its message, or why it was refused (then False)."""
    try:
        ss.audit_msg = act(workspace, who, *args, **kwargs)
    except LsqaError as exc:
        ss.audit_refused = f"{refused}: {exc}"
        return False
    return True


# ------------------------------------------------------------------------------------ filters


@functools.cache  # once per run (the page's code runs anew each time), and only when needed
def choices() -> dict:
    """What the queue's filters offer: judges, systems, books, labels, statuses."""
    return audit.choices(workspace)


if audit_desk.desk_of(ss.get("audit_desk")) is None:  # this tab's first run (or its desk was dropped, idle)
    opening = view.opening_state({p: st.query_params.get_all(p) for p in view.LINK_PARAMETERS}, choices,
                                 lambda jid: audit.item(workspace, jid) is not None,
                                 lambda: audit.my_progress(workspace, annotator)["open"],
                                 lambda tab: audit.trail_of(workspace, annotator, tab),
                                 lambda tab: audit.open_in(workspace, annotator, tab))
    if "audit_desk" not in ss:  # the link's settings; a desk dropped keeps the session's
        ss.update({k: v for k, v in opening.items() if k in view.SETTING_KEYS or k in ("audit_msg", view.TAB_KEY)})
    ss.audit_desk = audit_desk.open_desk(workspace, who, annotator, {**opening, view.TAB_KEY: ss[view.TAB_KEY]}).key
if st.query_params.get("tab") != ss[view.TAB_KEY]:
    st.query_params["tab"] = ss[view.TAB_KEY]  # a reload is this tab again: it finds its open item
view.restore_settings(ss)


def _reset_trail():
    if _desk() is not None:  # a desk dropped (idle for hours) starts anew on this run anyway
        audit_desk.reset_trail(_desk())


def _lazy_expander(label: str, key: str, where=st):
    """An expander whose content is built only while it is open (opening it reruns the page); it
    stays open from item to item. Built closed, the item's tables and the prompt (up to 20,000
    characters) were sent and drawn on every J, and the sidebar's queue settings on every new tab."""
    box = where.expander(label, key=key, on_change="rerun")
    return box if box.open else None


def _clear_questions():
    ss.audit_questions = []
    _reset_trail()


def _to_queue_head():
    if _desk() is not None:
        audit_desk.to_queue_head(_desk())


def search_sidebar():
    """Text search over the questions and the answers judged (always shown: people search often);
    a link's question filter (the errata's links) with a way out of it."""
    st.sidebar.text_input("Search questions and answers", key="audit_search", max_chars=audit.MAX_SEARCH_CHARS,
                          on_change=_to_queue_head, placeholder="words, then Enter",
                          help="Every word must occur in the question or in an answer the verdict judged "
                               "(any case). Searches the queue chosen below: choose Show: all to search every verdict. "
                               "Enter searches and Esc leaves the field; either gives the keys back.")
    if ss.get("audit_questions"):
        st.sidebar.button("Show every question", key="audit_clear_questions", on_click=_clear_questions,
                          help="This queue holds only the question a link opened it on.")


def queue_settings_sidebar():
    """Filters, which queue, blind mode: set once per session, so folded (and not built) until opened."""
    summary = st.sidebar.empty()  # above the panel, drawn once the settings are as last used
    box = _lazy_expander("Queue settings", "audit_x_queue", st.sidebar)
    if box is None:
        view.settings_as_last_used(ss)
    summary.caption(view.queue_summary(ss))
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


# ---------------------------------------------------------------------------------- the desk
def _desk():
    """This tab's desk (``lsqa.dashboard.audit_desk``): callbacks run before the page's code, so they
    find it through the session."""
    return audit_desk.desk_of(ss.get("audit_desk"))


def _move(step: str, *args):
    """Along the trail: ``back``, ``forward`` or ``open`` an item (``lsqa.audit.trail``)."""
    if _desk() is not None:
        audit_desk.move(_desk(), step, *args)


def _switch_queue(settings: dict):
    """Open the next queue an ended one offers (``view.next_queues``)."""
    for k, v in settings.items():
        ss[k] = ss[f"_{k}"] = v
    _reset_trail()
    ss.audit_switched = True  # the sidebar and the filters are the whole page's: see _review()


def edit_guidelines(kind: str):
    """An admin's panel to edit the workspace's guidelines for this item's judge kind (a new version);
    the desk shows them to everybody."""
    if not presence.may("guidelines"):
        return
    box = _lazy_expander("Edit the guidelines of this item's judge kind", "audit_x_guidelines_edit")
    if box is None:
        return
    g = guidelines_for_kind(workspace, kind)
    with box, st.form(f"audit_guidelines_{kind}", border=False):
        text = st.text_area(f"Edit the guidelines for {kind} verdicts in this workspace", g["text"], height=220,
                            key=f"audit_guidelines_text_{kind}")
        if st.form_submit_button("Save guidelines"):
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
        audit_desk.open_from_table(_desk(), here.upcoming[picked])
        st.rerun()


# The panels under the desk that show something of its item, or counts a decision changes: while one
# is open, the desk's keys.js runs the fragment after each press, so that it follows.
FOLLOWING_PANELS = ("audit_x_guidelines_edit", "audit_x_others", "audit_x_history", "audit_x_raw", "audit_x_comments",
                    "audit_x_recent", "audit_x_next", "audit_x_progress", "audit_x_team")


@st.fragment
def review():
    """The desk (decision bar and item) and the panels under it. A fragment: the desk's sync (after a
    press, when the queue ended or a panel follows the item) and the panels rerun this part only."""
    try:
        _review()
    except LsqaError as exc:  # a fragment's rerun does not pass through app.py's guard either
        st.error(str(exc))


def _review():
    with common.kept_open(workspace):  # a fragment's rerun does not pass through app.py's
        if ss.pop("audit_switched", False) and ss.get("audit_run") == "keys":
            st.rerun(scope="app")  # another queue chosen in this fragment: the page's filters follow
        desk = _desk()
        audit_desk.configure(desk, ss, who, annotator, sampled_judge(),
                             follow=any(ss.get(k) for k in FOLLOWING_PANELS),
                             door=audit_front.DESK_PATH if audit_front.serving else "")
        if "audit_msg" in ss:
            st.toast(ss.pop("audit_msg"))
        if "audit_refused" in ss:
            st.error(ss.pop("audit_refused"))
        if not audit_front.serving and annotator:
            st.info(view.NO_DOOR_NOTE)
        st.html(audit_desk.draw(desk))
        st.button("sync", key="audit_sync")  # pressed by keys.js (hidden): this fragment runs and follows the desk
        global here
        here, it = desk.place, desk.item
        if it is None:  # the queue has ended: the next queues are the page's settings
            mine = audit.my_progress(workspace, annotator)
            for q in view.next_queues(ss, mine):
                st.button(q["label"], key=q["key"], on_click=_switch_queue, args=(q["settings"],))
        else:
            edit_guidelines(it["kind"])
            show_details(it, desk.revealed)
            show_comments(it, desk.revealed)
        my_recent_reviews()
        up_next()
        sidebar_progress()


def sidebar_progress():
    """The sidebar's progress table of every annotator, when open: drawn by this fragment, after the
    desk, so that it follows the desk's presses (``FOLLOWING_PANELS``)."""
    if progress_box is not None:
        progress_box.dataframe(audit.progress(workspace), hide_index=True, width="stretch")


@st.fragment(run_every=audit.RENEW_EVERY_S)
def keep_open():
    """While this tab is open, its item stays held for me (``lsqa.audit.open_items``): renewed every
    ``audit.RENEW_EVERY_S`` seconds; a closed tab frees it within ``audit.LEASE_S``."""
    if annotator and _desk() is not None:
        with common.kept_open(workspace):
            audit_desk.keep_open(_desk())


# The sidebar's last panel, filled by the fragment after the desk (sidebar_progress).
progress_box = _lazy_expander("Progress of every annotator", "audit_x_progress", st.sidebar)
ss.audit_run = "page"
review()
ss.audit_run = "keys"
keep_open()
if presence.may("oversee"):  # admins: the lead's view (the library refuses anybody else)
    from lsqa.dashboard import team_progress_view  # noqa: E402

    team_box = _lazy_expander(team_progress_view.TITLE, "audit_x_team", st.sidebar)
    if team_box is not None:
        team_box.dataframe(team_progress_view.rows(workspace, who), hide_index=True, width="stretch")
        team_box.caption(team_progress_view.HELP)
