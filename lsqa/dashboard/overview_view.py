"""The Overview screen: what the workspace holds, the latest runs, and where audit work is waiting."""

from __future__ import annotations

from pathlib import Path

from lsqa import store
from lsqa.store import audit_queue as queue_store
from lsqa.store import corpus as corpus_store
from lsqa.store import reviews as reviews_store
from lsqa.store import runs as runs_store
from lsqa.store.workspace_cache import kept_while_unchanged


def overview(workspace: Path) -> dict:
    """Counts, recent runs with their cost and status, and where audit work is waiting."""
    with store.connect(workspace) as con:
        # Read each time: a run's status also depends on whether its process is still alive.
        runs = runs_store.recent_runs(con, 10)
    return {**_overview_counts(workspace), "runs": runs}


@kept_while_unchanged()
def _overview_counts(workspace: Path) -> dict:
    with store.connect(workspace) as con:
        counts = runs_store.overview_counts(con)
        documents = corpus_store.list_documents(con)
        work = queue_store.audit_work(con)
        people = reviews_store.annotator_progress(con)
        table_counts = runs_store.table_counts(con)
    for r in work:
        r["reviewed %"] = round(100 * r["reviewed"] / r["verdicts"], 1) if r["verdicts"] else 0.0
    return {"counts": counts, "documents": documents, "audit_work": work, "annotators": people,
            "tables": table_counts}
