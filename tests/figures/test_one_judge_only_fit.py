"""One judge-only fit per judge (issue 30, item 2): the Leaderboard's ranking table, its "Corrected by
audits" section, the rank flips, the exported ranking files and `lsqa rank` (plain and
`--corrected`) give the same judge-only strengths and ranks for every side-by-side judge.

Before, the corrected section refitted the judge on items whose outcome averaged the answer orders
and counted "none" (both answers wrong) as a tie, while the ranking table leaves "none" out (paper
§3.2): on the full demo `lexical-gt-sxs` put nqa-reference-2 at 196.0 in the table and 2.865 in the
corrected section, and the two sections ordered fullbook and rag4k differently.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from lsqa import audit
from lsqa.cli import app
from lsqa.dashboard import corrected_view, leaderboard_view
from lsqa.figures import analysis, audits
from lsqa.figures import corrected as figures_corrected
from lsqa.text import numbers
from lsqa.vocabulary import JUDGE_ONLY, OVERRIDES, PAIRWISE

runner = CliRunner()
JUDGES = ("lexical-sxs-fc", "lexical-gt-sxs", "lexical-sxs-rag4k")


def _table(ws, judge, **switches):
    board = leaderboard_view.leaderboard(ws, judges=[judge], bootstrap=200, **switches)
    result = board["rankings"][0]["result"]
    return {s["system"]: (s["strength"], s["rank"]) for s in result["systems"]}


def test_the_demo_has_what_made_the_two_fits_differ(demo_workspace):
    """'none' verdicts and judges run in both orders: what the old corrected fit counted differently."""
    rows = analysis.comparison_rows(demo_workspace, "lexical-gt-sxs")
    assert any(r["winner"] == "none" for r in rows)
    with_both = analysis.position_bias(demo_workspace, "lexical-sxs-fc")
    assert with_both.get("n_both_orders", 0) > 0


@pytest.mark.parametrize("judge", JUDGES)
def test_every_section_shows_the_ranking_tables_judge_only_fit(demo_workspace, judge):
    ws = demo_workspace
    table = _table(ws, judge)
    corrected = figures_corrected.corrected_ranking(ws, judge)
    assert {r["system"]: r["judge_only_strength"] for r in corrected["systems"]} == \
        pytest.approx({s: v[0] for s, v in table.items()}, rel=1e-6)
    assert {r["system"]: r["judge_only_rank"] for r in corrected["systems"]} == {s: v[1] for s, v in table.items()}
    # The Leaderboard's section shows the same figures (rounded for display) and says what differs.
    entry = corrected_view.board(ws, {PAIRWISE: [judge], "binary": []})[0]
    assert {r["system"]: r[f"{JUDGE_ONLY} strength"] for r in entry["table"]} == \
        {s: numbers.figure(v[0]) for s, v in table.items()}
    assert corrected_view.JUDGE_ONLY_SAME_AS_TABLE in entry["summary"]
    # The exported ranking file (analysis.export → ranking_<judge>.json) is the same fit.
    exported = analysis.ranking(ws, judge)
    assert {s["system"]: s["rank"] for s in exported["systems"]} == {s: v[1] for s, v in table.items()}
    assert {s["system"]: s["strength"] for s in exported["systems"]} == \
        pytest.approx({s: v[0] for s, v in table.items()}, rel=1e-12)


@pytest.mark.parametrize("judge", JUDGES[:2])
def test_lsqa_rank_and_rank_corrected_agree_on_the_judge_only_figures(demo_workspace, judge):
    args = ["rank", "--workspace", str(demo_workspace), "--judge", judge, "--json"]
    plain = runner.invoke(app, args + ["--bootstrap", "100"])
    corrected = runner.invoke(app, args + ["--corrected"])
    assert plain.exit_code == 0 and corrected.exit_code == 0, plain.output + corrected.output
    plain_json = json.loads(plain.stdout)
    corrected_json = json.loads(corrected.stdout)
    assert {s["system"]: s["rank"] for s in plain_json["systems"]} == \
        {s["system"]: s["judge_only_rank"] for s in corrected_json["systems"]}
    assert {s["system"]: s["strength"] for s in plain_json["systems"]} == \
        pytest.approx({s["system"]: s["judge_only_strength"] for s in corrected_json["systems"]}, rel=1e-6)


def test_rank_flips_start_from_the_ranking_tables_judge_only_and_overrides_rankings(demo_workspace):
    """Audits that push the weakest system up make flips; each flip's judge-only and overrides ranks are
    those of the ranking table with the overrides switch off and on."""
    ws, judge = demo_workspace, "lexical-sxs-fc"
    table = _table(ws, judge)
    weakest = max(table, key=lambda s: table[s][1])
    q = audits.queue(ws, judge, "random", rate=0.6)
    for row in q["rows"]:
        if weakest in (row["system_a"], row["system_b"]):
            label = "A" if row["system_a"] == weakest else "B"
            audit.review(ws, "ann", row["id"], label, sampling=row["sampling"])
    result = figures_corrected.corrected_ranking(ws, judge)
    assert result["flips"], "audits that favour the weakest system move it"
    overridden = _table(ws, judge, use_overrides=True)
    for flip in result["flips"]:
        for system, rank in flip["ranks"][JUDGE_ONLY].items():
            assert rank == table[system][1]
        for system, rank in flip["ranks"][OVERRIDES].items():
            assert rank == overridden[system][1]


@pytest.mark.parametrize("option", [["--anchor", "extractive-rag4k"], ["--tie-model", "davidson"],
                                    ["--human-overrides"], ["--exclude-flagged"]])
def test_rank_corrected_refuses_options_that_would_change_the_judge_only_fit(demo_workspace, option):
    """`lsqa rank --corrected` used to ignore these silently, so its judge-only figures differed from
    `lsqa rank` run with the same options."""
    before = demo_workspace.read_bytes()
    res = runner.invoke(app, ["rank", "--workspace", str(demo_workspace), "--judge", JUDGES[0], "--corrected",
                              "--json", *option])
    assert res.exit_code == 2 and res.stdout == ""
    assert f"{option[0]} would be ignored" in res.stderr and len(res.stderr.strip().splitlines()) == 1
    assert demo_workspace.read_bytes() == before
