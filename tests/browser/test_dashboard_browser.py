"""The dashboard in a real browser: Debian's Chromium headless shell driven by Playwright against `streamlit
run app.py`.

An annotator opens the audit queue by URL, moves and decides with the keyboard only, and the
Leaderboard (with human overrides on) shows the changed ranking. Screenshots of every page go to
``LSQA_SCREENSHOTS`` (or the test's tmp folder); ``docs/screenshots/`` holds a copy for the README.

Skips when the headless shell (a system package, `make browser`) is missing, unless ``LSQA_REQUIRE_BROWSER=1``
(CI), where it fails; a missing Playwright (pinned in requirements.txt) always fails.
Playwright never downloads a browser here: ``executable_path`` points at /usr/bin/chromium-headless-shell.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from lsqa import audit, store
from lsqa.store import reviews as reviews_store
from tests.support.browser import (
    chromium,
    cut_labels,
    expect,
    need_browser,
    wait_animations,
    wait_charts_drawn,
    wait_idle,
)
from tests.support.streamlit_server import serve

pytestmark = pytest.mark.browser

JUDGE = "lexical-sxs-fc"
PAGES = {"overview": "", "run": "run", "audit": f"audit?judge={JUDGE}", "reference_errors": "reference_errors",
         "agreement": "agreement", "leaderboard": "leaderboard?show=chart", "corpus": "corpus"}
TITLES = {"overview": "lsqa — long-span question answering", "run": "Run a study", "audit": "Audit judge verdicts",
          "reference_errors": "Reference errors", "agreement": "Agreement", "leaderboard": "Leaderboard",
          "corpus": "Corpus"}


@pytest.fixture
def browser_ready():
    need_browser()  # before the demo workspace is built: a skip should cost nothing


@pytest.fixture
def server(browser_ready, demo_workspace):
    with serve(demo_workspace) as url:
        yield url, demo_workspace


@pytest.fixture
def shots(tmp_path) -> Path:
    folder = Path(os.environ.get("LSQA_SCREENSHOTS") or tmp_path / "screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _comparisons(page, judge: str) -> int:
    """The comparison count the Leaderboard shows for a judge ("<judge>: 274 comparisons (…)")."""
    text = page.get_by_text(re.compile(rf"^{re.escape(judge)}: [\d,]+ comparisons")).first.inner_text()
    return int(text.split(": ", 1)[1].split(" ")[0].replace(",", ""))


def test_audit_with_the_keyboard_changes_the_leaderboard(server, shots):
    base, ws = server
    first = audit.queue(ws, audit.Filters(judges=(JUDGE,)), "alice")["rows"][0]
    item = audit.item(ws, first["id"])
    # Decide against the judge: a 'none' becomes "A is better" (one more comparison), a decisive
    # verdict becomes 'none' (one fewer) — either way the Leaderboard's count moves.
    key, delta = ("a", +1) if item["label"] == "none" else ("x", -1)

    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1440, "height": 1600})
        page.goto(f"{base}/leaderboard?annotator=alice&overrides=1&judge={JUDGE}")
        expect(page.get_by_role("heading", name="Leaderboard")).to_be_visible(timeout=60000)
        expect(page.get_by_text(re.compile(rf"^{JUDGE}: [\d,]+ comparisons"))).to_be_visible(timeout=60000)
        before = _comparisons(page, JUDGE)

        page.goto(f"{base}/audit?annotator=alice&judge={JUDGE}")
        expect(page.get_by_text(re.compile(r"Item 1 of"))).to_be_visible(timeout=60000)
        expect(page.get_by_text(item["question"]).first).to_be_visible()
        wait_idle(page)
        page.keyboard.press("j")  # the page has the focus, not an input: shortcuts are live
        expect(page.get_by_text(re.compile(r"Item 2 of"))).to_be_visible(timeout=30000)
        wait_idle(page)
        page.keyboard.press("k")
        expect(page.get_by_text(re.compile(r"Item 1 of"))).to_be_visible(timeout=30000)
        wait_idle(page)
        page.keyboard.press(key)
        saved = page.get_by_text(re.compile(r"Saved: .* \(overrides the judge\)"))
        refused = page.locator("#lsqa-keys-note").filter(has_text="Not saved")
        expect(saved.or_(refused).first).to_be_visible(timeout=30000)
        if refused.is_visible():  # the page said the key came while the item was changing: as a person would,
            wait_idle(page)      # press it again once the page is quiet (nothing was written meanwhile)
            page.keyboard.press(key)
        expect(saved).to_be_visible(timeout=30000)
        with store.connect(ws) as con:
            saved = reviews_store.reviews(con, item["id"])
        assert [(r["annotator"], r["action"]) for r in saved] == [("alice", "override")]

        page.goto(f"{base}/leaderboard?annotator=alice&overrides=1&judge={JUDGE}")
        expect(page.get_by_text(re.compile(rf"^{JUDGE}: [\d,]+ comparisons"))).to_be_visible(timeout=60000)
        assert _comparisons(page, JUDGE) == before + delta

        # A second annotator's reviews (through lsqa.audit, as the page would save them) so that
        # the Agreement screenshot has humans to compare with.
        for row in audit.queue(ws, audit.Filters(judges=(JUDGE,)), "bob")["rows"][:12]:
            audit.confirm(ws, "bob", row["id"])
        charts = {}
        for name, path in PAGES.items():
            page.goto(f"{base}/{path}{'&' if '?' in path else '?'}annotator=alice")
            expect(page.get_by_role("heading", name=TITLES[name]).first).to_be_visible(timeout=60000)
            wait_idle(page, 60000)
            expect(page.locator('[data-testid="stException"]')).to_have_count(0)  # no traceback on the page
            charts[name] = wait_charts_drawn(page)
            if os.environ.get("LSQA_SCREENSHOTS"):
                wait_animations(page)  # pictures for the README: let transitions end too
            page.screenshot(path=str(shots / f"{name}.png"), full_page=True)
            # Every label reads whole on a laptop's screen too, not cut short ("Use human o…"); the Audit note
            # field's hint was cut at the wider screen only (the narrower one wraps its row).
            for width in (1280, 1440):
                assert cut_labels(page, width) == [], (name, width)
    assert sorted(p.name for p in shots.glob("*.png")) == sorted(f"{n}.png" for n in PAGES)
    assert charts["leaderboard"] > 0, charts  # the Leaderboard draws its strengths with CIs
