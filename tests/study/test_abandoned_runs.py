"""A stage run whose process is killed reads 'interrupted', not 'running' forever."""

from __future__ import annotations

import signal
import socket

from typer.testing import CliRunner

from lsqa import store
from lsqa.cli import app
from lsqa.store import runs
from tests.conftest import run_python

# Opens a run of the 'answer' stage, prints its id and the process id, then is killed with SIGKILL
# (nothing gets to close the run).
KILLED_STAGE = (
    "import os, signal, sys\n"
    "from lsqa import store\n"
    "from lsqa.store import runs\n"
    "with store.write(sys.argv[1]) as con:\n"
    "    run_id = runs.start_run(con, 'answer', {'systems': ['x']})\n"
    "print(run_id, os.getpid(), flush=True)\n"
    "os.kill(os.getpid(), signal.SIGKILL)\n"
)


def killed_run(workspace) -> tuple[int, int]:
    out = run_python(KILLED_STAGE, workspace)
    assert out.returncode == -signal.SIGKILL, out.stderr
    run_id, pid = map(int, out.stdout.split())
    return run_id, pid


def stored_status(workspace, run_id: int) -> tuple[str, str]:
    with store.connect(workspace) as con:
        return con.execute("SELECT status, error FROM runs WHERE id = ?", [run_id]).fetchone()


def test_readers_show_a_killed_run_as_interrupted_without_writing(workspace):
    run_id, pid = killed_run(workspace)
    assert stored_status(workspace, run_id)[0] == "running"  # nothing closed it
    with store.connect(workspace) as con:
        shown = {r["id"]: r for r in runs.recent_runs(con)}
        listed = {r["id"]: r for r in runs.list_runs(con)}
    for rows in (shown, listed):
        assert rows[run_id]["status"] == "interrupted"
        assert f"process {pid} on {socket.gethostname()}" in rows[run_id]["error"]
    assert "pid" not in shown[run_id]  # the dashboard table keeps its columns
    assert stored_status(workspace, run_id)[0] == "running"  # reading did not write


def test_the_next_run_closes_a_killed_one_and_leaves_live_and_foreign_runs_alone(workspace):
    killed_id, pid = killed_run(workspace)
    with store.write(workspace) as con:
        foreign = con.execute("INSERT INTO runs (stage, status, host, pid) VALUES ('judge', 'running', ?, ?) "
                              "RETURNING id", ["another-host.example", pid]).fetchone()[0]
        mine = runs.start_run(con, "answer", {})  # this process: alive
    with store.write(workspace) as con:
        closed_now = runs.close_abandoned_runs(con)
    assert closed_now == []  # start_run had already closed the killed run
    status, error = stored_status(workspace, killed_id)
    assert status == "interrupted" and f"process {pid}" in error and "finished work is kept" in error
    assert stored_status(workspace, mine)[0] == "running"
    assert stored_status(workspace, foreign)[0] == "running"  # another machine's process cannot be checked


def test_status_command_reports_a_killed_run_as_interrupted(workspace):
    run_id, _ = killed_run(workspace)
    result = CliRunner().invoke(app, ["status", "--workspace", str(workspace)])
    assert result.exit_code == 0, result.output
    assert "interrupted" in result.output and "running" not in result.output
    assert stored_status(workspace, run_id)[0] == "interrupted"
