"""Benchmark: what one kind of Streamlit element adds to a new tab, in headless Chromium.

Run:  .venv/bin/python bench/bench_browser_elements.py --rounds 5

Tiny apps (a title, one line, plus one kind of element: a data grid, a static table, a Plotly
chart, metrics, input widgets, or a multipage navigation with a sidebar field opened at a page's own
path) are served at once and opened in new tabs, interleaved, with a warm cache (one browser
profile) and a cold one (a new profile each time). "Done" is bench_browser.py's. The first app is
the floor every page pays; the others say what a page pays per kind of element it draws on first
sight (issue 12).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import bench_browser as bb  # noqa: E402  (also sets the offline environment)

from tests.support.streamlit_server import serve  # noqa: E402

HEAD = ("import streamlit as st\nst.set_page_config(layout='wide')\nst.title('lsqa')\n"
        "rows = [{'system': s, 'score': 0.1 * i} for i, s in enumerate('abcdefgh')]\n")
APPS = {
    "one line (the floor)": "st.write('one line')\n",
    "one st.dataframe": "st.dataframe(rows)\n",
    "one st.table": "st.table(rows)\n",
    # Streamlit loads Plotly's JavaScript only when a page draws its first chart.
    "one Plotly chart": "import plotly.graph_objects as go\n"
                        "st.plotly_chart(go.Figure(go.Bar(x=[r['system'] for r in rows], y=[r['score'] for r in rows])))\n",
    "five st.metric": "for i, c in enumerate(st.columns(5)):\n    c.metric(f'm{i}', i)\n",
    "four input widgets": "st.selectbox('pick', ['a', 'b'])\nst.radio('r', ['x', 'y'], horizontal=True)\n"
                          "st.multiselect('m', ['p', 'q'], default=['p'])\nst.text_input('t')\n",
    # st.navigation over 7 pages and a sidebar field, opened at a page's own path (not the root).
    "multipage + sidebar field, at /p3": (
        "def page():\n    st.write('one line')\n"
        "pages = [st.Page(page, title='Home', url_path='home', default=True)]"
        " + [st.Page(page, title=f'P{i}', url_path=f'p{i}') for i in range(6)]\n"
        "st.sidebar.text_input('Annotator')\nst.navigation(pages).run()\n"),
}
PATHS = {"multipage + sidebar field, at /p3": "/p3"}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack, sync_playwright() as p:
        urls = {}
        for n, (name, body) in enumerate(APPS.items()):
            app = Path(tmp) / f"app_{n}.py"
            app.write_text(HEAD + body, encoding="utf-8")
            urls[name] = stack.enter_context(serve(Path(tmp) / "unused.duckdb", app=app)) + PATHS.get(name, "/")
        browser = p.chromium.launch(executable_path=bb.CHROMIUM, args=bb.ARGS)
        try:
            warm = browser.new_context(viewport=bb.VIEWPORT)
            for url in urls.values():  # each server's first session, and the warm profile's first visit
                bb.first_render(browser, url, "lsqa")
                bb.first_render(warm, url, "lsqa")
            times = {name: {"warm": [], "cold": []} for name in urls}
            for _ in range(args.rounds):
                for name, url in urls.items():
                    times[name]["warm"].append(bb.first_render(warm, url, "lsqa"))
                    times[name]["cold"].append(bb.first_render(browser, url, "lsqa"))
        finally:
            browser.close()
    floor = {mode: statistics.median(times["one line (the floor)"][mode]) for mode in ("warm", "cold")}
    print(f"median of {args.rounds} new tabs, seconds (ratio to the floor)")
    for name, by_mode in times.items():
        cells = [f"{mode} {statistics.median(t):.2f} ({statistics.median(t) / floor[mode]:.2f}×)"
                 for mode, t in by_mode.items()]
        print(f"  {name:36s} " + "   ".join(cells))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
