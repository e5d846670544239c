"""Read a rendered prompt by its labels, the way the embedded models do (prompts/README.md).

The contract: the context sits between a line ``# CONTEXT`` and a line ``# CONTEXT END``; the
question is the last line starting ``Question:``; one answer follows as ``Answer:``, two as
``Answer A:`` / ``Answer B:``; ``Ground truth answer:``, ``Answer 1:`` / ``Answer 2:``, ``Entity:``
and ``Number of questions:`` label the rest. Labels are looked for outside the context only (a
book may well contain a line starting "Question:"). Values wrapped in double quotes are
unwrapped; a quoted value may run over several lines.

The kind of output wanted is recognised from the wording the contract fixes for each format
(``answer_is_entailed_by_context``, ``reference_answers_question``, ``system is better``, ``Respond with only yes or no``,
``Question:``/``Answer:`` lines for question generation) and the length asked of an answer
from "at most one sentence" / "no longer than N sentences".
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lsqa.text.units import NUMBER_WORDS

# Output kinds, named after the prompt files' "# output:" values where one exists.
ANSWER = "text"
AUTOAIS = "autoais-json"
SIDE_BY_SIDE = "side-by-side-json"
QUESTIONS = "question-answer-pairs"
YES_NO = "yes-no"
REFERENCE_CHECK = "reference-check-json"

_LABELS = {
    # longest first: "Answer A:" must not be read as "Answer:"
    "ground_truth": "Ground truth answer:",
    "n_questions": "Number of questions:",
    "answer_a": "Answer A:",
    "answer_b": "Answer B:",
    "answer_1": "Answer 1:",
    "answer_2": "Answer 2:",
    "question": "Question:",
    "answer": "Answer:",
    "entity": "Entity:",
}
_QUOTE_PAIRS = {'"': '"', "“": "”"}
_AT_MOST_ONE = re.compile(r"\bat most (?:one|a single|1) sentence\b", re.IGNORECASE)
_N_SENTENCES = re.compile(r"\b(?:no longer than|at most|up to) (\w+) sentences\b", re.IGNORECASE)


@dataclass(frozen=True)
class PromptParts:
    """The labelled parts of one rendered prompt (``None`` where the prompt has no such label)."""

    output: str                     # ANSWER | AUTOAIS | SIDE_BY_SIDE | YES_NO | QUESTIONS
    context: str | None = None      # text between # CONTEXT and # CONTEXT END, as given
    question: str | None = None
    answer: str | None = None
    answer_a: str | None = None
    answer_b: str | None = None
    ground_truth: str | None = None
    answer_1: str | None = None
    answer_2: str | None = None
    entity: str | None = None
    n_questions: int | None = None
    max_sentences: int | None = None  # length asked of an answer
    equal_allowed: bool = False       # side by side: the prompt offers 'Equal'
    prefill: str = ""                 # an opening the prompt ends with, e.g. "{'answer_is_entailed_by_context':"


def prompt_text(messages: list[dict] | str) -> str:
    """All message contents joined by newlines (a system turn, if any, comes first)."""
    if isinstance(messages, str):
        return messages
    parts = []
    for m in messages:
        content = m.get("content", "")
        if isinstance(content, list):  # OpenAI content parts: keep the text ones
            content = "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
        parts.append(str(content or ""))
    return "\n".join(parts)


def _line(text: str, label: str, pos: int = 0) -> tuple[int, int] | None:
    """(start, end) of the first line at or after ``pos`` that is ``label`` with white space around."""
    at = text.find(label, pos)
    while at >= 0:
        start = text.rfind("\n", 0, at) + 1
        end = text.find("\n", at)
        end = len(text) if end < 0 else end
        if start >= pos and text[start:end].strip() == label:
            return start, end
        at = text.find(label, at + 1)
    return None


def split_context(text: str) -> tuple[str | None, str]:
    """(context, the prompt with the context cut out). Context is None when there is none.

    The context runs from the first line that is ``# CONTEXT`` (surrounding white space allowed)
    to the next ``# CONTEXT END`` line, or to the end. Found by a search, not by splitting the
    prompt into lines: a full-book prompt has ~70,000 lines, and splitting them took most of an
    embedded judge's time per call."""
    start = _line(text, "# CONTEXT")
    if start is None:
        return None, text
    before = text[: start[0] - 1] if start[0] else None   # the lines before, if any
    if start[1] == len(text):
        return "", before or ""
    end = _line(text, "# CONTEXT END", start[1] + 1)
    if end is None:  # an unterminated context runs to the end of the prompt
        return text[start[1] + 1 :], before or ""
    after = text[end[1] + 1 :] if end[1] < len(text) else None  # the lines after, if any
    context = text[start[1] + 1 : end[0] - 1] if end[0] > start[1] + 1 else ""
    return context, "\n".join(part for part in (before, after) if part is not None)


def _label_values(rest: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    lines = rest.split("\n")
    i = 0
    while i < len(lines):
        stripped = lines[i].lstrip()
        for name, label in _LABELS.items():
            if stripped.startswith(label):
                value = stripped[len(label) :].strip()
                close = _QUOTE_PAIRS.get(value[:1])
                if close and not (len(value) > 1 and value.endswith(close)):
                    # A quoted value that continues on the next lines until its closing quote.
                    j = i + 1
                    while j < len(lines) and not lines[j].rstrip().endswith(close):
                        j += 1
                    if j < len(lines):
                        value = "\n".join([value] + lines[i + 1 : j + 1]).strip()
                        i = j
                found.setdefault(name, []).append(unquote(value))
                break
        i += 1
    return found


def unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and _QUOTE_PAIRS.get(value[0]) == value[-1]:
        value = value[1:-1].strip()
    return value


def _int(value: str | None) -> int | None:
    """'10', '"10"', 'ten' → 10; anything else → None."""
    words = (value or "").strip().strip("'\"").split()
    if not words:
        return None
    token = words[0].lower()
    if token.isdigit():
        return int(token)
    return NUMBER_WORDS.get(token)


def max_sentences(instructions: str) -> int | None:
    if _AT_MOST_ONE.search(instructions):
        return 1
    m = _N_SENTENCES.search(instructions)
    if m:
        return _int(m.group(1))
    return None


def read_prompt(messages: list[dict] | str) -> PromptParts:
    """The labelled parts of a rendered prompt (a message list or its text)."""
    text = prompt_text(messages)
    context, rest = split_context(text)
    values = _label_values(rest)

    def last(name: str) -> str | None:
        got = values.get(name)
        return got[-1] if got and got[-1] != "" else None

    lowered = rest.lower()
    if "answer_is_entailed_by_context" in rest:
        output = AUTOAIS
    elif "reference_answers_question" in rest:
        output = REFERENCE_CHECK
    elif "system is better" in lowered:
        output = SIDE_BY_SIDE
    elif "respond with only yes or no" in lowered:
        output = YES_NO
    elif "entity" in values or "n_questions" in values:
        output = QUESTIONS
    else:
        output = ANSWER
    last_line = rest.rstrip().rsplit("\n", 1)[-1].strip()
    prefill = last_line if last_line.startswith("{") and last_line.endswith(":") else ""
    return PromptParts(
        output=output,
        context=context,
        question=last("question"),
        answer=last("answer"),
        answer_a=last("answer_a"),
        answer_b=last("answer_b"),
        ground_truth=last("ground_truth"),
        answer_1=last("answer_1"),
        answer_2=last("answer_2"),
        entity=last("entity"),
        n_questions=_int(last("n_questions")),
        max_sentences=max_sentences(rest),
        equal_allowed=output == SIDE_BY_SIDE and re.search(r"\bEqual\b", rest) is not None,
        prefill=prefill,
    )
