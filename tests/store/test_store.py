"""Workspace migrations: fresh, re-run, refusal of an edited migration, atomicity."""

import os
import shutil

import duckdb
import pytest

from lsqa import store
from lsqa.store import db
from tests.support.migrations import workspace_before


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


@pytest.mark.parametrize("how", ["in place", "moved over it"])
def test_an_edit_of_the_same_size_with_its_old_time_is_refused(tmp_path, how):
    """An applied migration edited without changing its size, its modification time set back afterwards (as
    ``cp -p``, ``rsync -t`` or ``touch -d`` leave it), in place or as a new file moved over it: still refused."""
    folder = _copy_migrations(tmp_path)
    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    store.migrate(con, folder)
    first = sorted(folder.glob("*.sql"))[0]
    before, text = first.stat(), first.read_text()
    edited = text.replace("CREATE", "create", 1)
    assert edited != text and len(edited) == len(text)
    target = first if how == "in place" else first.with_suffix(".new")
    target.write_text(edited)
    if how == "moved over it":
        os.replace(target, first)
    os.utime(first, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert (first.stat().st_size, first.stat().st_mtime_ns) == (before.st_size, before.st_mtime_ns)
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


def test_undo_flags_written_before_the_undoes_column_are_recognised(tmp_path):
    """Migration 0005: a flag row that an undo wrote as 'undo of flag #N' (the old marker) gets
    ``undoes = N``, but only when flag N is the same annotator's earlier flag on that reference;
    the notes stay as written."""
    new = tmp_path / "new"
    _, con = workspace_before(tmp_path, "0005", "w.duckdb")
    con.execute("""INSERT INTO reference_flags (id, annotator, question_id, reference, reason, note) VALUES
        (1, 'ann', 'q1', '1', 'wrong', ''),
        (2, 'ann', 'q1', '1', 'retract', 'undo of flag #1'),
        (3, 'bob', 'q1', '2', 'ambiguous', 'undo of flag #1 is what ann did'),
        (4, 'ann', 'q2', '1', 'wrong', 'undo of flag #99')""")
    shutil.copytree(db.MIGRATIONS_DIR, new)
    assert "0005_derived_views.sql" in store.migrate(con, new)
    rows = con.execute("SELECT id, undoes, note FROM reference_flags ORDER BY id").fetchall()
    assert rows == [(1, None, ""), (2, 1, "undo of flag #1"), (3, None, "undo of flag #1 is what ann did"),
                    (4, None, "undo of flag #99")]
    assert con.execute("SELECT id FROM live_flags ORDER BY id").fetchall() == [(3,), (4,)]
    assert con.execute("SELECT id FROM current_flags ORDER BY id").fetchall() == [(3,), (4,)]


def test_a_workspace_created_again_under_the_same_path_is_migrated(workspace):
    with store.connect(workspace) as con:
        con.execute("SELECT count(*) FROM runs").fetchone()
    os.remove(workspace)
    with store.connect(workspace) as con:  # before: Catalog Error, table runs does not exist
        assert con.execute("SELECT count(*) FROM runs").fetchone()[0] == 0
