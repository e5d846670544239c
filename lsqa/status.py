"""What a workspace holds, for ``lsqa status``: rows per table and per pipeline run."""

from __future__ import annotations

from pathlib import Path

from lsqa import store
from lsqa.store import runs as runs_store


def workspace_status(workspace: Path) -> dict:
    """``{"tables": {table: rows}, "runs": [per stage and status: runs, calls, cost]}``.

    Runs whose process died are marked interrupted first, so a killed run is not reported as running.
    """
    with store.write(workspace) as con:
        runs_store.close_abandoned_runs(con)
        return {"tables": runs_store.table_counts(con), "runs": runs_store.run_counts(con)}
