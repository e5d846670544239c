"""The Run page before Start, through Streamlit's AppTest: the study's plan (issue 15, part 2; shown
with the form, not behind a toggle, issue 34) and look-alike name warnings (issue 33), worked out
in lsqa.dashboard.run_view from the one library function the CLI uses; and the progress a running
job shows (issue 34)."""

from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from lsqa import store
from lsqa.dashboard import run_view
from lsqa.store import corpus
from tests.conftest import PROJECT_ROOT


@pytest.fixture
def ws(demo_workspace, monkeypatch) -> Path:
    monkeypatch.setenv("LSQA_WORKSPACE", str(demo_workspace))
    st.cache_data.clear()
    return demo_workspace


def test_run_page_shows_the_plan_before_start(ws):
    at = AppTest.from_file(str(PROJECT_ROOT / "app.py"), default_timeout=90)
    at.session_state["annotator"] = "alice"
    at.run()
    at.switch_page("pages/run.py")
    at.run()
    with store.connect(ws) as con:
        book = corpus.resolve_documents(con, ["The Tale of Two Bad Mice"])
    at.multiselect(key="run_books").set_value(book).run()
    at.number_input(key="run_max_q").set_value(2).run()
    assert not at.toggle, "the plan shows with the form, behind no toggle"
    assert not at.exception, [e.value for e in at.exception]
    frame = next(df.value for df in at.dataframe if "max_output_tokens" in df.value.columns)
    assert set(frame["stage"]) == {"answers", "judge:lexical-autoais-fc", "judge:lexical-sxs-fc"}
    # 2 questions × 3 systems; the demo answered these already with the same systems: all cached.
    answers = frame[frame["stage"] == "answers"]
    assert int(answers["calls"].sum()) in (0, 6)
    expected = run_view.plan(ws, {"documents": book, "questions": "narrativeqa", "max_questions": 2,
                                  "systems": [{"name": "extractive-nocontext", "model": "lsqa/extractive",
                                               "context": "none"}]})
    assert expected["cost_usd"] == 0.0
    captions = " ".join(c.value for c in at.caption)
    assert "Plan:" in captions and "input tokens" in captions
    assert not at.session_state["run_job"] if "run_job" in at.session_state else True  # nothing started


def test_a_study_the_workspace_holds_already_plans_nothing_and_says_so(ws):
    """The form's first study on the demo: the demo answered and judged those questions already, so the plan
    has no stage; the page says there is nothing to call instead of showing an empty table."""
    at = _page(ws)
    assert not at.exception, [e.value for e in at.exception]
    book = at.multiselect(key="run_books").value
    defaults = run_view.defaults(ws)
    config = run_view.study_config(books=book, questions="narrativeqa", max_questions=12, sample=200, seed=0,
                                   systems=run_view.clean_numbers(defaults["systems"]),
                                   judges=run_view.clean_numbers(defaults["judges"]))
    assert run_view.plan(ws, config)["stages"] == []
    assert run_view.NOTHING_TO_CALL in [c.value for c in at.caption]
    assert not [df for df in at.dataframe if "max_output_tokens" in df.value.columns]
    assert not at.button(key="run_start").disabled  # a run still records the study


LOOKALIKE = "extractive-noc\u043entext"   # Cyrillic о in place of the o of the demo's extractive-nocontext


def _page(ws, defaults: dict | None = None) -> AppTest:
    at = AppTest.from_file(str(PROJECT_ROOT / "app.py"), default_timeout=90)
    at.session_state["annotator"] = "alice"
    if defaults is not None:
        at.session_state["_run_defaults"] = defaults
    at.run()
    at.switch_page("pages/run.py")
    at.run()
    return at


def test_run_page_warns_of_a_lookalike_name_before_start(ws):
    """A system whose name looks like one the workspace holds: the warning `lsqa run` prints shows
    beside the form before Start, from lsqa.config.study.name_warnings (through run_view)."""
    from lsqa.config.study import name_warnings, run_config_from_dict
    defaults = run_view.defaults(ws)
    defaults = {**defaults, "systems": defaults["systems"][:1] + [{**defaults["systems"][0], "name": LOOKALIKE}]}
    at = _page(ws, defaults)
    assert not at.exception, [e.value for e in at.exception]
    warnings = [w.value for w in at.warning]
    lines = [w for w in warnings if "looks like" in w]
    assert len(lines) == 1, warnings
    assert "'extractive-noc\u043entext' looks like 'extractive-nocontext'" in lines[0]
    assert "U+043E CYRILLIC SMALL LETTER O" in lines[0]
    book = at.multiselect(key="run_books").value
    config = run_view.study_config(books=book, questions="narrativeqa", max_questions=12, sample=200, seed=0,
                                   systems=run_view.clean_numbers(defaults["systems"]),
                                   judges=run_view.clean_numbers(defaults["judges"]))
    assert lines == name_warnings(run_config_from_dict(config, source="run form"), ws)  # the CLI's very lines
    assert not at.button(key="run_start").disabled             # a warning, not a refusal

    plain = _page(ws)                                          # the demo's own names: no warning
    assert not [w.value for w in plain.warning if "looks like" in w.value]


def test_run_page_warns_of_a_lookalike_name_in_a_config_file(ws, tmp_path, monkeypatch):
    (tmp_path / "lookalike.toml").write_text(f"""documents = ["The Tale of Two Bad Mice"]
max_questions = 2
[[systems]]
name = "{LOOKALIKE}"
model = "lsqa/extractive"
context = "none"
""", encoding="utf-8")
    monkeypatch.setattr(run_view, "CONFIG_DIR", tmp_path)
    at = _page(ws)
    at.radio(key="run_mode").set_value("From a config file").run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("looks like 'extractive-nocontext'" in w.value for w in at.warning), [w.value for w in at.warning]
    assert any("Plan:" in c.value for c in at.caption)


def test_progress_text_of_a_running_job():
    from lsqa.dashboard.run_view import progress_of
    from lsqa.study.jobs import LOADING

    assert progress_of({"stage": "", "done": 0, "total": 0}) == (0.0, "starting")
    assert progress_of({"stage": LOADING, "done": 0, "total": 0})[1].startswith(LOADING)
    assert progress_of({"stage": "judge:j", "done": 0, "total": 0}) == (0.0, "judge:j: preparing the calls")
    assert progress_of({"stage": "judge:j", "done": 18, "total": 72}) == (0.25, "judge:j: 18 / 72 calls")


def test_the_shipped_streamlit_config_watches_no_files():
    import tomllib

    config = tomllib.loads((PROJECT_ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert config["server"]["fileWatcherType"] == "none"
