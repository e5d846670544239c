"""What every browser test uses: Debian's Chromium headless shell (never downloaded: ``executable_path``
points at /usr/bin/chromium-headless-shell), the check that it and Playwright are here, and waits for a
Streamlit page to be done.

The headless shell is Chromium's engine (the same Blink and V8 as Debian's chromium, from the same source
package) without the browser's user interface, and the build Playwright itself drives for headless runs. It
draws a page for much less CPU than full chromium's headless mode, and the browser tests are the suite's
largest consumer of CPU (the figures: docs/BENCHMARKS.md, "Test suite"). Debian's full chromium stays for what a
person's browser measures (bench/bench_browser.py) and for kaleido's PNG export.

Skips when the headless shell (a system package, `make browser`) is missing, unless
``LSQA_REQUIRE_BROWSER=1`` (CI), where it fails; a missing Playwright (pinned in requirements.txt) always
fails.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import shutil
import time
import weakref
from pathlib import Path
from typing import Callable, Iterator

import pytest

CHROMIUM = Path("/usr/bin/chromium-headless-shell")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
# The item on screen: the one its question and answer cards are stamped with (item_cards._stamp), if
# they agree with the decision bar's stamp (the item its buttons write on, item_cards.stamped); None
# between two items.
SHOWN_JS = """() => { const bar = document.querySelector('.st-key-lsqa_keys [data-lsqa-item]');
  const cards = new Set(Array.from(document.querySelectorAll('[data-lsqa-item]')).map(e => e.dataset.lsqaItem));
  return bar && cards.size === 1 ? bar.dataset.lsqaItem : null; }"""


_LAUNCHED: dict = {}  # this test process's Playwright and chromium (``_launched``), and who holds it


def _launched():
    """Debian's chromium, headless through Playwright, launched once per test process (each pytest-xdist
    worker has its own) on first use and closed when the process ends: a launch costs about a second
    of CPU, and every test opens contexts of its own in it (``chromium``)."""
    if _LAUNCHED.get("pid") == os.getpid() and _LAUNCHED["browser"].is_connected():
        return _LAUNCHED["browser"]
    from playwright.sync_api import sync_playwright

    if _LAUNCHED.get("pid") == os.getpid():  # it went away (crashed): its driver too, then a new one
        _stop_launched()
    manager = sync_playwright()
    playwright = manager.start()
    try:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
    except BaseException:
        playwright.stop()
        raise
    if "pid" not in _LAUNCHED:
        atexit.register(_stop_launched)
    _LAUNCHED.update(pid=os.getpid(), playwright=playwright, loop=manager._loop, browser=browser, held=0)
    return browser


def _stop_launched() -> None:
    if _LAUNCHED.get("pid") != os.getpid() or "playwright" not in _LAUNCHED:
        return
    playwright, browser = _LAUNCHED.pop("playwright"), _LAUNCHED.pop("browser")
    asyncio._set_running_loop(_LAUNCHED.pop("loop"))  # as Playwright leaves it between its calls
    try:
        if browser.is_connected():
            browser.close()
    finally:
        playwright.stop()


@contextlib.contextmanager
def chromium():
    """Debian's chromium (the test process's own, ``_launched``), with none of another user's pages: the
    browser contexts opened while it is held (``fresh_page``, ``browser.new_context()``,
    ``browser.new_page()``) are closed on the way out, also when a test fails.

    Between two of its calls Playwright's sync API marks its event loop as running in this thread; while
    nobody holds the browser that mark is taken off, so the other tests of the process see no running
    loop (``asyncio.run`` works for them), as when each test had a Playwright of its own."""
    browser = _launched()
    asyncio._set_running_loop(_LAUNCHED["loop"])
    _LAUNCHED["held"] += 1
    before = set(browser.contexts)
    try:
        yield browser
    finally:
        try:
            if browser.is_connected():
                for context in browser.contexts:
                    if context not in before:
                        context.close()
        finally:
            _LAUNCHED["held"] -= 1
            if not _LAUNCHED["held"]:
                asyncio._set_running_loop(None)


@contextlib.contextmanager
def fresh_page(browser):
    """A page in a context of its own (own cookies: signed out), 1280 × 800, closed on the way out."""
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        yield context.new_page()
    finally:
        context.close()


# Playwright's ``expect`` (and ``wait_for``) look again after 0, 20, 50, 100, 100 ms and then every 500 ms
# while the timeout is 2.5 s or more: a page drawn 0.3 s after a key was seen 0.77 s after it, and a page
# load ended ~0.45 s before its expect returned (median of 6). Under 2.5 s the looks stay 100 ms apart.
_LOOK_MS = 2400
_EXPECT_DEFAULT_MS = 5000  # Playwright's own default for an assertion


class _Expect:
    """``expect(actual)`` as Playwright's, with the same assertions and the same total timeout, asked in
    stretches of ``_LOOK_MS`` so that it looks every 100 ms: a stretch that fails before the timeout is
    over is followed by the next; the last one's failure is the test's."""

    def __init__(self, actual, message: str | None = None):
        from playwright.sync_api import expect as playwright_expect

        self._assertions = playwright_expect(actual, message)

    def __getattr__(self, name: str):
        check = getattr(self._assertions, name)
        if not name.startswith(("to_", "not_to_")):
            return check

        def looking(*args, timeout: float | None = None, **kwargs):
            total = _EXPECT_DEFAULT_MS if timeout is None else timeout
            deadline = time.monotonic() + total / 1000
            while True:
                left = (deadline - time.monotonic()) * 1000
                try:
                    return check(*args, timeout=max(1.0, min(_LOOK_MS, left)), **kwargs)
                except AssertionError as exc:
                    if left <= _LOOK_MS:
                        raise AssertionError(f"(within {total:.0f} ms) {exc}") from None

        return looking


def expect(actual, message: str | None = None) -> _Expect:
    """Playwright's ``expect``, looking every 100 ms however long its timeout (``_Expect``)."""
    return _Expect(actual, message)


def need_browser():
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError as exc:  # pinned in requirements.txt: a broken install, never a skip
        pytest.fail(f"the playwright package (requirements.txt) cannot be imported: {exc}")
    if not CHROMIUM.exists():
        missing = ("Debian's Chromium headless shell is not installed (apt-get install -y chromium-headless-shell;"
                   " `make browser`)")
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

    from lsqa import team

    from .streamlit_server import serve

    ws = folder / "demo.duckdb"
    shutil.copy(template, ws)
    links = {name: team.add_person(ws, name, role)["token"] for name, role in people}
    if prepare is not None:
        prepare(ws, links)
    with serve(ws) as url, chromium() as browser:
        yield {"ws": ws, "url": url, "links": links, "browser": browser}


def wait_for(page, check, timeout_ms: int = 30000) -> None:
    """Until ``check()`` (e.g. the workspace: a write is saved by the page's rerun) is true: it is looked at
    once the page is idle (``wait_idle``) and again after each run of the page that ends later; fails if
    it is still false when no further run comes."""
    wait_idle(page, timeout_ms)
    while not check():
        done = page.evaluate("() => window.__lsqaRuns.finished")
        page.wait_for_function(f"() => window.__lsqaRuns.finished > {done}", timeout=timeout_ms)
        wait_idle(page, timeout_ms)


# The page's runs, as its websocket carries them, counted in the page (installed by ``wait_idle``): a
# rerun asked for (BackMsg.rerun_script, field 11), a run started (ForwardMsg.new_session, field 4),
# a run over (ForwardMsg.script_finished, field 6, unless FINISHED_EARLY_FOR_RERUN = 2: a rerun
# follows). Each event takes the next number of one sequence, so "a run started after the last rerun
# asked for, and ended" is a comparison. A click's rerun is asked for before its run starts, and
# until it starts the app's own script state still says "notRunning": the count closes that gap.
RUNS_JS = """(() => {
  if (window.__lsqaRuns) return;
  const runs = window.__lsqaRuns = {seq: 0, sent: 0, started: 0, finished: 0};
  const bytesOf = (d) => d instanceof ArrayBuffer ? new Uint8Array(d)
    : ArrayBuffer.isView(d) ? new Uint8Array(d.buffer, d.byteOffset, d.byteLength) : null;
  const fields = (b) => {  // a protobuf message's top-level fields: [number, varint value or null]
    const out = []; let i = 0;
    const varint = () => { let v = 0, s = 1; for (;;) { const x = b[i++]; v += (x & 127) * s; s *= 128;
      if (x < 128 || i >= b.length) return v; } };
    while (i < b.length) {
      const tag = varint(), f = Math.floor(tag / 8), w = tag % 8;
      if (w === 0) out.push([f, varint()]);
      else if (w === 2) { const n = varint(); out.push([f, null]); i += n; }
      else if (w === 1) i += 8; else if (w === 5) i += 4; else break;
    }
    return out;
  };
  const listen = (ws) => {
    if (ws.__lsqaRuns) return;
    ws.__lsqaRuns = true;
    ws.addEventListener("message", (e) => {
      const b = bytesOf(e.data);
      if (b) for (const [f, v] of fields(b)) {
        if (f === 4) runs.started = ++runs.seq;
        else if (f === 6 && v !== 2) runs.finished = ++runs.seq;
      }
    });
  };
  const send = WebSocket.prototype.send;
  WebSocket.prototype.send = function (data) {
    listen(this);
    const b = bytesOf(data);
    if (b && fields(b).some(([f]) => f === 11)) runs.sent = ++runs.seq;
    return send.call(this, data);
  };
})()"""
# Ready: Streamlit's own script state says the run is over, every rerun asked for has started and
# ended since, no element is still loading its code (a Suspense skeleton), and the Audit page's keys.js
# (when the page has it) holds no key and has had the item on screen long enough to take one.
READY_JS = """() => {
  const app = document.querySelector('[data-test-script-state]');
  if (!app || app.getAttribute('data-test-script-state') !== 'notRunning') return false;
  const r = window.__lsqaRuns;
  if (r && r.sent && !(r.started > r.sent && r.finished > r.started)) return false;
  if (document.querySelector('[data-testid="stSkeleton"]')) return false;
  return !window.__lsqaKeysReady || window.__lsqaKeysReady();
}"""
# Still ready two frames and a task later, with no rerun asked for meanwhile: some widgets ask for
# their rerun from an effect after the click that changed them is drawn (an expander that builds its
# content when opened), not in the click itself.
_STILL_READY_JS = """() => new Promise(resolve => {
  const seq = window.__lsqaRuns.seq;
  requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(() =>
    resolve(window.__lsqaRuns.seq === seq && (""" + READY_JS + """)()), 0)));
})"""
_COUNTED_READY_JS = "() => { " + RUNS_JS + "; return (" + READY_JS + ")(); }"  # one call to the page, not two
_TRACKED: weakref.WeakSet = weakref.WeakSet()  # browser contexts whose new documents count their runs


def wait_idle(page, timeout_ms: int = 30000) -> None:
    """Until the page is ready for the next action (``READY_JS``: every run asked for is over, nothing
    is loading, no key is held) and still is two frames later (``_STILL_READY_JS``): a button mounted by
    the run registers its shortcut in an effect after it is drawn, and a key pressed before that reaches
    nothing; a widget may ask for its rerun from such an effect."""
    context = page.context
    if context not in _TRACKED:
        context.add_init_script(RUNS_JS)  # pages opened or loaded from now on count from their first message
        _TRACKED.add(context)
    while True:  # the document open now counts from its next rerun asked for (RUNS_JS, in the first look)
        page.wait_for_function(_COUNTED_READY_JS, timeout=timeout_ms)
        if page.evaluate(_STILL_READY_JS):
            return


# Resolves once ``measure()`` has given the same value ``frames`` animation frames running (what is
# measured has stopped moving), with that value; after 600 frames (~10 s) with the last one anyway.
_STILL_JS = """(measure, frames) => new Promise(resolve => {
  let last = null, same = 0, left = 600;
  const tick = () => {
    const now = measure(), key = JSON.stringify(now);
    same = key === last ? same + 1 : 0; last = key;
    if (same >= frames || --left <= 0) resolve(now); else requestAnimationFrame(tick);
  };
  tick();
})"""


def wait_still(locator, frames: int = 5) -> dict:
    """Until ``locator``'s element stops moving and growing (a panel just opened, the page scrolling to
    it); its box then, as ``locator.bounding_box()`` gives it."""
    return locator.evaluate(f"""el => ({_STILL_JS})(() => {{ const r = el.getBoundingClientRect();
      return {{x: r.x, y: r.y, width: r.width, height: r.height}}; }}, {frames})""")


def wait_scrolled(page, frames: int = 5) -> None:
    """Until the page has scrolled (some element, or the window, is scrolled down) and the scrolling has
    stopped: a wheel turned by Playwright scrolls after the call returns."""
    page.wait_for_function("""() => window.scrollY > 0
      || [...document.querySelectorAll('*')].some(e => e.scrollTop > 0)""")
    page.evaluate(f"""() => ({_STILL_JS})(() => window.scrollY
      + [...document.querySelectorAll('*')].reduce((a, e) => a + e.scrollTop, 0), {frames})""")


def wait_animations(page) -> None:
    """Until every CSS transition and animation on the page that ends has ended (a picture taken
    mid-fade shows a faded page)."""
    page.evaluate("""() => Promise.all(document.getAnimations()
      .filter(a => a.effect && a.effect.getComputedTiming().iterations !== Infinity).map(a => a.finished.catch(() => null)))""")  # a cancelled one ends too


def poll(page, check, timeout_ms: int = 30000) -> None:
    """Until ``check()``, a signal only Python sees (messages a test's websocket route holds back, which
    Playwright hands to Python while it waits), asked every 50 ms; fails if it never holds."""
    for _ in range(timeout_ms // 50):
        if check():
            return
        page.wait_for_timeout(50)
    assert check()


def runs_over(messages) -> int:
    """How many of these Streamlit ForwardMsg frames (as a websocket route sees them) end a run: a
    ``script_finished`` other than FINISHED_EARLY_FOR_RERUN (a rerun follows it)."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    ends = (ForwardMsg.FromString(m).script_finished for m in messages
            if isinstance(m, bytes) and ForwardMsg.FromString(m).WhichOneof("type") == "script_finished")
    return sum(status != ForwardMsg.FINISHED_EARLY_FOR_RERUN for status in ends)


def wait_charts_drawn(page, timeout_ms: int = 30000) -> int:
    """Until every Plotly chart on the page has drawn its SVG (instead of a fixed sleep); how many.
    A chart whose code is still loading is a skeleton, not yet a chart: wait for those too."""
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stMain\"] [data-testid=\"stSkeleton\"]')"
        " && [...document.querySelectorAll('[data-testid=\"stPlotlyChart\"]')]"
        ".every(c => c.querySelector('.js-plotly-plot svg.main-svg'))", timeout=timeout_ms)
    return page.locator('[data-testid="stPlotlyChart"]').count()


# Labels drawn as text that overflows its box, and the placeholders of empty fields measured in the field's own
# font against the room inside it (a placeholder is no element of its own, so it has no width to compare).
_CUT_JS = """() => {
  const cut = [...document.querySelectorAll(
      '[data-testid="stWidgetLabel"], [data-testid="stWidgetLabel"] *, label *, button *, [role="tab"] *')]
    .filter(e => e.offsetParent !== null && (e.innerText || '').trim() && e.scrollWidth > e.clientWidth + 1)
    .map(e => e.innerText);
  const ctx = document.createElement('canvas').getContext('2d');
  for (const e of document.querySelectorAll('input[placeholder], textarea[placeholder]')) {
    if (e.offsetParent === null || e.value || !e.placeholder) continue;
    const s = getComputedStyle(e);
    ctx.font = `${s.fontStyle} ${s.fontWeight} ${s.fontSize} ${s.fontFamily}`;
    const room = e.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight);
    if (ctx.measureText(e.placeholder).width > room + 1) cut.push(e.placeholder);
  }
  return cut;
}"""


def cut_labels(page, width: int = 1280) -> list[str]:
    """The visible labels of widgets, buttons and tabs, and the placeholders of empty fields, that the page cuts
    short at a laptop's ``width`` (so the browser draws "Use human o…"): what a person cannot read without
    hovering. The page is looked at in that width, then given its own size back."""
    size = page.viewport_size
    page.set_viewport_size({"width": width, "height": size["height"]})
    try:
        page.wait_for_function(f"() => window.innerWidth === {width}")
        return page.evaluate(_CUT_JS)
    finally:
        page.set_viewport_size(size)


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
