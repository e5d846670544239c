"""Queues that end, items held while open, and a dashboard that stays on 127.0.0.1, in a real browser:
Debian's chromium driven by Playwright against `streamlit run app.py` on a private copy of the small
demo workspace with people (each signed in with their own link, in their own browser context).

- After her last assignment ana's page says so, offers the next queue, and 10 keys and 3 clicks
  where the decision buttons were write 0 rows (E puts the focus in the note first: typing a note
  holding "y" and "n" decides nothing).
- ben's second tab is served the next item; a third tab opened on his first tab's item by link says
  it is open in another tab; deciding it in both writes one review; a reload of the first tab is
  back on its item, and K goes back along the trail.
- ana and ben on one shared queue never have the same item on screen at once (blind: the bar says
  nothing of why an item is in the queue).
- No page requests anything beyond 127.0.0.1 (the browser's request log; any such request fails).

Readiness is waited for (script state, the item's stamp, the workspace's rows), never a fixed sleep
alone.
"""

from __future__ import annotations

import re
from urllib.parse import urlparse

import pytest

from lsqa import audit, team
from tests.support.browser import SHOWN_JS, count_written, expect, served_team, wait_for, wait_idle, written_by

pytestmark = pytest.mark.browser

GT, SXS, GT_SXS = "lexical-gt", "lexical-sxs-fc", "lexical-gt-sxs"
WAIT = 60000
PAGES = ("", "run", "audit", "adjudicate", "reference_errors", "agreement", "leaderboard", "corpus")


@pytest.fixture(scope="module")
def team_server(demo_workspace_template, tmp_path_factory):
    people = (("ada", "admin"), ("ana", "annotator"), ("ben", "annotator"))
    with served_team(demo_workspace_template, tmp_path_factory.mktemp("queue_end"), people) as served:
        yield served




def _shown(page) -> str | None:
    return page.evaluate(SHOWN_JS)


def _item_on_screen(page) -> str:
    """Wait until an item is on screen and the page is quiet; its id."""
    page.wait_for_function(SHOWN_JS, timeout=WAIT)
    wait_idle(page)
    return _shown(page)


def _context(browser):
    return browser.new_context(viewport={"width": 1280, "height": 900})


def _signed_in(context, url: str, token: str, path: str, name: str):
    page = context.new_page()
    page.goto(f"{url}/{path}{'&' if '?' in path else '?'}token={token}")
    expect(page.locator('[data-testid="stSidebar"]').get_by_text(re.compile(rf"{name} · "))).to_be_visible(timeout=WAIT)
    wait_idle(page)
    return page


def _main(page) -> str:
    return page.locator('[data-testid="stMain"]').inner_text()


def test_after_the_last_assignment_keys_and_clicks_write_nothing_and_the_page_says_done(team_server):
    ws, url, links, browser = (team_server[k] for k in ("ws", "url", "links", "browser"))
    audit.assign(ws, GT, ["ana"], by=team.Person("ada", "admin"), per_item=1, count=2, queue="priority")
    mine = {r["id"] for r in audit.queue.uncached(ws, audit.Filters(reviewed=audit.ASSIGNED), "ana")["rows"]}
    assert len(mine) == 2
    ana = _signed_in(_context(browser), url, team.new_link(ws, "ana")["token"], "audit", "ana")
    expect(ana.get_by_text(re.compile("0 of 2 of my assignments done"))).to_be_visible(timeout=WAIT)

    # E: the note field takes the focus; a note holding y and n decides nothing; Enter gives the keys back.
    first = _item_on_screen(ana)
    assert first in mine
    ana.keyboard.press("?")
    expect(ana.locator("#lsqa-keys-help")).to_contain_text("write a note")
    ana.keyboard.press("Escape")
    expect(ana.locator("#lsqa-keys-help")).to_be_hidden()
    ana.keyboard.press("e")
    expect(ana.locator(".lsqa-desk .lsqa-note-field")).to_be_focused()
    ana.keyboard.type("yes, not sure", delay=20)
    ana.keyboard.press("Enter")
    wait_idle(ana)
    assert count_written(ws, "ana") == 0
    assert ana.locator(".lsqa-desk .lsqa-note-field").input_value() == "yes, not sure"
    stale = []
    for n in range(2):
        jid = _item_on_screen(ana)
        if n == 1:  # the last item's buttons, clicked from its screen after the decision (past keys.js)
            stale = [ana.locator(f'.lsqa-desk [data-lsqa-key="audit_{name}__writes"]').first.element_handle()
                     for name in ("opt_no", "opt_yes", "skip", "unsure")]
        ana.keyboard.press("y")
        for handle in stale:
            ana.wait_for_timeout(30)
            handle.evaluate("b => b.click()")
        wait_for(ana, lambda n=n: len(written_by(ws, "ana")["reviews"]) >= n + 1)
        wait_for(ana, lambda jid=jid: _shown(ana) != jid)
        assert [r["judgment_id"] for r in written_by(ws, "ana")["reviews"]][-1] == jid
    assert written_by(ws, "ana")["reviews"][0]["note"] == "yes, not sure"
    expect(ana.get_by_text("All 2 of your assignments are done")).to_be_visible(timeout=WAIT)
    wait_idle(ana)
    assert _shown(ana) is None and ana.locator(".st-key-lsqa_keys button", has_text="Yes, correct").count() == 0
    expect(ana.get_by_role("button", name=re.compile("The priority queue"))).to_be_visible()

    before = written_by(ws, "ana")
    # The stale clicks wrote nothing.
    assert [r["label"] for r in before["reviews"]] == ["yes", "yes"] and not before["skips"] and not before["flags"]
    for key in "yynvsdfgtj":  # 10 keys: every decision key, twice the one just used, and J
        ana.keyboard.press(key)
        wait_idle(ana)  # any run the key asked for is over: what it wrote is in
    for handle in stale:  # and the last item's buttons clicked again
        handle.evaluate("b => b.click()")
    wait_idle(ana)  # each click asked for a run: the last one has started and ended since
    assert written_by(ws, "ana") == before
    expect(ana.get_by_text("All 2 of your assignments are done")).to_be_visible()
    # K goes back to the last one: it says what ana decided, and a key there changes it (one row).
    ana.keyboard.press("k")
    expect(ana.get_by_text(re.compile("You decided: .*press a label key again to change it"))).to_be_visible(timeout=WAIT)
    wait_idle(ana)  # idle includes keys.js's settle time for a new item (its __lsqaKeysReady)
    ana.keyboard.press("n")
    wait_for(ana, lambda: len(written_by(ws, "ana")["reviews"]) == 3)
    wait_idle(ana)
    assert [r["label"] for r in written_by(ws, "ana")["reviews"]] == ["yes", "yes", "no"]
    # Offered next: the priority queue, where keys act again.
    ana.get_by_role("button", name=re.compile("The priority queue")).click()
    assert _item_on_screen(ana) not in mine
    ana.context.close()


def test_a_second_tab_never_adds_a_second_decision_and_the_trail_survives_a_reload(team_server):
    ws, url, links, browser = (team_server[k] for k in ("ws", "url", "links", "browser"))
    context = _context(browser)
    one = _signed_in(context, url, team.new_link(ws, "ben")["token"], f"audit?judge={SXS}", "ben")
    x = _item_on_screen(one)
    two = context.new_page()  # a second tab of the same browser: signed in by its cookie
    two.goto(f"{url}/audit?judge={SXS}")
    y = _item_on_screen(two)
    assert y != x  # served the next item: x is open in the first tab
    three = context.new_page()  # a third, opened on the first tab's item by a link
    three.goto(f"{url}/audit?judge={SXS}&item={x}")
    assert _item_on_screen(three) == x
    expect(three.get_by_text("This item is open in another tab of yours too")).to_be_visible(timeout=WAIT)
    one.keyboard.press("a")
    wait_for(one, lambda: len(written_by(ws, "ben")["reviews"]) == 1)
    wait_for(one, lambda: _shown(one) not in (None, x))
    z = _shown(one)
    assert z != y
    three.keyboard.press("b")  # x decided in the first tab meanwhile: refused, nothing written
    expect(three.get_by_text(re.compile("Not saved: you decided verdict"))).to_be_visible(timeout=WAIT)
    expect(three.get_by_text(re.compile("You decided: "))).to_be_visible(timeout=WAIT)  # shown again as decided
    two.keyboard.press("b")
    wait_for(two, lambda: len(written_by(ws, "ben")["reviews"]) == 2)
    wait_idle(three)
    per_verdict: dict[str, list[str]] = {}
    for r in written_by(ws, "ben")["reviews"]:
        per_verdict.setdefault(r["judgment_id"], []).append(r["label"])
    assert per_verdict == {x: [audit.to_system_label("pairwise", "A", audit.item(ws, x)["shown_order"])],
                           y: [audit.to_system_label("pairwise", "B", audit.item(ws, y)["shown_order"])]}

    # A reload of the first tab is back on the item it had open; K goes back along its trail to x.
    assert "tab=" in one.url
    one.reload()
    assert _item_on_screen(one) == z
    one.keyboard.press("k")
    wait_for(one, lambda: _shown(one) == x)
    expect(one.get_by_text(re.compile("You decided: "))).to_be_visible(timeout=WAIT)
    context.close()


def test_the_back_key_trail_survives_a_search(team_server):
    """cid decides two items with keys, then searches: the search's first item comes, and K goes back
    to the item on screen before the search, then to the ones he decided (each shows his decision)."""
    ws, url, browser = (team_server[k] for k in ("ws", "url", "browser"))
    cid = team.add_person(ws, "cid", "annotator")
    page = _signed_in(_context(browser), url, cid["token"], f"audit?judge={GT}", "cid")
    trail = [_item_on_screen(page)]
    for n in range(2):
        page.mouse.click(1000, 600)
        page.keyboard.press("y")
        wait_for(page, lambda n=n: len(written_by(ws, "cid")["reviews"]) == n + 1)
        wait_for(page, lambda: _shown(page) not in (None, *trail))
        trail.append(_item_on_screen(page))
    box = page.locator('[data-testid="stSidebar"]').get_by_label("Search questions and answers", exact=True).and_(page.locator("input"))
    box.fill("the")
    box.press("Enter")  # Enter searches and gives the keys back
    wait_for(page, lambda: _shown(page) not in (None, *trail))
    searched = _item_on_screen(page)
    assert "the" in (audit.item(ws, searched)["question"] + " ".join(a["text"] or "" for a in audit.item(ws, searched)["answers"])).lower()
    for back in reversed(trail):  # K: the item before the search, then the two decided
        page.keyboard.press("k")
        wait_for(page, lambda back=back: _shown(page) == back)
        wait_idle(page)
    assert "You decided: " in _main(page)
    assert len(written_by(ws, "cid")["reviews"]) == 2  # moving wrote nothing
    page.context.close()


def test_two_annotators_on_one_shared_queue_never_have_the_same_item(team_server):
    ws, url, links, browser = (team_server[k] for k in ("ws", "url", "links", "browser"))
    path = f"audit?judge={GT_SXS}&reviewed=unreviewed&blind=1"
    people = {name: _signed_in(_context(browser), url, team.new_link(ws, name)["token"], path, name) for name in ("ana", "ben")}
    start = {name: len(written_by(ws, name)["reviews"]) for name in people}
    seen = []
    for n in range(4):
        on = {name: _item_on_screen(page) for name, page in people.items()}
        assert on["ana"] != on["ben"], (n, on)
        for page in people.values():  # blind: why the item is in the queue is the judges' word too
            bar = page.locator(".st-key-lsqa_keys").inner_text()
            assert "hidden while blind" in bar and "priority" not in bar and "differ" not in bar, bar
        seen.append(on)
        for page in people.values():
            page.keyboard.press("a")
        for name, page in people.items():
            wait_for(page, lambda name=name, n=n: len(written_by(ws, name)["reviews"]) == start[name] + n + 1)
    decided = {name: [r["judgment_id"] for r in written_by(ws, name)["reviews"][start[name]:]] for name in people}
    assert not set(decided["ana"]) & set(decided["ben"]), decided  # nothing reviewed twice where once was meant
    assert [s["ana"] for s in seen] == decided["ana"] and [s["ben"] for s in seen] == decided["ben"]
    for page in people.values():
        page.context.close()


def test_no_page_requests_anything_beyond_127_0_0_1(team_server):
    ws, url, browser = team_server["ws"], team_server["url"], team_server["browser"]
    context = _context(browser)
    outside, requested = [], []

    def log(request):
        requested.append(request.url)
        host = urlparse(request.url).hostname
        if request.url.startswith(("http:", "https:", "ws:", "wss:")) and host != "127.0.0.1":
            outside.append(request.url)

    context.on("request", log)
    page = _signed_in(context, url, team.new_link(ws, "ada")["token"], "", "ada")
    for name in PAGES:
        page.goto(f"{url}/{name}")
        expect(page.locator('[data-testid="stSidebar"]').get_by_text(re.compile("ada · "))).to_be_visible(timeout=WAIT)
        wait_idle(page)
        page.wait_for_load_state("networkidle")
    assert len(requested) > 50  # the log did record the pages' own requests
    assert outside == [], sorted(set(outside))
    context.close()


def test_no_page_uses_an_icon_fetched_from_a_font_host():
    """The cheap check behind the browser's: Streamlit draws ':material/...:' icons from fonts.gstatic.com."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    for path in [root / "app.py", *sorted((root / "pages").glob("*.py"))]:
        assert ":material/" not in path.read_text(encoding="utf-8"), path
