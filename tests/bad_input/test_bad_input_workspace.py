"""Issue 14, area 3: a workspace path that is not a workspace is refused in one line before DuckDB
sees it (no traceback, no hang on a FIFO, no extension download for a SQLite file, nothing created
or changed); a mistyped path on a command that reads is refused, not created; a read-only
workspace is still read by status, rank, export and the dashboard's reads."""

from __future__ import annotations

import os
import random
import shutil
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from tests.conftest import PROJECT_ROOT, TEST_DATA
from tests.support.bad_input import assert_refused, invoke, snapshot

STORY = TEST_DATA / "narrativeqa_slice" / "stories" / "2dd593d19e201c9cf4edb0703cad0f525c1038a2.txt"
ANSWERS = "question_id,system,answer\nq1,s,a\n"
REVIEWS = "judge,question_id,system,label,annotator\nj,q1,s,yes,ann\n"

# Commands that only read a workspace, and commands that write one (with their other arguments).
READERS = {
    "status": lambda ws, tmp: ["status", "--workspace", ws],
    "status --json": lambda ws, tmp: ["status", "--json", "--workspace", ws],
    "rank": lambda ws, tmp: ["rank", "--judge", "sxs", "--workspace", ws, "--bootstrap", "0"],
    "agreement": lambda ws, tmp: ["agreement", "--rater-a", "a", "--rater-b", "b", "--workspace", ws],
    "export": lambda ws, tmp: ["export", "--out", tmp / "out", "--workspace", ws],
    "entities": lambda ws, tmp: ["entities", "The Tale of Tom Kitten", "--workspace", ws],
}
WRITERS = {
    "ingest-book": lambda ws, tmp: ["ingest-book", STORY, "--workspace", ws],
    "import-answers": lambda ws, tmp: ["import-answers", tmp / "answers.csv", "--workspace", ws],
    "run": lambda ws, tmp: ["run", PROJECT_ROOT / "configs" / "demo_small.toml", "--workspace", ws],
}
COMMANDS = {**READERS, **WRITERS,
            # Reviews belong to stored verdicts: a mistyped path is refused, never a new workspace.
            "import-reviews": lambda ws, tmp: ["import-reviews", tmp / "reviews.csv", "--workspace", ws]}


def _text(p: Path):
    p.write_text("hello, I am not a database\n" * 50)


def _empty(p: Path):
    p.write_bytes(b"")


def _random(p: Path):
    p.write_bytes(random.Random(14).randbytes(70_000))


def _random_with_duck_magic(p: Path):
    data = bytearray(random.Random(15).randbytes(70_000))
    data[8:12] = b"DUCK"
    p.write_bytes(bytes(data))


def _folder(p: Path):
    p.mkdir()


def _fifo(p: Path):
    os.mkfifo(p)


def _sqlite(p: Path):
    con = sqlite3.connect(p)
    con.execute("CREATE TABLE t (a INTEGER)")
    con.execute("INSERT INTO t VALUES (1)")
    con.commit()
    con.close()


def _other_duckdb(p: Path):
    con = duckdb.connect(str(p))
    con.execute("CREATE TABLE invoices (id INTEGER, amount DOUBLE)")
    con.execute("INSERT INTO invoices VALUES (1, 9.5)")
    con.close()


def _truncated(p: Path, template: Path):
    p.write_bytes(template.read_bytes()[:20_000])


def _dangling_link(p: Path):
    p.symlink_to(p.parent / "gone.duckdb")


def _under_a_file(p: Path):
    (p.parent / "afile").write_text("x")


NOT_WORKSPACES = {
    "text file": _text, "empty file": _empty, "random bytes": _random, "random bytes with the magic": _random_with_duck_magic,
    "folder": _folder, "FIFO": _fifo, "SQLite database": _sqlite, "another DuckDB database": _other_duckdb,
    "truncated workspace": None, "dangling link": _dangling_link, "path under a file": _under_a_file,
}


@pytest.fixture(scope="module")
def good_workspace(tmp_path_factory):
    from lsqa.corpus.ingest import ingest_narrativeqa

    path = tmp_path_factory.mktemp("good") / "ws.duckdb"
    ingest_narrativeqa(path, TEST_DATA / "narrativeqa_slice")
    return path


def _make(name: str, tmp_path: Path, template: Path) -> Path:
    path = tmp_path / "ws.duckdb"
    if name == "truncated workspace":
        _truncated(path, template)
    elif name == "path under a file":
        _under_a_file(path)
        path = tmp_path / "afile" / "ws.duckdb"
    else:
        NOT_WORKSPACES[name](path)
    return path


def _listing(folder: Path) -> list:
    return sorted((p.name, stat.filemode(p.lstat().st_mode)) for p in folder.iterdir())


@pytest.mark.slow
@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("name", [n for n in NOT_WORKSPACES if n != "FIFO"])
def test_a_path_that_is_not_a_workspace_is_refused(tmp_path, good_workspace, name, command):
    path = _make(name, tmp_path, good_workspace)
    (tmp_path / "answers.csv").write_text(ANSWERS)
    (tmp_path / "reviews.csv").write_text(REVIEWS)
    listing = _listing(tmp_path)
    assert_refused(f"workspace {name} / {command}", COMMANDS[command](path, tmp_path), workspace=path,
                   must_name=(str(path),))
    assert _listing(tmp_path) == listing  # nothing created next to it (no .wal, no folder)


@pytest.mark.slow
@pytest.mark.parametrize("command", ["status", "ingest-book"])
def test_a_fifo_is_refused_without_hanging(tmp_path, command):
    """In another process with a deadline: an open() of a FIFO with no writer would block forever."""
    path = tmp_path / "ws.duckdb"
    os.mkfifo(path)
    args = [str(a) for a in COMMANDS[command](path, tmp_path)]
    done = subprocess.run([sys.executable, "-m", "lsqa.cli", *args], cwd=PROJECT_ROOT, capture_output=True,
                          text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(PROJECT_ROOT)})
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and str(path) in done.stderr, done.stderr
    assert "not a regular file" in done.stderr and stat.S_ISFIFO(path.lstat().st_mode)


@pytest.mark.parametrize("device", ["/dev/null", "/dev/zero"])
@pytest.mark.parametrize("command", ["status", "export", "ingest-book"])
def test_a_device_is_refused(tmp_path, device, command):
    assert_refused(f"workspace {device} / {command}", COMMANDS[command](Path(device), tmp_path), workspace=None,
                   must_name=(device, "not a regular file"))


def test_a_sqlite_file_downloads_nothing(tmp_path):
    """The refusal comes before DuckDB opens it, and the host has extension autoload off anyway."""
    from lsqa.store import db

    path = tmp_path / "ws.sqlite"
    _sqlite(path)
    assert_refused("workspace sqlite status", ["status", "--workspace", path], workspace=path,
                   must_name=(str(path), "SQLite"))
    cur = db._host_cursor()
    try:
        settings = dict(cur.execute("SELECT name, value FROM duckdb_settings() WHERE name IN "
                                    "('autoinstall_known_extensions', 'autoload_known_extensions')").fetchall())
        loaded = cur.execute("SELECT count(*) FROM duckdb_extensions() WHERE extension_name = 'sqlite_scanner' "
                             "AND (installed OR loaded)").fetchone()[0]
    finally:
        cur.close()
    assert settings == {"autoinstall_known_extensions": "false", "autoload_known_extensions": "false"}
    assert loaded == 0


MISTYPED = ["nope/ws.duckdb", "nope/deeper/ws.duckdb", "ws-typo.duckdb"]


@pytest.mark.parametrize("command", list(READERS) + ["import-answers", "import-reviews", "run"])
@pytest.mark.parametrize("mistyped", MISTYPED)
def test_a_mistyped_path_is_refused_by_commands_that_need_data(tmp_path, monkeypatch, mistyped, command):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "answers.csv").write_text(ANSWERS)
    (tmp_path / "reviews.csv").write_text(REVIEWS)
    listing = _listing(tmp_path)
    assert_refused(f"workspace mistyped {mistyped} / {command}", COMMANDS[command](Path(mistyped), tmp_path),
                   workspace=Path(mistyped), must_name=(mistyped, "does not exist"))
    assert _listing(tmp_path) == listing


def test_a_mistyped_default_workspace_is_refused_too(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert_refused("workspace mistyped via LSQA_WORKSPACE", ["status"], workspace=None,
                   env={"LSQA_WORKSPACE": "nope/ws.duckdb"}, must_name=("nope/ws.duckdb",))
    assert not (tmp_path / "nope").exists() and not (tmp_path / "db").exists()


def test_a_command_that_creates_a_workspace_says_so(tmp_path):
    path = tmp_path / "new" / "ws.duckdb"
    result = invoke("ingest-book", STORY, "--workspace", path)
    assert result.exit_code == 0, result.output
    assert f"creating a new workspace at {path}" in result.stderr
    again = invoke("ingest-book", STORY, "--workspace", path)
    assert again.exit_code == 0 and "creating" not in again.stderr


# ------------------------------------------------------------------------------ read-only

def _lock(path: Path, locked: bool) -> None:
    """Make ``path`` unwritable (or writable again). Root ignores permission bits, so as root the
    file or folder is made immutable (chattr +i), which the kernel refuses to write for anyone."""
    if os.geteuid() == 0:
        done = subprocess.run(["chattr", "+i" if locked else "-i", str(path)], capture_output=True, text=True)
        if done.returncode and locked:
            pytest.skip(f"cannot make {path} read-only as root here: {done.stderr.strip()}")
    else:
        os.chmod(path, (0o555 if path.is_dir() else 0o444) if locked else (0o755 if path.is_dir() else 0o644))


@pytest.fixture
def results_workspace(demo_workspace_template, tmp_path):
    """A workspace after a study run (the small demo's, built once per test run), in a folder of its own."""
    path = tmp_path / "ro" / "ws.duckdb"
    path.parent.mkdir()
    shutil.copy(demo_workspace_template, path)
    return path


@pytest.mark.slow
@pytest.mark.parametrize("folder_too", [False, True], ids=["file read-only", "file and folder read-only"])
def test_a_read_only_workspace_is_still_read(results_workspace, tmp_path, folder_too):
    from lsqa.dashboard import overview_view

    path = results_workspace
    before = snapshot(path)
    locked = [path, path.parent] if folder_too else [path]
    for p in locked:
        _lock(p, True)
    try:
        status = invoke("status", "--workspace", path)
        assert status.exit_code == 0 and "(read-only)" in status.stdout, status.output
        rank = invoke("rank", "--judge", "lexical-sxs-fc", "--workspace", path, "--bootstrap", "20")
        assert rank.exit_code == 0 and "extractive-fullbook" in rank.stdout, rank.output
        export = invoke("export", "--out", tmp_path / "out", "--workspace", path)
        assert export.exit_code == 0 and (tmp_path / "out" / "answers.csv").is_file(), export.output
        assert overview_view.overview(path)["tables"]["answers"] > 0  # what the dashboard's first page reads
        listing = sorted(p.name for p in path.parent.iterdir())
        assert_refused("workspace read-only / ingest-book", ["ingest-book", STORY, "--workspace", path],
                       workspace=path, must_name=(str(path), "read-only"))
        assert sorted(p.name for p in path.parent.iterdir()) == listing  # no .wal left behind
    finally:
        for p in locked:
            _lock(p, False)
    assert snapshot(path) == before


def test_the_probes_snapshot_sees_a_changed_row_but_not_a_rewritten_file(good_workspace, tmp_path):
    """What every probe's "nothing changed" rests on (``tests/bad_input.snapshot``): equal bytes are
    taken as equal at once, different bytes are settled table by table, so a row changed in place is
    seen and a file DuckDB rewrote with the same rows is not a change."""
    from lsqa import store

    path = tmp_path / "ws.duckdb"
    shutil.copy(good_workspace, path)
    before = snapshot(path)
    assert snapshot(path) == before and before.tables() is not None

    with store.write(path) as con:  # the same rows, written again: the bytes move, the tables do not
        con.execute("CREATE TABLE lsqa_probe_scratch AS SELECT 1 AS x")
        con.execute("DROP TABLE lsqa_probe_scratch")
    rewritten = snapshot(path)
    assert rewritten.content != before.content and rewritten == before

    with store.write(path) as con:  # one character of one question: same size, same row count
        (qid, text) = con.execute("SELECT id, text FROM questions ORDER BY id LIMIT 1").fetchone()
        con.execute("UPDATE questions SET text = ? WHERE id = ?", [text[:-1] + ("x" if text[-1] != "x" else "y"), qid])
    changed = snapshot(path)
    assert changed != before and [t for t in before if before[t] != changed[t]] == ["questions"]
