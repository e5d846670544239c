"""BM25 over the sentences of one context, shared by the extractive answerer and the lexical judge.

A full-book system sends the same book with every question, so the index of a context is kept
(keyed by the context text) for the last few contexts seen in this process.

Scores are rank_bm25's ``BM25Okapi`` scores, bit for bit, but computed from per-word postings
(the sentences holding a word and its count there): ``BM25Okapi.get_scores`` walks every
sentence of the context in Python for every query word, which on a 3.3 MB book was most of a
full-book judge call (docs/benchmarks-log/2026-11-30-paper-scale.md).
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import numpy as np

from lsqa.text.units import content_words, sentence_spans

CACHED_CONTEXTS = 8
OVERLAP_BONUS = 1e-6


class SentenceIndex:
    """The sentences of ``text`` (as character spans) with a BM25 index over their content words."""

    def __init__(self, text: str):
        self.text = text
        self.spans = sentence_spans(text)
        self.tokens = [content_words(text[s:e]) for s, e in self.spans]
        self.token_sets = [frozenset(t) for t in self.tokens]
        self._bm25 = None
        self._postings: dict[str, list[tuple[int, int]]] = {}
        self._arrays: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        if any(self.tokens):
            from rank_bm25 import BM25Okapi  # imported here: only the embedded models need it

            # rank_bm25 divides by the mean document length: give empty sentences a dummy token.
            self._bm25 = BM25Okapi([t or ["\x00"] for t in self.tokens])
            for i, freqs in enumerate(self._bm25.doc_freqs):
                for word, count in freqs.items():
                    self._postings.setdefault(word, []).append((i, count))
            self._doc_len = np.array(self._bm25.doc_len)

    def __len__(self) -> int:
        return len(self.spans)

    def sentence(self, i: int) -> str:
        """Sentence ``i`` exactly as it is in the context (a literal excerpt)."""
        s, e = self.spans[i]
        return self.text[s:e]

    def scores(self, query: list[str]) -> np.ndarray:
        """BM25 of every sentence, plus a tiny bonus per distinct query word it contains: BM25's
        idf is 0 (or less) for a word in half the sentences or more, so in a context of one or two
        sentences nothing would score at all without it."""
        if self._bm25 is None or not query:
            return np.zeros(len(self.spans))
        terms = list(dict.fromkeys(query))
        bm25 = self._bm25
        score = np.zeros(len(self.spans))
        overlap = np.zeros(len(self.spans))
        for term in terms:  # in query order, as BM25Okapi.get_scores sums them
            found = self._word_postings(term)
            if found is None:
                continue  # a word in no sentence adds exactly 0.0 there
            docs, freqs = found
            # BM25Okapi.get_scores's expression, on the sentences that hold the word only
            # (elsewhere its term frequency is 0 and the term adds 0.0).
            score[docs] += (bm25.idf.get(term) or 0) * (freqs * (bm25.k1 + 1) / (
                freqs + bm25.k1 * (1 - bm25.b + bm25.b * self._doc_len[docs] / bm25.avgdl)))
            overlap[docs] += 1
        # rank_bm25's idf can go negative in a corpus of one or two sentences: clamp at zero.
        return np.maximum(score, 0.0) + OVERLAP_BONUS * overlap

    def _word_postings(self, word: str) -> tuple[np.ndarray, np.ndarray] | None:
        """(sentence indices, counts) of ``word``, as arrays made on first use."""
        found = self._arrays.get(word)
        if found is None:
            pairs = self._postings.get(word)
            if not pairs:
                return None
            found = (np.fromiter((i for i, _ in pairs), dtype=np.int64, count=len(pairs)),
                     np.fromiter((c for _, c in pairs), dtype=np.int64, count=len(pairs)))
            self._arrays[word] = found  # racing threads build equal arrays: either may stay
        return found

    def top(self, query: list[str], k: int) -> list[tuple[int, float]]:
        """(index, score) of the ``k`` best-scoring sentences with a positive score, best first
        (ties broken by position, so the result is deterministic)."""
        scores = self.scores(query)
        if not len(scores) or k <= 0:
            return []
        order = np.lexsort((np.arange(len(scores)), -scores))[:k]
        return [(int(i), float(scores[i])) for i in order if scores[i] > 0]


_cache: OrderedDict[str, SentenceIndex] = OrderedDict()
_building: dict[str, threading.Event] = {}  # context text -> set when the thread building its index is done
_lock = threading.Lock()
builds = 0  # indexes built in this process (tests: concurrent calls on one context build it once)


def index_for(text: str) -> SentenceIndex:
    """The index of ``text``, built once and kept for the last CACHED_CONTEXTS contexts.

    Concurrent calls on the same context wait for the one thread that builds it: a full-book
    system's first calls all arrive at once (up to ``max_concurrency``), and each built the index
    of the whole book, each slowing the others (``bench/bench_scale.py``:
    docs/benchmarks-log/2026-11-30-paper-scale.md). Should the builder fail, a waiting call builds it again."""
    global builds
    while True:
        with _lock:
            found = _cache.get(text)
            if found is not None:
                _cache.move_to_end(text)
                return found
            underway = _building.get(text)
            if underway is None:
                _building[text] = threading.Event()
                break
        underway.wait()
    try:
        built = SentenceIndex(text)
        with _lock:
            builds += 1
            _cache[text] = built
            while len(_cache) > CACHED_CONTEXTS:
                _cache.popitem(last=False)
        return built
    finally:
        with _lock:
            _building.pop(text).set()
