"""Leaderboard: Bradley-Terry strengths with bootstrap CIs per judge (paper Fig. 2-3, 6-7), win
probabilities, and AutoAIS accuracy with 95% CI per system and context (Table 1).

Recomputed from the workspace on every render: an audit action shows here at once.
"""

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager

if PagesManager.uses_pages_directory:  # opened before app.py ran (pages/ auto-discovery): see app.py
    PagesManager.uses_pages_directory = False
    st.rerun()

from lsqa.dashboard import OVERRIDES, chart_export, charts, common, headline, md_escape, report  # noqa: E402
from lsqa.dashboard import leaderboard_view as lv  # noqa: E402

workspace = common.current_workspace()
md = md_escape  # names come from config and import files: never Markdown
st.title("Leaderboard")

# Switches are mirrored in the URL so a stakeholder link shows the same view.
# Streamlit forgets a widget's value when its page is left; keep the switches in plain keys too.
ss = st.session_state
for _k, _param in (("lb_overrides", OVERRIDES), ("lb_exclude", "exclude_flagged")):
    if _k not in ss:  # first look in this session (a link), or back from another page
        ss[_k] = st.query_params[_param] == "1" if _param in st.query_params else ss.get(f"_{_k}", False)
SCALES = {"log": "e^β, log axis", "beta": "β", "linear": "e^β, linear axis"}
if "lb_scale" not in ss:
    ss.lb_scale = st.query_params.get("scale") if st.query_params.get("scale") in SCALES else ss.get("_lb_scale", "log")
if "lb_show" not in ss:
    ss.lb_show = lv.chosen_show(st.query_params.get("show"), ss.get("_lb_show"))
shown, _ = lv.leaderboard_judges(workspace)
choices = lv.judge_choices(shown)
if "lb_judge" not in ss or ss.lb_judge not in choices:
    ss.lb_judge = lv.chosen_judge(choices, st.query_params.get("judge"), ss.get("_lb_judge"))
top = st.columns([1, 1.4, 0.8])
top[0].selectbox("Judge", choices, key="lb_judge", format_func=lambda j: "All judges" if j == lv.ALL_JUDGES else j,
                 help="One judge's ranking at a time; “All judges” shows every judge on one page (slower).")
show = top[1].radio("Show", list(lv.SHOW), format_func=lv.SHOW.get, key="lb_show", horizontal=True,
                    help="The ranking table draws each strength as a bar; the chart is the paper's figure with its "
                         "CIs (it takes a new browser tab about a second longer to open).")
if "lb_style" not in ss:  # kept across pages and in links like the other switches
    ss.lb_style = st.query_params["style"] == "length" if "style" in st.query_params else ss.get("_lb_style", False)
style_on = top[2].toggle("Style control (length)", key="lb_style", help=lv.STYLE_HELP)
ss._lb_style = style_on
st.query_params["style"] = "length" if style_on else "none"
# Two rows of three: in one row of six, the labels were cut short ("Use human o…") at laptop widths.
counted = st.columns([1, 1.5, 0.8])
counted[0].toggle("Use human overrides", key="lb_overrides",
                  help="Where people reviewed a verdict, its final human label replaces the judge's: adjudicated, else "
                       "the people's majority; a tie keeps the judge's (docs/statistics.md).")
counted[1].toggle("Leave out questions with a flagged reference", key="lb_exclude",
                  help="Questions whose reference someone flagged as wrong drop out of rankings and accuracies.")
shown_as = st.columns([1, 1, 1.4])
rounds = shown_as[0].selectbox("Bootstrap rounds", [1000, 200, 0], key="lb_rounds",
                               help="Percentile bootstrap over comparisons (paper §3.2); 0 = no CI.")
by_question = shown_as[1].toggle("Resample whole questions", key="lb_byq",
                                 help="Bootstrap over questions instead of single comparisons.")
scale = shown_as[2].radio("Strength scale", list(SCALES), format_func=SCALES.get, key="lb_scale", horizontal=True,
                          help="A log axis (or β) keeps weak systems readable when one system dominates.")
if "lb_strengths" not in ss:  # kept across pages and in links like the other switches
    ss.lb_strengths = (st.query_params["strengths"] == "1" if "strengths" in st.query_params
                       else ss.get("_lb_strengths", False))
strengths = counted[2].toggle("Show strengths", key="lb_strengths",
                             help="Tiers and rank intervals come first; this adds e^β, its CI and β to the tables.")
ss._lb_overrides, ss._lb_exclude, ss._lb_scale, ss._lb_judge = ss.lb_overrides, ss.lb_exclude, ss.lb_scale, ss.lb_judge
ss._lb_show, ss._lb_strengths = show, strengths
st.query_params["judge"] = ss.lb_judge
st.query_params["show"] = show
st.query_params[OVERRIDES] = "1" if ss.lb_overrides else "0"
st.query_params["exclude_flagged"] = "1" if ss.lb_exclude else "0"
st.query_params["scale"] = scale
st.query_params["strengths"] = "1" if strengths else "0"
picked = lv.only(shown, ss.lb_judge)

board = lv.leaderboard(workspace, judges=None if ss.lb_judge == lv.ALL_JUDGES else [ss.lb_judge],
                              use_overrides=ss.lb_overrides, exclude_flagged=ss.lb_exclude, bootstrap=rounds,
                              by_question=by_question)
said = headline.for_board(workspace, board)
more = lv.one_minute(workspace, said)
if said:  # the answer in one paragraph first: the same words as at the top of `lsqa report`
    with st.container(border=True):
        for _judge, _said in said.items():
            st.markdown(md(_said["text"]))
            st.caption(md(more[_judge]["agreement"]["text"]))
    for _judge, _more in more.items():
        with st.expander(f"Examples and book by book — {md(_judge)}"):
            st.markdown("**Examples: where the top systems were judged most differently**")
            st.caption(lv.EXAMPLES_HELP)
            st.markdown(lv.example_markdown(_more["examples"]) or "No question on which the top systems' answers "
                        "were judged differently.")
            st.markdown("**Book by book: does the order hold?**")
            if _more["books"]:
                st.markdown(md(_more["books"]["statement"]))
                st.caption(md(f"Overall order: {_more['books']['overall']}. ") + lv.CONSISTENCY_HELP)
                st.dataframe(_more["books"]["rows"], hide_index=True, width="stretch", key=f"lb_books_{_judge}")
            else:
                st.caption("Fewer than two systems: no order.")
st.caption(("Labels: human where reviewed, else judge. " if board["use_overrides"] else "Labels: the judges'. ")
           + (f"Left out: {board['n_flagged_questions']} questions with a flagged reference."
              if board["exclude_flagged"] else f"{board['n_flagged_questions']} questions have a flagged reference."))

if board["agreement_only_judges"]:
    st.caption(f"Not ranked here: {len(board['agreement_only_judges'])} LLMBar judges, which compare two outputs "
               "of an instruction set rather than QA systems; their agreement with humans is on the Agreement page.")
if not board["rankings"] and not board["accuracy"]:
    st.info("No verdicts yet: run judges on the Run page.")

view = lv.View(use_overrides=board["use_overrides"], exclude_flagged=board["exclude_flagged"], bootstrap=rounds,
               by_question=by_question, n_flagged_questions=board["n_flagged_questions"])
when = lv.now_utc()
subtitle = lv.subtitle(view, when)


def show_changes(judge: str, result: dict) -> None:
    """What the switches changed for this judge: ranks moved and CI widths, against the plain view."""
    base = lv.baseline(workspace, judge, view)
    if base is None:
        return
    changes = lv.switch_changes(base, result)
    with st.container(border=True):
        st.markdown(f"**What the switches changed** — {md(changes['summary'])}")
        st.dataframe(changes["rows"], hide_index=True, width="stretch", key=f"lb_changes_{judge}")


def downloads(judge: str, figures: dict, tables: dict, what: str) -> None:
    """HTML (plotly.js inside, opens offline), PNG and CSV; file names and contents carry the view.

    ``figures``: label and a function that draws the figure. The files (and the figures) are made
    only when a button is pressed (a callable), not on every render."""
    buttons = [(f"{label} (HTML)", lambda f=draw, n=name: charts.to_html(f(), title=n), "html", "text/html", key)
               for key, (label, draw) in figures.items() for name in [lv.file_name(key, judge, view, when, "html")]]
    buttons += [(f"{label} (PNG)", lambda f=draw: chart_export.to_png(f()), "png", "image/png", key)
                for key, (label, draw) in figures.items()]
    buttons += [(f"{label} (CSV)", lambda r=rows: common.to_csv(lv.with_view(r, judge, view, when)), "csv",
                 "text/csv", key) for key, (label, rows) in tables.items()]
    # One row that wraps, each button as wide as its label: equal columns cut the labels ("Win matrix…").
    row = st.container(horizontal=True)
    for label, data, ext, mime, key in buttons:
        row.download_button(label, data, lv.file_name(key, judge, view, when, ext), mime,
                            key=f"lb_dl_{what}_{key}_{ext}_{judge}", on_click="ignore")
    # The stakeholder report, the same file as `lsqa report --judge J --bootstrap <rounds>` (made on click), its
    # Audit links leading where this page's own lead.
    page_url = st.context.url  # read now: the file is made on click, outside this run
    row.download_button("Report (HTML)", lambda: report.build(workspace, judge, bootstrap=rounds, address=page_url),
                        report.file_name(judge, when), "text/html", key=f"lb_dl_{what}_report_{judge}",
                        on_click="ignore", help=report.HELP)


if board["rankings"]:
    st.header("Side-by-side rankings")
    st.caption(md(subtitle))
for entry in board["rankings"]:
    judge = entry["judge"]
    st.subheader(md(judge))
    if entry["error"]:
        st.warning(entry["error"])
        continue
    result = entry["result"]
    st.caption(f"{md(judge)}: {result['n_comparisons']:,} comparisons ({result['n_excluded']:,} 'none' left out)")
    st.caption(md(headline.basis_text(said[judge]["figures"])))
    if view.switched:
        show_changes(judge, result)
    rows = lv.ranking_rows(result)
    wins = lv.win_rows(result)
    if show == "chart":
        st.plotly_chart(charts.strength_bars(result, scale=scale, subtitle=subtitle), key=f"lb_bars_{judge}")
    elif show == "win":
        st.caption("P(row beats column) = e^β_row / (e^β_row + e^β_column), from the fitted strengths (§3.2).")
        st.dataframe(lv.win_text_rows(wins), hide_index=True, width="stretch", key=f"lb_wins_{judge}")
    else:
        table_rows, columns, bar = lv.with_strength_bar(rows, result, scale, strengths=strengths)
        st.caption(lv.TIERS_HELP)
        st.dataframe(table_rows, hide_index=True, width="stretch", key=f"lb_table_{judge}", column_order=columns,
                     column_config={bar["name"]: st.column_config.ProgressColumn(
                         bar["name"], min_value=bar["low"], max_value=bar["high"], format=bar["format"],
                         help="The strength on the scale chosen above: β on the log and β scales, e^β on the "
                              "linear one."),
                         "strength": st.column_config.TextColumn("e^β"),
                         lv.CI_TEXT: st.column_config.TextColumn(help="95% bootstrap CI of e^β (§3.2)"),
                         "beta": st.column_config.TextColumn("β")})
        if result.get("adjacent"):
            st.caption(lv.NEIGHBOURS_HELP)
            st.dataframe(lv.neighbour_rows(result), hide_index=True, width="stretch", key=f"lb_adjacent_{judge}")
    if style_on:
        style = lv.style_controlled(workspace, judge, use_overrides=view.use_overrides,
                                           exclude_flagged=view.exclude_flagged, bootstrap=rounds,
                                           by_question=by_question)
        st.markdown("**Style-controlled: answer length taken out**")
        if style["error"]:
            st.info(md(style["error"]))
        else:
            st.caption(md(style["summary"]))
            st.dataframe(style["rows"], hide_index=True, width="stretch", key=f"lb_style_{judge}")
    downloads(judge, {"ranking": ("Chart", lambda r=result: charts.strength_bars(r, scale=scale, subtitle=subtitle)),
                      "win_probability": ("Win matrix", lambda r=result: charts.win_matrix(r, subtitle=subtitle))},
              {"ranking": ("Ranking", lv.with_ranks(rows, result)), "win_probability": ("Win matrix", wins)}, "rank")


def accuracy_chart(rows: list[dict], judge: str):
    return charts.accuracy_bars(rows, title=f"Accuracy with 95% CI — {charts.plain(judge)}", subtitle=subtitle)


if board["accuracy"]:
    st.header("Accuracy (yes/no judges)")
for entry in board["accuracy"]:
    judge = entry["judge"]
    st.subheader(md(judge))
    if not entry["rows"]:
        st.info("No decided verdicts.")
        continue
    st.caption(md(headline.basis_text(said[judge]["figures"])))
    table = lv.accuracy_with_ranks(lv.accuracy_rows(judge, entry["rows"]), entry["rows"])
    if show == "chart":
        st.plotly_chart(accuracy_chart(entry["rows"], judge), key=f"lb_acc_{judge}")
    st.dataframe(table, hide_index=True, width="stretch", key=f"lb_acc_table_{judge}",
                 column_order=["tier", "system", lv.RANKS, "context", "n",
                               *(["accuracy %", "± (95% CI)"] if strengths else [])],
                 column_config={"accuracy %": st.column_config.ProgressColumn("accuracy %", min_value=0, max_value=100,
                                                                              format="%.3g")})
    downloads(judge, {"accuracy": ("Chart", lambda r=entry["rows"], j=judge: accuracy_chart(r, j))},
              {"accuracy": ("Table", table)}, "acc")


def _corrected_section():
    """Judge-only and corrected (PPI++) side by side; adjacent pairs; rank flips."""
    from lsqa.dashboard import corrected_view

    st.header("Corrected by audits")
    st.caption("Random or active audits (Audit page, or `lsqa import-reviews` with inclusion probabilities) "
               "correct the judge's errors: the corrected intervals include them, the judge-only ones do not.")
    for entry in corrected_view.board(workspace, picked):
        judge = entry["judge"]
        st.subheader(md(judge))
        if entry["error"]:
            st.info(entry["error"])
            continue
        st.caption(entry["summary"])  # numbers and queue names only
        for warning in entry["warnings"]:
            st.warning(md(warning))
        st.dataframe(entry["table"], hide_index=True, width="stretch", key=f"lb_corr_{judge}",
                     column_order=lv.corrected_columns(entry["table"], strengths))
        if entry["adjacent"]:
            st.dataframe(entry["adjacent"], hide_index=True, width="stretch", key=f"lb_corr_adj_{judge}")
        if entry["flips"]:
            st.markdown("**Rank flips** between the judge-only, corrected and overrides rankings (a question opens "
                        "its verdict on the Audit page)")
            st.markdown(lv.flip_markdown(entry["raw_flips"], binary=entry["estimand"] == "accuracy"))


_corrected_section()
