"""What studies read: books, NarrativeQA, entity chains, BM25 retrieval, generated questions and the contexts shown to models.

Entities and their chains are the subpackage :mod:`lsqa.corpus.entities`, which names its own exports.
"""

from __future__ import annotations

from lsqa.fronts import lazy_front, lazy_names

# Loaded on first use (PEP 562): retrieval pulls numpy and rank_bm25, chains the entity back ends;
# a CLI command or a page that needs one of them should not pay for the others.
_LAZY = {
    "lsqa.corpus.chains": (
        "annotated_excerpt", "book_entities", "ensure_all_entities", "ensure_entities", "resolve_method",
        "top_chains",
    ),
    "lsqa.corpus.contexts": (
        "BookContexts", "ContextTooLong",
    ),
    "lsqa.corpus.ingest": (
        "ingest_book", "ingest_narrativeqa",
    ),
    "lsqa.corpus.questions": (
        "annotated_rendering", "GeneratedQuestion", "names_entity", "questions_from_generation",
    ),
    "lsqa.corpus.retrieval": (
        "book_index", "BookIndex", "query_for", "retrieve", "search", "tokenize",
    ),
}

__all__ = lazy_names(_LAZY)


__getattr__, __dir__ = lazy_front(__name__, _LAZY, globals())
