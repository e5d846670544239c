"""Provider batch jobs (``llm_batches``): what was submitted, under which provider ids, how far.

A row is written before anything is sent and updated as the job moves (file uploaded, batch
created, status seen, results stored), each step in its own short transaction, so a process
killed at any point leaves a row that the next run continues from (``lsqa.llm.batch``).
"""

from __future__ import annotations

from typing import Sequence

import duckdb

OPEN = ("uploading", "submitted")  # not yet finished: a rerun picks these up
_FIELDS = ("id", "model", "transport", "cache_keys", "status", "input_file_id", "batch_id", "provider_status",
           "output_file_id", "error_file_id", "error", "run_id")
_UPDATABLE = frozenset(_FIELDS) - {"id", "model", "transport", "cache_keys"}


def add_batch(con: duckdb.DuckDBPyConnection, row_id: str, model: str, transport: str, cache_keys: Sequence[str],
              run_id: int | None, *, ledger: str | None = None, bound_usd: float | None = None) -> None:
    """A new batch row; ``ledger`` and ``bound_usd``: the study budget that pays for it and the most
    its calls can cost (counted in the ledger while the batch is open, ``lsqa.store.runs.study_spent``)."""
    con.execute("INSERT INTO llm_batches (id, model, transport, cache_keys, status, run_id, ledger, bound_usd) "
                "VALUES (?, ?, ?, ?, 'uploading', ?, ?, ?)", [row_id, model, transport, list(cache_keys), run_id,
                                                             ledger, bound_usd])


def update_batch(con: duckdb.DuckDBPyConnection, row_id: str, **fields) -> None:
    """Set ``fields`` of batch row ``row_id`` (lsqa's id; ``batch_id`` is the provider's)."""
    unknown = set(fields) - _UPDATABLE
    if unknown:
        raise ValueError(f"llm_batches has no updatable column {', '.join(sorted(unknown))}")
    sets = ", ".join(f"{name} = ?" for name in fields)
    con.execute(f"UPDATE llm_batches SET {sets}, updated_at = now() WHERE id = ?", [*fields.values(), row_id])


def open_batches(con: duckdb.DuckDBPyConnection, model: str, transport: str | None = None) -> list[dict]:
    """The unfinished batches of ``model`` sent with ``transport`` (any transport when None), oldest first."""
    cur = con.execute(f"SELECT {', '.join(_FIELDS)} FROM llm_batches WHERE model = ? AND transport = coalesce(?, transport) "
                      "AND status IN (SELECT unnest(?::VARCHAR[])) ORDER BY created_at", [model, transport, list(OPEN)])
    return [dict(zip(_FIELDS, row, strict=False)) for row in cur.fetchall()]


def holding(con: duckdb.DuckDBPyConnection, keys: Sequence[str]) -> dict[str, dict]:
    """The calls among ``keys`` that an unfinished batch holds (any model or transport: a cache key
    names the call, not how it travels), by key: that batch's ``id``, ``batch_id`` (the provider's,
    None before it is created) and ``ledger`` (the study it was sent for)."""
    if not keys:
        return {}
    rows = con.execute("""SELECT key, id, batch_id, ledger
                          FROM (SELECT id, batch_id, ledger, created_at, unnest(cache_keys) AS key FROM llm_batches
                                WHERE status IN (SELECT unnest(?::VARCHAR[])))
                          WHERE key IN (SELECT unnest(?::VARCHAR[])) ORDER BY created_at""",
                       [list(OPEN), list(keys)]).fetchall()
    found: dict[str, dict] = {}
    for key, row_id, batch_id, ledger in rows:
        found.setdefault(key, {"id": row_id, "batch_id": batch_id, "ledger": ledger})
    return found


def get_batch(con: duckdb.DuckDBPyConnection, row_id: str) -> dict | None:
    row = con.execute(f"SELECT {', '.join(_FIELDS)} FROM llm_batches WHERE id = ?", [row_id]).fetchone()
    return dict(zip(_FIELDS, row, strict=False)) if row else None


def list_batches(con: duckdb.DuckDBPyConnection) -> list[dict]:
    """Every batch, newest first (for status displays and tests)."""
    cur = con.execute(f"SELECT {', '.join(_FIELDS)}, created_at, updated_at FROM llm_batches ORDER BY created_at DESC")
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row, strict=False)) for row in cur.fetchall()]
