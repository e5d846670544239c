"""The served dashboard keeps the workspace attached between an annotator's keys (``store.linger``), and an
``lsqa`` command in a terminal still gets the file at once: Debian's chromium driven by Playwright against
``streamlit run dashboard.py`` on a private copy of the small demo workspace with one annotator.

ana decides an item by key; between her keys the dashboard holds the file (DuckDB refuses another
process); ``lsqa status`` then runs with a 5 s lock timeout, well under the 15 s lingering, and
counts her review; her next key is written as before.
"""

from __future__ import annotations

import json
import re
import time

import duckdb
import pytest
from typer.testing import CliRunner

from lsqa import store
from lsqa.cli import app
from tests.support.browser import SHOWN_JS, expect, served_team, wait_for, wait_idle, written_by

pytestmark = pytest.mark.browser

WAIT = 60000


@pytest.fixture(scope="module")
def one_annotator(demo_workspace_template, tmp_path_factory):
    with served_team(demo_workspace_template, tmp_path_factory.mktemp("lingering"), (("ana", "annotator"),)) as served:
        yield served


def _shown(page) -> str | None:
    return page.evaluate(SHOWN_JS)


def _held_by_another_process(ws) -> bool:
    """DuckDB's own answer, without lsqa's waiting protocol (which would make the holder let go)."""
    try:
        duckdb.connect(str(ws), read_only=True).close()
    except duckdb.IOException as exc:
        assert "lock" in str(exc).lower(), exc
        return True
    return False


def test_a_command_gets_the_file_at_once_between_an_annotators_keys(one_annotator, demo_workspace_template,
                                                                    monkeypatch):
    ws, url, links, browser = (one_annotator[k] for k in ("ws", "url", "links", "browser"))
    with store.connect(demo_workspace_template) as con:  # the file served is a copy of it (no read of ws here)
        (reviews_before,) = con.execute("SELECT count(*) FROM human_reviews").fetchone()
    ana = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    ana.goto(f"{url}/audit?token={links['ana']}")
    expect(ana.get_by_text(re.compile("ana · "))).to_be_visible(timeout=WAIT)
    ana.wait_for_function(SHOWN_JS, timeout=WAIT)
    wait_idle(ana)
    first = _shown(ana)
    ana.keyboard.press("y")
    ana.wait_for_function(f"() => ({SHOWN_JS})() !== {json.dumps(first)}", timeout=WAIT)

    assert _held_by_another_process(ws)  # lingering: the decision is done, the file still attached

    monkeypatch.setenv("LSQA_LOCK_TIMEOUT", "5")
    started = time.monotonic()
    status = CliRunner().invoke(app, ["status", "--workspace", str(ws), "--json"])
    took = time.monotonic() - started
    assert status.exit_code == 0, status.output
    assert json.loads(status.output)["human_reviews"] == reviews_before + 1
    assert took < 3.0, f"lsqa status waited {took:.1f} s for the dashboard"

    wait_idle(ana)  # the next item on screen long enough to take a key (keys.js drops one that lands sooner)
    second = _shown(ana)
    ana.keyboard.press("n")
    wait_for(ana, lambda: len(written_by(ws, "ana")["reviews"]) == 2)
    assert [(r["judgment_id"], r["label"]) for r in written_by(ws, "ana")["reviews"]] == [(first, "yes"), (second, "no")]
