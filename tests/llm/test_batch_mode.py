"""Batch providers (issue 15, part 4): ``mode = "batch"`` through litellm's files + batches API
against an OpenAI-compatible server on 127.0.0.1 (tests/support/batch_api.py), restarts included."""

import datetime as dt
import os
import signal
import subprocess
import time

import pytest

from lsqa import llm, store
from lsqa.config.study import run_config_from_dict
from lsqa.corpus.ingest import ingest_narrativeqa
from lsqa.errors import InputError
from lsqa.store import llm_batches
from lsqa.study import pipeline
from tests.conftest import PROJECT_ROOT, TEST_DATA
from tests.support import forkserver

MODEL = "openai/gpt-4o-mini"


@pytest.fixture(autouse=True)
def _fast_polling(monkeypatch):
    monkeypatch.setenv("LSQA_BATCH_POLL_S", "0.05")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")


def _requests(server, n: int, mode: str = "batch") -> list[llm.LLMRequest]:
    return [llm.LLMRequest(MODEL, [{"role": "user", "content": f"Question number {i}: who lost the mittens?"}],
                           {"api_base": server.api_base, "temperature": 0}, mode=mode) for i in range(n)]


def _paths(server) -> list[str]:
    return [r.path.split("?")[0] for r in server.requests]


@pytest.mark.slow
def test_batch_calls_go_through_files_and_batches_and_land_in_the_cache(workspace, llm_server):
    llm_server.script(reply=lambda req: "answer to " + req["messages"][0]["content"].split(":")[0])
    results = llm.complete_many(workspace, _requests(llm_server, 5))
    assert [r.text for r in results] == [f"answer to Question number {i}" for i in range(5)]
    paths = _paths(llm_server)
    assert paths[:2] == ["/v1/files", "/v1/batches"] and "/v1/chat/completions" not in paths
    assert paths[-1] == "/v1/files/file-2/content" and "/v1/batches/batch_1" in paths
    assert llm_server.batches.uploads == 1 and len(llm_server.batches.batches) == 1
    # priced at litellm's batch rates for the model (half the online price for gpt-4o-mini)
    price = llm.litellm().model_cost["gpt-4o-mini"]
    for r in results:
        expected = (r.prompt_tokens * price["input_cost_per_token_batches"]
                    + r.completion_tokens * price["output_cost_per_token_batches"])
        assert r.cost_usd == pytest.approx(expected, rel=1e-9)
        online = r.prompt_tokens * price["input_cost_per_token"] + r.completion_tokens * price["output_cost_per_token"]
        assert r.cost_usd == pytest.approx(online / 2, rel=1e-9)
    with store.connect(workspace) as con:
        (row,) = llm_batches.list_batches(con)
        stored = con.execute("SELECT count(*) FROM llm_calls WHERE status = 'ok'").fetchone()[0]
    assert (row["status"], row["provider_status"], row["batch_id"]) == ("done", "completed", "batch_1")
    assert sorted(row["cache_keys"]) == sorted(r.cache_key for r in results) and stored == 5
    # the same cache as online calls: a rerun, batch or not, sends nothing
    llm_server.script(reply="never")
    again = llm.complete_many(workspace, _requests(llm_server, 5)) + llm.complete_many(workspace, _requests(llm_server, 5, "online"))
    assert all(r.cached for r in again) and llm_server.requests == []


@pytest.mark.slow
def test_failed_lines_are_errors_and_the_next_run_sends_them_again(workspace, llm_server):
    llm_server.script(status=500)
    results = llm.complete_many(workspace, _requests(llm_server, 3))
    assert all(not r.ok and r.error_kind == "server" and "HTTP 500" in r.error_message for r in results)
    llm_server.script(reply="fine now")
    retried = llm.complete_many(workspace, _requests(llm_server, 3))
    assert [r.text for r in retried] == ["fine now"] * 3 and not any(r.cached for r in retried)
    with store.connect(workspace) as con:
        assert [b["status"] for b in llm_batches.list_batches(con)] == ["done", "done"]


@pytest.mark.slow
def test_a_study_judge_in_batch_mode(workspace, llm_server):
    ingest_narrativeqa(workspace, TEST_DATA / "narrativeqa_slice")
    llm_server.script(reply="{'system is better': 'B is better', 'evidence': ['the text']}")
    config = run_config_from_dict({
        "documents": ["The Tale of Tom Kitten"], "questions": "narrativeqa", "max_questions": 4, "sample": 4,
        "systems": [{"name": "nocontext", "model": "lsqa/extractive", "context": "none"},
                    {"name": "rag", "model": "lsqa/extractive", "context": "retrieval:500"}],
        "judges": [{"name": "gpt-sxs-batch", "model": MODEL, "kind": "pairwise", "context": "retrieval:500",
                    "mode": "batch", "params": {"api_base": llm_server.api_base}}],
    })
    summary = pipeline.run(workspace, config).to_dict()
    judge_stage = [s for s in summary["stages"] if s["stage"] == "judge:gpt-sxs-batch"][0]
    assert judge_stage["calls_made"] == 4 and judge_stage["calls_failed"] == 0
    assert len(llm_server.batches.batches) == 1  # one batch for the whole stage
    with store.connect(workspace) as con:
        labels = con.execute("SELECT status, count(*) FROM judgments WHERE judge = 'gpt-sxs-batch' GROUP BY 1").fetchall()
    assert labels == [("ok", 4)]
    assert pipeline.run(workspace, config).to_dict()["calls_made"] == 0


_CLIENT = """
import sys
from lsqa import llm
ws, api_base = sys.argv[1], sys.argv[2]
reqs = [llm.LLMRequest("openai/gpt-4o-mini", [{"role": "user", "content": f"Question number {i}: who?"}],
                       {"api_base": api_base}, mode="batch") for i in range(6)]
results = llm.complete_many(ws, reqs)
print("DONE", sum(r.ok for r in results), flush=True)
"""


def _start_client(workspace, server) -> subprocess.Popen:
    env = {**os.environ, "LSQA_BATCH_POLL_S": "0.05", "PYTHONPATH": str(PROJECT_ROOT)}
    return forkserver.start(_CLIENT, workspace, server.api_base, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, base=forkserver.LLM_CLIENTS, own_env=True)


def _wait_for(condition, timeout: float = 300.0) -> None:  # a loaded machine starts Python slowly
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


@pytest.mark.slow
def test_killed_run_picks_up_its_batch_without_submitting_again(workspace, llm_server):
    """kill -9 while the provider works on the batch; the rerun polls the same batch (no second
    upload, no second batch: nothing paid twice) and stores its results."""
    llm_server.script(reply="batched answer", batch_hold=True)
    client = _start_client(workspace, llm_server)
    try:
        _wait_for(lambda: llm_server.batches.retrievals >= 3)  # submitted, and polled a few times
    finally:
        client.send_signal(signal.SIGKILL)
        client.wait(timeout=30)
    assert client.returncode == -signal.SIGKILL
    with store.connect(workspace) as con:
        (row,) = llm_batches.list_batches(con)
        stored = con.execute("SELECT count(*) FROM llm_calls").fetchone()[0]
    assert (row["status"], row["batch_id"], row["provider_status"]) == ("submitted", "batch_1", "in_progress")
    assert stored == 0

    resumed = _start_client(workspace, llm_server)
    _wait_for(lambda: llm_server.batches.retrievals >= 6)  # the second process polls the old batch
    llm_server.release()
    out, err = resumed.communicate(timeout=120)
    assert resumed.returncode == 0, err
    assert "DONE 6" in out
    assert llm_server.batches.uploads == 1 and list(llm_server.batches.batches) == ["batch_1"]
    with store.connect(workspace) as con:
        (row,) = llm_batches.list_batches(con)
        calls = con.execute("SELECT status, response, count(*) FROM llm_calls GROUP BY 1, 2").fetchall()
    assert row["status"] == "done" and calls == [("ok", "batched answer", 6)]

    llm_server.script(reply="never")
    third = _start_client(workspace, llm_server)
    out, err = third.communicate(timeout=120)
    assert "DONE 6" in out and llm_server.requests == []  # all from the cache


def test_a_batch_created_before_a_kill_is_found_not_created_again(workspace, llm_server):
    """The narrowest window: the batch exists at the provider but the process died before
    storing its id. The rerun finds it by its lsqa_batch metadata instead of creating another."""
    from lsqa.llm import batch as batch_mod

    llm_server.script(reply="found it")
    reqs = _requests(llm_server, 2)
    jobs = [batch_mod.BatchJob(llm.cache_key(r), r.model, r.messages, dict(r.params)) for r in reqs]
    transport = batch_mod.transport_key(jobs[0].params)
    ll = llm.litellm()
    api = {"custom_llm_provider": "openai", "api_base": llm_server.api_base}
    uploaded = ll.create_file(file=("x.jsonl", batch_mod.input_file(jobs)), purpose="batch", **api)
    with store.write(workspace) as con:
        llm_batches.add_batch(con, "row1", MODEL, transport, [j.key for j in jobs], None)
        llm_batches.update_batch(con, "row1", input_file_id=uploaded.id)
    ll.create_batch(completion_window="24h", endpoint="/v1/chat/completions", input_file_id=uploaded.id,
                    metadata={"lsqa_batch": "row1"}, **api)  # ... and then the process died
    results = llm.complete_many(workspace, reqs)
    assert [r.text for r in results] == ["found it", "found it"]
    assert list(llm_server.batches.batches) == ["batch_1"] and llm_server.batches.uploads == 1


@pytest.mark.parametrize("spec, message", [
    ({"model": "anthropic/claude-haiku-4-5", "mode": "batch"}, r"judges\[0\] \(j\): .*needs a provider with a batch API"),
    ({"model": MODEL, "mode": "batch", "params": {"api_base": ["http://a/v1", "http://b/v1"]}},
     r"judges\[0\] \(j\): .*one api_base"),
    ({"model": MODEL, "mode": "later"}, r"judges\[0\]\.mode = 'later': use 'online' or 'batch'"),
])
def test_batch_mode_config_errors_name_the_place(spec, message):
    with pytest.raises(InputError, match=message):
        # A system to judge: a config with judges and no systems is refused first (issue 33).
        run_config_from_dict({"documents": ["x"], "systems": [{"name": "s", "model": "lsqa/extractive", "context": "none"}],
                              "judges": [{"name": "j", "kind": "pairwise", **spec}]})


_STARTED_CLIENT = _CLIENT.replace("results = llm.complete_many", "print('STARTED', flush=True)\nresults = llm.complete_many")


@pytest.mark.slow
def test_two_runs_at_once_submit_one_batch(workspace, llm_server):
    """Run A's upload is slow (held by the server); run B starts meanwhile, finds A's batch row
    claimed by a live process and waits instead of uploading and submitting the calls again."""
    llm_server.script(reply="one batch", upload_hold=True)
    env = {**os.environ, "LSQA_BATCH_POLL_S": "0.05", "PYTHONPATH": str(PROJECT_ROOT)}

    def start():
        return forkserver.start(_STARTED_CLIENT, workspace, llm_server.api_base, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, base=forkserver.LLM_CLIENTS, own_env=True)

    first = start()
    _wait_for(lambda: any(r.path.startswith("/v1/files") for r in llm_server.requests))  # A is uploading
    second = start()
    try:
        assert second.stdout.readline().strip() == "STARTED"
        time.sleep(3.0)  # B looks in the cache and at the batch rows, then waits on A's claim
        assert llm_server.batches.uploads == 0 and sum(r.path.startswith("/v1/files") for r in llm_server.requests) == 1
        llm_server.release()
        outputs = [p.communicate(timeout=300) for p in (first, second)]
    finally:
        for p in (first, second):
            p.kill()
    assert [p.returncode for p in (first, second)] == [0, 0], outputs
    assert all("DONE 6" in out for out, _ in outputs), outputs
    assert llm_server.batches.uploads == 1 and list(llm_server.batches.batches) == ["batch_1"]
    assert not any(r.path.startswith("/v1/chat") for r in llm_server.requests)
    with store.connect(workspace) as con:
        (row,) = llm_batches.list_batches(con)
        assert con.execute("SELECT count(*) FROM llm_calls WHERE status = 'ok'").fetchone()[0] == 6
        assert con.execute("SELECT count(*) FROM call_claims").fetchone()[0] == 0
    assert row["status"] == "done"


def test_a_batch_row_claimed_by_a_live_run_is_not_submitted_by_another(workspace, llm_server, monkeypatch):
    """The same, step by step in one process: the row another live run added (and claimed) is
    found, not duplicated, and this run does not take its turn until that claim goes away."""
    from lsqa.llm import batch as batch_mod
    from lsqa.llm import claims

    reqs = _requests(llm_server, 3)
    jobs = [batch_mod.BatchJob(llm.cache_key(r), r.model, r.messages, dict(r.params)) for r in reqs]
    transport = batch_mod.transport_key(jobs[0].params)
    monkeypatch.setattr(claims, "owner", lambda: "otherhost:1:run-a")   # run A, on another host, alive
    (row_a,) = batch_mod._rows_for(workspace, MODEL, transport, jobs, None).rows
    monkeypatch.undo()
    with store.write(workspace) as con:   # run A runs on another host sharing the workspace
        con.execute("UPDATE call_claims SET host = 'otherhost'")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    (row_b,) = batch_mod._rows_for(workspace, MODEL, transport, jobs, None).rows   # run B: finds A's row
    assert row_b["id"] == row_a["id"] and not batch_mod._take_turn(workspace, row_b)
    with store.write(workspace) as con:   # A's process died on another host: its claim expires
        con.execute("UPDATE call_claims SET expires_at = ?", [claims.now() - dt.timedelta(minutes=1)])
    assert batch_mod._take_turn(workspace, row_b)
    with store.connect(workspace) as con:
        assert len(llm_batches.list_batches(con)) == 1


def test_a_call_another_run_collected_after_the_cache_lookup_is_not_batched_again(workspace, llm_server,
                                                                                   monkeypatch):
    """Run B looks in the cache (nothing), and before it adds its batch row run A submits,
    collects and closes a batch of the same calls (its row no longer open). B's row is added in
    the transaction that reads the stored calls: B takes A's answers from the cache and sends
    nothing (issue 33: a call is paid for once). Deterministic: A runs inside B's pause, in the
    window between B's cache lookup and B's batch admission."""
    from lsqa.llm import batch as batch_mod

    llm_server.script(reply="once")
    reqs = _requests(llm_server, 4)
    find_or_add = batch_mod._rows_for
    ran_a = []

    def b_admits_after_a_collected(*args, **kwargs):
        if not ran_a:
            ran_a.append(True)
            assert all(r.ok and not r.cached for r in llm.complete_many(workspace, reqs))   # run A, start to end
        return find_or_add(*args, **kwargs)

    monkeypatch.setattr(batch_mod, "_rows_for", b_admits_after_a_collected)
    results = llm.complete_many(workspace, reqs)                                              # run B
    assert ran_a and [r.text for r in results] == ["once"] * 4 and all(r.cached for r in results)
    assert llm_server.batches.uploads == 1 and len(llm_server.batches.batches) == 1
    with store.connect(workspace) as con:
        assert [row["status"] for row in llm_batches.list_batches(con)] == ["done"]
        assert con.execute("SELECT count(*) FROM call_claims").fetchone()[0] == 0
