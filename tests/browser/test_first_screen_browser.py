"""The answer on the first screen, in a real browser (Debian's chromium via Playwright, every request
beyond 127.0.0.1 refused): after a scripted team's day on the small demo — ana audits 12 verdicts of
the side-by-side judge drawn by the random queue and overrides 2, ben audits 3 more, ada adjudicates
nothing — the Leaderboard (vic, a viewer) and the report each show, in the first 1280×800 screen
without scrolling: the leader's name, a win probability in percent, the certification verdict and the
audit count."""

from __future__ import annotations

import re

import pytest

from lsqa import audit
from lsqa.dashboard import report
from lsqa.figures import analysis, audits, certification
from lsqa.stats.certification import UNDECIDED
from lsqa.team import Person
from tests.support.browser import served_team, wait_idle

pytestmark = pytest.mark.browser

SXS = "lexical-sxs-fc"
WAIT = 60000
VIEWPORT = {"width": 1280, "height": 800}


def team_day(ws, links) -> None:
    rows = audits.queue(ws, SXS, "random", rate=0.25, limit=15)["rows"]
    other = {"A": "B", "B": "A", "tie": "A", "none": "A"}
    for k, r in enumerate(rows):
        who = Person("ana" if k < 12 else "ben", "annotator")
        if k < 2:
            audit.review(ws, who, r["id"], other[r["label"]], sampling=r["sampling"])
        else:
            audit.confirm(ws, who, r["id"], sampling=r["sampling"])


@pytest.fixture(scope="module")
def day(demo_workspace_template, tmp_path_factory):
    people = (("ada", "admin"), ("ana", "annotator"), ("ben", "annotator"), ("vic", "viewer"))
    with served_team(demo_workspace_template, tmp_path_factory.mktemp("first_screen"), people,
                     prepare=team_day) as served:
        yield served


def _blocked(context) -> list[str]:
    refused: list[str] = []

    def route(r):
        url = r.request.url
        if url.startswith(("http://127.0.0.1", "ws://127.0.0.1", "file://", "data:", "blob:")):
            r.continue_()
        else:
            refused.append(url)
            r.abort()

    context.route("**/*", route)
    return refused


def _first_screen(page) -> str:
    """The text of every element drawn inside the viewport (no scrolling)."""
    return page.evaluate("""() => {
        const out = [];
        const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
        while (walker.nextNode()) {
            const n = walker.currentNode, el = n.parentElement;
            if (!n.textContent.trim() || !el) continue;
            const r = el.getBoundingClientRect(), s = getComputedStyle(el);
            if (r.bottom > 0 && r.top < innerHeight && r.width > 0 && s.visibility !== 'hidden'
                && s.display !== 'none') out.push(n.textContent);
        }
        return out.join(' ');
    }""")


def _check(text: str, leader: str, verdict: str, n: int) -> None:
    text = re.sub(r"\s+", " ", text)
    assert leader in text
    assert re.search(r"beats \S+ \d+(\.\d+)?% of the time", text)
    assert f"{verdict} after {n} random audits" in text


def test_leader_win_probability_verdict_and_audits_on_the_first_screen(day, tmp_path):
    ws, url, links, browser = day["ws"], day["url"], day["links"], day["browser"]
    cert = certification.certify(ws, SXS)
    assert cert["n_audits"] == 15 and cert["verdict"] == UNDECIDED
    leader = analysis.ranking(ws, SXS, bootstrap=1000, seed=0)["systems"][0]["system"]

    context = browser.new_context(viewport=VIEWPORT)
    refused = _blocked(context)
    page = context.new_page()
    page.goto(f"{url}/leaderboard?judge={SXS}&token={links['vic']}")
    page.get_by_text(re.compile(r"is ahead")).first.wait_for(timeout=WAIT)
    wait_idle(page)
    _check(_first_screen(page), leader, "undecided", 15)

    out = tmp_path / "report.html"
    out.write_text(report.build(ws, SXS, bootstrap=200), encoding="utf-8")
    page.goto(out.as_uri())
    _check(_first_screen(page), leader, "undecided", 15)
    assert refused == []
    context.close()
