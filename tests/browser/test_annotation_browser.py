"""Annotating in a real browser (issue 12, defects 1-8): Debian's chromium driven by Playwright against
`streamlit run app.py` on a private copy of the small demo workspace.

Each test does what an annotator does, in order, with the keyboard and the mouse, and checks both
the screen and what the workspace saved. One server and one browser serve the whole module (each
test uses its own annotator names, so their reviews do not meet); a test takes 10-40 s.
"""

from __future__ import annotations

import re
import shutil

import pytest

from lsqa import audit, store
from lsqa.audit import reference_errors
from lsqa.store import reviews as reviews_store
from lsqa.store import verdicts as verdicts_store
from tests.support.browser import (
    chromium,
    expect,
    fresh_page,
    need_browser,
    wait_for,
    wait_idle,
    wait_scrolled,
    wait_still,
)
from tests.support.streamlit_server import serve

pytestmark = pytest.mark.browser

SXS, AIS, GT = "lexical-sxs-fc", "lexical-autoais-fc", "lexical-gt"
WAIT = 30000
VIEWPORT_MIDDLE = {"x": 900, "y": 500}  # in the main area, away from the sidebar's tables


@pytest.fixture(scope="module")
def server(demo_workspace_template, tmp_path_factory):
    need_browser()
    ws = tmp_path_factory.mktemp("annotation") / "demo.duckdb"
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


def _open(page, url: str, wait_for=re.compile(r"Item \d+ of")):
    page.goto(url)
    expect(page.get_by_text(wait_for).first).to_be_visible(timeout=60000)
    wait_idle(page)


def _press(page, key: str):
    wait_idle(page)
    page.keyboard.press(key)


def _toast(page, pattern) -> str:
    """What the page said after an action: the desk's line (a press) or a toast (the page's own widgets)."""
    toast = page.locator('.lsqa-desk [role="status"], .lsqa-desk [role="alert"], [data-testid="stToast"]').filter(
        has_text=pattern).last
    expect(toast).to_be_visible(timeout=WAIT)
    return toast.inner_text()


def _reviews(ws, annotator: str) -> list[dict]:
    with store.connect(ws) as con:
        return [r for r in reviews_store.reviews(con) if r["annotator"] == annotator]


def _reviews_when_saved(page, ws, annotator: str, count: int) -> list[dict]:
    """The annotator's reviews once there are ``count``: a "Saved" toast on screen may still be the
    one of the action before (toasts stay a few seconds), so the workspace is what to wait for (as the
    page's runs end: a review is written by the run its key starts)."""
    wait_for(page, lambda: len(_reviews(ws, annotator)) >= count)
    return _reviews(ws, annotator)


def _flags(ws, annotator: str) -> list[dict]:
    with store.connect(ws) as con:
        return [f for f in reviews_store.flags(con) if f["annotator"] == annotator]


def _position(page) -> tuple[int, int]:
    text = page.get_by_text(re.compile(r"Item [\d,]+ of [\d,]+")).first.inner_text()
    i, n = re.search(r"Item ([\d,]+) of ([\d,]+)", text).groups()
    return int(i.replace(",", "")), int(n.replace(",", ""))


def _click_row(page, table, row: int):
    """Tick a row of a Streamlit dataframe (glide grid on a canvas): its row marker, left of the first column."""
    table.locator('[role="gridcell"]').first.wait_for(state="attached", timeout=WAIT)  # the grid, not its skeleton
    table.scroll_into_view_if_needed()
    wait_idle(page)
    box = wait_still(table)  # a panel just opened still grows (and the page scrolls): click once it holds still
    page.mouse.click(box["x"] + 18, box["y"] + 35 * (row + 1) + 17)


# ------------------------------------------------------------------------------------- defect 1

def test_keys_act_again_after_fields_and_flag_reasons_have_keys(server, page):
    base, ws = server
    _open(page, f"{base}/audit?judge={AIS}")
    name = page.get_by_label("Annotator", exact=True)
    name.click()
    name.press_sequentially("ana")
    name.press("Enter")  # as the page asks: type the name, press Enter …
    _press(page, "v")  # … and the keys are live: V confirms
    _toast(page, "Saved")
    expect(name).to_have_value("ana")
    assert [r["action"] for r in _reviews_when_saved(page, ws, "ana", 1)] == ["confirm"]

    note = page.get_by_label(re.compile(r"^Note"))
    note.click()
    expect(page.locator("#lsqa-keys-paused")).to_be_visible()  # the page says the keys wait for the field
    note.press_sequentially("ref seems off")
    note.press("Enter")
    expect(page.locator("#lsqa-keys-paused")).to_be_hidden()
    _press(page, "n")
    _toast(page, "Saved")
    assert [(r["label"], r["note"]) for r in _reviews_when_saved(page, ws, "ana", 2)][-1] == ("no", "ref seems off")

    # The note went with that review: the field is emptied for the next one (a person waits to see it
    # empty; typing into it while the page still reruns would add to the old text, visibly).
    wait_idle(page)
    expect(note).to_have_value("")
    note.click()
    note.press_sequentially("second look")
    note.press("Escape")
    _press(page, "y")
    _toast(page, "Saved")
    assert [(r["label"], r["note"]) for r in _reviews_when_saved(page, ws, "ana", 3)][-1] == ("yes", "second look")

    question = audit.item(ws, _reviews(ws, "ana")[-1]["judgment_id"])  # noqa: F841 (kept for the message)
    page.get_by_text("ambiguous", exact=True).first.click()  # a flag reason with the mouse, then F
    _press(page, "f")
    _toast(page, "Flagged reference 1 as ambiguous")
    _press(page, "q")  # a reason by its key, then G
    _press(page, "g")
    _toast(page, "Flagged reference 2 as unanswerable")
    assert [(f["reference"], f["reason"]) for f in _flags(ws, "ana")] == [("1", "ambiguous"), ("2", "unanswerable")]

    # A radio choice in the sidebar, then J: the key moves, it is not swallowed by the radio.
    page.locator('[data-testid="stSidebar"]').get_by_text("Queue settings").click()
    wait_idle(page)
    page.locator('[data-testid="stSidebar"]').get_by_text("all", exact=True).click()
    wait_idle(page)
    before = _position(page)
    _press(page, "j")
    expect(page.get_by_text(re.compile(rf"Item {before[0] + 1} of"))).to_be_visible(timeout=WAIT)

    # Without a name the decision keys cannot act: the page says so (a new visitor, nobody named).
    newcomer = page.context.browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
    try:
        _open(newcomer, f"{base}/audit?judge={AIS}")
        expect(newcomer.get_by_text(re.compile("decision keys .* do nothing"))).to_be_visible()
    finally:
        newcomer.context.close()


# ------------------------------------------------------------------------------------- defect 2

def test_reference_errors_selection_follows_the_question(server, page):
    base, ws = server
    rows = reference_errors.suspects(ws)
    target = rows[3]  # below the top: a 'wrong' flag (score 1) moves it up the list
    page.goto(f"{base}/reference_errors?annotator=rex")
    expect(page.get_by_role("heading", name="Most likely wrong")).to_be_visible(timeout=60000)
    wait_idle(page)
    table = page.locator(".st-key-re_table")
    _click_row(page, table, 3)
    form = page.locator('[data-testid="stForm"]')
    chosen = page.locator('[data-testid="stMarkdownContainer"]').filter(has_text=target["question"])
    expect(chosen.first).to_be_visible(timeout=WAIT)
    wait_idle(page)
    form.get_by_role("button", name=re.compile("Flag reference")).click()
    _toast(page, "Flagged reference")
    wait_idle(page)
    order = [(r["question_id"], r["reference"]) for r in reference_errors.suspects(ws)]
    assert order.index((target["question_id"], target["reference"])) < 3  # the list re-sorted: row 4 is another
    # The form still targets the question just flagged, wherever its row went: flag it again.
    expect(chosen.first).to_be_visible(timeout=WAIT)
    form.get_by_text("ambiguous", exact=True).click()
    form.get_by_role("button", name=re.compile("Flag reference")).click()
    _toast(page, "as ambiguous")
    assert [(f["question_id"], f["reference"], f["reason"]) for f in _flags(ws, "rex")] == \
        [(target["question_id"], target["reference"], "wrong"), (target["question_id"], target["reference"], "ambiguous")]
    wait_idle(page)
    page.get_by_role("button", name="Undo my last flag").click()
    text = _toast(page, "Undone")
    assert target["question"] in text and not re.search(r"[0-9a-f]{10}", text)
    with store.connect(ws) as con:
        current = [f for f in verdicts_store.current_flags(con) if f["annotator"] == "rex"]
    assert [f["reason"] for f in current] == ["wrong"]


def test_reference_errors_evidence_panel_follows_the_picked_row(server, page):
    """Issue 32: the row picked shows its own evidence — the systems' caption with the strongest system's
    reading, the summary sentence with the reference's words marked, the LLM check's line."""
    from lsqa.dashboard import reference_view
    base, ws = server
    rows = reference_errors.suspects(ws)
    pick = next(i for i, r in enumerate(rows[1:10], 1)
                if r["summary_sentence"] and r["systems"] and r["summary_sentence"] != rows[0]["summary_sentence"])
    page.goto(f"{base}/reference_errors?annotator=uma")
    expect(page.get_by_role("heading", name="Most likely wrong")).to_be_visible(timeout=60000)
    wait_idle(page)
    expect(page.get_by_text(reference_view.systems_caption(rows[0]))).to_be_visible(timeout=WAIT)
    _click_row(page, page.locator(".st-key-re_table"), pick)
    row = rows[pick]
    expect(page.get_by_text(reference_view.systems_caption(row))).to_be_visible(timeout=WAIT)
    marked = page.locator("div.lsqa-text mark")
    expect(marked.first).to_be_visible(timeout=WAIT)
    from lsqa.text.sentence_support import shared_word_spans
    words = [row["summary_sentence"][a:b] for a, b in shared_word_spans(row["reference_text"], row["summary_sentence"])]
    assert marked.all_inner_texts() == words
    expect(page.get_by_text(reference_view.llm_lines(row)[0])).to_be_visible(timeout=WAIT)
    strongest = page.locator('[role="gridcell"]').filter(has_text=re.compile(f"^{re.escape(row['systems'][0]['system'])}$"))
    expect(strongest.first).to_be_attached(timeout=WAIT)  # the systems' table (a canvas grid with accessible cells)


# ------------------------------------------------------------------------------------- defect 3

def test_previous_item_and_my_recent_reviews_reopen_a_decision(server, page):
    base, ws = server
    first = audit.item(ws, audit.queue(ws, audit.Filters(judges=(GT,)), "hal")["rows"][0]["id"])
    _open(page, f"{base}/audit?annotator=hal&judge={GT}")
    i, n = _position(page)
    assert i == 1
    _press(page, "y")
    _toast(page, "Saved")
    expect(page.get_by_text(f"Item 2 of {n}")).to_be_visible(timeout=WAIT)  # the position moves on
    _press(page, "k")  # and back
    expect(page.get_by_text(f"Item 1 of {n}")).to_be_visible(timeout=WAIT)
    expect(page.get_by_text(first["question"]).first).to_be_visible()
    _press(page, "n")  # change my decision: a new row
    _toast(page, "Saved")
    _press(page, "j")
    expect(page.get_by_text(f"Item 3 of {n}")).to_be_visible(timeout=WAIT)
    mine = _reviews(ws, "hal")
    assert [(r["judgment_id"], r["label"]) for r in mine] == [(first["id"], "yes"), (first["id"], "no")]

    wait_idle(page)
    page.get_by_text("My recent reviews").click()  # folded until opened
    recent = page.locator('[class*="st-key-audit_recent"][data-stale="false"]')  # not the one being replaced
    expect(recent).to_be_visible()
    _click_row(page, recent, 0)  # my latest review: the first item again
    expect(page.get_by_text(first["question"]).first).to_be_visible(timeout=WAIT)
    _press(page, "y")
    _toast(page, "Saved")
    assert [r["label"] for r in _reviews_when_saved(page, ws, "hal", 3)] == ["yes", "no", "yes"]


def test_up_next_is_folded_until_opened_and_a_row_picked_there_is_the_item_decided(server, page):
    """Up next is folded (its table, drawn again on every key, cost a keypress ~0.05 s: BENCHMARKS,
    seventh pass); opened, it shows the queue after the item shown, and the row picked is the item the
    next decision is about. It stays open from item to item."""
    base, ws = server
    rows = audit.queue(ws, audit.Filters(judges=(GT,)), "ida")["rows"]
    _open(page, f"{base}/audit?annotator=ida&judge={GT}")
    i, n = _position(page)
    assert i == 1
    expect(page.get_by_text("Up next (")).to_be_visible()
    assert page.locator('[class*="st-key-audit_table"]').count() == 0  # folded: no grid sent or drawn
    wait_idle(page)
    page.get_by_text("Up next (").click()
    table = page.locator('[class*="st-key-audit_table"][data-stale="false"]')
    expect(table).to_be_visible(timeout=WAIT)
    _click_row(page, table, 2)  # the third after the item shown
    expect(page.get_by_text(f"Item 2 of {n}")).to_be_visible(timeout=WAIT)
    _press(page, "y")
    _toast(page, "Saved")
    assert [r["judgment_id"] for r in _reviews_when_saved(page, ws, "ida", 1)] == [rows[3]["id"]]
    expect(page.get_by_text(f"Item 3 of {n}")).to_be_visible(timeout=WAIT)
    expect(page.locator('[class*="st-key-audit_table"][data-stale="false"]')).to_be_visible(timeout=WAIT)


# ------------------------------------------------------------------------------------- defect 4

def test_decision_bar_in_view_and_evidence_folded_and_labelled(server, page):
    base, ws = server
    first = audit.item(ws, audit.queue(ws, audit.Filters(judges=(SXS,)), "lou")["rows"][0]["id"])
    found = [e for e in first["evidence"] if e["found"]]
    assert found and first["pairwise"]
    _open(page, f"{base}/audit?annotator=lou&judge={SXS}")
    confirm = page.get_by_role("button", name="Confirm")

    def in_view():
        box = confirm.bounding_box()
        return box is not None and 0 <= box["y"] and box["y"] + box["height"] <= 800

    assert in_view(), confirm.bounding_box()
    page.mouse.move(640, 500)
    for _ in range(8):
        page.mouse.wheel(0, 1500)
    wait_scrolled(page)  # the wheel's scroll is done (scrolled, and still)
    assert in_view(), confirm.bounding_box()  # still there at the bottom of the page

    book = _book_text(ws, first["document_id"])
    blocks = page.locator(".lsqa-evidence")
    expect(blocks.first).to_be_visible()
    assert blocks.count() == len(found)
    captions = page.get_by_text(re.compile(r"^Found in the book")).all_inner_texts()
    wheres = [c.split("(")[1].split(")")[0] for c in captions]
    assert len(wheres) == len(set(wheres))  # never the same passage twice
    assert all(re.search(r"for answers? [AB]|for neither", c) for c in captions), captions
    shown = blocks.first.locator(".lsqa-text:visible").inner_text()
    _assert_word_bounds(book, shown)
    blocks.first.get_by_text("Whole passage").click()  # unfolded in the browser: no run, no request
    whole = blocks.first.locator(".lsqa-text:visible").inner_text()
    assert len(whole) > len(shown) and " ".join(shown.split()) in " ".join(whole.split())


def _book_text(ws, document_id: str) -> str:
    with store.connect(ws) as con:
        return con.execute("SELECT full_text FROM documents WHERE id = ?", [document_id]).fetchone()[0]


def _assert_word_bounds(book: str, shown: str):
    words = shown.split()
    head = r"\s+".join(map(re.escape, words[:6]))
    tail = r"\s+".join(map(re.escape, words[-6:]))
    assert re.search(r"(?<!\S)" + head, book), f"starts inside a word: {shown[:60]!r}"
    assert re.search(tail + r"(?!\S)", book), f"ends inside a word: {shown[-60:]!r}"


# ------------------------------------------------------------------------------------- defect 5

def test_blind_mode_hides_labels_and_names_until_i_decide(server, page):
    base, ws = server
    row = audit.queue(ws, audit.Filters(judges=(SXS,), reviewed="all"), "bea")["rows"][5]
    audit.review(ws, "otto", row["id"], "tie", "otto's view")  # another annotator's label on the item
    item = audit.item(ws, row["id"])
    _open(page, f"{base}/audit?annotator=bea&judge={SXS}&item={row['id']}")  # a link to the item otto reviewed
    sidebar = page.locator('[data-testid="stSidebar"]')
    sidebar.get_by_text("Queue settings").click()  # folded until opened, like the queue's filters
    wait_idle(page)
    blind = sidebar.get_by_role("switch", name=re.compile("^Blind"))
    for _ in range(3):  # a click that lands while the page reruns can be dropped; a person clicks again
        sidebar.get_by_text(re.compile("^Blind")).click()
        wait_idle(page)
        if blind.is_checked():
            break
    expect(blind).to_be_checked()
    expect(sidebar.get_by_text(re.compile(r"^Queue: .* · blind$"))).to_be_visible(timeout=WAIT)
    expect(page.get_by_text(item["question"]).first).to_be_visible(timeout=WAIT)
    main = page.locator('[data-testid="stMain"]')
    text = main.inner_text()
    assert "Verdict of" not in text and "otto" not in text
    for system in (item["system_a"], item["system_b"]):
        assert system not in text, system
    _press(page, "t")
    _toast(page, "Saved")
    _press(page, "k")
    expect(page.get_by_text(re.compile("Verdict of")).first).to_be_visible(timeout=WAIT)  # decided: all shown
    text = main.inner_text()
    assert "otto" in text and item["system_a"] in text


def test_queue_settings_stay_as_chosen_while_folded_and_after_another_page(server, page):
    """The queue's filters are folded (not built) until opened: a judge picked there must still
    filter the queue once the panel is folded again, on the next item, and after another page."""
    base, ws = server
    _open(page, f"{base}/audit?annotator=ivy")
    sidebar = page.locator('[data-testid="stSidebar"]')
    expect(sidebar.get_by_text("Queue: not reviewed by me", exact=True)).to_be_visible(timeout=WAIT)
    assert sidebar.locator('[data-testid="stMultiSelect"]').count() == 0
    _, everything = _position(page)
    sidebar.get_by_text("Queue settings").click()
    wait_idle(page)
    sidebar.locator('[data-testid="stMultiSelect"]').first.click()
    page.keyboard.type(AIS)
    page.keyboard.press("Enter")
    page.keyboard.press("Escape")
    expect(sidebar.get_by_text("Queue: 1 judge · not reviewed by me", exact=True)).to_be_visible(timeout=WAIT)
    wait_idle(page)
    _, filtered = _position(page)
    assert filtered == audit.queue(ws, audit.Filters(judges=(AIS,)), "ivy")["total"] < everything
    sidebar.get_by_text("Queue settings").click()  # fold it again
    wait_idle(page)
    assert sidebar.locator('[data-testid="stMultiSelect"]').count() == 0
    _press(page, "j")
    expect(page.get_by_text(re.compile(rf"Item 2 of {filtered:,}$")).first).to_be_visible(timeout=WAIT)
    page.get_by_test_id("stSidebarNav").get_by_role("link", name="Overview").click()
    expect(page.get_by_role("heading", name="lsqa")).to_be_visible(timeout=WAIT)
    page.get_by_test_id("stSidebarNav").get_by_role("link", name="Audit").click()
    expect(sidebar.get_by_text("Queue: 1 judge · not reviewed by me", exact=True)).to_be_visible(timeout=WAIT)
    wait_idle(page)
    assert _position(page)[1] == filtered
    sidebar.get_by_text("Progress of every annotator").click()  # folded too, until asked for
    expect(sidebar.locator('[data-testid="stDataFrame"]')).to_be_visible(timeout=WAIT)


def test_open_progress_table_counts_a_decision_made_by_key(server, page):
    """The item is a fragment (J, K and the decision keys rerun it alone, issue 12): a decision must
    still reach the sidebar's progress table when it is open, and the next item must show."""
    base, ws = server
    _open(page, f"{base}/audit?annotator=pia&judge={AIS}")
    sidebar = page.locator('[data-testid="stSidebar"]')
    sidebar.get_by_text("Progress of every annotator").click()
    table = sidebar.locator('[data-testid="stDataFrame"]')
    expect(table).to_be_visible(timeout=WAIT)
    wait_idle(page)
    expect(table.locator('[role="gridcell"]').first).to_be_attached(timeout=WAIT)  # its cells drawn: read them
    assert "pia" not in table.inner_text()
    i, _ = _position(page)
    _press(page, "v")
    expect(page.get_by_text(re.compile(rf"Item {i + 1} of")).first).to_be_visible(timeout=WAIT)
    expect(table).to_contain_text("pia", timeout=WAIT)
    assert len(_reviews_when_saved(page, ws, "pia", 1)) == 1
    # Folded again, the next decision reruns the item alone and still lands once. The pointer leaves
    # the table first: hovered, its toolbar lies over the panel's header.
    page.mouse.move(VIEWPORT_MIDDLE["x"], VIEWPORT_MIDDLE["y"])
    sidebar.get_by_text("Progress of every annotator").click()
    wait_idle(page)
    _press(page, "v")
    expect(page.get_by_text(re.compile(rf"Item {i + 2} of")).first).to_be_visible(timeout=WAIT)
    assert len(_reviews_when_saved(page, ws, "pia", 2)) == 2


# ------------------------------------------------------------------------------------- defect 6

def test_second_review_queue_overlap_late_warning_and_agreement(server, page):
    base, ws = server
    rows = audit.queue(ws, audit.Filters(judges=(AIS,)), "rita")["rows"]
    for r in rows[:3]:
        audit.confirm(ws, "rita", r["id"])
    _open(page, f"{base}/audit?annotator=sam&judge={AIS}&reviewed=second")
    # The three rita reviewed (and those ana reviewed in another test) need a second review.
    with store.connect(ws) as con:
        labels = [h for h in verdicts_store.human_labels(con, judge=AIS)]
    by_verdict = {}
    for h in labels:
        by_verdict.setdefault(h["judgment_id"], set()).add(h["annotator"])
    once = [v for v, who in by_verdict.items() if len(who) == 1 and "sam" not in who]
    i, n = _position(page)
    assert n == len(once) >= 3
    # Overlap 0 %: an item someone reviewed is not for anybody else in "not reviewed by me".
    page.goto(f"{base}/audit?annotator=sam&judge={AIS}")
    expect(page.get_by_text(re.compile(r"Item \d+ of")).first).to_be_visible(timeout=60000)
    wait_idle(page)
    _, before = _position(page)
    page.locator('[data-testid="stSidebar"]').get_by_text("Double annotation", exact=True).click()
    wait_idle(page)  # the panel's content is built by the run its opening starts
    # The slider to 0 %: a click at the left end of its track. (Focus and Home within a second of the
    # click that opened the panel is taken by keys.js for a mouse choice, whose focus it drops.)
    track = page.locator('[data-testid="stSidebar"] [data-testid="stSlider"] [role="group"] > div').first
    track.click(position={"x": 0, "y": track.bounding_box()["height"] / 2})
    expect(page.locator('[data-testid="stSidebar"]').get_by_role("slider")).to_have_attribute("aria-valuetext", "0%")
    page.get_by_role("button", name="Save overlap").click()
    _toast(page, "Overlap set to 0%")
    wait_idle(page)
    _, after = _position(page)
    with store.connect(ws) as con:  # by anybody but sam, in this test or another one on this server
        reviewed_by_others = {h["judgment_id"] for h in verdicts_store.human_labels(con, judge=AIS)
                              if h["annotator"] != "sam"}
    assert audit.overlap(ws) == 0.0 and after == before - len(reviewed_by_others)
    # Someone else reviews the item I have open: my decision is saved, and I am told.
    current = audit.queue(ws, audit.Filters(judges=(AIS,)), "sam")["rows"][0]
    audit.confirm(ws, "rita", current["id"])
    _press(page, "y")
    assert "rita reviewed this item after you opened it" in _toast(page, "Saved")
    audit.set_overlap(ws, 1.0, "test")
    # Agreement: the judge against each annotator; the "≥ 2" count is the pair table's item count.
    audit.confirm(ws, "sam", rows[0]["id"])
    page.goto(f"{base}/agreement?annotator=sam")
    expect(page.get_by_role("heading", name="Per annotator")).to_be_visible(timeout=60000)
    wait_idle(page)
    # A table's cells are drawn after its run (the grid lays them out once mounted): wait for the one read.
    pair = page.locator('[data-testid="stDataFrame"]').filter(has_text="human:sam").filter(has_text="human:rita")
    expect(pair.filter(has_text=AIS).first).to_be_attached(timeout=WAIT)
    tables = page.locator('[data-testid="stDataFrame"]').all_text_contents()
    assert any("human:sam" in t and "human:rita" in t and AIS in t for t in tables)
    # The annotators' own agreement is another tab; the open tab goes into the link, which reopens it.
    page.get_by_role("tab", name="Among annotators").click()
    metric = page.locator('[data-testid="stMetric"]').filter(has_text="reviewed by ≥ 2")
    expect(metric).to_be_visible(timeout=60000)
    assert "section=Among+annotators" in page.url
    page.reload()
    expect(metric).to_be_visible(timeout=60000)
    expect(page.get_by_role("heading", name="Per annotator")).to_have_count(0)
    shown = int(metric.locator('[data-testid="stMetricValue"]').inner_text())
    # The tab's parameter belongs to the Agreement page: another page's link does not carry it.
    page.get_by_test_id("stSidebarNav").get_by_role("link", name="Corpus").click()
    expect(page.get_by_role("heading", name="Corpus").first).to_be_visible(timeout=60000)
    assert "section=" not in page.url
    from lsqa.dashboard import agreement_view
    from lsqa.figures import analysis

    pairs = agreement_view.agreement_overview(ws, bootstrap=0)["annotator_pairs"]
    shared = set()
    for p in pairs:
        a = analysis.rater_labels(ws, f"human:{p['rater_a']}")
        b = analysis.rater_labels(ws, f"human:{p['rater_b']}")
        shared |= set(a) & set(b)
    assert shown == len(shared) > 0


# ------------------------------------------------------------------------------------- defect 7

def test_feedback_speaks_in_the_terms_shown(server, page):
    base, ws = server
    rows = audit.queue(ws, audit.Filters(judges=(SXS,)), "fay")["rows"]
    first = next(r for r in rows if r["shown_order"] == "ba")  # shown B is system_a: stored as "A"
    item = audit.item(ws, first["id"])
    _open(page, f"{base}/audit?annotator=fay&judge={SXS}&item={first['id']}")
    page.get_by_text(item["question"]).first.wait_for(timeout=WAIT)
    _press(page, "b")
    said = _toast(page, "Saved")
    assert "B is better" in said and "→ A" not in said
    assert [r["label"] for r in _reviews(ws, "fay")] == ["A"]  # stored in system terms all the same
    _press(page, "u")
    undone = _toast(page, "Undone")
    assert item["question"] in undone and "B is better" in undone and not re.search(r"[0-9a-f]{10}", undone)


# ------------------------------------------------------------------------------------- defect 8

def test_guidelines_per_judge_kind_editable_in_the_workspace(server, page):
    base, ws = server
    _open(page, f"{base}/audit?annotator=gus&judge={AIS}")
    panel = page.get_by_text(re.compile("^Guidelines for absolute verdicts"))
    panel.click()
    expect(page.get_by_text("Correct means: supported by the book.", exact=True)).to_be_visible(timeout=WAIT)
    expect(page.get_by_text(re.compile("what to flag|Flag a reference", re.I)).first).to_be_visible()
    page.get_by_text("Edit the guidelines of this item's judge kind").click()  # a panel of the page
    wait_idle(page)  # the panel's content is built by the rerun its opening started: let it end
    box = page.get_by_label("Edit the guidelines for absolute verdicts in this workspace")
    box.fill("**Correct means: the book says so.** Team rule: flag every reference copied from a summary.")
    page.get_by_role("button", name="Save guidelines").click()
    _toast(page, "Guidelines for absolute verdicts saved")
    from lsqa.judging import guidelines

    assert guidelines.for_kind(ws, "absolute")["text"].startswith("**Correct means: the book says so.**")
    _open(page, f"{base}/audit?annotator=gus&judge={GT}")
    page.get_by_text(re.compile("^Guidelines for groundtruth verdicts")).click()
    expect(page.get_by_text("Correct means: agrees with the reference.", exact=True)).to_be_visible(timeout=WAIT)
    _open(page, f"{base}/audit?annotator=gus&judge={AIS}")
    page.get_by_text(re.compile("^Guidelines for absolute verdicts")).click()
    expect(page.get_by_text("Correct means: the book says so.", exact=True)).to_be_visible(timeout=WAIT)
