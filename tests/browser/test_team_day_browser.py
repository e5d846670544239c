"""A team's day on one dashboard (issue 34, "Done when"), in a real browser: Debian's chromium driven
by Playwright against `streamlit run app.py` on a private copy of the small demo workspace.

Four people, each signed in with their own link, in their own browser context: ada (admin) assigns
three verdicts of the ground-truth judge to ana and ben with overlap (the Audit page's *Assign items*
panel); vic (viewer) presses every key and types into every filter and the search box; ana and ben label their
assignments blind, with two keys 50 ms apart once, and disagree on one verdict; ada adjudicates it
on the Adjudicate page, with its key; vic's Agreement page and the corrected estimate then use the adjudicated
label; ben's link is revoked while his tab is open. The workspace is checked after every step.
"""

from __future__ import annotations

import re

import pytest

from lsqa import audit, store, team
from lsqa.figures import analysis, corrected
from lsqa.store import reviews as reviews_store
from tests.support.bad_input import snapshot
from tests.support.browser import SHOWN_JS, expect, served_team, wait_for, wait_idle

pytestmark = pytest.mark.browser

GT = "lexical-gt"  # yes / no against one reference: Y, N, V (confirm)
WAIT = 60000
EVERY_KEY = "jkvabtxynfgwmqsdu?"


def _reviews(ws, who: str) -> list[tuple[str, str, str]]:
    """(verdict, label, role) of ``who``'s live reviews, oldest first."""
    with store.connect(ws) as con:
        rows = reviews_store.reviews(con)
    return [(r["judgment_id"], r["label"], r["role"]) for r in rows if r["annotator"] == who and r["action"] != "undo"]


def _main_text(page) -> str:
    return page.locator('[data-testid="stMain"]').inner_text()


def _shown(page) -> str | None:
    return page.evaluate(SHOWN_JS)


def _signed_in(browser, url: str, token: str, path: str, name: str):
    """A new browser context (one person's own browser), signed in with their link, on ``path``."""
    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    page.goto(f"{url}/{path}{'&' if '?' in path else '?'}token={token}")
    expect(page.locator('[data-testid="stSidebar"]').get_by_text(re.compile(rf"{name} · "))).to_be_visible(timeout=WAIT)
    wait_idle(page)
    assert "token" not in page.url
    return page


def _go(page, name: str):
    """To another page by its sidebar link, as a person does (a typed address is a new session)."""
    page.locator('[data-testid="stSidebar"]').get_by_role("link", name=name).click()
    wait_idle(page)


def _scrolled_to(page, widget):
    """The sidebar scrolled to ``widget`` before it is clicked, as a person scrolls and then clicks. A
    list that is open closes when the sidebar scrolls (react-aria's close-on-scroll, in Streamlit's
    select boxes), and Playwright's click scrolls a widget below the fold into view and clicks in the
    same frame: the scroll event then comes after the click and shuts the list it opened, whose
    options are gone before they are clicked. Two frames later that event is delivered."""
    widget.scroll_into_view_if_needed()
    page.evaluate("() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")


def _press_away_from_widgets(page, key: str):
    page.mouse.click(1000, 500)  # on the page, on no widget (a mouse click, as a person's: nothing checked first)
    page.keyboard.press(key)


@pytest.fixture(scope="module")
def day(demo_workspace_template, tmp_path_factory):
    people = (("ada", "admin"), ("ana", "annotator"), ("ben", "annotator"), ("vic", "viewer"))
    with served_team(demo_workspace_template, tmp_path_factory.mktemp("team_day"), people) as served:
        yield served


def test_a_teams_day(day):
    ws, url, links, browser = day["ws"], day["url"], day["links"], day["browser"]
    with store.connect(ws) as con:
        assert not reviews_store.reviews(con)  # the day starts with no human labels

    # --- 1. ada (admin) assigns 3 random verdicts of the ground-truth judge to ana and ben, each to both.
    ada = _signed_in(browser, url, team.new_link(ws, "ada")["token"], "audit", "ada")
    side = ada.locator('[data-testid="stSidebar"]')
    side.get_by_text("Assign items").click()
    wait_idle(ada)
    judge = side.locator('[data-testid="stSelectbox"]').filter(has_text="Judge")
    _scrolled_to(ada, judge)
    judge.click()
    ada.get_by_role("option", name=GT, exact=True).click()
    wait_idle(ada)  # each choice reruns the page and draws the panel again: wait, as a person sees it redrawn
    names = side.locator('[data-testid="stMultiSelect"]').filter(has_text="Annotators")
    _scrolled_to(ada, names)
    names.locator("input").click()
    ada.get_by_role("option", name="ana", exact=True).click()  # ana with the mouse
    ada.keyboard.press("Escape")
    wait_idle(ada)
    names.locator("input").click()
    ada.keyboard.type("ben")  # ben typed, as a person picks a name from a long list
    ada.get_by_role("option", name="ben", exact=True).wait_for()
    ada.keyboard.press("Enter")
    ada.keyboard.press("Escape")
    wait_idle(ada)
    expect(names.locator("[data-tag]")).to_have_count(2)
    count = side.get_by_label("Verdicts")
    count.fill("3")
    count.press("Enter")
    wait_idle(ada)
    side.get_by_text("random", exact=True).click()
    wait_idle(ada)
    side.get_by_role("button", name="Assign").click()
    wait_for(ada, lambda: len(audit.team_progress(ws)) == 2)
    progress = {r["annotator"]: (r["assigned"], r["done"]) for r in audit.team_progress(ws)}
    assert progress == {"ana": (3, 0), "ben": (3, 0)}
    mine = [r["id"] for r in audit.queue.uncached(ws, audit.Filters(reviewed=audit.ASSIGNED), "ana")["rows"]]
    assert sorted(mine) == sorted(r["id"] for r in audit.queue.uncached(
        ws, audit.Filters(reviewed=audit.ASSIGNED), "ben")["rows"])  # overlap: both have the same three
    assert len(mine) == 3 and not _reviews(ws, "ada")  # assigning wrote no review
    label_of = {jid: audit.item(ws, jid)["label"] for jid in mine}
    other = {jid: "no" if label == "yes" else "yes" for jid, label in label_of.items()}

    # --- 2. vic (viewer) presses every key on the Audit page, types into its filters: nothing is written.
    vic = _signed_in(browser, url, team.new_link(ws, "vic")["token"], f"audit?judge={GT}", "vic")
    before = snapshot(ws)  # after the sign-in, which keeps a session for vic's browser (lsqa.team.sessions)
    expect(vic.get_by_text(re.compile("your role may not review and flag"))).to_be_visible(timeout=WAIT)
    for key in EVERY_KEY:
        _press_away_from_widgets(vic, key)
        wait_idle(vic)  # any run the key asked for is over: what it wrote is in
    vic.keyboard.press("Escape")
    wait_idle(vic)
    vside = vic.locator('[data-testid="stSidebar"]')
    vside.get_by_text("Queue settings").click()
    wait_idle(vic)
    for box in vside.locator('[data-testid="stMultiSelect"] input').all():
        if not box.is_enabled():  # "Reviewed by" before anybody reviewed: no options, nothing to type into
            continue
        box.click()
        vic.keyboard.type("vyntxfg", delay=15)
        vic.keyboard.press("Escape")
    wait_idle(vic)
    search = vside.get_by_role("textbox", name="Search questions and answers")
    search.click()
    search.press_sequentially("the vyntxfg", delay=15)
    search.press("Enter")
    wait_idle(vic)
    search.fill("")
    search.press("Enter")
    wait_idle(vic)
    for button in vic.locator('[data-testid="stMain"] button').all():  # decision buttons, if any are shown
        if button.is_visible() and button.is_enabled():
            button.click()
    wait_idle(vic)
    assert snapshot(ws) == before

    # --- 3. ana labels her assignments blind: confirm, then Y and N 50 ms apart, then confirm.
    ana = _signed_in(browser, url, team.new_link(ws, "ana")["token"], "audit?blind=1", "ana")
    expect(ana.get_by_text(re.compile("0 of 3 of my assignments done"))).to_be_visible(timeout=WAIT)
    plan = {}
    for n in range(3):
        wait_idle(ana)
        jid = _shown(ana)
        assert jid in mine
        it = audit.item(ws, jid)
        text = _main_text(ana)
        # Blind: none of the judge's words (its notes on the answer, the system's name, the verdict line).
        for words in [e["text"] for e in it["evidence"] if not e["found"]] + ["Verdict of", "token F1",
                                                                                it["answers"][0]["system"]]:
            assert words not in text, (words, jid)
        if n == 1:  # Y, and 50 ms later N: the N lands while the item changes and must write nothing
            ana.keyboard.press("y")
            ana.wait_for_timeout(50)
            ana.keyboard.press("n")
            plan[jid] = "yes"
        else:  # the judge's label (blind offers no Confirm: one cannot agree with a label one cannot see)
            ana.keyboard.press("y" if label_of[jid] == "yes" else "n")
            plan[jid] = label_of[jid]
        wait_for(ana, lambda n=n: len(_reviews(ws, "ana")) == n + 1)
        wait_idle(ana)  # the N, held by keys.js through the Y's run, was let go (its run waited for) or dropped
        assert _reviews(ws, "ana") == [(j, plan[j], "annotator") for j in plan]  # only the items on screen
    expect(ana.get_by_text(re.compile("3 of 3 of my assignments done"))).to_be_visible(timeout=WAIT)

    # --- 4. ben, blind too, sees none of ana's labels; he overrides the first of her confirms and
    # agrees on the rest: one disagreement.
    split = next(j for j in mine if plan[j] == label_of[j])
    ben_plan = {j: (other[j] if j == split else plan[j]) for j in mine}
    ben = _signed_in(browser, url, team.new_link(ws, "ben")["token"], "audit?blind=1", "ben")
    expect(ben.get_by_text(re.compile("0 of 3 of my assignments done"))).to_be_visible(timeout=WAIT)
    for n in range(3):
        wait_idle(ben)
        jid = _shown(ben)
        assert "ana" not in _main_text(ben)  # another person's label is not shown before ben decides
        ben.keyboard.press("y" if ben_plan[jid] == "yes" else "n")
        wait_for(ben, lambda n=n: len(_reviews(ws, "ben")) == n + 1)
        wait_idle(ben)
    assert sorted(_reviews(ws, "ben")) == sorted((j, ben_plan[j], "annotator") for j in mine)
    listed = audit.disagreements(ws)
    assert [(d["judgment_id"], d["adjudicated"]) for d in listed] == [(split, None)]
    assert {(lab["annotator"], lab["label"]) for lab in listed[0]["labels"]} == {("ana", plan[split]),
                                                                               ("ben", other[split])}
    # The tie is no human label yet: judge-vs-human counts the two agreed verdicts only.
    assert analysis.agreement(ws, GT, f"human@{GT}", bootstrap=0)["n"] == 2
    assert corrected.corrected_accuracy(ws, GT, queue="random")["n_tied_not_used"] == 1

    # --- 5. ada adjudicates on the Adjudicate page: ben was right.
    _go(ada, "Adjudicate")
    expect(ada.get_by_text("1 disagreement, 1 not adjudicated yet")).to_be_visible(timeout=WAIT)
    wait_idle(ada)
    text = _main_text(ada)
    assert "ana" in text and "ben" in text
    assert _shown(ada) == split
    note = ada.get_by_label("Note (why)")
    note.fill("the book says otherwise")
    note.press("Enter")  # gives the keys back
    wait_idle(ada)
    ada.keyboard.press("y" if other[split] == "yes" else "n")  # the final label's key (yes/no: Y / N)
    wait_for(ada, lambda: audit.disagreements(ws)[0]["adjudicated"] is not None)
    final = audit.disagreements(ws)[0]["adjudication"]
    assert (final["label"], final["note"], final["adjudicator"]) == (other[split], "the book says otherwise", "ada")

    # --- 6. The adjudicated label is the one the statistics use: vic's Agreement page and the correction.
    human = {j: (other[split] if j == split else plan[j]) for j in mine}
    agree = sum(human[j] == label_of[j] for j in mine)
    result = analysis.agreement(ws, GT, f"human@{GT}", bootstrap=0)
    assert (result["n"], result["agreement"]) == (3, pytest.approx(agree / 3))
    assert corrected.corrected_accuracy(ws, GT, queue="random")["n_tied_not_used"] == 0
    _go(vic, "Agreement")
    expect(vic.get_by_text(f"{GT} vs human — agreement {100 * agree / 3:.1f}%", exact=False).first).to_be_visible(
        timeout=WAIT)

    # --- 7. ben's link is revoked while his tab is open: his next key signs nobody in and writes nothing.
    team.revoke_person(ws, "ben")
    before = snapshot(ws)
    ben.locator('[data-testid="stSidebar"]').get_by_role("link", name="Leaderboard").click()
    expect(ben.get_by_role("heading", name="Sign in").first).to_be_visible(timeout=WAIT)
    for key in "jyvn":
        _press_away_from_widgets(ben, key)
    wait_idle(ben)
    ben.goto(f"{url}/?token={links['ben']}")
    expect(ben.get_by_text("This sign-in link does not work here")).to_be_visible(timeout=WAIT)
    assert snapshot(ws) == before
