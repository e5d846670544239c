"""Sentence embeddings stored in the workspace, keyed by (encoder, SHA-256 of the text) (migration 0011)."""

from __future__ import annotations

from typing import Iterable

import duckdb
import numpy as np

_CHUNK = 500


def stored_vectors(con: duckdb.DuckDBPyConnection, model: str, shas: Iterable[str]) -> dict[str, np.ndarray]:
    """The stored vectors among ``shas`` for ``model`` (missing ones are absent from the result)."""
    shas = list(dict.fromkeys(shas))
    if not shas:
        return {}
    rows = con.execute("SELECT text_sha256, vector FROM text_embeddings WHERE model = ? "
                       "AND text_sha256 IN (SELECT unnest(?::VARCHAR[]))", [model, shas]).fetchall()
    return {sha: np.asarray(vector, dtype=np.float32) for sha, vector in rows}


def save_vectors(con: duckdb.DuckDBPyConnection, model: str, vectors: dict[str, np.ndarray]) -> None:
    """Store vectors not stored yet (a concurrent writer of the same text wrote the same vector)."""
    items = sorted(vectors.items())
    for start in range(0, len(items), _CHUNK):
        chunk = items[start:start + _CHUNK]
        con.execute("INSERT INTO text_embeddings (model, text_sha256, vector) VALUES "
                    + ", ".join(["(?, ?, ?)"] * len(chunk)) + " ON CONFLICT DO NOTHING",
                    [v for sha, vec in chunk for v in (model, sha, [float(x) for x in vec])])
