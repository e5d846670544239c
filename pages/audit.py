"""Audit: go through judge verdicts by hand, most in need of a human first, from the keyboard.

Keys: J next · K previous · V confirm · A/B/T/X (side by side, in the positions shown) or Y/N
(yes/no) to give a label · W/M/Q flag reason (wrong / ambiguous / unanswerable) · F / G flag
reference 1 / 2 · U undo my last action. Enter or Esc leaves a field and gives the keys back.
Every action is saved at once (append-only, with the annotator's name and the time).
"""

import functools

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager

if PagesManager.uses_pages_directory:  # opened before app.py ran (pages/ auto-discovery): see app.py
    PagesManager.uses_pages_directory = False
    st.rerun()

from lsqa import audit  # noqa: E402
from lsqa.judging import guidelines  # noqa: E402
from lsqa.text import highlight  # noqa: E402
from lsqa.dashboard import item_cards  # noqa: E402
from lsqa.dashboard import page_data  # noqa: E402
from lsqa.stats import sampling  # noqa: E402
from lsqa.dashboard import ui  # noqa: E402
from lsqa.audit.trail import Trail  # noqa: E402
from lsqa.errors import LsqaError  # noqa: E402

workspace = page_data.current_workspace()
md = highlight.md_escape
annotator = st.session_state.get("annotator", "").strip()
K = audit.SHORTCUTS
ss = st.session_state

st.html(ui.keys_script(), unsafe_allow_javascript=True)
# Static CSS only: the decision bar stays in view while the item scrolls under it.
st.markdown("<style>.lsqa-text{line-height:1.5} .lsqa-text mark{background:#ffe066;padding:0 2px}"
            ".lsqa-card{border:1px solid rgba(49,51,63,.2);border-radius:.5rem;padding:1rem 1rem .25rem;margin-bottom:1rem}"
            ".lsqa-grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(16rem,1fr));gap:0 1rem}"
            ".lsqa-note{font-size:.875rem;color:rgba(49,51,63,.6)}"
            "[data-testid=stLayoutWrapper]:has(> .st-key-lsqa_keys){position:sticky;top:3.75rem;z-index:990;"
            "background-color:#fff;border-bottom:1px solid #ddd;padding:.4rem 0 .5rem}</style>",
            unsafe_allow_html=True)
st.title("Audit judge verdicts")

# ------------------------------------------------------------------------------------ filters


@functools.cache  # once per run (the page's code runs anew each time), and only when needed
def choices() -> dict:
    """What the queue's filters offer: judges, systems, books, labels, statuses."""
    return audit.choices(workspace)


if "audit_trail" not in ss:
    ss.audit_trail, ss.audit_at = [], 0
    # A link can open the queue pre-filtered: ?judge=<name>&system=<name>&reviewed=all&blind=1
    ss.audit_judges = [j for j in st.query_params.get_all("judge") if j in choices()["judges"]]
    ss.audit_systems = [s for s in st.query_params.get_all("system") if s in choices()["systems"]]
    ss.audit_reviewed = st.query_params.get("reviewed", "not_mine")
    if ss.audit_reviewed not in audit.REVIEWED_FILTERS:
        ss.audit_reviewed = "not_mine"
    ss.audit_blind = st.query_params.get("blind") == "1"
    if st.query_params.get("item"):  # a link to one verdict: ?item=<judgment id>
        ss.audit_trail.append(st.query_params["item"])


# Streamlit forgets a widget's value when its page is left, or when the folded panel that holds it
# is closed; keep the queue settings in plain keys too.
FILTER_KEYS = ("audit_judges", "audit_systems", "audit_books", "audit_labels", "audit_statuses", "audit_reviewed",
               "audit_blind", "audit_queue", "audit_rate", "audit_stratify")
for _k in FILTER_KEYS:
    if _k not in ss and f"_{_k}" in ss:
        ss[_k] = ss[f"_{_k}"]
for _k, _default in (("audit_judges", []), ("audit_systems", []), ("audit_books", []), ("audit_labels", []),
                     ("audit_statuses", []), ("audit_blind", False), ("audit_queue", "priority"), ("audit_rate", 0.1),
                     ("audit_stratify", "none")):
    ss.setdefault(_k, _default)


def _reset_trail():
    ss.audit_trail, ss.audit_at = [], 0


def _lazy_expander(label: str, key: str, where=st):
    """An expander whose content is built only while it is open (opening it reruns the page); it
    stays open from item to item. Built closed, the item's tables and the prompt (up to 20,000
    characters) were sent and drawn on every J, and the sidebar's queue settings on every new tab
    (issue 12)."""
    box = where.expander(label, key=key, on_change="rerun")
    return box if box.open else None


def queue_summary() -> str:
    """The queue settings in one line, shown above their folded panel."""
    nouns = {"audit_judges": ("judge", "judges"), "audit_systems": ("system", "systems"), "audit_books": ("book", "books"),
             "audit_labels": ("label", "labels"), "audit_statuses": ("status", "statuses")}
    parts = [f"{n} {one if n == 1 else many}" for key, (one, many) in nouns.items() if (n := len(ss.get(key) or ()))]
    parts.append(audit.REVIEWED_FILTERS[ss.audit_reviewed].split(" (")[0])
    if ss.audit_queue != "priority":
        parts.append(f"{ss.audit_queue} sample")
    if ss.get("audit_blind"):
        parts.append("blind")
    return "Queue: " + " · ".join(parts)


def queue_settings_sidebar():
    """Filters, which queue, blind mode: set once per session, so folded (and not built) until opened."""
    summary = st.sidebar.empty()
    box = _lazy_expander("Queue settings", "audit_x_queue", st.sidebar)
    if box is None:
        # A widget left out of a run falls back to the value code last gave its key, not to the one
        # chosen in it: give the keys the values last used (kept in the plain keys) while folded.
        for k in FILTER_KEYS:
            if f"_{k}" in ss:
                ss[k] = ss[f"_{k}"]
    summary.caption(md(queue_summary()))
    if box is None:
        return
    with box:
        offered = choices()
        titles = {d["id"]: d["title"] for d in offered["documents"]}
        st.multiselect("Judge", offered["judges"], key="audit_judges", on_change=_reset_trail)
        st.multiselect("System", offered["systems"], key="audit_systems", on_change=_reset_trail)
        st.multiselect("Book", list(titles), format_func=titles.get, key="audit_books", on_change=_reset_trail)
        st.multiselect("Judge's label", offered["labels"], key="audit_labels", on_change=_reset_trail)
        st.multiselect("Status", offered["statuses"], key="audit_statuses", on_change=_reset_trail)
        st.radio("Show", list(audit.REVIEWED_FILTERS), format_func=audit.REVIEWED_FILTERS.get, key="audit_reviewed",
                 on_change=_reset_trail)
        st.toggle("Blind (no judge label, no other annotator's label, no system names until I decide)",
                  key="audit_blind")
        sampled_queue_choice()


def sampled_queue_choice():
    """Priority queue, or a random / active audit queue for one judge (issue 13): their reviews
    carry the inclusion probability, so they also correct the Leaderboard's estimates."""
    st.selectbox("Audit queue", ["priority", "random", "active"], key="audit_queue", on_change=_reset_trail,
                 help="priority: most in need of a human first. random / active: a sample with known "
                      "probabilities, for corrected estimates; review in order, without skipping.")
    if ss.audit_queue == "priority":
        return
    st.caption(f"Sampling the verdicts of **{md(sampled_judge())}** (the first judge chosen above).")
    st.select_slider("Audit rate", [0.05, 0.1, 0.2, 0.3, 0.5], key="audit_rate", on_change=_reset_trail)
    if ss.audit_queue == "random":
        st.radio("Stratify by", ["none", "system", "pair"], key="audit_stratify", horizontal=True,
                 on_change=_reset_trail)


def sampled_judge() -> str | None:
    """The judge whose verdicts a random or active queue samples; None for the priority queue."""
    if ss.audit_queue == "priority":
        return None
    return (ss.audit_judges or choices()["judges"] or [""])[0]


def overlap_sidebar():
    """The workspace's double-annotation setting: the share of verdicts every annotator reviews."""
    share = audit.overlap(workspace)
    st.sidebar.caption(f"Overlap {share:.0%}: the share of verdicts every annotator reviews.")
    box = _lazy_expander("Double annotation", "audit_x_overlap", st.sidebar)
    if box is None:
        return
    with box, st.form("audit_overlap_form", border=False):
        new = st.slider("Overlap: share of verdicts every annotator reviews", 0, 100, int(round(share * 100)),
                        step=5, format="%d%%", key="audit_overlap_pct",
                        help="The rest is reviewed once: it leaves everybody's 'not reviewed by me' queue "
                             "as soon as someone reviewed it. Saved in the workspace.")
        if st.form_submit_button("Save overlap", disabled=not annotator):
            audit.set_overlap(workspace, new / 100, annotator)
            ss.audit_msg = f"Overlap set to {new}% for this workspace"
            st.rerun()


queue_settings_sidebar()
overlap_sidebar()
for _k in FILTER_KEYS:
    ss[f"_{_k}"] = ss[_k]
filters = audit.Filters(judges=tuple(ss.audit_judges), systems=tuple(ss.audit_systems),
                        documents=tuple(ss.get("audit_books", [])), labels=tuple(ss.get("audit_labels", [])),
                        statuses=tuple(ss.get("audit_statuses", [])), reviewed=ss.audit_reviewed)
blind = bool(ss.get("audit_blind", False))

if not annotator:
    st.warning("Enter your name under **Annotator** in the sidebar to review and flag (it is saved with every "
               "action). Until then the decision keys (V, A/B/T/X, Y/N, F/G, U) do nothing.")


# ----------------------------------------------------------------------- where I am (the trail)
def where_i_am():
    """The trail of items opened this session, the queue after it and the item to show now. Run
    inside the fragment below: a review changes the queue. The names are the page's own (global):
    the decision bar, the tables and the key callbacks read them, on a whole run and a fragment's alike."""
    global trail, q, sampled, current_id, remaining, upcoming, why, opened
    trail = Trail(ss.audit_trail, ss.audit_at)
    if sampled_judge() is None:
        q = audit.queue(workspace, filters, annotator, exclude=trail.ids)
    else:  # the sample in its order; the items opened this session left out here
        q = sampling.page_queue(workspace, sampled_judge(), ss.audit_queue, rate=ss.audit_rate,
                                stratify=ss.get("audit_stratify", "none"), page=0)
        q = {**q, "rows": [r for r in q["rows"] if r["id"] not in trail.ids],
             "total": q["total"] - sum(r["id"] in trail.ids for r in q["rows"])}
    sampled = ss.setdefault("audit_sampling", {})  # inclusion probability of sampled items, saved with the review
    sampled.update({r["id"]: r.get("sampling") for r in q["rows"][:1] if r.get("sampling")})
    opened_before = len(trail.ids)
    current_id = trail.current(q["rows"][0]["id"] if q["rows"] else None)
    remaining = q["total"] - (len(trail.ids) - opened_before)
    # The queue without the item just opened. The next key's queue is made from q, kept, without a
    # read, even after my decision on this item (lsqa.audit.core; issue 12).
    upcoming = [r for r in q["rows"] if r["id"] != current_id]
    ss.audit_at = trail.at
    why = ss.setdefault("audit_why", {})
    why.update({r["id"]: f"priority {r['priority']:.2f} — {r['why']}" for r in q["rows"][:1] if "priority" in r})
    opened = ss.setdefault("audit_opened", {})
    if current_id and current_id not in opened:
        opened[current_id] = audit.opened_marker(workspace)  # reviews by others after this are worth a warning


# ------------------------------------------------------------------------------------ actions
def _forward():
    t = Trail(ss.audit_trail, ss.audit_at)
    t.forward()
    ss.audit_at = t.at


def _back():
    t = Trail(ss.audit_trail, ss.audit_at)
    t.back()
    ss.audit_at = t.at


def _open(judgment_id: str):
    t = Trail(ss.audit_trail, ss.audit_at)
    t.open(judgment_id)
    ss.audit_at = t.at


def _late_warning(judgment_id: str) -> str:
    opened_at = ss.get("audit_opened", {}).get(judgment_id, 0)  # before where_i_am() in a whole run
    late = audit.reviewed_since(workspace, judgment_id, annotator, opened_at)
    names = sorted({r["annotator"] for r in late})
    return f" — note: {', '.join(names)} reviewed this item after you opened it" if names else ""


def _decide(judgment_id: str, kind: str, shown: str, label: str | None = None):
    """Confirm the judge's label (no ``label``) or give mine (in system terms). Saved by the run this
    key starts (``_save_decision``), inside the attachment that run keeps anyway: one of the
    callback's own would be detached (a checkpoint, after a write) and attached again in between,
    ~18 ms of a decision (issue 12; docs/BENCHMARKS.md, ninth pass)."""
    ss.audit_pending = (judgment_id, kind, shown, label, ss.get("audit_note", ""), sampled.get(judgment_id))


def _save_decision():
    """The decision of this run's key, if any: saved, then the next item, with a message in the terms
    shown (``shown``). Refused (a note the store cannot keep, a workspace that cannot be written), the
    item stays, with the reason and the note as typed."""
    pending = ss.pop("audit_pending", None)
    if pending is None:
        return
    judgment_id, kind, shown, label, note, sampling = pending
    try:
        if label is None:
            audit.confirm(workspace, annotator, judgment_id, note, sampling=sampling)
            action = "confirm"
        else:
            action = audit.review(workspace, annotator, judgment_id, label, note, sampling=sampling)["action"]
    except LsqaError as exc:
        ss.audit_refused = f"Not saved: {exc}"
        return
    ss.audit_note = ""
    ss.audit_msg = audit.saved_message(kind, shown, action) + _late_warning(judgment_id)
    ss.audit_decided = True  # see review(): the sidebar's progress table counts it
    _forward()


def _flag(question_id: str, reference: str):
    reason = ss.get("audit_flag_reason", "wrong")
    try:
        audit.flag(workspace, annotator, question_id, reference, reason, ss.get("audit_note", ""))
    except LsqaError as exc:
        ss.audit_refused = f"Not flagged: {exc}"
        return
    ss.audit_note = ""
    ss.audit_msg = f"Flagged reference {reference} as {reason}"
    ss.audit_decided = True  # see review(): the sidebar's progress table counts it


def _reason(reason: str):
    ss.audit_flag_reason = reason


def _undo():
    try:
        undone = audit.undo_last(workspace, annotator)
    except LsqaError as exc:
        ss.audit_refused = f"Not undone: {exc}"
        return
    ss.audit_msg = "Undone: " + audit.describe_action(undone) if undone else "Nothing of yours to undo"
    ss.audit_decided = True  # see review(): the sidebar's progress table counts it


# ------------------------------------------------------------------------------------- the item
def decision_bar(it: dict | None, revealed: bool):
    """Navigation, the labels, the flags and the note, in one bar that stays at the top of the view.
    Each row is one horizontal container, not columns: a column is an element of its own, drawn again
    on every key (issue 12; docs/BENCHMARKS.md, ninth pass)."""
    with st.container(key="lsqa_keys"):
        nav = st.container(horizontal=True, vertical_alignment="center")
        nav.button("Previous", shortcut=K["previous"], on_click=_back, disabled=not trail.can_go_back(),
                   key="audit_prev")
        nav.button("Next", shortcut=K["next"], on_click=_forward, disabled=not trail.can_go_forward(remaining),
                   key="audit_next")
        nav.button("Undo my last", shortcut=K["undo"], on_click=_undo, disabled=not annotator, key="audit_undo")
        if it is None:
            st.info("No verdict matches these filters.")
            return
        i, n = trail.position(remaining)
        nav.markdown(f"**Item {i:,} of {n:,}** · {md(why.get(it['id'], 'opened before'))}")
        buttons = st.container(horizontal=True)
        shown_label = it["shown_label"] if it["status"] == "ok" else None
        buttons.button("Confirm", type="primary", shortcut=K["confirm"], on_click=_decide,
                       args=(it["id"], it["kind"], shown_label),
                       disabled=not annotator or it["status"] != "ok" or not revealed, key="audit_confirm",
                       help="Hidden while blind: give your own label" if not revealed else None)
        for opt in it["options"]:
            label = audit.to_system_label(it["kind"], opt["shown"], it["shown_order"])
            buttons.button(opt["text"], shortcut=opt["shortcut"], on_click=_decide,
                           args=(it["id"], it["kind"], opt["shown"], label), disabled=not annotator,
                           key=f"audit_opt_{opt['key']}")
        flags = st.container(horizontal=True, vertical_alignment="center")
        reason_now = ss.get("audit_flag_reason", "wrong")
        for reason, key in audit.FLAG_REASON_KEYS.items():
            flags.button(reason, shortcut=key, on_click=_reason, args=(reason,), key=f"audit_reason_{reason}",
                         type="primary" if reason == reason_now else "secondary", help="Reason for the next flag")
        flags.button("Flag reference 1", shortcut=K["flag:1"], on_click=_flag, args=(it["question_id"], "1"),
                     disabled=not annotator, key="audit_flag1")
        flags.button("Flag reference 2", shortcut=K["flag:2"], on_click=_flag, args=(it["question_id"], "2"),
                     disabled=not annotator, key="audit_flag2")
        flags.text_input("Note (optional, saved with the next action)", key="audit_note", max_chars=audit.MAX_NOTE_CHARS,
                         label_visibility="collapsed", placeholder="note (optional; Enter or Esc gives the keys back)")
        if not revealed:
            st.caption("Blind: the judge's label, other annotators' labels and system names appear once you decide; "
                       "Confirm (V) is off until then.")


def show_item(it: dict, revealed: bool):
    def sys_name(name: str, position: str = "") -> str:
        return name if revealed else f"answer {position}".strip()

    late = audit.reviewed_since(workspace, it["id"], annotator, opened.get(it["id"], 0)) if annotator else []
    if late:
        st.warning(f"{md(', '.join(sorted({r['annotator'] for r in late})))} reviewed this item after you opened it.")
    st.caption(f"{md(it['title'])} · {md(it['question_id'])} · judge **{md(it['judge'])}** ({md(it['kind'])})"
               + (f" · prompt {md(it['prompt_version'])}" if it["prompt_version"] else ""))
    # One element each, not columns of elements: every element is drawn again on each key (lsqa.dashboard.item_cards).
    st.markdown(item_cards.question_card(it["question"], it["references"], used=it["reference_used"],
                                         flags=page_data.group_by(it["flags"], "reference")), unsafe_allow_html=True)
    answers = [((f"Answer {a['position']}: " if a["position"] and revealed else "") + sys_name(a["system"], a["position"]),
                a["text"] or f"[{a['status']}]") for a in it["answers"]]
    st.markdown(item_cards.answer_cards("Answers, in the order the judge saw them" if it["pairwise"] else "Answer",
                                        answers), unsafe_allow_html=True)

    if revealed:
        if it["status"] == "ok":
            if it["pairwise"]:  # what the judge said about the positions shown, then what it means for the systems
                verdict = f"“{md(it['raw_label'] or it['shown_label'])}” (positions as shown) → {md(it['label_text'])}"
            else:
                verdict = f"**{md(it['label'])}**"
            score = f" (score {it['score']:.3f})" if it["score"] is not None else ""
            st.markdown(f"**Verdict of {md(it['judge'])}:** {verdict}{score}")
        for lab in it["human_labels"]:
            said = audit.shown_text(it["kind"], lab["shown_label"])
            st.caption(f"{md(lab['annotator'])}: {lab['action']} → {md(said)}"
                       + (f" — {md(lab['note'])}" if lab["note"] else ""))
    if it["status"] != "ok":
        st.error(f"The judge's output could not be used ({it['status']}); give the label yourself.")
    show_evidence(it)


def show_evidence(it: dict):
    """Quotes in their passage, folded to a few sentences (unfold for the whole passage)."""
    if not it["evidence"]:
        return
    st.markdown("**Evidence**")
    for n, ev in enumerate(it["evidence"]):
        about = audit.evidence_label(ev, it["pairwise"])
        if ev["found"]:
            st.caption(f"Found in the book ({md(ev['where'])}" + (", spacing/case differ" if ev["how"] == "whitespace"
                                                                  else "") + ")" + (f" — for {md(about)}" if about else ""))
            with st.container(border=True, key=f"audit_evidence_{n}"):
                unfold = ev["folded"] and st.toggle("Whole passage", key=f"audit_unfold_{it['id']}_{n}")
                st.markdown(ev["html_full"] if unfold else ev["html"], unsafe_allow_html=True)
        else:
            st.caption("The judge's note" + (f" on answer {ev['about']}" if ev["about"] else "")
                       + " (not found in the book: an explanation or a paraphrase):")
            st.markdown(ev["html"], unsafe_allow_html=True)


def show_guidelines(kind: str):
    """The workspace's guidelines for this judge kind; anybody named can edit them (a new version)."""
    g = guidelines.for_kind(workspace, kind)
    box = _lazy_expander(f"Guidelines for {kind} verdicts" + ("" if g["is_default"] else f" (edited by {g['edited_by']})"),
                         f"audit_x_guidelines_{kind}")
    if box is None:
        return
    with box:
        st.markdown(g["text"])
        with st.form(f"audit_guidelines_{kind}", border=False):
            text = st.text_area("Edit the guidelines for this workspace", g["text"], height=220,
                                key=f"audit_guidelines_text_{kind}")
            if st.form_submit_button("Save guidelines", disabled=not annotator):
                guidelines.save(workspace, kind, text, annotator)
                ss.audit_msg = f"Guidelines for {kind} verdicts saved in this workspace"
                st.rerun()


def show_raw(it: dict):
    st.code(it["raw"] or "(empty)", language=None, wrap_lines=True)
    prompt = audit.prompt_of(workspace, it["id"])
    if prompt:
        st.code(prompt[:20000], language=None, wrap_lines=True)


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


def _folded(label: str, key: str, draw) -> None:
    """``draw()`` inside a panel built only while open (``_lazy_expander``)."""
    box = _lazy_expander(label, key)
    if box is not None:
        with box:
            draw()


def _row_picked(rows: list[dict], key: str, **options) -> int | None:
    """A table of ``rows``, one of which a person may pick to open it: the index of the row picked, if any."""
    picked = st.dataframe(rows, hide_index=True, width="stretch", on_select="rerun", selection_mode="single-row",
                          key=f"{key}_{len(ss.audit_trail)}_{ss.audit_at}", **options)
    sel = picked.selection.rows if picked else []
    return sel[0] if sel else None


def my_recent_reviews():
    """My latest decisions: pick one to open it again and change it (a new review row). Folded until
    opened: built open, the table changed with every decision and drawing it again made a decision
    → next item ~0.07 s slower than J (issue 12; docs/BENCHMARKS.md, sixth pass)."""
    _folded("My recent reviews (pick one to open it again and change it)", "audit_x_recent", _recent_table)


def _recent_table():
    mine = audit.recent(workspace, annotator)
    if not mine:
        st.caption("Nothing reviewed yet." if annotator else "Enter your name to see your reviews.")
        return
    picked = _row_picked([{k: r[k] for k in ("question", "judge", "my label", "action", "when")} for r in mine],
                         "audit_recent")
    if picked is not None:
        _open(mine[picked]["id"])
        st.rerun()


UP_NEXT_ROWS = 20  # a look ahead, not the queue: a 100-row table redrawn on every J cost ~0.07 s (issue 12)


def up_next():
    """The queue after this item. Folded until opened, as My recent reviews: its table, drawn again on
    every key, made a keypress ~0.05 s slower on screen (issue 12; docs/BENCHMARKS.md, seventh pass).
    Its label stays the same from item to item: a new label would be a new panel, folded again."""
    _folded("Up next (pick one to open it)", "audit_x_next", _up_next_table)


def _up_next_table():
    more = f"; the next {UP_NEXT_ROWS} in queue order" if len(upcoming) > UP_NEXT_ROWS else ""
    st.caption(f"{remaining:,} not opened yet{more}. The filters in the sidebar narrow the queue.")
    shown = upcoming[:UP_NEXT_ROWS]
    table = [{"priority": r.get("priority"), "why": r.get("why"), "judge": r.get("judge"), "book": r.get("title"),
              "question": r.get("question_id"),
              **({} if blind else {"system_a": r.get("system_a"), "system_b": r.get("system_b"),
                                   "label": r.get("label")}),
              "reviewers": r.get("n_reviewers")} for r in shown]
    picked = _row_picked(table, "audit_table", height=300)
    if picked is not None:
        row = shown[picked]
        why[row["id"]] = f"priority {row['priority']:.2f} — {row['why']}"
        _open(row["id"])
        st.rerun()


@st.fragment
def review():
    """The trail, the decision bar, the item and the two tables. A fragment: J, K and the decision keys
    rerun this part only, not the navigation and the sidebar (issue 12, keypress -> next item)."""
    try:
        _review()
    except LsqaError as exc:  # a fragment's rerun does not pass through app.py's guard either
        st.error(str(exc))


def _review():
    with page_data.kept_open(workspace):  # a fragment's rerun does not pass through app.py's
        _save_decision()
        if ss.pop("audit_decided", False) and ss.get("audit_x_progress") and ss.get("audit_run") == "keys":
            st.rerun(scope="app")  # a decision in this fragment: the sidebar's open progress table counts it
        where_i_am()
        if "audit_msg" in ss:
            st.toast(ss.pop("audit_msg"))
        if "audit_refused" in ss:
            st.error(ss.pop("audit_refused"))
        it = audit.item(workspace, current_id) if current_id else None
        revealed = audit.reveal(it, annotator, blind) if it else True
        decision_bar(it, revealed)
        if it is not None:
            show_guidelines(it["kind"])
            show_item(it, revealed)
            show_details(it, revealed)
        my_recent_reviews()
        up_next()
        if upcoming and sampled_judge() is None and ss.get("audit_run") == "keys":
            # Read ahead the item J or a decision opens next: kept, it is drawn without a read then
            # (a review of this item leaves it kept), while this read runs as I look at this one.
            audit.item(workspace, upcoming[0]["id"])


ss.pop("audit_decided", None)  # a whole run: the progress table below is drawn after the fragment anyway
# The read ahead for the next key (the next item) is left to the fragment's own reruns: a new tab or
# a page switch is done sooner without it (issue 12).
ss.audit_run = "page"
review()
ss.audit_run = "keys"
# Last, so that the item is drawn before the sidebar's progress table is computed (J -> the next item).
progress = _lazy_expander("Progress of every annotator", "audit_x_progress", st.sidebar)
if progress is not None:
    progress.dataframe(audit.progress(workspace), hide_index=True, width="stretch")
