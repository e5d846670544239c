"""Audit: go through judge verdicts by hand, most in need of a human first, from the keyboard.

Keys: J next · K previous · V confirm · A/B/T/X (side by side, in the positions shown) or Y/N
(yes/no) to give a label · F / G flag reference 1 / 2 · U undo my last action.
Every action is saved at once (append-only, with the annotator's name and the time).
"""

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager

if PagesManager.uses_pages_directory:  # opened before app.py ran (pages/ auto-discovery): see app.py
    PagesManager.uses_pages_directory = False
    st.rerun()

from lsqa import audit, highlight, page_data, sampling
from lsqa.vocabulary import FLAG_REASONS

workspace = page_data.current_workspace()
md = highlight.md_escape
annotator = st.session_state.get("annotator", "").strip()
K = audit.SHORTCUTS

st.markdown("<style>.lsqa-text{line-height:1.5} .lsqa-text mark{background:#ffe066;padding:0 2px}</style>",
            unsafe_allow_html=True)  # static CSS only
st.title("Audit judge verdicts")

# ------------------------------------------------------------------------------------ filters
choices = audit.choices(workspace)
titles = {d["id"]: d["title"] for d in choices["documents"]}
ss = st.session_state
if "audit_pos" not in ss:
    ss.audit_pos = 0
    # A link can open the queue pre-filtered: ?judge=<name>&system=<name>&reviewed=all
    ss.audit_judges = [j for j in st.query_params.get_all("judge") if j in choices["judges"]]
    ss.audit_systems = [s for s in st.query_params.get_all("system") if s in choices["systems"]]
    ss.audit_reviewed = st.query_params.get("reviewed", "not_mine")
    if ss.audit_reviewed not in audit.REVIEWED_FILTERS:
        ss.audit_reviewed = "not_mine"


# Streamlit forgets a widget's value when its page is left; keep the filters in plain keys too.
FILTER_KEYS = ("audit_judges", "audit_systems", "audit_books", "audit_labels", "audit_statuses", "audit_reviewed",
               "audit_blind")
for _k in FILTER_KEYS:
    if _k not in ss and f"_{_k}" in ss:
        ss[_k] = ss[f"_{_k}"]


def _reset_position():
    ss.audit_pos = 0
    ss.pop("audit_goto", None)


with st.sidebar:
    st.subheader("Queue")
    st.multiselect("Judge", choices["judges"], key="audit_judges", on_change=_reset_position)
    st.multiselect("System", choices["systems"], key="audit_systems", on_change=_reset_position)
    st.multiselect("Book", list(titles), format_func=titles.get, key="audit_books", on_change=_reset_position)
    st.multiselect("Judge's label", choices["labels"], key="audit_labels", on_change=_reset_position)
    st.multiselect("Status", choices["statuses"], key="audit_statuses", on_change=_reset_position)
    st.radio("Show", list(audit.REVIEWED_FILTERS), format_func=audit.REVIEWED_FILTERS.get, key="audit_reviewed",
             on_change=_reset_position)
    st.toggle("Blind (hide system names)", key="audit_blind")

for _k in FILTER_KEYS:
    ss[f"_{_k}"] = ss[_k]
filters = audit.Filters(judges=tuple(ss.audit_judges), systems=tuple(ss.audit_systems),
                        documents=tuple(ss.get("audit_books", [])), labels=tuple(ss.get("audit_labels", [])),
                        statuses=tuple(ss.get("audit_statuses", [])), reviewed=ss.audit_reviewed)
page_no = ss.audit_pos // audit.PAGE_SIZE


def _sampled_queue_choice():
    """Priority queue, or a random / active audit queue for one judge (issue 13): their reviews
    carry the inclusion probability, so they also correct the Leaderboard's estimates."""
    with st.sidebar:
        st.selectbox("Audit queue", ["priority", "random", "active"], key="audit_queue", on_change=_reset_position,
                     help="priority: most in need of a human first. random / active: a sample with known "
                          "probabilities, for corrected estimates; review in order, without skipping.")
        if ss.audit_queue == "priority":
            return None
        judge = (ss.audit_judges or choices["judges"] or [""])[0]
        st.caption(f"Sampling the verdicts of **{md(judge)}** (the first judge chosen above).")
        st.select_slider("Audit rate", [0.05, 0.1, 0.2, 0.3, 0.5], value=0.1, key="audit_rate",
                         on_change=_reset_position)
        if ss.audit_queue == "random":
            st.radio("Stratify by", ["none", "system", "pair"], key="audit_stratify", horizontal=True,
                     on_change=_reset_position)
    return judge


sampled_judge = _sampled_queue_choice()


def _load_queue(page: int):
    if sampled_judge is None:
        return audit.queue(workspace, filters, annotator, page=page)
    return sampling.page_queue(workspace, sampled_judge, ss.audit_queue, rate=ss.audit_rate,
                               stratify=ss.get("audit_stratify", "none"), page=page)


q = _load_queue(page_no)
rows = q["rows"]
if "audit_goto" in ss:  # after an action: go to the item that was next before it
    goto = ss.pop("audit_goto")
    ids = [r["id"] for r in rows]
    if goto in ids:
        ss.audit_pos = page_no * audit.PAGE_SIZE + ids.index(goto)
if q["total"] and ss.audit_pos >= q["total"]:
    ss.audit_pos = q["total"] - 1
    page_no = ss.audit_pos // audit.PAGE_SIZE
    q = _load_queue(page_no)
    rows = q["rows"]
index = ss.audit_pos - page_no * audit.PAGE_SIZE
current = rows[index] if 0 <= index < len(rows) else None

with st.sidebar:
    st.subheader("Progress")
    st.dataframe(audit.progress(workspace), hide_index=True, width="stretch")

if "audit_msg" in ss:
    st.toast(ss.pop("audit_msg"))
if not annotator:
    st.warning("Enter your name under **Annotator** in the sidebar to review and flag (it is saved with every action).")


# ------------------------------------------------------------------------------------ actions
def _next_id():
    nxt = index + 1
    return rows[nxt]["id"] if nxt < len(rows) else None


def _move(step: int):
    ss.audit_pos = max(0, min(q["total"] - 1, ss.audit_pos + step))


def _after(message: str):
    ss.audit_msg = message
    goto = _next_id()
    if goto:
        ss.audit_goto = goto


def _label(judgment_id: str, label: str):
    saved = audit.review(workspace, annotator, judgment_id, label, ss.get("audit_note", ""),
                         sampling=current.get("sampling"))
    ss.audit_note = ""
    _after(f"Saved: {saved['action']} → {label}")


def _confirm(judgment_id: str):
    saved = audit.confirm(workspace, annotator, judgment_id, ss.get("audit_note", ""),
                          sampling=current.get("sampling"))
    ss.audit_note = ""
    _after(f"Saved: confirm ({saved['label']})")


def _flag(question_id: str, reference: str):
    reason = ss.get("audit_flag_reason", "wrong")
    audit.flag(workspace, annotator, question_id, reference, reason, ss.get("audit_note", ""))
    ss.audit_note = ""
    ss.audit_msg = f"Flagged reference {reference} as {reason}"


def _undo():
    undone = audit.undo_last(workspace, annotator)
    ss.audit_msg = "Undone: " + audit.describe_action(undone) if undone else "Nothing of yours to undo"


# ------------------------------------------------------------------------------------- the item
nav = st.columns([1, 1, 1.4, 5])
nav[0].button("Previous", shortcut=K["previous"], on_click=_move, args=(-1,), disabled=ss.audit_pos <= 0,
              key="audit_prev")
nav[1].button("Next", shortcut=K["next"], on_click=_move, args=(1,), disabled=ss.audit_pos >= q["total"] - 1,
              key="audit_next")
nav[2].button("Undo my last", shortcut=K["undo"], on_click=_undo, disabled=not annotator, key="audit_undo")
if current is None:
    nav[3].info("No verdict matches these filters." if not q["total"] else "Nothing here.")
    st.stop()
nav[3].markdown(f"**Item {ss.audit_pos + 1:,} of {q['total']:,}** · priority {current['priority']:.2f} — "
                f"{md(current['why'])}")

it = audit.item(workspace, current["id"])
blind = ss.get("audit_blind", False)


def sys_name(name: str, position: str = "") -> str:
    return f"answer {position}" if blind else name


st.caption(f"{md(it['title'])} · {md(it['question_id'])} · judge **{md(it['judge'])}** ({md(it['kind'])})"
           + (f" · prompt {md(it['prompt_version'])}" if it["prompt_version"] else ""))
with st.container(border=True):
    st.markdown("**Question**")
    st.markdown(highlight.text_html(it["question"], css="font-size:1.15rem"), unsafe_allow_html=True)
    flags_by_ref = page_data.group_by(it["flags"], "reference")
    for col, ref in zip(st.columns(2), it["references"]):
        used = " — used by this rater" if it["reference_used"] == ref["n"] else ""
        col.markdown(f"**NarrativeQA reference {ref['n']}**{used}")
        col.markdown(highlight.text_html(ref["text"] or "—"), unsafe_allow_html=True)
        for f in flags_by_ref.get(ref["n"], []):
            col.caption(f"⚑ {md(f['reason'])} — {md(f['annotator'])}" + (f": {md(f['note'])}" if f["note"] else ""))

st.markdown("**Answers, in the order the judge saw them**" if it["pairwise"] else "**Answer**")
for col, a in zip(st.columns(len(it["answers"])), it["answers"]):
    with col.container(border=True):
        head = f"Answer {a['position']}: " if a["position"] else ""
        st.markdown(f"**{head}{md(sys_name(a['system'], a['position']))}**")
        st.markdown(highlight.text_html(a["text"] or f"[{a['status']}]"), unsafe_allow_html=True)

st.divider()
if it["status"] == "ok":
    if it["pairwise"]:  # what the judge said about the positions shown, then what it means for the systems
        meaning = f"answer {it['shown_label']}" if blind else it["label_text"]
        verdict = f"“{md(it['raw_label'] or it['shown_label'])}” (positions as shown) → {md(meaning)}"
    else:
        verdict = f"**{md(it['label'])}**"
    score = f" (score {it['score']:.3f})" if it["score"] is not None else ""
    st.markdown(f"**Verdict of {md(it['judge'])}:** {verdict}{score}")
else:
    st.error(f"The judge's output could not be used ({it['status']}); give the label yourself.")
for lab in it["human_labels"]:
    said = f"answer {lab['shown_label']}" if blind and it["pairwise"] else lab["text"]
    st.caption(f"{md(lab['annotator'])}: {lab['action']} → {md(said)}"
               + (f" — {md(lab['note'])}" if lab["note"] else ""))

if it["evidence"]:
    st.markdown("**Evidence**")
    for ev in it["evidence"]:
        if ev["found"]:
            st.caption(f"Found in the book ({md(ev['where'])}"
                       + (", spacing/case differ" if ev["how"] == "whitespace" else "") + ")")
            with st.container(border=True):
                st.markdown(ev["html"], unsafe_allow_html=True)
        else:
            st.caption("Not found in the book (an explanation or a paraphrase):")
            st.markdown(ev["html"], unsafe_allow_html=True)

st.markdown("**Your decision**")
st.text_input("Note (optional, saved with the next action)", key="audit_note")
buttons = st.columns(len(it["options"]) + 1)
buttons[0].button("Confirm", type="primary", shortcut=K["confirm"], on_click=_confirm, args=(it["id"],),
                  disabled=not annotator or it["status"] != "ok", key="audit_confirm")
for col, opt in zip(buttons[1:], it["options"]):
    label = audit.to_system_label(it["kind"], opt["shown"], it["shown_order"])
    col.button(opt["text"], shortcut=opt["shortcut"], on_click=_label, args=(it["id"], label),
               disabled=not annotator, key=f"audit_opt_{opt['key']}")

flag_cols = st.columns([2, 1, 1])
flag_cols[0].radio("Flag reason", [r for r in FLAG_REASONS], horizontal=True, key="audit_flag_reason")
flag_cols[1].button("Flag reference 1", shortcut=K["flag:1"], on_click=_flag, args=(it["question_id"], "1"),
                    disabled=not annotator, key="audit_flag1")
flag_cols[2].button("Flag reference 2", shortcut=K["flag:2"], on_click=_flag, args=(it["question_id"], "2"),
                    disabled=not annotator, key="audit_flag2")

with st.expander("Other verdicts on these answers"):
    if blind:
        st.caption("Hidden while blind: the other verdicts name the systems.")
    else:
        st.dataframe(it["other_verdicts"], hide_index=True, width="stretch")
with st.expander("Review history of this verdict"):
    st.dataframe(it["history"], hide_index=True, width="stretch")
with st.expander("Raw completion and prompt"):
    st.code(it["raw"] or "(empty)", language=None, wrap_lines=True)
    if it["prompt"]:
        st.code(it["prompt"][:20000], language=None, wrap_lines=True)

st.subheader(f"Queue (page {q['page'] + 1} of {q['pages']})")
table = [{"#": q["page"] * audit.PAGE_SIZE + i + 1, "priority": r["priority"], "why": r["why"], "judge": r["judge"],
          "book": r["title"], "question": r["question_id"],
          **({} if blind else {"system_a": r["system_a"], "system_b": r["system_b"]}),
          "label": r["label"], "reviewers": r["n_reviewers"], "mine": r["my_label"] or ""} for i, r in enumerate(rows)]
picked = st.dataframe(table, hide_index=True, width="stretch", on_select="rerun", selection_mode="single-row",
                      key="audit_table", height=300)
sel = picked.selection.rows if picked else []
if sel and ss.get("audit_last_pick") != (q["page"], sel[0]):
    ss.audit_last_pick = (q["page"], sel[0])
    ss.audit_pos = q["page"] * audit.PAGE_SIZE + sel[0]
    st.rerun()
pager = st.columns(2)
pager[0].button("Previous page", on_click=_move, args=(-audit.PAGE_SIZE,), disabled=q["page"] == 0)
pager[1].button("Next page", on_click=_move, args=(audit.PAGE_SIZE,), disabled=q["page"] >= q["pages"] - 1)
