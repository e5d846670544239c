"""`make run` serves the dashboard, and app.py runs: in-process through Streamlit's AppTest, and
through the same streamlit command on a free 127.0.0.1 port, opened as a browser opens it (the
websocket session that runs the script, scripts/app_renders.py). The index page and the health
endpoint answer even when app.py raises, so neither is checked alone."""

from __future__ import annotations

import importlib.util
import sys
import tomllib

from streamlit.testing.v1 import AppTest

from lsqa.corpus import ingest
from tests.conftest import PROJECT_ROOT, TEST_DATA
from tests.support.streamlit_server import serve

OVERVIEW_TITLE = "lsqa — long-span question answering"
PAGES = ["Overview", "Run", "Audit", "Adjudicate", "Reference errors", "Agreement", "Leaderboard", "Corpus"]


def _app_renders():
    spec = importlib.util.spec_from_file_location("app_renders", PROJECT_ROOT / "scripts" / "app_renders.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up while being built
    spec.loader.exec_module(module)
    return module


def test_app_runs_on_the_demo_workspace(demo_workspace, monkeypatch):
    monkeypatch.setenv("LSQA_WORKSPACE", str(demo_workspace))
    at = AppTest.from_file(str(PROJECT_ROOT / "app.py"), default_timeout=90)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert [t.value for t in at.title] == [OVERVIEW_TITLE]
    assert at.caption[0].value == f"workspace: {demo_workspace}"
    # What the small demo's study (configs/demo_small.toml) made: its systems and judges, and
    # max_questions questions of each of its books answered.
    study = tomllib.loads((PROJECT_ROOT / "configs" / "demo_small.toml").read_text(encoding="utf-8"))
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["systems"] == str(len(study["systems"])) and metrics["judges"] == str(len(study["judges"]))
    answered = len(study["documents"]) * study["max_questions"]
    assert f" · {answered} questions answered · " in at.caption[1].value
    assert int(metrics["verdicts"].replace(",", "")) > 0
    assert at.text_input(key="annotator").label == "Annotator"


def test_streamlit_serves_app(workspace):
    added = ingest.ingest_narrativeqa(workspace, TEST_DATA / "narrativeqa_slice").added
    with serve(workspace, fresh=True) as url:  # a new interpreter, as `make run` starts: not a fork
        seen = _app_renders().render(url, timeout_s=90)
    assert seen.problems(OVERVIEW_TITLE) == []
    assert seen.page_title == "lsqa — long-span QA workbench"
    assert f"questions: {added['questions']}" in seen.texts and f"workspace: {workspace}" in seen.texts
