"""The Leaderboard's table view (lsqa.dashboard.leaderboard_view): inline strength bars on the chosen scale,
and which view a link opens. Rankings are the small demo's real side-by-side verdicts."""

from __future__ import annotations

import math

import pytest

from lsqa.dashboard import leaderboard_view as lv
from lsqa.figures import analysis
from lsqa.text import numbers

SXS = "lexical-sxs-fc"


@pytest.fixture(scope="module")
def ranking(demo_workspace_template):
    return analysis.ranking(demo_workspace_template, SXS, bootstrap=200)


def test_log_and_beta_scales_draw_beta_and_keep_the_weakest_visible(ranking):
    for scale in ("log", "beta"):
        bar = lv.strength_bar(ranking, scale)
        betas = [s["beta"] for s in ranking["systems"]]
        assert bar["name"] == "β = log strength" and bar["values"] == betas
        assert bar["high"] == max(betas)
        assert bar["low"] < min(betas)  # the weakest system keeps a bar
        # β is log e^β: the bar orders systems as the chart's log axis does
        assert all(math.isclose(b, math.log(s["strength"]), rel_tol=1e-6, abs_tol=1e-9)
                   for b, s in zip(betas, ranking["systems"], strict=False))


def test_linear_scale_draws_strength_from_zero(ranking):
    bar = lv.strength_bar(ranking, "linear")
    assert bar["name"] == "strength e^β" and bar["low"] == 0.0
    assert bar["values"] == [s["strength"] for s in ranking["systems"]]
    assert bar["high"] == max(bar["values"])


def test_table_rows_keep_the_ranking_rows_and_add_tiers_and_the_bar(ranking):
    rows = lv.ranking_rows(ranking)
    added = {"tier", "rank_low", "rank_high", lv.RANKS, lv.CI_TEXT}
    for scale in ("log", "linear"):
        table, shown, bar = lv.with_strength_bar(rows, ranking, scale)
        shown_as_text = {"strength", "beta"}  # on the page through the one formatter; the CSV keeps the numbers
        assert [{k: v for k, v in r.items() if k not in added | shown_as_text | {bar["name"]}} for r in table] == [
            {k: v for k, v in r.items() if k not in shown_as_text} for r in rows]
        assert [(r["strength"], r["beta"]) for r in table] == [
            (numbers.figure(s["strength"]), numbers.signed(s["beta"])) for s in ranking["systems"]]
        assert all(v is None or v == numbers.rounded(v) for v in (r[bar["name"]] for r in table))
        assert set(shown) <= set(table[0]) and shown[:4] == ["tier", "system", lv.RANKS, bar["name"]]
        assert ("strength" in shown) == (scale != "linear")  # the linear bar is e^β itself
        assert [r["tier"] for r in table] == [s["tier"] for s in ranking["systems"]]
        _, shown, _ = lv.with_strength_bar(rows, ranking, scale, strengths=False)
        assert shown == ["tier", "system", lv.RANKS]  # tiers first, strengths on request


def test_a_diverged_fit_does_not_break_the_bar(ranking):
    broken = {**ranking, "systems": [{**s, "beta": None} if i == 0 else s
                                     for i, s in enumerate(ranking["systems"])]}
    bar = lv.strength_bar(broken, "log")
    known = [s["beta"] for s in broken["systems"] if s["beta"] is not None]
    assert bar["values"][0] is None and bar["high"] == max(known) and bar["low"] < min(known)


@pytest.mark.parametrize("asked, remembered, expected", [
    ("chart", None, "chart"), ("win", "chart", "win"), (None, "chart", "chart"), ("<b>", None, "table"),
    (None, None, "table"), ("", "win", "win")])
def test_which_view_a_link_opens(asked, remembered, expected):
    assert lv.chosen_show(asked, remembered) == expected


def test_corrected_and_accuracy_tables_lead_with_tiers(demo_workspace_template):
    table = [{"tier": 1, "system": "a", "corrected ranks (95%)": "1–2", "judge-only ranks (95%)": "1", "rank": 1,
              "corrected strength": 2.0, "corrected 95% CI": "1 – 3", "verdicts": 10, "audited": 2}]
    assert lv.corrected_columns(table, False) == ["tier", "system", "corrected ranks (95%)", "judge-only ranks (95%)",
                                                  "verdicts", "audited"]
    shown = lv.corrected_columns(table, True)
    assert shown[:4] == lv.corrected_columns(table, False)[:4] and "corrected strength" in shown and "rank" not in shown
    rows = analysis.accuracy(demo_workspace_template, "lexical-autoais-fc")
    acc = lv.accuracy_with_ranks(lv.accuracy_rows("lexical-autoais-fc", rows), rows)
    assert [r["system"] for r in acc] == [r["system"] for r in rows]
    assert acc[0]["tier"] == 1 and all(isinstance(r[lv.RANKS], str) for r in acc)
    assert [r["tier"] for r in acc] == sorted(r["tier"] for r in acc)


def test_the_switches_baseline_is_the_ranking_shown_with_them_off_not_a_second_fit(demo_workspace, monkeypatch):
    """With a switch on, "What the switches changed" compares with the ranking the page showed with the
    switches off, kept (lv.ranking): "All judges" fits each judge once per view, not twice (it
    fitted every judge's baseline again on every render, rank intervals included: issue 30, 1.2x)."""
    ws = demo_workspace
    off = lv.leaderboard(ws, bootstrap=200)          # the page with the switches off
    fitted = []
    fit = analysis.ranking
    monkeypatch.setattr(analysis, "ranking", lambda *a, **k: fitted.append((a[1], k["use_overrides"])) or fit(*a, **k))
    on = lv.leaderboard(ws, use_overrides=True, bootstrap=200)
    view = lv.View(use_overrides=True, bootstrap=200)
    baselines = {e["judge"]: lv.baseline(ws, e["judge"], view) for e in on["rankings"]}
    assert sorted(fitted) == sorted((e["judge"], True) for e in on["rankings"])  # the overrides fits only
    assert baselines == {e["judge"]: e["result"] for e in off["rankings"]}
    assert len(baselines) == 3


def test_the_length_share_and_coefficient_in_one_sentence():
    """The issue's case: the longer answer won 79% of 632 while the coefficient is −0.59 — one sentence
    says both and why they point different ways; where they agree, or the interval includes 0, it says so."""
    longer = {"share": 0.79, "ci_low": 0.75, "ci_high": 0.82, "n": 632}
    against = lv.length_sentence({"estimate": -0.59, "ci_low": -0.9, "ci_high": -0.3}, longer)
    assert against == ("The longer answer won 79.0% of 632 decisive verdicts of answers of different length, but that is "
                       "the systems' doing (the stronger systems write the longer answers): once each system's strength "
                       "is taken into account, length by itself counts against an answer (length coefficient -0.590 "
                       "(-0.900 to -0.300), below 0).")
    helps = lv.length_sentence({"estimate": 0.4, "ci_low": 0.1, "ci_high": 0.7}, longer)
    assert ", and more than the systems' strengths explain: length by itself helps an answer" in helps
    unclear = lv.length_sentence({"estimate": 0.1, "ci_low": -0.2, "ci_high": 0.4}, {**longer, "share": 0.3})
    assert unclear.startswith("The shorter answer won 70.0% of 632") and "its interval includes 0" in unclear
    assert "not measured" in lv.length_sentence(None, {"n": 0})
