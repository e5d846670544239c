"""lsqa.vocabulary: the one place judge kinds, labels, winners and item keys are defined, and the
workspace's views agree with it."""

from __future__ import annotations

import pytest

from lsqa import store, vocabulary
from lsqa.judging import kinds
from lsqa.store import results as results_store
from lsqa.store.verdict_ids import judgment_id


@pytest.mark.parametrize("kind, written, label", [
    ("pairwise", " A is better ", "A"), ("pairwise", "'Equal'", "tie"), ("groundtruth-pairwise", "neither", "none"),
    ("pairwise", "2", "B"), ("absolute", "Y", "yes"), ("groundtruth", "incorrect", "no"),
    ("similarity", "true", "yes"), ("similarity", "0.83", "0.83"),
])
def test_labels_as_written_become_the_canonical_ones(kind, written, label):
    assert kinds.get(kind).normalise_label(written) == label


def test_unknown_labels_and_kinds_name_what_is_allowed():
    with pytest.raises(ValueError, match="expected one of A, B, tie, none"):
        kinds.get("pairwise").normalise_label("maybe")
    with pytest.raises(ValueError, match="expected one of yes, no"):
        kinds.get("absolute").normalise_label("A")
    with pytest.raises(ValueError, match="unknown judge kind 'rubric'"):
        kinds.get("rubric").normalise_label("yes")
    with pytest.raises(ValueError, match="expected one of A, B, tie, none"):
        vocabulary.normalize_winner("C")
    assert [vocabulary.normalize_winner(w) for w in ("a", " B ", "TIE", "None")] == ["A", "B", "tie", "none"]


def test_swap_and_families():
    assert [vocabulary.swap_pairwise(x) for x in ("A", "B", "tie", "none", None)] == ["B", "A", "tie", "none", None]
    assert vocabulary.judge_kind_names() == vocabulary.BUILTIN_JUDGE_KINDS
    assert vocabulary.family("groundtruth-pairwise") == vocabulary.PAIRWISE
    assert vocabulary.family("similarity") == vocabulary.BINARY
    with pytest.raises(ValueError, match="unknown judge kind"):
        vocabulary.family("rubric")  # never a default family


def test_item_keys_keep_names_with_any_character_apart():
    one = vocabulary.item_key({"family": "binary", "question_id": "q", "system_a": "x|y", "system_b": ""})
    pair = vocabulary.item_key({"family": "pairwise", "question_id": "q", "system_a": "x", "system_b": "y"})
    assert one == ("q", "x|y") and pair == ("q", "x", "y") and one != pair


def test_the_verdict_items_view_uses_the_stored_families(workspace):
    """The view reads each verdict's stored family (migration 0012), written from its kind's record:
    for every kind it agrees with the record."""
    from lsqa.judging import kinds

    rows = [{"id": judgment_id("j", k.name, "q", "x|y", "z" if k.pairwise else ""), "family": k.family,
             "judge": "j", "kind": k.name, "question_id": "q", "system_a": "x|y",
             "system_b": "z" if k.pairwise else "", "shown_order": "ab", "reference": "",
             "label": "A", "status": "ok"}
            for k in kinds.all_kinds()]
    with store.write(workspace) as con:
        results_store.insert_judgments(con, rows)
        seen = dict(con.execute("SELECT kind, family FROM verdict_items").fetchall())
        items = dict(con.execute("SELECT kind, item FROM verdict_items").fetchall())
    assert seen == {k.name: vocabulary.family(k.name) for k in kinds.all_kinds()}
    assert items["absolute"] == ["q", "x|y"] and items["pairwise"] == ["q", "x|y", "z"]


def test_a_verdict_without_a_family_is_refused(workspace):
    row = {"id": "x", "judge": "j", "kind": "absolute", "question_id": "q", "system_a": "s", "label": "yes",
           "status": "ok"}
    with store.write(workspace) as con, pytest.raises(ValueError, match="family None"):
        results_store.insert_judgments(con, [row])
