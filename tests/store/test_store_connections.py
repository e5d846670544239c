"""Workspace connections: one in-memory host instance per process, files attached while in use."""

from __future__ import annotations

import os
import threading

import duckdb
import pytest

from lsqa import store
from lsqa.store import db
from tests.conftest import run_python

# Another process opens the workspace with a short patience and prints what it saw.
OTHER_PROCESS = (
    "import sys\n"
    "from lsqa.store import connect, WorkspaceError\n"
    "try:\n"
    "    with connect(sys.argv[1], timeout_s=0.5) as con:\n"
    "        print('rows', con.execute('SELECT count(*) FROM systems').fetchone()[0])\n"
    "except WorkspaceError as exc:\n"
    "    print('locked:', exc)\n"
)


def other_process(workspace) -> str:
    out = run_python(OTHER_PROCESS, workspace)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def add_system(con, name: str) -> None:
    con.execute("INSERT INTO systems (name, model, context) VALUES (?, 'm', 'none')", [name])


@pytest.mark.slow
def test_file_is_locked_while_any_connection_is_open_and_free_after_the_last(workspace):
    with store.connect(workspace) as outer:
        with store.connect(workspace) as inner:  # a nested connection shares the attached file
            add_system(inner, "written inside")
        assert outer.execute("SELECT name FROM systems").fetchall() == [("written inside",)]
        seen_while_open = other_process(workspace)
    assert seen_while_open.startswith("locked:")
    assert str(workspace) in seen_while_open and "LSQA_LOCK_TIMEOUT" in seen_while_open
    assert other_process(workspace) == "rows 1"  # detached: the file is free and the write is there


def test_threads_write_through_one_attachment_at_the_same_time(workspace):
    barrier = threading.Barrier(4)
    errors = []

    def writer(i: int) -> None:
        try:
            with store.write(workspace) as con:
                barrier.wait(timeout=30)  # all four connections are open at once
                add_system(con, f"thread {i}")
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert errors == []
    with store.connect(workspace) as con:
        names = sorted(r[0] for r in con.execute("SELECT name FROM systems").fetchall())
    assert names == [f"thread {i}" for i in range(4)]
    assert db._attachments[str(workspace.resolve())].users == 0
    assert other_process(workspace) == "rows 4"


def test_two_workspaces_in_one_process_stay_apart(tmp_path):
    first, second = tmp_path / "a.duckdb", tmp_path / "b.duckdb"
    with store.write(first) as a, store.write(second) as b:
        add_system(a, "only in a")
        add_system(b, "only in b")
    with store.connect(first) as a, store.connect(second) as b:
        assert a.execute("SELECT name FROM systems").fetchall() == [("only in a",)]
        assert b.execute("SELECT name FROM systems").fetchall() == [("only in b",)]


# A fresh interpreter connects (its host stays alive, idle), forks, and the child connects too and
# then exits through normal interpreter shutdown, which frees whatever DuckDB instance it holds.
FORKING_PROCESS = (
    "import os, sys, time\n"
    "from lsqa.store import connect\n"
    "with connect(sys.argv[1]) as con:\n"
    "    con.execute(\"INSERT INTO systems (name, model, context) VALUES ('parent', 'm', 'none')\")\n"
    "pid = os.fork()\n"
    "if pid == 0:\n"
    "    with connect(sys.argv[1]) as con:\n"
    "        print('child sees', con.execute('SELECT count(*) FROM systems').fetchone()[0], flush=True)\n"
    "    sys.exit(0)\n"
    "deadline = time.monotonic() + 20\n"
    "while time.monotonic() < deadline:\n"
    "    done, status = os.waitpid(pid, os.WNOHANG)\n"
    "    if done:\n"
    "        print('child status', status, flush=True)\n"
    "        break\n"
    "    time.sleep(0.05)\n"
    "else:\n"
    "    os.kill(pid, 9)\n"
    "    print('child hung', flush=True)\n"
)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_starts_its_own_host_and_exits_cleanly(workspace):
    out = run_python(FORKING_PROCESS, workspace)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[:2] == ["child sees 1", "child status 0"], out.stdout + out.stderr


def test_an_attachment_whose_bookkeeping_was_interrupted_is_taken_up_again(workspace):
    # As if Ctrl-C arrived after ATTACH but before the entry was marked attached.
    with store.connect(workspace):
        pass
    entry = db._attachment(str(workspace.resolve()))
    db._attach(str(workspace.resolve()), entry.alias, timeout_s=1)
    assert not entry.attached
    with store.connect(workspace) as con:
        assert con.execute("SELECT count(*) FROM systems").fetchone()[0] == 0
    assert other_process(workspace) == "rows 0"  # detached again at the end


FORK_DURING_LOCK_WAIT = (
    "import os, sys, time, threading, subprocess\n"
    "from lsqa import store\n"
    "ws = sys.argv[1]\n"
    "with store.connect(ws): pass\n"
    "holder = subprocess.Popen([sys.executable, '-c', 'import duckdb,sys,time\\n"
    "c = duckdb.connect(sys.argv[1]); print(1, flush=True); time.sleep(1.5)', ws],"
    " stdout=subprocess.PIPE, text=True)\n"
    "holder.stdout.readline()\n"
    "entered, release = threading.Event(), threading.Event()\n"
    "def a():\n"
    "    with store.connect(ws):\n"
    "        entered.set(); release.wait(30)\n"
    "t = threading.Thread(target=a); t.start()\n"
    "time.sleep(0.5)\n"
    "pid = os.fork()\n"
    "if pid == 0:\n"
    "    os._exit(0)\n"
    "os.waitpid(pid, 0)\n"
    "entered.wait(30)\n"
    "try:\n"
    "    with store.connect(ws) as con:\n"
    "        print('ok', con.execute('SELECT count(*) FROM systems').fetchone()[0], flush=True)\n"
    "except Exception as exc:\n"
    "    print('failed', type(exc).__name__, exc, flush=True)\n"
    "release.set(); t.join(); holder.wait()\n"
)


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_fork_while_a_thread_waits_for_the_file_lock_does_not_break_later_connects(workspace):
    out = run_python(FORK_DURING_LOCK_WAIT, workspace)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok 0", out.stdout + out.stderr


def test_the_schema_is_checked_once_per_attachment_not_per_connection(workspace, monkeypatch):
    """A dashboard page opens 10-40 connections inside one attachment (common.kept_open); the
    file cannot be swapped under it, so only the first checks the schema. The next attachment checks
    again when the file is not the one this process left (written by another process, or deleted and
    created in between: then it is migrated, test_store.py), and not when it is, byte for byte."""
    with store.connect(workspace):
        pass  # migrated and detached
    calls = []
    real = db._has_schema
    monkeypatch.setattr(db, "_has_schema", lambda con: calls.append(1) or real(con))
    with store.connect(workspace):
        pass
    assert calls == []  # as this process left it
    other = duckdb.connect(str(workspace))  # another process's write, in effect
    other.execute("INSERT INTO systems (name, model, context) VALUES ('other', 'm', 'none')")
    other.close()
    with store.connect(workspace):
        for _ in range(10):
            with store.connect(workspace) as con:
                assert con.execute("SELECT count(*) FROM systems").fetchone()[0] == 1
    assert len(calls) == 1
    with store.connect(workspace):
        pass
    assert len(calls) == 1
