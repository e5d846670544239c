"""Bulk inserts and row reads shared by every area of the store.

Rows go in as one Arrow table per call (``INSERT … BY NAME``): thousands of rows cost one
statement, not thousands, and a column missing from the rows takes the table's default.
"""

from __future__ import annotations

import contextlib
import itertools
from typing import Iterable, Iterator, Mapping

import duckdb

_counter = itertools.count()


def insert_rows(
    con: duckdb.DuckDBPyConnection,
    table: str,
    rows: Iterable[Mapping],
    *,
    on_conflict: str = "nothing",
    key: tuple[str, ...] = (),
    computed: Mapping[str, str] | None = None,
) -> int:
    """Insert ``rows`` into ``table``; return how many were inserted.

    ``computed``: columns the rows do not carry, as SQL over the ones they do (the verdicts' ``id_number``:
    a 128-bit number that Arrow cannot hold).

    ``on_conflict``: ``"nothing"`` keeps the existing row (idempotent re-runs), ``"replace"``
    overwrites the row with the same ``key`` columns (a re-computation), ``"error"`` raises.
    Replace is delete-then-insert inside the caller's transaction: DuckDB's own upsert needs a
    single conflict target, and some tables have a natural key besides their id.
    """
    if on_conflict == "replace" and not key:
        raise ValueError("on_conflict='replace' needs the key columns")
    # Arrow takes its columns from the first row, so rows with different key sets go in as
    # separate groups; a key left out of a row means "the table's default", not NULL.
    groups: dict[tuple[str, ...], list[dict]] = {}
    for r in rows:
        groups.setdefault(tuple(r), []).append(dict(r))
    suffix = " ON CONFLICT DO NOTHING" if on_conflict == "nothing" else ""
    # pyarrow only here: the row reads below are also what signing in asks on every page.
    import pyarrow as pa

    inserted = 0
    for group in groups.values():
        with registered(con, pa.Table.from_pylist(group)) as name:
            if on_conflict == "replace":
                cols = ", ".join(key)
                con.execute(f"DELETE FROM {table} WHERE ({cols}) IN (SELECT ({cols}) FROM {name})")
            extra = "".join(f", {sql} AS {column}" for column, sql in (computed or {}).items())
            result = con.execute(f"INSERT INTO {table} BY NAME SELECT *{extra} FROM {name}{suffix}").fetchone()
        inserted += int(result[0]) if result else 0
    return inserted


@contextlib.contextmanager
def registered(con: duckdb.DuckDBPyConnection, table, name: str | None = None) -> Iterator[str]:
    """The name under which ``con`` reads ``table`` (an Arrow table) for the block: ``name``, or one of its own."""
    name = name or f"_lsqa_rows_{next(_counter)}"
    con.register(name, table)
    try:
        yield name
    finally:
        try:
            con.unregister(name)
        except duckdb.Error:
            pass  # an aborted transaction refuses this too; the statement's own error is what matters


def fetch_dicts(con: duckdb.DuckDBPyConnection, sql: str, params: list | tuple | dict = ()) -> list[dict]:
    """Rows as dicts; ``params`` positional (``?``) or named (``$name``, a dict)."""
    cur = con.execute(sql, params if isinstance(params, dict) else list(params))
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row, strict=False)) for row in cur.fetchall()]
