"""Runs that tell the truth and keep to a budget (issue 15, parts 2 and 6), over real HTTP on 127.0.0.1."""

import datetime as dt
import json
import os
import socket
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from lsqa import store
from lsqa.cli import app
from lsqa.config.study import load_run_config
from lsqa.corpus.ingest import ingest_narrativeqa
from lsqa.llm import claims
from lsqa.store import llm_calls
from lsqa.study.plan import plan
from tests.conftest import PROJECT_ROOT, TEST_DATA
from tests.study.test_plan import _toml
from tests.support import forkserver

runner = CliRunner()
KEY = "sk-local-test-0000"


@pytest.fixture
def nqa_workspace(workspace, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    ingest_narrativeqa(workspace, TEST_DATA / "narrativeqa_slice")
    return workspace


def _study(tmp_path, server, n=6, **extra):
    study = {"documents": ["The Tale of Tom Kitten"], "questions": "narrativeqa", "max_questions": n, **extra,
             "systems": [{"name": "mini", "model": "openai/gpt-4o-mini", "context": "none",
                          "params": {"api_base": server.api_base, "max_tokens": 10, "timeout": 20}}]}
    path = tmp_path / f"study{len(list(tmp_path.glob('study*.toml')))}.toml"
    path.write_text(_toml(study))
    return path


@pytest.mark.slow
def test_run_with_failed_calls_exits_1_with_the_count_and_first_errors(nqa_workspace, llm_server, tmp_path):
    llm_server.script(status=400)                 # a bad request: not retried
    r = runner.invoke(app, ["run", str(_study(tmp_path, llm_server, n=2)), "--workspace", str(nqa_workspace)])
    assert r.exit_code == 1
    assert "2 call(s) failed; the first errors:" in r.stderr and "bad request (HTTP 400)" in r.stderr
    llm_server.script(reply="Tom Kitten.")
    r = runner.invoke(app, ["run", str(_study(tmp_path, llm_server, n=2)), "--workspace", str(nqa_workspace)])
    assert r.exit_code == 0 and len(llm_server.requests) == 2  # the failures are tried again


@pytest.mark.slow
def test_budget_stops_before_a_call_would_pass_it_and_a_higher_one_goes_on(nqa_workspace, llm_server, tmp_path):
    llm_server.script(reply="Tom Kitten is a cat.")
    study = _study(tmp_path, llm_server)
    planned = plan(nqa_workspace, load_run_config(study))
    per_call = planned.cost_usd / planned.calls   # the worst case of one call (all prompts alike in size)
    budget = round(per_call * 2.5, 8)             # room for two worst cases, not three
    small = _study(tmp_path, llm_server, max_cost_usd=budget)
    r = runner.invoke(app, ["run", str(small), "--workspace", str(nqa_workspace), "--json"])
    assert r.exit_code == 3 and "stopped: budget" in r.stderr
    summary = json.loads(r.stdout)
    assert summary["stopped"] == "budget"
    made = len(llm_server.requests)
    assert 2 <= made < 6 and summary["calls_made"] == made
    with store.connect(nqa_workspace) as con:
        runs = con.execute("SELECT status, cost_usd FROM runs WHERE stage = 'answers'").fetchall()
        answers = con.execute("SELECT count(*) FROM answers WHERE system_name = 'mini'").fetchone()[0]
    assert runs[-1][0] == "stopped: budget" and runs[-1][1] <= budget
    assert answers == made                        # calls not sent leave no error rows behind

    # The same budget again: the study's earlier spending counts, so at most what is left is spent
    # (calls cost less than their worst case, so one more may fit), never the budget a second time.
    again = runner.invoke(app, ["run", str(small), "--workspace", str(nqa_workspace)])
    assert again.exit_code == 3 and len(llm_server.requests) < 2 * made
    with store.connect(nqa_workspace) as con:
        spent = con.execute("SELECT sum(cost_usd) FROM runs WHERE stage = 'answers'").fetchone()[0]
    assert spent <= budget

    larger = _study(tmp_path, llm_server, max_cost_usd=round(per_call * 10, 8))
    done = runner.invoke(app, ["run", str(larger), "--workspace", str(nqa_workspace)])
    assert done.exit_code == 0, done.output
    assert len(llm_server.requests) == 6          # each call made once in all
    assert len({r.prompt for r in llm_server.requests}) == 6


def test_budget_refuses_a_model_without_a_price(nqa_workspace, llm_server, tmp_path):
    path = tmp_path / "unpriced.toml"
    path.write_text(_study(tmp_path, llm_server, max_cost_usd=1).read_text().replace("gpt-4o-mini", "lsqa-no-price"))
    r = runner.invoke(app, ["run", str(path), "--workspace", str(nqa_workspace)])
    assert r.exit_code == 2 and "no price for openai/lsqa-no-price" in r.stderr
    assert len(llm_server.requests) == 0


def test_a_stale_claim_is_taken_over_and_a_live_one_is_not(workspace):
    now = claims.now()
    with store.write(workspace) as con:
        host = socket.gethostname()
        dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                              text=True).stdout.strip()
        rows = [("k-dead", "other:1", host, int(dead), now + dt.timedelta(minutes=5)),     # killed process
                ("k-expired", "other:2", "another-host", 1, now - dt.timedelta(seconds=1)),
                ("k-live", "other:3", "another-host", 1, now + dt.timedelta(minutes=5))]
        for row in rows:
            con.execute("INSERT INTO call_claims (cache_key, owner, host, pid, expires_at) VALUES (?, ?, ?, ?, ?)", row)
    assert claims.claim(workspace, ["k-dead", "k-expired", "k-live", "k-free"]) == {"k-dead", "k-expired", "k-free"}
    with store.connect(workspace) as con:
        assert llm_calls.held_by_others(con, ["k-live", "k-dead"], claims.owner(), host, now) == {"k-live"}


@pytest.mark.slow
def test_two_identical_runs_at_once_pay_for_each_call_once(nqa_workspace, llm_server, tmp_path):
    """Two `lsqa run` processes on one study: the server sees each prompt once."""
    llm_server.script(reply="Tom Kitten, a kitten.", latency_s=0.4)
    study = _study(tmp_path, llm_server, n=12, max_concurrency=3)
    env = {**os.environ, "OPENAI_API_KEY": KEY, "PYTHONPATH": str(PROJECT_ROOT)}
    # lsqa.cli is a package without __main__: start its typer app as the `lsqa` script does.
    cmd = [sys.executable, "-c", "import sys; from lsqa.cli import app; sys.argv[0] = 'lsqa'; app()",
           "run", str(study), "--workspace", str(nqa_workspace), "--json"]
    procs = [forkserver.llm_client(cmd, env, text=True) for _ in range(2)]
    outputs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outputs
    summaries = [json.loads(out) for out, _ in outputs]
    assert sum(s["calls_made"] for s in summaries) == 12   # each call made by one run only
    with store.connect(nqa_workspace) as con:
        assert con.execute("SELECT count(*) FROM call_claims").fetchone()[0] == 0   # all released
        answers = con.execute("SELECT count(*) FROM answers WHERE system_name = 'mini' AND status = 'ok'").fetchone()[0]
        attempts = con.execute("SELECT sum(attempts) FROM llm_calls").fetchone()[0]
    assert answers == 12
    prompts = [r.prompt for r in llm_server.requests]
    # The server saw 12 distinct prompts, and no more requests than the one run's attempts (a
    # timeout retried under a heavy machine load is the same call's second attempt, not a second payer).
    assert len(set(prompts)) == 12 and len(prompts) == attempts


def test_a_call_stored_after_the_cache_lookup_is_taken_from_the_cache_not_made_again(workspace, llm_server,
                                                                                        monkeypatch):
    """The race behind 24 requests for 12 prompts under load: run B looked in the cache, then
    waited for the workspace while run A stored its results and released its claims; B then
    claimed free keys and made every call again. Made deterministic by B's lookup finding nothing."""
    from lsqa.llm import LLMRequest, complete_many

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    llm_server.script(reply="Tom Kitten, a kitten.")
    request = LLMRequest("openai/gpt-4o-mini", [{"role": "user", "content": "Who is Tom Kitten?"}],
                         {"api_base": llm_server.api_base, "max_tokens": 10, "timeout": 20})
    made = complete_many(workspace, [request])      # run A makes the call and stores it
    assert made[0].ok and len(llm_server.requests) == 1

    real_lookup, lookups = llm_calls.cached_ok, []

    def lookup_before_a_stored(con, keys):          # run B's first look: before A's results were there
        lookups.append(list(keys))
        return {} if len(lookups) == 1 else real_lookup(con, keys)

    monkeypatch.setattr(llm_calls, "cached_ok", lookup_before_a_stored)
    again = complete_many(workspace, [request])
    assert len(llm_server.requests) == 1            # not sent a second time
    assert again[0].ok and again[0].cached and again[0].text == made[0].text
    assert len(lookups) >= 2                        # B found it in the cache after its claim was refused
    with store.connect(workspace) as con:
        assert con.execute("SELECT count(*) FROM call_claims").fetchone()[0] == 0


def test_on_this_host_a_claim_lasts_as_long_as_its_process_not_its_lease(workspace):
    """A run slowed down by a loaded machine (renewals late) keeps its claims while its process
    lives; a process id reused by a process started after the claim does not keep it."""
    now = claims.now()
    host = socket.gethostname()
    with store.write(workspace) as con:
        # (key, owner, host, pid, expires_at, claimed_at): both leases ran out a minute ago
        rows = [("k-slow", "other:1", host, os.getpid(), now - dt.timedelta(minutes=1), now),
                ("k-reused", "other:2", host, os.getpid(), now - dt.timedelta(minutes=1), dt.datetime(2000, 1, 1))]
        for row in rows:
            con.execute("INSERT INTO call_claims (cache_key, owner, host, pid, expires_at, claimed_at) "
                        "VALUES (?, ?, ?, ?, ?, ?)", row)
    assert claims.claim(workspace, ["k-slow", "k-reused"]) == {"k-reused"}
