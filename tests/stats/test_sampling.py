"""Audit sampling's strata (lsqa.stats.sampling, issue 13; issue 29 "loose ends"): a stratum key
names one pair of systems whatever characters their names hold, so stratified random audits give
each pair its own share of draws and the Hájek weights of the corrected estimates stay exact."""

from __future__ import annotations

import json

import pytest

from lsqa.stats.sampling import Item, inclusion_probabilities


def _pair_item(q: str, a: str, b: str) -> Item:
    return Item(key=(q, a, b), family="pairwise", question_id=q, system_a=a, system_b=b,
                judgment_ids=[f"j-{q}-{a}-{b}"], judge_outcomes=[1.0], judge_labels=["A"])


def test_pairs_whose_joined_names_coincide_are_two_strata():
    # "a|b" vs "c" and "a" vs "b|c" joined with '|' are both "a|b|c": the old key merged them.
    lone = _pair_item("q1", "a|b", "c")
    crowd = [_pair_item(f"q{k}", "a", "b|c") for k in range(2, 5)]
    items = [lone, *crowd]
    assert lone.stratum("pair") != crowd[0].stratum("pair")
    assert len({it.stratum("pair") for it in crowd}) == 1
    assert json.loads(lone.stratum("pair").split(":", 1)[1]) == ["a|b", "c"]

    # Random audits at rate ½ over 4 items, stratified by pair: 2 draws per stratum, so the lone
    # item is certain (π = 1) and each of the other three has π = 1/3. With the two pairs merged
    # into one stratum every item got ½.
    pi = inclusion_probabilities(items, "random", 0.5, stratify="pair")
    assert pi == pytest.approx([1.0, 1 / 3, 1 / 3, 1 / 3])


def test_system_strata_keep_the_whole_name():
    items = [_pair_item("q1", "x:y", "z"), _pair_item("q2", "x", "y:z"), _pair_item("q3", "x", "w")]
    assert [it.stratum("system") for it in items] == ["system:x:y", "system:x", "system:x"]
    # Two strata (x:y alone, x twice) at rate 2/3 over 3 items: one draw each.
    pi = inclusion_probabilities(items, "random", 2 / 3, stratify="system")
    assert pi == pytest.approx([1.0, 0.5, 0.5])
