"""Leaderboard: Bradley-Terry strengths with bootstrap CIs per judge (paper Fig. 2-3, 6-7), win
probabilities, and AutoAIS accuracy with 95% CI per system and context (Table 1).

Recomputed from the workspace on every render: an audit action shows here at once.
"""

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager

if PagesManager.uses_pages_directory:  # opened before app.py ran (pages/ auto-discovery): see app.py
    PagesManager.uses_pages_directory = False
    st.rerun()

from lsqa import charts, page_data, highlight  # noqa: E402

workspace = page_data.current_workspace()
md = highlight.md_escape  # names come from config and import files: never Markdown
st.title("Leaderboard")

# Switches are mirrored in the URL so a stakeholder link shows the same view.
# Streamlit forgets a widget's value when its page is left; keep the switches in plain keys too.
ss = st.session_state
for _k, _param in (("lb_overrides", "overrides"), ("lb_exclude", "exclude_flagged")):
    if _k not in ss:  # first look in this session (a link), or back from another page
        ss[_k] = st.query_params[_param] == "1" if _param in st.query_params else ss.get(f"_{_k}", False)
controls = st.columns([1.3, 1.6, 1, 1])
controls[0].toggle("Use human overrides", key="lb_overrides",
                   help="Where an annotator reviewed a verdict, their latest label replaces the judge's.")
controls[1].toggle("Leave out questions with a flagged reference", key="lb_exclude")
rounds = controls[2].selectbox("Bootstrap rounds", [1000, 200, 0], key="lb_rounds",
                               help="Percentile bootstrap over comparisons (paper §3.2); 0 = no CI.")
by_question = controls[3].toggle("Resample whole questions", key="lb_byq",
                                 help="Bootstrap over questions instead of single comparisons.")
ss._lb_overrides, ss._lb_exclude = ss.lb_overrides, ss.lb_exclude
st.query_params["overrides"] = "1" if ss.lb_overrides else "0"
st.query_params["exclude_flagged"] = "1" if ss.lb_exclude else "0"

board = page_data.leaderboard(workspace, use_overrides=ss.lb_overrides, exclude_flagged=ss.lb_exclude, bootstrap=rounds,
                              by_question=by_question)
st.caption(("Labels: human where reviewed, else judge. " if board["use_overrides"] else "Labels: the judges'. ")
           + (f"Left out: {board['n_flagged_questions']} questions with a flagged reference."
              if board["exclude_flagged"] else f"{board['n_flagged_questions']} questions have a flagged reference."))

if not board["rankings"] and not board["accuracy"]:
    st.info("No verdicts yet: run judges on the Run page.")

st.header("Side-by-side rankings")
for entry in board["rankings"]:
    judge = entry["judge"]
    st.subheader(md(judge))
    if entry["error"]:
        st.warning(entry["error"])
        continue
    result = entry["result"]
    st.caption(f"{md(judge)}: {result['n_comparisons']:,} comparisons ({result['n_excluded']:,} 'none' left out)")
    left, right = st.columns([3, 2])
    fig = charts.strength_bars(result)
    left.plotly_chart(fig, key=f"lb_bars_{judge}")
    heat = charts.win_matrix(result)
    right.plotly_chart(heat, key=f"lb_heat_{judge}")
    rows = page_data.ranking_rows(result)
    st.dataframe(rows, hide_index=True, width="stretch", key=f"lb_table_{judge}")
    d = st.columns(4)
    d[0].download_button("Chart (HTML)", charts.to_html(fig), f"ranking_{judge}.html", "text/html",
                         key=f"lb_dl_fig_{judge}", on_click="ignore")
    d[1].download_button("Win matrix (HTML)", charts.to_html(heat), f"win_probability_{judge}.html", "text/html",
                         key=f"lb_dl_heat_{judge}", on_click="ignore")
    d[2].download_button("Ranking (CSV)", page_data.to_csv(rows), f"ranking_{judge}.csv", "text/csv",
                         key=f"lb_dl_csv_{judge}", on_click="ignore")
    d[3].download_button("Win matrix (CSV)", page_data.to_csv(page_data.win_rows(result)),
                         f"win_probability_{judge}.csv", "text/csv", key=f"lb_dl_wcsv_{judge}", on_click="ignore")

st.header("Accuracy (yes/no judges)")
for entry in board["accuracy"]:
    judge = entry["judge"]
    st.subheader(md(judge))
    if not entry["rows"]:
        st.info("No decided verdicts.")
        continue
    table = page_data.accuracy_rows(judge, entry["rows"])
    left, right = st.columns([3, 2])
    fig = charts.accuracy_bars(entry["rows"], title=f"Accuracy with 95% CI — {judge}")
    left.plotly_chart(fig, key=f"lb_acc_{judge}")
    right.dataframe(table, hide_index=True, width="stretch", key=f"lb_acc_table_{judge}",
                    column_order=["context", "system", "n", "accuracy %", "± (95% CI)"])
    d = st.columns(4)
    d[0].download_button("Chart (HTML)", charts.to_html(fig), f"accuracy_{judge}.html", "text/html",
                         key=f"lb_dl_acc_{judge}", on_click="ignore")
    d[1].download_button("Table (CSV)", page_data.to_csv(table), f"accuracy_{judge}.csv", "text/csv",
                         key=f"lb_dl_acccsv_{judge}", on_click="ignore")
