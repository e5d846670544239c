"""Settling a stranded ledger: calls a killed run recorded as sent stay on the study's ledger at
their worst case, `lsqa status` shows them, and only `lsqa ledger settle --study S --yes` (an admin
in a workspace with people; the library checks) releases them, after saying what it cannot know.
A real `kill -9` of `lsqa run` against the local OpenAI-compatible server (tests/support/llm_server.py)."""

import json
import os
import signal
import socket
import subprocess
import sys
import time

import pytest
from typer.testing import CliRunner

from lsqa import store
from lsqa.cli import app
from lsqa.config.study import load_run_config
from lsqa.errors import NotAllowed
from lsqa.store import llm_calls
from lsqa.study import pipeline
from lsqa.study.status import settle_ledger
from lsqa.team import add_person, sign_in
from tests.conftest import PROJECT_ROOT
from tests.llm.test_budget_ledger import KEY, _ledger, _per_call_bound, _study, nqa_workspace  # noqa: F401
from tests.support import forkserver

runner = CliRunner()


def _dead_owner() -> str:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return f"{socket.gethostname()}:{proc.pid}:deadbeef"


def _tables(workspace):
    with store.connect(workspace) as con:
        return (con.execute("SELECT * FROM calls_in_flight ORDER BY cache_key").fetchall(),
                con.execute("SELECT * FROM ledger_settlements").fetchall())


@pytest.mark.slow
def test_a_killed_runs_reservations_are_shown_and_released_only_when_confirmed(nqa_workspace, llm_server,  # noqa: F811
                                                                               tmp_path):
    llm_server.script(reply="Tom Kitten is a cat.", hold_after=2)
    bound = _per_call_bound(nqa_workspace, _study(tmp_path, llm_server.api_base, n=8))
    budget = round(bound * 6.5, 8)
    path = _study(tmp_path, llm_server.api_base, n=8, extra=f"max_cost_usd = {budget}")
    env = {**os.environ, "OPENAI_API_KEY": KEY, "PYTHONPATH": str(PROJECT_ROOT)}
    cmd = [sys.executable, "-c", "import sys; from lsqa.cli import app; sys.argv[0] = 'lsqa'; app()",
           "run", path, "--workspace", str(nqa_workspace)]
    proc = forkserver.llm_client(cmd, env)
    try:
        deadline = time.monotonic() + 120
        while len(llm_server.requests) < 4 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert len(llm_server.requests) >= 4, proc.communicate()
        time.sleep(1.0)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    llm_server.release()
    study = pipeline.study_id(load_run_config(path))
    with store.connect(nqa_workspace) as con:
        pending_usd, pending = llm_calls.in_flight_spend(con, study)
    assert pending >= 1 and pending_usd >= pending * bound * 0.9
    before = _ledger(nqa_workspace, path)

    r = runner.invoke(app, ["status", "--workspace", str(nqa_workspace)])
    assert r.exit_code == 0, r.output
    (line,) = [ln for ln in r.stdout.splitlines() if f"study {study}:" in ln]
    assert f"{pending} call(s) sent " in line and f"${pending_usd:.4f}" in line and "died" in line
    listed = json.loads(runner.invoke(app, ["status", "--json", "--workspace", str(nqa_workspace)]).stdout)
    (entry,) = [e for e in listed["stranded"] if e["ledger"] == study]
    assert entry["calls"] == pending and entry["dead"] and entry["bound_usd"] == pytest.approx(pending_usd)
    assert entry["first_sent_at"] <= entry["last_sent_at"] and listed["llm_calls"] >= 0

    r = runner.invoke(app, ["ledger", "settle", "--study", path, "--workspace", str(nqa_workspace)])
    assert r.exit_code == 0 and "nothing released" in r.stdout and "cannot know whether the provider" in r.stdout
    assert _ledger(nqa_workspace, path) == pytest.approx(before)      # nothing released silently

    r = runner.invoke(app, ["ledger", "settle", "--study", study, "--yes", "--json", "--workspace",
                            str(nqa_workspace)])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["released"] and out["calls"] == pending and out["bound_usd"] == pytest.approx(pending_usd)
    assert _ledger(nqa_workspace, path) == pytest.approx(before - pending_usd)
    in_flight, settlements = _tables(nqa_workspace)
    assert not in_flight and len(settlements) == 1
    r = runner.invoke(app, ["status", "--workspace", str(nqa_workspace)])
    assert "stranded" not in r.stdout
    assert json.loads(runner.invoke(app, ["status", "--json", "--workspace", str(nqa_workspace)]).stdout)["stranded"] == []

    r = runner.invoke(app, ["ledger", "settle", "--study", study, "--yes", "--workspace", str(nqa_workspace)])
    assert r.exit_code == 2 and len(r.stderr.strip().splitlines()) == 1 and "nothing to settle" in r.stderr


def test_only_an_admin_settles_and_live_or_other_hosts_calls_are_never_released(workspace):
    with store.write(workspace) as con:
        llm_calls.mark_in_flight(con, [("k1", _dead_owner(), "s1", 0.5, None),
                                       ("k2", llm_calls_owner_alive(), "s1", 0.25, None),
                                       ("k3", "another-host:12:abcd", "s1", 0.125, None)])
    admin = add_person(workspace, "Ada", "admin")
    annotator = add_person(workspace, "Ann", "annotator")
    before = _tables(workspace)
    with pytest.raises(NotAllowed, match="Ann \\(annotator\\) may not start runs"):
        settle_ledger(workspace, "s1", by=sign_in(workspace, annotator["token"]), confirm=True)
    assert _tables(workspace) == before
    out = settle_ledger(workspace, "s1", by=sign_in(workspace, admin["token"]), confirm=True)
    assert out["released"] and out["calls"] == 1 and out["bound_usd"] == 0.5
    in_flight, (settlement,) = _tables(workspace)
    assert sorted(row[0] for row in in_flight) == ["k2", "k3"]      # a live process's, another host's: kept
    assert "Ada" in settlement


def llm_calls_owner_alive() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:live0001"


@pytest.mark.parametrize("study", ["", "no-such-study", "../../etc/passwd", "s1\nforged"])
def test_settling_an_unknown_study_is_refused_in_one_line(workspace, study):
    before = _tables(workspace)
    r = runner.invoke(app, ["ledger", "settle", "--study", study, "--yes", "--workspace", str(workspace)])
    assert r.exit_code == 2 and len(r.stderr.strip().splitlines()) == 1, r.output
    assert _tables(workspace) == before
