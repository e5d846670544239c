"""BM25 retrieval over a book's passages under a token budget (paper §4 and §5.1).

Paper §4: "This method indexes passages using BM25 ... For each question, we query BM25,
retrieving the most relevant passages up to a maximum of 4k tokens. ... the retrieved passages
are arranged chronologically to reflect the book's timeline." §5.1 (retrieval-based rater): "The
query passed to the retriever is the concatenated text of the question and the two answers".

- **Scoring**: ``rank_bm25.BM25Okapi`` with its defaults (k1 = 1.5, b = 0.75, epsilon = 0.25).
- **Tokenizer** (``tokenize``), used for passages and queries alike: lowercase, words = runs of
  letters/digits (one compiled regex; an apostrophe splits "Valjean's" into "valjean" + "s"),
  minus a small English stop-word list (``STOP_WORDS``) and the one-letter leftovers.
- **Budget**: passages are taken by descending score (ties: earlier passage first); a passage that
  would overflow the remaining budget is *skipped* and smaller, lower-scored ones may still fill
  the gap; passages with score 0 (no query word at all) are never taken. Token counts are
  ``Passage.n_tokens`` (lsqa.text.book.count_tokens), an approximation of the paper's sentence-piece
  tokens.
- **Order**: the chosen passages are returned in book order (``Passage.ordinal``), each keeping
  its ordinal and offsets so callers can record exactly which passages a system saw.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np
from rank_bm25 import BM25Okapi

from lsqa.text.book import Passage, sha1, split_passages

DEFAULT_BUDGET_TOKENS = 4000

_WORD_RE = re.compile(r"[^\W_]+")
STOP_WORDS = frozenset("""
a about above after again against all am an and any are as at be because been before being below between
both but by can could did do does doing down during each few for from further had has have having he her
here hers herself him himself his how i if in into is it its itself just me more most my myself no nor not
now of off on once only or other our ours ourselves out over own same she should so some such than that the
their theirs them themselves then there these they this those through to too under until up very was we
were what when where which while who whom why will with would you your yours yourself yourselves
""".split())


def tokenize(text: str) -> list[str]:
    """Lowercased word tokens without stop words (the one tokenizer for passages and queries)."""
    return [w for w in _WORD_RE.findall(text.lower()) if len(w) > 1 and w not in STOP_WORDS]


@dataclass(frozen=True)
class Retrieval:
    """What one query retrieved: passages in book order, with their scores and token total."""

    passages: tuple[Passage, ...]
    scores: tuple[float, ...]     # BM25 score of each returned passage, same order
    n_tokens: int
    budget_tokens: int
    query_tokens: tuple[str, ...]

    @property
    def ordinals(self) -> list[int]:
        return [p.ordinal for p in self.passages]

    def context(self, separator: str = "\n\n") -> str:
        return separator.join(p.text for p in self.passages)


class BookIndex:
    """A BM25 index over one book's passages; build once per book and reuse for every query.

    Holds the passages and the BM25 statistics only (token lists are streamed into BM25Okapi and
    not kept), so the Les Misérables index is a few tens of MB. Instances are read-only after
    construction and safe to cache (e.g. ``st.cache_resource``) and to share between threads.
    """

    def __init__(self, passages: Sequence[Passage]):
        self.passages: tuple[Passage, ...] = tuple(passages)
        ordinals = [p.ordinal for p in self.passages]
        if ordinals != sorted(ordinals):
            raise ValueError("passages must be in book order (ascending ordinal)")
        self._n_tokens = np.array([p.n_tokens for p in self.passages], dtype=np.int64)
        self._bm25 = BM25Okapi(tokenize(p.text) for p in self.passages) if self.passages else None

    def __len__(self) -> int:
        return len(self.passages)

    def scores(self, query_tokens: Iterable[str]) -> np.ndarray:
        """BM25 score of every passage (index = position in ``self.passages``)."""
        if self._bm25 is None:
            return np.zeros(0)
        # Words absent from the book score 0 in BM25Okapi anyway; dropping them first only saves time.
        known = [t for t in query_tokens if t in self._bm25.idf]
        if not known:
            return np.zeros(len(self.passages))
        return self._bm25.get_scores(known)

    @classmethod
    def from_text(cls, text: str, start: int = 0, end: int | None = None, target_tokens: int = 200) -> "BookIndex":
        return cls(split_passages(text, start, end, target_tokens=target_tokens))


_CACHE: "OrderedDict[tuple, BookIndex]" = OrderedDict()
_CACHE_SIZE = 4


def book_index(text: str, start: int = 0, end: int | None = None, target_tokens: int = 200) -> BookIndex:
    """``BookIndex.from_text`` with a small per-process cache keyed by the text's SHA-1 and the span."""
    key = (sha1(text), start, end, target_tokens)
    index = _CACHE.get(key)
    if index is None:
        index = BookIndex.from_text(text, start, end, target_tokens)
        _CACHE[key] = index
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    else:
        _CACHE.move_to_end(key)
    return index


def query_for(question: str, answers: Sequence[str] | None = None) -> str:
    """The retrieval query: the question alone (§4), or question plus answers (§5.1 rater)."""
    parts = [question.strip()] + [a.strip() for a in (answers or ()) if a and a.strip()]
    return " ".join(parts)


def search(index: BookIndex, query: str, budget_tokens: int = DEFAULT_BUDGET_TOKENS) -> Retrieval:
    """Best passages for ``query`` within ``budget_tokens``, in book order (module docstring)."""
    q = tuple(tokenize(query))
    scores = index.scores(q)
    chosen: list[int] = []
    left = budget_tokens
    if len(scores):
        order = np.lexsort((np.arange(len(scores)), -scores))  # score desc, then book order
        smallest = int(index._n_tokens.min())
        for i in order:
            if scores[i] <= 0 or left < smallest:
                break
            n = int(index._n_tokens[i])
            if n <= left:  # skip a passage that would overflow; a smaller one may still fit
                chosen.append(int(i))
                left -= n
    chosen.sort()
    return Retrieval(passages=tuple(index.passages[i] for i in chosen),
                     scores=tuple(float(scores[i]) for i in chosen),
                     n_tokens=budget_tokens - left, budget_tokens=budget_tokens, query_tokens=q)


def retrieve(index: BookIndex, query: str, budget_tokens: int = DEFAULT_BUDGET_TOKENS) -> list[Passage]:
    """The passages of ``search`` (book order); their ``ordinal`` says which passages were used."""
    return list(search(index, query, budget_tokens).passages)
