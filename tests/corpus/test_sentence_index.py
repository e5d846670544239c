"""The embedded models' sentence index scores exactly as rank_bm25's BM25Okapi (its oracle),
from postings instead of a walk over every sentence per query word."""

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from lsqa.llm.embedded import sentence_index
from lsqa.llm.embedded.sentence_index import OVERLAP_BONUS, SentenceIndex
from lsqa.text.units import content_words


def _oracle(index: SentenceIndex, query: list[str]) -> np.ndarray:
    terms = list(dict.fromkeys(query))
    bm25 = BM25Okapi([t or ["\x00"] for t in index.tokens])
    wanted = frozenset(terms)
    overlap = np.array([len(t & wanted) for t in index.token_sets], dtype=float)
    return np.maximum(bm25.get_scores(terms), 0.0) + OVERLAP_BONUS * overlap


@pytest.fixture(scope="module")
def chapter(shared_data) -> str:
    text = (shared_data / "books" / "pg135_les_miserables.txt").read_text(encoding="utf-8")
    start = text.index("In 1815, M. Charles-François-Bienvenu Myriel")
    return text[start:start + 200_000]


@pytest.mark.parametrize("question", [
    "Who was the Bishop of Digne in 1815?",
    "What did Madame Magloire say about the silver candlesticks and the house?",
    "bishop bishop Myriel zzzunknownword the",   # a repeated word, a word in no sentence
])
def test_scores_equal_rank_bm25_bit_for_bit(chapter, question):
    index = SentenceIndex(chapter)
    query = content_words(question)
    assert len(index) > 1000
    ours, oracle = index.scores(query), _oracle(index, query)
    assert ours.tobytes() == oracle.tobytes()
    assert index.top(query, 8) == [(int(i), float(oracle[i])) for i in
                                   np.lexsort((np.arange(len(oracle)), -oracle))[:8] if oracle[i] > 0]


def test_tiny_contexts_with_negative_idf_match():
    # two sentences sharing every word: BM25Okapi's idf goes negative and is floored at epsilon
    for text in ("The bishop walked. The bishop walked.", "The bishop walked.", "Bishop. Candles. Bishop candles."):
        index = SentenceIndex(text)
        for question in ("the bishop", "candles", "walked bishop candles"):
            query = content_words(question)
            assert index.scores(query).tobytes() == _oracle(index, query).tobytes(), (text, question)


def test_concurrent_calls_on_one_context_build_its_index_once(chapter):
    """A full-book system's first calls arrive together: one thread builds the book's index, the
    others wait for it and get the same one (each built its own before)."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    text = chapter + " A context no other test uses."
    start = threading.Barrier(4)

    def call(_):
        start.wait()
        return sentence_index.index_for(text)

    before = sentence_index.builds
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(call, range(4)))
    assert sentence_index.builds - before == 1
    assert all(index is got[0] for index in got) and len(got[0]) > 1000
    assert sentence_index.index_for(text) is got[0]  # kept


def test_a_failed_build_is_made_again_by_the_next_call(monkeypatch):
    text = "The bishop lit the candles. The candles were silver."
    real = sentence_index.SentenceIndex
    failing = iter([True])

    def build(t):
        if next(failing, False):
            raise MemoryError("the first build fails")
        return real(t)

    monkeypatch.setattr(sentence_index, "SentenceIndex", build)
    with pytest.raises(MemoryError):
        sentence_index.index_for(text)
    assert len(sentence_index.index_for(text)) == 2
    assert text not in sentence_index._building
