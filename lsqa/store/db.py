"""Workspace connections and schema migrations.

DuckDB lets one process hold a database file read-write, and a second process cannot even open
it read-only while that is so. The dashboard and the command line share one workspace file, so
every unit of work here opens a short-lived connection, does its work in one transaction and
closes it; a process that finds the file locked waits and retries (``connect``). Within one
process DuckDB shares one database instance between connections to the same path.
"""

from __future__ import annotations

import contextlib
import hashlib
import random
import threading
import time
from pathlib import Path
from typing import Iterator

import duckdb

MIGRATIONS_DIR = Path(__file__).resolve().parents[2] / "db" / "migrations"

# How long a caller waits for another process to release the workspace before giving up.
DEFAULT_LOCK_TIMEOUT_S = 60.0

_migrated: set[str] = set()
_migrate_lock = threading.Lock()


class WorkspaceError(RuntimeError):
    """A problem with the workspace file itself (locked too long, edited migration, ...)."""


class MigrationChanged(WorkspaceError):
    """An applied migration's file no longer has the checksum it had when it was applied."""


def _is_lock_error(exc: Exception) -> bool:
    text = str(exc)
    return "Could not set lock" in text or "Conflicting lock" in text


def _open(path: str, timeout_s: float) -> duckdb.DuckDBPyConnection:
    deadline = time.monotonic() + timeout_s
    delay = 0.02
    while True:
        try:
            return duckdb.connect(path)
        except duckdb.IOException as exc:
            if not _is_lock_error(exc) or time.monotonic() > deadline:
                if _is_lock_error(exc):
                    raise WorkspaceError(
                        f"workspace {path} stayed locked by another process for {timeout_s:.0f} s; "
                        "wait for that process (a pipeline run or the dashboard) or raise "
                        "LSQA_LOCK_TIMEOUT"
                    ) from exc
                raise
            # Jitter so two waiting processes do not retry in lock-step.
            time.sleep(delay * (0.5 + random.random()))
            delay = min(delay * 2, 0.5)


@contextlib.contextmanager
def connect(path: str | Path, *, timeout_s: float | None = None) -> Iterator[duckdb.DuckDBPyConnection]:
    """Open the workspace at ``path`` (migrated on first use), yield a connection, close it.

    Keep the block short: while it is open, no other process can use the workspace.
    """
    import os

    path = str(Path(path))
    if timeout_s is None:
        timeout_s = float(os.environ.get("LSQA_LOCK_TIMEOUT", DEFAULT_LOCK_TIMEOUT_S))
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    con = _open(path, timeout_s)
    try:
        key = str(Path(path).resolve())
        # The cache saves re-reading the migration files; a file deleted and created again under
        # the same path (a reset workspace) has no schema and must be migrated all the same.
        if key not in _migrated or not _has_schema(con):
            with _migrate_lock:
                migrate(con)
                _migrated.add(key)
        yield con
    finally:
        con.close()


def _has_schema(con: duckdb.DuckDBPyConnection) -> bool:
    try:
        con.execute("SELECT 1 FROM schema_migrations LIMIT 0").fetchall()
    except duckdb.CatalogException:
        return False
    return True


@contextlib.contextmanager
def transaction(con: duckdb.DuckDBPyConnection) -> Iterator[duckdb.DuckDBPyConnection]:
    """BEGIN … COMMIT, or ROLLBACK on any exception: a failed write leaves nothing behind."""
    con.execute("BEGIN TRANSACTION")
    try:
        yield con
    except BaseException:
        con.execute("ROLLBACK")
        raise
    con.execute("COMMIT")


@contextlib.contextmanager
def write(path: str | Path) -> Iterator[duckdb.DuckDBPyConnection]:
    """A connection with an open transaction: the usual way to change a workspace."""
    with connect(path) as con, transaction(con):
        yield con


def migration_files(directory: Path = MIGRATIONS_DIR) -> list[Path]:
    return sorted(p for p in directory.glob("*.sql") if p.name[:4].isdigit())


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def migrate(con: duckdb.DuckDBPyConnection, directory: Path = MIGRATIONS_DIR) -> list[str]:
    """Apply pending migrations in name order; return the names applied now.

    Each migration runs in one transaction together with its ``schema_migrations`` row, so a
    failure leaves neither. A migration that was applied and whose file changed since is refused:
    applied migrations are history, a change belongs in a new file.
    """
    con.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        " name VARCHAR PRIMARY KEY, sha256 VARCHAR NOT NULL,"
        " applied_at TIMESTAMP NOT NULL DEFAULT current_timestamp)"
    )
    applied = dict(con.execute("SELECT name, sha256 FROM schema_migrations").fetchall())
    done: list[str] = []
    for path in migration_files(directory):
        digest = _sha256(path)
        if path.name in applied:
            if applied[path.name] != digest:
                raise MigrationChanged(
                    f"migration {path.name} was applied to this workspace with sha256 "
                    f"{applied[path.name][:12]}… but the file now has {digest[:12]}…; restore the "
                    "file and put the change in a new migration"
                )
            continue
        with transaction(con):
            con.execute(path.read_text(encoding="utf-8"))
            con.execute("INSERT INTO schema_migrations (name, sha256) VALUES (?, ?)", [path.name, digest])
        done.append(path.name)
    return done


def forget_migrated(path: str | Path | None = None) -> None:
    """Make the next ``connect`` check migrations again (tests that edit migration folders)."""
    if path is None:
        _migrated.clear()
    else:
        _migrated.discard(str(Path(path).resolve()))
