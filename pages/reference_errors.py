"""Reference errors: NarrativeQA references most likely wrong (paper §5.2, Appendix E), the flags so
far, and the errata file. The score is explained in ``lsqa/audit/reference_errors.py``."""

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager

if PagesManager.uses_pages_directory:  # opened before app.py ran (pages/ auto-discovery): see app.py
    PagesManager.uses_pages_directory = False
    st.rerun()

from lsqa.dashboard import FLAG_REASONS, LsqaError, common, md_escape, reference_view, sign_in, text_html  # noqa: E402
from lsqa.dashboard import audit_actions as audit  # noqa: E402

workspace = common.current_workspace()
md = md_escape
presence = sign_in.presence_of(st.session_state, workspace, st.get_option("server.address"))
who = presence.person  # passed to every write: the library checks who may do it (lsqa.team)
annotator = presence.name if presence.may("review") else ""
st.title("Reference errors")
st.caption("Ranked by how little confirms a reference: the systems' answers do not contain it and ground-truth "
           "judges reject answers against it, the strong systems contradict it, the other reference says "
           "something else, an LLM reference check rejects it, humans overturned ground-truth rejections "
           "against it, and flags. The same list as `lsqa suspects`. "
           f"score = {reference_view.FORMULA_IN_WORDS}; hover a column header for what the column means.")

if "re_msg" in st.session_state:
    st.toast(st.session_state.pop("re_msg"))
if "re_refused" in st.session_state:  # a flag or undo the workspace refused: why, not a traceback
    st.error(st.session_state.pop("re_refused"))
rows = reference_view.suspects(workspace)
flags = reference_view.errata(workspace)

st.header(f"Flagged so far ({len(flags)})")
if flags:
    table = [{**r, **{k: "; ".join(r[k]) for k in reference_view.ERRATA_LISTS}} for r in flags]
    st.dataframe(table, hide_index=True, width="stretch", key="re_flags", column_order=reference_view.FLAGGED_COLUMNS,
                 column_config={**reference_view.column_config(reference_view.FLAGGED_COLUMNS),
                                "open": st.column_config.LinkColumn("verdicts", display_text="open on Audit")})
    c = st.columns(4)
    c[0].download_button("Errata (CSV)", reference_view.errata_csv(flags), "narrativeqa_errata.csv", "text/csv",
                         on_click="ignore", key="re_dl_csv")
    c[1].download_button("Errata (JSONL)", reference_view.errata_jsonl(flags), "narrativeqa_errata.jsonl",
                         "application/jsonl", on_click="ignore", key="re_dl_jsonl")
else:
    st.info("No reference is flagged yet. Flag from the list below or while auditing.")

st.header("Most likely wrong")
if not rows:
    st.info("No questions with references and answers, verdicts or flags yet.")
    st.stop()
ss = st.session_state
top = st.slider("Show the top", 5, max(5, len(rows)), min(25, len(rows)), key="re_top") if len(rows) > 5 else len(rows)
shown = rows[:top]
# The selection is a (question, reference), never a row number: the list re-sorts after each flag.
selected = tuple(ss.get("re_selected") or reference_view.row_key(shown[0]))
where = reference_view.find(rows, selected)
if where is None:  # gone from the list: back to the top row
    selected, where = reference_view.row_key(shown[0]), 0
ss.re_table = {"selection": {"rows": [where] if where < top else []}}  # the tick on the selected question's row
ss.re_shown_keys = [reference_view.row_key(r) for r in shown]


def _picked():
    sel = ss.re_table["selection"]["rows"]
    if sel and sel[0] < len(ss.re_shown_keys):  # the row as it was shown when clicked
        ss.re_selected = ss.re_shown_keys[sel[0]]


columns = ["score", "title", "question", "reference", "reference_text", "other_reference", *reference_view.COLUMNS]
st.dataframe(shown, hide_index=True, width="stretch", column_order=columns, key="re_table", on_select=_picked,
             selection_mode="single-row",
             column_config=reference_view.column_config(columns))
st.download_button("Triage list (CSV)", common.to_csv(rows, columns + ["question_id"]), "reference_triage.csv",
                   "text/csv", on_click="ignore", key="re_dl_triage")

r = rows[where]
shown_evidence = reference_view.evidence(r)
st.subheader("Flag a reference")
st.markdown(f"**{md(r['title'])}** — {md(r['question'])} (row {where + 1} of the list)")
c = st.columns(2)
c[0].markdown(f"**Reference {r['reference']}** (this row)")
c[0].markdown(text_html(r["reference_text"]), unsafe_allow_html=True)
c[1].markdown("**The other reference**")
c[1].markdown(text_html(r["other_reference"]), unsafe_allow_html=True)
st.markdown("**The systems**")
if shown_evidence["systems"]:
    st.dataframe(shown_evidence["systems"], hide_index=True, key="re_systems",
                 column_config={"ability": st.column_config.Column(help="share right on a question of typical "
                                                                        "difficulty (item-response fit)"),
                                "expected": st.column_config.Column(help="the agreement the fit expected on this "
                                                                         "question"),
                                "agrees": st.column_config.Column(help="the share of this reference's words in the "
                                                                       "answer, or its ground-truth judges' yes")})
st.caption(shown_evidence["systems_caption"])
st.markdown("**The summary** (what NarrativeQA's annotators read)")
if shown_evidence["summary_html"]:
    st.markdown(shown_evidence["summary_html"], unsafe_allow_html=True)
st.caption(shown_evidence["summary_caption"])
st.markdown("**LLM reference check**")
for line in shown_evidence["llm"]:
    st.caption(line)
st.caption(shown_evidence["explain"])


def _flag(question_id: str, reference: str) -> None:
    reason = ss.get("re_reason", "wrong")
    try:
        audit.flag(workspace, who, question_id, reference, reason, ss.get("re_note", ""), ss.get("re_correction", ""))
    except LsqaError as exc:
        ss.re_refused = f"Not flagged: {exc}"
        return
    ss.re_selected = (question_id, reference)
    ss.re_msg = f"Flagged reference {reference} of “{r['question']}” as {reason}"


def _undo() -> None:
    try:
        undone = audit.undo_last(workspace, who, "flag")
    except LsqaError as exc:
        ss.re_refused = f"Not undone: {exc}"
        return
    ss.re_msg = "Undone: " + audit.describe_action(undone) if undone else "No flag of yours to undo"


with st.form("re_flag_form", clear_on_submit=True):
    st.radio("Reason", FLAG_REASONS, horizontal=True, key="re_reason")
    st.text_input("Note", key="re_note", max_chars=audit.MAX_NOTE_CHARS)
    st.text_input("Corrected reference (optional)", key="re_correction", max_chars=audit.MAX_NOTE_CHARS,
                  help="The reference as it should read; kept with the flag and written to the errata's correction "
                       "column (`lsqa ingest-narrativeqa --errata FILE` reads it back beside the original).")
    st.form_submit_button(f"Flag reference {r['reference']}", disabled=not annotator, type="primary",
                          on_click=_flag, args=(r["question_id"], r["reference"]))
st.button("Undo my last flag", on_click=_undo, disabled=not annotator, key="re_undo")
if not annotator:
    st.caption(sign_in.cannot_act_note(presence, "review", "flag references"))
