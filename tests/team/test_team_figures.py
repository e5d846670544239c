"""The lead's view (``lsqa.audit.team_figures``): per person, items done, median seconds per item,
agreement with the final label and assignments left, on a scripted team's day written through the
real write functions, against figures counted by hand; ``lsqa users list``; refusals; the Audit
page's "Team progress" expander for admins only."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from lsqa import audit, store, team
from lsqa.errors import NotAllowed
from lsqa.team import Person
from tests.conftest import PROJECT_ROOT
from tests.support.apptest_text import signed_in_page
from tests.support.bad_input import invoke, snapshot

APP = str(PROJECT_ROOT / "app.py")
JUDGE = "lexical-autoais-fc"  # a yes/no judge of the small demo
BOSS, ANA, BEN, CY, ADJ = (Person("boss", "admin"), Person("ana", "annotator"), Person("ben", "annotator"),
                           Person("cy", "annotator"), Person("adj", "adjudicator"))
DAY = datetime(2026, 3, 2, 9, 0, 0)


def _set_times(ws: Path, table: str, times: dict[int, float]) -> None:
    """Give rows the times of the script. The write functions stamp ``created_at`` with the clock (a
    review made now is made now: they take no time argument, rightly), and a test cannot wait 15
    minutes for a break; so, once every row is written, the test sets only the times, by id, through
    the store's own write transaction (which tells kept reads the workspace changed)."""
    with store.write(ws) as con:
        for row_id, seconds in times.items():
            con.execute(f"UPDATE {table} SET created_at = ? WHERE id = ?", [DAY + timedelta(seconds=seconds), row_id])


@pytest.fixture
def day(demo_workspace) -> dict:
    """The day, at the times of the script (seconds after 9:00; rows' ids in brackets in the comments).

    ana:  0 v1 yes · 30 v2 yes · 70 v3 no (undone at 75) · 100 v3 yes · 120 skips v5 · 140 v6 yes ·
          (break) 1040 v4 yes · 1100 v5 yes
    ben:  10 v1 yes · 50 v2 no · 65 v3 no
    cy:   20 v2 no · 200 v3 no · 260 v6 no
    adj:  adjudicates v3 yes and v5 no
    v1..v4 are assigned to ana and ben (each of them, per item 2) by boss."""
    ws = demo_workspace
    for p in (BOSS, ANA, BEN, CY, ADJ):
        team.add_person(ws, p.name, p.role)
    audit.assign(ws, JUDGE, ["ana", "ben"], by=BOSS, per_item=2, count=4)
    with store.connect(ws) as con:
        assigned = [r[0] for r in con.execute("SELECT judgment_id FROM assignments WHERE annotator = 'ana' ORDER BY id")
                    .fetchall()]
        others = [r[0] for r in con.execute(
            "SELECT id FROM judgments WHERE judge = ? AND status = 'ok' AND NOT list_contains(?, id) ORDER BY id LIMIT 2",
            [JUDGE, assigned]).fetchall()]
    v = dict(zip(("v1", "v2", "v3", "v4", "v5", "v6"), assigned + others, strict=False))
    assert len(v) == 6
    reviews, skips = {}, {}

    def say(who, seconds, name, label):
        reviews[audit.review(ws, who, v[name], label)["id"]] = seconds

    say(ANA, 0, "v1", "yes")
    say(BEN, 10, "v1", "yes")
    say(CY, 20, "v2", "no")
    say(ANA, 30, "v2", "yes")
    say(BEN, 50, "v2", "no")
    say(BEN, 65, "v3", "no")
    say(ANA, 70, "v3", "no")
    undo = audit.undo_last(ws, ANA)
    with store.connect(ws) as con:
        undo_id = con.execute("SELECT max(id) FROM human_reviews WHERE action = 'undo'").fetchone()[0]
    assert undo is not None and undo_id is not None
    reviews[undo_id] = 75
    say(ANA, 100, "v3", "yes")
    skips[audit.skip(ws, ANA, v["v5"])["id"]] = 120
    say(ANA, 140, "v6", "yes")
    say(CY, 200, "v3", "no")
    say(CY, 260, "v6", "no")
    say(ANA, 1040, "v4", "yes")
    say(ANA, 1100, "v5", "yes")
    audit.adjudicate(ws, ADJ, v["v3"], "yes")
    audit.adjudicate(ws, ADJ, v["v5"], "no")
    _set_times(ws, "human_reviews", reviews)
    _set_times(ws, "review_skips", skips)
    return {"ws": ws, "v": v}


# Counted by hand from the script above.
#  done: distinct verdicts with a live label: ana v1-v6 (v3 once: the "no" was undone) = 6; ben 3; cy 3.
#  seconds: gaps ending in a decision, from the person's action before it (decision or skip), <= 600 s:
#    ana 30 (v2), 40 (v3 no, undone: the time was spent), 30 (v3 yes), 20 (v6, after the skip at 120),
#        60 (v5); v1 starts the day, v4 after 900 s is a break -> 20 30 30 40 60: median 30, 5 timed
#    ben 40, 15 -> median 27.5, 2 timed; cy 180, 60 -> median 120, 2 timed
#  final labels: v1 yes (both), v2 no (2 to 1), v3 yes (adjudicated), v4 yes (ana only), v5 no
#    (adjudicated), v6 none (a tie: ana yes, cy no)
#  agreement, verdicts somebody else had a say in:
#    ana v1 yes=yes, v2 yes≠no, v3 yes=yes, v5 yes≠no (v4 only hers, v6 no final) -> 2 of 4
#    ben v1 yes=yes, v2 no=no, v3 no≠yes -> 2 of 3; cy v2 no=no, v3 no≠yes (v6 no final) -> 1 of 2
#  assigned v1-v4 to ana and ben: ana reviewed all 4 (0 left), ben v1-v3 (1 left)
EXPECTED = {
    # name: (role, done, median s, timed, agreed, compared, agreement, assigned, open)
    "boss": ("admin", 0, None, 0, 0, 0, None, 0, 0),
    "ana": ("annotator", 6, 30.0, 5, 2, 4, 0.5, 4, 0),
    "ben": ("annotator", 3, 27.5, 2, 2, 3, 0.667, 4, 1),
    "cy": ("annotator", 3, 120.0, 2, 1, 2, 0.5, 0, 0),
    "adj": ("adjudicator", 0, None, 0, 0, 0, None, 0, 0),
}
KEYS = ("role", "items_done", "median_seconds_per_item", "timed_items", "agreed_with_final",
        "compared_with_final", "agreement_with_final", "assigned", "assignments_open")


def test_a_teams_day_gives_the_figures_counted_by_hand(day):
    rows = audit.team_figures(day["ws"], by=BOSS)
    assert [r["annotator"] for r in rows] == list(EXPECTED)  # people in the order added
    assert {r["annotator"]: tuple(r[k] for k in KEYS) for r in rows} == EXPECTED
    # A longer break rule would time ana's v4 too (900 s): the rule is what decides it, not chance.
    with store.connect(day["ws"]) as con:
        from lsqa.store import reviews as reviews_store
        longer = {r["annotator"]: (r["median_seconds"], r["timed"]) for r in reviews_store.review_pace(con, 1000)}
    assert longer["ana"] == (35.0, 6)


def test_users_list_carries_the_figures(day):
    listed = json.loads(invoke("users", "list", "--workspace", day["ws"], "--json").stdout)
    assert [p["name"] for p in listed] == list(EXPECTED)
    for p in listed:
        assert {"name", "role", "created_at", "revoked_at"} <= set(p) and "token" not in json.dumps(p)
        assert tuple(p[k] for k in KEYS) == EXPECTED[p["name"]]
    text = invoke("users", "list", "--workspace", day["ws"]).stdout.splitlines()
    assert text[0].split() == ["name", "role", "added", "state", "done", "s/item", "agree", "open"]
    ben = next(line for line in text if line.startswith("ben "))
    assert ben.split()[-4:] == ["3", "27.5", "2/3", "1"]
    boss = next(line for line in text if line.startswith("boss "))
    assert boss.split()[-4:] == ["0", "-", "-", "0"]


def test_only_admins_see_the_figures(day):
    ws = day["ws"]
    before = snapshot(ws)
    for who in (ANA, ADJ, Person("vic", "viewer"), "boss"):
        with pytest.raises(NotAllowed) as refused:
            audit.team_figures(ws, by=who)
        assert len(str(refused.value).splitlines()) == 1
    with pytest.raises(NotAllowed, match=r"ana \(annotator\) may not see every person's progress"):
        audit.team_figures(ws, by=ANA)
    # A page that claims a role the workspace does not give is refused on the stored role.
    with pytest.raises(NotAllowed, match="admin role"):
        audit.team_figures(ws, by=Person("ana", "admin"))
    assert snapshot(ws) == before


def test_a_workspace_without_people_shows_its_reviewers(demo_workspace):
    ws = demo_workspace
    with store.connect(ws) as con:
        v1, v2 = [r[0] for r in con.execute("SELECT id FROM judgments WHERE judge = ? AND status = 'ok' ORDER BY id"
                                            " LIMIT 2", [JUDGE]).fetchall()]
    audit.review(ws, "solo", v1, "yes")
    audit.review(ws, "solo", v2, "no")
    rows = audit.team_figures(ws, by="solo")  # a name acts with every permission where nobody was added
    assert [(r["annotator"], r["role"], r["items_done"], r["compared_with_final"], r["agreement_with_final"])
            for r in rows] == [("solo", "", 2, 0, None)]  # only solo labelled: nothing to agree with
    assert rows[0]["timed_items"] == 1  # written a moment apart, no break between


# ----------------------------------------------------------------------------------- the page


def _app(ws: Path, name: str, **state) -> AppTest:
    return signed_in_page(APP, ws, name, "pages/audit.py", **state)


def test_the_team_progress_expander_is_for_admins(demo_workspace, monkeypatch):
    ws = demo_workspace
    monkeypatch.setenv("LSQA_WORKSPACE", str(ws))
    for p in (BOSS, ANA):
        team.add_person(ws, p.name, p.role)
    with store.connect(ws) as con:
        v1 = con.execute("SELECT id FROM judgments WHERE judge = ? AND status = 'ok' ORDER BY id LIMIT 1",
                         [JUDGE]).fetchone()[0]
    audit.review(ws, ANA, v1, "yes")
    at = _app(ws, "ana", audit_x_team=True)  # even asked for open, an annotator gets no such expander
    assert "Team progress" not in [e.label for e in at.sidebar.expander]
    assert all("agrees with final" not in df.value.columns for df in at.dataframe)
    at = _app(ws, "boss", audit_x_team=True)
    assert "Team progress" in [e.label for e in at.sidebar.expander]
    table = next(df.value for df in at.sidebar.dataframe if "agrees with final" in df.value.columns)
    assert table.to_dict("records") == [
        {"person": "boss", "role": "admin", "done": 0, "s per item (median)": None, "timed": 0,
         "agrees with final": None, "of": 0, "assigned": 0, "left": 0},
        {"person": "ana", "role": "annotator", "done": 1, "s per item (median)": None, "timed": 0,
         "agrees with final": None, "of": 0, "assigned": 0, "left": 0}]
