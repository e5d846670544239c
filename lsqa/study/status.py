"""What a workspace holds, for ``lsqa status``: rows per table and per pipeline run."""

from __future__ import annotations

from pathlib import Path

from lsqa import store
from lsqa.store import runs as runs_store


def workspace_status(workspace: Path) -> dict:
    """``{"tables": {table: rows}, "runs": [per stage and status: runs, calls, cost], "read_only"}``.

    Runs whose process died are marked interrupted first, so a killed run is not reported as running
    (not in a read-only workspace, which is reported as it is).
    """
    read_only = store.is_read_only(workspace)
    with store.connect(workspace) as con, store.transaction(con):
        if not read_only:
            runs_store.close_abandoned_runs(con)
        return {"tables": runs_store.table_counts(con), "runs": runs_store.run_counts(con), "read_only": read_only}
