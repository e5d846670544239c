"""LLMBar MT-Bench and FairEval in a workspace (issue 12, "Also"): the authors' statistics.json
figures come out of lsqa's own statistics exactly, and the Agreement page shows them at first look."""

from __future__ import annotations

import re

import pytest

from lsqa.dashboard import agreement_view, leaderboard_view
from lsqa.study import llmbar
from tests.conftest import shared_data_dir
from tests.support.browser import chromium, expect, need_browser, wait_idle
from tests.support.streamlit_server import serve


@pytest.mark.slow
def test_llmbar_import_reproduces_published_figures_exactly(workspace, shared_data):
    lines = list(llmbar.import_llmbar(workspace, shared_data))
    assert lines == ["LLMBar MT-Bench: 200 items, 2 judges × 2 orders, 800 gold labels as reviews by llmbar-gold",
                     "LLMBar FairEval: 66 items, 2 judges × 2 orders, 264 gold labels as reviews by llmbar-gold"]
    rows = llmbar.figures(workspace, shared_data)
    assert len(rows) == 12  # 2 sets × 2 evaluators × (correct_False, equal, kappa_agreement)
    for r in rows:
        assert r["lsqa"] == r["published"], r  # the same string / the same float
    # Imported once: a second import adds nothing.
    assert [line.endswith("already imported") for line in llmbar.import_llmbar(workspace, shared_data)] == [True, True]
    # The Agreement page's "judges against humans" has every LLMBar judge, over every verdict (the gold
    # label reviews the verdicts of both orders: 2 × 200 and 2 × 66; issue 30, agreement per verdict).
    overview = agreement_view.agreement_overview(workspace, bootstrap=0)
    assert overview["llmbar"] == rows  # the page's figures, from labels the whole report shares, are the same
    # The position panel's table says the same in its own words: pairs in both orders, how often they agree, κ.
    position = {r["judge"]: r for r in agreement_view.position_rows(overview["position"])}
    for r in rows:
        row = position[r["judge"]]
        if r["figure"] == "equal":
            agreed, pairs = map(int, re.match(r"(\d+) / (\d+) = ", r["published"]).groups())
            assert row["pairs in both orders"] == pairs and row["orders agree %"] == round(100 * agreed / pairs, 1)
        elif r["figure"] == "kappa_agreement":
            assert row["κ between orders"] == round(r["published"], 3), r
    vs_human = {r["rater_a"]: r for r in overview["vs_human"]}
    assert {llmbar.judge_name(d, e) for d in llmbar.SETS for e in llmbar.EVALUATORS} <= set(vs_human)
    assert vs_human["llmbar-gpt-4-mt-bench"]["n"] == 400 and vs_human["llmbar-chatgpt-faireval"]["n"] == 132
    # The Leaderboard ranks QA systems: LLMBar's judges are named as left out, ranked only on request.
    board = leaderboard_view.leaderboard(workspace, bootstrap=0)
    assert board["rankings"] == [] and sorted(board["agreement_only_judges"]) == sorted(llmbar.JUDGES)
    assert leaderboard_view.leaderboard_judges(workspace)[0] == {"pairwise": [], "binary": []}  # corrected section too
    asked = leaderboard_view.leaderboard(workspace, judges=["llmbar-gpt-4-mt-bench"], bootstrap=0)
    assert [r["judge"] for r in asked["rankings"]] == ["llmbar-gpt-4-mt-bench"]


@pytest.mark.browser
def test_agreement_page_shows_llmbar_against_humans(demo_workspace):
    need_browser()
    for _ in llmbar.import_llmbar(demo_workspace, shared_data_dir()):
        pass
    with serve(demo_workspace) as base, chromium() as browser:
        page = browser.new_page(viewport={"width": 1440, "height": 1600})
        page.goto(f"{base}/agreement")  # LLMBar has its own tab, after the four sections of any workspace
        page.get_by_role("tab", name="LLMBar").click()
        expect(page.get_by_role("heading", name="LLMBar: published figures reproduced")).to_be_visible(
            timeout=90000)
        wait_idle(page, 60000)
        expect(page.get_by_text(re.compile(r"^12 of 12 figures of the authors' statistics\.json equal"))
               ).to_be_visible()
        expect(page.locator('[data-testid="stException"]')).to_have_count(0)
