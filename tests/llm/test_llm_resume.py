"""Resume after ``kill -9``: a killed run loses only its calls in flight, never a finished one."""

from __future__ import annotations

import os
import signal
import sys
import time
from collections import Counter

import pytest

from lsqa import llm
from lsqa.llm import LLMRequest, RetryPolicy
from lsqa.store import connect
from tests.support import forkserver

KEY = "sk-test-resume-0123456789abcdef"
PROJECT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
N = 40

RUNNER = """
import sys
from lsqa import llm
workspace, api_base, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
requests = [llm.LLMRequest("openai/gpt-4o-mini", [{"role": "user", "content": f"resume question {i}"}],
                           {"api_base": api_base}) for i in range(n)]
llm.complete_many(workspace, requests, max_concurrency=4)
print("finished")
"""


def requests_for(api_base: str) -> list[LLMRequest]:
    return [LLMRequest("openai/gpt-4o-mini", [{"role": "user", "content": f"resume question {i}"}], {"api_base": api_base})
            for i in range(N)]


@pytest.mark.slow  # another process making 40 LLM calls, killed and run again
def test_kill_minus_nine_mid_run_then_rerun_pays_once_per_finished_call(workspace, llm_server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    llm_server.script(reply=lambda body: "answer to " + body["messages"][0]["content"], latency_s=0.25)
    proc = forkserver.llm_client([sys.executable, "-c", RUNNER, str(workspace), llm_server.api_base, str(N)],
                                 {**os.environ}, text=True, cwd=PROJECT)
    try:
        deadline = time.monotonic() + 60
        while len(llm_server.completed) < 24:  # about 6 rounds of 4 calls answered
            assert proc.poll() is None, proc.stderr.read()
            assert time.monotonic() < deadline, "the runner made no progress"
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
        killed_at = time.monotonic()
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == -signal.SIGKILL

    with connect(workspace) as con:
        durable = {row[0] for row in con.execute("SELECT json_extract_string(messages, '$[0].content') FROM llm_calls "
                                                 "WHERE status = 'ok'").fetchall()}
    answered_early = {llm_server.requests[i].prompt for i, status, at in list(llm_server.completed)
                      if status == 200 and at < killed_at - 0.8}
    assert len(answered_early) >= 4 and 8 <= len(durable) < N
    assert answered_early <= durable  # every call answered well before the kill was already stored
    seen_before = len(llm_server.requests)

    results = llm.complete_many(workspace, requests_for(llm_server.api_base), max_concurrency=4,
                                retry=RetryPolicy(initial_delay_s=0.01))
    assert all(r.ok for r in results)
    assert [r.text for r in results] == [f"answer to resume question {i}" for i in range(N)]
    assert sum(r.cached for r in results) == len(durable)
    rerun_prompts = [r.prompt for r in llm_server.requests[seen_before:]]
    assert not set(rerun_prompts) & durable  # nothing finished was paid for twice
    assert len(rerun_prompts) == N - len(durable)
    counts = Counter(r.prompt for r in llm_server.requests)
    assert all(counts[p] == 1 for p in durable)
