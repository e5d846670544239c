"""Adjudicate: the verdicts whose people disagree (Audit page and imported reviews alike) as a queue.
One at a time — the question, both answers as shown, every person's label and note, the final label
and its history — an adjudicator sets the final label with a key and the page moves to the next open
one; when none is left it says so. Replacing a final label asks first.

Keys (the Audit page's keys.js): J next · K previous · A/B/T/X (side by side, in the positions shown)
or Y/N (yes/no) set the final label · the same key again replaces one that stands, once asked · ? the
keys. A key writes only on the disagreement on screen when it was pressed. Layout and wiring only:
what is shown is made in ``lsqa.dashboard.adjudication_view``; the writes check the signed-in
person's role (``lsqa.team``)."""

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager

if PagesManager.uses_pages_directory:  # opened before app.py ran (pages/ auto-discovery): see app.py
    PagesManager.uses_pages_directory = False
    st.rerun()

from lsqa.dashboard import (  # noqa: E402
    LsqaError,
    common,
    md_escape,
    sign_in,  # noqa: E402
    ui,  # noqa: E402
)
from lsqa.dashboard import adjudication_view as view  # noqa: E402
from lsqa.dashboard import audit_actions as audit  # noqa: E402

workspace = common.current_workspace()
md = md_escape  # names, labels, notes and comments are people's text: never Markdown
ss = st.session_state
presence = sign_in.presence_of(ss, workspace, st.get_option("server.address"))
who = presence.person  # passed to every write: the library checks who may do it (lsqa.team)
may_adjudicate = presence.may("adjudicate")

st.html(ui.keys_script(), unsafe_allow_javascript=True)
st.markdown(view.STYLE, unsafe_allow_html=True)
st.title("Adjudicate")
st.caption(audit.FINAL_LABEL_RULE)

rows, kept_note = view.disagreements(workspace, who)
by_id = {d["judgment_id"]: d for d in rows}


# ------------------------------------------------------------------------------------ actions
def _on_screen(jid: str) -> bool:
    """Whether the disagreement a key or click was pressed on is the one on screen (else nothing is written)."""
    stale = view.stale_refusal(jid, ss.get("adj_shown"), ss.get(view.ON_SCREEN_KEY))
    if stale:
        ss.adj_refused = stale
    return stale is None


def _move(by: int):
    ss.adj_current = view.step(list(by_id), ss.get("adj_current"), by)
    ss.adj_ask = None


def _write(jid: str, label: str, replaces: str | None):
    """Set (or replace) the final label, then the next open disagreement; refused, the page stays."""
    ss.adj_ask = None
    try:
        ss.adj_msg = view.set_final(workspace, who, by_id[jid], label, ss.get("adj_note", ""), replaces)
    except LsqaError as exc:
        ss.adj_refused = f"Not saved: {exc}"
        return
    ss.adj_note = ""
    ss.adj_shown = None  # settled: a key pressed on this one from now on writes nothing
    ss.adj_settled = jid


def _decide(jid: str, label: str):
    """A label key: an open disagreement's final label at once; a settled one's asked first (the
    same key again confirms)."""
    if not _on_screen(jid):
        return
    does, ask = view.label_key(by_id[jid], label, ss.get("adj_ask"))
    if does == "write":
        _write(jid, label, ask and ask["replaces"])
    elif does == "ask":
        ss.adj_ask = ask
    else:
        ss.adj_ask, ss.adj_msg = None, "That is the final label already: nothing to replace."


def _replace(jid: str, label: str, replaces: str):
    if _on_screen(jid):
        _write(jid, label, replaces)


def _keep():
    ss.adj_ask = None


# ------------------------------------------------------------------------------------ the page
if "adj_msg" in ss:
    st.toast(ss.pop("adj_msg"))
if "adj_refused" in ss:
    st.error(ss.pop("adj_refused"))
if kept_note:
    st.info(kept_note)
if not rows:
    st.info("No disagreements: no verdict has two people's labels that differ.")
    st.stop()

here = view.held_place(workspace, who, may_adjudicate, ss, rows, ss.get("adj_current"), ss.pop("adj_settled", None))
if (ss.get("adj_ask") or {}).get("judgment_id") != here.current:
    ss.adj_ask = None
st.subheader(f"{len(rows)} disagreement{'' if len(rows) == 1 else 's'}, {here.n_open} not adjudicated yet")
picked = st.selectbox("Open a disagreement", here.ids, index=here.index - 1 if here.current else None,
                      format_func=view.choices(rows).get, placeholder="Choose one to open it")
if picked != here.current and picked is not None:  # no widget key: a new place is a new picker, on it
    here = view.held_place(workspace, who, may_adjudicate, ss, rows, picked)
    ss.adj_ask = None
ss.adj_current = here.current
ss.adj_shown = None  # until the disagreement is on screen, a key writes nothing
callbacks = {"move": _move, "decide": _decide, "replace": _replace, "keep": _keep}

if here.current is None:
    (st.info if here.held else st.success)(view.all_settled(len(rows), here.held))
else:
    d = here.row
    bar = view.decision_bar(here, may_adjudicate, ss.get("adj_ask"),
                            sign_in.cannot_act_note(presence, "adjudicate", "set final labels")
                            or "Read only: an adjudicator sets final labels.")
    with st.container(key="lsqa_keys"):
        nav = st.container(horizontal=True, vertical_alignment="center")
        for spec in bar.nav:
            nav.button(**{k: v for k, v in spec.items() if k != "on"}, on_click=callbacks[spec["on"]])
        nav.markdown(bar.position, unsafe_allow_html=True)  # stamped with the disagreement (keys.js)
        labels = st.container(horizontal=True, vertical_alignment="center")
        for spec in bar.labels + bar.confirm:
            labels.button(**{k: v for k, v in spec.items() if k != "on"}, on_click=callbacks[spec["on"]])
        if may_adjudicate:
            labels.text_input("Note (why)", key="adj_note", max_chars=audit.MAX_NOTE_CHARS, label_visibility="collapsed",
                              placeholder="note: why (saved with the final label; Enter or Esc gives the keys back)")
        if bar.ask:
            st.warning(bar.ask)
        if bar.note:
            st.caption(bar.note)
    if here.held_by:
        st.warning(f"{md(here.held_by)} has this disagreement open too: the first final label set stands.")
    shown = view.detail(workspace, d)
    st.caption(shown.caption)
    st.markdown(shown.question_html, unsafe_allow_html=True)
    st.markdown(shown.answers_html, unsafe_allow_html=True)
    ss.adj_shown = here.current  # its question and answers are drawn: a key pressed from now on writes on it
    ss[view.ON_SCREEN_KEY] = here.current  # sent back by the browser with every key: what it had drawn
    st.text_input("Item on screen", key=view.ON_SCREEN_KEY, label_visibility="collapsed")
    st.markdown(shown.judge)
    st.markdown("**People's labels**\n\n" + "\n".join(f"- {line}" for line in shown.labels))
    if shown.final:
        st.success(shown.final)
    if shown.history:
        st.markdown("**Final labels set, oldest first**\n\n" + "\n".join(f"- {line}" for line in shown.history))
    st.markdown(f"**Comments ({len(shown.comments)})**")
    for c in shown.comments:
        st.markdown(f"- {md(c['who'])} ({c['when']}): {md(c['text'])}")


def _add_comment(jid: str) -> None:
    try:
        audit.comment(workspace, who, jid, ss.get(f"adj_comment_{jid}", ""))
        ss.adj_msg = "Comment added"
        ss[f"adj_comment_{jid}"] = ""
    except LsqaError as exc:
        ss.adj_refused = f"Not saved: {exc}"


if here.current is not None and presence.may("review") and presence.name:
    st.text_area("Comment", key=f"adj_comment_{here.current}", max_chars=audit.MAX_COMMENT_CHARS)
    st.button("Add comment", key=f"adj_add_comment_{here.current}", on_click=_add_comment, args=(here.current,))

st.subheader("Every disagreement")
st.dataframe(view.table(rows), hide_index=True, width="stretch", key="adj_table",
             column_config={"open": st.column_config.LinkColumn("item", display_text="open on Audit")})
