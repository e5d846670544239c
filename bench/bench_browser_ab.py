"""Benchmark: two versions of the dashboard side by side in headless Chromium, new tab by new tab.

Run:  .venv/bin/python bench/bench_browser_ab.py --a ../lsqa-before --b . --workspace db/lsqa.duckdb \\
          --pages leaderboard,agreement,audit --rounds 6
      (make the "before" checkout with `git worktree add ../lsqa-before <commit>`)

Both checkouts are served at once (`streamlit run app.py` in each, on 127.0.0.1, each on its own
copy of the workspace, since ``--decide`` writes reviews) and one browser opens each page in a new
tab, A and B alternating (ABBA...), with a warm cache (one browser profile per version) and a cold
one (a new profile each time). A shared machine's load drifts by seconds between runs; alternating
in one run makes the ratio B/A the figure to trust. "Done" is bench_browser.py's: no loading
skeleton, every chart drawn, held 0.3 s.

``--a-env LSQA_READ_CACHE=0`` (with ``--a .``) compares one checkout with and without a setting;
``--keys 20`` adds keypress -> next item on the Audit page (J and K between two items, and J through
items not opened before), ``--decide 20`` a decision (V) -> next item.
"""

from __future__ import annotations

import argparse
import os
import shutil
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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--a", type=Path, required=True, help="checkout A (the baseline, e.g. a worktree of main)")
    ap.add_argument("--b", type=Path, default=ROOT, help="checkout B (default: this one)")
    ap.add_argument("--workspace", type=Path, required=True)
    ap.add_argument("--pages", default="audit,agreement,leaderboard", help="URL paths, comma-separated")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--modes", default="warm,cold")
    ap.add_argument("--a-env", action="append", default=[], metavar="NAME=VALUE",
                    help="an environment variable for A's server only, e.g. LSQA_READ_CACHE=0 (repeatable)")
    ap.add_argument("--b-env", action="append", default=[], metavar="NAME=VALUE", help="the same for B")
    ap.add_argument("--keys", type=int, default=0,
                    help="also keypress -> next item on the Audit page (J then K; and J to items not opened "
                         "before), this many presses each, A and B in turns of 5")
    ap.add_argument("--decide", type=int, default=0,
                    help="also a decision (V, confirm) -> the next item on the Audit page, this many each")
    ap.add_argument("--judge", default="lexical-sxs-fc", help="the Audit queue's judge for --keys and --decide")
    args = ap.parse_args()
    headings = {path: heading for path, heading in bb.PAGES.values()}
    pages = args.pages.split(",")
    unknown = [p for p in pages if p not in headings]
    if unknown:
        ap.error(f"unknown page(s) {unknown}; choose from {sorted(h for h in headings if h)}")
    from playwright.sync_api import sync_playwright

    print(f"A = {args.a.resolve()}\nB = {args.b.resolve()}\nworkspace {args.workspace} · load average "
          f"{os.getloadavg()[0]:.1f} · median of {args.rounds}")
    with ExitStack() as stack, sync_playwright() as p:
        envs = {"A": _env(ap, args.a_env), "B": _env(ap, args.b_env)}
        for name, env in envs.items():
            if env:
                print(f"{name} runs with {' '.join(f'{k}={v}' for k, v in env.items())}")
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        copies = {name: shutil.copyfile(args.workspace, tmp / f"{name}.duckdb") for name in envs}
        bases = {name: stack.enter_context(serve(copies[name], root=root.resolve(), env=envs[name]))
                 for name, root in (("A", args.a), ("B", args.b))}
        browser = p.chromium.launch(executable_path=bb.CHROMIUM, args=bb.ARGS)
        try:
            warm = {name: browser.new_context(viewport=bb.VIEWPORT) for name in bases}
            for name, base in bases.items():
                bb.first_render(browser, f"{base}/", "lsqa")  # each server imports lsqa once
                for path in pages:
                    bb.first_render(warm[name], f"{base}/{path}?annotator=bench", headings[path])
            for path in pages:
                for mode in args.modes.split(","):
                    times: dict[str, list[float]] = {"A": [], "B": []}
                    for i in range(args.rounds):
                        for name in ("A", "B") if i % 2 == 0 else ("B", "A"):
                            opener = warm[name] if mode == "warm" else browser
                            times[name].append(bb.first_render(opener, f"{bases[name]}/{path}?annotator=bench",
                                                               headings[path]))
                    a, b = statistics.median(times["A"]), statistics.median(times["B"])
                    print(f"{path or 'overview':<18} {mode}: A {a:.2f} s  B {b:.2f} s  B/A {b / a:.2f}   "
                          f"(A {', '.join(f'{t:.2f}' for t in times['A'])}; B {', '.join(f'{t:.2f}' for t in times['B'])})",
                          flush=True)
            if args.keys:
                in_turns(browser, bases, args.keys, args.judge, "next item (J)", bb.next_item)
                in_turns(browser, bases, args.keys, args.judge, "a new item (J)", bb.next_new_item)
            if args.decide:
                in_turns(browser, bases, args.decide, args.judge, "decision (V)", bb.decide)
        finally:
            browser.close()
    return 0


def _env(ap: argparse.ArgumentParser, pairs: list[str]) -> dict[str, str]:
    if any("=" not in pair for pair in pairs):
        ap.error(f"give environment variables as NAME=VALUE, not {pairs}")
    return dict(pair.split("=", 1) for pair in pairs)


def in_turns(browser, bases: dict[str, str], presses: int, judge: str, label: str, measure) -> None:
    """A bench_browser.py keypress measure (``next_item``, ``decide``) on both servers: one tab each,
    turns of 5. Printed twice: on screen (the page's clock) and as Playwright's round trip."""
    tabs = {}
    for name, base in bases.items():
        tab = browser.new_page(viewport=bb.VIEWPORT)
        bb.install_probe(tab)
        tab.goto(f"{base}/audit?annotator=bench&judge={judge}")
        tab.get_by_role("heading", name="Audit judge verdicts").first.wait_for(timeout=120000)
        tabs[name] = tab
    times = {"A": bb.Presses(), "B": bb.Presses()}
    for turn in range(-(-presses // 5)):
        for name in ("A", "B") if turn % 2 == 0 else ("B", "A"):
            times[name] += measure(tabs[name], min(5, presses - 5 * turn))
    for how, suffix in (("on_screen", ", on screen"), ("round_trip", bb.ROUND_TRIP)):
        a_times, b_times = getattr(times["A"], how), getattr(times["B"], how)
        a, b = statistics.median(a_times), statistics.median(b_times)
        print(f"{label + suffix:<44} A {a:.2f} s  B {b:.2f} s  B/A {b / a:.2f}   "
              f"(A {', '.join(f'{t:.2f}' for t in a_times)}; B {', '.join(f'{t:.2f}' for t in b_times)})",
              flush=True)


if __name__ == "__main__":
    raise SystemExit(main())
