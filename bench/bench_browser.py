"""Benchmark: the dashboard as a person sees it, in headless Chromium (Debian's /usr/bin/chromium).

Run:  .venv/bin/python bench/bench_browser.py                       (builds the small demo first, ~1 min)
      .venv/bin/python bench/bench_browser.py --workspace db/lsqa.duckdb   (an existing workspace, e.g. the demo)

`streamlit run app.py` is started on 127.0.0.1 as `make run` starts it, and Playwright drives the
browser. Measured, each as the median of ``--rounds`` tries, from the user's action to the moment
the page is done (Streamlit's script state back to "notRunning", the page's heading shown and
every Plotly chart drawn as SVG):

  1. first render of each page: a new browser tab opening the page's URL (a new session);
  2. keypress → next item: `J` on the Audit page until "Item 2 of …" is shown (then `K` back);
  3. Leaderboard switch → updated chart: "Use human overrides" toggled until the charts are redrawn.

Targets (issue 12): every page < 1.5 s, next item < 0.3 s, switch < 1 s.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
for _name, _value in (("HF_HUB_OFFLINE", "1"), ("TRANSFORMERS_OFFLINE", "1"), ("LITELLM_LOCAL_MODEL_COST_MAP", "True")):
    os.environ.setdefault(_name, _value)

from tests.streamlit_server import serve  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--no-first-run"]
PAGES = {"Overview": ("", "lsqa"), "Run": ("run", "Run a study"), "Audit": ("audit", "Audit judge verdicts"),
         "Reference errors": ("reference_errors", "Reference errors"), "Agreement": ("agreement", "Agreement"),
         "Leaderboard": ("leaderboard", "Leaderboard"), "Corpus": ("corpus", "Corpus")}
TARGET_PAGE_S, TARGET_NEXT_S, TARGET_SWITCH_S = 1.5, 0.3, 1.0
DONE = ("() => document.querySelector('[data-test-script-state]')?.getAttribute('data-test-script-state')"
        " === 'notRunning' && [...document.querySelectorAll('[data-testid=\"stPlotlyChart\"]')]"
        ".every(c => c.querySelector('.js-plotly-plot svg.main-svg'))")


def _done(page, timeout_ms: int = 120000) -> None:
    page.wait_for_function(DONE, timeout=timeout_ms, polling="raf")


def first_render(browser, url: str, heading: str) -> float:
    page = browser.new_page(viewport={"width": 1440, "height": 1000})
    try:
        t0 = time.perf_counter()
        page.goto(url, wait_until="commit")
        page.get_by_role("heading", name=heading).first.wait_for(timeout=120000)
        _done(page)
        return time.perf_counter() - t0
    finally:
        page.close()


def _settle(page) -> None:
    """Until the run is over and the buttons have stopped changing: a key pressed while they are still
    being mounted reaches none of their shortcuts (as tests/test_dashboard_browser.py waits)."""
    _done(page)
    last, since = -1, time.monotonic()
    while time.monotonic() - since < 0.8:
        n = page.locator("button").count()
        if n != last:
            last, since = n, time.monotonic()
        page.wait_for_timeout(100)


def next_item(page, rounds: int) -> list[float]:
    times = []
    for _ in range(rounds):
        _settle(page)
        t0 = time.perf_counter()
        page.keyboard.press("j")
        page.get_by_text(re.compile(r"Item 2 of")).first.wait_for(timeout=60000)
        times.append(time.perf_counter() - t0)
        _settle(page)
        page.keyboard.press("k")
        page.get_by_text(re.compile(r"Item 1 of")).first.wait_for(timeout=60000)
    return times


def switch(page, rounds: int) -> list[float]:
    times = []
    for i in range(rounds):
        _settle(page)
        want = "Labels: human where reviewed" if i % 2 == 0 else "Labels: the judges'"
        t0 = time.perf_counter()
        page.get_by_text("Use human overrides").click()
        page.get_by_text(re.compile("^" + re.escape(want))).first.wait_for(timeout=60000)
        _done(page)
        times.append(time.perf_counter() - t0)
    return times


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workspace", type=Path, help="an existing workspace (default: build the small demo)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--judge", default="lexical-sxs-fc", help="the Audit queue's judge filter")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        ws = args.workspace
        if ws is None:
            from lsqa.demo import build_demo

            ws = Path(tmp) / "demo.duckdb"
            t0 = time.perf_counter()
            for _ in build_demo(ws, scale="small"):
                pass
            print(f"small demo built in {time.perf_counter() - t0:.1f} s")
        print(f"workspace {ws} · {platform.processor() or platform.machine()}, {os.cpu_count()} cores · "
              f"load average {os.getloadavg()[0]:.1f} · median of {args.rounds}")
        results: dict[str, float] = {}
        with serve(ws) as base, sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            try:
                first_render(browser, f"{base}/", "lsqa")  # warm-up: the server imports lsqa once
                for name, (path, heading) in PAGES.items():
                    times = [first_render(browser, f"{base}/{path}?annotator=bench", heading)
                             for _ in range(args.rounds)]
                    results[f"first render: {name}"] = statistics.median(times)
                    print(f"  first render {name}: {', '.join(f'{t:.2f}' for t in times)} s", flush=True)
                page = browser.new_page(viewport={"width": 1440, "height": 1000})
                page.goto(f"{base}/audit?annotator=bench&judge={args.judge}")
                page.get_by_text(re.compile(r"Item 1 of")).first.wait_for(timeout=120000)
                page.get_by_role("heading", name="Audit judge verdicts").first.click()  # focus on the page, not a field
                times = next_item(page, args.rounds)
                print(f"  next item: {', '.join(f'{t:.2f}' for t in times)} s", flush=True)
                results["keypress → next item (Audit)"] = statistics.median(times)
                page.goto(f"{base}/leaderboard?annotator=bench&overrides=0")
                page.get_by_role("heading", name="Leaderboard").first.wait_for(timeout=120000)
                times = switch(page, args.rounds)
                print(f"  switch: {', '.join(f'{t:.2f}' for t in times)} s", flush=True)
                results["switch → updated chart (Leaderboard)"] = statistics.median(times)
            finally:
                browser.close()
    failed = 0
    for name, seconds in results.items():
        target = (TARGET_NEXT_S if "next item" in name else TARGET_SWITCH_S if "switch" in name else TARGET_PAGE_S)
        ok = seconds < target
        failed += not ok
        print(f"{name:<45} {seconds:6.2f} s   target < {target} s   {'ok' if ok else 'MISSED'}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
