"""Semantic-similarity baseline rater (paper §5.1) with the offline all-MiniLM-L6-v2 on real NarrativeQA answers."""

from __future__ import annotations

import random

import numpy as np
import pytest

from lsqa.judging import similarity as S
from tests.support.nqa_books import questions

pytestmark = pytest.mark.embedding_model  # the real all-MiniLM-L6-v2 (tests/conftest.py orders by it)


@pytest.fixture(scope="module")
def pairs(shared_data):
    """60 questions from 3 stories: answer2 with its own answer1 and with another question's answer1."""
    titles = {"The Tale of Tom Kitten", "Of Human Bondage", "The Adventure of the Dying Detective"}
    rows = [q for q in questions(shared_data) if q["wiki_title"] in titles]
    rng = random.Random(7)
    rows = rng.sample(rows, 60)
    own = [r["answer1"] for r in rows]
    other = [rows[(i + 1) % len(rows)]["answer1"] for i in range(len(rows))]
    return [r["answer2"] for r in rows], own, other, rows


@pytest.mark.slow
def test_same_question_pairs_score_higher(pairs):
    answers, own, other, _ = pairs
    same = S.similarity(answers, own)
    cross = S.similarity(answers, other)
    assert same.shape == cross.shape == (60,)
    assert np.all((-1 <= same) & (same <= 1.0 + 1e-6))
    assert same.mean() > cross.mean() + 0.3
    assert S.auc(same, cross) > 0.85
    # The documented threshold accepts most true pairs and rejects most cross pairs.
    assert (same >= S.DEFAULT_THRESHOLD).mean() > 0.7
    assert (cross < S.DEFAULT_THRESHOLD).mean() > 0.85


def test_rate_uses_the_best_of_two_references(pairs):
    answers, own, other, rows = pairs
    both = [[r["answer1"], r["answer2"]] for r in rows]
    assert S.rate(answers, both) == ["yes"] * 60  # answer2 is one of its own references
    mixed = S.similarity(answers, [[o, a] for o, a in zip(other, own, strict=False)])
    np.testing.assert_allclose(mixed, np.maximum(S.similarity(answers, other), S.similarity(answers, own)), atol=1e-5)
    assert S.rate(["Tom Kitten lost his clothes.", "", "Paris"], [["He lost his clothes"], ["x"], []]) == \
        ["yes", "no", "no"]
    assert S.rate(["a cat"], ["a cat"], threshold=1.01) == ["no"]
    with pytest.raises(ValueError):
        S.similarity(["a"], [])


def test_model_is_loaded_once():
    assert S.load_model() is S.load_model()
    assert S.embed([]).shape == (0, 384)
    v = S.embed(["same text", "same text", "other"])
    assert v.shape == (3, 384)
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1, atol=1e-5)
    np.testing.assert_array_equal(v[0], v[1])


def test_choose_threshold_and_auc_are_plain_numpy():
    pos = np.array([0.9, 0.8, 0.7, 0.35])
    neg = np.array([0.1, 0.2, 0.3, 0.6])
    threshold, balanced = S.choose_threshold(pos, neg)
    assert 0.3 < threshold <= 0.35 and balanced == pytest.approx(0.875)
    assert S.auc(pos, neg) == pytest.approx(15 / 16)
    assert S.auc(np.array([0.5]), np.array([0.5])) == 0.5
    threshold, balanced = S.choose_threshold(np.array([0.9, 0.8]), np.array([0.1, 0.2]))
    assert 0.2 < threshold < 0.8 and balanced == 1.0
    with pytest.raises(ValueError):
        S.choose_threshold(np.array([]), neg)
