"""Adjudication as a queue, in a real browser: Debian's chromium driven by Playwright against
`streamlit run app.py` on a private copy of the small demo workspace.

An adjudicator settles three disagreements (two yes/no verdicts, one side by side) with keys only:
each key sets the final label and the next open disagreement comes on screen; a second key pressed
50 ms after the first writes nothing on the next one; going back (K) to a settled one, a label key
asks before replacing and writes nothing until the same key is pressed again; once all are settled
the page says so and no key writes. The workspace is checked after every step.
"""

from __future__ import annotations

import re

import pytest

from lsqa import audit, store, team
from lsqa.dashboard import adjudication_view
from lsqa.judging import kinds
from lsqa.store import verdicts as verdicts_store
from tests.support.bad_input import snapshot
from tests.support.browser import SHOWN_JS, cut_labels, expect, served_team, wait_for, wait_idle

pytestmark = pytest.mark.browser

GT, SXS = "lexical-gt", "lexical-sxs-fc"
WAIT = 60000


def _other(kind: str, label: str) -> str:
    return next(lab for lab in kinds.get(kind).labels if lab != label)


def _three_disagreements(ws, links):
    """ana confirms, ben overrides: two verdicts of the yes/no judge, one side by side."""
    ana, ben = (team.sign_in(ws, links[n]) for n in ("ana", "ben"))
    with store.connect(ws) as con:
        verdicts = (verdicts_store.effective_verdicts(con, judge=GT)[:2]
                    + [v for v in verdicts_store.effective_verdicts(con, judge=SXS) if v["judge_label"]][:1])
    for v in verdicts:
        audit.confirm(ws, ana, v["id"])
        audit.review(ws, ben, v["id"], _other(v["kind"], v["judge_label"]), "the book says otherwise")


@pytest.fixture(scope="module")
def setup(demo_workspace_template, tmp_path_factory):
    """Three disagreements to settle, an adjudicator and the two annotators who disagree."""
    people = (("judy", "adjudicator"), ("ana", "annotator"), ("ben", "annotator"))
    with served_team(demo_workspace_template, tmp_path_factory.mktemp("adjudicate"), people,
                     _three_disagreements) as served:
        yield served


def _finals(ws) -> dict[str, list[tuple[str, str]]]:
    """Every adjudication row, per verdict: (label, adjudicator), oldest first."""
    return {d["judgment_id"]: [(h["label"], h["adjudicator"]) for h in audit.adjudication_history(ws, d["judgment_id"])]
            for d in audit.disagreements(ws)}


def _wait_shown(page, jid: str | None):
    """Until the disagreement on screen (bar and cards agree) is ``jid``."""
    page.wait_for_function(f"(want) => ({SHOWN_JS})() === want", arg=jid, timeout=WAIT)
    wait_idle(page)


def _key(kind: str, shown_order: str, label: str) -> str:
    """The key that gives ``label`` (system terms) on a verdict shown in ``shown_order``."""
    shown = audit.to_shown_label(kind, label, shown_order)
    return next(o["shortcut"] for o in audit.label_options(kind) if o["shown"] == shown).lower()


def test_an_adjudicator_settles_three_disagreements_with_keys_and_a_replacement_asks_first(setup):
    ws, url, browser = setup["ws"], setup["url"], setup["browser"]
    rows = adjudication_view.in_order(audit.disagreements(ws))
    assert len(rows) == 3 and all(d["adjudicated"] is None for d in rows)
    ids = [d["judgment_id"] for d in rows]
    by_id = {d["judgment_id"]: d for d in rows}
    plan = {jid: _other(by_id[jid]["kind"], by_id[jid]["judge_label"]) for jid in ids}  # ben was right
    keys = {jid: _key(by_id[jid]["kind"], by_id[jid]["shown_order"], plan[jid]) for jid in ids}
    sxs = next(j for j in ids if by_id[j]["system_b"])

    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    page.goto(f"{url}/adjudicate?token={setup['links']['judy']}")
    expect(page.get_by_text("Disagreement 1 of 3")).to_be_visible(timeout=WAIT)
    _wait_shown(page, ids[0])
    main = page.locator('[data-testid="stMain"]')
    # The item shows the question, both answers side by side in the order shown and every label with its note.
    text = main.inner_text()
    assert by_id[ids[0]]["question"] in text and "ana" in text and "the book says otherwise" in text
    assert cut_labels(page) == []  # every button, and the note field's hint, read whole

    # 1. The first: its key, and 50 ms later the next one's key — which lands while the next one
    # comes and must write nothing on it.
    page.keyboard.press(keys[ids[0]])
    page.wait_for_timeout(50)
    page.keyboard.press(keys[ids[1]])  # a key that would settle the next one, had it been pressed on it
    wait_for(page, lambda: _finals(ws)[ids[0]] == [(plan[ids[0]], "judy")])
    # Shown and idle: the second key, held by keys.js through the first one's run, has been let go or
    # dropped, and any run it started is over: a write on the next one would be in.
    _wait_shown(page, ids[1])
    assert {j: f for j, f in _finals(ws).items() if f} == {ids[0]: [(plan[ids[0]], "judy")]}
    expect(page.get_by_text("Disagreement 2 of 3")).to_be_visible()

    # 2. The second, then the third comes.
    page.keyboard.press(keys[ids[1]])
    wait_for(page, lambda: _finals(ws)[ids[1]] == [(plan[ids[1]], "judy")])
    _wait_shown(page, ids[2])
    if ids[2] == sxs:  # side by side: the two answers, A and B in the order the judge saw them
        for answer in by_id[sxs]["answers"]:
            expect(main.get_by_text(f"Answer {answer['position']} · {answer['system']}")).to_be_visible()

    # 3. Back (K) to the second, settled: another label asks first, and writes nothing until pressed again.
    page.keyboard.press("k")
    _wait_shown(page, ids[1])
    before = snapshot(ws)
    other = _other(by_id[ids[1]]["kind"], plan[ids[1]])
    again = _key(by_id[ids[1]]["kind"], by_id[ids[1]]["shown_order"], other)
    page.keyboard.press(again)
    expect(main.get_by_text("Replace the final label")).to_be_visible(timeout=WAIT)
    wait_idle(page)  # the key's run is over (it drew the question): a write would be in
    assert snapshot(ws) == before  # asked: nothing written
    page.keyboard.press(again)  # the same key again: replaced, and on to the open one
    wait_for(page, lambda: _finals(ws)[ids[1]] == [(plan[ids[1]], "judy"), (other, "judy")])
    _wait_shown(page, ids[2])

    # 4. The third, with its key: all settled, the page says so; no key writes any more.
    page.keyboard.press(keys[ids[2]])
    wait_for(page, lambda: _finals(ws)[ids[2]] == [(plan[ids[2]], "judy")])
    expect(page.get_by_text(re.compile("All 3 disagreements are settled"))).to_be_visible(timeout=WAIT)
    wait_idle(page)
    assert page.evaluate(SHOWN_JS) is None
    before = snapshot(ws)
    for key in "jkyntxab":
        page.keyboard.press(key)
        wait_idle(page)  # any run the key asked for is over: what it wrote is in
    assert snapshot(ws) == before
    assert _finals(ws) == {ids[0]: [(plan[ids[0]], "judy")], ids[1]: [(plan[ids[1]], "judy"), (other, "judy")],
                           ids[2]: [(plan[ids[2]], "judy")]}
    final = {d["judgment_id"]: d["adjudicated"] for d in audit.disagreements(ws)}
    assert final == {ids[0]: plan[ids[0]], ids[1]: other, ids[2]: plan[ids[2]]}

