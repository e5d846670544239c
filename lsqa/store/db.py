"""Workspace connections and schema migrations.

DuckDB lets one process hold a database file read-write, and a second process cannot even open
it read-only while that is so. The dashboard and the command line share one workspace file, so
every unit of work here opens a short-lived connection, does its work in one transaction and
closes it; a process that finds the file locked waits and retries (``connect``).

Within one process, every workspace is attached to one long-lived in-memory DuckDB instance (the
*host*) while at least one connection uses it, and detached (checkpointed, file lock released)
when the last one closes. Connections are cursors of the host, so threads of one process share
the attached file as they would share one DuckDB instance. Starting a DuckDB instance costs
~15 ms of CPU; attaching a file to the live host ~3 ms (docs/BENCHMARKS.md, "Workspace
connections"), and lsqa opens many short connections.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import random
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

import duckdb

from lsqa.errors import WorkspaceError
from lsqa.package_files import MIGRATIONS, shipped_folder

log = logging.getLogger("lsqa.store")

MIGRATIONS_DIR = shipped_folder(MIGRATIONS)  # db/migrations/ of the repository

# How long a caller waits for another process to release the workspace before giving up.
DEFAULT_LOCK_TIMEOUT_S = 60.0

_migrated: set[str] = set()
_migrate_lock = threading.Lock()


class MigrationChanged(WorkspaceError):
    """An applied migration's file no longer has the checksum it had when it was applied."""


def _is_lock_error(exc: Exception) -> bool:
    text = str(exc)
    return "Could not set lock" in text or "Conflicting lock" in text


# ---------------------------------------------------------------------------------------------
# The host instance and the files attached to it
# ---------------------------------------------------------------------------------------------


@dataclass
class _Attachment:
    """One workspace file on the host: its catalog name and how many connections use it."""

    alias: str
    users: int = 0
    attached: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)  # attach/detach of this file, one at a time


_host_lock = threading.Lock()  # the host connection object and the table of attachments
_host: duckdb.DuckDBPyConnection | None = None
_attachments: dict[str, _Attachment] = {}
_inherited_hosts: list[duckdb.DuckDBPyConnection] = []  # see _forget_host_in_child


def _current_host() -> duckdb.DuckDBPyConnection:
    """This process's host (created on first use). Call with ``_host_lock`` held."""
    global _host
    if _host is None:
        _host = duckdb.connect(":memory:")
    return _host


def _host_cursor() -> duckdb.DuckDBPyConnection:
    """A new connection to this process's host instance."""
    with _host_lock:
        return _current_host().cursor()


def _attachment(path: str) -> _Attachment:
    with _host_lock:
        entry = _attachments.get(path)
        if entry is None:
            entry = _attachments[path] = _Attachment("ws_" + hashlib.sha1(path.encode()).hexdigest()[:16])
        return entry


# DuckDB is not fork-safe: a child that frees an instance copied by fork crashes, and one that
# exits normally with such an instance alive hangs. Before a fork the host is closed if no
# connection is using it (it comes back on the next connect); the child forgets whatever it
# inherited without freeing it and starts a host of its own.
def _close_idle_host_before_fork() -> None:
    global _host
    if not _host_lock.acquire(timeout=1.0):
        return
    try:
        if _host is not None and not any(e.users or e.attached for e in _attachments.values()):
            _host.close()
            _host = None
            _attachments.clear()
    finally:
        _host_lock.release()


def _forget_host_in_child() -> None:
    global _host, _attachments, _host_lock, _migrate_lock
    if _host is not None:
        _inherited_hosts.append(_host)  # kept referenced: never freed in this process
    _host, _attachments = None, {}
    # Another thread of the parent may have held these at the fork; in the child it never lets go.
    _host_lock, _migrate_lock = threading.Lock(), threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_close_idle_host_before_fork, after_in_child=_forget_host_in_child)


def _attach(path: str, alias: str, timeout_s: float) -> None:
    """ATTACH ``path``, waiting (with jittered backoff) while another process holds its lock."""
    deadline = time.monotonic() + timeout_s
    delay = 0.02
    quoted = path.replace("'", "''")
    while True:
        cur = _host_cursor()
        try:
            cur.execute(f"ATTACH '{quoted}' AS {alias}")
            return
        except duckdb.Error as exc:
            if f'already attached by database "{alias}"' in str(exc):
                return  # by us: an interrupt (Ctrl-C) came between an earlier ATTACH and its bookkeeping
            if not _is_lock_error(exc) or time.monotonic() > deadline:
                if _is_lock_error(exc):
                    raise WorkspaceError(
                        f"workspace {path} stayed locked by another process for {timeout_s:.0f} s; "
                        "wait for that process (a pipeline run or the dashboard) or raise "
                        "LSQA_LOCK_TIMEOUT"
                    ) from exc
                raise
        finally:
            cur.close()
        # Jitter so two waiting processes do not retry in lock-step.
        time.sleep(delay * (0.5 + random.random()))
        delay = min(delay * 2, 0.5)


def _acquire(path: str, timeout_s: float) -> _Attachment:
    entry = _attachment(path)
    with entry.lock:
        entry.users += 1  # counted before attaching: a fork meanwhile must not see an idle host
        try:
            if not entry.attached:
                _attach(path, entry.alias, timeout_s)
                entry.attached = True
        except BaseException:
            entry.users -= 1
            raise
    return entry


def _release(entry: _Attachment) -> None:
    with entry.lock:
        entry.users -= 1
        if entry.users == 0 and entry.attached:
            cur = _host_cursor()
            try:
                cur.execute(f"DETACH {entry.alias}")  # checkpoints the WAL and frees the file lock
                entry.attached = False
            except duckdb.Error as exc:
                # Still attached: the next connection uses it and tries again when it closes.
                # Raising here would hide whatever the connection's own block raised.
                log.warning("could not detach workspace (%s); retried when the next connection closes", exc)
            finally:
                cur.close()


@contextlib.contextmanager
def connect(path: str | Path, *, timeout_s: float | None = None) -> Iterator[duckdb.DuckDBPyConnection]:
    """Open the workspace at ``path`` (migrated on first use), yield a connection, close it.

    Keep the block short: while it is open, no other process can use the workspace.
    """
    if timeout_s is None:
        timeout_s = float(os.environ.get("LSQA_LOCK_TIMEOUT", DEFAULT_LOCK_TIMEOUT_S))
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    key = str(Path(path).resolve())
    entry = _acquire(key, timeout_s)
    try:
        con = _host_cursor()
        try:
            con.execute(f"USE {entry.alias}")
            # The cache saves re-reading the migration files; a file deleted and created again under
            # the same path (a reset workspace) has no schema and must be migrated all the same.
            if key not in _migrated or not _has_schema(con):
                with _migrate_lock:
                    migrate(con)
                    _migrated.add(key)
            yield con
        finally:
            con.close()
    finally:
        _release(entry)


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
            _data_step(path.name, con)
            con.execute("INSERT INTO schema_migrations (name, sha256) VALUES (?, ?)", [path.name, digest])
        done.append(path.name)
    return done


def _data_step(name: str, con: duckdb.DuckDBPyConnection) -> None:
    """Moves of stored data that SQL alone cannot do, run in the migration's transaction."""
    if name.startswith("0006_"):
        from lsqa.store.prompt_texts import compact_stored_calls

        compact_stored_calls(con)


def forget_migrated(path: str | Path | None = None) -> None:
    """Make the next ``connect`` check migrations again (tests that edit migration folders)."""
    if path is None:
        _migrated.clear()
    else:
        _migrated.discard(str(Path(path).resolve()))
