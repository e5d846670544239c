"""The text a system or judge is shown: nothing, BM25 passages in book order, or the whole book.

One ``BookContexts`` per run holds each document's story and its BM25 index, built on first use
(paper §4: passages retrieved with BM25 up to a token budget, then put back in book order).
"""

from __future__ import annotations

from dataclasses import dataclass

from lsqa.config.study import Context
from lsqa.text.book import Passage


class ContextTooLong(Exception):
    """The whole book does not fit the model's window: an error, never a silent truncation."""


@dataclass(frozen=True)
class ContextText:
    text: str
    passages: tuple[int, ...] = ()   # ordinals of the passages used (retrieval); () otherwise
    n_tokens: int = 0
    pieces: tuple[str, ...] = ()     # the long texts ``text`` is made of: stored once each (lsqa.text.prompt_parts)


class BookContexts:
    def __init__(self, documents: dict[str, dict], passages: dict[str, list[Passage]]):
        self._documents = documents
        self._passages = passages
        self._indexes: dict = {}
        self._stories: dict[str, str] = {}

    def document(self, doc_id: str) -> dict:
        return self._documents[doc_id]

    def has_text(self, doc_id: str) -> bool:
        return self._documents[doc_id].get("full_text") is not None

    def story(self, doc_id: str) -> str:
        # One string object per book: its hash is computed once, however many prompts hold it.
        story = self._stories.get(doc_id)
        if story is None:
            d = self._documents[doc_id]
            story = self._stories[doc_id] = d["full_text"][d["clean_start"]:d["clean_end"]]
        return story

    def story_tokens(self, doc_id: str) -> int:
        return int(self._documents[doc_id]["n_tokens"])

    def passages(self, doc_id: str) -> list[Passage]:
        return self._passages.get(doc_id, [])

    def retrieve(self, doc_id: str, query: str, budget_tokens: int) -> list[Passage]:
        from lsqa.corpus import retrieval

        index = self._indexes.get(doc_id)
        if index is None:
            index = self._indexes[doc_id] = retrieval.BookIndex(self.passages(doc_id))
        return retrieval.retrieve(index, query, budget_tokens=budget_tokens)

    def context_for(self, doc_id: str, context: Context, query: str, *, max_tokens: int | None = None) -> ContextText:
        """The context text for ``context`` (none → empty); ContextTooLong if the book does not fit."""
        if context.kind == "none":
            return ContextText("")
        if not self.has_text(doc_id):
            raise ContextTooLong(f"document {doc_id} has no full text in the workspace (summary only)")
        if context.kind == "full":
            n = self.story_tokens(doc_id)
            if max_tokens is not None and n > max_tokens:
                raise ContextTooLong(f"'{self.document(doc_id)['title']}' has {n:,} tokens, more than the model's "
                                     f"{max_tokens:,}-token window; use retrieval:<tokens> for this model")
            story = self.story(doc_id)
            return ContextText(story, (), n, (story,))
        if context.kind == "retrieval":
            found = self.retrieve(doc_id, query, context.budget_tokens)
            return ContextText("\n\n".join(p.text for p in found), tuple(p.ordinal for p in found),
                               sum(p.n_tokens for p in found), tuple(p.text for p in found))
        raise ValueError(f"context {context.label} does not give a text")
