"""The Audit page never misfiles and blind means blind (issue 34), in a real browser: Debian's chromium
driven by Playwright against `streamlit run app.py` on a private copy of the small demo workspace.

Each test plays what a person does, in order, and checks the workspace after each step: typing into
a filter writes nothing; a key writes only on the item on screen when it was pressed (two keys 50 ms
apart, a stale click, the first key after Enter in a field); a key held down acts once; the flag
reason holds for its item only; undo opens the undone item again; skip is recorded, not a label;
a blind page holds none of the judge's words; "?" lists the keys. One server and one browser serve
the module; each test signs its actions with its own name.
"""

from __future__ import annotations

import re
import shutil

import pytest

from lsqa import audit
from tests.support.browser import (
    SHOWN_JS,
    chromium,
    count_written,
    expect,
    fresh_page,
    need_browser,
    poll,
    wait_idle,
    written_by,
)
from tests.support.streamlit_server import serve

pytestmark = pytest.mark.browser

SXS, AIS = "lexical-sxs-fc", "lexical-autoais-fc"
WAIT = 30000


@pytest.fixture(scope="module")
def server(demo_workspace_template, tmp_path_factory):
    need_browser()
    ws = tmp_path_factory.mktemp("keys") / "demo.duckdb"
    shutil.copy(demo_workspace_template, ws)
    with serve(ws) as url:
        yield url, ws


@pytest.fixture(scope="module")
def browser(server):
    with chromium() as b:
        yield b


@pytest.fixture
def page(browser):
    with fresh_page(browser) as pg:
        yield pg


def _open(page, url: str):
    page.goto(url)
    expect(page.get_by_text(re.compile(r"Item \d+ of")).first).to_be_visible(timeout=60000)
    wait_idle(page)


def _shown(page) -> str | None:
    return page.evaluate(SHOWN_JS)




def _wait_written(ws, who: str, page) -> dict[str, list[dict]]:
    """What ``who`` wrote once the page is idle: a key's write is made by the run it starts (or by the run
    of the click keys.js sends for a key it held), and ``wait_idle`` waits for every such run to end."""
    wait_idle(page)
    return written_by(ws, who)


# ------------------------------------------------------------------------------ typing in widgets

def test_typing_into_the_judge_filter_with_chips_writes_nothing(server, page):
    """Issue 34, 1: once the Judge multiselect held chips, a click focused a chip and the letters typed
    next went to the shortcuts (a judge's name wrote a "wrong" flag, X/A/T decisions)."""
    base, ws = server
    _open(page, f"{base}/audit?annotator=kit&judge={SXS}&judge={AIS}")
    sidebar = page.locator('[data-testid="stSidebar"]')
    sidebar.get_by_text("Queue settings").click()
    wait_idle(page)
    judge = sidebar.locator('[data-testid="stMultiSelect"]').first
    chips = judge.locator("[data-tag]")
    expect(chips).to_have_count(2)
    for target in (chips.first, chips.nth(1).locator("span").first, judge.locator("input")):
        target.click()
        expect(page.locator("#lsqa-keys-paused")).to_be_visible()  # the page says the keys wait
        page.keyboard.type("lexical-gt fatxvwmqgdsyn?", delay=15)
        # A letter that reached a shortcut would have asked for a rerun as it was pressed: wait_idle
        # waits for every rerun asked for to end, so nothing written then means none was.
        wait_idle(page)
        page.keyboard.press("Escape")
        page.keyboard.press("Escape")
        wait_idle(page)
        assert count_written(ws, "kit") == 0, written_by(ws, "kit")
    # A slider and a select box are widgets too.
    sidebar.locator('[data-testid="stSelectbox"]').first.click()
    page.keyboard.type("xavfg", delay=15)
    page.keyboard.press("Escape")
    wait_idle(page)
    assert count_written(ws, "kit") == 0, written_by(ws, "kit")
    assert page.locator('#lsqa-keys-help').is_hidden()  # "?" typed into a widget opened nothing
    # Out of the widget, the keys act again.
    page.locator('[data-testid="stMain"]').click(position={"x": 900, "y": 500})
    expect(page.locator("#lsqa-keys-paused")).to_be_hidden()
    shown = _shown(page)
    page.keyboard.press("s")  # skip
    rows = _wait_written(ws, "kit", page)
    assert [(s["judgment_id"], s["reason"]) for s in rows["skips"]] == [(shown, "skip")] and not rows["reviews"]


def test_searching_types_no_shortcut_and_the_key_after_enter_acts_on_a_match(server, page):
    """The search box (issue 34: text search over questions and answers): the words typed write
    nothing, Enter narrows the queue to verdicts whose question or answers hold them, and the next key
    acts on the match on screen."""
    base, ws = server
    rows = audit.queue(ws, audit.Filters(judges=(AIS,), reviewed="all"), "", page_size=400)["rows"]
    question = audit.item(ws, rows[-1]["id"])["question"]
    word = max(question.split(), key=len).strip("?.,;'\"")
    _open(page, f"{base}/audit?annotator=sid&judge={AIS}")
    box = page.get_by_role("textbox", name="Search questions and answers")
    box.click()
    box.press_sequentially(f"{word} vyn", delay=15)  # shortcut letters inside the box: text, not keys
    box.fill(word)
    assert count_written(ws, "sid") == 0
    box.press("Enter")
    wait_idle(page)
    shown = _shown(page)
    it = audit.item(ws, shown)
    assert any(word.lower() in t.lower() for t in [it["question"]] + [a["text"] or "" for a in it["answers"]])
    page.keyboard.press("Escape")  # Esc gives the keys back
    page.keyboard.press("y")
    rows = _wait_written(ws, "sid", page)
    assert [(r["judgment_id"], r["label"]) for r in rows["reviews"]] == [(shown, "yes")]


# ----------------------------------------------------------------------- the item on screen

def test_two_keys_50_ms_apart_never_write_on_an_item_not_on_screen(server, page):
    """Issue 34, 2: a second key <= 100 ms after a decision was saved on the next item while the old
    one was still on screen (3 of 10). Each key's item is read off the screen as it is pressed."""
    base, ws = server
    _open(page, f"{base}/audit?annotator=lia&judge={AIS}")
    on_screen = []
    for _ in range(6):
        wait_idle(page)
        first = _shown(page)
        page.keyboard.press("y")
        page.wait_for_timeout(50)
        second = _shown(page)
        page.keyboard.press("n")
        on_screen.append((first, second))
        # Idle: the second key, held by keys.js while the first one's run went on, has been let go (a
        # click and its run, also waited for) or dropped; nothing else can write after this.
        rows = _wait_written(ws, "lia", page)
        # One review per pair, on the item on screen for the first key, with its label: the second key
        # was pressed before anybody could read another item, and wrote nothing.
        assert [(r["judgment_id"], r["label"]) for r in rows["reviews"]] == [(f, "yes") for f, _ in on_screen], on_screen
        # ``second``: the old item, none (between two items) or the next one, on screen for < 50 ms:
        # none of them gets the second key.
        assert first is not None and not any(r["judgment_id"] == second and r["label"] == "no" for r in rows["reviews"])
        expect(page.locator("#lsqa-keys-note")).to_contain_text(re.compile("^Not saved: the item (had just )?changed"))
        assert _shown(page) != first
    assert not written_by(ws, "lia")["flags"]


def test_a_press_from_the_old_screen_writes_nothing(server, page):
    """The desk's own guard, under keys.js: a press sent from the old item's screen after a decision
    (it names the old item as the one on screen) writes nothing on the item that follows it, and the
    answer says why."""
    base, ws = server
    _open(page, f"{base}/audit?annotator=max&judge={AIS}")
    first = _shown(page)
    desk = page.locator(".lsqa-desk").get_attribute("data-lsqa-desk")
    page.keyboard.press("y")
    wait_idle(page)
    nxt = _shown(page)
    assert nxt != first
    answer = page.evaluate("""([desk, first]) => fetch('/audit-desk', {method: 'POST',
      headers: {'Content-Type': 'application/json'},
      body: JSON.stringify({desk, button: 'audit_opt_no__writes', on_screen: first, note: ''})}).then(r => r.json())""",
                           [desk, first])
    assert "Not saved: the item changed under your key" in answer["html"] and answer["item"] == nxt
    rows = written_by(ws, "max")["reviews"]
    assert [(r["judgment_id"], r["label"]) for r in rows] == [(first, "yes")], rows  # the next item got nothing


def test_a_key_pressed_while_the_answer_is_out_writes_nothing(server, page):
    """A decision's answer is held back: the page still shows the old item. A second key pressed then
    is held by keys.js for that item; once the answer has put the next item on screen, the held key
    writes nothing (it was meant for the item before) and the page says so. A click meanwhile, past
    keys.js, sends nothing while a press is out."""
    base, ws = server
    held = []
    page.route("**/audit-desk", lambda route: held.append(route))
    _open(page, f"{base}/audit?annotator=uma&judge={AIS}")
    first = _shown(page)
    page.keyboard.press("y")
    poll(page, lambda: len(held) == 1)  # the press is on its way; its answer is held
    page.keyboard.press("n")  # held by keys.js, for the item on screen: the first
    page.locator('.lsqa-desk [data-lsqa-key="audit_opt_no__writes"]').evaluate("b => b.click()")  # past keys.js
    page.wait_for_timeout(200)
    assert len(held) == 1  # nothing more was sent while the press was out
    held.pop().continue_()
    wait_idle(page)
    assert _shown(page) != first
    rows = written_by(ws, "uma")["reviews"]
    assert [(r["judgment_id"], r["label"]) for r in rows] == [(first, "yes")], rows
    expect(page.get_by_text("Not saved: the item changed under your key").first).to_be_visible(timeout=WAIT)


def test_the_first_key_after_enter_in_the_name_acts_and_a_held_key_acts_once(server, page):
    """Issue 34, 2: the first key <= 150 ms after name + Enter was dropped silently (5 of 5); a key
    held down acted again and again."""
    base, ws = server
    _open(page, f"{base}/audit?judge={AIS}")
    name = page.get_by_label("Annotator", exact=True)
    name.click()
    name.press_sequentially("noa")
    before = _shown(page)
    name.press("Enter")
    page.wait_for_timeout(30)
    page.keyboard.press("y")
    rows = _wait_written(ws, "noa", page)["reviews"]
    wait_idle(page)
    assert page.get_by_label("Annotator", exact=True).input_value() == "noa"  # the key was not typed into the name
    if rows:  # it acted, on the item that was on screen
        assert [(r["judgment_id"], r["label"]) for r in rows] == [(before, "yes")]
    else:  # or the page said it could not
        assert "Not saved" in page.locator("#lsqa-keys-note").inner_text()
    done = count_written(ws, "noa")

    wait_idle(page)
    held = _shown(page)
    page.keyboard.down("n")
    for _ in range(12):  # key repeat, as a key held down sends it
        page.wait_for_timeout(40)
        page.keyboard.down("n")
    page.keyboard.up("n")
    # Idle: the run of the one press is over, and keys.js holds no repeat: a second write would be in.
    rows = _wait_written(ws, "noa", page)["reviews"][done:]
    assert [(r["judgment_id"], r["label"]) for r in rows] == [(held, "no")]


def test_flag_reason_holds_for_its_item_and_undo_opens_the_undone_item(server, page):
    """Issue 34, 7: the flag reason stayed chosen 15 items later; undo left one on the next item."""
    base, ws = server
    _open(page, f"{base}/audit?annotator=ora&judge={AIS}")
    page.keyboard.press("m")  # ambiguous, for this item
    wait_idle(page)
    page.keyboard.press("f")
    _wait_written(ws, "ora", page)
    wait_idle(page)
    page.keyboard.press("j")
    wait_idle(page)
    page.keyboard.press("g")  # the next item: the reason is back to "wrong"
    flags = _wait_written(ws, "ora", page)["flags"]
    assert [(f["reference"], f["reason"]) for f in flags] == [("1", "ambiguous"), ("2", "wrong")]

    wait_idle(page)
    decided = _shown(page)
    page.keyboard.press("y")
    _wait_written(ws, "ora", page)
    wait_idle(page)
    assert _shown(page) != decided
    page.keyboard.press("u")  # my last action is that review: undone, and its item is on screen again
    _wait_written(ws, "ora", page)
    wait_idle(page)
    assert _shown(page) == decided
    rows = written_by(ws, "ora")["reviews"]
    assert [r["action"] for r in rows] == ["override" if rows[0]["label"] != audit.item(ws, decided)["label"]
                                           else "confirm", "undo"]


# ------------------------------------------------------------------------------------ blind

def test_a_blind_page_holds_none_of_the_judges_words_and_question_mark_lists_the_keys(server, page):
    """Issue 34, 6: before deciding one saw the judge's scores ("A: 6 of 6 content words … (1.00)"),
    evidence "for answer A", and other people's flags ("⚑ ambiguous — ana")."""
    base, ws = server
    rows = audit.queue(ws, audit.Filters(judges=(SXS,), reviewed="all"), "pia", page_size=400)["rows"]
    items = [audit.item(ws, r["id"]) for r in rows[:30]]
    it = max(items, key=lambda i: (sum(not e["found"] for e in i["evidence"]), sum(e["found"] for e in i["evidence"])))
    notes = [e["text"] for e in it["evidence"] if not e["found"]]
    assert notes and any(e["found"] for e in it["evidence"])
    audit.review(ws, "quillon", it["id"], "tie", "quillon thinks so")
    audit.flag(ws, "quillon", it["question_id"], "1", "ambiguous", "odd reference")
    _open(page, f"{base}/audit?annotator=pia&judge={SXS}&blind=1&item={it['id']}")
    main = page.locator('[data-testid="stMain"]')
    expect(main.get_by_text(it["question"]).first).to_be_visible(timeout=WAIT)
    text = main.inner_text()
    for words in notes + ["quillon", "odd reference", "Verdict of", "for answer", "content words", "token F1",
                          it["system_a"], it["system_b"]]:
        assert words not in text, words
    assert "Found in the book" in text  # the book's passages stay

    page.keyboard.press("?")
    helpbox = page.locator("#lsqa-keys-help")
    expect(helpbox).to_be_visible()
    listed = helpbox.inner_text()
    for key, what in (("J", "Next"), ("V", "Confirm"), ("S", "Skip"), ("D", "Unsure"), ("U", "Undo")):
        assert re.search(rf"{key}\s+{what}", listed), (key, what, listed)
    page.keyboard.press("Escape")
    expect(helpbox).to_be_hidden()
    page.keyboard.press("?")
    expect(helpbox).to_be_visible()
    page.keyboard.press("?")
    expect(helpbox).to_be_hidden()

    page.keyboard.press("t")  # decided: now everything shows
    _wait_written(ws, "pia", page)
    wait_idle(page)
    page.keyboard.press("k")
    expect(page.get_by_text(re.compile("Verdict of")).first).to_be_visible(timeout=WAIT)
    assert "quillon" in main.inner_text()
