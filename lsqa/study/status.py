"""What a workspace holds, for ``lsqa status``: rows per table and per pipeline run."""

from __future__ import annotations

import socket
from pathlib import Path

from lsqa import store
from lsqa.errors import LsqaError
from lsqa.store import llm_calls
from lsqa.store import runs as runs_store


def workspace_status(workspace: Path) -> dict:
    """``{"tables": {table: rows}, "runs": [per stage and status: runs, calls, cost], "read_only",
    "stranded": [per study: calls recorded as sent by runs that died before storing them]}``
    (:func:`lsqa.store.llm_calls.stranded_in_flight`; released only by :func:`settle_ledger`).

    Runs whose process died are marked interrupted first, so a killed run is not reported as running
    (not in a read-only workspace, which is reported as it is).
    """
    read_only = store.is_read_only(workspace)
    with store.connect(workspace) as con, store.transaction(con):
        if not read_only:
            runs_store.close_abandoned_runs(con)
        return {"tables": runs_store.table_counts(con), "runs": runs_store.run_counts(con), "read_only": read_only,
                "stranded": llm_calls.stranded_in_flight(con, socket.gethostname())}


CANNOT_KNOW = ("lsqa cannot know whether the provider answered (and charged) these calls: the runs died "
               "before any answer was stored. If it did, releasing them lets the budget spend that money "
               "again; check the provider's usage for the times above first.")


def _ledger_of(con, study: str) -> str:
    """The ledger (study id) ``study`` names: a study config file, or a study id as `lsqa status` shows it."""
    path = Path(study)
    if study and path.is_file():
        from lsqa.config.study import load_run_config
        from lsqa.study.pipeline import study_id

        return study_id(load_run_config(path))
    if study not in llm_calls.known_ledgers(con):
        raise LsqaError(f"study {study!r} is not a study of this workspace: give a study config file or a "
                        f"study id that `lsqa status` lists under stranded spend")
    return study


def settle_ledger(workspace: Path, study: str, *, by="", confirm: bool = False) -> dict:
    """What the stranded calls of ``study`` are (:func:`workspace_status`'s ``stranded`` entry) and,
    with ``confirm``, their release: their worst cases leave the study's ledger, and the release is
    kept in ``ledger_settlements`` (``{"ledger", "calls", "bound_usd", "first_sent_at",
    "last_sent_at", "released": bool, "cannot_know"}``). Only calls of dead processes of this host
    are released; another host's are not (nobody can tell here whether they still run).

    ``by``: who settles — in a workspace with people an admin (``lsqa.team.roles``, the ``run``
    permission, checked in the writing transaction); the command line passes nobody and acts as the
    workspace's owner, as ``lsqa users`` does. LsqaError when there is nothing to settle."""
    from lsqa.team import acting

    host = socket.gethostname()
    with store.write(workspace) as con:
        settled_by = (acting(con, by, "run")[0] or "(one-person workspace)") if by else "(command line)"
        ledger = _ledger_of(con, study)
        entries = llm_calls.stranded_in_flight(con, host, ledger)
        dead = [e for e in entries if e["dead"]]
        if not dead:
            elsewhere = sum(e["calls"] for e in entries)
            why = (f"its {elsewhere} call(s) in flight were sent from another host, which cannot be checked from "
                   "here" if elsewhere else "no run of it died with calls in flight")
            raise LsqaError(f"study {ledger} has nothing to settle: {why}")
        (entry,) = dead
        out = {"ledger": ledger, "calls": entry["calls"], "bound_usd": entry["bound_usd"],
               "first_sent_at": entry["first_sent_at"], "last_sent_at": entry["last_sent_at"],
               "released": False, "cannot_know": CANNOT_KNOW}
        if confirm:
            llm_calls.settle_in_flight(con, ledger, host, settled_by)
            out["released"] = True
    return out
