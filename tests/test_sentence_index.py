"""The embedded models' sentence index scores exactly as rank_bm25's BM25Okapi (its oracle),
from postings instead of a walk over every sentence per query word."""

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from lsqa.offline.sentence_index import OVERLAP_BONUS, SentenceIndex
from lsqa.text_units import content_words

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
