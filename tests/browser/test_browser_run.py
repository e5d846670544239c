"""The Run page as a person uses it, in Debian's chromium (issue 12, defect 10).

On a workspace made with the full demo's definitions (``configs/demo_narrativeqa.toml``: a
200k-token ``extractive-fullbook``, a one-order ``lexical-sxs-fc``), the default form must start
a run that works; the form keeps what was typed when the person visits another page and comes
back; and a job's "calls so far" counts that job's calls, not those of a run beside it.
"""

from __future__ import annotations

import re
import tomllib

import pytest

from lsqa import store
from lsqa.config.study import run_config_from_dict
from lsqa.corpus.ingest import ingest_narrativeqa
from lsqa.study import pipeline
from tests.conftest import PROJECT_ROOT, TEST_DATA
from tests.support.browser import chromium, expect, need_browser, wait_idle
from tests.support.streamlit_server import serve

pytestmark = pytest.mark.browser
BOOK = "The Tale of Tom Kitten"


def _demo_definitions_config(**changes) -> dict:
    config = tomllib.loads((PROJECT_ROOT / "configs" / "demo_narrativeqa.toml").read_text(encoding="utf-8"))
    config["judges"] = [j for j in config["judges"] if j["name"] in ("lexical-autoais-fc", "lexical-sxs-fc")]
    return {**config, "documents": [BOOK], "max_questions": 2, **changes}


@pytest.fixture
def full_demo_names(workspace):
    """A workspace whose names carry the full demo's definitions (two questions of one book)."""
    need_browser()
    ingest_narrativeqa(workspace, TEST_DATA / "narrativeqa_slice")
    pipeline.run(workspace, run_config_from_dict(_demo_definitions_config()))
    return workspace


def _nav(page, name: str, heading: str) -> None:
    page.get_by_test_id("stSidebarNav").get_by_role("link", name=name, exact=True).click(timeout=60000)
    expect(page.get_by_role("heading", name=heading).first).to_be_visible(timeout=60000)
    wait_idle(page, 60000)


def test_run_page_default_form_state_and_own_calls(full_demo_names):
    ws = full_demo_names
    with serve(ws) as base, chromium() as browser:
        page = browser.new_page(viewport={"width": 1440, "height": 1600})
        page.goto(f"{base}/run?annotator=alice")
        expect(page.get_by_role("heading", name="Run a study")).to_be_visible(timeout=60000)
        wait_idle(page, 60000)
        start = page.get_by_role("button", name="Start run")
        expect(start).to_be_enabled()  # the default form is valid here, before any click
        expect(page.get_by_text("already has results made with a different definition")).to_have_count(0)

        # The form keeps its state across pages.
        max_q = page.get_by_label("Questions per book (0 = all)")
        max_q.fill("3")
        max_q.press("Enter")
        wait_idle(page)
        _nav(page, "Agreement", "Agreement")
        _nav(page, "Run", "Run a study")
        expect(page.get_by_label("Questions per book (0 = all)")).to_have_value("3")
        expect(page.get_by_text(re.compile(rf"^{re.escape(BOOK)} \(")).first).to_be_visible()

        page.get_by_role("button", name="Start run").click()
        job = page.get_by_text(re.compile(r"job-\d+-\d+ · run form · (done|failed)"))
        expect(job.first).to_be_visible(timeout=240000)
        expect(page.get_by_text(re.compile(r"job-\d+-\d+ · run form · done"))).to_be_visible()
        wait_idle(page, 60000)

        # Another run in the same workspace (a command-line run, a colleague's job) makes calls
        # after the job: the job's "calls so far" must not count them.
        other = _demo_definitions_config(max_questions=8, judges=[])  # questions the job did not answer
        made_by_other = pipeline.run(ws, run_config_from_dict(other)).to_dict()["calls_made"]
        assert made_by_other > 0
        _nav(page, "Overview", "lsqa")
        _nav(page, "Run", "Run a study")
        stored = page.get_by_text(re.compile(r"^LLM calls stored so far: [\d,]+")).first.inner_text()
        made = page.get_by_text(re.compile(r"^\d+ calls made, \d+ cached")).first.inner_text()
        n_stored = int(re.match(r"LLM calls stored so far: ([\d,]+)", stored).group(1).replace(",", ""))
        n_made = int(made.split(" ")[0])
        with store.connect(ws) as con:
            total = con.execute("SELECT count(*) FROM llm_calls").fetchone()[0]
        assert n_made > 0 and n_stored == n_made, (stored, made, total)
