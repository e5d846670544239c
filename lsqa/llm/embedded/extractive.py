"""``lsqa/extractive``: answers a question with sentences copied from the context it was given.

A deterministic stand-in for a QA model (Bohnet et al. §4, the QA systems of Figs. 9-11 and 14-16):
BM25 (rank_bm25) over the sentences of the prompt's context, queried with the question's content
words; the best sentences, as many as the prompt allows ("at most one sentence" → 1, "no longer
than 5 sentences" → up to 5, others only when they score at least half the best), joined in the
order they appear in the text. With no context, or nothing in it that matches, it answers
"I don't know." — so no-context, retrieved-context and full-book systems really differ.
"""

from __future__ import annotations

from lsqa.llm.embedded.prompt_reading import PromptParts
from lsqa.llm.embedded.sentence_index import index_for
from lsqa.text.units import content_words, one_line

NO_ANSWER = "I don't know."
DEFAULT_SENTENCES = 1      # when the prompt does not say how long an answer may be
KEEP_FRACTION = 0.5        # a further sentence must score at least this share of the best one


def answer(parts: PromptParts) -> str:
    if not parts.context or not parts.context.strip() or not parts.question:
        return NO_ANSWER
    query = content_words(parts.question)
    if not query:
        return NO_ANSWER
    index = index_for(parts.context)
    limit = max(1, parts.max_sentences or DEFAULT_SENTENCES)
    best = index.top(query, limit)
    if not best:
        return NO_ANSWER
    floor = KEEP_FRACTION * best[0][1]
    chosen = sorted(i for i, score in best if score >= floor)
    return " ".join(one_line(index.sentence(i)) for i in chosen)
