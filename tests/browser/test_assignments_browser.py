"""My assignments in a real browser (issue 34): an annotator's Audit page opens on the verdicts
assigned to them, and a decision from the keyboard (a fragment's rerun) moves the sidebar's
"k of n of my assignments done" at once."""

from __future__ import annotations

import re
import shutil

import pytest

from lsqa import audit, store, team
from tests.support.browser import chromium, expect, need_browser, wait_idle
from tests.support.streamlit_server import serve

pytestmark = pytest.mark.browser


def test_a_key_on_my_assignments_counts_in_the_sidebar_line(demo_workspace_template, tmp_path):
    need_browser()
    ws = tmp_path / "demo.duckdb"
    shutil.copy(demo_workspace_template, ws)
    ana = team.add_person(ws, "ana", "annotator")
    team.add_person(ws, "boss", "admin")
    audit.assign(ws, "lexical-autoais-fc", ["ana"], by=team.Person("boss", "admin"), per_item=1, count=3)
    mine = [r["id"] for r in audit.queue.uncached(ws, audit.Filters(reviewed=audit.ASSIGNED), "ana")["rows"]]
    with serve(ws) as url, chromium() as b:
        page = b.new_context(viewport={"width": 1280, "height": 800}).new_page()
        page.goto(f"{url}/audit?token={ana['token']}")
        expect(page.get_by_text(re.compile("0 of 3 of my assignments done"))).to_be_visible(timeout=60000)
        wait_idle(page)
        page.mouse.click(900, 500)
        page.keyboard.press("v")  # confirm the judge's label
        expect(page.get_by_text(re.compile("1 of 3 of my assignments done"))).to_be_visible(timeout=30000)
        wait_idle(page)
    with store.connect(ws) as con:
        reviewed = [r[0] for r in con.execute("SELECT judgment_id FROM human_reviews WHERE annotator = 'ana'").fetchall()]
    assert reviewed == [mine[0]]  # the first of ana's assignments, the one on screen
