"""The embedded offline models: prompt reading, extractive QA, lexical judge, template questions,
SmolLM2 — on the project's real prompt files and real NarrativeQA data."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lsqa import llm
from lsqa.corpus.questions import questions_from_generation
from lsqa.llm import LLMRequest
from lsqa.llm import embedded as offline
from lsqa.llm.embedded import lexical_judge
from lsqa.llm.embedded.prompt_reading import AUTOAIS, QUESTIONS, REFERENCE_CHECK, SIDE_BY_SIDE, YES_NO, read_prompt
from lsqa.prompting import parsers
from lsqa.prompting import templates as prompts
from lsqa.text.units import sentence_spans

TOM_KITTEN = "2c5f448df18172babaac38806e1fb699a8baf65b"
HUMAN_BONDAGE = "0ebf71697ef16b7948f05a21dbf7abb34a818380"  # 1.46 MB
GOLDEN = Path(__file__).parents[1] / "data" / "malformed_llm_outputs.jsonl"

STORY = (
    "Jean Valjean stole a loaf of bread for his sister's children. He was sent to the galleys for nineteen years.\n\n"
    "Years later the bishop Myriel gave him shelter. Jean Valjean took the silver plates in the night. "
    "The gendarmes brought him back, but Myriel said the candlesticks were a gift as well.\n\n"
    "Javert, the inspector, hunted Valjean through Paris. Cosette grew up in the convent of the Petit-Picpus."
)


def render(prompt_id: str, **values) -> list[dict]:
    return prompts.messages(prompts.load_prompt(prompt_id), **values)


def run(model: str, messages: list[dict], **params) -> str:
    return offline.respond(model, messages, params)[0]


@pytest.fixture(scope="module")
def tom_kitten(shared_data):
    book = (shared_data / "narrativeqa" / "stories" / f"{TOM_KITTEN}.txt").read_text(encoding="utf-8")
    qas = [json.loads(line) for line in
           (shared_data / "narrativeqa" / "nqa_test_first3000_qaps.jsonl").read_text(encoding="utf-8").splitlines()]
    return book, [q for q in qas if q["document_id"] == TOM_KITTEN]


# -- reading prompts by their labels -----------------------------------------------------------


def test_every_prompt_file_is_read_by_its_labels():
    values = {"context": STORY, "context_text": STORY, "question": "Who stole the bread?", "answer": "Valjean",
              "system_answer_A": "Valjean did.", "system_answer_B": "Javert did.", "a1": "Valjean", "a2": "Jean Valjean",
              "title_and_author": "Les Misérables by Victor Hugo", "kind": "book", "title": "Les Misérables",
              "num_questions": "3", "entity": "Jean Valjean"}
    expected_output = {"text": "text", "autoais-json": AUTOAIS, "side-by-side-json": SIDE_BY_SIDE,
                       "side-by-side-equal-json": SIDE_BY_SIDE, "yes-no": YES_NO, "question-answer-pairs": QUESTIONS,
                       "reference-check-json": REFERENCE_CHECK}
    seen = set()
    for prompt in prompts.list_prompts():
        parts = read_prompt(prompts.messages(prompt, **{k: values[k] for k in prompt.placeholders}))
        assert parts.output == expected_output[prompt.output], prompt.ref
        seen.add(prompt.output)
        if "context" in prompt.placeholders or "context_text" in prompt.placeholders:
            assert parts.context.strip() == STORY, prompt.ref
        if prompt.output == "side-by-side-equal-json":
            assert parts.equal_allowed and (parts.answer_a, parts.answer_b) == ("Valjean did.", "Javert did."), prompt.ref
        if prompt.output == "side-by-side-json":
            assert not parts.equal_allowed, prompt.ref
        if prompt.output == "autoais-json":
            assert parts.answer == "Valjean" and parts.question == "Who stole the bread?", prompt.ref
            assert parts.prefill == "{'answer_is_entailed_by_context':", prompt.ref
        if prompt.output == "reference-check-json":  # the reference is the answer checked
            assert (parts.answer, parts.question, parts.prefill) == ("Valjean", "Who stole the bread?", ""), prompt.ref
        if prompt.output == "yes-no":
            assert (parts.answer_1, parts.answer_2) == ("Valjean", "Jean Valjean"), prompt.ref
        if prompt.output == "question-answer-pairs":
            assert parts.entity == "Jean Valjean" and parts.n_questions == 3, prompt.ref
        if prompt.id.startswith("nqa_answer"):
            assert parts.max_sentences == 1 and parts.answer is None, prompt.ref
        elif prompt.id.startswith("answer_"):
            assert parts.max_sentences == 5, prompt.ref
    gt = read_prompt(render("groundtruth_side_by_side", question="q?", answer="truth", system_answer_A="a", system_answer_B="b"))
    assert gt.ground_truth == "truth" and gt.context is None
    assert seen == set(expected_output)


def test_labels_inside_the_context_are_ignored_and_quoted_values_may_span_lines():
    text = (
        "# CONTEXT\nQuestion: a line of the book\nAnswer: not this\n# CONTEXT END\n"
        'Question: "Who hid the child?"\nAnswer A: "Valjean hid her.\nThen he fled."\nAnswer B: "Nobody"\n'
        "Rate with 'A is better', 'B is better' or 'None': {'system is better':"
    )
    parts = read_prompt([{"role": "user", "content": text}])
    assert parts.question == "Who hid the child?"
    assert parts.answer is None and parts.answer_a == "Valjean hid her.\nThen he fled." and parts.answer_b == "Nobody"
    assert parts.output == SIDE_BY_SIDE and not parts.equal_allowed


def test_sentence_splitting_keeps_abbreviations_and_literal_offsets():
    text = "Mr. Drake Puddle-Duck came. M. Myriel smiled!  \"Who?\" she asked.\n\nA new paragraph without a stop"
    spans = sentence_spans(text)
    assert [text[s:e] for s, e in spans] == ["Mr. Drake Puddle-Duck came.", "M. Myriel smiled!", "\"Who?\" she asked.",
                                             "A new paragraph without a stop"]


# -- lsqa/extractive ---------------------------------------------------------------------------


def test_extractive_answers_from_the_context_in_text_order(tom_kitten):
    book, _ = tom_kitten
    one = run("lsqa/extractive", render("nqa_answer_full_context", context=book,
                                        question="What does the mother cat do when she pulls them off the wall?"))
    assert one == "She pulled them off the wall, smacked them, and took them back to the house."
    five = run("lsqa/extractive", render("answer_full_context", context=STORY, question="What did Jean Valjean steal?"))
    sentences = [STORY[s:e] for s, e in sentence_spans(STORY)]
    picked = [s for s in sentences if s in five]
    assert 1 <= len(picked) <= 5 and "stole a loaf of bread" in five
    assert [sentences.index(s) for s in picked] == sorted(sentences.index(s) for s in picked)


def test_extractive_without_context_does_not_know():
    assert run("lsqa/extractive", render("nqa_answer_no_context", kind="book", title="Les Misérables",
                                         question="Who stole the bread?")) == "I don't know."
    assert run("lsqa/extractive", render("answer_retrieved_context", context=STORY,
                                         question="Zebras quantum?")) == "I don't know."


def test_tiny_contexts_still_match():
    # BM25's idf is zero or negative in a one- or two-sentence corpus; matching must not depend on it.
    one = "# CONTEXT\nThe cat sat on the mat.\n# CONTEXT END\nQuestion: Where did the cat sit?\nAnswer:"
    assert run("lsqa/extractive", [{"role": "user", "content": one}]) == "The cat sat on the mat."
    two = "Jean Valjean stole a loaf of bread. He was sent to the galleys."
    assert lexical_judge.support("Valjean stole bread.", two).value == 1.0
    assert lexical_judge.support("He went to the galleys.", two).evidence == ["He was sent to the galleys."]


def test_context_settings_really_differ(tom_kitten):
    book, qas = tom_kitten
    q = next(q for q in qas if q["q_index"] == 3)["question"]
    none = run("lsqa/extractive", render("nqa_answer_no_context", kind="book", title="The Tale of Tom Kitten", question=q))
    full = run("lsqa/extractive", render("nqa_answer_full_context", context=book, question=q))
    assert none == "I don't know." and "garden" in full


def test_extractive_answers_from_a_whole_long_book(shared_data):
    # Speed (first question < 2 s, the next one on the same book < 0.5 s) is bench/bench_offline.py's.
    book = (shared_data / "narrativeqa" / "stories" / f"{HUMAN_BONDAGE}.txt").read_text(encoding="utf-8")
    assert len(book) > 1_400_000
    answer = run("lsqa/extractive", render("nqa_answer_full_context", context=book,
                                           question="Where is Philip encouraged to move to?"))
    assert answer != "I don't know." and answer in " ".join(book.split())


# -- lsqa/lexical-judge ------------------------------------------------------------------------


def test_autoais_yes_with_literal_evidence_and_no_without_support():
    supported = run("lsqa/lexical-judge", render("autoais", context=STORY, question="What did Valjean steal?",
                                                  answer="He stole a loaf of bread."))
    obj = ast.literal_eval(supported)
    assert obj["answer_is_entailed_by_context"] == "yes"
    assert obj["evidence"] and all(e in STORY for e in obj["evidence"])  # literal excerpts
    parsed = parsers.parse("autoais-json", supported, prefill=prompts.load_prompt("autoais").prefill)
    assert parsed.ok and parsed.label == "yes" and parsed.evidence == obj["evidence"]

    for answer in ("He flew to the moon with a dragon.", "I don't know.", "The text does not say."):
        raw = run("lsqa/lexical-judge", render("nqa_autoais", context=STORY, question="What did Valjean steal?", answer=answer))
        assert parsers.parse("autoais-json", raw).label == "no", answer


def test_side_by_side_prefers_the_supported_answer_whatever_its_position():
    good, bad = "Valjean stole a loaf of bread for the children.", "Javert stole a golden crown from the king."
    ab = run("lsqa/lexical-judge", render("side_by_side", context=STORY, question="What was stolen?",
                                          system_answer_A=good, system_answer_B=bad))
    ba = run("lsqa/lexical-judge", render("side_by_side", context=STORY, question="What was stolen?",
                                          system_answer_A=bad, system_answer_B=good))
    assert parsers.parse("side-by-side-json", ab).label == "A"
    assert parsers.parse("side-by-side-json", ba).label == "B"
    neither = run("lsqa/lexical-judge", render("side_by_side", context=STORY, question="What was stolen?",
                                               system_answer_A=bad, system_answer_B="A spaceship landed."))
    assert parsers.parse("side-by-side-json", neither).label == "none"


def test_equal_only_when_the_prompt_offers_it():
    a, b = "He stole a loaf of bread.", "A loaf of bread, which he stole for the children."
    with_equal = run("lsqa/lexical-judge", render("nqa_side_by_side", context=STORY, question="What was stolen?",
                                                  system_answer_A=a, system_answer_B=b))
    without = run("lsqa/lexical-judge", render("side_by_side", context=STORY, question="What was stolen?",
                                               system_answer_A=a, system_answer_B=b))
    swapped = run("lsqa/lexical-judge", render("side_by_side", context=STORY, question="What was stolen?",
                                               system_answer_A=b, system_answer_B=a))
    assert parsers.parse("side-by-side-equal-json", with_equal).label == "tie"
    label, label_swapped = parsers.parse("side-by-side-json", without).label, parsers.parse("side-by-side-json", swapped).label
    assert {label, label_swapped} == {"A", "B"} and label != label_swapped  # position-consistent tie-break


def test_ground_truth_raters_use_token_f1():
    yes = run("lsqa/lexical-judge", render("groundtruth_yes_no", question="Who?", a1="Mrs. Tabitha Twitchit",
                                           a2="Tabitha Twitchit"))
    no = run("lsqa/lexical-judge", render("groundtruth_yes_no", question="Who?", a1="Mrs. Tabitha Twitchit",
                                          a2="Mr. Drake Puddle-Duck"))
    assert (yes, no) == ("yes", "no")
    assert parsers.parse("yes-no", yes).label == "yes"
    assert lexical_judge.token_f1("The garden.", "the garden") == 1.0
    assert lexical_judge.token_f1("in the garden", "garden") == pytest.approx(2 / 3)
    raw = run("lsqa/lexical-judge", render("groundtruth_side_by_side", question="Where?", answer="In a pond.",
                                           system_answer_A="They lost them in the road.", system_answer_B="In the pond."))
    assert parsers.parse("side-by-side-equal-json", raw, prefill=prompts.load_prompt("groundtruth_side_by_side").prefill).label == "B"


def test_lexical_judge_agrees_with_narrativeqa_references(tom_kitten):
    _, qas = tom_kitten
    labels = [run("lsqa/lexical-judge", render("groundtruth_yes_no", question=q["question"], a1=q["answer1"], a2=q["answer2"]))
              for q in qas]
    assert len(labels) >= 20 and set(labels) <= {"yes", "no"}
    assert labels.count("yes") >= len(labels) * 0.6  # the two references mostly agree


# -- lsqa/template-questions -------------------------------------------------------------------


def test_template_questions_paraphrase_the_entity_and_answer_from_the_text(tom_kitten):
    book, _ = tom_kitten
    raw = run("lsqa/template-questions", render("question_generation", context_text=book, num_questions="6", entity="Tom Kitten"))
    generated = questions_from_generation(raw, entity="Tom Kitten")
    assert len(generated) == 6 and not generated.dropped["no_answer"]
    assert not any(q.names_entity for q in generated)
    assert all("Tom" not in q.question for q in generated)
    flat = " ".join(book.split())
    assert all(q.answer in flat for q in generated)
    assert len({q.answer for q in generated}) >= 4  # spread over the story


def test_template_questions_for_an_entity_the_text_never_mentions():
    raw = run("lsqa/template-questions", render("question_generation", context_text=STORY, num_questions="2", entity="Gavroche"))
    generated = questions_from_generation(raw, entity="Gavroche")
    assert len(generated) == 2 and not any(q.names_entity for q in generated)


def test_wrong_prompt_for_a_model_is_a_bad_request_not_a_retry(workspace):
    result = llm.complete(workspace, LLMRequest("lsqa/lexical-judge", render("answer_no_context", title_and_author="X",
                                                                             question="Why?")))
    assert result.status == "error" and result.error_kind == "bad_request" and result.attempts == 1
    missing = llm.complete(workspace, LLMRequest("lsqa/nonexistent", [{"role": "user", "content": "x"}]))
    assert missing.error_kind == "not_found" and "lsqa/extractive" in missing.error_message


# -- through litellm, like any model -----------------------------------------------------------


def test_embedded_models_run_through_litellm_with_cache_tokens_and_zero_cost(workspace, tom_kitten):
    book, qas = tom_kitten
    q = qas[3]
    requests = [
        LLMRequest("lsqa/extractive", render("nqa_answer_full_context", context=book, question=q["question"]), {"temperature": 0}),
        LLMRequest("lsqa/lexical-judge", render("nqa_autoais", context=book, question=q["question"], answer=q["answer1"])),
        LLMRequest("lsqa/template-questions", render("question_generation", context_text=book, num_questions="2", entity="Moppet")),
    ]
    results = llm.complete_many(workspace, requests)
    assert [r.status for r in results] == ["ok"] * 3
    assert results[0].text == run("lsqa/extractive", requests[0].messages)
    assert all(r.cost_usd == 0.0 and r.prompt_tokens > 1000 and r.completion_tokens > 0 for r in results)
    t = results.totals()
    assert t.cost_usd == 0.0 and t.calls_made == 3
    again = llm.complete_many(workspace, requests)
    assert all(r.cached for r in again) and [r.text for r in again] == [r.text for r in results]


# -- local/smollm2-135m (real model; slow: ~20 s to load) --------------------------------------


@pytest.mark.slow
def test_smollm2_judges_end_to_end_and_its_output_is_parsed_without_crashing(workspace, tom_kitten):
    book, qas = tom_kitten
    q = qas[4]
    prompt = prompts.load_prompt("nqa_autoais")
    context = "Tom Kitten was very fat, and he had grown; several buttons burst off. His mother sewed them on again."
    request = LLMRequest("local/smollm2-135m", prompts.messages(prompt, context=context, question=q["question"],
                                                                answer=q["answer1"]), {"max_tokens": 24},
                         prompt.id, str(prompt.version))
    result = llm.complete(workspace, request)
    assert result.ok and result.text and result.cost_usd == 0.0
    assert result.prompt_tokens > 50 and 0 < result.completion_tokens <= 24
    parsed = parsers.parse(prompt.output, result.text, prefill=prompt.prefill)
    assert parsed.status in (parsers.OK, parsers.PARSE_ERROR) and parsed.raw == result.text
    assert parsed.ok == (parsed.label in ("yes", "no"))
    assert llm.complete(workspace, request).cached

    # Prompts longer than the input budget keep their end (the question and the answer).
    from lsqa.llm.embedded import smollm

    _, tokenizer = smollm.load()
    assert smollm.files_parsed == 1  # the tokenizer, the config and the weights from one parse of the file
    assert smollm.name_maps_made == 1  # one tensor-name map for all the model's modules
    long = prompts.messages(prompt, context=book, question=q["question"], answer=q["answer1"])
    cut, dropped = smollm._truncate(long, tokenizer, 256)
    assert dropped > 1000 and len(tokenizer.apply_chat_template(cut, add_generation_prompt=True)) <= 256
    assert cut[0]["content"].endswith(long[0]["content"][-200:])


def test_golden_corpus_of_real_smollm2_outputs():
    rows = [json.loads(line) for line in GOLDEN.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert len(rows) >= 10
    assert {r["prompt_id"] for r in rows} == {"nqa_autoais", "nqa_side_by_side"}
    valid = {"autoais-json": {"yes", "no"}, "side-by-side-equal-json": {"A", "B", "tie", "none"}}
    for row in rows:
        assert row["model"] == "local/smollm2-135m" and isinstance(row["raw"], str) and row["raw"]
        assert row["output"] == prompts.load_prompt(row["prompt_id"]).output
        result = parsers.parse(row["output"], row["raw"], prefill=row["prefill"])
        assert result.raw == row["raw"]
        if result.status == parsers.OK:
            assert result.label in valid[row["output"]] and not result.reason, row
        else:  # never a made-up label: a parse error with a reason
            assert result.status == parsers.PARSE_ERROR and result.label is None and result.reason, row
        if "'A is better|B is better|None|Equal'" in row["raw"]:
            # SmolLM2 echoing the Fig. 20 template picks no side: never read as a verdict.
            assert result.status == parsers.PARSE_ERROR, row


@settings(max_examples=150, deadline=None, database=None)  # no .hypothesis/ example store in the repo
@given(st.lists(st.sampled_from(["# CONTEXT", "# CONTEXT END", 'Question: "', "Answer:", "Answer A: x", "Answer B:",
                                 "Entity: ", "Number of questions: ten", "Ground truth answer: ''", "Answer 1:",
                                 "Answer 2: y", "Respond with only yes or no", "'system is better'", "Equal",
                                 "answer_is_entailed_by_context", "at most one sentence", "{'x':", "", " "])
                | st.text(max_size=40), max_size=25).map("\n".join))
def test_embedded_models_never_crash_on_odd_prompts(text):
    for model in ("lsqa/extractive", "lsqa/lexical-judge", "lsqa/template-questions"):
        try:
            out, prompt_tokens, completion_tokens = offline.respond(model, [{"role": "user", "content": text}])
        except offline.PromptNotUnderstood:
            continue
        # The embedded models count four characters per token, rounded up (lsqa.llm.embedded).
        assert isinstance(out, str)
        assert (prompt_tokens, completion_tokens) == ((len(text) + 3) // 4, (len(out) + 3) // 4)
