"""A workspace as an older lsqa left it: every migration before a given one applied, none after, for
the tests of what that migration does to the rows already there."""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb

from lsqa.store import db


def workspace_before(tmp_path: Path, migration: str, name: str = "ws.duckdb") -> tuple[Path, duckdb.DuckDBPyConnection]:
    """``(path, connection)``: a new workspace file ``name`` in ``tmp_path`` migrated up to, not including,
    the migration numbered ``migration`` (e.g. ``"0028"``), and an open connection to it to put the old
    rows in (close it before lsqa opens the file, which then applies the rest)."""
    older = tmp_path / f"migrations-before-{migration}"
    older.mkdir()
    for path in db.migration_files():
        if path.name < migration:
            shutil.copy(path, older / path.name)
    ws = tmp_path / name
    con = duckdb.connect(str(ws))
    db.migrate(con, older)
    return ws, con
