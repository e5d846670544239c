"""lsqa.prompting.parsers on a corpus of malformed judge outputs modelled on real LLM behaviour (prose and
markdown around the object, the continuation after the paper's prefill, single quotes,
apostrophes, truncation, trailing commas, template echoes), plus fuzzing: a parser never raises
and never invents a label."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lsqa.prompting import parsers
from lsqa.prompting.parsers import (
    OUTPUT_FORMATS,
    UnknownOutputFormat,
    parse,
    parse_autoais,
    parse_qa_pairs,
    parse_side_by_side,
    parse_yes_no,
    split_qa_pairs,
)
from lsqa.prompting.templates import load_prompt
from tests.conftest import TEST_DATA

AIS = "{'answer_is_entailed_by_context':"  # the prefill of Figs. 12 and 19
SBS = "{ 'system is better':"  # the prefill of Figs. 18 and 20
ERR = None  # expected: parse_error

# (raw, prefill, expected label, expected evidence or None to skip the check)
AUTOAIS_CASES = [
    (" 'yes', 'evidence': ['The Bishop gave Jean Valjean the silver candlesticks.'] }", AIS, "yes",
     ["The Bishop gave Jean Valjean the silver candlesticks."]),
    (' "no", "evidence": ["Fantine sold her hair and her two front teeth."]}', AIS, "no",
     ["Fantine sold her hair and her two front teeth."]),
    # the model restates the whole object after the prefill
    ("{'answer_is_entailed_by_context': 'yes', 'evidence': ['Javert let go.']}", AIS, "yes", ["Javert let go."]),
    # prose and a fenced JSON block, double quotes, a closing remark
    ('Here is my evaluation:\n\n```json\n{\n  "answer_is_entailed_by_context": "no",\n  "evidence": [\n'
     '    "Thénardier, not Javert, robbed the corpses at Waterloo."\n  ]\n}\n```\n'
     "The answer confuses the two men.", AIS, "no", ["Thénardier, not Javert, robbed the corpses at Waterloo."]),
    # truncated: no closing quote, bracket or brace
    (" 'yes', 'evidence': ['Cosette was boarded with the Thénardiers at Montfermeil", AIS, "yes",
     ["Cosette was boarded with the Thénardiers at Montfermeil"]),
    # apostrophes inside single-quoted strings
    (" 'no', 'evidence': ['Fantine's daughter was left with the innkeeper's family.', \"the child's name\"] }",
     AIS, "no", ["Fantine's daughter was left with the innkeeper's family.", "the child's name"]),
    (" 'yes', 'evidence': ['He said 'no', then left the room.'] }", AIS, "yes", ["He said 'no', then left the room."]),
    (" 'no', 'evidence': ['Tom\\'s mother'] }", AIS, "no", ["Tom's mother"]),
    # trailing commas
    (" 'yes', 'evidence': ['first passage', 'second passage',], }", AIS, "yes", ["first passage", "second passage"]),
    # evidence as a string instead of a list
    (" 'yes', 'evidence': 'Sire, you are looking at a good man, and I at a great man.' }", AIS, "yes",
     ["Sire, you are looking at a good man, and I at a great man."]),
    ("Yes.", AIS, "yes", []),
    ("YES", "", "yes", []),
    (' "Yes" }', AIS, "yes", []),
    (" True, 'evidence': [] }", AIS, "yes", []),
    (" 'yes'.\n\nExplanation: the context states that Marius was carried through the sewers.", AIS, "yes", None),
    ("No, the answer is not supported. The context says Javert threw himself into the Seine.", AIS, "no", None),
    # markdown-escaped underscores and bold keys, evidence as prose
    ("**answer\\_is\\_entailed\\_by\\_context**: No\n**evidence**: The text never mentions a second letter.", "",
     "no", ["The text never mentions a second letter."]),
    ('{"Answer_Is_Entailed_By_Context": "NO", "evidence": []}', "", "no", []),
    # the template copied first, then the real object
    ("{'answer_is_entailed_by_context': 'yes or no', 'evidence': ['extracted passage(s)', ...]}\n"
     "{'answer_is_entailed_by_context': 'no', 'evidence': ['It was Javert.']}", AIS, "no", ["It was Javert."]),
    # cannot decide
    ("{'answer_is_entailed_by_context': 'yes'}\n{'answer_is_entailed_by_context': 'no'}", AIS, ERR, None),
    (" 'yes or no', 'evidence': [ 'extracted passage(s)', ... ] }", AIS, ERR, None),
    (" 'maybe', 'evidence': ['no']}", AIS, ERR, None),
    ("I'm sorry, but I can't assist with that request.", AIS, ERR, None),
    ("", AIS, ERR, None),
    ("   \n", AIS, ERR, None),
    ("The answer is partially supported by the context.", "", ERR, None),
]


@pytest.mark.parametrize("raw, prefill, label, evidence", AUTOAIS_CASES)
def test_autoais_corpus(raw, prefill, label, evidence):
    result = parse("autoais-json", raw, prefill=prefill)
    assert result.raw == raw
    if label is ERR:
        assert (result.status, result.label) == ("parse_error", None)
        assert result.reason
    else:
        assert (result.status, result.label, result.reason) == ("ok", label, "")
        if evidence is not None:
            assert result.evidence == evidence


SIDE_CASES = [
    (" 'A is better', 'evidence': ['A names the bishop, as the context does.'] }", SBS, "A"),
    ("{'system is better': 'B is better', 'evidence': [\"B correctly says the bishop's candlesticks were silver.\"]}", "", "B"),
    ("A", "", "A"),
    ("B.", "", "B"),
    ("None", "", "none"),
    ("Answer A is better because it identifies Javert as the inspector.", "", "A"),
    ("**System B**", "", "B"),
    ("System A", "", "A"),
    ('{"system is better": "A"}', "", "A"),
    ("{'system is better': 'Answer B is better', 'evidence': []}", "", "B"),
    ("{'system is better': 'None', 'evidence': ['Both answers claim Fantine was married.']}", "", "none"),
    ("Sure! Here's my rating:\n```\n{ 'system is better': 'B is better', 'evidence': ['B quotes the letter.'] }\n```", "", "B"),
    ("The better answer is B.", "", "B"),
    (" None, 'evidence': [] }", SBS, "none"),
    (" 'Neither', 'evidence': [] }", SBS, "none"),
    ("A is better than B, because B invents a duel.", "", "A"),
    # cannot decide
    ("{'system is better': 'Equal', 'evidence': []}", "", ERR),  # Equal is not allowed by Fig. 13
    ("{ 'system is better': 'A is better|B is better|None', 'evidence': [ 'explanations...' ] }", "", ERR),
    ("Both answers mention the convent. A is better in detail, but B is better in clarity.", "", ERR),
    ("A better answer would have named the bishop.", "", ERR),
    ("Answer A: 'He was a convict.'\nAnswer B: 'He was a mayor.'\nBoth seem plausible.", "", ERR),
    (" 'It depends on the reader', 'evidence': ['A is better at detail'] }", SBS, ERR),
    ("", "", ERR),
]


@pytest.mark.parametrize("raw, prefill, label", SIDE_CASES)
def test_side_by_side_corpus(raw, prefill, label):
    result = parse("side-by-side-json", raw, prefill=prefill)
    if label is ERR:
        assert (result.status, result.label) == ("parse_error", None) and result.reason
    else:
        assert (result.status, result.label) == ("ok", label), result.reason


EQUAL_CASES = [
    (" 'Equal', 'evidence': ['Both say it was Javert.'] }", SBS, "tie"),
    (" 'B is better', 'evidence': ['The ground truth says \"Javert\"; A says \"Thénardier\".'] }", SBS, "B"),
    (" 'None', 'evidence': ['Neither matches the ground truth.'] }", SBS, "none"),
    ("Both are correct", SBS, "tie"),
    ("Tie", "", "tie"),
    ("{'system is better': 'equal'}", "", "tie"),
    (" 'A is better|B is better|None|Equal', 'evidence': [] }", SBS, ERR),
]


@pytest.mark.parametrize("raw, prefill, label", EQUAL_CASES)
def test_side_by_side_with_equal_corpus(raw, prefill, label):
    result = parse("side-by-side-equal-json", raw, prefill=prefill)
    assert result.label == label, result.reason
    assert result.status == ("parse_error" if label is ERR else "ok")


def test_equal_refusal_says_why():
    result = parse_side_by_side("{'system is better': 'Equal'}", allow_equal=False)
    assert result.status == "parse_error" and "does not allow" in result.reason


def test_side_by_side_evidence_is_kept():
    result = parse_side_by_side(" 'A is better', 'evidence': ['one', 'two'] }", True, prefill=SBS)
    assert result.evidence == ["one", "two"]


YES_NO_CASES = [
    ("yes", "yes"), ("Yes.", "yes"), ("YES", "yes"), ("No", "no"), ("no.", "no"), ('"Yes"', "yes"),
    ("**No**", "no"), ("Answer: Yes", "yes"), ("Yes, Answer 2 is correct.", "yes"),
    ("No. Answer 2 names the wrong character.", "no"), ("Yes\n", "yes"), ("Answer 2 is correct.", "yes"),
    ("Incorrect.", "no"), ("Is Answer 2 correct? No", "no"), ("The proposed answer matches: yes", "yes"),
    ("yes or no", ERR), ("I don't know.", ERR), ("", ERR), ("Yes. No.", ERR), ("Yes\n\nAnswer: no", ERR),
    ("There is no way to tell from the answers given.", ERR),
    ("Yes. The proposed answer no doubt matches the truth.", "yes"),
]


@pytest.mark.parametrize("raw, label", YES_NO_CASES)
def test_yes_no_corpus(raw, label):
    result = parse_yes_no(raw)
    assert result.label == label, result.reason
    assert result.status == ("parse_error" if label is ERR else "ok")
    assert bool(result.reason) == (label is ERR)


def test_prefill_comes_from_the_prompt_file():
    prompt = load_prompt("autoais")
    assert parse(prompt.output, " 'no', 'evidence': [] }", prefill=prompt.prefill).label == "no"
    prompt = load_prompt("nqa_side_by_side")
    assert parse(prompt.output, " 'Equal', 'evidence': [] }", prefill=prompt.prefill).label == "tie"


def test_specific_parsers_agree_with_parse():
    raw = " 'yes', 'evidence': ['x'] }"
    assert parse_autoais(raw, prefill=AIS) == parse("autoais-json", raw, prefill=AIS)


def test_text_answers():
    assert parse("text", "Answer: Javert.\n").text == "Javert."
    assert parse("text", "  It was the bishop of Digne.  ").text == "It was the bishop of Digne."
    empty = parse("text", "   ")
    assert empty.status == "parse_error" and empty.reason == "empty answer"


def test_unknown_format_is_a_configuration_error():
    with pytest.raises(UnknownOutputFormat, match="known formats"):
        parse("json", "{}")


# Real completions of SmolLM2-135M-Instruct (greedy, the v1 prompts on the §2 Myriel passage),
# recorded while writing these parsers: a weak model echoes the template or answers in prose.
SMOLLM2_OUTPUTS = [
    ('autoais', "The answer is not correct with 'yes' meaning the text itself directly supports the answer. The context is not a valid evidence to support the answer. The passage of the text that supports the answer is not a valid evidence to support the answer. The evidence is not a valid evidence to support the answer.\n\nThe answer is not correct with 'yes' meaning the text itself directly supports the answer. The context is not a valid evidence to support", 'no'),
    ('autoais', 'The context, taken from a book, supports the answer to the question "Who is the good man?" by providing evidence of Napoleon\'s greatness.', None),
    ('side_by_side', '```json\n{\n  "system is better": "A is better|B is better|None",\n  "evidence": [\n    {\n      "system is better": "A is better|B is better|None",\n      "explanation and evidence for the rating, with excerpts from the context",\n      "explanation and evidence for the rating, with excerpts from the context",\n      "explanation and evidence for the rating, with excerpts from', None),
    ('nqa_side_by_side', "{'system is better': 'A is better|B is better|None|Equal', 'evidence': [ 'explanation and evidence for the rating',... ] }\n\nYour answer:\n{'system is better': 'A is better|B is better|None|Equal', 'evidence': [ 'explanation and evidence for the rating',... ] }", None),
    ('groundtruth_side_by_side', "{'system is better': 'A is better|B is better|None|Equal', 'evidence': [ 'explanation and evidence for the rating',... ] }\n\nThe evaluation results are:\n* System A is better: 1.0\n* System B is better: 1.5\n* None: 0.0\n* Equal: 1.0\n\nThe evaluation results are:\n* System", None),
    ('groundtruth_yes_no', 'The answer to this question is indeed Answer 2.', None),
    ('question_generation', 'The text is a classic example of a narrative that explores themes of redemption and the power of forgiveness. The story is told from the perspective of a central character, who is shown to be willing to sacrifice himself for the greater good of redemption. The narrative is built around the idea of forgiveness and the power of forgiveness.\n\nThe story is told from the perspective of a central character, who is shown to be willing to sacrifice himself for the greater good', None),
]


@pytest.mark.parametrize("prompt_id, raw, label", SMOLLM2_OUTPUTS)
def test_recorded_small_model_outputs(prompt_id, raw, label):
    prompt = load_prompt(prompt_id)
    result = parse(prompt.output, raw, prefill=prompt.prefill)
    assert result.label == label, result.reason
    assert result.status == ("ok" if label else "parse_error") and (label or result.reason)


# --- question / answer pairs (Fig. 8) ------------------------------------------------------------

GENERATED = """Here are 4 thought-provoking questions:

1. Question: How does the "man of God" who welcomes a former convict into his home alter that guest's idea of mercy?
Answer: The Bishop of Digne treats Jean Valjean with trust, and his gift of the silver turns Valjean toward an honest life.

2. **Question:** In what way does the gift of the silver become a lasting symbol for the protagonist?
**Answer:** The candlesticks stay with Valjean for the rest of his life,
reminding him of the promise he made to become an honest man.

**Question 3:** How does the prelate's humble household contrast with the palace he gives up?
**Answer 3:** He gives the episcopal palace to the hospital and lives in the small hospital building.

Q: What does the bishop's sister think of his generosity?
A:

Question: What does the bishop's sister think of his generosity?
A: She admires him and follows his choices without complaint.

I hope these questions help!
"""


def test_qa_pairs_from_a_realistic_generation():
    pairs, skipped = split_qa_pairs(GENERATED)
    assert [q for q, _ in pairs] == [
        'How does the "man of God" who welcomes a former convict into his home alter that guest\'s idea of mercy?',
        "In what way does the gift of the silver become a lasting symbol for the protagonist?",
        "How does the prelate's humble household contrast with the palace he gives up?",
        "What does the bishop's sister think of his generosity?",
    ]
    assert pairs[1][1] == (
        "The candlesticks stay with Valjean for the rest of his life, reminding him of the promise he made to "
        "become an honest man."
    )
    assert pairs[3][1] == "She admires him and follows his choices without complaint."  # chatter not appended
    assert skipped == 1  # the question whose answer is empty
    assert parse_qa_pairs(GENERATED) == pairs
    result = parse("question-answer-pairs", GENERATED)
    assert (result.status, result.pairs, result.skipped) == ("ok", pairs, 1)


@pytest.mark.parametrize(
    "raw, expected",
    [
        ("Question: Who raised the child?Answer: The innkeepers.", [("Who raised the child?", "The innkeepers.")]),
        ("Question: Who raised the child? Answer: The innkeepers.", [("Who raised the child?", "The innkeepers.")]),
        ("Q1: Who? \nA1: Him.", [("Who?", "Him.")]),
        ("### Question 1\n**How does the inspector's code break?**\n\nAnswer: On the barricade.",
         [("How does the inspector's code break?", "On the barricade.")]),
        ('Question:\n"Who pays the debt?"\nAnswer:\nThe mayor, in secret.', [("Who pays the debt?", "The mayor, in secret.")]),
        ("- • How does the fallen woman shape the redeemed soul?\n- • How does the stolen loaf matter?", []),
        ("Answer: an answer with no question", []),
    ],
)
def test_qa_pair_variants(raw, expected):
    assert parse_qa_pairs(raw) == expected


def test_no_pairs_is_a_parse_error():
    result = parse("question-answer-pairs", "I cannot write questions about this text.")
    assert result.status == "parse_error" and result.reason and result.pairs == []


# --- fuzzing: never an exception, never a label outside the format's set -------------------------

LABELS = {
    "autoais-json": {"yes", "no"},
    "yes-no": {"yes", "no"},
    "side-by-side-json": {"A", "B", "none"},
    "side-by-side-equal-json": {"A", "B", "none", "tie"},
}
TOKENS = list("{}[]'\",:\\ \n_-.|*`") + [
    "yes", "no", "A", "B", "None", "Equal", "evidence", "system is better",
    "answer_is_entailed_by_context", "Question:", "Answer:", "is better", "x",
]
JSONISH = st.lists(st.sampled_from(TOKENS), max_size=30).map("".join)


def _check(result, fmt):
    assert result.status in ("ok", "parse_error")
    if result.status == "ok":
        assert result.label in LABELS.get(fmt, {None}) and not result.reason
    else:
        assert result.label is None and result.reason


@pytest.mark.slow
@settings(max_examples=150, deadline=None, database=None)  # no .hypothesis/ folder in the repo
@given(raw=st.one_of(st.text(max_size=80), JSONISH), prefill=st.sampled_from(["", AIS, SBS]))
def test_parsers_never_raise(raw, prefill):
    # call the specific parsers directly: parse() would hide a bug behind its safety net
    _check(parse_autoais(raw, prefill=prefill), "autoais-json")
    _check(parse_side_by_side(raw, False, prefill=prefill), "side-by-side-json")
    _check(parse_side_by_side(raw, True, prefill=prefill), "side-by-side-equal-json")
    _check(parse_yes_no(raw), "yes-no")
    pairs, skipped = split_qa_pairs(raw)
    # Every pair and every skipped item is read from a line of its own (its question's, or its
    # answer's when the question is missing or unlabelled): never more than there are lines.
    assert all(q and a for q, a in pairs) and len(pairs) + skipped <= raw.count("\n") + 1


# A Fig. 8 completion built from known items, so that what split_qa_pairs must return is known:
# each item a question with its answer, a question whose answer is empty, or an answer with no
# question; written in the label styles models use (numbered, bold, Q/A, one line).
_WORDS = st.lists(st.sampled_from(["the", "bishop", "gave", "silver", "why", "Valjean", "candlesticks", "mercy"]),
                  min_size=1, max_size=6).map(" ".join)
_STYLES = {
    "plain": "Question: {q}\nAnswer: {a}",
    "numbered": "{n}. Question: {q}\nAnswer: {a}",
    "bold": "**Question {n}:** {q}\n**Answer {n}:** {a}",
    "short": "Q: {q}\nA: {a}",
    "inline": "Question: {q} Answer: {a}",
}


@settings(max_examples=150, deadline=None, database=None)
@given(items=st.lists(st.tuples(st.sampled_from(["pair", "no answer", "no question"]), st.sampled_from(sorted(_STYLES)),
                                _WORDS, _WORDS), max_size=8))
def test_split_qa_pairs_counts_what_it_drops(items):
    blocks, expected = [], []
    for n, (what, style, question, answer) in enumerate(items, 1):
        question += "?"
        if what == "pair":
            blocks.append(_STYLES[style].format(n=n, q=question, a=answer))
            expected.append((question, answer))
        elif what == "no answer":
            blocks.append(_STYLES[style].format(n=n, q=question, a="").rstrip())
        else:
            blocks.append("Answer: " + answer)
    pairs, skipped = split_qa_pairs("\n\n".join(blocks))
    assert pairs == expected
    assert skipped == len(items) - len(expected)


def test_parse_reports_an_internal_error_instead_of_raising(monkeypatch):
    def broken(raw, *, prefill=""):
        raise RuntimeError("boom")

    monkeypatch.setattr(parsers, "parse_autoais", broken)
    result = parse("autoais-json", "yes")
    assert result.status == "parse_error" and "boom" in result.reason and result.raw == "yes"


# --- real outputs of a small local LLM, when collected ------------------------------------------

REAL_OUTPUTS = TEST_DATA / "malformed_llm_outputs.jsonl"


def test_real_small_llm_outputs_parse_without_exceptions():
    """Every collected real completion (fields model, prompt_id, raw) parses to a valid label or
    to a parse_error with a reason."""
    # The corpus is committed (tests/data/make_malformed_llm_outputs.py regenerates it): missing is a failure.
    assert REAL_OUTPUTS.is_file(), f"{REAL_OUTPUTS} is missing"
    rows = [json.loads(line) for line in REAL_OUTPUTS.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert rows, f"{REAL_OUTPUTS} is empty"
    for number, row in enumerate(rows, start=1):
        prompt = load_prompt(row["prompt_id"])
        result = parse(prompt.output, row["raw"], prefill=prompt.prefill)
        assert "internal parser error" not in result.reason, (number, row)
        if prompt.output in LABELS:
            _check(result, prompt.output)
        else:
            assert result.status in ("ok", "parse_error") and (result.status == "ok" or result.reason)


def test_output_formats_are_the_declared_ones():
    # reference-check-json: the LLM reference check of issue 32 (tests/audit/test_reference_checks.py)
    assert set(OUTPUT_FORMATS) == set(LABELS) | {"text", "question-answer-pairs", "reference-check-json"}
