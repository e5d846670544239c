"""Adjudicate: the verdicts whose people disagree (Audit page and imported reviews alike), each
person's label, note and time, the question and answers, comments; an adjudicator sets the final
label with a note (issue 34). What is shown is made in ``lsqa.dashboard.adjudication_view``; the
writes check the signed-in person's role (``lsqa.team``)."""

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager

if PagesManager.uses_pages_directory:  # opened before app.py ran (pages/ auto-discovery): see app.py
    PagesManager.uses_pages_directory = False
    st.rerun()

from lsqa import audit  # noqa: E402
from lsqa.dashboard import adjudication_view as view  # noqa: E402
from lsqa.dashboard import page_data  # noqa: E402
from lsqa.dashboard import sign_in  # noqa: E402
from lsqa.errors import LsqaError  # noqa: E402
from lsqa.text import highlight  # noqa: E402

workspace = page_data.current_workspace()
md = highlight.md_escape  # names, labels, notes and comments are people's text: never Markdown
ss = st.session_state
presence = sign_in.presence_of(ss, workspace, st.get_option("server.address"))
who = presence.person  # passed to every write: the library checks who may do it (lsqa.team)
st.title("Adjudicate")
st.caption(audit.FINAL_LABEL_RULE)

if "adj_msg" in ss:
    st.toast(ss.pop("adj_msg"))
if "adj_refused" in ss:
    st.error(ss.pop("adj_refused"))

rows, kept_note = view.disagreements(workspace, who)
if kept_note:
    st.info(kept_note)
if not rows:
    st.info("No disagreements: no verdict has two people's labels that differ.")
    st.stop()
n_open = sum(d["adjudicated"] is None for d in rows)
st.subheader(f"{len(rows)} disagreement{'' if len(rows) == 1 else 's'}, {n_open} not adjudicated yet")
st.dataframe(view.table(rows), hide_index=True, width="stretch", key="adj_table",
             column_config={"open": st.column_config.LinkColumn("item", display_text="open on Audit")})

# The one open is kept by its verdict, not its row: a final label moves the row to the end of the list.
# No widget key: a list in a new order is a new picker, opened on the same verdict.
by_id = {r["judgment_id"]: r for r in rows}
ids = list(by_id)
ss.adj_current = st.selectbox("Disagreement", ids, index=ids.index(ss.get("adj_current", ids[0]))
                              if ss.get("adj_current") in by_id else 0, format_func=lambda i: view.choice(by_id[i]))
d = view.detail(workspace, by_id[ss.adj_current])
st.markdown(f"**{md(d['question'])}** — *{md(d['title'])}* · [open on the Audit page]({d['link']})")
for ref in d["references"]:
    st.markdown(f"{md(ref['label'])}: {md(ref['text'])}")
for answer in d["answers"]:
    st.markdown(f"**{md(answer['label'])}**: {md(answer['text'])}")
st.markdown(f"Judge {md(d['judge'])}: **{md(d['judge_label'])}**")
st.markdown("**People's labels**")
for lab in d["labels"]:
    note = f" — {md(lab['note'])}" if lab["note"] else ""
    st.markdown(f"- {md(lab['who'])}: **{md(lab['label'])}** ({lab['when']}){note}")
if d["adjudication"]:
    st.success(d["adjudication"])
st.markdown(f"**Comments ({len(d['comments'])})**")
for c in d["comments"]:
    st.markdown(f"- {md(c['who'])} ({c['when']}): {md(c['text'])}")


def _set_final(jid: str, options: dict) -> None:
    """The adjudicator's click: the label and note chosen, saved (or why not)."""
    label = ss.get(f"adj_label_{jid}")
    if label is None:
        ss.adj_refused = "Not saved: choose the final label first."
        return
    try:
        audit.adjudicate(workspace, who, jid, label, ss.get(f"adj_note_{jid}", ""))
        ss.adj_msg = f"Final label set: {options.get(label, label)}"
        ss[f"adj_note_{jid}"] = ""
    except LsqaError as exc:
        ss.adj_refused = f"Not saved: {exc}"


def _add_comment(jid: str) -> None:
    try:
        audit.comment(workspace, who, jid, ss.get(f"adj_comment_{jid}", ""))
        ss.adj_msg = "Comment added"
        ss[f"adj_comment_{jid}"] = ""
    except LsqaError as exc:
        ss.adj_refused = f"Not saved: {exc}"


jid = d["judgment_id"]
if presence.may("adjudicate"):
    st.radio("Final label", list(d["options"]), format_func=d["options"].get, horizontal=True, index=None,
             key=f"adj_label_{jid}")
    st.text_input("Note (why)", key=f"adj_note_{jid}", max_chars=2_000)
    st.button("Set final label", key=f"adj_set_{jid}", type="primary", on_click=_set_final, args=(jid, d["options"]))
else:
    st.caption(sign_in.cannot_act_note(presence, "adjudicate", "set final labels") or
               "Read only: an adjudicator sets final labels.")
if presence.may("review") and presence.name:
    st.text_area("Comment", key=f"adj_comment_{jid}", max_chars=audit.MAX_COMMENT_CHARS)
    st.button("Add comment", key=f"adj_add_comment_{jid}", on_click=_add_comment, args=(jid,))
