"""Which sentence of a text says most of what a short claim says: the share of the claim's content
words found in one sentence, and that sentence.

NarrativeQA's questions and references were written from the stories' Wikipedia summaries
(Kočiský et al. 2018; paper Appendix E). A reference none of whose words the summary has, or a
question about something the summary never mentions, is evidence that the reference is wrong;
the sentence that supports a reference best is what a person checks first. Content words and
stems are those of ``lsqa.text.units`` (the embedded judge's and the reference-error triage's).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from lsqa.text.units import STOPWORDS, content_words, sentence_spans, stem

_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")


@dataclass(frozen=True)
class SentenceSupport:
    """``share``: of the claim's distinct content words, the largest share found in one sentence
    (1.0 for a claim without content words: nothing to support); ``sentence``: that sentence
    ("" when none shares a word), ``start``/``end`` its offsets in the text."""

    share: float
    sentence: str = ""
    start: int = -1
    end: int = -1


def _lines(text: str, start: int, end: int):
    """The lines of one sentence: a summary that quotes verse has "sentences" of many lines, too long
    to read as evidence."""
    pos = start
    for line in text[start:end].split("\n"):
        a = pos + len(line) - len(line.lstrip())
        b = pos + len(line.rstrip())
        pos += len(line) + 1
        if b > a:
            yield a, b


@lru_cache(maxsize=256)
def _sentences(text: str) -> tuple[tuple[int, int, frozenset[str]], ...]:
    # A summary is asked about by every reference of its story: split and tokenised once.
    return tuple((a, b, frozenset(content_words(text[a:b])))
                 for start, end in sentence_spans(text) for a, b in _lines(text, start, end))


def best_sentence(claim: str, text: str) -> SentenceSupport:
    """The sentence (or line, in verse) of ``text`` holding the largest share of ``claim``'s content
    words (the first such sentence on a tie)."""
    wanted = frozenset(content_words(claim or ""))
    if not wanted:
        return SentenceSupport(1.0)
    best, where = 0, None
    for start, end, words in _sentences(text or ""):
        found = len(wanted & words)
        if found > best:
            best, where = found, (start, end)
            if best == len(wanted):
                break
    if where is None:
        return SentenceSupport(0.0)
    return SentenceSupport(best / len(wanted), text[where[0]:where[1]], *where)


def shared_word_spans(claim: str, text: str) -> list[tuple[int, int]]:
    """Offsets in ``text`` of the words whose stems are content words of ``claim`` (to mark them)."""
    wanted = set(content_words(claim or ""))
    spans = []
    for m in _WORD.finditer(text or ""):
        word = m.group(0).lower().replace("’", "'")
        if word not in STOPWORDS and stem(word) in wanted:
            spans.append(m.span())
    return spans
