"""A workspace kept attached between a server's requests (``lsqa.store.linger``): reused while it
lingers, let go when another process waits for it or when the lingering ends, and nothing lost when
the lingering process dies."""

from __future__ import annotations

import os
import signal
import subprocess
import time

import pytest

from lsqa import store
from lsqa.store import db
from tests.conftest import run_python
from tests.support import forkserver

# Another process opens the workspace, patient for up to 30 s, and says how long it waited.
WAITER = (
    "import sys, time\n"
    "from lsqa.store import connect\n"
    "t = time.monotonic()\n"
    "with connect(sys.argv[1], timeout_s=30) as con:\n"
    "    names = [r[0] for r in con.execute('SELECT name FROM systems ORDER BY name').fetchall()]\n"
    "print(round(time.monotonic() - t, 3), *names)\n"
)


@pytest.fixture
def lingering():
    """``linger(seconds)`` for the test, and back to none after it, with nothing left attached."""
    yield store.linger
    store.linger(0)
    for path, entry in list(db._attachments.items()):
        with entry.lock:
            if entry.attached and not entry.users:
                db._detach(entry, path)


def add_system(workspace, name: str) -> None:
    with store.write(workspace) as con:
        con.execute("INSERT INTO systems (name, model, context) VALUES (?, 'm', 'none')", [name])


def entry_of(workspace) -> db._Attachment:
    return db._attachments[str(workspace.resolve())]


def wait_until(check, seconds: float = 10.0) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if check():
            return True
        time.sleep(0.02)
    return check()


def test_a_lingering_workspace_is_used_again_without_attaching(workspace, lingering, monkeypatch):
    lingering(60)
    add_system(workspace, "first")
    assert entry_of(workspace).attached and entry_of(workspace).users == 0
    attaches = []
    real_attach = db._attach
    monkeypatch.setattr(db, "_attach", lambda *a, **k: (attaches.append(a), real_attach(*a, **k)))
    add_system(workspace, "second")
    with store.connect(workspace) as con:
        assert con.execute("SELECT count(*) FROM systems").fetchone() == (2,)
    assert attaches == []


def test_a_process_that_waits_gets_the_file_at_once_with_every_commit(workspace, lingering):
    lingering(60)
    add_system(workspace, "written while lingering")
    out = run_python(WAITER, workspace)
    assert out.returncode == 0, out.stderr
    waited, *names = out.stdout.split()
    assert names == ["written", "while", "lingering"]
    assert float(waited) < 5.0  # not the 60 s of lingering: the waiter said so and the file was let go
    assert not entry_of(workspace).attached
    assert not db.waiting_file(workspace).exists()  # the waiter took its file away


def test_an_idle_workspace_is_let_go_when_its_lingering_ends_checkpointed(workspace, lingering):
    lingering(0.3)
    add_system(workspace, "kept")
    assert entry_of(workspace).attached
    assert wait_until(lambda: not entry_of(workspace).attached)
    assert not os.path.exists(str(workspace) + ".wal")  # the DETACH checkpointed the WAL into the file
    out = run_python(WAITER.replace("timeout_s=30", "timeout_s=0"), workspace)  # no wait needed now
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[1:] == ["kept"]


def test_a_stale_waiting_file_holds_nobody_back(workspace, lingering):
    lingering(60)
    db.waiting_file(workspace).touch()
    old = time.time() - db.WAITING_FRESH_S - 5
    os.utime(db.waiting_file(workspace), (old, old))  # left by a waiter that died
    add_system(workspace, "one")
    assert entry_of(workspace).attached  # lingers all the same
    db.waiting_file(workspace).touch()  # a waiter now
    add_system(workspace, "two")
    assert not entry_of(workspace).attached  # let go as the write ended


def test_after_letting_a_waiter_in_the_process_does_not_linger_for_a_while(workspace, lingering, monkeypatch):
    """`lsqa run` in a terminal beside the dashboard writes often: it must not wait for the lingering thread at each write."""
    lingering(60)
    add_system(workspace, "before")
    out = run_python(WAITER, workspace)  # comes while the file lingers: it is let go
    assert out.returncode == 0, out.stderr
    add_system(workspace, "next")
    assert not entry_of(workspace).attached  # let go as it closed: the other process may come back
    monkeypatch.setattr(db, "SHARING_S", 0.0)  # the while has passed
    add_system(workspace, "later")
    assert entry_of(workspace).attached


def test_a_file_replaced_while_lingering_is_attached_anew(tmp_path, migrated_workspace, lingering):
    first, second = migrated_workspace(tmp_path / "ws.duckdb"), migrated_workspace(tmp_path / "other.duckdb")
    add_system(second, "in the new file")
    lingering(60)
    add_system(first, "in the old file")
    assert entry_of(first).attached
    os.replace(second, first)  # `lsqa demo --path` over it, a restored backup
    with store.connect(first) as con:
        assert con.execute("SELECT name FROM systems").fetchall() == [("in the new file",)]


# A lingering process that commits, says so, and waits to be killed.
KILLED = (
    "import sys, time\n"
    "from lsqa import store\n"
    "store.linger(600)\n"
    "for i in range(3):\n"
    "    with store.write(sys.argv[1]) as con:\n"
    "        con.execute(\"INSERT INTO systems (name, model, context) VALUES (?, 'm', 'none')\", [f'kept {i}'])\n"
    "print('written', flush=True)\n"
    "time.sleep(600)\n"
)


def test_a_lingering_process_killed_loses_no_commit(workspace):
    proc = forkserver.start(KILLED, workspace, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "written"
        assert os.path.getsize(str(workspace) + ".wal") > 0  # the commits are in the WAL, not checkpointed
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    with store.connect(workspace) as con:  # the WAL is replayed as the file is attached again
        assert [r[0] for r in con.execute("SELECT name FROM systems ORDER BY name").fetchall()] == \
            ["kept 0", "kept 1", "kept 2"]


def test_linger_refuses_a_negative_time():
    with pytest.raises(ValueError, match="seconds must be 0 or more"):
        store.linger(-1)
