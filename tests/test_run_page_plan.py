"""The Run page shows a study's plan before Start (issue 15, part 2), through Streamlit's AppTest."""

from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from lsqa import store
from lsqa.dashboard import page_data
from lsqa.store import corpus

from .conftest import PROJECT_ROOT


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
    at.toggle(key="plan_form").set_value(True).run()
    assert not at.exception, [e.value for e in at.exception]
    frame = next(df.value for df in at.dataframe if "max_output_tokens" in df.value.columns)
    assert set(frame["stage"]) == {"answers", "judge:lexical-autoais-fc", "judge:lexical-sxs-fc"}
    # 2 questions × 3 systems; the demo answered these already with the same systems: all cached.
    answers = frame[frame["stage"] == "answers"]
    assert int(answers["calls"].sum()) in (0, 6)
    expected = page_data.study_plan(ws, {"documents": book, "questions": "narrativeqa", "max_questions": 2,
                                         "systems": [{"name": "extractive-nocontext", "model": "lsqa/extractive",
                                                      "context": "none"}]})
    assert expected["cost_usd"] == 0.0
    captions = " ".join(c.value for c in at.caption)
    assert "Plan:" in captions and "input tokens" in captions
    assert not at.session_state["run_job"] if "run_job" in at.session_state else True  # nothing started
