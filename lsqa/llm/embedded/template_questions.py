"""``lsqa/template-questions``: the question-generation prompt (Bohnet et al. §2, Appendix A.1,
Fig. 8) answered from templates.

For ``Entity:`` it finds the context sentences that mention the entity (the full name, or a
capitalised part of it such as "Valjean" for "Jean Valjean"), spread across the whole text so
that the questions span it. Each question paraphrases the entity from what one mention says it
did ("the character who stole the silver candlesticks") and never writes its name; each answer is
another mention sentence, copied from the context. ``Number of questions:`` sets how many.
Output: ``Question: ...`` / ``Answer: ...`` line pairs, as the prompt asks.
"""

from __future__ import annotations

import re

from lsqa.llm.embedded.prompt_reading import PromptParts
from lsqa.llm.embedded.sentence_index import index_for
from lsqa.text.units import STOPWORDS, one_line

DEFAULT_QUESTIONS = 5
MAX_QUESTIONS = 50
MAX_PHRASE_WORDS = 9

TEMPLATES = (
    "What part does {who} play in the way the story unfolds?",
    "How do the decisions of {who} shape what happens to the people around them?",
    "What does the first appearance of {who} reveal about the themes of the narrative?",
    "How does {who} change between the early and the late parts of the story?",
    "What drives {who}, and how does the narrative show it?",
    "Which event involving {who} turns the course of the story, and why does it matter?",
    "How do other characters see {who}, and how does that view shift?",
)
# Words after a name that make "the character who <words>" read as a description.
_VERBS = frozenset(
    """was were had has is said went took came saw gave made found thought knew looked felt left told
    asked replied answered began returned turned stood sat ran kept became seemed wanted loved hated
    lived died married met heard wrote spoke cried smiled laughed walked entered opened refused decided
    tried brought bought sold stole lost won would could did will may might must""".split()
)
_STOP_PHRASE = re.compile(r"[,.;:!?\"“”()\[\]]")


def _name_pattern(entity: str) -> re.Pattern | None:
    entity = one_line(entity).strip("\"'“”‘’")
    if not entity:
        return None
    # The whole name, or any capitalised part of it that is not a function word ("Jean Valjean" →
    # "Valjean", "Jean"); titles like "M." or "Mrs." alone are not enough.
    parts = [p for p in re.findall(r"[A-Z][\w’']+", entity) if p.lower() not in STOPWORDS and len(p) > 2]
    alternatives = [re.escape(entity)] + [re.escape(p) for p in parts]
    return re.compile(r"(?<!\w)(?:" + "|".join(dict.fromkeys(alternatives)) + r")(?!\w)", re.IGNORECASE if not parts else 0)


def _describe(sentence: str, names: re.Pattern) -> str | None:
    """'the character who <what the sentence says right after the name>', or None."""
    for m in names.finditer(sentence):
        after = _STOP_PHRASE.split(sentence[m.end() :], maxsplit=1)[0].split()
        if not after or after[0].lower() not in _VERBS:
            continue
        kept = after[:MAX_PHRASE_WORDS]
        while len(kept) > 2 and kept[-1].lower() in STOPWORDS:  # no dangling "... upon his"
            kept.pop()
        phrase = " ".join(kept)
        if names.search(phrase) or len(kept) < 2:
            continue
        return "the character who " + phrase
    return None


def _spread(items: list, n: int) -> list:
    """``n`` items spread evenly from first to last (repeating when there are fewer)."""
    if not items:
        return []
    if n == 1:
        return [items[0]]
    return [items[round(k * (len(items) - 1) / (n - 1))] for k in range(n)]


def generate(parts: PromptParts) -> str:
    n = min(MAX_QUESTIONS, max(1, parts.n_questions or DEFAULT_QUESTIONS))
    entity = parts.entity or ""
    names = _name_pattern(entity)
    mentions: list[str] = []
    if names is not None and parts.context:
        index = index_for(parts.context)
        mentions = [one_line(index.sentence(i)) for i in range(len(index)) if names.search(index.sentence(i))]
    descriptions = [d for d in (_describe(s, names) for s in mentions) if d] if names else []
    descriptions = _spread(list(dict.fromkeys(descriptions)), n) or ["the character the text keeps returning to"]
    answers = _spread(mentions, n) or ["The text does not mention this entity."]
    lines = []
    for k in range(n):
        question = TEMPLATES[k % len(TEMPLATES)].format(who=descriptions[k % len(descriptions)])
        answer = answers[k % len(answers)]
        lines.append(f"Question: {question}\nAnswer: {answer}")
    return "\n\n".join(lines) + "\n"
