"""Reads and writes of the LLM call log (``llm_calls``) and of the runs' call and cost totals.

``llm_calls`` is both the cache and the audit log: one row per distinct call (the cache key),
holding the rendered prompt, the raw completion, tokens, cost and latency. Only ``ok`` rows serve
as cache hits. A row is replaced when the same call is made again, except that a failure never
replaces a stored success (``use_cache=False`` that fails keeps the good answer).

All functions take an open connection: callers decide how long they hold the workspace
(``lsqa.store.connect`` / ``write``).
"""

from __future__ import annotations

import datetime as dt
from typing import Iterable, Sequence

import duckdb

from lsqa.store import prompt_texts
from lsqa.store.processes import process_alive, process_started

COLUMNS = (
    "cache_key", "model", "prompt_id", "prompt_version", "messages", "params", "response", "status",
    "error_kind", "error_message", "prompt_tokens", "completion_tokens", "cost_usd", "latency_s",
    "run_id", "attempts", "prompt_parts", "cached_prompt_tokens", "usage_note",
)
_ROW = "(" + ", ".join("?" for _ in COLUMNS) + ")"
_CHUNK = 200
_ON_CONFLICT = (
    " ON CONFLICT (cache_key) DO UPDATE SET "
    + ", ".join(f"{c} = excluded.{c}" for c in COLUMNS if c != "cache_key")
    + ", created_at = now() "
    "WHERE llm_calls.status <> 'ok' OR excluded.status = 'ok'"
)


def _upsert(n_rows: int) -> str:
    return f"INSERT INTO llm_calls ({', '.join(COLUMNS)}) VALUES " + ", ".join([_ROW] * n_rows) + _ON_CONFLICT

_CACHED = ("cache_key", "model", "response", "prompt_tokens", "completion_tokens", "cost_usd", "latency_s", "attempts",
           "cached_prompt_tokens")


def cached_ok(con: duckdb.DuckDBPyConnection, keys: Iterable[str]) -> dict[str, dict]:
    """The stored successful calls among ``keys``, by key, in one query."""
    keys = list(dict.fromkeys(keys))
    if not keys:
        return {}
    rows = con.execute(
        f"SELECT {', '.join(_CACHED)} FROM llm_calls "
        "WHERE status = 'ok' AND cache_key IN (SELECT unnest(?::VARCHAR[]))",
        [keys],
    ).fetchall()
    return {row[0]: dict(zip(_CACHED, row, strict=False)) for row in rows}


def save_calls(con: duckdb.DuckDBPyConnection, rows: Sequence[dict]) -> None:
    """Insert or replace calls (dicts with the keys of ``COLUMNS``).

    One multi-row statement per ``_CHUNK`` rows: DuckDB's executemany runs one statement per row
    and is ~7× slower, which would keep the workspace locked for most of a busy run.
    """
    latest: dict[str, dict] = {}
    for row in rows:  # one row per key: a statement may not update the same row twice
        seen = latest.get(row["cache_key"])
        if seen is None or not (seen["status"] == "ok" and row["status"] != "ok"):
            latest[row["cache_key"]] = row
    unique = list(latest.values())
    for start in range(0, len(unique), _CHUNK):
        chunk = unique[start : start + _CHUNK]
        con.execute(_upsert(len(chunk)), [row.get(c) for row in chunk for c in COLUMNS])


def get_call(con: duckdb.DuckDBPyConnection, cache_key: str) -> dict | None:
    """One stored call, every column, or None; ``messages`` is the prompt as sent even when it is
    stored as parts."""
    cur = con.execute("SELECT * FROM llm_calls WHERE cache_key = ?", [cache_key])
    row = cur.fetchone()
    if row is None:
        return None
    call = dict(zip([d[0] for d in cur.description], row, strict=False))
    call["messages"] = prompt_texts.messages_json(con, call["messages"], call["prompt_parts"])
    return call


def add_to_run(
    con: duckdb.DuckDBPyConnection,
    run_id: int,
    *,
    made: int = 0,
    cached: int = 0,
    failed: int = 0,
    prompt_tokens: int = 0,
    completion_tokens: int = 0,
    cached_prompt_tokens: int = 0,
    cost_usd: float | None = None,
    cost_unknown: int = 0,
) -> None:
    """Add call counts and costs to run ``run_id``. ``runs.cost_usd`` is the sum of the known
    prices (NULL until one is known); ``calls_cost_unknown`` counts the calls without a price;
    ``cached_prompt_tokens`` the prompt tokens served from the providers' prompt caches. A
    negative or NaN cost is refused: a run's spending never goes down (the ledger decreases only
    by a settlement, :func:`settle_in_flight`)."""
    if cost_usd is not None and not cost_usd >= 0:
        raise ValueError(f"run {run_id}: a call cost of {cost_usd!r} USD cannot be recorded (spending never goes down)")
    con.execute(
        "UPDATE runs SET calls_made = calls_made + ?, calls_cached = calls_cached + ?, "
        "calls_failed = calls_failed + ?, prompt_tokens = prompt_tokens + ?, "
        "completion_tokens = completion_tokens + ?, cached_prompt_tokens = cached_prompt_tokens + ?, "
        "calls_cost_unknown = calls_cost_unknown + ?, "
        "cost_usd = CASE WHEN ?::DOUBLE IS NULL THEN cost_usd ELSE coalesce(cost_usd, 0) + ?::DOUBLE END "
        "WHERE id = ?",
        [made, cached, failed, prompt_tokens, completion_tokens, cached_prompt_tokens, cost_unknown, cost_usd,
         cost_usd, run_id],
    )


def run_call_totals(con: duckdb.DuckDBPyConnection, run_id: int) -> dict | None:
    """The call counters of run ``run_id`` as :func:`add_to_run` keeps them."""
    fields = ("calls_made", "calls_cached", "calls_failed", "prompt_tokens", "completion_tokens",
              "cached_prompt_tokens", "cost_usd", "calls_cost_unknown")
    row = con.execute(f"SELECT {', '.join(fields)} FROM runs WHERE id = ?", [run_id]).fetchone()
    return None if row is None else dict(zip(fields, row, strict=False))


def cost_of_runs(con, run_ids: list[int]) -> dict:
    """LLM calls and cost recorded by these runs (a running job's own, so far)."""
    row = con.execute("""
        SELECT count(*), count(*) FILTER (WHERE status <> 'ok'), sum(cost_usd),
               count(*) FILTER (WHERE cost_usd IS NULL AND status = 'ok')
        FROM llm_calls WHERE list_contains(?, run_id)""", [[int(i) for i in run_ids]]).fetchone()
    return {"calls": int(row[0]), "failed": int(row[1]), "cost_usd": float(row[2] or 0.0),
            "calls_unpriced": int(row[3])}


# ---------------------------------------------------------------------------------------------
# Claims on calls in flight: two runs of one study never pay for a call twice
# ---------------------------------------------------------------------------------------------


def _claim_is_stale(row: tuple, now, host: str) -> bool:
    """Whether a claim may be taken over. On this host the claiming process itself says so: the
    claim is live exactly while that process exists (and is the one that claimed: a process id
    reused by a process started after the claim does not count). Expiry is for claims of other
    hosts only: on one host, a run slowed down by a loaded machine (its renewals late, or waiting
    for the workspace) keeps its claims, where an expiry would let a second run make them again."""
    _, claim_host, pid, expires_at, claimed_at = row
    if claim_host == host:
        if not process_alive(int(pid)):
            return True
        started = process_started(int(pid))
        return started is not None and claimed_at is not None and started > claimed_at + dt.timedelta(seconds=2)
    return expires_at < now


def claim_calls(con: duckdb.DuckDBPyConnection, keys: Sequence[str], owner: str, host: str, pid: int,
                now, expires_at) -> set[str]:
    """Claim ``keys`` for ``owner``; return those it holds now. A key claimed by another live
    owner whose claim has not expired stays theirs (the caller waits for its result). A key
    whose call is stored already is not claimed either (the caller takes it from the cache):
    another run may have made and stored it, and released its claim, after the caller looked
    in the cache — under load that window is the wait for the workspace while the other run
    writes its results, and claiming then made every call twice."""
    keys = list(dict.fromkeys(keys))
    if not keys:
        return set()
    stored = {r[0] for r in con.execute(
        "SELECT cache_key FROM llm_calls WHERE status = 'ok' AND cache_key IN (SELECT unnest(?::VARCHAR[]))",
        [keys]).fetchall()}
    keys = [k for k in keys if k not in stored]
    held = {r[0]: r[1:] for r in con.execute(
        "SELECT cache_key, owner, host, pid, expires_at, claimed_at FROM call_claims "
        "WHERE cache_key IN (SELECT unnest(?::VARCHAR[]))", [keys]).fetchall()}
    take = [k for k, row in held.items() if row[0] == owner or _claim_is_stale(row, now, host)]
    free = [k for k in keys if k not in held]
    if take:
        con.execute("DELETE FROM call_claims WHERE cache_key IN (SELECT unnest(?::VARCHAR[]))", [take])
    mine = take + free
    for start in range(0, len(mine), _CHUNK):
        chunk = mine[start:start + _CHUNK]
        con.execute("INSERT INTO call_claims (cache_key, owner, host, pid, claimed_at, expires_at) VALUES "
                    + ", ".join(["(?, ?, ?, ?, ?, ?)"] * len(chunk)),
                    [v for k in chunk for v in (k, owner, host, pid, now, expires_at)])
    return set(mine)


def renew_claims(con: duckdb.DuckDBPyConnection, owner: str, expires_at) -> None:
    con.execute("UPDATE call_claims SET expires_at = ? WHERE owner = ?", [expires_at, owner])


def release_claims(con: duckdb.DuckDBPyConnection, keys: Sequence[str], owner: str) -> None:
    if keys:
        con.execute("DELETE FROM call_claims WHERE owner = ? AND cache_key IN (SELECT unnest(?::VARCHAR[]))",
                    [owner, list(keys)])


def held_by_others(con: duckdb.DuckDBPyConnection, keys: Sequence[str], owner: str, host: str, now) -> set[str]:
    """The keys among ``keys`` on which another owner holds a live claim (see :func:`_claim_is_stale`)."""
    return _live_claims(con, keys, host, now, but_owner=owner)


def claimed_live(con: duckdb.DuckDBPyConnection, keys: Sequence[str], host: str, now) -> set[str]:
    """The keys among ``keys`` that a live claim of any owner holds: calls being sent right now."""
    return _live_claims(con, keys, host, now)


def _live_claims(con, keys: Sequence[str], host: str, now, but_owner: str | None = None) -> set[str]:
    if not keys:
        return set()
    rows = con.execute("SELECT cache_key, owner, host, pid, expires_at, claimed_at FROM call_claims "
                       "WHERE owner IS DISTINCT FROM ? AND cache_key IN (SELECT unnest(?::VARCHAR[]))",
                       [but_owner, list(keys)]).fetchall()
    return {r[0] for r in rows if not _claim_is_stale(r[1:], now, host)}


# ---------------------------------------------------------------------------------------------
# Calls in flight: recorded as sent before they are sent, so a kill cannot hide spend
# ---------------------------------------------------------------------------------------------


def mark_in_flight(con: duckdb.DuckDBPyConnection, rows: Sequence[tuple]) -> None:
    """Record calls about to be sent: ``(cache_key, owner, ledger, bound_usd, run_id)`` each."""
    rows = list(rows)
    for start in range(0, len(rows), _CHUNK):
        chunk = rows[start:start + _CHUNK]
        con.execute("INSERT INTO calls_in_flight (cache_key, owner, ledger, bound_usd, run_id) VALUES "
                    + ", ".join(["(?, ?, ?, ?, ?)"] * len(chunk)), [v for row in chunk for v in row])


def resolve_in_flight(con: duckdb.DuckDBPyConnection, keys: Sequence[str], owner: str) -> None:
    """The calls ``keys`` of ``owner`` came back and are stored (their cost is in their run's row)."""
    if keys:
        con.execute("DELETE FROM calls_in_flight WHERE owner = ? AND cache_key IN (SELECT unnest(?::VARCHAR[]))",
                    [owner, list(keys)])


def in_flight_spend(con: duckdb.DuckDBPyConnection, ledger: str, but_owner: str | None = None) -> tuple[float, int]:
    """(USD, calls) of the calls of ``ledger`` sent and not stored, at their most — those of processes
    killed while the calls were out (the provider may have charged them) and of other runs going on
    now — leaving out ``but_owner``'s own."""
    row = con.execute("SELECT coalesce(sum(bound_usd), 0), count(*) FROM calls_in_flight WHERE ledger = ? "
                      "AND owner IS DISTINCT FROM ?", [ledger, but_owner]).fetchone()
    return float(row[0]), int(row[1])


def _owner_dead(owner: str, host: str) -> bool | None:
    """Whether the process ``owner`` (host:pid:nonce) is gone: True/False on this host, None on another
    (it cannot be checked from here). A reused process id reads as alive (spend kept, never released)."""
    parts = owner.split(":")
    if len(parts) < 3 or ":".join(parts[:-2]) != host:
        return None
    try:
        return not process_alive(int(parts[-2]))
    except ValueError:
        return None


def stranded_in_flight(con: duckdb.DuckDBPyConnection, host: str, ledger: str | None = None) -> list[dict]:
    """Calls recorded as sent whose run died before storing their answers, per ledger: ``{"ledger",
    "calls", "bound_usd", "first_sent_at", "last_sent_at", "owners", "dead"}`` — ``dead`` True for
    processes of this host that are gone (these :func:`settle_in_flight` can release), False for
    another host's (nobody can tell here whether they still run). Live processes' calls are left out."""
    rows = con.execute("SELECT ledger, owner, count(*), sum(bound_usd), min(sent_at), max(sent_at) "
                       "FROM calls_in_flight WHERE ledger = coalesce(?, ledger) GROUP BY ledger, owner "
                       "ORDER BY ledger, min(sent_at)", [ledger]).fetchall()
    out: dict[tuple[str, bool], dict] = {}
    for led, owner, n, usd, first, last in rows:
        dead = _owner_dead(owner, host)
        if dead is False:
            continue
        entry = out.setdefault((led, bool(dead)), {"ledger": led, "calls": 0, "bound_usd": 0.0, "first_sent_at": first,
                                                   "last_sent_at": last, "owners": [], "dead": bool(dead)})
        entry["calls"] += int(n)
        entry["bound_usd"] += float(usd or 0.0)
        entry["first_sent_at"] = min(entry["first_sent_at"], first)
        entry["last_sent_at"] = max(entry["last_sent_at"], last)
        entry["owners"].append(owner)
    return list(out.values())


def settle_in_flight(con: duckdb.DuckDBPyConnection, ledger: str, host: str, settled_by: str) -> dict | None:
    """Release the calls of ``ledger`` that dead processes of this host recorded as sent and never
    stored, and keep the release in ``ledger_settlements`` (the only way the ledger goes down), in
    the caller's transaction. The settlement row, or None when there was nothing to release."""
    import json
    import uuid

    found = [s for s in stranded_in_flight(con, host, ledger) if s["dead"]]
    if not found:
        return None
    (entry,) = found
    con.execute("DELETE FROM calls_in_flight WHERE ledger = ? AND owner IN (SELECT unnest(?::VARCHAR[]))",
                [ledger, entry["owners"]])
    row = {"id": uuid.uuid4().hex, "ledger": ledger, "settled_by": settled_by, "calls": entry["calls"],
           "released_usd": entry["bound_usd"], "first_sent_at": entry["first_sent_at"],
           "last_sent_at": entry["last_sent_at"], "owners": json.dumps(entry["owners"])}
    con.execute("INSERT INTO ledger_settlements (id, ledger, settled_by, calls, released_usd, first_sent_at, "
                "last_sent_at, owners) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", list(row.values()))
    return row


def known_ledgers(con: duckdb.DuckDBPyConnection) -> set[str]:
    """Every study id the workspace knows: of its runs, its calls in flight and its settlements."""
    return {r[0] for r in con.execute(
        "SELECT ledger FROM calls_in_flight UNION SELECT ledger FROM ledger_settlements UNION "
        "SELECT json_extract_string(config, '$.study_id') FROM runs").fetchall() if r[0]}
