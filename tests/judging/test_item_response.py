"""The item-response (Rasch) fit behind the ability-weighted consensus of reference errors
(lsqa.judging.item_response): abilities and difficulties recovered from answers drawn from known ones,
finite for questions every system got right or wrong, pulled in by the priors as documented."""

from __future__ import annotations

import numpy as np
import pytest

from lsqa.judging.item_response import fit_rasch


def _draw(thetas, n_questions, seed=0):
    rng = np.random.default_rng(seed)
    b = rng.normal(0.0, 1.0, n_questions)
    triples = [(f"s{i}", f"q{j}", float(rng.random() < 1 / (1 + np.exp(-(t - b[j])))))
               for i, t in enumerate(thetas) for j in range(n_questions)]
    return triples, b


def test_seven_systems_abilities_come_back_in_order_and_near_their_values():
    thetas = [-1.5, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5]
    triples, b = _draw(thetas, 400)
    fit = fit_rasch(triples)
    got = [fit.ability[f"s{i}"] for i in range(7)]
    assert fit.converged and fit.n_responses == 7 * 400
    assert got == sorted(got)  # the order of the true abilities
    # The ridge pulls the spread in a little; the centre is free up to μ.
    centred = np.array(got) - np.mean(got)
    assert np.max(np.abs(centred - np.array(thetas))) < 0.35
    # Seven responses per question: difficulty is seen roughly, but it is seen.
    est = np.array([fit.difficulty[f"q{j}"] for j in range(400)])
    assert np.corrcoef(est, b)[0, 1] > 0.6


def test_a_question_everyone_got_right_or_wrong_has_a_finite_difficulty():
    triples, _ = _draw([-1.0, 0.0, 1.0], 60)
    triples += [(s, "all-right", 1.0) for s in ("s0", "s1", "s2")]
    triples += [(s, "all-wrong", 0.0) for s in ("s0", "s1", "s2")]
    fit = fit_rasch(triples)
    easy, hard = fit.difficulty["all-right"], fit.difficulty["all-wrong"]
    assert np.isfinite(easy) and np.isfinite(hard) and easy < fit.typical_difficulty < hard
    assert abs(hard - fit.typical_difficulty) < 5  # the prior holds it within a few logits


def test_the_expected_share_follows_ability_and_difficulty():
    triples, _ = _draw([-1.0, 0.0, 1.0], 100, seed=3)
    fit = fit_rasch(triples)
    q = "q7"
    assert fit.expected("s2", q) > fit.expected("s1", q) > fit.expected("s0", q)
    assert fit.typical_share("s2") > 0.5 > fit.typical_share("s0")
    assert fit.expected("unknown system", "unknown question") == pytest.approx(
        1 / (1 + np.exp(fit.typical_difficulty)))


def test_fractional_responses_count_as_shares():
    # A system that matches half of every reference sits between one that matches all and one that matches none.
    triples = [(s, f"q{j}", y) for j in range(50) for s, y in (("all", 1.0), ("half", 0.5), ("none", 0.0))]
    fit = fit_rasch(triples)
    assert fit.ability["none"] < fit.ability["half"] < fit.ability["all"]
    assert fit.typical_share("half") == pytest.approx(0.5, abs=0.02)


def test_stronger_priors_pull_abilities_to_zero_and_no_answers_fit_nothing():
    triples, _ = _draw([-1.5, 0.0, 1.5], 100)
    loose, tight = fit_rasch(triples, lambda_ability=0.01), fit_rasch(triples, lambda_ability=1000.0)
    assert max(map(abs, tight.ability.values())) < 0.05 < max(map(abs, loose.ability.values()))
    empty = fit_rasch([])
    assert empty.ability == {} and empty.n_responses == 0 and empty.expected("s", "q") == 0.5
