"""Workspace migrations: fresh, re-run, refusal of an edited migration, atomicity."""

import shutil

import duckdb
import pytest

from lsqa import store
from lsqa.store import db


def test_fresh_workspace_has_every_table(workspace):
    with store.connect(workspace) as con:
        tables = {r[0] for r in con.execute("SHOW TABLES").fetchall()}
        applied = con.execute("SELECT name, sha256 FROM schema_migrations").fetchall()
    assert {"documents", "passages", "entities", "mentions", "questions", "systems", "answers", "llm_calls",
            "judgments", "human_reviews", "reference_flags", "runs", "schema_migrations"} <= tables
    assert [name for name, _ in applied] == [p.name for p in db.migration_files()]
    assert all(len(sha) == 64 for _, sha in applied)


def test_rerun_applies_nothing(workspace):
    with store.connect(workspace) as con:
        assert store.migrate(con) == []
        n = con.execute("SELECT count(*) FROM schema_migrations").fetchone()[0]
    assert n == len(db.migration_files())


def _copy_migrations(tmp_path):
    folder = tmp_path / "migrations"
    shutil.copytree(db.MIGRATIONS_DIR, folder)
    return folder


def test_edited_applied_migration_is_refused(tmp_path):
    folder = _copy_migrations(tmp_path)
    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    assert store.migrate(con, folder) == sorted(p.name for p in folder.glob("*.sql"))
    first = sorted(folder.glob("*.sql"))[0]
    first.write_text(first.read_text() + "\n-- edited\n")
    with pytest.raises(store.MigrationChanged, match=first.name):
        store.migrate(con, folder)


def test_failed_migration_leaves_no_trace(tmp_path):
    folder = _copy_migrations(tmp_path)
    (folder / "9999_broken.sql").write_text("CREATE TABLE half_done (x INTEGER);\nTHIS IS NOT SQL;\n")
    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    with pytest.raises(duckdb.Error):
        store.migrate(con, folder)
    tables = {r[0] for r in con.execute("SHOW TABLES").fetchall()}
    names = {r[0] for r in con.execute("SELECT name FROM schema_migrations").fetchall()}
    assert "half_done" not in tables and "9999_broken.sql" not in names
    assert "documents" in tables  # the good migrations before it stay applied


def test_write_rolls_back_on_error(workspace):
    with pytest.raises(RuntimeError):
        with store.write(workspace) as con:
            con.execute("INSERT INTO systems (name, model, context) VALUES ('s', 'm', 'none')")
            raise RuntimeError("boom")
    with store.connect(workspace) as con:
        assert con.execute("SELECT count(*) FROM systems").fetchone()[0] == 0
