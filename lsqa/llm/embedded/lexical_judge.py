"""``lsqa/lexical-judge``: a deterministic judge that answers every judge prompt of Appendix A
in the output format that prompt asks for, so that the real parsers are exercised.

What it decides (the thresholds are module constants, documented in README.md, "The embedded offline models"):

* **AutoAIS** (Figs. 12, 19; ``autoais-json``): an answer is *supported* when at least
  ``SUPPORT_THRESHOLD`` of its distinct content words (stop words removed, crude stemming) occur
  in one window of ``2*WINDOW+1`` consecutive context sentences, the windows centred on the
  ``CANDIDATES`` sentences BM25 ranks highest for the answer and question. An answer that
  declines ("I don't know", "not mentioned") or has no content words is not supported. Evidence:
  the literal sentences of the best window that share a word with the answer.
* **Side by side with a context** (Figs. 13, 20): the support score of each answer as above.
  Neither supported → ``None``; one → that one; both → ``Equal`` if the prompt offers it and the
  scores differ by at most ``EQUAL_MARGIN``, else the higher score. Exact ties are broken by
  the answers' text, never by position, so swapping A and B swaps the verdict.
* **Ground truth side by side** (Fig. 18) and **yes/no rater** (Fig. 17): token F1 against the
  ground-truth answer (SQuAD normalisation: lower case, no punctuation or articles); correct when
  F1 ≥ ``F1_THRESHOLD``; the same decision rules as above.
* **Reference check** (``reference-check-json``): the question is answerable when its own
  content words are supported by the context as an answer's would be, and the reference answers it
  when the reference is supported (the AutoAIS rule above, the summary as the context). A word-overlap
  check: it exercises the stage offline, it does not read the story.

Output: the complete object on one line, e.g.
``{'answer_is_entailed_by_context': 'yes', 'evidence': ['...']}`` — a Python-literal dict as the
paper's pseudo-JSON, even when the prompt ends with the opening of that object (a chat model
answers in a new turn and most restate the object); yes/no prompts get a bare ``yes`` or ``no``.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from lsqa.llm.embedded.prompt_reading import AUTOAIS, REFERENCE_CHECK, SIDE_BY_SIDE, YES_NO, PromptParts
from lsqa.llm.embedded.sentence_index import index_for
from lsqa.text.units import content_words, words

SUPPORT_THRESHOLD = 0.6   # share of the answer's content words found near each other in the context
EQUAL_MARGIN = 0.1        # side by side: scores this close count as equally good (when Equal is offered)
F1_THRESHOLD = 0.5        # ground-truth raters: token F1 at or above this is correct
CANDIDATES = 8            # sentences BM25 proposes as centres of evidence windows
WINDOW = 1                # sentences on each side of a candidate that count with it
MAX_EVIDENCE = 3

_DECLINES = re.compile(
    r"\b(?:(?:do not|don't|cannot|can't|could not|couldn't|unable to) (?:know|tell|say|determine|answer|find)"
    r"|not (?:mentioned|stated|specified|provided|given|clear)|no information|unknown)\b",
    re.IGNORECASE,
)
_ARTICLES = {"a", "an", "the"}


@dataclass
class Score:
    value: float                     # support share, or token F1
    matched: int = 0                 # content words found (detail, for tie-breaks)
    evidence: list[str] = field(default_factory=list)
    note: str = ""


def declines(answer: str) -> bool:
    return bool(_DECLINES.search(answer))


def support(answer: str | None, context: str | None, question: str | None = None) -> Score:
    """How much of ``answer`` one stretch of ``context`` backs (see module docstring)."""
    wanted = set(content_words(answer or ""))
    if not answer or not wanted:
        return Score(0.0, note="the answer has no content words")
    if declines(answer):
        return Score(0.0, note="the answer declines to answer")
    if not context or not context.strip():
        return Score(0.0, note="no context was given")
    index = index_for(context)
    query = list(wanted) + content_words(question or "")
    best: tuple[int, float, int] | None = None  # (matched, bm25, centre)
    for centre, score in index.top(query, CANDIDATES):
        lo, hi = max(0, centre - WINDOW), min(len(index), centre + WINDOW + 1)
        seen = set().union(*index.token_sets[lo:hi])
        matched = len(wanted & seen)
        if best is None or (matched, score) > best[:2]:
            best = (matched, score, centre)
    if best is None:
        return Score(0.0, note="no sentence of the context shares a word with the answer")
    matched, _, centre = best
    lo, hi = max(0, centre - WINDOW), min(len(index), centre + WINDOW + 1)
    evidence = [index.sentence(i) for i in range(lo, hi) if wanted & index.token_sets[i]][:MAX_EVIDENCE]
    share = matched / len(wanted)
    return Score(share, matched, evidence, f"{matched} of {len(wanted)} content words found together in the context")


def _normalise(text: str) -> list[str]:
    return [w for w in words(text) if w not in _ARTICLES]


def token_f1(candidate: str | None, reference: str | None) -> float:
    """SQuAD-style token F1 between two short answers."""
    cand, ref = _normalise(candidate or ""), _normalise(reference or "")
    if not cand or not ref:
        return 0.0
    common = sum((Counter(cand) & Counter(ref)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(cand), common / len(ref)
    return 2 * precision * recall / (precision + recall)


def against_truth(answer: str | None, truth: str | None) -> Score:
    f1 = token_f1(answer, truth)
    return Score(f1, round(f1 * 100), note=f"token F1 {f1:.2f} against the ground truth")


def _verdict(a: Score, b: Score, threshold: float, text_a: str, text_b: str, equal_allowed: bool) -> str:
    ok_a, ok_b = a.value >= threshold, b.value >= threshold
    if not ok_a and not ok_b:
        return "None"
    if ok_a != ok_b:
        return "A is better" if ok_a else "B is better"
    if equal_allowed and abs(a.value - b.value) <= EQUAL_MARGIN:
        return "Equal"
    # Higher score, then more matched words (detail), then the shorter answer, then the text
    # itself: a position-free order, so that swapping A and B swaps the verdict.
    key_a = (a.value, a.matched, -len(text_a), text_a)
    key_b = (b.value, b.matched, -len(text_b), text_b)
    if key_a == key_b:
        return "Equal" if equal_allowed else "A is better"  # identical answers
    return "A is better" if key_a > key_b else "B is better"


def _object(key: str, value: str, evidence: list[str]) -> str:
    # str() of a dict is the paper's pseudo-JSON: single quotes, Python escaping when needed.
    return str({key: value, "evidence": evidence})


def judge(parts: PromptParts) -> str:
    """The completion for an AutoAIS, side-by-side, yes/no or reference-check prompt."""
    if parts.output == YES_NO:
        score = against_truth(parts.answer_2, parts.answer_1)
        return "yes" if score.value >= F1_THRESHOLD else "no"
    if parts.output == AUTOAIS:
        score = support(parts.answer, parts.context, parts.question)
        label = "yes" if score.value >= SUPPORT_THRESHOLD else "no"
        return _object("answer_is_entailed_by_context", label, score.evidence)
    if parts.output == REFERENCE_CHECK:
        question = support(parts.question, parts.context)
        reference = support(parts.answer, parts.context, parts.question)
        return str({"question_is_answerable": "yes" if question.value >= SUPPORT_THRESHOLD else "no",
                    "reference_answers_question": "yes" if reference.value >= SUPPORT_THRESHOLD else "no",
                    "evidence": reference.evidence or question.evidence})
    if parts.output == SIDE_BY_SIDE:
        a_text, b_text = parts.answer_a or "", parts.answer_b or ""
        if parts.ground_truth is not None:
            a, b = against_truth(a_text, parts.ground_truth), against_truth(b_text, parts.ground_truth)
            threshold = F1_THRESHOLD
        else:
            a = support(a_text, parts.context, parts.question)
            b = support(b_text, parts.context, parts.question)
            threshold = SUPPORT_THRESHOLD
        verdict = _verdict(a, b, threshold, a_text, b_text, parts.equal_allowed)
        evidence = [f"A: {a.note} ({a.value:.2f}).", f"B: {b.note} ({b.value:.2f})."]
        evidence += list(dict.fromkeys(a.evidence + b.evidence))[:MAX_EVIDENCE]
        return _object("system is better", verdict, evidence)
    raise ValueError(f"lsqa/lexical-judge reads judge prompts only; this prompt asks for {parts.output!r}")
