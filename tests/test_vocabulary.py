"""lsqa.vocabulary: the one place judge kinds, labels, winners and item keys are defined, and the
workspace's views agree with it."""

from __future__ import annotations

import pytest

from lsqa import store, vocabulary
from lsqa.judging.ids import judgment_id
from lsqa.store import results as results_store


@pytest.mark.parametrize("kind, written, label", [
    ("pairwise", " A is better ", "A"), ("pairwise", "'Equal'", "tie"), ("groundtruth-pairwise", "neither", "none"),
    ("pairwise", "2", "B"), ("absolute", "Y", "yes"), ("groundtruth", "incorrect", "no"),
    ("similarity", "true", "yes"), ("similarity", "0.83", "0.83"),
])
def test_labels_as_written_become_the_canonical_ones(kind, written, label):
    assert vocabulary.normalise_label(written, kind) == label


def test_unknown_labels_and_kinds_name_what_is_allowed():
    with pytest.raises(ValueError, match="expected one of A, B, tie, none"):
        vocabulary.normalise_label("maybe", "pairwise")
    with pytest.raises(ValueError, match="expected one of yes, no"):
        vocabulary.normalise_label("A", "absolute")
    with pytest.raises(ValueError, match="unknown verdict kind"):
        vocabulary.normalise_label("yes", "rubric")
    with pytest.raises(ValueError, match="expected one of A, B, tie, none"):
        vocabulary.normalize_winner("C")
    assert [vocabulary.normalize_winner(w) for w in ("a", " B ", "TIE", "None")] == ["A", "B", "tie", "none"]


def test_swap_and_families():
    assert [vocabulary.swap_pairwise(x) for x in ("A", "B", "tie", "none", None)] == ["B", "A", "tie", "none", None]
    assert set(vocabulary.PAIRWISE_KINDS) | set(vocabulary.BINARY_KINDS) == set(vocabulary.JUDGE_KINDS)
    assert not set(vocabulary.PAIRWISE_KINDS) & set(vocabulary.BINARY_KINDS)
    assert vocabulary.family("groundtruth-pairwise") == vocabulary.PAIRWISE
    assert vocabulary.family("similarity") == vocabulary.BINARY


def test_item_keys_keep_names_with_any_character_apart():
    one = vocabulary.item_key({"kind": "absolute", "question_id": "q", "system_a": "x|y", "system_b": ""})
    pair = vocabulary.item_key({"kind": "pairwise", "question_id": "q", "system_a": "x", "system_b": "y"})
    assert one == ("q", "x|y") and pair == ("q", "x", "y") and one != pair


def test_the_verdict_items_view_uses_the_same_families(workspace):
    """The view's SQL lists the pairwise kinds itself (a migration cannot import Python): it must
    agree with vocabulary.PAIRWISE_KINDS for every kind."""
    rows = [{"id": judgment_id("j", kind, "q", "x|y", "z" if kind in vocabulary.PAIRWISE_KINDS else ""),
             "judge": "j", "kind": kind, "question_id": "q", "system_a": "x|y",
             "system_b": "z" if kind in vocabulary.PAIRWISE_KINDS else "", "shown_order": "ab", "reference": "",
             "label": "A", "status": "ok"}
            for kind in vocabulary.JUDGE_KINDS]
    with store.write(workspace) as con:
        results_store.insert_judgments(con, rows)
        seen = dict(con.execute("SELECT kind, family FROM verdict_items").fetchall())
        items = dict(con.execute("SELECT kind, item FROM verdict_items").fetchall())
    assert seen == {kind: vocabulary.family(kind) for kind in vocabulary.JUDGE_KINDS}
    assert items["absolute"] == ["q", "x|y"] and items["pairwise"] == ["q", "x|y", "z"]
