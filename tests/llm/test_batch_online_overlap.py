"""A call is paid for once when an online run and a batch run ask for it at the same time.

The cache key leaves out how a call travels (``mode``, ``api_base``), so a study judging online
and another in batch mode with the same model and prompt ask for the same calls. An open provider
batch holds its calls: an online run does not send them again (it says where they are, and takes
them from the cache once the batch is collected). A call sent online and not yet answered is not
put into a new batch: the batch run waits for the online answer. Both against an OpenAI-compatible
server on 127.0.0.1 (tests/support/llm_server.py, tests/support/batch_api.py), one run in a separate process.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest

from lsqa import llm, store
from lsqa.store import llm_batches
from tests.conftest import PROJECT_ROOT
from tests.llm.test_batch_mode import _wait_for
from tests.support import forkserver
from tests.support.llm_server import FakeLLMServer

MODEL = "openai/gpt-4o-mini"
N = 4

# A run in its own process: ``mode`` and ``api_base`` from the command line, the calls of _requests.
_CLIENT = """
import sys
from lsqa import llm
ws, api_base, mode = sys.argv[1:4]
reqs = [llm.LLMRequest("openai/gpt-4o-mini", [{"role": "user", "content": f"Question number {i}: who?"}],
                       {"api_base": api_base}, mode=mode) for i in range(N)]
print("STARTED", flush=True)
results = llm.complete_many(ws, reqs)
print("DONE", sum(r.ok for r in results), flush=True)
""".replace("range(N)", f"range({N})")


@pytest.fixture(autouse=True)
def _env(monkeypatch):
    monkeypatch.setenv("LSQA_BATCH_POLL_S", "0.05")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")


def _requests(api_base: str, mode: str) -> list[llm.LLMRequest]:
    return [llm.LLMRequest(MODEL, [{"role": "user", "content": f"Question number {i}: who?"}],
                           {"api_base": api_base}, mode=mode) for i in range(N)]


def _start(workspace, api_base: str, mode: str) -> subprocess.Popen:
    env = {**os.environ, "LSQA_BATCH_POLL_S": "0.05", "PYTHONPATH": str(PROJECT_ROOT)}
    return forkserver.llm_client([sys.executable, "-c", _CLIENT, str(workspace), api_base, mode], env, text=True)


def _chat_calls(server) -> int:
    return sum(r.path.startswith("/v1/chat") for r in server.requests)


@pytest.mark.slow
def test_an_online_run_does_not_send_calls_an_open_batch_holds(workspace, llm_server):
    """A batch run has submitted the calls (the provider works on them); an online run of the same
    calls — through another server — sends none of them and says which batch holds them; once the
    batch is collected, the online run's rerun takes them from the cache."""
    llm_server.script(reply="batched answer", batch_hold=True)
    other = FakeLLMServer().start()
    other.script(reply="paid twice")
    batch_run = _start(workspace, llm_server.api_base, "batch")
    try:
        _wait_for(lambda: llm_server.batches.retrievals >= 2)  # submitted, and polled
        online = llm.complete_many(workspace, _requests(other.api_base, "online"))
        assert _chat_calls(other) == 0 and _chat_calls(llm_server) == 0
        assert [r.error_kind for r in online] == ["in_batch"] * N
        assert all("batch_1" in r.error_message and "not sent" in r.error_message for r in online)
        with store.connect(workspace) as con:  # nothing stored for them: the batch's answers will be
            assert con.execute("SELECT count(*) FROM llm_calls").fetchone()[0] == 0
        llm_server.release()
        out, err = batch_run.communicate(timeout=300)
        assert batch_run.returncode == 0 and f"DONE {N}" in out, err
        again = llm.complete_many(workspace, _requests(other.api_base, "online"))
        assert [r.text for r in again] == ["batched answer"] * N and all(r.cached for r in again)
        assert _chat_calls(other) == 0
    finally:
        batch_run.kill()
        other.stop()


@pytest.mark.slow
def test_a_batch_run_waits_for_calls_sent_online_instead_of_batching_them(workspace, llm_server):
    """An online run's calls are at the server (held there); a batch run of the same calls puts
    none of them in a batch: it waits, and takes the online answers from the cache."""
    llm_server.script(reply="online answer", hold_after=1)  # every chat call waits for release()
    online_run = _start(workspace, llm_server.api_base, "online")
    try:
        _wait_for(lambda: _chat_calls(llm_server) >= N)  # all sent, none answered
        results: list = []
        batch_run = threading.Thread(target=lambda: results.extend(
            llm.complete_many(workspace, _requests(llm_server.api_base, "batch"))))
        batch_run.start()
        time.sleep(3.0)  # the batch run looks in the cache and at the claims, and waits
        assert batch_run.is_alive() and llm_server.batches.uploads == 0
        llm_server.release()
        out, err = online_run.communicate(timeout=300)
        assert online_run.returncode == 0 and f"DONE {N}" in out, err
        batch_run.join(timeout=120)
        assert not batch_run.is_alive()
        assert [r.text for r in results] == ["online answer"] * N and all(r.cached for r in results)
        assert llm_server.batches.uploads == 0 and _chat_calls(llm_server) == N
        with store.connect(workspace) as con:
            assert llm_batches.list_batches(con) == []
            assert con.execute("SELECT count(*) FROM call_claims").fetchone()[0] == 0
    finally:
        online_run.kill()


@pytest.mark.slow
def test_a_batch_run_through_another_server_does_not_batch_what_an_open_batch_holds(workspace, llm_server):
    """Two batch runs of the same calls through two servers: the second cannot poll the first's batch
    (another server), and does not submit the calls again either; it says which batch holds them."""
    llm_server.script(reply="batched answer", batch_hold=True)
    other = FakeLLMServer().start()
    other.script(reply="paid twice")
    first = _start(workspace, llm_server.api_base, "batch")
    try:
        _wait_for(lambda: llm_server.batches.retrievals >= 2)
        second = llm.complete_many(workspace, _requests(other.api_base, "batch"))
        assert [r.error_kind for r in second] == ["in_batch"] * N and other.requests == []
        assert all("batch_1" in r.error_message for r in second)
        llm_server.release()
        out, err = first.communicate(timeout=300)
        assert first.returncode == 0 and f"DONE {N}" in out, err
        again = llm.complete_many(workspace, _requests(other.api_base, "batch"))
        assert all(r.cached and r.text == "batched answer" for r in again) and other.requests == []
        with store.connect(workspace) as con:
            assert [row["status"] for row in llm_batches.list_batches(con)] == ["done"]
    finally:
        first.kill()
        other.stop()
