"""The pre-imported process the tests fork their "other process" from (tests/support/forkserver.py) keeps the
contract of a new ``python -c``: its own pid (kill -9 reaches it and is reported as -9), the cwd, argv,
environment, stdin/stdout/stderr and exit status asked for, file locks and DuckDB connections of its
own, and a new interpreter where a pre-imported module read the environment differently."""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys

import duckdb
import pytest

from lsqa import store
from tests.conftest import run_python
from tests.support import forkserver


def test_argv_cwd_output_and_exit_status_are_the_childs(tmp_path):
    done = run_python("import os, sys; print(sys.argv, os.getcwd(), os.getpid()); print('to stderr', file=sys.stderr);"
                      " sys.exit(3)", "a", 1, cwd=tmp_path)
    argv, cwd, pid = done.stdout.rsplit(" ", 2)
    assert done.returncode == 3 and done.stderr == "to stderr\n"
    assert argv == "['-c', 'a', '1']" and cwd == str(tmp_path)
    assert int(pid) not in (os.getpid(), forkserver._servers[forkserver.PRELOAD]["proc"].pid)


def test_an_uncaught_error_is_a_traceback_and_exit_1_and_threads_and_atexit_run_first():
    done = run_python("import atexit, threading, time\n"
                      "atexit.register(lambda: print('atexit', flush=True))\n"
                      "threading.Thread(target=lambda: (time.sleep(0.2), print('thread', flush=True))).start()\n"
                      "raise ValueError('boom')")
    assert done.returncode == 1
    assert done.stderr.rstrip().endswith("ValueError: boom") and "Traceback" in done.stderr
    assert done.stdout == "thread\natexit\n"


def test_kill_9_reaches_the_child_and_is_its_status():
    child = forkserver.start("import time; print('up', flush=True); time.sleep(60)", stdout=subprocess.PIPE, text=True)
    assert child.stdout.readline() == "up\n" and child.poll() is None
    child.send_signal(signal.SIGKILL)
    assert child.wait(timeout=30) == -signal.SIGKILL
    child.stdout.close()


def test_stdin_and_a_timeout():
    done = forkserver.run("import sys; print(sys.stdin.read().upper())", input="abc", capture_output=True, text=True)
    assert done.stdout == "ABC\n"
    with pytest.raises(subprocess.TimeoutExpired):
        forkserver.run("import time; time.sleep(30)", timeout=0.5)


def test_the_childs_file_lock_and_duckdb_connection_are_its_own(tmp_path):
    lock, ws = tmp_path / "lock", tmp_path / "ws.duckdb"
    with store.connect(ws):
        pass
    child = forkserver.start("import fcntl, sys, duckdb\n"
                             "f = open(sys.argv[1], 'w'); fcntl.flock(f, fcntl.LOCK_EX)\n"
                             "con = duckdb.connect(sys.argv[2])\n"
                             "print('held', flush=True); sys.stdin.read()", lock, ws,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert child.stdout.readline() == "held\n"
    with open(lock, "w") as f, pytest.raises(BlockingIOError):
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    with pytest.raises(duckdb.IOException, match="lock"):
        duckdb.connect(str(ws))
    child.communicate("", timeout=60)
    assert child.returncode == 0
    duckdb.connect(str(ws)).close()  # free once the child has ended


def test_lsqa_is_pre_imported_but_an_environment_read_at_import_gets_a_new_interpreter():
    code = "import os, sys; print('lsqa.store' in sys.modules, os.environ.get('LSQA_BATCH_POLL_S'))"
    assert run_python(code).stdout == "True None\n"
    # lsqa.llm.batch (which the server imported with the pipeline) reads LSQA_BATCH_POLL_S at import
    assert run_python(code, env={**os.environ, "LSQA_BATCH_POLL_S": "0.05"}).stdout == "False 0.05\n"
    assert run_python(code, fresh=True).stdout == "False None\n"


def test_a_process_that_started_a_server_leaves_no_socket_folder_behind(tmp_path):
    """Each test process starts its servers in folders of the temporary folder: they go when it ends."""
    code = ("import sys; sys.path.insert(0, sys.argv[1]); from tests.support import forkserver\n"
            "print(forkserver._address()); assert forkserver.run('pass').returncode == 0")
    done = subprocess.run([sys.executable, "-c", code, str(forkserver.PROJECT_ROOT)], capture_output=True,
                          text=True, timeout=120, env={**os.environ, "TMPDIR": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    socket_path = done.stdout.strip()
    assert socket_path.startswith(str(tmp_path)) and os.path.basename(socket_path) == "s"
    assert list(tmp_path.iterdir()) == [], sorted(p.name for p in tmp_path.iterdir())
