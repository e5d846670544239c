"""Entity chains of a stored book: extracted once, stored with every mention, shown as in the paper.

Used by question generation (paper §2: go down the entities ranked by mention count) and by
`lsqa entities`, which prints the ranking and the paper's annotated rendering
(``[15 Sire], said [6 M. Myriel], [15 you] are looking at a good man, …``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

from lsqa import store
from lsqa.errors import LsqaError
from lsqa.store import corpus as corpus_store

TOP_ENTITIES_STORED = 200  # entities kept per book with their mention chains (ranked by mention count)


def resolve_method(method: str, settings) -> str:
    """``auto`` is fastcoref when a coreference model is configured, else the built-in fallback."""
    if method == "auto":
        return "fastcoref" if getattr(settings, "coref_model_path", "") else "fallback"
    return method


def ensure_entities(workspace: Path, document: dict, method: str, settings) -> int:
    """Extract and store the book's entity chains unless stored already; return entities written."""
    from lsqa.corpus import entities as entities_mod

    with store.connect(workspace) as con:
        if corpus_store.list_entities(con, document["id"], method, limit=1):
            return 0
    if document.get("full_text") is None:
        raise LsqaError(f"document {document['id']} has no full text (summary only)")
    result = entities_mod.extract_entities(document["full_text"], document["clean_start"], document["clean_end"],
                                           method=method, settings=settings, top_k=TOP_ENTITIES_STORED)
    with store.write(workspace) as con:
        return corpus_store.insert_entities(con, document["id"], method, result)


def book_entities(workspace: Path, document: str, method: str, top: int, settings) -> dict:
    """The ``top`` most mentioned entities of a stored book (id or title), extracted and stored on
    first use (paper §2): ``{"document": row, "method": resolved method, "chains": top_chains(...)}``."""
    method = resolve_method(method, settings)
    with store.connect(workspace) as con:
        try:
            doc = corpus_store.get_document(con, corpus_store.resolve_documents(con, [document])[0])
        except corpus_store.AmbiguousTitle as exc:
            raise LsqaError(f"{exc.args[0]} (lsqa entities DOCUMENT_ID)") from None
        except (KeyError, IndexError):
            raise LsqaError(f"unknown document {document!r}: give a document id or title from the workspace "
                            "(the Corpus page lists them)") from None
    try:
        ensure_entities(workspace, doc, method, settings)
    except ValueError as exc:  # an unknown method, a coreference model that cannot be used
        raise LsqaError(str(exc)) from None
    return {"document": doc, "method": method, "chains": top_chains(workspace, doc["id"], method, top)}


def ensure_all_entities(workspace: Path, settings=None, method: str = "auto") -> Iterator[str]:
    """Entity chains for every book with full text (the Corpus page shows them), as progress lines."""
    from lsqa.config.settings import load_settings

    settings = settings if settings is not None else load_settings()
    method = resolve_method(method, settings)
    with store.connect(workspace) as con:
        ids = [d["id"] for d in corpus_store.list_documents(con) if d["has_text"]]
    for doc_id in ids:
        with store.connect(workspace) as con:
            doc = corpus_store.get_document(con, doc_id)
        n = ensure_entities(workspace, doc, method, settings)
        yield f"entities  {doc['title']}: {n} written ({method})" if n else f"entities  {doc['title']}: already stored"


def top_chains(workspace: Path, document_id: str, method: str, k: int) -> list[tuple[dict, list[tuple]]]:
    """The k most mentioned entities with their mentions ``(char_start, char_end, text)`` in book order."""
    with store.connect(workspace) as con:
        rows = corpus_store.list_entities(con, document_id, method, limit=k)
        return [(r, corpus_store.entity_mentions(con, r["id"])) for r in rows]


def annotated_excerpt(text: str, chains: list[tuple[dict, list[tuple]]], *, window: int = 600) -> str:
    """The paper's §2 rendering of the ``window`` characters around the densest run of mentions."""
    from lsqa.corpus.questions import annotated_rendering

    spans = sorted((a, b, e["rank"]) for e, mentions in chains for a, b, _ in mentions)
    if not spans:
        return ""
    best_lo, best_n, j = spans[0][0], 0, 0
    for i, (start, _, _) in enumerate(spans):  # two pointers: most mentions inside one window
        while spans[j][0] < start - window:
            j += 1
        if i - j + 1 > best_n:
            best_n, best_lo = i - j + 1, spans[j][0]
    lo = text.rfind("\n\n", 0, best_lo) + 2 if text.rfind("\n\n", 0, best_lo) >= 0 else best_lo
    hi = min(len(text), max(lo + window, best_lo + window))
    inside = [(a - lo, b - lo, n) for a, b, n in spans if lo <= a and b <= hi]
    return annotated_rendering(text[lo:hi], inside)
