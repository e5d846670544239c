"""Benchmark: where a new tab's time goes, page by page, against a one-line Streamlit app.

Run:  .venv/bin/python bench/bench_browser_timeline.py --workspace db/lsqa.duckdb --rounds 5
      (--pages audit,leaderboard for some pages only; "" is the Overview)

Each page is opened in a new tab of one browser profile (warm cache), and the tab's websocket is
watched (Playwright's frame events). Printed, as medians of ``--rounds``, seconds from the tab's
start:

  websocket open      Streamlit's JavaScript has started and connected (no page code has run yet)
  server              from the tab's first message (the run request) to the last message of the run
  heading after last  from that last message until the page's heading is visible
  done after last     ... until bench_browser.py's "done" (no skeleton, charts drawn, held 0.3 s)
  done                the whole first render, as bench_browser.py measures it

The server part shrinks when the page's reads are faster; what comes after the last message is the
browser's own work (running the code of the elements shown for the first time, drawing them).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import bench_browser as bb  # noqa: E402  (also sets the offline environment)

from tests.support.streamlit_server import serve  # noqa: E402

COLUMNS = ("websocket open", "server", "heading after last", "done after last", "done")


def timeline(context, url: str, heading: str) -> tuple[float, ...]:
    page = context.new_page()
    opened, sent, received = [], [], []
    t0 = time.perf_counter()

    def watch(ws):
        opened.append(time.perf_counter() - t0)
        ws.on("framesent", lambda _: sent.append(time.perf_counter() - t0))
        ws.on("framereceived", lambda _: received.append(time.perf_counter() - t0))

    page.on("websocket", watch)
    page.goto(url, wait_until="commit")
    page.get_by_role("heading", name=heading).first.wait_for(timeout=120000)
    shown = time.perf_counter() - t0
    done = bb._done(page) - t0
    page.close()
    last = max(t for t in received if t <= done)
    return opened[0], last - sent[0], shown - last, done - last, done


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workspace", type=Path, required=True)
    ap.add_argument("--pages", default=",".join(path for path, _ in bb.PAGES.values()))
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    headings = {path: heading for path, heading in bb.PAGES.values()}
    pages = args.pages.split(",")
    from playwright.sync_api import sync_playwright

    one_line = Path(tempfile.mkdtemp()) / "one_line.py"
    one_line.write_text(bb.BASELINE_APP, encoding="utf-8")
    one_line_heading = "lsqa"  # BASELINE_APP's title
    with serve(args.workspace) as base, serve(args.workspace, app=one_line) as base_one, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=bb.CHROMIUM, args=bb.ARGS)
        try:
            context = browser.new_context(viewport=bb.VIEWPORT)
            targets = {"one-line app": (f"{base_one}/", one_line_heading)}
            targets |= {path or "overview": (f"{base}/{path}?annotator=bench", headings[path]) for path in pages}
            for url, heading in targets.values():  # each server imports its code once, the cache fills
                bb.first_render(context, url, heading)
            rows: dict[str, list[tuple[float, ...]]] = {name: [] for name in targets}
            for _ in range(args.rounds):
                for name, (url, heading) in targets.items():
                    rows[name].append(timeline(context, url, heading))
        finally:
            browser.close()
    print(f"{'':<18}" + "".join(f"{c:>20}" for c in COLUMNS))
    for name, measured in rows.items():
        print(f"{name:<18}" + "".join(f"{statistics.median(col):>20.2f}" for col in zip(*measured, strict=False)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
