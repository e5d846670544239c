"""``lsqa certify`` and the Agreement page's certification panel (issue 30, item 4): can this judge
replace the annotators?

Workspace tests use the small demo (tests/conftest.py): reviews are written through ``lsqa.audit``
exactly as the Audit page writes them, random-queue reviews with the sampling record the random
queue (``lsqa.stats.sampling.queue``) gives. Expected figures are counted by hand from the labels
written, and the intervals come from scipy's own exact binomial interval (``binomtest``), not from
the module under test.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import binomtest
from scipy.stats import t as student_t

from lsqa import audit
from lsqa.stats import certification as cert
from lsqa.stats import sampling

from .bad_input import assert_refused, invoke

YES_NO = "lexical-autoais-fc"   # the demo's AutoAIS judge: 66 yes, 30 no
SXS = "lexical-sxs-fc"


def exact(k: int, n: int) -> tuple[float, float]:
    ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact")
    return ci.low, ci.high


def random_rows(ws: Path, judge: str, n: int) -> list[dict]:
    """The first ``n`` verdicts of the judge's random audit queue (rate 0.25), as the Audit page shows them."""
    rows = sampling.queue(ws, judge, "random", rate=0.25, limit=n)["rows"]
    assert len(rows) == n
    return rows


FLIP = {"yes": "no", "no": "yes"}


# ------------------------------------------------------------------------------ pure numerics

def test_clopper_pearson_and_weighted_share_by_hand():
    assert cert.clopper_pearson(8, 10) == pytest.approx(exact(8, 10))
    assert cert.clopper_pearson(0, 10)[1] == pytest.approx(1 - 0.025 ** (1 / 10))   # (α/2)^(1/n) at the edges
    assert cert.clopper_pearson(10, 10)[0] == pytest.approx(0.025 ** (1 / 10))
    # Weights 1/π = 2, 4, 1: Hájek share (2 + 1) / 7; Kish effective size 7² / (4 + 16 + 1) = 7/3.
    share = cert.weighted_share([1, 0, 1], [2, 4, 1])
    assert share["estimate"] == pytest.approx(3 / 7)
    assert share["n_effective"] == pytest.approx(7 / 3)
    assert (share["ci_low"], share["ci_high"]) == pytest.approx(cert.clopper_pearson(3 / 7 * 7 / 3, 7 / 3))


def test_benjamini_yekutieli_by_hand():
    # m = 3, H_3 = 11/6: thresholds k/3 · 0.05 · 6/11 = 0.00909, 0.01818, 0.02727.
    assert cert.benjamini_yekutieli([0.009, 0.5, 0.018], 0.05) == [True, False, True]
    assert cert.benjamini_yekutieli([0.009, 0.5, 0.02], 0.05) == [True, False, False]  # 0.02 > 0.01818
    assert cert.benjamini_yekutieli([0.01, 0.5, 0.5], 0.05) == [False, False, False]   # BH would take 0.01
    assert cert.benjamini_yekutieli([0.5, 0.015, 0.012], 0.05) == [False, True, True]  # step-up: 0.015 ≤ 0.01818


def test_a_judge_never_wrong_on_many_audits_is_replaceable_and_one_often_wrong_is_not():
    people = ["yes"] * 300 + ["no"] * 300
    good = cert.certify_audits(people, people, [0.5] * 600, ("yes", "no"), gate_all=True)
    assert good["verdict"] == cert.REPLACEABLE and good["audits_needed"] is None
    bad_judge = ["yes"] * 600                     # says yes to everything: recall of no is 0
    bad = cert.certify_audits(bad_judge, people, [0.5] * 600, ("yes", "no"), gate_all=True)
    assert bad["verdict"] == cert.NOT_REPLACEABLE
    assert [r["recall"] for r in bad["per_label"]] == [1.0, 0.0]


def test_a_label_people_never_gave_keeps_a_yes_no_judge_undecided():
    r = cert.certify_audits(["yes"] * 200, ["yes"] * 200, [0.5] * 200, ("yes", "no"), gate_all=True)
    assert r["verdict"] == cert.UNDECIDED and r["audits_needed"] is None
    assert any("people said 'no'" in x for x in r["reasons"])
    # Side by side, only the outcomes people gave are gated: 'none' never given is not held against it.
    r = cert.certify_audits(["A", "B"] * 150, ["A", "B"] * 150, [0.5] * 300, ("A", "B", "tie", "none"), gate_all=False)
    assert r["verdict"] == cert.REPLACEABLE
    assert [x["gated"] for x in r["per_label"]] == [True, True, False, False]


@pytest.mark.parametrize("bad", [{"min_agreement": 0}, {"min_agreement": 1.5}, {"min_recall": float("nan")},
                                 {"level": 1.0}, {"epsilon": -0.1}])
def test_thresholds_out_of_range_are_refused_in_one_line(bad):
    with pytest.raises(ValueError) as err:
        cert.Thresholds(**bad).check()
    assert "\n" not in str(err.value) and ("give" in str(err.value) or "use" in str(err.value))


# ------------------------------------------------------------------------------ on the demo workspace

def test_agreement_and_recall_counted_by_hand_on_random_audits(demo_workspace):
    ws = demo_workspace
    rows = random_rows(ws, YES_NO, 20)
    judge_said = [r["label"] for r in rows]
    assert judge_said.count("yes") == 13 and judge_said.count("no") == 7
    overridden = {0, 1, 5, 10, 15}
    assert [judge_said[k] for k in sorted(overridden)] == ["yes", "no", "yes", "yes", "no"]
    for k, r in enumerate(rows):
        label = FLIP[r["label"]] if k in overridden else r["label"]
        audit.review(ws, "ana", r["id"], label, sampling=r["sampling"])
    # a priority-queue review (not drawn at random) must not count
    other = next(v for v in sampling.queue(ws, YES_NO, "random", rate=1.0, limit=200)["rows"]
                 if v["id"] not in {r["id"] for r in rows})
    audit.review(ws, "ana", other["id"], FLIP[other["label"]])

    result = cert.certify(ws, YES_NO)
    # 20 audits, 5 overridden: 15 agree. People said yes on 13 - 3 + 2 = 12 (the judge too on 10),
    # no on 7 - 2 + 3 = 8 (the judge too on 5).
    assert result["n_audits"] == 20 and result["design"] == "random"
    assert result["agreement"]["estimate"] == pytest.approx(15 / 20)
    assert (result["agreement"]["ci_low"], result["agreement"]["ci_high"]) == pytest.approx(exact(15, 20))
    by_label = {r["label"]: r for r in result["per_label"]}
    assert (by_label["yes"]["n"], by_label["no"]["n"]) == (12, 8)
    assert by_label["yes"]["recall"] == pytest.approx(10 / 12)
    assert (by_label["no"]["ci_low"], by_label["no"]["ci_high"]) == pytest.approx(exact(5, 8))
    # Both upper bounds are above their thresholds (91.3% ≥ 90%, 91.5% ≥ 80%), both lower bounds below:
    assert result["verdict"] == cert.UNDECIDED
    # heading below (75% < 90%, 62.5% < 80%): the first upper bound to fall below decides it
    n = 20 + result["audits_needed"]
    ups = [cert.clopper_pearson(p * m, m)[1] for p, m in ((0.75, n), (5 / 8, 8 * n / 20))]
    ups_before = [cert.clopper_pearson(p * m, m)[1] for p, m in ((0.75, n - 1), (5 / 8, 8 * (n - 1) / 20))]
    assert ups[0] < 0.9 or ups[1] < 0.8
    assert ups_before[0] >= 0.9 and ups_before[1] >= 0.8
    assert any("1 reviewed verdicts not used" in x for x in result["notes"])


def test_undecided_with_few_audits_and_the_audits_that_would_decide_it(demo_workspace):
    ws = demo_workspace
    rows = random_rows(ws, YES_NO, 8)
    assert [r["label"] for r in rows].count("no") == 2
    for r in rows:
        audit.confirm(ws, "ana", r["id"], sampling=r["sampling"])
    result = cert.certify(ws, YES_NO)
    assert result["verdict"] == cert.UNDECIDED
    assert result["agreement"]["ci_low"] == pytest.approx(0.025 ** (1 / 8))   # 8 of 8 agree
    # All agree, so each lower bound is 0.025^(1/m) for m effective audits: it reaches t when
    # m ≥ ln 0.025 / ln t. Agreement: m = n ≥ 35.01 → 36; recall of no (2 of 8 audits): m = 2n/8 ≥
    # 16.53 → n ≥ 66.1 → 67; recall of yes (6 of 8): n ≥ 22.04 → 23. All three must pass: 67 in all.
    assert math.ceil(math.log(0.025) / math.log(0.8) * 8 / 2) == 67
    assert result["audits_needed"] == 67 - 8


def test_certify_json_shape_from_the_command_line(demo_workspace):
    ws = demo_workspace
    for r in random_rows(ws, SXS, 10):
        audit.confirm(ws, "ana", r["id"], sampling=r["sampling"])
    out = invoke("certify", "--workspace", ws, "--judge", SXS, "--json", "--min-agreement", "0.85")
    assert out.exit_code == 0, out.stderr
    data = json.loads(out.stdout)
    assert list(data)[:8] == ["judge", "verdict", "n_audits", "agreement", "per_label", "alt_test", "audits_needed",
                              "thresholds"]
    assert set(data) == {"judge", "verdict", "n_audits", "agreement", "per_label", "alt_test", "audits_needed",
                         "thresholds", "design", "ceiling", "reasons", "notes"}
    assert data["judge"] == SXS and data["verdict"] in cert.VERDICTS and data["n_audits"] == 10
    assert {"estimate", "ci_low", "ci_high"} <= set(data["agreement"]) and data["agreement"]["estimate"] == 1.0
    assert [r["label"] for r in data["per_label"]] == ["A", "B", "tie", "none"]
    assert data["thresholds"]["min_agreement"] == 0.85 and data["thresholds"]["min_recall"] == 0.8
    assert data["alt_test"] is None and any("adjudicated" in n for n in data["notes"])
    text = invoke("certify", "--workspace", ws, "--judge", SXS)
    assert text.exit_code == 0 and text.stdout.startswith(f"{SXS}: {data['verdict']}")


def _three_annotators(ws: Path, overrides: dict[str, set[int]]) -> tuple[list[dict], dict]:
    """ana, ben and cat review the same 30 side-by-side verdicts (no sampling: the overlap); each
    overrides the verdicts at the positions given (to the same other label), confirms the rest."""
    rows = sampling.queue(ws, SXS, "random", rate=1.0, limit=30)["rows"]
    other = {"A": "B", "B": "A", "tie": "A", "none": "A"}
    for who, positions in overrides.items():
        for k, r in enumerate(rows):
            if k in positions:
                audit.review(ws, who, r["id"], other[r["label"]])
            else:
                audit.confirm(ws, who, r["id"])
    return rows, other


def test_alt_test_with_three_annotators_judge_loses_when_people_agree_against_it(demo_workspace):
    wrong = set(range(12))
    _three_annotators(demo_workspace, {"ana": wrong, "ben": wrong, "cat": wrong})
    result = cert.certify(demo_workspace, SXS)
    alt = result["alt_test"]
    assert alt["n_annotators"] == 3 and alt["n_verdicts"] == 30
    # Leaving any one out, the other two agree with it everywhere; the judge differs on 12 of 30:
    # W_f = 1 on 18, W_h = 1 on 30, d = W_h − W_f is 1 on 12 and 0 on 18.
    d = np.array([1.0] * 12 + [0.0] * 18)
    t = (d.mean() - 0.15) / (d.std(ddof=1) / math.sqrt(30))
    for a in alt["annotators"]:
        assert (a["judge_advantage"], a["annotator_advantage"], a["n"]) == (18 / 30, 1.0, 30)
        assert a["p_value"] == pytest.approx(student_t.cdf(t, 29))
        assert a["judge_wins"] is False
    assert alt["winning_rate"] == 0 and alt["passed"] is False
    assert result["verdict"] == cert.NOT_REPLACEABLE       # no random audits at all, the failed test decides
    assert result["ceiling"]["people"]["estimate"] == 1.0
    assert result["ceiling"]["judge"]["estimate"] == pytest.approx(18 / 30)


def test_alt_test_with_three_annotators_judge_wins_against_a_dissenting_one(demo_workspace):
    _three_annotators(demo_workspace, {"ana": set(), "ben": set(), "cat": set(range(12))})
    result = cert.certify(demo_workspace, SXS)
    alt = result["alt_test"]
    wins = {a["annotator"]: a for a in alt["annotators"]}
    # ana out: ben and cat remain; ana labels as the judge does everywhere: d = 0 on all 30 (< ε: wins).
    assert (wins["ana"]["judge_advantage"], wins["ana"]["annotator_advantage"], wins["ana"]["p_value"]) == (1.0, 1.0, 0.0)
    # cat out: ana and ben agree with the judge; cat differs on 12: W_f = 1 on 30, W_h = 1 on 18.
    assert (wins["cat"]["judge_advantage"], wins["cat"]["annotator_advantage"]) == (1.0, 18 / 30)
    assert all(a["judge_wins"] for a in alt["annotators"]) and alt["winning_rate"] == 1.0 and alt["passed"]
    # People's ceiling: pairs agree on 18 verdicts, a third of pairs on the other 12: (18 + 4) / 30;
    # the judge agrees with all three on 18, with two of three on 12: (18 + 8) / 30.
    assert result["ceiling"]["people"]["estimate"] == pytest.approx(22 / 30)
    assert result["ceiling"]["judge"]["estimate"] == pytest.approx(26 / 30)
    assert result["verdict"] == cert.UNDECIDED               # the test passed, but there are no random audits
    assert any("people agree with each other on 73.3%" in n for n in result["notes"])


@pytest.mark.parametrize("args,must", [
    (["--judge", "nosuch"], ("nosuch",)),
    (["--judge", SXS, "--min-agreement", "1.5"], ("--min-agreement",)),
    (["--judge", SXS, "--min-recall", "nan"], ("--min-recall",)),
    (["--judge", SXS, "--epsilon", "2"], ("--epsilon",)),
    (["--judge", SXS, "--level", "1"], ("--level",)),
    (["--judge", SXS, "--audit-queue", "priority"], ("priority",)),
])
def test_bad_certify_options_are_refused_in_one_line(demo_workspace, args, must):
    assert_refused(f"certify {args}", ["certify", "--workspace", demo_workspace, *args], workspace=demo_workspace,
                   must_name=must)


def cert_table(at):
    """The panel's table (AppTest finds dataframes by position, not key): the one with a "figure" column."""
    (frame,) = [df.value for df in at.dataframe if "figure" in df.value.columns]
    return frame


def test_the_panel_on_the_agreement_page(demo_workspace, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from .conftest import PROJECT_ROOT

    ws = demo_workspace
    rows = random_rows(ws, YES_NO, 20)
    for k, r in enumerate(rows):
        label = FLIP[r["label"]] if k in {0, 1, 5, 10, 15} else r["label"]
        audit.review(ws, "ana", r["id"], label, sampling=r["sampling"])
    monkeypatch.setenv("LSQA_WORKSPACE", str(ws))
    at = AppTest.from_file(str(PROJECT_ROOT / "app.py"), default_timeout=90)
    at.session_state["annotator"] = "ana"
    at.run()
    at.switch_page("pages/agreement.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert "Can this judge replace the annotators?" in [h.value for h in at.subheader]
    at.selectbox(key="cert_judge").set_value(YES_NO).run()
    assert not at.exception, [e.value for e in at.exception]
    shown = [w.value.replace("\\", "") for w in at.warning]     # names are Markdown-escaped on the page
    assert f"{YES_NO}: undecided: about 5 more random audits would tell" in shown
    frame = cert_table(at)
    first = frame.iloc[0]
    assert (first["figure"], first["estimate"], first["audits"]) == ("agreement with people", "75.0%", 20)
    assert frame.loc[frame["figure"].str.endswith(": no"), "estimate"].iloc[0] == "62.5%"
    # Looser thresholds from the panel's own inputs: lower bounds 50.9% (agreement), 51.6% (yes), 24.5% (no)
    # all reach 50% / 20%: the same figures, now "replaceable".
    at.number_input(key="cert_min_agr").set_value(0.5).run()
    at.number_input(key="cert_min_rec").set_value(0.2).run()
    assert not at.exception, [e.value for e in at.exception]
    assert [s.value.replace("\\", "") for s in at.success] == [f"{YES_NO}: can replace the annotators on this study"]
    frame = cert_table(at)
    assert (frame.iloc[0]["estimate"], frame.iloc[0]["must reach"]) == ("75.0%", "50% (lower bound)")
