"""Ranks with their uncertainty (issue 30, item 3; lsqa.stats.rank_intervals): simultaneous 95% rank
intervals and tiers for the judge-only, overrides and corrected rankings, in `lsqa rank --json`, on
the Leaderboard, and an honest "separated" with few audits."""

from __future__ import annotations

import json

import numpy as np
from typer.testing import CliRunner

from lsqa import audit
from lsqa.cli import app
from lsqa.dashboard import corrected_view
from lsqa.dashboard import leaderboard_view as lv
from lsqa.figures import analysis, audits, corrected
from lsqa.stats import rank_intervals
from lsqa.stats.reports import rank_table

SXS, YESNO = "lexical-sxs-fc", "lexical-autoais-fc"
runner = CliRunner()


def _rows(beta, per_pair, rng):
    """Every pair compared ``per_pair`` times, outcomes drawn from eq. 1."""
    names = [f"s{k}" for k in range(len(beta))]
    rows = []
    for i in range(len(beta)):
        for j in range(i + 1, len(beta)):
            p = 1 / (1 + np.exp(-(beta[i] - beta[j])))
            for _ in range(per_pair):
                rows.append({"system_a": names[i], "system_b": names[j], "winner": "A" if rng.random() < p else "B"})
    return rows


def test_well_separated_systems_get_exact_ranks_and_their_own_tiers():
    rows = _rows([3.0, 1.5, 0.0, -1.5, -3.0], 400, np.random.default_rng(1))
    result = rank_table(rows, bootstrap=300, seed=0)
    got = [(s["system"], s["rank_low"], s["rank_high"], s["tier"]) for s in result["systems"]]
    assert got == [(f"s{k}", k + 1, k + 1, k + 1) for k in range(5)]
    # the covariance path agrees on the same kind of case
    ri = rank_intervals.from_covariance([2.0, 1.0, 0.0, -1.0], np.eye(4) * 1e-3)
    assert ri.rank_low.tolist() == ri.rank_high.tolist() == [1, 2, 3, 4] and ri.tier.tolist() == [1, 2, 3, 4]


def test_identical_systems_share_one_tier_spanning_every_rank():
    names = ["a", "b", "c", "d"]
    rows = [{"system_a": x, "system_b": y, "winner": w} for i, x in enumerate(names) for y in names[i + 1:]
            for w in ["A", "B"] * 50]
    result = rank_table(rows, bootstrap=300, seed=0)
    assert {(s["rank_low"], s["rank_high"], s["tier"]) for s in result["systems"]} == {(1, 4, 1)}
    ri = rank_intervals.from_covariance(np.zeros(4), np.eye(4) * 0.01 - 0.0025)
    assert ri.rank_low.tolist() == [1] * 4 and ri.rank_high.tolist() == [4] * 4 and ri.tier.tolist() == [1] * 4


def test_tiers_follow_the_tier_leaders_interval():
    # A [1,2], B [1,3], C [2,4], D [3,4]: C overlaps A at 2 (tier 1), D does not (tier 2).
    t = rank_intervals.tiers([4, 3, 2, 1], [1, 1, 2, 3], [2, 3, 4, 4])
    assert t.tolist() == [1, 1, 1, 2]


def test_no_bootstrap_gives_no_rank_interval_and_says_so():
    rows = _rows([1.0, 0.0], 30, np.random.default_rng(0))
    result = rank_table(rows, bootstrap=0)
    assert all(s["rank_low"] is None and s["tier"] is None for s in result["systems"])
    table, shown, _ = lv.with_strength_bar(lv.ranking_rows(result), result, "log")
    assert {r[lv.RANKS] for r in table} == {"no interval: bootstrap rounds set to 0"}
    assert all(r[lv.CI_TEXT].startswith("no interval") for r in table)


def test_rank_json_has_rank_intervals_and_tiers(demo_workspace):
    out = runner.invoke(app, ["rank", "--workspace", str(demo_workspace), "--judge", SXS, "--json",
                              "--bootstrap", "200"])
    assert out.exit_code == 0, out.output
    systems = json.loads(out.stdout)["systems"]
    m = len(systems)
    for s in systems:
        assert 1 <= s["rank_low"] <= s["rank"] <= s["rank_high"] <= m and s["tier"] >= 1
    assert [s["tier"] for s in systems] == sorted(s["tier"] for s in systems)  # tiers follow the order
    text = runner.invoke(app, ["rank", "--workspace", str(demo_workspace), "--judge", SXS, "--bootstrap", "200"])
    assert "tier" in text.stdout.splitlines()[0] and "simultaneous" in text.stdout
    acc = json.loads(runner.invoke(app, ["accuracy", "--workspace", str(demo_workspace), "--judge", YESNO,
                                         "--json"]).stdout)
    assert all({"rank_low", "rank_high", "tier"} <= set(s) for s in acc["systems"])


def _audit_randomly(ws, judge, rate):
    q = audits.queue(ws, judge, "random", rate=rate, stratify="none")
    for k, row in enumerate(q["rows"]):
        label = row["label"] if k % 3 else {"A": "B", "B": "A", "tie": "A", "none": "A"}[row["label"]]
        audit.review(ws, "ann", row["id"], label, sampling=row["sampling"])
    return len(q["rows"])


def test_corrected_json_and_separated_from_the_rank_intervals(demo_workspace):
    n = _audit_randomly(demo_workspace, SXS, 0.5)
    out = runner.invoke(app, ["rank", "--workspace", str(demo_workspace), "--judge", SXS, "--corrected", "--json"])
    assert out.exit_code == 0, out.output
    result = json.loads(out.stdout)
    by_name = {s["system"]: s for s in result["systems"]}
    for s in result["systems"]:
        assert {"rank_low", "rank_high", "tier", "judge_only_rank_low", "judge_only_rank_high", "judge_only_tier"} <= set(s)
    for pair in result["adjacent"]:
        up, low = by_name[pair["upper"]], by_name[pair["lower"]]
        disjoint = up["rank_high"] < low["rank_low"]
        assert pair["separated"] == disjoint  # "separated" is what the rank intervals shown say
        assert pair["too_few_audits"] == (n < 30)
    assert result["rank_intervals"].startswith("max-t Student-t (")


def test_separated_says_too_few_audits_instead_of_yes(demo_workspace):
    q = audits.queue(demo_workspace, SXS, "random", rate=0.5, stratify="none")
    for row in q["rows"][:16]:   # 16 audits, all agreeing with the judge
        audit.review(demo_workspace, "ann", row["id"], row["label"], sampling=row["sampling"])
    result = corrected.corrected_ranking(demo_workspace, SXS)
    assert result["n_usable_audits"] == 16
    section = corrected_view.ranking_section(result)
    assert section["adjacent"]
    assert {a["separated"] for a in section["adjacent"]} == {"too few audits to say (16; at least 30 needed)"}
    assert "λ" not in corrected_view._summary(result)
    assert all("None" not in str(v) for r in section["table"] for v in r.values())


def test_unbounded_strength_is_described_in_words():
    rows = [{"system_a": "a", "system_b": "b", "winner": w} for w in "AB" * 20]
    rows += [{"system_a": "c", "system_b": "a", "winner": "A"} for _ in range(10)]  # c never loses
    result = rank_table(rows, bootstrap=200, seed=0)
    table, _, _ = lv.with_strength_bar(lv.ranking_rows(result), result, "log")
    c = next(r for r in table if r["system"] == "c")
    assert c["ci_low"] is None and c[lv.CI_TEXT].startswith("unbounded: never lost")
    assert all(isinstance(r[lv.RANKS], str) and "None" not in r[lv.RANKS] for r in table)


def test_switch_changes_show_no_none(demo_workspace_template):
    before = analysis.ranking(demo_workspace_template, SXS, bootstrap=100)
    after = {**before, "systems": before["systems"][1:] + [{**before["systems"][0], "system": "new-one"}]}
    rows = lv.switch_changes(before, after)["rows"]
    assert all(v is not None and "None" not in str(v) for r in rows for v in r.values())
    assert {"tier (this view)", "ranks (this view)"} <= set(rows[0])


def test_leaderboard_shows_tiers_first_and_strengths_on_request(demo_workspace, monkeypatch):
    from tests.dashboard.test_dashboard_pages import goto, open_app, pick_judge, set_toggle

    monkeypatch.setenv("LSQA_WORKSPACE", str(demo_workspace))
    at = open_app(page="leaderboard")
    pick_judge(at, SXS)
    ranking = next(df for df in at.dataframe if "judge" in df.value.columns and lv.RANKS in df.value.columns)
    assert list(ranking.proto.column_order) == ["tier", "system", lv.RANKS]     # strengths hidden
    frame = ranking.value
    assert list(frame["tier"]) == sorted(frame["tier"]) and frame["tier"].iloc[0] == 1
    assert all("None" not in str(v) for v in frame[lv.RANKS])
    set_toggle(at, "lb_strengths", True)
    ranking = next(df for df in at.dataframe if "judge" in df.value.columns and lv.RANKS in df.value.columns)
    order = list(ranking.proto.column_order)
    assert order[:3] == ["tier", "system", lv.RANKS] and {"strength", lv.CI_TEXT, "beta"} <= set(order)
    goto(goto(at, "overview"), "leaderboard")   # the switch is kept across pages, like the others
    ranking = next(df for df in at.dataframe if "judge" in df.value.columns and lv.RANKS in df.value.columns)
    assert "strength" in list(ranking.proto.column_order)


def test_a_switch_that_widens_every_interval_says_why():
    """A few overrides that give a never-winning system its first wins make it estimable; strengths
    are measured against the mean β, so every interval widens (issue 30: nine overrides, ~5×)."""
    rng = np.random.default_rng(4)
    rows = _rows([1.0, 0.8, 0.0], 300, rng)
    before = rows + [{"system_a": "s3", "system_b": s, "winner": "B"} for s in ("s0", "s1", "s2") for _ in range(40)]
    after = [dict(r) for r in before]
    for r in [r for r in after if r["system_a"] == "s3"][:3]:
        r["winner"] = "A"                     # three overrides: s3 wins for once
    b, a = rank_table(before, bootstrap=300, seed=0), rank_table(after, bootstrap=300, seed=0)
    changes = lv.switch_changes(b, a)
    assert "wider than with the switches off: s3 now has a strength the data bound" in changes["summary"]
    assert "rank intervals compare systems pairwise" in changes["summary"]
    assert lv.width_change_reason(b, b) == ""


def test_separated_means_disjoint_rank_intervals_not_just_a_significant_pair():
    # A significantly above C, yet their rank intervals [1,2] and [2,3] share rank 2: not "separated".
    sig = np.zeros((3, 3), dtype=bool)
    sig[0, 2] = True
    ri = rank_intervals.RankIntervals(np.array([1, 1, 2]), np.array([2, 3, 3]), np.array([1, 1, 1]), sig, 2.4,
                                      0.95, "test")
    assert not rank_intervals.separated(ri, 0, 2)
    ri = rank_intervals.RankIntervals(np.array([1, 2, 2]), np.array([1, 3, 3]), np.array([1, 2, 2]), sig, 2.4,
                                      0.95, "test")
    assert rank_intervals.separated(ri, 0, 2) and not rank_intervals.separated(ri, 1, 2)


def test_corrected_accuracy_and_rank_flip_movers_in_words(demo_workspace):
    q = audits.queue(demo_workspace, YESNO, "random", rate=0.5, stratify="none")
    for k, row in enumerate(q["rows"]):
        audit.review(demo_workspace, "ann", row["id"], row["label"] if k % 4 else
                     {"yes": "no", "no": "yes"}[row["label"]], sampling=row["sampling"])
    result = corrected.corrected_accuracy(demo_workspace, YESNO)
    m = len(result["systems"])
    # Student-t as side by side: the system with the fewest audits sets the degrees of freedom (equal π:
    # its audits − 1 stratum − 1 for λ), not the normal quantile.
    df = min(s["n_audited"] for s in result["systems"]) - 2
    assert result["rank_intervals"] == f"max-t Student-t ({df} df)"
    for s in result["systems"]:
        assert 1 <= s["rank_low"] <= s["rank_high"] <= m and s["tier"] >= 1
        assert 1 <= s["judge_only_rank_low"] <= s["judge_only_rank_high"] <= m
    section = corrected_view.accuracy_section(result)
    assert list(section["table"][0])[:4] == ["tier", "system", "corrected ranks (95%)", "judge-only ranks (95%)"]
    mover = {"question_id": "q1", "system_a": "x", "system_b": "y", "judge_outcome": 0.5, "human_outcome": 0.0}
    text = corrected_view._mover_text(mover, "corrected", False)
    assert text.endswith("judge tie or both wrong → human y better") and "0.5" not in text
