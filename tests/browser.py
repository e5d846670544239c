"""What every browser test uses: Debian's chromium (never downloaded: ``executable_path`` points at
/usr/bin/chromium), the check that it and Playwright are here, and waits for a Streamlit page to be done.

Skips when Debian's chromium (a system package) is missing, unless ``LSQA_REQUIRE_BROWSER=1`` (CI), where
it fails; a missing Playwright (pinned in requirements.txt) always fails.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import time
from pathlib import Path
from typing import Callable, Iterator

import pytest

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
# The item on screen: the one its question and answer cards are stamped with (item_cards._stamp), if
# they agree with the decision bar's stamp (the item its buttons write on, item_cards.stamped); None
# between two items.
SHOWN_JS = """() => { const bar = document.querySelector('.st-key-lsqa_keys [data-lsqa-item]');
  const cards = new Set(Array.from(document.querySelectorAll('[data-lsqa-item]')).map(e => e.dataset.lsqaItem));
  return bar && cards.size === 1 ? bar.dataset.lsqaItem : null; }"""


def need_browser():
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError as exc:  # pinned in requirements.txt: a broken install, never a skip
        pytest.fail(f"the playwright package (requirements.txt) cannot be imported: {exc}")
    if not CHROMIUM.exists() and not shutil.which("chromium"):
        missing = "Debian chromium is not installed (apt-get install -y chromium; `make browser`)"
        if os.environ.get("LSQA_REQUIRE_BROWSER") == "1":
            pytest.fail(f"LSQA_REQUIRE_BROWSER=1 but {missing}")
        pytest.skip(missing)


@contextlib.contextmanager
def served_team(template: Path, folder: Path, people: tuple[tuple[str, str], ...],
                prepare: Callable[[Path, dict[str, str]], None] | None = None) -> Iterator[dict]:
    """A team at the dashboard: a copy of the demo workspace ``template`` in ``folder`` with ``people``
    ((name, role), each given a sign-in link), ``prepare(ws, links)`` run on it before it is served,
    then ``streamlit run`` and one chromium. Yields ``{"ws", "url", "links", "browser"}``."""
    need_browser()
    from playwright.sync_api import sync_playwright

    from lsqa import team

    from .streamlit_server import serve

    ws = folder / "demo.duckdb"
    shutil.copy(template, ws)
    links = {name: team.add_person(ws, name, role)["token"] for name, role in people}
    if prepare is not None:
        prepare(ws, links)
    with serve(ws) as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield {"ws": ws, "url": url, "links": links, "browser": browser}
        finally:
            browser.close()


def wait_for(page, check, timeout_ms: int = 30000) -> None:
    """Poll ``check()`` (e.g. the workspace: a write is saved by the page's rerun) until it is true,
    letting the page run between polls; fails if it never is."""
    for _ in range(timeout_ms // 100):
        if check():
            return
        page.wait_for_timeout(100)
    assert check()


def wait_idle(page, timeout_ms: int = 30000) -> None:
    """Until the script run is over and the page has stopped changing: a key pressed while buttons are
    still being mounted can reach none of their shortcuts."""
    page.wait_for_timeout(200)
    page.wait_for_function(
        "() => document.querySelector('[data-test-script-state]')?.getAttribute('data-test-script-state')"
        " === 'notRunning'", timeout=timeout_ms)
    last, stable_since = -1, time.monotonic()
    while time.monotonic() - stable_since < 0.8:
        n = page.locator("button").count()
        if n != last:
            last, stable_since = n, time.monotonic()
        page.wait_for_timeout(100)


def wait_charts_drawn(page, timeout_ms: int = 30000) -> int:
    """Until every Plotly chart on the page has drawn its SVG (instead of a fixed sleep); how many.
    A chart whose code is still loading is a skeleton, not yet a chart: wait for those too."""
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stMain\"] [data-testid=\"stSkeleton\"]')"
        " && [...document.querySelectorAll('[data-testid=\"stPlotlyChart\"]')]"
        ".every(c => c.querySelector('.js-plotly-plot svg.main-svg'))", timeout=timeout_ms)
    return page.locator('[data-testid="stPlotlyChart"]').count()


def written_by(ws: Path, who: str) -> dict[str, list[dict]]:
    """Everything ``who`` wrote in workspace ``ws``: reviews, flags, skips."""
    from lsqa import store
    from lsqa.store import reviews as reviews_store

    with store.connect(ws) as con:
        return {"reviews": [r for r in reviews_store.reviews(con) if r["annotator"] == who],
                "flags": [f for f in reviews_store.flags(con) if f["annotator"] == who],
                "skips": [s for s in reviews_store.skips(con) if s["annotator"] == who]}


def count_written(ws: Path, who: str) -> int:
    return sum(len(rows) for rows in written_by(ws, who).values())
