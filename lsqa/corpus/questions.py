"""Long-span question generation: the pure parts (Bohnet et al., §2 and Appendix A.1, Fig. 8).

- :func:`annotated_rendering` writes a passage in the paper's §2 annotated format, where every
  mention of a coreference chain is bracketed with its entity number:
  ``[15 Sire], said [6 M. Myriel], [15 you] are looking at a good man, and [6 I] at a great man.``
- :func:`questions_from_generation` turns a Fig. 8 completion into questions. The prompt asks for
  questions that do *not* name their entity; a question that does is kept but flagged
  (``names_entity``) so that a reviewer can see how often the generator broke that rule.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable

from lsqa.prompting.parsers import split_qa_pairs


@dataclass(frozen=True)
class GeneratedQuestion:
    question: str
    answer: str
    names_entity: bool = False  # the question writes the entity verbatim (Fig. 8 requirement 6)


class GeneratedQuestions(list):
    """A list of :class:`GeneratedQuestion` that also counts what was dropped, by reason:
    ``no_answer`` (a question or answer missing), ``empty``, ``duplicate``."""

    def __init__(self, items: Iterable[GeneratedQuestion] = (), dropped: dict[str, int] | None = None):
        super().__init__(items)
        self.dropped: dict[str, int] = dict(dropped or {})


def _words(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def names_entity(question: str, entity: str) -> bool:
    """Whether ``question`` writes ``entity`` verbatim (case and spacing aside), as a whole word
    or phrase: "Myriel's" names "Myriel", "desire" does not name "Sire"."""
    entity = _words(entity).strip("\"'“”‘’")
    if not entity:
        return False
    # Spaces in the entity match any run of whitespace; \w guards instead of \b so that an
    # entity ending in a dot ("M.") still matches before a space.
    pattern = r"(?<!\w)" + r"\s+".join(re.escape(w) for w in entity.split(" ")) + r"(?!\w)"
    return re.search(pattern, question, re.IGNORECASE) is not None


def _dedupe_key(question: str) -> str:
    return re.sub(r"[\W_]+", " ", question.lower()).strip()


def questions_from_generation(raw: str, entity: str | None = None) -> GeneratedQuestions:
    """The questions of a Fig. 8 completion, in order.

    Pairs without an answer, questions without any letter or digit, and repeats (same words,
    ignoring case and punctuation) are dropped and counted in ``.dropped``. With ``entity``,
    each question's ``names_entity`` says whether it breaks the "do not name it" rule.
    """
    pairs, skipped = split_qa_pairs(raw)
    dropped = {"no_answer": skipped, "empty": 0, "duplicate": 0}
    seen: set[str] = set()
    out: list[GeneratedQuestion] = []
    for question, answer in pairs:
        key = _dedupe_key(question)
        if not key:
            dropped["empty"] += 1
            continue
        if key in seen:
            dropped["duplicate"] += 1
            continue
        seen.add(key)
        flagged = bool(entity) and names_entity(question, entity)
        out.append(GeneratedQuestion(question=question, answer=answer, names_entity=flagged))
    return GeneratedQuestions(out, dropped)


def annotated_rendering(text: str, mentions: Iterable[tuple[int, int, int | str]]) -> str:
    """``text`` with each mention ``(char_start, char_end, entity_number)`` written as
    ``[<entity_number> <mention text>]`` (the §2 format). Offsets are Python slice offsets.

    Mentions are expected not to overlap. If they do (a coreference system may nest "his
    mother" around "his"), the outer one is kept: mentions are taken by start, the longer first
    at the same start, and any mention beginning inside one already kept is left out, so the
    brackets always stay balanced.
    """
    spans = []
    for mention in mentions:
        start, end, number = mention
        if not (isinstance(start, int) and isinstance(end, int)) or not 0 <= start < end <= len(text):
            raise ValueError(
                f"mention {tuple(mention)!r} is not a span of the text (0 <= start < end <= {len(text)})"
            )
        spans.append((start, end, number))
    spans.sort(key=lambda s: (s[0], -s[1]))
    out: list[str] = []
    cursor = 0
    for start, end, number in spans:
        if start < cursor:  # overlaps a mention already written
            continue
        out.append(text[cursor:start])
        out.append(f"[{number} {text[start:end]}]")
        cursor = end
    out.append(text[cursor:])
    return "".join(out)
