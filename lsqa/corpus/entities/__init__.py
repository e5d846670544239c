"""Entities and their coreference chains in a book (paper §2, "Entity extraction and co-reference resolution").

The paper ranks a book's entities by how often they are mentioned (named or by pronoun) and uses
each entity's chain to pick passages for question generation (footnote 1). Two back ends give the
same :class:`EntityChains`:

- ``fastcoref``: FCoref / LingMessCoref loaded lazily from a local folder (``Settings.coref_model_path``),
  run over the book in overlapping chunks (:mod:`lsqa.corpus.entities.coref`);
- ``fallback``: built-in rules, no model, seconds for a 570k-word book (:mod:`lsqa.corpus.entities.fallback`).

``extract_entities`` picks the back end: an explicit ``model_path``, else ``settings.coref_model_path``,
else the fallback. It never reads a settings file by itself: callers pass the settings they loaded.
"""

from __future__ import annotations

from lsqa.corpus.entities.chain_passages import entity_context, entity_context_text
from lsqa.corpus.entities.types import Entity, EntityChains, Mention
from lsqa.errors import LsqaError

__all__ = ["Entity", "EntityChains", "Mention", "entity_context", "entity_context_text", "extract_entities"]


METHODS = ("auto", "fastcoref", "fallback")


def extract_entities(text: str, start: int = 0, end: int | None = None, *, settings=None,
                     model_path: str | None = None, model_kind: str | None = None, method: str = "auto",
                     top_k: int | None = None) -> EntityChains:
    """Entities of ``text[start:end]`` ranked by mention count; mention offsets index ``text``.

    ``method='auto'``: ``model_path`` (or ``settings.coref_model_path``) selects fastcoref with
    ``model_kind`` (``'fcoref'`` | ``'lingmess'``, default from settings, else ``'fcoref'``); with
    neither, the built-in fallback runs. ``'fallback'`` always runs the fallback; ``'fastcoref'``
    needs a model path. A configured path that does not hold a model raises ``InputError``
    rather than silently falling back.
    """
    end = len(text) if end is None else end
    if not 0 <= start <= end <= len(text):
        raise ValueError(f"span [{start}, {end}) is outside a text of {len(text)} characters")
    if method not in METHODS:
        raise ValueError(f"entity method must be one of {METHODS}, not {method!r}")
    path = model_path or (getattr(settings, "coref_model_path", "") if settings is not None else "")
    if method == "fastcoref" and not path:
        raise LsqaError("entity method 'fastcoref' needs a model: set coref_model_path in the settings file "
                        "to a local FCoref/LingMessCoref folder, or use the fallback")
    if path and method != "fallback":
        from lsqa.corpus.entities import coref

        kind = model_kind or (getattr(settings, "coref_model_kind", "") if settings is not None else "") or "fcoref"
        return coref.extract(text, start, end, model_path=path, model_kind=kind, top_k=top_k)
    from lsqa.corpus.entities import fallback

    return fallback.extract(text, start, end, top_k=top_k)
