"""New workspaces copied from the per-process template of the migrated schema (lsqa.store.db): the same
schema as migrating step by step, a queue-signals version of their own, the fallback when the path is
taken, a new template when the migrations change, and two processes creating one path at once."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import duckdb

from lsqa import store
from lsqa.store import db
from tests.support import forkserver

# What a workspace's schema is, read from DuckDB's catalog (names, types, defaults, index and view SQL,
# sequences' settings), each sorted.
CATALOG = {
    "tables": "SELECT table_name, sql FROM duckdb_tables() WHERE database_name = current_database()",
    "columns": "SELECT table_name, column_index, column_name, data_type, column_default, is_nullable"
               " FROM duckdb_columns() WHERE database_name = current_database()",
    "constraints": "SELECT table_name, constraint_type, constraint_text FROM duckdb_constraints()"
                   " WHERE database_name = current_database()",
    "indexes": "SELECT index_name, table_name, sql FROM duckdb_indexes() WHERE database_name = current_database()",
    "views": "SELECT view_name, sql FROM duckdb_views() WHERE database_name = current_database() AND NOT internal",
    "sequences": "SELECT sequence_name, start_value, min_value, max_value, increment_by, cycle, last_value"
                 " FROM duckdb_sequences() WHERE database_name = current_database()",
    "migrations": "SELECT name, sha256 FROM schema_migrations",
    "rows": "SELECT (SELECT count(*) FROM queue_signals_version), (SELECT verdicts FROM queue_signals_version),"
            " (SELECT count(*) FROM queue_signals), (SELECT count(*) FROM queue_dirty)",
}


def catalog(con) -> dict[str, list]:
    return {name: sorted(con.execute(sql).fetchall(), key=repr) for name, sql in CATALOG.items()}


def _version(con) -> str:
    (version,) = con.execute("SELECT version FROM queue_signals_version").fetchone()
    return version


def test_a_template_made_workspace_has_the_schema_of_one_migrated_step_by_step(tmp_path):
    stepwise = tmp_path / "stepwise.duckdb"
    con = duckdb.connect(str(stepwise))
    db.migrate(con)
    expected = catalog(con)
    con.close()
    with store.connect(tmp_path / "warm.duckdb"):
        pass  # the template is built by the first new workspace of the process, if not yet
    made = db._template()
    assert made is not None and [name for name, _ in made.digests] == [p.name for p in db.migration_files()]
    with store.connect(tmp_path / "before.duckdb") as con:  # any connection: the host's clock
        (before,) = con.execute("SELECT current_timestamp::TIMESTAMP").fetchone()
    copy = tmp_path / "copy.duckdb"
    with store.connect(copy) as con:
        got = catalog(con)
        applied = con.execute("SELECT DISTINCT applied_at FROM schema_migrations").fetchall()
        (con_time,) = con.execute("SELECT current_timestamp::TIMESTAMP").fetchone()
        assert _version(con) != made.version
    assert got == expected
    # The schema has no CREATE INDEX of its own today: its keys are constraints (compared all the same).
    assert len(expected["tables"]) > 30 and expected["constraints"] and expected["sequences"] and expected["views"]
    assert len(applied) == 1 and before <= applied[0][0] <= con_time  # the new file's creation, for every row
    # The file is DuckDB's own, whole: another DuckDB instance opens it and sees the same.
    other = duckdb.connect(str(copy), read_only=True)
    try:
        assert catalog(other) == expected
    finally:
        other.close()


def test_two_new_workspaces_never_share_a_queue_signals_version(tmp_path):
    versions = []
    for name in ("a", "b", "c"):
        with store.connect(tmp_path / f"{name}.duckdb") as con:
            versions.append(_version(con))
    made = db._template()
    assert made is not None
    assert len(set(versions)) == 3 and made.version not in versions
    assert not list(tmp_path.glob(".*lsqa-new"))  # no temporary copy left beside them


def test_a_path_that_appeared_is_not_overwritten(tmp_path):
    """The copy is linked to the path, never written over it: a file found there (made by another process
    meanwhile) is left as it is, and opened as before."""
    path = tmp_path / "there.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE theirs (x INTEGER)")
    con.close()
    data = path.read_bytes()
    assert db._from_template(str(path)) is None
    assert path.read_bytes() == data and not list(tmp_path.glob(".*lsqa-new"))
    # A WAL left where the new file would be: DuckDB decides what to make of it, as before.
    wal_only = tmp_path / "orphan.duckdb"
    Path(str(wal_only) + ".wal").write_bytes(b"")
    assert db._from_template(str(wal_only)) is None and not wal_only.exists()


def test_an_existing_older_workspace_is_migrated_in_place(tmp_path):
    from tests.support.migrations import workspace_before

    path, con = workspace_before(tmp_path, "0028")
    (version,) = con.execute("SELECT version FROM queue_signals_version").fetchone()
    con.close()
    db.forget_migrated(path)
    with store.connect(path) as con:
        names = [n for (n,) in con.execute("SELECT name FROM schema_migrations ORDER BY name").fetchall()]
        assert names == [p.name for p in db.migration_files()]
        assert _version(con) == version  # its own, kept: the template is for new files only


def test_a_changed_migration_folder_gets_a_new_template(tmp_path, monkeypatch):
    folder = tmp_path / "migrations"
    shutil.copytree(db.MIGRATIONS_DIR, folder)
    monkeypatch.setattr(db, "MIGRATIONS_DIR", folder)
    with store.connect(tmp_path / "one.duckdb") as con:
        assert not con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'later_table'"
                               " AND database_name = current_database()").fetchone()[0]
    first = db._template()
    (folder / "9999_later.sql").write_text("CREATE TABLE later_table (x INTEGER);\n")
    with store.connect(tmp_path / "two.duckdb") as con:
        assert con.execute("SELECT count(*) FROM later_table").fetchone()[0] == 0
        assert con.execute("SELECT max(name) FROM schema_migrations").fetchone()[0] == "9999_later.sql"
    second = db._template()
    assert first is not None and second is not None and second.digests != first.digests
    assert second.digests[-1][0] == "9999_later.sql"
    # An edit of a migration the template holds gives a new one too (kept by digest, not by name).
    (folder / "9999_later.sql").write_text("CREATE TABLE later_table (x INTEGER, y INTEGER);\n")
    with store.connect(tmp_path / "three.duckdb") as con:
        assert [r[0] for r in con.execute("DESCRIBE later_table").fetchall()] == ["x", "y"]


def test_forget_migrated_drops_the_template(tmp_path):
    with store.connect(tmp_path / "a.duckdb"):
        pass
    assert db._template_made is not None
    db.forget_migrated()
    assert db._template_made is None
    with store.connect(tmp_path / "b.duckdb") as con:
        assert con.execute("SELECT count(*) FROM schema_migrations").fetchone()[0] == len(db.migration_files())


# Each child builds its template first, says so, waits for the go file, then creates (or finds) the
# workspace and writes one row of its own.
CREATE_AT_ONCE = (
    "import os, sys, time\n"
    "from lsqa import store\n"
    "from lsqa.store import db\n"
    "assert db._template() is not None\n"
    "print('ready', flush=True)\n"
    "while not os.path.exists(sys.argv[2]):\n"
    "    time.sleep(0.001)\n"
    "with store.write(sys.argv[1]) as con:\n"
    "    con.execute(\"INSERT INTO systems (name, model, context) VALUES (?, 'm', 'none')\", [sys.argv[3]])\n"
    "print('done', flush=True)\n"
)


def test_two_processes_creating_one_new_path_at_once_end_with_one_workspace(tmp_path):
    for attempt in range(3):
        path, go = tmp_path / f"ws{attempt}.duckdb", tmp_path / f"go{attempt}"
        procs = [forkserver.start(CREATE_AT_ONCE, path, go, name, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True) for name in ("first", "second")]
        try:
            for proc in procs:
                assert proc.stdout.readline().strip() == "ready", proc.stderr.read()
            go.touch()
            deadline = time.monotonic() + 60
            for proc in procs:
                out, err = proc.communicate(timeout=max(1.0, deadline - time.monotonic()))
                assert proc.returncode == 0 and out.strip() == "done", err
        finally:
            for proc in procs:
                if proc.poll() is None:
                    proc.kill()
        with store.connect(path) as con:
            names = [n for (n,) in con.execute("SELECT name FROM systems ORDER BY name").fetchall()]
            applied = [n for (n,) in con.execute("SELECT name FROM schema_migrations ORDER BY name").fetchall()]
            assert con.execute("SELECT count(*) FROM queue_signals_version").fetchone()[0] == 1
        assert names == ["first", "second"]
        assert applied == [p.name for p in db.migration_files()]
        assert not list(tmp_path.glob(".*lsqa-new"))


def test_a_forked_child_makes_new_workspaces_from_what_it_inherited(tmp_path):
    """The template is plain bytes: a child forked after it was built makes new workspaces of its own
    from it (with its own host, db.py's fork hooks), each with a version of its own."""
    with store.connect(tmp_path / "parent.duckdb"):
        pass
    made = db._template()
    assert made is not None
    child = tmp_path / "child.duckdb"
    pid = os.fork()
    if pid == 0:  # the child: no pytest machinery on the way out
        code = 1
        try:
            inherited = db._template_made is made
            with store.connect(child) as con:
                ok = con.execute("SELECT count(*) FROM schema_migrations").fetchone()[0] == len(made.digests)
            code = 0 if inherited and ok else 3
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    with store.connect(child) as con:
        assert _version(con) != made.version
        assert catalog(con)["migrations"] == sorted(made.digests, key=repr)


# A process killed (SIGKILL: no finally runs) while it builds its template, or while it writes a new workspace's
# copy beside the path: what it leaves is what a real kill leaves.
KILLED_WHILE = """
import os, signal, sys, tempfile
from lsqa.store import db
tempfile.tempdir = sys.argv[1]
def killed(*args, **kwargs):
    print(os.getpid(), flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
if sys.argv[3] == "template":
    db.forget_migrated()
    db.migrate = killed  # in the middle of the build: the folder and a part-made file are there
else:
    db._template()  # built (and cleaned up) before the kill
    db.os.link = killed  # the copy is written, not yet linked to the path
with db.connect(sys.argv[2]):
    pass
"""


def _killed_while(stage: str, tmp_root: Path, path: Path) -> int:
    done = forkserver.run(KILLED_WHILE, tmp_root, path, stage, capture_output=True, text=True, timeout=120)
    assert done.returncode == -9, done.stderr[-2000:]
    return int(done.stdout.split()[0])


def test_a_template_folder_left_by_a_killed_process_goes_with_the_next_build(tmp_path, monkeypatch):
    """A folder of a process that is gone is removed by the next build; one of a live process (building now) stays."""
    tmp_root = tmp_path / "tmp"
    tmp_root.mkdir()
    killed = _killed_while("template", tmp_root, tmp_path / "never.duckdb")
    left = list(tmp_root.glob(f"{db.TEMPLATE_PREFIX}{killed}-*"))
    assert len(left) == 1 and list(left[0].iterdir()), "the kill left its folder with a part-made file"
    live = tmp_root / f"{db.TEMPLATE_PREFIX}{os.getpid()}-building"
    live.mkdir()
    monkeypatch.setattr("tempfile.tempdir", str(tmp_root))
    db.forget_migrated()
    with store.connect(tmp_path / "ws.duckdb") as con:
        assert con.execute("SELECT count(*) FROM schema_migrations").fetchone()[0] == len(db.migration_files())
    assert sorted(p.name for p in tmp_root.iterdir()) == [live.name]


def test_a_copy_left_by_a_killed_process_goes_once_it_is_old(tmp_path):
    """The copy a kill left beside the path stays while it could be another process's, at work now (a fresh one),
    and goes with the next new workspace at that path once older than any copy takes."""
    path = tmp_path / "ws.duckdb"
    _killed_while("copy", tmp_path, path)
    (left,) = tmp_path.glob(".ws.duckdb.*.lsqa-new")
    assert not path.exists()
    with store.connect(path):
        pass
    assert left.exists(), "a fresh copy may be a live process's"
    path.unlink()
    aged = time.time() - db.LEFT_COPY_AGE_S - 1
    os.utime(left, (aged, aged))
    with store.connect(path) as con:
        assert con.execute("SELECT count(*) FROM queue_signals_version").fetchone()[0] == 1
    assert not list(tmp_path.glob(".*lsqa-new"))
