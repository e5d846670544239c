"""What the dashboard pages ask for, as plain data: pages stay thin, lsqa stays free of streamlit."""

from __future__ import annotations

from pathlib import Path

from lsqa import store
from lsqa.config import resolve_workspace
from lsqa.store import corpus as corpus_store
from lsqa.store import runs as runs_store


def workspace() -> Path:
    return resolve_workspace()


def overview(ws: Path) -> dict:
    with store.connect(ws) as con:
        counts = runs_store.table_counts(con)
        documents = corpus_store.list_documents(con)
    shown = {k: counts[k] for k in ("documents", "questions", "systems", "answers", "judgments", "human_reviews",
                                    "reference_flags")}
    return {"counts": shown, "documents": documents}
