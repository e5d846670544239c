"""What every bad-input probe asserts (issue 14): the command refuses with exit code 2 and exactly
one line naming the input, the place in it and what to do, no traceback, and every table of the
workspace exactly as it was (contents, not counts).

Set ``LSQA_PROBE_LOG=FILE`` to append each probe's outcome (``refused``, ``traceback``,
``accepted``, ``unclear``, ``changed``) as a JSON line: how the before/after figures of issue 14
were counted (``scripts/count_probes.py``).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path

from typer.testing import CliRunner

from lsqa.cli import app

runner = CliRunner()

# A refusal says what to do: one of these words (or a "did you mean").
WHAT_TO_DO = re.compile(
    r"\b(use|write|add|remove|give|must|did you mean|known keys|rename|see|run|choose|fix|save|keep|list|"
    r"put|check|create|pass|drop|split|make|unset|wait|ask|leave|set|start|point|free|try|correct|"
    r"cut|shorten|compare|rank|import|export|quote|close|convert|delete|leave|choose|flag)\b", re.I)


def snapshot(workspace: Path | None) -> "Snapshot | dict | None":
    """The workspace as it is now (None if no file), to compare with ``==`` after a probe.

    A workspace: a ``Snapshot``, compared byte for byte first (the file and its WAL): a refusal
    seldom opens the file, and equal bytes are equal tables, with no DuckDB connection at all (opening
    one was 0.05 s of every probe, twice). Bytes that differ (DuckDB may rewrite a file it opened
    without changing a row) are settled table by table. Not a workspace (a probe's garbage, a folder,
    a FIFO): its mode and bytes, as a dict."""
    if workspace is None or not Path(workspace).exists():
        return None
    path = Path(workspace)
    if not path.is_file() or path.stat().st_size < 12 or _header(path)[8:12] != b"DUCK":
        return _not_a_workspace(path)
    return Snapshot(path)


class Snapshot(Mapping):
    """Every table's fingerprint (row count and the sum of its rows' hashes: a multiset digest that
    any changed, added or removed row moves), computed inside DuckDB from a byte copy of the workspace
    taken when the snapshot was, and only when asked for (``==`` on equal bytes never asks).

    The bytes are kept in memory and compared whole (``content``), far cheaper than hashing them, and
    the copy on disk is written only when the tables are asked for."""

    def __init__(self, path: Path):
        self._name = path.name
        # Read once each: the bytes compared are the bytes a copy would be made of.
        self._file = path.read_bytes()
        self._wal = _wal(path).read_bytes() if _wal(path).exists() else None
        self.content, self._tables = (self._file, self._wal), None

    def tables(self) -> dict:
        if self._tables is None:
            import shutil
            import tempfile

            folder = Path(tempfile.mkdtemp(prefix="lsqa-snapshot-"))
            try:
                copy = folder / self._name
                copy.write_bytes(self._file)
                if self._wal is not None:
                    _wal(copy).write_bytes(self._wal)
                # hash(<row alias>) hashes the whole row as a struct; summed as HUGEINT, row order does not count.
                self._tables = _per_table(copy, 'SELECT count(*), coalesce(sum(hash(lsqa_row)::HUGEINT), 0) '
                                          'FROM "{}" AS lsqa_row', lambda con, sql: con.execute(sql).fetchone())
            finally:
                shutil.rmtree(folder, True)
        return self._tables

    def __eq__(self, other) -> bool:
        if isinstance(other, Snapshot) and other.content == self.content:
            return True
        return self.tables() == (other.tables() if isinstance(other, Snapshot) else other)

    __hash__ = None  # mutable in effect (tables computed on demand): not a dict key

    def __getitem__(self, table: str):
        return self.tables()[table]

    def __iter__(self):
        return iter(self.tables())

    def __len__(self) -> int:
        return len(self.tables())


def _wal(path: Path) -> Path:
    return path.with_name(path.name + ".wal")


def _not_a_workspace(path: Path) -> dict:
    """What a path that is no workspace is (a probe's garbage, a folder, a FIFO): that must not change either."""
    import hashlib
    import stat

    info = path.lstat()
    digest = hashlib.sha256(path.read_bytes()).hexdigest() if stat.S_ISREG(info.st_mode) else ""
    return {"<not a workspace>": [stat.filemode(info.st_mode), digest]}


def contents(workspace: Path | None) -> dict | None:
    """Every table's rows, sorted, as text: to search a workspace for what must never be in it."""
    return _per_table(workspace, 'SELECT * FROM "{}"', lambda con, sql: sorted(map(repr, con.execute(sql).fetchall())))


def _per_table(workspace: Path | None, sql: str, read) -> dict | None:
    if workspace is None or not Path(workspace).exists():
        return None
    import duckdb

    path = Path(workspace)
    try:
        if not path.is_file() or path.stat().st_size < 12 or _header(path)[8:12] != b"DUCK":
            raise duckdb.IOException("not a DuckDB file")
        con = duckdb.connect(str(workspace), read_only=True, config={"autoinstall_known_extensions": False,
                                                                     "autoload_known_extensions": False})
    except duckdb.Error:
        return _not_a_workspace(path)
    try:
        tables = [t for (t,) in con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_type = 'BASE TABLE' "
            "ORDER BY table_name").fetchall()]
        return {t: read(con, sql.format(t)) for t in tables}
    finally:
        con.close()


def _header(path: Path) -> bytes:
    with open(path, "rb") as f:  # the magic only: a workspace may be large
        return f.read(12)


def changed_tables(before: dict | None, after: dict | None) -> list[str]:
    """The tables whose contents differ between two snapshots that differ (for the failure message)."""
    if before is None or after is None:
        return ["<the whole file>"]
    return sorted(t for t in before.keys() | after.keys() if before.get(t) != after.get(t))


def invoke(*args, env: dict | None = None, stdin: str | None = None):
    return runner.invoke(app, [str(a) for a in args], env=env, input=stdin)


def outcome(result, before: dict | None, after: dict | None, must_name: tuple[str, ...]) -> str:
    err = (result.stderr or "").strip()
    text = err + (result.stdout or "")
    if result.exception is not None and not isinstance(result.exception, SystemExit) or "Traceback" in text:
        return "traceback"
    if before != after:
        return "changed"
    if result.exit_code == 0:
        return "accepted"
    lines = err.splitlines()
    if result.exit_code != 2 or len(lines) != 1 or not WHAT_TO_DO.search(lines[0]) or \
            not all(s.lower() in lines[0].lower() for s in must_name):
        return "unclear"
    return "refused"


def log_outcome(probe: str, kind: str, detail: str = "") -> None:
    path = os.environ.get("LSQA_PROBE_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps({"probe": probe, "outcome": kind, "detail": detail[:300]}) + "\n")


def assert_refused(probe: str, args: list, *, workspace: Path | None, must_name: tuple[str, ...] = (),
                   env: dict | None = None, stdin: str | None = None) -> str:
    """Run the CLI with ``args``; assert one clear refusal and an untouched workspace. Returns the line."""
    before = snapshot(workspace)
    result = invoke(*args, env=env, stdin=stdin)
    after = snapshot(workspace)
    kind = outcome(result, before, after, must_name)
    detail = (result.stderr or "") + (result.stdout or "")
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        detail += f"{type(result.exception).__name__}: {result.exception}"
    if kind == "changed":
        detail = f"tables changed: {changed_tables(before, after)}; " + detail
    log_outcome(probe, kind, detail)
    assert kind == "refused", f"{probe}: {kind} (exit {result.exit_code}): {detail[:2000]}"
    return result.stderr.strip()


def assert_library_refuses(probe: str, call, error_type, *, workspace: Path | None, must_name=()) -> str:
    """The library form: ``call()`` raises ``error_type`` with a one-line message; tables unchanged."""
    before = snapshot(workspace)
    message, kind = "", "accepted"
    try:
        call()
    except error_type as exc:
        message = str(exc)
        ok = "\n" not in message and all(s.lower() in message.lower() for s in must_name) and \
            WHAT_TO_DO.search(message)
        kind = "refused" if ok else "unclear"
    except Exception as exc:  # noqa: BLE001 - any other exception is what the probe is looking for
        kind, message = "traceback", f"{type(exc).__name__}: {exc}"
    after = snapshot(workspace)
    if kind == "refused" and before != after:
        kind, message = "changed", f"tables changed: {changed_tables(before, after)}; {message}"
    log_outcome(probe, kind, message)
    assert kind == "refused", f"{probe}: {kind}: {message}"
    return message
