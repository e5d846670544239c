"""Adjudication items held while open, in a real browser: Debian's chromium driven by Playwright against
`streamlit run app.py` on a private copy of the small demo workspace with two adjudicators (each signed
in with their own link, in their own browser context) and four disagreements (ana confirms, ben
overrides). A disagreement open for one adjudicator is passed over when the next is served to the
other (``lsqa.audit.open_items``, queue ``adjudicate``).
"""

from __future__ import annotations

import pytest

from lsqa import audit, store, team
from lsqa.dashboard import adjudication_view
from lsqa.store import verdicts as verdicts_store
from tests.browser.test_adjudicate_browser import GT, _finals, _key, _other, _wait_shown
from tests.support.browser import served_team, wait_for

pytestmark = pytest.mark.browser


def _four_disagreements(ws, links):
    """ana confirms, ben overrides, on four verdicts of the yes/no judge."""
    ana, ben = (team.sign_in(ws, links[n]) for n in ("ana", "ben"))
    with store.connect(ws) as con:
        verdicts = verdicts_store.effective_verdicts(con, judge=GT)[:4]
    for v in verdicts:
        audit.confirm(ws, ana, v["id"])
        audit.review(ws, ben, v["id"], _other(v["kind"], v["judge_label"]))


@pytest.fixture(scope="module")
def two_adjudicators(demo_workspace_template, tmp_path_factory):
    people = (("judy", "adjudicator"), ("jo", "adjudicator"), ("ana", "annotator"), ("ben", "annotator"))
    with served_team(demo_workspace_template, tmp_path_factory.mktemp("adjudicate_two"), people,
                     _four_disagreements) as served:
        yield served


def test_a_disagreement_open_for_one_adjudicator_is_not_served_to_another(two_adjudicators):
    """judy opens the Adjudicate page on the first disagreement; jo, at the same time, gets the second;
    judy's key settles hers and the next she gets is the third (the second is open for jo); jo's key
    settles the second and the fourth comes (the third is judy's). Each final label is the one of the
    disagreement on that person's screen."""
    ws, url, links, browser = (two_adjudicators[k] for k in ("ws", "url", "links", "browser"))
    order = [d["judgment_id"] for d in adjudication_view.in_order(audit.disagreements(ws))]
    assert len(order) == 4
    pages = {}
    for name in ("judy", "jo"):
        page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
        page.goto(f"{url}/adjudicate?token={links[name]}")
        pages[name] = page
        _wait_shown(page, order[len(pages) - 1])  # judy the first, jo the second: judy has the first open
    judy, jo = pages["judy"], pages["jo"]
    rows = {d["judgment_id"]: d for d in audit.disagreements(ws)}

    def settle(page, jid: str, then: str):
        d = rows[jid]
        page.mouse.click(1000, 700)
        page.keyboard.press(_key(d["kind"], d["shown_order"], d["judge_label"]))
        wait_for(page, lambda: _finals(ws)[jid] != [])
        _wait_shown(page, then)

    settle(judy, order[0], order[2])  # the second is open for jo: passed over
    settle(jo, order[1], order[3])  # the third is open for judy
    finals = _finals(ws)
    assert finals[order[0]] == [(rows[order[0]]["judge_label"], "judy")]
    assert finals[order[1]] == [(rows[order[1]]["judge_label"], "jo")]
    assert finals[order[2]] == finals[order[3]] == []
    for page in pages.values():
        page.context.close()
