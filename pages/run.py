"""Run: start pipeline stages on chosen books, systems and judges, and follow them.

A run is a study config (the same keys as ``configs/*.toml``), built with the form or picked from
a file, and runs as a background job (``lsqa.study.jobs``): leave the page and come back, the job and its
progress are still here. Failed LLM calls are counted and listed, never a crashed page.
"""

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager

if PagesManager.uses_pages_directory:  # opened before app.py ran (pages/ auto-discovery): see app.py
    PagesManager.uses_pages_directory = False
    st.rerun()

from lsqa.dashboard import LsqaError, common, md_escape, run_view, sign_in  # noqa: E402

workspace = common.current_workspace()
ss = st.session_state
presence = sign_in.presence_of(ss, workspace, st.get_option("server.address"))
st.title("Run a study")
st.caption("Embedded offline models need no key; any litellm model string (e.g. `openai/gpt-4o-mini`) works "
           "with its API key in the server's environment — keys are never typed here or stored.")
choices = run_view.run_choices(workspace)
may_run = presence.may("run")  # a run spends the server's API keys: admins only (jobs.start checks it too)
if not may_run:
    st.info(sign_in.cannot_act_note(presence, "run", "start runs"))


def _start(config: dict, label: str) -> None:
    try:
        job_id = run_view.start_job(workspace, config, label=label, by=presence.person)
    except (LsqaError, ValueError) as exc:
        ss.run_error = str(exc)
        return
    ss.run_job = job_id
    st.query_params["job"] = job_id


def _before_start(config: dict | None, key: str) -> None:
    """What to know before Start: look-alike names and the study's plan (calls
    new vs cached, tokens and cost), shown with the form, never behind a toggle."""
    if config is None:
        return
    try:
        for warning in run_view.name_warnings(workspace, config):
            st.warning(warning)
        planned = run_view.plan(workspace, config)
    except (LsqaError, ValueError) as exc:
        st.warning(f"No plan: {md_escape(exc)}")
        return
    if not planned["stages"]:  # the run would only record what is there: no empty table
        st.caption(run_view.NOTHING_TO_CALL)
        return
    cost = "unknown" if planned["cost_usd"] is None else f"${planned['cost_usd']:.4f}"
    st.caption(f"Plan: {planned['calls']:,} calls ({planned['cached']:,} cached), {planned['input_tokens']:,} input "
               f"tokens, cost {cost}" + (f" + {planned['unpriced_calls']:,} calls without a price"
                                         if planned["unpriced_calls"] else ""))
    st.dataframe(planned["stages"], hide_index=True, width="stretch", key=f"plan_table_{key}",
                 column_config=common.headed({"cost_usd": st.column_config.NumberColumn("cost (USD)", format="$%.4f")}))
    for note in planned["notes"]:
        st.caption(note)


FORM_KEYS = ("run_mode", "run_books", "run_questions", "run_max_q", "run_sample", "run_seed", "run_file")


def keep_form_state() -> dict:
    """Streamlit drops a widget's value when its page is left: the form's values are copied to plain
    keys (``_run_*``) after each render and given back to the widgets when the page is shown again.

    Returns the form's starting rows (as the workspace defined those names) for the table editors."""
    start = ss.get("_run_defaults") or run_view.defaults(workspace)
    ss._run_defaults = start
    initial = {"run_mode": "Build one here", "run_books": [start["book"]] if start["book"] else [],
               "run_questions": "narrativeqa", "run_max_q": start["max_questions"], "run_sample": 200, "run_seed": 0}
    for key in FORM_KEYS:
        if key not in ss and (f"_{key}" in ss or key in initial):
            ss[key] = ss.get(f"_{key}", initial.get(key))
    for table in ("systems", "judges"):
        # The editor's own state holds edits relative to its data; when it was dropped (page left),
        # the edited rows of the last render become the new data.
        if f"run_{table}" not in ss:
            ss[f"_run_{table}_base"] = ss.get(f"_run_{table}_rows", start[table])
    return start


def remember_form_state(systems, judges) -> None:
    for key in FORM_KEYS:
        if key in ss:
            ss[f"_{key}"] = ss[key]
    if systems is not None:
        ss._run_systems_rows, ss._run_judges_rows = run_view.records(systems), run_view.records(judges)


keep_form_state()
systems = judges = None
mode = st.radio("Study", ["Build one here", "From a config file"], horizontal=True, key="run_mode")
if mode == "Build one here":
    titles = {b["id"]: f"{b['title']} ({b['questions']} questions)" for b in choices["books"]}
    books = st.multiselect("Books", list(titles), format_func=titles.get, key="run_books")
    c = st.columns(4)
    questions = c[0].selectbox("Questions", ["narrativeqa", "generate", "all"], key="run_questions")
    max_q = c[1].number_input("Questions per book (0 = all)", 0, 100_000, key="run_max_q")
    sample = c[2].number_input("Sample c per system pair", 1, 100_000, key="run_sample")
    seed = c[3].number_input("Seed", 0, 2**31 - 1, key="run_seed")
    models = choices["models"]
    st.caption("Embedded models: " + " · ".join(f"`{m}` {d}" for m, d in models.items()))
    st.markdown("**Systems** (model × context: none, retrieval:<tokens>, full, reference:1|2)")
    tokens = st.column_config.NumberColumn("max context tokens", min_value=1, step=1,
                                           help="A full book longer than this is an error, never truncated.")
    systems = st.data_editor(
        ss._run_systems_base, num_rows="dynamic", width="stretch", key="run_systems",
        column_order=["name", "model", "context", "max_context_tokens"],
        column_config={"max_context_tokens": tokens})
    st.markdown("**Judges**")
    judges = st.data_editor(
        ss._run_judges_base, num_rows="dynamic", width="stretch", key="run_judges",
        column_order=["name", "model", "kind", "context", "both_orders", "reference", "max_context_tokens"],
        column_config={"kind": st.column_config.SelectboxColumn("kind", options=choices["judge_kinds"]),
                       "reference": st.column_config.SelectboxColumn("reference", options=["1", "2", "both"]),
                       "both_orders": st.column_config.CheckboxColumn("both orders"),
                       "max_context_tokens": tokens})
    # The config is built and checked against the workspace's definitions on every render (edits
    # rerun the page), so the button's callback gets the current one and a problem shows before Start.
    config, problem = None, "Choose at least one book." if not books else ""
    if books:
        try:
            config = run_view.study_config(books=books, questions=questions, max_questions=max_q, sample=sample,
                                            seed=seed, systems=run_view.clean_numbers(run_view.records(systems)),
                                            judges=run_view.clean_numbers(run_view.records(judges)))
            run_view.check(workspace, config)
        except (LsqaError, ValueError) as exc:
            config, problem = None, str(exc)
    _before_start(config, "form")
    st.button("Start run", type="primary", key="run_start", disabled=config is None or not may_run, on_click=_start,
              args=(config, "run form"))
    if problem:
        st.warning(problem)
else:
    files = run_view.config_files()
    path = st.selectbox("Config", files, format_func=lambda p: p.name, key="run_file")
    try:
        text, data = run_view.read_config_file(path)
    except (LsqaError, ValueError) as exc:
        st.error(str(exc))
    else:
        st.code(text, language="toml")
        _before_start(data, "file")
        st.button("Start run", type="primary", key="run_start_file", disabled=not may_run, on_click=_start,
                  args=(data, str(path)))
remember_form_state(systems, judges)

if "run_error" in ss:
    st.error(ss.pop("run_error"))

st.header("Jobs")
if "run_job" not in ss and st.query_params.get("job"):
    ss.run_job = st.query_params.get("job")


# Refresh every second only while a job runs; when the last one ends, one full rerun stops it.
refreshing = any(j["status"] in ("queued", "running") for j in run_view.list_jobs(workspace))


@st.fragment(run_every=1.0 if refreshing else None)
def show_jobs() -> None:
    listed = run_view.list_jobs(workspace)
    if refreshing and not any(j["status"] in ("queued", "running") for j in listed):
        st.rerun()
    if not listed:
        st.info("No job started from this dashboard since it was launched. Past runs are listed below.")
        return
    for job in listed:
        mine = job["id"] == ss.get("run_job")
        with st.container(border=True):
            st.markdown(f"**{job['id']}** · {md_escape(job['label'])} · **{job['status']}**" + (" · (yours)" if mine else ""))
            if job["status"] in ("queued", "running"):
                st.progress(*run_view.progress_of(job))
            cost = run_view.cost_so_far(job)
            st.caption(f"LLM calls stored so far: {cost['calls']:,} ({cost['failed']:,} failed) · "
                       f"cost so far ${cost['cost_usd']:.4f}"
                       + (f" (+{cost['calls_unpriced']} calls without a known price)" if cost["calls_unpriced"] else ""))
            if job["status"] == "failed":
                st.error(job["error"])
                with st.expander("Traceback"):
                    st.code(job["trace"], language=None)
            if job["summary"]:
                s = job["summary"]
                st.caption(f"{s['calls_made']} calls made, {s['calls_cached']} cached, {s['calls_failed']} failed, "
                           f"{s['seconds']} s")
                st.dataframe(run_view.stage_rows(s), hide_index=True, width="stretch", key=f"job_{job['id']}")
                errors = [e for st_ in s["stages"] for e in st_["errors"]]
                if errors:
                    with st.expander(f"{len(errors)} errors"):
                        for e in errors:
                            st.text(e)


show_jobs()

st.header("Past runs in this workspace")
st.dataframe(run_view.run_history(workspace), hide_index=True, width="stretch", key="run_history",
             column_config=common.headed({"cost_usd": st.column_config.NumberColumn("cost (USD)", format="$%.4f")}))
