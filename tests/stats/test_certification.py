"""``lsqa certify`` and the Agreement page's certification panel (issue 30, item 4): can this judge
replace the annotators?

Workspace tests use the small demo (tests/conftest.py): reviews are written through ``lsqa.audit``
exactly as the Audit page writes them, random-queue reviews with the sampling record the random
queue (``lsqa.stats.audits.queue``) gives. Expected figures are counted by hand from the labels
written. The gate's bounds are a confidence sequence (a one-sided beta-binomial mixture, Howard et
al. 2021): the tests recompute them here by numerical integration of the mixture (``mixture_bounds``,
scipy's ``quad`` and ``brentq``), and the fixed-n rule's from scipy's exact binomial interval
(``binomtest``), not from the module under test.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy.integrate import quad
from scipy.optimize import brentq
from scipy.stats import beta as beta_dist
from scipy.stats import binom, binomtest
from scipy.stats import t as student_t

from lsqa import audit
from lsqa.figures import audits
from lsqa.figures import certification as figures_certification
from lsqa.stats import certification as cert
from tests.support.bad_input import assert_refused, invoke

YES_NO = "lexical-autoais-fc"   # the demo's AutoAIS judge: 66 yes, 30 no
SXS = "lexical-sxs-fc"


def exact(k: int, n: int) -> tuple[float, float]:
    ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact")
    return ci.low, ci.high


def _mixture_low(s: float, n: float, level: float) -> float:
    """The lower end of the one-sided mixture sequence, by quadrature: the p0 at which the likelihood
    ratio of Bernoulli(θ) to Bernoulli(p0), averaged over θ uniform on [p0, 1], equals 2 / (1 − level)."""
    if s <= 0:
        return 0.0
    f = n - s

    def g(th):                      # log θ^s (1 − θ)^f
        return s * math.log(th) + (f * math.log(1 - th) if f else 0.0)

    def log_m(p0):
        top = g(max(p0, s / n)) if s < n else g(p0)          # the integrand's largest value on [p0, 1]
        area = quad(lambda th: math.exp(g(th) - top) if th < 1 else float(f == 0), p0, 1, epsabs=0, epsrel=1e-12,
                    limit=200)[0]
        return top + math.log(area) - g(p0) - math.log(1 - p0)

    return brentq(lambda p0: log_m(p0) - math.log(2 / (1 - level)), 1e-9, s / n - 1e-12, xtol=1e-13)


def mixture_bounds(s: float, n: float, level: float = 0.95) -> tuple[float, float]:
    """Both ends (the upper one as 1 − the lower end for the failures)."""
    return _mixture_low(s, n, level), 1 - _mixture_low(n - s, n, level)


def random_rows(ws: Path, judge: str, n: int) -> list[dict]:
    """The first ``n`` verdicts of the judge's random audit queue (rate 0.25), as the Audit page shows them."""
    rows = audits.queue(ws, judge, "random", rate=0.25, limit=n)["rows"]
    assert len(rows) == n
    return rows


FLIP = {"yes": "no", "no": "yes"}


# ------------------------------------------------------------------------------ pure numerics

def test_clopper_pearson_and_weighted_share_by_hand():
    assert cert.clopper_pearson(8, 10) == pytest.approx(exact(8, 10))
    assert cert.clopper_pearson(0, 10)[1] == pytest.approx(1 - 0.025 ** (1 / 10))   # (α/2)^(1/n) at the edges
    assert cert.clopper_pearson(10, 10)[0] == pytest.approx(0.025 ** (1 / 10))
    assert cert.bounds(8, 10, rule=cert.FIXED_N) == pytest.approx(exact(8, 10))
    # Weights 1/π = 2, 4, 1: Hájek share (2 + 1) / 7; Kish effective size 7² / (4 + 16 + 1) = 7/3:
    # the sequence's bounds at 1 effective success of 7/3 (the share times the effective size).
    share = cert.weighted_share([1, 0, 1], [2, 4, 1])
    assert share["estimate"] == pytest.approx(3 / 7)
    assert share["n_effective"] == pytest.approx(7 / 3)
    assert (share["ci_low"], share["ci_high"]) == pytest.approx(mixture_bounds(1.0, 7 / 3), abs=1e-9)
    fixed = cert.weighted_share([1, 0, 1], [2, 4, 1], rule=cert.FIXED_N)
    assert (fixed["ci_low"], fixed["ci_high"]) == pytest.approx(cert.clopper_pearson(1.0, 7 / 3))


@pytest.mark.parametrize("s,n,level", [(15, 20, 0.95), (5, 8, 0.95), (8, 8, 0.95), (0, 8, 0.95), (93, 100, 0.95),
                                       (37.5, 41.2, 0.9), (3.3, 12.7, 0.99)])
def test_the_sequence_bounds_against_the_mixture_integrated_here(s, n, level):
    assert cert.bounds(s, n, level) == pytest.approx(mixture_bounds(s, n, level), abs=1e-9)
    # ... and they are what the gate tests at a threshold, without computing them
    low, high = cert.bounds(s, n, level)
    for t in (0.05, 0.5, 0.8, 0.9, 0.97, 1.0, low - 1e-6, low + 1e-6, high - 1e-6, high + 1e-6):
        if 0 < t <= 1:
            passes, fails = cert.decides(s, n, t, level)
            assert (bool(passes), bool(fails)) == (low >= t, high < t), t


def test_all_agree_has_the_closed_form_lower_bound():
    # s = n: ∫_{p}^1 θ^n dθ / ((1 − p) p^n) = (1 − p^(n+1)) / ((n + 1)(1 − p) p^n) = 40 at the lower bound.
    for n in (1, 8, 36, 200):
        low, high = cert.bounds(n, n)
        assert high == 1.0
        assert (1 - low ** (n + 1)) / ((n + 1) * (1 - low) * low ** n) == pytest.approx(40, rel=1e-7)


def test_the_sequence_is_sensible():
    rng = np.random.default_rng(5)
    for _ in range(200):
        n = float(rng.uniform(1, 2000))
        s = float(rng.uniform(0, n))
        low, high = cert.bounds(s, n)
        cp_low, cp_high = cert.clopper_pearson(s, n)
        assert 0 <= low <= s / n <= high <= 1
        assert low <= cp_low + 1e-12 and high >= cp_high - 1e-12      # valid at every n: wider than one look's
        assert cert.bounds(s + 0.5 * (n - s), n)[0] >= low             # more successes: a higher lower bound
        assert cert.bounds(s, n, 0.9)[0] >= low                        # a lower level: a higher lower bound
    # the same share on more audits: narrower, towards it
    widths = [np.subtract(*cert.bounds(0.93 * n, n)[::-1]) for n in (20, 50, 100, 500, 2000, 10_000)]
    assert widths == sorted(widths, reverse=True) and widths[-1] < 0.02
    assert cert.bounds(0, 0) == (0.0, 1.0)


def _looks(truth: float, worlds: int, step: int, last: int, seed: int, weights=None):
    """Cumulative (effective successes, effective size) at every look of ``worlds`` streams of audits:
    i.i.d. hits at ``truth``, or draws ∝ a score weighed 1/π when ``weights`` is given."""
    rng = np.random.default_rng(seed)
    looks = np.arange(step, last + 1, step)
    if weights is None:
        hits = rng.random((worlds, last)) < truth
        s = np.cumsum(hits, axis=1)[:, looks - 1].astype(float)
        return s, np.broadcast_to(looks.astype(float), s.shape)
    # unequal π: a population where the judge is right on exactly `truth`, its errors drawn more often
    size = 20_000
    wrong = np.zeros(size, dtype=bool)
    wrong[: round((1 - truth) * size)] = True
    score = np.where(wrong, 0.9, rng.uniform(0.05, 0.5, size))
    draws = rng.choice(size, size=(worlds, last), p=score / score.sum())
    w, hit = 1 / score[draws], ~wrong[draws]
    sw, swh, sw2 = (np.cumsum(x, axis=1)[:, looks - 1] for x in (w, w * hit, w * w))
    n_eff = sw ** 2 / sw2
    return swh / sw * n_eff, n_eff


@pytest.mark.parametrize("step", [10, 50])
def test_repeated_looks_certify_a_judge_at_the_threshold_rarely_and_the_fixed_n_rule_often(step):
    # 300 worlds of a judge whose agreement is exactly 0.90, the threshold (not replaceable), checked after
    # every `step` audits up to 1,000: certified when a lower bound reaches 0.90 at any look.
    s, n = _looks(0.90, 300, step, 1000, seed=11)
    rates = {}
    for rule in cert.RULES:
        low, high = (b.reshape(s.shape) for b in cert.bounds_many(s.ravel(), n.ravel(), 0.95, rule))
        rates[rule] = np.mean((low >= 0.90).any(axis=1))
        covered = np.mean(((low <= 0.90) & (0.90 <= high)).all(axis=1))
        if rule == cert.SEQUENCE:
            assert covered >= 0.95                            # the truth inside at every look at once
    assert rates[cert.SEQUENCE] <= 0.025
    assert rates[cert.FIXED_N] > 0.025 * (2 if step == 10 else 1.5)   # measured 0.103 / 0.063 (seed 11)


def test_repeated_looks_with_unequal_weights_on_the_kish_size():
    # Audits drawn ∝ a score (0.9 where the judge errs, 0.05-0.5 elsewhere), weighed 1/π: the Hájek share on
    # the Kish effective size. At 0.90 a look every 10 up to 1,000 still certifies at most 2.5% of 300 worlds,
    # and at 0.95 most of them.
    s, n = _looks(0.90, 300, 10, 1000, seed=12, weights=True)
    assert n[:, -1].mean() < 900                              # the weights do differ
    low, _ = cert.bounds_many(s.ravel(), n.ravel())
    assert np.mean((low.reshape(s.shape) >= 0.90).any(axis=1)) <= 0.025
    s, n = _looks(0.95, 300, 10, 1000, seed=13, weights=True)
    low, _ = cert.bounds_many(s.ravel(), n.ravel())
    assert np.mean((low.reshape(s.shape) >= 0.90).any(axis=1)) >= 0.95


def test_the_rule_of_the_gate_and_the_fixed_n_rule_for_comparison():
    people = ["yes"] * 12 + ["no"] * 8
    judge = ["yes"] * 10 + ["no"] * 2 + ["no"] * 5 + ["yes"] * 3
    seq = cert.certify_audits(judge, people, [0.25] * 20, ("yes", "no"), gate_all=True, advise=False)
    fixed = cert.certify_audits(judge, people, [0.25] * 20, ("yes", "no"), gate_all=True, advise=False,
                                rule=cert.FIXED_N)
    assert seq["rule"] == cert.RULES[cert.SEQUENCE] and "anytime-valid" in seq["rule"]
    assert "fixed-n" in fixed["rule"] and (fixed["agreement"]["ci_low"], fixed["agreement"]["ci_high"]) == \
        pytest.approx(exact(15, 20))
    assert (seq["agreement"]["ci_low"], seq["agreement"]["ci_high"]) == pytest.approx(mixture_bounds(15, 20), abs=1e-9)
    assert seq["audits_needed"] is None and fixed["audits_needed"] is None        # advise=False
    with pytest.raises(ValueError, match="unknown certification rule"):
        cert.certify_audits(judge, people, [0.25] * 20, ("yes", "no"), gate_all=True, rule="bayes")


def _all_agree_needed(t: float) -> int:
    """The fewest audits, all agreeing, whose lower bound reaches t (the closed form above)."""
    return next(m for m in range(1, 10_000) if (1 - t ** (m + 1)) / ((m + 1) * (1 - t) * t ** m) >= 40)


def _p_decided_one_label(s: int, n: int, k: int, rate: float) -> float:
    """n audits, s agreeing, people always saying 'A' (so agreement and the recall of 'A' are the same
    share); k more at ``rate``: the exact chance that the lower bound then reaches 0.9 or the upper one
    falls below it (bounds by quadrature here; the lower one rises with the successes)."""
    def low(x):                     # the lower bound reaches 0.9: from some x on (it rises with successes)
        return _low_reaches(s + x, n + k)

    def up(x):                      # the upper bound falls below 0.9: up to some x (it falls with failures)
        return 1 - _mixture_low(n + k - s - x, n + k, 0.95) < 0.9

    j = np.arange(k + 1)
    first = _first(low, k + 1)                                  # lower ≥ 0.9 from here on
    last_up = _first(lambda x: not up(x), k + 1)                # upper < 0.9 before here
    ok = j >= first
    ok[:last_up] = True
    return float(binom.pmf(j, k, rate)[ok].sum())


def _first(holds, size: int) -> int:
    """The first x in range(size) where ``holds`` (False, then True from there on), ``size`` if none: by
    bisection, so a few dozen quadratures instead of one per x (the bounds are monotone in the successes
    at a fixed number of audits, so each predicate changes once)."""
    lo, hi = 0, size
    while lo < hi:
        mid = (lo + hi) // 2
        if holds(mid):
            hi = mid
        else:
            lo = mid + 1
    return lo


def _low_reaches(s: int, n: int) -> bool:
    return _mixture_low(s, n, 0.95) >= 0.9


def test_audits_needed_is_an_80_percent_figure_under_the_same_rule():
    # 100 side-by-side audits where people always said 'A', 95 agreeing: one share gates both agreement (0.9)
    # and the recall of 'A' (0.8). The futures take the judge to agree at the 40% quantile of the Jeffreys
    # posterior of 95 of 100 (heading up: a planning value a little below the share).
    people = ["A"] * 100
    judge = ["A"] * 95 + ["B"] * 5
    rate = float(beta_dist.ppf(0.4, 95.5, 5.5))
    assert 0.93 < rate < 0.945
    r = cert.certify_audits(judge, people, [0.25] * 100, ("A", "B", "tie", "none"), gate_all=False)
    assert r["verdict"] == cert.UNDECIDED
    k = r["audits_needed"]
    # the simulated futures (2,000) against the exact binomial sum: within their sampling error of 80%
    assert _p_decided_one_label(95, 100, k, rate) >= 0.77
    assert _p_decided_one_label(95, 100, k - 30, rate) < 0.8
    assert f"about {k} more random audits would decide it with 80% probability, if the current rates are " \
           "the true ones" in r["reasons"]
    # the same call gives the same figure (futures seeded by the number of audits)
    assert cert.certify_audits(judge, people, [0.25] * 100, ("A", "B", "tie", "none"),
                               gate_all=False)["audits_needed"] == k


def test_audits_needed_is_capped_by_the_verdicts_there_are_to_draw():
    # All 8 audits agree (6 yes, 2 no). To be replaceable the recall of 'no' needs at least
    # _all_agree_needed(0.8) = 24 audits where people said no (more if any disagrees): with 'no' at 2/8,
    # 88 more audits (96 verdicts in all) bring that in only 54% of futures.
    people = ["yes"] * 6 + ["no"] * 2
    assert (_all_agree_needed(0.9), _all_agree_needed(0.8)) == (51, 24)
    assert binom.sf(24 - 2 - 1, 88, 0.25) == pytest.approx(0.54, abs=0.01)
    capped = cert.certify_audits(people, people, [0.25] * 8, ("yes", "no"), gate_all=True, population=96)
    assert capped["audits_needed"] is None
    assert any("no number of random audits up to 96 would decide it with 80% probability" in x
               for x in capped["reasons"])
    # without a population the cap is 100 × the audits so far; the 2 'no' audits say little about that recall
    # (planned at the 40% quantile of Beta(2.5, 0.5), about 0.89, against a threshold of 0.8)
    assert float(beta_dist.ppf(0.4, 2.5, 0.5)) < 0.9
    free = cert.certify_audits(people, people, [0.25] * 8, ("yes", "no"), gate_all=True)
    assert free["audits_needed"] is None and "up to 800 would decide it" in free["reasons"][-1]


def test_following_the_advice_decides_it_in_most_worlds():
    # A 95% judge, 40 worlds of 50 random audits: where undecided, audit the suggested number more and
    # check once; most are then decided (the bench: 500 worlds, bench/bench_certify_sequential.py).
    rng = np.random.default_rng(21)
    tried = decided = 0
    for _ in range(40):
        people = np.where(rng.random(4000) < 0.5, "yes", "no")
        judge = np.where(rng.random(4000) < 0.95, people, np.where(people == "yes", "no", "yes"))
        r = cert.certify_audits(judge[:50], people[:50], np.full(50, 0.1), ("yes", "no"), gate_all=True,
                                population=4000)
        if r["verdict"] != cert.UNDECIDED or r["audits_needed"] is None:
            continue
        n = 50 + r["audits_needed"]
        tried += 1
        decided += cert.certify_audits(judge[:n], people[:n], np.full(n, 0.1), ("yes", "no"), gate_all=True,
                                       population=4000, advise=False)["verdict"] != cert.UNDECIDED
    assert tried >= 30 and decided / tried >= 0.7


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
    other = next(v for v in audits.queue(ws, YES_NO, "random", rate=1.0, limit=200)["rows"]
                 if v["id"] not in {r["id"] for r in rows})
    audit.review(ws, "ana", other["id"], FLIP[other["label"]])

    result = figures_certification.certify(ws, YES_NO)
    # 20 audits, 5 overridden: 15 agree. People said yes on 13 - 3 + 2 = 12 (the judge too on 10),
    # no on 7 - 2 + 3 = 8 (the judge too on 5).
    assert result["n_audits"] == 20 and result["design"] == "random"
    assert result["agreement"]["estimate"] == pytest.approx(15 / 20)
    assert (result["agreement"]["ci_low"], result["agreement"]["ci_high"]) == pytest.approx(mixture_bounds(15, 20),
                                                                                             abs=1e-9)
    assert result["rule"] == cert.RULES[cert.SEQUENCE]
    by_label = {r["label"]: r for r in result["per_label"]}
    assert (by_label["yes"]["n"], by_label["no"]["n"]) == (12, 8)
    assert by_label["yes"]["recall"] == pytest.approx(10 / 12)
    assert (by_label["no"]["ci_low"], by_label["no"]["ci_high"]) == pytest.approx(mixture_bounds(5, 8), abs=1e-9)
    # Every upper bound is above its threshold (95.6% ≥ 90%, 99.4% and 96.0% ≥ 80%), every lower bound below
    # (the fixed-n rule's upper bound of the agreement, 91.3%, was too):
    assert result["agreement"]["ci_high"] == pytest.approx(0.956, abs=5e-4) and exact(15, 20)[1] > 0.9
    assert result["verdict"] == cert.UNDECIDED
    # Heading down (75% < 90%, 62.5% < 80%), but the 76 verdicts left to draw would not put an upper bound
    # below its threshold often enough (bench/bench_certify_sequential.py checks the figure in many worlds):
    assert result["audits_needed"] is None
    assert "no number of random audits up to 96 would decide it with 80% probability" in result["reasons"][-1]
    assert any("1 reviewed verdicts not used" in x for x in result["notes"])


def test_undecided_with_few_audits_and_the_audits_that_would_decide_it(demo_workspace):
    ws = demo_workspace
    rows = random_rows(ws, YES_NO, 8)
    assert [r["label"] for r in rows].count("no") == 2
    for r in rows:
        audit.confirm(ws, "ana", r["id"], sampling=r["sampling"])
    result = figures_certification.certify(ws, YES_NO)
    assert result["verdict"] == cert.UNDECIDED
    # 8 of 8 agree: the lower bound L solves (1 − L⁹) / (9 (1 − L) L⁸) = 40 (test_all_agree_has_the_closed_form...)
    low = result["agreement"]["ci_low"]
    assert (1 - low ** 9) / (9 * (1 - low) * low ** 8) == pytest.approx(40, rel=1e-7)
    assert low < 0.025 ** (1 / 8)                    # below the fixed-n rule's 63.1%: valid at every look
    # The recall of 'no' needs 24 'no' audits all agreeing (2 so far, 'no' at 2/8): 88 more verdicts to draw
    # bring that in 54% of futures at best (test_audits_needed_is_capped_by_the_verdicts_there_are_to_draw).
    assert result["audits_needed"] is None
    assert "no number of random audits up to 96 would decide it with 80% probability" in result["reasons"][-1]


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
                         "thresholds", "design", "ceiling", "reasons", "notes", "rule"}
    assert data["rule"].startswith("anytime-valid confidence sequence") and data["rule"] == cert.RULES[cert.SEQUENCE]
    assert data["judge"] == SXS and data["verdict"] in cert.VERDICTS and data["n_audits"] == 10
    assert {"estimate", "ci_low", "ci_high"} <= set(data["agreement"]) and data["agreement"]["estimate"] == 1.0
    assert [r["label"] for r in data["per_label"]] == ["A", "B", "tie", "none"]
    assert data["thresholds"]["min_agreement"] == 0.85 and data["thresholds"]["min_recall"] == 0.8
    assert data["alt_test"] is None and any("adjudicated" in n for n in data["notes"])
    text = invoke("certify", "--workspace", ws, "--judge", SXS)
    assert text.exit_code == 0 and text.stdout.startswith(f"{SXS}: {data['verdict']}")
    assert f"bounds: {data['rule']}" in text.stdout.splitlines()


def _three_annotators(ws: Path, overrides: dict[str, set[int]]) -> tuple[list[dict], dict]:
    """ana, ben and cat review the same 30 side-by-side verdicts (no sampling: the overlap); each
    overrides the verdicts at the positions given (to the same other label), confirms the rest."""
    rows = audits.queue(ws, SXS, "random", rate=1.0, limit=30)["rows"]
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
    result = figures_certification.certify(demo_workspace, SXS)
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
    result = figures_certification.certify(demo_workspace, SXS)
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

    from tests.conftest import PROJECT_ROOT

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
    # undecided, and no number of the 96 verdicts would decide it with 80% probability (the test above)
    assert f"{YES_NO}: undecided" in shown
    assert any("up to 96 would decide it with 80% probability" in m.value for m in at.markdown)
    frame = cert_table(at)
    first = frame.iloc[0]
    assert (first["figure"], first["estimate"], first["audits"]) == ("agreement with people", "75.0%", 20)
    assert first["95% interval"] == "41.6% – 95.6%"                   # the sequence's bounds of 15 of 20
    assert frame.loc[frame["figure"].str.endswith(": no"), "estimate"].iloc[0] == "62.5%"
    # Looser thresholds from the panel's own inputs: lower bounds 41.6% (agreement), 41.3% (yes), 15.8% (no)
    # all reach 40% / 15%: the same figures, now "replaceable".
    at.number_input(key="cert_min_agr").set_value(0.4).run()
    at.number_input(key="cert_min_rec").set_value(0.15).run()
    assert not at.exception, [e.value for e in at.exception]
    assert [s.value.replace("\\", "") for s in at.success] == [f"{YES_NO}: can replace the annotators on this study"]
    frame = cert_table(at)
    assert (frame.iloc[0]["estimate"], frame.iloc[0]["must reach"]) == ("75.0%", "40% (lower bound)")
