"""What studies read: books, NarrativeQA, entity chains, BM25 retrieval, generated questions and the contexts shown to models.

Entities and their chains are the subpackage :mod:`lsqa.corpus.entities`, which names its own exports.
"""

from __future__ import annotations

import importlib

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
    "lsqa.corpus.tables": (
        "IngestSummary", "load_comparisons", "load_ratings", "MAX_CELL_CHARS", "MAX_TABLE_BYTES",
        "plain_value", "read_table", "records",
    ),
}

__all__ = [
    "annotated_excerpt", "book_entities", "ensure_all_entities", "ensure_entities", "resolve_method",
    "top_chains", "BookContexts", "ContextTooLong", "ingest_book", "ingest_narrativeqa",
    "annotated_rendering", "GeneratedQuestion", "names_entity", "questions_from_generation", "book_index",
    "BookIndex", "query_for", "retrieve", "search", "tokenize", "IngestSummary", "load_comparisons",
    "load_ratings", "MAX_CELL_CHARS", "MAX_TABLE_BYTES", "plain_value", "read_table", "records",
]


def __getattr__(name: str):
    """A public name, imported from its module on first use (PEP 562)."""
    for module, names in _LAZY.items():
        if name in names:
            value = getattr(importlib.import_module(module), name)
            globals()[name] = value  # found without this function from now on
            return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
