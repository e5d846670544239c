"""Style control (issue 30): Bradley-Terry with the answers' length difference as a covariate.

Synthetic worlds where the truth is known (a judge whose preference is length only: the
style-controlled strengths must come out equal within their CIs), the fit against a general
optimiser on the written-out likelihood (ties half a win), and the demo workspace's real verdicts:
word counts from the stored answers, ``lsqa rank --style-control length --json``, the people's
length preference from audits beside the judge's, the refusals and the two dashboard pages.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy.optimize import minimize
from typer.testing import CliRunner

from lsqa import audit, store
from lsqa.cli import app
from lsqa.figures import analysis
from lsqa.stats.reports import rank_table
from lsqa.stats.style_control import (
    bootstrap_style_controlled,
    fit_style_controlled,
    length_difference,
    style_data,
    style_table,
)
from lsqa.store import verdicts as verdicts_store

SXS = "lexical-sxs-fc"


def _rows(n, m, beta, c, typical, rng, ties=0.0):
    a = rng.integers(0, m, n)
    b = (a + rng.integers(1, m, n)) % m
    la = np.maximum(1, np.round(typical[a] * rng.lognormal(0, 0.5, n)))
    lb = np.maximum(1, np.round(typical[b] * rng.lognormal(0, 0.5, n)))
    p = 1 / (1 + np.exp(-(beta[a] - beta[b] + c * length_difference(la, lb))))
    u = rng.random(n)
    winner = np.where(u < p * (1 - ties), "A", np.where(u > 1 - (1 - p) * (1 - ties), "B", "tie"))
    return [{"system_a": f"s{x}", "system_b": f"s{y}", "winner": w, "len_a": int(p_), "len_b": int(q_),
             "question_id": f"q{k // 3}"}
            for k, (x, y, w, p_, q_) in enumerate(zip(a, b, winner, la, lb, strict=False))]


def _by_hand(rows):
    """The style-controlled MLE written out independently: −Σ [y ln σ(η) + (1−y) ln σ(−η)], a tie
    y = ½, η = β_A − β_B + c·(len_A − len_B)/(len_A + len_B); 'none' rows left out; mean β = 0."""
    rows = [r for r in rows if r["winner"] != "none"]
    names = sorted({r["system_a"] for r in rows} | {r["system_b"] for r in rows})
    ia = np.array([names.index(r["system_a"]) for r in rows])
    ib = np.array([names.index(r["system_b"]) for r in rows])
    y = np.array([{"A": 1.0, "B": 0.0, "tie": 0.5}[r["winner"]] for r in rows])
    d = np.array([(r["len_a"] - r["len_b"]) / (r["len_a"] + r["len_b"]) for r in rows])
    m = len(names)

    def nll(x):
        beta = np.concatenate([x[: m - 1], [-x[: m - 1].sum()]])
        eta = beta[ia] - beta[ib] + x[m - 1] * d
        return -np.sum(y * -np.logaddexp(0, -eta) + (1 - y) * -np.logaddexp(0, eta))

    x = minimize(nll, np.zeros(m), method="BFGS", options={"gtol": 1e-9}).x
    return dict(zip(names, np.concatenate([x[: m - 1], [-x[: m - 1].sum()]]), strict=False)), x[m - 1]


def _statsmodels_coefficient(rows):
    """The length coefficient by statsmodels: an unpenalised logistic regression of "A won" on the
    Bradley-Terry design (the last system as reference) and d, on the decisive verdicts (A or B)."""
    logit = pytest.importorskip("statsmodels.discrete.discrete_model").Logit
    rows = [r for r in rows if r["winner"] in ("A", "B")]
    names = sorted({r["system_a"] for r in rows} | {r["system_b"] for r in rows})
    X = np.zeros((len(rows), len(names)))
    for k, r in enumerate(rows):
        X[k, names.index(r["system_a"])] += 1.0
        X[k, names.index(r["system_b"])] -= 1.0
        X[k, -1] = (r["len_a"] - r["len_b"]) / (r["len_a"] + r["len_b"])   # the reference's column holds d
    y = np.array([r["winner"] == "A" for r in rows], dtype=float)
    return float(logit(y, X).fit(method="newton", tol=1e-12, maxiter=100, disp=0).params[-1])


def test_fit_is_the_maximum_likelihood_with_ties_as_half_a_win():
    rng = np.random.default_rng(3)
    rows = _rows(800, 4, np.array([0.6, 0.1, -0.2, -0.5]), 2.0, np.array([40, 80, 60, 120.0]), rng, ties=0.15)
    rows[0]["winner"] = "none"
    beta, half_coef = _by_hand(rows)
    res = style_table(rows, bootstrap=0)
    assert res["n_comparisons"] == 799 and res["n_excluded"] == 1
    for s in res["systems"]:   # the strengths: every decided verdict, a tie half a win
        assert s["beta"] == pytest.approx(beta[s["system"]], abs=1e-5)
    # The coefficient: the logistic fit on the decisive verdicts, as statsmodels fits it; counting the
    # 15% ties as half wins would have given a smaller one (1.62 here, the truth being 2).
    assert res["coefficient"]["estimate"] == pytest.approx(_statsmodels_coefficient(rows), abs=1e-6)
    assert half_coef < 0.85 * res["coefficient"]["estimate"]


def test_ties_do_not_shrink_the_length_coefficient():
    """The same preference for length (c = 2) from a judge that never ties and one that ties 30% of the
    time (ties at random, so among decisive verdicts the winner follows the same logit): the coefficient
    is the same within sampling noise. Counted as half wins, ties made it about 30% smaller."""
    beta, typical = np.array([0.4, 0.1, -0.1, -0.4]), np.array([40, 80, 60, 120.0])
    c = {0.0: [], 0.3: []}
    half = []
    for seed in range(8):
        for ties in c:
            rows = _rows(3000, 4, beta, 2.0, typical, np.random.default_rng(100 + seed), ties=ties)
            c[ties].append(fit_style_controlled(style_data(*_columns(rows))).coef)
            if ties:
                half.append(_by_hand(rows)[1])
    assert np.mean(c[0.3]) == pytest.approx(np.mean(c[0.0]), rel=0.04)
    assert np.mean(c[0.0]) == pytest.approx(2.0, rel=0.06)
    assert np.mean(half) < 0.8 * np.mean(c[0.0])     # the half-win fit: shrunk by the ties


def test_a_judge_that_only_ties_has_no_length_coefficient():
    rows = [{"system_a": a, "system_b": b, "winner": "tie", "len_a": la, "len_b": lb}
            for a, b, la, lb in (("x", "y", 10, 20), ("y", "z", 5, 5), ("z", "x", 30, 8))] * 4
    res = style_table(rows, bootstrap=50)
    assert res["coefficient"] == {"estimate": None, "ci_low": None, "ci_high": None}
    assert [s["beta"] for s in res["systems"]] == pytest.approx([0.0, 0.0, 0.0], abs=1e-9)


def _columns(rows):
    return ([r["system_a"] for r in rows], [r["system_b"] for r in rows], [r["winner"] for r in rows],
            [r["len_a"] for r in rows], [r["len_b"] for r in rows])


def test_a_judge_that_prefers_length_only_ranks_equal_systems_equal_once_length_is_controlled():
    """Four systems of equal quality, answers 30 to 240 words; the judge picks by length alone.
    In each of five worlds plain Bradley-Terry separates them (the longest first, four tiers); with
    style control they are equal within their CIs: all four share one tier (their simultaneous rank
    intervals, which account for the bootstrap spread of every difference, all overlap). Over the five worlds at least 17 of the 20
    strength CIs hold 1 (β = 0; 19 expected) and at least 4 of the coefficient's CIs hold the judge's
    true preference (4). (Over 40 such worlds: 94% and 90%.)"""
    holds_one = holds_c = 0
    for seed in range(5):
        rows = _rows(1200, 4, np.zeros(4), 4.0, np.array([30, 60, 120, 240.0]), np.random.default_rng(seed))
        plain = {s["system"]: s for s in rank_table(rows, bootstrap=300, seed=1)["systems"]}
        assert plain["s3"]["ci_low"] > plain["s0"]["ci_high"]          # plain: the longest "wins"
        assert len({s["tier"] for s in plain.values()}) == 4
        style = style_table(rows, bootstrap=300, seed=1)
        assert {s["tier"] for s in style["systems"]} == {1}
        c = style["coefficient"]
        assert c["ci_low"] > 0
        holds_one += sum(s["ci_low"] <= 1.0 <= s["ci_high"] for s in style["systems"])
        holds_c += c["ci_low"] <= 4.0 <= c["ci_high"]
    assert holds_one >= 17 and holds_c >= 4


def test_the_bootstrap_resamples_whole_questions_when_asked():
    rng = np.random.default_rng(5)
    rows = _rows(300, 3, np.array([0.5, 0.0, -0.5]), 1.0, np.array([50, 50, 100.0]), rng)
    data = style_data([r["system_a"] for r in rows], [r["system_b"] for r in rows], [r["winner"] for r in rows],
                      [r["len_a"] for r in rows], [r["len_b"] for r in rows],
                      question_id=[r["question_id"] for r in rows])
    by_q = bootstrap_style_controlled(data, rounds=200, seed=2, by_question=True)
    by_row = bootstrap_style_controlled(data, rounds=200, seed=2)
    assert by_q.by_question and not np.allclose(by_q.coef_samples, by_row.coef_samples)
    fit = fit_style_controlled(data)
    assert by_q.coef_low < fit.coef < by_q.coef_high


def test_length_alone_separating_the_outcomes_gives_a_finite_coefficient():
    rows = [{"system_a": a, "system_b": b, "winner": "A" if la > lb else "B", "len_a": la, "len_b": lb}
            for a, b, la, lb in [("x", "y", 10, 20), ("y", "x", 30, 5), ("x", "z", 40, 8), ("z", "y", 7, 9),
                                 ("y", "z", 50, 3), ("z", "x", 60, 2)] * 3]
    res = style_table(rows, bootstrap=50)
    assert res["converged"] and np.isfinite(res["coefficient"]["estimate"]) and res["coefficient"]["estimate"] > 0


# ------------------------------------------------------------------------------ the demo workspace

def _answers(ws):
    with store.connect(ws) as con:
        texts = {(q, s): t for q, s, t in con.execute("SELECT question_id, system_name, text FROM answers").fetchall()}
        verdicts = con.execute("SELECT id, question_id, system_a, system_b, label, status FROM judgments "
                               "WHERE judge = ? ORDER BY id", [SXS]).fetchall()
    return texts, verdicts


def test_answer_lengths_are_the_word_counts_of_the_stored_answers(demo_workspace):
    texts, verdicts = _answers(demo_workspace)
    with store.connect(demo_workspace) as con:
        lengths = verdicts_store.answer_lengths(con, SXS)
    assert len(lengths) == len(verdicts) == 288
    for jid, q, a, b, _, _ in verdicts:
        assert lengths[jid] == (len(texts[(q, a)].split()), len(texts[(q, b)].split()))
    assert len({v for v in lengths.values()}) > 20  # real, varied lengths


def test_rank_style_control_json_on_the_demo(demo_workspace):
    out = CliRunner().invoke(app, ["rank", "--workspace", str(demo_workspace), "--judge", SXS, "--style-control",
                                   "length", "--json", "--bootstrap", "200"])
    assert out.exit_code == 0, out.output
    result = json.loads(out.stdout)
    style = result["style_control"]
    assert style["feature"] == "length" and style["unit"] == "words"
    assert style["n_comparisons"] == result["n_comparisons"] and style["n_excluded"] == result["n_excluded"]
    assert {s["system"] for s in style["systems"]} == {s["system"] for s in result["systems"]}
    # The same fit by hand from the stored rows (labels as the judge gave them, words by str.split).
    texts, verdicts = _answers(demo_workspace)
    rows = [{"system_a": a, "system_b": b, "winner": label, "len_a": len(texts[(q, a)].split()),
             "len_b": len(texts[(q, b)].split())} for _, q, a, b, label, status in verdicts if status == "ok"]
    assert len([r for r in rows if r["winner"] != "none"]) == style["n_comparisons"]
    data = style_data([r["system_a"] for r in rows], [r["system_b"] for r in rows], [r["winner"] for r in rows],
                      [r["len_a"] for r in rows], [r["len_b"] for r in rows])
    assert style["coefficient"]["estimate"] == pytest.approx(fit_style_controlled(data).coef, abs=1e-9)
    c = style["coefficient"]
    assert c["ci_low"] < c["estimate"] < c["ci_high"]
    decisive = [r for r in rows if r["winner"] in ("A", "B") and r["len_a"] != r["len_b"]]
    longer = sum((r["len_a"] > r["len_b"]) == (r["winner"] == "A") for r in decisive)
    assert style["longer_wins"]["n"] == len(decisive) and style["longer_wins"]["share"] == longer / len(decisive)
    text = CliRunner().invoke(app, ["rank", "--workspace", str(demo_workspace), "--judge", SXS, "--style-control",
                                    "length", "--bootstrap", "50"])
    assert text.exit_code == 0 and "length coefficient:" in text.stdout and "plain strength" in text.stdout


def test_people_who_prefer_shorter_answers_show_beside_the_judge_on_the_same_verdicts(demo_workspace):
    """ben reviews 30 verdicts of the judge and always picks the shorter answer: the panel's people
    coefficient is negative, the longer answer never wins with them, and the judge's figures on the
    same 30 verdicts are its own labels there, counted by hand."""
    rows = [r for r in analysis.style_rows(demo_workspace, SXS) if r["len_a"] != r["len_b"]][:30]
    for r in rows:
        audit.review(demo_workspace, "ben", r["id"], "A" if r["len_a"] < r["len_b"] else "B")
    pref = analysis.length_preference(demo_workspace, SXS, bootstrap=200)
    audited = pref["audited"]
    assert audited["n"] == 30 and pref["n"] == 288
    assert audited["people"]["longer_wins"]["share"] == 0 and audited["people"]["longer_wins"]["n"] == 30
    assert audited["people"]["ci_high"] < 0
    decisive = [r for r in rows if r["judge_label"] in ("A", "B")]
    longer = sum((r["len_a"] > r["len_b"]) == (r["judge_label"] == "A") for r in decisive)
    assert audited["judge"]["longer_wins"]["n"] == len(decisive)
    assert audited["judge"]["longer_wins"]["share"] == pytest.approx(longer / len(decisive))
    assert audited["judge"]["estimate"] > audited["people"]["estimate"]


@pytest.mark.parametrize("extra, names", [
    (["--style-control", "words"], "unknown style feature 'words'"),
    (["--style-control", "length", "--corrected"], "--style-control is not combined"),
    (["--style-control", "length", "--tie-model", "davidson"], "counts a tie as half a win"),
])
def test_rank_style_control_refusals(demo_workspace, extra, names):
    before = demo_workspace.read_bytes()
    out = CliRunner().invoke(app, ["rank", "--workspace", str(demo_workspace), "--judge", SXS, *extra])
    assert out.exit_code == 2 and names in out.output and len(out.output.strip().splitlines()) == 1, out.output
    assert demo_workspace.read_bytes() == before


def test_rank_style_control_refuses_a_comparisons_file(tmp_path):
    f = tmp_path / "c.csv"
    f.write_text("system_a,system_b,winner\nx,y,A\ny,x,B\n")
    out = CliRunner().invoke(app, ["rank", "--input", str(f), "--style-control", "length"])
    assert out.exit_code == 2 and "needs the answers' lengths" in out.output, out.output


def test_the_leaderboard_switch_and_the_bias_panel_show_style_control(demo_workspace, monkeypatch):
    """Leaderboard: the *Style control (length)* switch adds the style-controlled table (the library's
    rows: same systems, strengths and the plain rank beside) and the coefficient sentence; Agreement:
    the bias section's length table has a row per side-by-side judge with the judge's coefficient."""
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    from lsqa.dashboard import leaderboard_view
    from tests.conftest import PROJECT_ROOT

    monkeypatch.setenv("LSQA_WORKSPACE", str(demo_workspace))
    st.cache_data.clear()
    at = AppTest.from_file(str(PROJECT_ROOT / "app.py"), default_timeout=120)
    at.session_state["annotator"] = "alice"
    at.session_state["lb_rounds"] = 200
    at.run()
    at.switch_page("pages/leaderboard.py")
    at.run()
    assert not at.exception, at.exception
    at.selectbox(key="lb_judge").set_value(SXS).run()
    assert not [d for d in at.dataframe if "e^β, length controlled" in d.value.columns]
    at.toggle(key="lb_style").set_value(True).run()
    assert not at.exception, [e.value for e in at.exception]
    (shown,) = [d.value for d in at.dataframe if "e^β, length controlled" in d.value.columns]
    expected = leaderboard_view.style_controlled(demo_workspace, SXS, bootstrap=200)
    assert list(shown["system"]) == [r["system"] for r in expected["rows"]]
    assert list(shown["e^β, length controlled"]) == pytest.approx([r["e^β, length controlled"] for r in expected["rows"]])
    assert list(shown["plain rank"]) == [r["plain rank"] for r in expected["rows"]]
    assert any(c.value.startswith("Length coefficient") for c in at.caption)
    assert at.query_params["style"] == ["length"] or at.query_params["style"] == "length"

    at.switch_page("pages/agreement.py")
    at.session_state["section"] = "Position and self-preference"
    at.session_state["ag_rounds"] = 200
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    (lengths,) = [d.value for d in at.dataframe if "people on audited" in d.value.columns]
    assert SXS in set(lengths["judge"])
    row = lengths.set_index("judge").loc[SXS]
    assert row["verdicts"] == 288 and row["people on audited"] == "no audits yet"
    # -0.64 on its decisive verdicts (it was -1.24 with its ties counted as half wins)
    assert row["judge's length coefficient (all verdicts)"].startswith("-0.64")
