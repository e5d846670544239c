"""Workspace connections and schema migrations.

DuckDB lets one process hold a database file read-write, and a second process cannot even open
it read-only while that is so. The dashboard and the command line share one workspace file, so
every unit of work here opens a short-lived connection, does its work in one transaction and
closes it; a process that finds the file locked waits and retries (``connect``).

Within one process, every workspace is attached to one long-lived in-memory DuckDB instance (the
*host*) while at least one connection uses it, and detached (checkpointed, file lock released)
when the last one closes. Connections are cursors of the host, so threads of one process share
the attached file as they would share one DuckDB instance. Attaching a file to the live host costs
a fraction of starting a DuckDB instance (docs/BENCHMARKS.md, "Workspace connections"), and lsqa
opens many short connections.

A process that serves people (the dashboard) may keep a workspace attached for a while after its
last connection closes (``linger``): its next request then skips the ATTACH and the checkpoint of
the DETACH. Another process that finds the file locked says so in a file beside it (``<file>.waiting``)
while it waits, and a lingering process lets go as soon as none of its connections uses the file.

A new workspace is a copy of a *template*, the empty schema made once per process by running the
migrations on a private file (``_template``): migrating each new file step by step costs far more than
writing the bytes of one already migrated, and tests and first runs create many. The copy is published
whole (written under a temporary name beside it, then linked to its path, which fails if the path
appeared meanwhile: then the file found there is opened as any other) and given a queue-signals version
of its own before any connection sees it (``_from_template``).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import logging
import os
import random
import secrets
import shutil
import stat
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

import duckdb

from lsqa.errors import WorkspaceError
from lsqa.package_files import MIGRATIONS, shipped_folder
from lsqa.store import lineage
from lsqa.store.processes import process_alive

log = logging.getLogger("lsqa.store")

MIGRATIONS_DIR = shipped_folder(MIGRATIONS)  # db/migrations/ of the repository

# How long a caller waits for another process to release the workspace before giving up.
DEFAULT_LOCK_TIMEOUT_S = 60.0

_migrated: set[str] = set()
_migrate_lock = threading.Lock()


@dataclass(frozen=True)
class _Template:
    """The bytes of an empty workspace with every migration of ``digests`` applied, and what a copy of
    it changes to be a workspace of its own (``_from_template``)."""

    digests: tuple[tuple[str, str], ...]  # (name, sha256) of each migration file, in order
    data: bytes
    version: str          # its queue_signals_version.version: each copy gets a new one
    applied_until: object  # its latest schema_migrations.applied_at: a copy's become its creation time


# The template of this process (or None when it could not be built for these digests: new workspaces
# are then migrated step by step, which says what is wrong), under _template_lock.
_template_made: _Template | tuple[tuple[str, str], ...] | None = None
_template_lock = threading.Lock()
# Files the template is being built in, attached to the host without an _Attachment: a fork meanwhile
# must not close the host under them (_close_idle_host_before_fork). Under _host_lock.
_private_attached = 0


class DiskFull(WorkspaceError):
    """The disk holding the workspace is full: the write failed and was rolled back."""


def file_problem(exc: BaseException, path) -> WorkspaceError | None:
    """What a DuckDB or OS error says about the workspace file itself, as one line: the disk holding
    it is full (the transaction was rolled back: DuckDB writes a commit to its WAL, and a commit it
    cannot write is not made), or the file is truncated or damaged. None for any other error."""
    text = str(exc)
    if getattr(exc, "errno", None) == errno.ENOSPC or "No space left on device" in text:
        return DiskFull(f"no space left on the disk holding {path}: nothing was written; free some space "
                        "there (or move the workspace) and run the command again")
    lowered = text.lower()
    if isinstance(exc, duckdb.Error) and ("could not read enough bytes" in lowered or "corrupt" in lowered
                                          or "checksum" in lowered or "invalid block" in lowered):
        first = text.splitlines()[0][:200] if text else type(exc).__name__
        return WorkspaceError(f"workspace {path}: the file is truncated or damaged (DuckDB: {first}); restore it "
                              "from a copy, or give another workspace")
    return None


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
    read_only: bool = False     # attached READ_ONLY: the file or its folder cannot be written
    # The schema was seen (or migrated) since this attachment: the file cannot be swapped under an
    # open attachment, so the connections nested in it (a dashboard page's 10-40) skip the check.
    schema_seen: bool = False
    header: bytes = b""  # the file's two database headers when last read while not attached (data_version)
    # The file's version (``_version``) right after this process's last DETACH of it: found the same at
    # the next ATTACH, the file is the one this process left, schema and all (``_acquire``).
    left_as: tuple | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)  # attach/detach of this file, one at a time
    # Opened after ATTACH and closed after DETACH (closing any descriptor of the file drops DuckDB's
    # lock): the headers read through it say whether a DETACH's checkpoint was the only change.
    fd: int | None = None
    # When the last connection closed, on time.monotonic(), while the file stays attached (``linger``).
    idle_since: float | None = None
    # When a waiting process last made this process let go (time.monotonic()): no lingering for a while
    # after, while that process (`lsqa run` in a terminal while the dashboard is open, say) keeps coming back.
    waited_for_at: float | None = None
    # Connections opened, in all and per thread, and those open now per thread.
    opened: int = 0
    opened_by: Counter = field(default_factory=Counter)
    open_by: Counter = field(default_factory=Counter)
    # Writes (``write`` blocks) begun, in all and per thread, and those going on now per thread: a
    # declared write tells from them that no other thread committed between its two ends. Reads in
    # other threads (every other session's page run) do not matter: lsqa writes only through ``write``
    # and ``transaction`` (a bare ``transaction`` counts in ``_bare_commits``).
    writes: int = 0
    writes_by: Counter = field(default_factory=Counter)
    writing_by: Counter = field(default_factory=Counter)
    # Declared writes (``write(..., change=...)``) of this file, one at a time in this process: each is
    # then a step of its own in the lineage, however many sessions decide at once (re-entrant: a write
    # nested in one of the same thread is part of it, as before).
    declared: threading.RLock = field(default_factory=threading.RLock)


_host_lock = threading.Lock()  # the host connection object and the table of attachments
_host: duckdb.DuckDBPyConnection | None = None
_attachments: dict[str, _Attachment] = {}
_inherited_hosts: list[duckdb.DuckDBPyConnection] = []  # see _forget_host_in_child


def _current_host() -> duckdb.DuckDBPyConnection:
    """This process's host (created on first use). Call with ``_host_lock`` held."""
    global _host
    if _host is None:
        # Nothing downloads at run time: a file DuckDB could read with an extension (SQLite, ...)
        # must not make it fetch one. The allocator's background threads hand memory a query freed
        # back to the system: without them what a read of a million verdicts used stayed with the
        # process after it ended, under the arrays the statistics then built (docs/BENCHMARKS.md,
        # "Corrected, certify and report at 1M verdicts").
        config = {"autoinstall_known_extensions": False, "autoload_known_extensions": False,
                  "allocator_background_threads": True}
        threads = duckdb_threads()
        if threads is not None:
            config["threads"] = threads
        _host = duckdb.connect(":memory:", config=config)
    return _host


THREADS_ENV = "LSQA_DUCKDB_THREADS"


def duckdb_threads() -> int | None:
    """How many threads DuckDB may use in this process: ``LSQA_DUCKDB_THREADS`` (a whole number, at least 1),
    or None for DuckDB's own choice (one per core). Where as many processes as cores run lsqa at once (the
    test suite's workers, several dashboards on one machine), each DuckDB's threads past the first only
    compete for the same cores."""
    value = os.environ.get(THREADS_ENV, "").strip()
    if not value:
        return None
    if not value.isdigit() or int(value) < 1:
        raise WorkspaceError(f"{THREADS_ENV}={value!r} is not a whole number of threads, at least 1; "
                             "set it to e.g. 1, or unset it to let DuckDB use every core")
    return int(value)


def _host_cursor() -> duckdb.DuckDBPyConnection:
    """A new connection to this process's host instance."""
    with _host_lock:
        return _current_host().cursor()


# ---------------------------------------------------------------------------------------------
# Lingering: a workspace kept attached between the requests of a serving process
# ---------------------------------------------------------------------------------------------

_linger_s = 0.0  # 0: detach when the last connection closes (every process but a server's)
# A waiting process touches its file on every try (its backoff stays well under this): older ones were
# left by a process that gave up or died, and no longer hold anybody back.
WAITING_FRESH_S = 3.0
# After letting go for a waiter, this process does not linger for this long: another process that uses
# the file often (a run writing its calls) would otherwise wait for the lingering thread at each write.
SHARING_S = 30.0
# How often the lingering thread looks for a waiting process or an ended lingering: each look costs an
# idle server CPU (docs/benchmarks-log/2026-12-06-lingering.md), and a waiter's own retries are about as
# far apart.
_LINGER_POLL_S = 0.25
_lingering: set[str] = set()  # paths attached with no connection open, under _host_lock
_linger_wake = threading.Event()
_linger_thread: threading.Thread | None = None


def linger(seconds: float) -> None:
    """Keep each workspace attached for ``seconds`` after its last connection closes, unless another
    process waits for it (``0``, the default: detach at once). For a server whose requests come
    seconds apart: each then skips an ATTACH and a DETACH's checkpoint (a fifth of an Audit decision's
    CPU, docs/decisions/audit-desk.md). Commits are in the WAL either way; a checkpoint happens when
    the file is let go, or when the WAL grows large."""
    global _linger_s
    if seconds < 0:
        raise ValueError(f"linger: seconds must be 0 or more, not {seconds}")
    _linger_s = float(seconds)


def waiting_file(path: str | Path) -> Path:
    """The file a process waiting for the workspace at ``path`` touches, beside it."""
    return Path(str(path) + ".waiting")


def _someone_waits(path: str) -> bool:
    try:
        return time.time() - waiting_file(path).stat().st_mtime < WAITING_FRESH_S
    except OSError:
        return False


def _say_i_wait(path: str) -> None:
    try:
        waiting_file(path).touch()
    except OSError:
        pass  # a folder nobody may write: the holder lets go when its lingering ends


def _done_waiting(path: str) -> None:
    try:
        waiting_file(path).unlink()
    except OSError:
        pass  # gone already (another waiter's), or never made


def _replaced(path: str, entry: _Attachment) -> bool:
    """The file at ``path`` is no longer the one attached (deleted, or a new file moved over it)."""
    if entry.fd is None:
        return False
    try:
        now, attached = os.stat(path), os.fstat(entry.fd)
    except OSError:
        return True
    return (now.st_dev, now.st_ino) != (attached.st_dev, attached.st_ino)


def _let_go_of_idle() -> None:
    """The lingering thread: detach each idle attachment once it has lingered long enough or another
    process waits for it."""
    while True:
        _linger_wake.wait()
        time.sleep(_LINGER_POLL_S)
        with _host_lock:
            paths = list(_lingering)
        for path in paths:
            entry = _attachments.get(path)
            if entry is None:
                continue
            with entry.lock:
                if entry.users or not entry.attached or entry.idle_since is None:
                    continue
                waited_for = _someone_waits(path)
                if time.monotonic() - entry.idle_since >= _linger_s or waited_for or _replaced(path, entry):
                    if waited_for:
                        entry.waited_for_at = time.monotonic()
                    _detach(entry, path)
        with _host_lock:
            if not _lingering:
                _linger_wake.clear()


def _start_lingering(entry: _Attachment, path: str) -> None:
    """With ``entry.lock`` held: the last connection closed; keep the file attached for now."""
    global _linger_thread
    entry.idle_since = time.monotonic()
    with _host_lock:
        _lingering.add(path)
        if _linger_thread is None or not _linger_thread.is_alive():
            _linger_thread = threading.Thread(target=_let_go_of_idle, name="lsqa-linger", daemon=True)
            _linger_thread.start()
        _linger_wake.set()


def _stop_lingering(entry: _Attachment, path: str) -> None:
    entry.idle_since = None
    with _host_lock:
        _lingering.discard(path)


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
        if _host is not None and not _private_attached and \
                not any(e.users or e.attached for e in _attachments.values()):
            _host.close()
            _host = None
            _attachments.clear()
    finally:
        _host_lock.release()


def close_host_at_exit() -> None:
    """At the end of the process, close the host instance if no connection is in use (a workspace still
    attached is detached by the close, as it would be when the instance is freed): DuckDB then lets go of
    what the instance holds, such as the owner file in its spill folder."""
    global _host
    if not _host_lock.acquire(timeout=1.0):
        return
    try:
        if _host is not None and not any(e.users for e in _attachments.values()):
            try:
                _host.close()
            except duckdb.Error:
                pass  # an instance a failed commit invalidated is closed all the same
            _host = None
            _attachments.clear()
            _lingering.clear()
    finally:
        _host_lock.release()


def _forget_host_in_child() -> None:
    global _host, _attachments, _host_lock, _migrate_lock, _linger_thread, _template_lock, _private_attached
    if _host is not None:
        _inherited_hosts.append(_host)  # kept referenced: never freed in this process
    _host, _attachments = None, {}
    _lingering.clear()  # the parent's: its lingering thread is not in the child
    _linger_thread = None
    # Another thread of the parent may have held these at the fork; in the child it never lets go.
    _host_lock, _migrate_lock, _template_lock = threading.Lock(), threading.Lock(), threading.Lock()
    _private_attached = 0  # a template the parent was building is not finished here (the child builds its own)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_close_idle_host_before_fork, after_in_child=_forget_host_in_child)


def _attach(path: str, alias: str, timeout_s: float, read_only: bool = False) -> None:
    """ATTACH ``path``, waiting (with jittered backoff) while another process holds its lock, and saying
    so meanwhile (``waiting_file``: a process that keeps the file attached between its requests lets go)."""
    deadline = time.monotonic() + timeout_s
    delay = 0.02
    quoted = path.replace("'", "''")
    waited = False
    try:
        while True:
            cur = _host_cursor()
            try:
                cur.execute(f"ATTACH '{quoted}' AS {alias}" + (" (READ_ONLY)" if read_only else ""))
                return
            except duckdb.Error as exc:
                if f'already attached by database "{alias}"' in str(exc):
                    return  # by us: an interrupt (Ctrl-C) came between an earlier ATTACH and its bookkeeping
                if not _is_lock_error(exc) or time.monotonic() > deadline:
                    if _is_lock_error(exc):
                        raise WorkspaceError(
                            f"workspace {path} stayed locked by another process for {timeout_s:g} s; "
                            "wait for that process (a pipeline run or the dashboard) or raise "
                            "LSQA_LOCK_TIMEOUT"
                        ) from exc
                    raise WorkspaceError(f"workspace {path}: DuckDB cannot open it ({str(exc).splitlines()[0]}); "
                                         "check the path, or give a new file name to start a workspace") from None
            finally:
                cur.close()
            _say_i_wait(path)
            waited = True
            # Jitter so two waiting processes do not retry in lock-step.
            time.sleep(delay * (0.5 + random.random()))
            delay = min(delay * 2, 0.5)
    finally:
        if waited:
            _done_waiting(path)


def _prepare_path(path: str | Path) -> None:
    """Check the path and create its folder, before the first attachment."""
    check_workspace_path(path)
    try:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise WorkspaceError(f"workspace {path}: cannot create its folder ({exc.strerror}); "
                             "give a path in a folder you can write") from None


def _acquire(path: str, timeout_s: float, given_path: str | Path) -> _Attachment:
    """Attach ``path`` (resolved) on first use; ``given_path`` is checked and named in errors."""
    entry = _attachment(path)
    me = threading.get_ident()
    with entry.lock:
        entry.users += 1  # counted before attaching: a fork meanwhile must not see an idle host
        try:
            if entry.idle_since is not None:  # lingering: used again, unless the file was replaced meanwhile
                _stop_lingering(entry, path)
                if _replaced(path, entry):
                    _detach(entry, path)
            if not entry.attached:
                # Under the lock: a file another thread is creating looks empty from outside.
                _prepare_path(given_path)
                made = _from_template(path) if not os.path.lexists(path) and _writable(Path(path)) else None
                _check_file_header(path)
                entry.read_only = not _writable(Path(path))
                _attach(path, entry.alias, timeout_s, entry.read_only)
                entry.attached, entry.schema_seen = True, False
                try:
                    entry.fd = os.open(path, os.O_RDONLY)
                except OSError:
                    entry.fd = None  # no checkpoint is then recorded as a mere checkpoint
                if entry.fd is not None:
                    _check_whole_blocks(entry, path)
                    entry.schema_seen = _as_left(entry, path)
                if made is not None:
                    _make_own(entry, path, made)
        except BaseException:
            entry.users -= 1
            raise
        entry.opened += 1
        entry.opened_by[me] += 1
        entry.open_by[me] += 1
    return entry


def _release(entry: _Attachment, path: str) -> None:
    me = threading.get_ident()
    with entry.lock:
        entry.users -= 1
        entry.open_by[me] -= 1
        if not entry.open_by[me]:
            del entry.open_by[me]
        if entry.users == 0 and entry.attached:
            if _linger_s > 0 and _someone_waits(path):
                entry.waited_for_at = time.monotonic()
            if _linger_s > 0 and (entry.waited_for_at is None or time.monotonic() - entry.waited_for_at > SHARING_S):
                _start_lingering(entry, path)
            else:
                _detach(entry, path)


def _detach(entry: _Attachment, path: str) -> None:
    """DETACH the file (with ``entry.lock`` held, no connection using it): checkpoints the WAL and
    frees the file lock."""
    _stop_lingering(entry, path)
    before = _checkpoint_start(path, entry)
    cur = _host_cursor()
    try:
        cur.execute(f"DETACH {entry.alias}")
        entry.attached = False
    except duckdb.Error as exc:
        # Still attached: the next connection uses it and tries again when it closes.
        # Raising here would hide whatever the connection's own block raised.
        log.warning("could not detach workspace (%s); retried when the next connection closes", exc)
    finally:
        cur.close()
    if not entry.attached:
        _checkpoint_end(path, entry, before)


def _writable(path: Path) -> bool:
    """Whether lsqa may write ``path``: the file and its folder (DuckDB keeps a WAL file next to it)."""
    return os.access(path.parent, os.W_OK) and (not path.exists() or os.access(path, os.W_OK))


def check_workspace_path(path: str | Path) -> None:
    """Refuse, with one line, a path that is not (and cannot become) a workspace file, from what
    ``stat`` says (the file is not opened). Checked before DuckDB sees it: a FIFO would block the
    open forever, a device or a folder gives a low-level error. The contents (text, SQLite, ...)
    are checked when the file is attached (``_check_file_header``)."""
    path = Path(path)
    fix = "give the path of a workspace file (e.g. db/lsqa.duckdb), or a new file name to start one"
    if not path.exists():
        if path.is_symlink():
            raise WorkspaceError(f"workspace {path}: a link to a missing file; {fix}")
        parent = next((p for p in path.parents if p.exists()), None)
        if parent is not None and not parent.is_dir():
            raise WorkspaceError(f"workspace {path}: {parent} is a file, not a folder; {fix}")
        return
    info = path.stat()
    if stat.S_ISDIR(info.st_mode):
        raise WorkspaceError(f"workspace {path}: a folder, not a workspace file; {fix}")
    if not stat.S_ISREG(info.st_mode):
        raise WorkspaceError(f"workspace {path}: not a regular file (a device, pipe or socket); {fix}")
    if not os.access(path, os.R_OK):
        raise WorkspaceError(f"workspace {path}: cannot be read (permission denied); "
                             "make it readable or give another path")
    if info.st_size == 0:
        raise WorkspaceError(f"workspace {path}: an empty file, not a workspace; remove it or {fix}")


def _check_file_header(path: str) -> None:
    """The file's first bytes are DuckDB's. Only while this process has not attached it: closing any
    descriptor of a file drops every POSIX lock this process holds on it, DuckDB's included."""
    fix = "give the path of a workspace file (e.g. db/lsqa.duckdb), or a new file name to start one"
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return
    try:
        head = os.pread(fd, 16, 0)
    finally:
        os.close(fd)
    if head.startswith(b"SQLite format 3"):
        raise WorkspaceError(f"workspace {path}: a SQLite database, not an lsqa (DuckDB) workspace; {fix}")
    if len(head) < 12 or head[8:12] != b"DUCK":
        raise WorkspaceError(f"workspace {path}: not a DuckDB workspace (text or other data); {fix}")


def _as_left(entry: _Attachment, path: str) -> bool:
    """Just attached: the file is the one this process last let go of (same inode, size, time, headers,
    no WAL; read through the descriptor of the file attached, so a file replaced while this process
    waited for its lock is not taken for it). Its schema is then the one seen before, and ``_connection``
    need not look for it."""
    if entry.left_as is None or entry.fd is None:
        return False
    try:
        return entry.left_as == _version(path, os.fstat(entry.fd), _read_headers(entry.fd))
    except OSError:
        return False


def _check_whole_blocks(entry: _Attachment, path: str) -> None:
    """Just attached (this process holds the file's lock, so nobody is writing it): a DuckDB file is its
    three 4 KiB headers and whole blocks (each database header: checksum, iteration, meta block, free
    list, block count, block size); a file of another size was cut short, and is refused whatever its
    lost blocks held, not only when a read happens to need them."""
    try:
        size = os.fstat(entry.fd).st_size
        headers = [os.pread(entry.fd, 48, at) for at in _HEADER_BLOCKS]
    except OSError:
        return
    if any(len(h) < 48 for h in headers):
        return  # DuckDB has said what is wrong already, or will
    block = int.from_bytes(max(headers, key=lambda h: int.from_bytes(h[8:16], "little"))[40:48], "little")
    if 4096 <= block <= 1 << 30 and block & (block - 1) == 0 and (size - 3 * 4096) % block:
        _detach(entry, path)
        raise WorkspaceError(f"workspace {path}: the file is truncated or damaged ({size} bytes, not whole "
                             "DuckDB blocks); restore it from a copy, or give another workspace")


_HEADER_BLOCKS = (4096, 8192)
_HEADER_BYTES = 16


def data_version(path: str | Path) -> tuple | None:
    """A value that changes whenever data committed to the workspace changes, by this process or any
    other; reads leave it as it is. None when the path is not a readable file (the read itself then
    says what is wrong: missing, a folder, a FIFO, unreadable).

    DuckDB appends each commit to ``<file>.wal`` (its size grows) and a checkpoint (on DETACH, or
    when the WAL is large) rewrites one of the two headers with the next iteration and removes the
    WAL. So the file's identity, size and time, the headers and the WAL's size and time together
    differ after any commit. The headers are read only while this process has not attached the file
    (closing a descriptor would drop DuckDB's lock, see ``_check_file_header``); while it is
    attached, no other process can write it, and this process's commits show in the WAL.

    Read before the data it stands for: data read afterwards is at least as new as the version.
    """
    key = str(Path(path).resolve())
    try:
        info = os.stat(key)
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode):
        return None  # a folder, a FIFO (opening it would block), a device: ``connect`` says what is wrong
    entry = _attachment(key)
    with entry.lock:
        if not entry.attached:
            try:
                with open(key, "rb") as f:
                    entry.header = _read_headers(f.fileno())
            except OSError:  # unreadable: ``connect`` says so
                return None
        header = entry.header
    return _version(key, info, header)


def _read_headers(fd: int) -> bytes:
    return b"".join(os.pread(fd, _HEADER_BYTES, at) for at in _HEADER_BLOCKS)


def _iteration(headers: bytes) -> int:
    """The latest checkpoint iteration in the two headers (each: checksum, then iteration)."""
    return max(int.from_bytes(headers[at + 8:at + 16], "little") for at in range(0, len(headers), _HEADER_BYTES))


def _wal_state(key: str) -> tuple | None:
    try:
        wal = os.stat(key + ".wal")
    except OSError:
        return None
    return wal.st_size, wal.st_mtime_ns


def _version(key: str, info: os.stat_result, header: bytes) -> tuple:
    return info.st_ino, info.st_size, info.st_mtime_ns, header, _wal_state(key)


def _version_attached(key: str, entry: _Attachment) -> tuple | None:
    """``data_version`` of a file this process has attached, with ``entry.lock`` held."""
    try:
        return _version(key, os.stat(key), entry.header)
    except OSError:
        return None


def _checkpoint_start(key: str, entry: _Attachment) -> tuple | None:
    """Before the last connection DETACHes: the version the render's reads were kept under, the
    WAL and the headers as they are (read through the descriptor held since ATTACH)."""
    if entry.fd is None:
        return None
    try:
        return _version_attached(key, entry), _wal_state(key), _read_headers(entry.fd)
    except OSError:
        return None


def _checkpoint_end(key: str, entry: _Attachment, start: tuple | None) -> None:
    """After DETACH: close the descriptor, and record the new version as holding the same data
    when the checkpoint was the only change. Each checkpoint raises the headers' iteration by
    exactly one and removes the WAL; another process that attached the file in between and
    committed left a WAL, or a second iteration."""
    fd, entry.fd = entry.fd, None
    try:
        if fd is None or start is None:
            return
        before, wal_before, headers_before = start
        headers = _read_headers(fd)
        entry.header = headers  # what data_version reads next while not attached
        after = entry.left_as = _version(key, os.fstat(fd), headers)
        if before is None or after[4] is not None or (wal_before is not None and wal_before[0] == 0):
            return  # a WAL now, or an empty one before (a checkpoint may or may not have run): unknown
        expected = _iteration(headers_before) + (wal_before is not None)
        if _iteration(headers) == expected and (wal_before is not None or after[:3] == before[:3]):
            lineage.record(key, after, before, None)
    except OSError:
        return
    finally:
        if fd is not None:
            os.close(fd)


def is_read_only(path: str | Path) -> bool:
    return Path(path).exists() and not _writable(Path(path))


# Per thread, the cursor of the outermost read connection open on each workspace: a read opened inside
# it (a page's reads inside ``kept_open``) uses the same cursor instead of a new one that must be told
# which database to use, a statement of its own each time (a tenth of a decision's statements on the
# Audit page). Never a writing cursor: a read inside a write sees committed data only, as before.
_reading = threading.local()


@contextlib.contextmanager
def connect(path: str | Path, *, timeout_s: float | None = None) -> Iterator[duckdb.DuckDBPyConnection]:
    """Open the workspace at ``path`` (migrated on first use), yield a connection, close it.

    Keep the block short: while it is open, no other process can use the workspace. A workspace
    whose file or folder lsqa cannot write is opened read-only (``write`` then refuses). Inside another
    ``connect`` of the same workspace in the same thread, the connection is that one's (do not leave
    a transaction open on it).
    """
    key = str(Path(path).resolve())
    outer = getattr(_reading, "cursors", {}).get(key)
    if outer is not None:
        entry = _acquire(key, 0.0, path)  # attached by the outer connection: never waits
        try:
            yield outer
        finally:
            _release(entry, key)
        return
    with _connection(path, timeout_s=timeout_s) as con:
        cursors = _reading.__dict__.setdefault("cursors", {})
        cursors[key] = con
        try:
            yield con
        finally:
            cursors.pop(key, None)


@contextlib.contextmanager
def _connection(path: str | Path, *, timeout_s: float | None = None) -> Iterator[duckdb.DuckDBPyConnection]:
    """A new cursor on the workspace (``connect``; ``write`` takes one of its own for its transaction)."""
    if timeout_s is None:
        timeout_s = float(os.environ.get("LSQA_LOCK_TIMEOUT", DEFAULT_LOCK_TIMEOUT_S))
    key = str(Path(path).resolve())
    entry = _acquire(key, timeout_s, path)
    try:
        con = _host_cursor()
        try:
            con.execute(f"USE {entry.alias}")
            # The cache saves re-reading the migration files; a file deleted and created again under
            # the same path (a reset workspace) has no schema and must be migrated all the same.
            if key not in _migrated or not (entry.schema_seen or _has_schema(con)):
                # Under the lock: another thread migrating this file shows tables before its
                # bookkeeping is committed, which would look like someone else's database.
                with _migrate_lock:
                    _refuse_foreign_database(con, path)
                    if entry.read_only:
                        _check_migrated(con, path)
                    else:
                        migrate(con)
                    _migrated.add(key)
            entry.schema_seen = True
            yield con
        finally:
            con.close()
    except (duckdb.Error, OSError) as exc:  # a full disk, a truncated file: one line, not a traceback
        problem = file_problem(exc, path)
        if problem is None:
            raise
        raise problem from None
    finally:
        _release(entry, key)


@contextlib.contextmanager
def scratch() -> Iterator[duckdb.DuckDBPyConnection]:
    """A connection to this process's host with no workspace attached, closed after the block: for work
    on files alone in TEMP tables (staging NarrativeQA's questions) while no workspace is locked."""
    con = _host_cursor()
    try:
        yield con
    finally:
        con.close()


def _refuse_foreign_database(con: duckdb.DuckDBPyConnection, path) -> None:
    """A DuckDB file with tables but without lsqa's bookkeeping belongs to someone else: migrating
    it would add lsqa's tables to their database."""
    if _has_schema(con):
        return
    (n,) = con.execute("SELECT count(*) FROM duckdb_tables() WHERE database_name = current_database()").fetchone()
    if n:
        raise WorkspaceError(f"workspace {path}: a DuckDB database with {n} table(s) of its own, not an lsqa "
                             "workspace; give the path of a workspace file, or a new file name to start one")


def _check_migrated(con: duckdb.DuckDBPyConnection, path) -> None:
    """A read-only workspace is read as it is, if it has every migration; it cannot be migrated."""
    applied = {n for (n,) in con.execute("SELECT name FROM schema_migrations").fetchall()} \
        if _has_schema(con) else set()
    missing = [p.name for p in migration_files() if p.name not in applied]
    if missing:
        raise WorkspaceError(f"workspace {path} is read-only and needs migration {missing[0]}; "
                             "make it writable once (file and folder) so lsqa can update it")


def _has_schema(con: duckdb.DuckDBPyConnection) -> bool:
    try:
        con.execute("SELECT 1 FROM schema_migrations LIMIT 0").fetchall()
    except duckdb.CatalogException:
        return False
    return True


# Transactions begun outside ``write`` in this process, and those going on now: a declared write
# cannot vouch for them (``write``).
_bare_commits = [0, 0]
_bare_lock = threading.Lock()


@contextlib.contextmanager
def transaction(con: duckdb.DuckDBPyConnection) -> Iterator[duckdb.DuckDBPyConnection]:
    """BEGIN … COMMIT, or ROLLBACK on any exception: a failed write leaves nothing behind."""
    with _bare_lock:
        _bare_commits[0] += 1
        _bare_commits[1] += 1
    try:
        with _transaction(con):
            yield con
    finally:
        with _bare_lock:
            _bare_commits[1] -= 1


@contextlib.contextmanager
def _transaction(con: duckdb.DuckDBPyConnection) -> Iterator[duckdb.DuckDBPyConnection]:
    con.execute("BEGIN TRANSACTION")
    try:
        yield con
    except BaseException:
        con.execute("ROLLBACK")
        raise
    con.execute("COMMIT")


def begin_again(con: duckdb.DuckDBPyConnection) -> None:
    """Inside a ``write`` (or ``transaction``) block: drop what the block wrote so far and go on in a new
    transaction of the same write, as if the block had just begun, without the ATTACH and DETACH of a
    second write. The block's transaction is the only thing ``write`` opens before it yields, so nothing
    of the write itself is lost; the block's TEMP tables made since it began go too."""
    con.execute("ROLLBACK")
    con.execute("BEGIN TRANSACTION")


@contextlib.contextmanager
def write(path: str | Path, *, change: lineage.Change | None = None) -> Iterator[duckdb.DuckDBPyConnection]:
    """A connection with an open transaction: the usual way to change a workspace.

    ``change``: what the block writes, when the caller can say so exactly (one review). Then reads
    that such a change cannot touch stay kept across it (``lsqa.store.workspace_cache``), provided no
    other thread of this process wrote meanwhile (other processes cannot write while it is attached;
    other threads' reads, each session's page run, change nothing). Declared writes of one file take
    turns in this process (``_Attachment.declared``), so that each is such a step however many people
    decide at once; a write that does not say what it changes, going on meanwhile, leaves it unrecorded. A change that says less than the block writes would serve stale reads:
    tests/store/test_workspace_cache.py checks each declared change against the tables it really moves."""
    if is_read_only(path):
        raise WorkspaceError(f"workspace {path} is read-only (file or folder permissions): it can be read "
                             "but not changed; make it writable, or copy it to a folder you can write")
    with _connection(path) as con:
        key = str(Path(path).resolve())
        entry, me = _attachment(key), threading.get_ident()
        with entry.declared if change is not None else contextlib.nullcontext():
            with entry.lock:
                before = _version_attached(key, entry)
                others_writing = any(n for t, n in entry.writing_by.items() if t != me)
                start = (entry.writes, entry.writes_by[me], tuple(_bare_commits))
                entry.writes += 1
                entry.writes_by[me] += 1
                entry.writing_by[me] += 1
            try:
                with _transaction(con):
                    yield con
                with entry.lock:
                    after = _version_attached(key, entry)
                    others_began = (entry.writes - start[0]) - (entry.writes_by[me] - start[1])
                    others_writing = others_writing or any(n for t, n in entry.writing_by.items() if t != me)
                    alone = not others_writing and not others_began and start[2][1] == _bare_commits[1] == 0 \
                        and _bare_commits[0] == start[2][0]
                if change is not None and alone and before is not None and after is not None:
                    lineage.record(key, after, before, change)
                if change is None or not change.tables.isdisjoint(queue_signal_tables()):
                    _after_commit(con, key)  # a commit of its own, while this write still counts as going on
            finally:
                with entry.lock:
                    entry.writing_by[me] -= 1
                    if not entry.writing_by[me]:
                        del entry.writing_by[me]


def queue_signal_tables() -> frozenset[str]:
    """The tables whose writes the audit queue's kept signals follow (``lsqa.store.queue_signals``):
    a write declared to change none of them (a review, an item opened) leaves nothing to catch up,
    and skips the catch-up's look (two writes a decision; docs/benchmarks-log/2026-12-06-team-cpu.md)."""
    from lsqa.store import queue_signals

    return queue_signals.SIGNAL_TABLES


def _after_commit(con: duckdb.DuckDBPyConnection, key: str) -> None:
    """Derived data a write may have left behind, caught up in a transaction of its own: the audit
    queue's kept signals of the questions the write marked (``lsqa.store.queue_signals``). The write
    is committed whatever happens here; reads stay exact without it (they read marked questions fresh)."""
    from lsqa.store import queue_signals

    try:
        queue_signals.catch_up(con, key)
    except duckdb.Error as exc:
        log.warning("audit queue signals not caught up after a write (%s); the queue reads them fresh", exc)


def migration_files(directory: Path | None = None) -> list[Path]:
    """The migration files of ``directory`` (``MIGRATIONS_DIR`` as it is at the call), in name order."""
    return sorted(p for p in (directory or MIGRATIONS_DIR).glob("*.sql") if p.name[:4].isdigit())


# The digests of the migration files this process read, by path, file (inode), size, modification time and
# change time: every first connection to a workspace (a new file each test) checks them, and reading and hashing
# every file each time was most of that check. The change time is in the key because the modification time can
# be set back (``cp -p``, ``rsync -t``, ``touch -d``) over an edit of the same size; the change time cannot.
_digests: dict[tuple[str, int, int, int, int], str] = {}


def _sha256(path: Path) -> str:
    info = path.stat()
    key = (str(path), info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
    digest = _digests.get(key)
    if digest is None:
        digest = _digests[key] = hashlib.sha256(path.read_bytes()).hexdigest()
    return digest


def migrate(con: duckdb.DuckDBPyConnection, directory: Path | None = None) -> list[str]:
    """Apply pending migrations in name order; return the names applied now.

    Each migration runs in one transaction together with its ``schema_migrations`` row, so a
    failure leaves neither. A migration that was applied and whose file changed since is refused:
    applied migrations are history, a change belongs in a new file. ``directory``: ``MIGRATIONS_DIR``
    as it is at the call, unless given.
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
    if name.startswith(("0019_", "0020_", "0021_")):
        # SQL alone could, but the signals are defined once, in lsqa.store.queue_signals. 0020: their
        # id_key became the id's first 16 hex digits (it was the md5 of the id); 0021 made the table anew.
        from lsqa.store.queue_signals import rebuild

        rebuild(con)


def forget_migrated(path: str | Path | None = None) -> None:
    """Make the next ``connect`` check migrations again (tests that edit migration folders); without a
    path, the next new workspace also builds the template again (it is kept by the migrations' digests,
    so an edited folder gets a new one anyway)."""
    global _template_made
    if path is None:
        _migrated.clear()
        with _template_lock:
            _template_made = None
    else:
        _migrated.discard(str(Path(path).resolve()))


# ---------------------------------------------------------------------------------------------
# New workspaces: copies of a template migrated once per process
# ---------------------------------------------------------------------------------------------


def _template() -> _Template | None:
    """This process's template for the migrations as they are now (built on first use, and again when
    a migration file changed), or None when it cannot be built here."""
    global _template_made
    directory = MIGRATIONS_DIR
    digests = tuple((p.name, _sha256(p)) for p in migration_files(directory))
    with _template_lock:
        made = _template_made
        if made is None or (made.digests if isinstance(made, _Template) else made) != digests:
            made = _template_made = _build_template(directory, digests) or digests
        return made if isinstance(made, _Template) else None


# A template is built in a folder named for the process building it; a killed process never removes its own,
# so each build removes those of processes that are gone.
TEMPLATE_PREFIX = "lsqa-template-"
# A new workspace is written under a temporary name beside it for the milliseconds a copy takes; one older than
# this was left by a process killed meanwhile.
LEFT_COPY_AGE_S = 60.0


def _remove_left_templates(parent: str) -> None:
    """Remove the template folders in ``parent`` whose process is gone."""
    try:
        entries = list(os.scandir(parent))
    except OSError:
        return
    for entry in entries:
        pid = entry.name.removeprefix(TEMPLATE_PREFIX).split("-", 1)[0]
        if entry.name.startswith(TEMPLATE_PREFIX) and pid.isdigit() and entry.is_dir(follow_symlinks=False) \
                and not process_alive(int(pid)):
            shutil.rmtree(entry.path, ignore_errors=True)


def _remove_left_copies(folder: str, name: str) -> None:
    """Remove the temporary copies of a new workspace ``name`` that a killed process left in ``folder``."""
    try:
        entries = list(os.scandir(folder or "."))
    except OSError:
        return
    now = time.time()
    for entry in entries:
        if entry.name.startswith(f".{name}.") and entry.name.endswith(".lsqa-new"):
            with contextlib.suppress(OSError):
                if now - entry.stat(follow_symlinks=False).st_mtime > LEFT_COPY_AGE_S:
                    os.unlink(entry.path)


def _build_template(directory: Path, digests: tuple[tuple[str, str], ...]) -> _Template | None:
    """Run the migrations of ``directory`` on a new file in a private temporary folder and keep its bytes.
    None when that fails (a full temporary disk, a broken migration, files changed meanwhile): new
    workspaces are then migrated in place, which says what is wrong."""
    global _private_attached
    try:
        _remove_left_templates(tempfile.gettempdir())
        folder = tempfile.mkdtemp(prefix=f"{TEMPLATE_PREFIX}{os.getpid()}-")
    except OSError:
        return None
    file = os.path.join(folder, "empty.duckdb")
    alias = "lsqa_template_" + secrets.token_hex(8)
    with _host_lock:
        _private_attached += 1
    attached = False
    try:
        cur = _host_cursor()
        try:
            cur.execute(f"ATTACH '{file.replace(chr(39), chr(39) * 2)}' AS {alias}")
            attached = True
            cur.execute(f"USE {alias}")
            migrate(cur, directory)
            applied = tuple(cur.execute("SELECT name, sha256 FROM schema_migrations ORDER BY name").fetchall())
            (version,) = cur.execute("SELECT version FROM queue_signals_version").fetchone()
            (until,) = cur.execute("SELECT max(applied_at) FROM schema_migrations").fetchone()
        finally:
            cur.close()
        cur = _host_cursor()
        try:
            cur.execute(f"DETACH {alias}")  # checkpointed: the file alone holds everything
            attached = False
        finally:
            cur.close()
        if applied != digests or os.path.exists(file + ".wal"):
            return None
        with open(file, "rb") as f:
            return _Template(digests, f.read(), version, until)
    except (duckdb.Error, OSError) as exc:
        log.debug("no workspace template (%s): new workspaces are migrated in place", exc)
        return None
    finally:
        if attached:
            with contextlib.suppress(duckdb.Error), _host_cursor() as cur:
                cur.execute(f"DETACH {alias}")
        with _host_lock:
            _private_attached -= 1
        shutil.rmtree(folder, ignore_errors=True)


def _from_template(path: str) -> _Template | None:
    """Write a new workspace at ``path`` (resolved, absent) from the template, whole: under a temporary
    name beside it, then linked to ``path``, which fails when the path appeared meanwhile. The template
    used, or None when no file was made (no template, the path taken, a folder that refuses the write or
    the link, a full disk, a WAL left there): then ``path`` is opened as before, which makes a new
    workspace by migrating it, opens the file another process made, or says what is wrong."""
    if os.path.lexists(path + ".wal"):
        return None  # a WAL without its file: DuckDB decides what to make of it, as before
    made = _template()
    if made is None:
        return None
    folder, name = os.path.split(path)
    _remove_left_copies(folder, name)
    temporary = os.path.join(folder, f".{name}.{secrets.token_hex(6)}.lsqa-new")
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        try:
            view = memoryview(made.data)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)
        os.link(temporary, path)
    except OSError:
        return None
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
    return made


def _make_own(entry: _Attachment, path: str, made: _Template) -> None:
    """With ``entry.lock`` held, ``path`` just attached: a workspace copied from the template becomes one of
    its own before any connection uses it. It gets a queue-signals version of its own (two workspaces
    never share one, ``lsqa.store.queue_signals``), and its migrations' ``applied_at`` becomes the time
    it was created (its migrations are the template's, the files of the same digests, all applied at
    once). Then it counts as migrated. A copy another process has used meanwhile keeps what it has."""
    from lsqa.store import queue_signals

    cur = _host_cursor()
    try:
        cur.execute(f"USE {entry.alias}")
        with transaction(cur):
            queue_signals.renew_version(cur, made.version)
            cur.execute("UPDATE schema_migrations SET applied_at = current_timestamp WHERE applied_at <= ?",
                        [made.applied_until])
    except BaseException:
        cur.close()
        _detach(entry, path)  # the caller's block does not run: leave the file as any other
        raise
    cur.close()
    entry.schema_seen = True
    _migrated.add(path)
