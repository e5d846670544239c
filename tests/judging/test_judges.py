"""Judge tasks: order randomisation, label mapping back to systems, failures kept as data."""

import json

from lsqa.config.study import Context, JudgeSpec, SystemSpec
from lsqa.corpus.contexts import BookContexts
from lsqa.judging import kinds
from lsqa.judging import tasks as judges

QUESTION = {"id": "q1", "document_id": "d1", "origin": "narrativeqa", "text": "Who lost his clothes?",
            "reference_1": "Tom Kitten.", "reference_2": "Tom"}
DOC = {"id": "d1", "title": "The Tale of Tom Kitten", "kind": "book",
       "full_text": "Tom Kitten lost his clothes in the garden.", "clean_start": 0, "clean_end": 42, "n_tokens": 9}
SYSTEMS = [SystemSpec("sys-a", "lsqa/extractive", Context("none")), SystemSpec("sys-b", "lsqa/extractive", Context("full"))]
ANSWERS = {("q1", "sys-a"): "I don't know.", ("q1", "sys-b"): "Tom Kitten lost his clothes."}


def _tasks(**judge_kw):
    judge = JudgeSpec(name="j", model="lsqa/lexical-judge", kind="pairwise", **judge_kw)
    inputs = judges.TaskInputs([QUESTION], [QUESTION], ANSWERS, SYSTEMS, BookContexts({"d1": DOC}, {}), seed=0)
    return judges.pairwise_tasks(kinds.SIDE_BY_SIDE, judge, inputs)


def test_order_is_drawn_once_per_comparison_and_reproducible():
    first, again = _tasks(), _tasks()
    assert [t.key["shown_order"] for t in first] == [t.key["shown_order"] for t in again]
    orders = {judges.shown_orders(JudgeSpec("j", "m", "pairwise"), 0, f"q{i}", "a", "b")[0] for i in range(40)}
    assert orders == {"ab", "ba"}
    assert [t.key["shown_order"] for t in _tasks(both_orders=True)] == ["ab", "ba"]


def test_shown_answers_follow_the_order_and_labels_map_back_to_systems():
    ab, ba = _tasks(both_orders=True)
    text_ab, text_ba = ab.request.messages[0]["content"], ba.request.messages[0]["content"]
    assert text_ab.index("I don't know.") < text_ab.index("Tom Kitten lost his clothes.")
    assert text_ba.index("Tom Kitten lost his clothes.") < text_ba.index("I don't know.")
    said_a = "{ 'system is better': 'A is better', 'evidence': ['Tom Kitten lost his clothes'] }"
    assert ab.from_completion(said_a, True, "k")["label"] == "A"
    row = ba.from_completion(said_a, True, "k")
    assert row["label"] == "B" and row["raw_label"] == "A" and json.loads(row["evidence"])
    assert row["family"] == "pairwise" and row["kind"] == "pairwise"


def test_unparseable_and_failed_calls_are_kept_with_their_text():
    task = _tasks()[0]
    row = task.from_completion("I think both are fine, really.", True, "k")
    assert row["status"] == "parse_error" and row["label"] is None and "both are fine" in row["raw"]
    assert json.loads(row["extra"])["reason"]
    row = task.from_completion(None, False, "k", error="openai/x: rate limited (HTTP 429)")
    assert row["status"] == "error" and json.loads(row["extra"])["error"].startswith("openai/x")


def test_sample_is_shared_and_seeded():
    ids = [f"q{i}" for i in range(500)]
    assert judges.sample_questions(ids, 200, 0) == judges.sample_questions(list(reversed(ids)), 200, 0)
    assert judges.sample_questions(ids, 200, 0) != judges.sample_questions(ids, 200, 1)
    assert len(judges.sample_questions(ids, 200, 0)) == 200 and judges.sample_questions(ids[:5], 200, 0) == ids[:5]


def test_groundtruth_raters_never_compare_a_reference_with_itself():
    ref2 = SystemSpec("nqa-reference-2", "human:narrativeqa", Context("reference", reference="2"))
    judge = JudgeSpec(name="gt", model="lsqa/lexical-judge", kind="groundtruth", reference="both")
    answers = {("q1", "sys-b"): "Tom Kitten.", ("q1", "nqa-reference-2"): "Tom"}
    inputs = judges.TaskInputs([QUESTION], [QUESTION], answers, [SYSTEMS[1], ref2], BookContexts({}, {}), seed=0)
    tasks = judges.groundtruth_tasks(kinds.GROUNDTRUTH, judge, inputs)
    assert sorted((t.key["system_a"], t.key["reference"]) for t in tasks) == [
        ("nqa-reference-2", "1"), ("sys-b", "1"), ("sys-b", "2")]
