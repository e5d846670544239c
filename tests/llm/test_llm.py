"""lsqa.llm over litellm's real HTTP path, against the scriptable server in tests/support/llm_server.py."""

from __future__ import annotations

import os
import sys
import threading
import time

import pytest

from lsqa import llm
from lsqa.llm import LLMRequest, RetryPolicy
from lsqa.store import connect, llm_calls
from tests.conftest import run_python

KEY = "sk-test-4f9d2c1b8a7e6d5c4b3a2f1e"
FAST = RetryPolicy(max_attempts=4, initial_delay_s=0.01, max_delay_s=0.05, timeout_s=5.0)

@pytest.fixture(autouse=True)
def _api_key(monkeypatch, request):
    if request.node.get_closest_marker("api") is None:  # real-provider tests keep the real key
        monkeypatch.setenv("OPENAI_API_KEY", KEY)


def req(server, text="Who took the candlesticks?", model="openai/gpt-4o-mini", **params) -> LLMRequest:
    return LLMRequest(model, [{"role": "user", "content": text}], {"api_base": server.api_base, **params}, "test", "1")


def stored(workspace, key):
    with connect(workspace) as con:
        return llm_calls.get_call(con, key)


# -- cache -------------------------------------------------------------------------------------


def test_cache_hit_returns_stored_answer_without_a_call(workspace, llm_server):
    llm_server.script(reply="Jean Valjean.")
    first = llm.complete(workspace, req(llm_server), retry=FAST)
    assert first.ok and first.text == "Jean Valjean." and not first.cached
    assert first.prompt_tokens and first.completion_tokens and first.cost_usd and first.cost_usd > 0
    llm_server.script(reply="something else")
    second = llm.complete(workspace, req(llm_server), retry=FAST)
    assert second.cached and second.text == "Jean Valjean." and second.cost_usd == 0.0
    assert second.cache_key == first.cache_key
    assert llm_server.requests == []  # the second call never reached the server
    row = stored(workspace, first.cache_key)
    assert row["status"] == "ok" and row["response"] == "Jean Valjean." and row["prompt_id"] == "test"
    assert row["attempts"] == 1 and row["cost_usd"] == pytest.approx(first.cost_usd)


def test_rerun_makes_zero_new_calls(workspace, llm_server):
    requests = [req(llm_server, f"question {i}") for i in range(12)]
    first = llm.complete_many(workspace, requests, max_concurrency=4, retry=FAST)
    assert [r.ok for r in first] == [True] * 12 and len(llm_server.requests) == 12
    second = llm.complete_many(workspace, requests, max_concurrency=4, retry=FAST)
    assert len(llm_server.requests) == 12
    assert all(r.cached for r in second)
    assert [r.text for r in second] == [r.text for r in first]
    t = second.totals()
    assert (t.calls_made, t.calls_cached, t.calls_failed, t.cost_usd) == (0, 12, 0, 0.0)


def test_results_keep_request_order_and_duplicates_are_sent_once(workspace, llm_server):
    llm_server.script(reply=lambda body: body["messages"][0]["content"].upper(), latency_s=0.02)
    texts = [f"q{i}" for i in range(8)] + ["q3", "q5"]
    results = llm.complete_many(workspace, [req(llm_server, t) for t in texts], max_concurrency=5, retry=FAST)
    assert [r.text for r in results] == [t.upper() for t in texts]
    assert len(llm_server.requests) == 8
    assert results[8].cached and not results[3].cached


def test_use_cache_false_forces_a_call_and_overwrites_the_row(workspace, llm_server):
    llm_server.script(reply="old answer")
    first = llm.complete(workspace, req(llm_server), retry=FAST)
    llm_server.script(reply="new answer")
    forced = llm.complete(workspace, req(llm_server), use_cache=False, retry=FAST)
    assert forced.text == "new answer" and not forced.cached and len(llm_server.requests) == 1
    assert stored(workspace, first.cache_key)["response"] == "new answer"
    # A forced call that fails keeps the stored success.
    llm_server.script(status=500)
    failed = llm.complete(workspace, req(llm_server), use_cache=False, retry=RetryPolicy(max_attempts=1))
    assert failed.status == "error"
    assert stored(workspace, first.cache_key)["response"] == "new answer"
    assert llm.complete(workspace, req(llm_server), retry=FAST).text == "new answer"


def test_cache_key_ignores_transport_settings_only():
    base = LLMRequest("openai/m", [{"role": "user", "content": "hi"}], {"temperature": 0})
    moved = LLMRequest("openai/m", [{"role": "user", "content": "hi"}],
                       {"temperature": 0, "api_base": "http://elsewhere/v1", "timeout": 3, "api_key": "x"},
                       prompt_id="other", prompt_version="9")
    assert llm.cache_key(base) == llm.cache_key(moved)
    assert llm.cache_key(base) != llm.cache_key(LLMRequest("openai/m", base.messages, {"temperature": 0.7}))
    assert llm.cache_key(base) != llm.cache_key(LLMRequest("openai/n", base.messages, base.params))
    assert llm.cache_key(base) != llm.cache_key(LLMRequest("openai/m", [{"role": "user", "content": "hi!"}], base.params))
    assert len(llm.cache_key(base)) == 64


def test_failed_calls_are_recorded_and_tried_again_next_run(workspace, llm_server):
    llm_server.script(status=503)
    failed = llm.complete(workspace, req(llm_server), retry=RetryPolicy(max_attempts=2, initial_delay_s=0.01))
    assert failed.status == "error" and failed.error_kind == "server" and failed.attempts == 2
    row = stored(workspace, failed.cache_key)
    assert row["status"] == "error" and row["error_kind"] == "server" and row["response"] is None
    llm_server.script(reply="fine now")
    again = llm.complete(workspace, req(llm_server), retry=FAST)
    assert again.ok and not again.cached and again.text == "fine now" and len(llm_server.requests) == 1
    assert stored(workspace, failed.cache_key)["status"] == "ok"


# -- retries -----------------------------------------------------------------------------------


def test_rate_limits_are_retried_with_exponential_backoff(workspace, llm_server):
    policy = RetryPolicy(max_attempts=5, initial_delay_s=0.05, multiplier=2.0, jitter=0.0, max_delay_s=1.0)
    # One rate-limited call first, not timed: the client's first error path sets itself up lazily, which
    # lengthens the first gap of the first call only; on a loaded machine it made that gap the longest.
    llm_server.script(reply="warm", fail_first=1, fail_status=429)
    assert llm.complete(workspace, req(llm_server, "A first question"), retry=policy).attempts == 2
    llm_server.script(reply="after the storm", fail_first=3, fail_status=429)
    result = llm.complete(workspace, req(llm_server), retry=policy)
    assert result.ok and result.text == "after the storm" and result.attempts == 4
    times = [r.received_at for r in llm_server.requests]
    gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
    assert len(gaps) == 3
    for gap, wanted in zip(gaps, (0.05, 0.10, 0.20), strict=False):
        assert gap >= wanted * 0.95
    assert gaps[2] > gaps[0]


@pytest.mark.slow
@pytest.mark.parametrize("status", [500, 502, 503])
def test_server_errors_are_retried(workspace, llm_server, status):
    llm_server.script(reply="recovered", fail_first=2, fail_status=status)
    result = llm.complete(workspace, req(llm_server), retry=FAST)
    assert result.ok and result.attempts == 3 and len(llm_server.requests) == 3


@pytest.mark.slow
def test_timeouts_are_retried_then_reported(workspace, llm_server):
    # The server hangs far longer than the client waits (it wakes when the test stops it): a client that
    # did not time out would take 20 s; one that does takes well under 8 s even on a loaded machine.
    llm.litellm()  # imported and configured before the clock starts (seconds on a loaded machine)
    llm_server.script(reply="slow but fine", hang_s=20.0, hang_first=1)
    started = time.monotonic()
    result = llm.complete(workspace, req(llm_server, timeout=0.4), retry=FAST)
    assert result.ok and result.attempts == 2
    assert time.monotonic() - started < 8

    llm_server.script(hang_s=20.0)
    started = time.monotonic()
    result = llm.complete(workspace, req(llm_server, "other", timeout=0.3), retry=RetryPolicy(max_attempts=2, initial_delay_s=0.01))
    assert result.status == "error" and result.error_kind == "timeout" and result.attempts == 2
    assert "openai/gpt-4o-mini" in result.error_message and "timed out" in result.error_message
    assert time.monotonic() - started < 8


@pytest.mark.slow
@pytest.mark.parametrize("status, kind, words", [(401, "auth", "authentication"), (400, "bad_request", "bad request"),
                                                 (404, "not_found", "not found"), (403, "auth", "authentication")])
def test_client_errors_are_not_retried_and_name_model_and_cause(workspace, llm_server, status, kind, words):
    llm_server.script(status=status)
    result = llm.complete(workspace, req(llm_server, model="openai/gpt-4o"), retry=FAST)
    assert result.status == "error" and result.error_kind == kind and result.attempts == 1
    assert len(llm_server.requests) == 1
    assert result.error_message.startswith("openai/gpt-4o: ")
    assert words in result.error_message and f"HTTP {status}" in result.error_message
    # The provider's own words once, behind the class litellm raised, named once.
    assert result.error_message.endswith("Error: OpenAIException - scripted failure"), result.error_message
    assert result.error_message.count("Error") == 1, result.error_message
    with pytest.raises(llm.LLMError, match="openai/gpt-4o"):
        result.raise_for_status()


@pytest.mark.parametrize("garbage", ["non-json", "no-choices"])
def test_garbage_responses_become_errors_not_crashes(workspace, llm_server, garbage):
    llm_server.script(garbage=garbage)
    result = llm.complete(workspace, req(llm_server), retry=RetryPolicy(max_attempts=2, initial_delay_s=0.01))
    assert result.status == "error" and result.error_kind == "bad_response" and result.text is None
    assert result.attempts == 2 and "openai/gpt-4o-mini" in result.error_message
    assert stored(workspace, result.cache_key)["error_kind"] == "bad_response"


def test_an_unreadable_answer_is_worded_without_litellms_traceback(workspace, llm_server):
    """Usage that is not numbers: litellm's exception carries the Python traceback of its own failure inside its
    message. The error says the kind in words and keeps the exception the traceback ends with, not its frames."""
    llm_server.script(reply="Tom Kitten is a cat.", usage_block={"prompt_tokens": "many", "completion_tokens": [1]})
    result = llm.complete(workspace, req(llm_server), retry=RetryPolicy(max_attempts=1, initial_delay_s=0.01))
    assert result.status == "error" and result.error_kind == "bad_usage", result.error_message
    message = result.error_message
    assert message.startswith("openai/gpt-4o-mini: the provider answered with usage that is not a number")
    assert "ValidationError" in message and "input_value=[1]" in message  # what litellm could not read
    assert "Traceback" not in message and 'File "' not in message and "^^^" not in message, message


def test_unreachable_server_is_a_connection_error(workspace):
    dead = LLMRequest("openai/gpt-4o-mini", [{"role": "user", "content": "hi"}], {"api_base": "http://127.0.0.1:9/v1"})
    result = llm.complete(workspace, dead, retry=RetryPolicy(max_attempts=2, initial_delay_s=0.01, timeout_s=2))
    assert result.status == "error" and result.error_kind == "connection" and result.attempts == 2


def test_unknown_provider_is_a_bad_request(workspace):
    result = llm.complete(workspace, LLMRequest("nosuchprovider/model-x", [{"role": "user", "content": "hi"}]), retry=FAST)
    assert result.status == "error" and result.error_kind == "bad_request" and result.attempts == 1
    assert "nosuchprovider/model-x" in result.error_message


def test_backoff_delay_grows_and_honours_retry_after():
    policy = RetryPolicy(initial_delay_s=1.0, multiplier=2.0, max_delay_s=10.0, jitter=0.5)
    for retry, top in ((1, 1.0), (2, 2.0), (3, 4.0), (6, 10.0)):
        delays = [policy.delay(retry) for _ in range(50)]
        assert all(top * 0.5 <= d <= top for d in delays)
        assert len(set(delays)) > 1  # jitter
    assert policy.delay(1, retry_after=7.0) == 7.0
    assert policy.delay(1, retry_after=100.0) == 10.0


# -- concurrency, progress, totals -------------------------------------------------------------


@pytest.mark.slow
def test_concurrency_limit_is_honoured_per_model(workspace, llm_server):
    llm_server.script(latency_s=0.15)
    requests = [req(llm_server, f"q{i}") for i in range(12)]
    llm.complete_many(workspace, requests, max_concurrency=3, retry=FAST)
    assert llm_server.max_in_flight == 3

    llm_server.script(latency_s=0.15)
    mixed = [req(llm_server, f"r{i}", model="openai/gpt-4o-mini") for i in range(8)]
    mixed += [req(llm_server, f"r{i}", model="openai/gpt-4o") for i in range(8)]
    llm.complete_many(workspace, mixed, max_concurrency={"openai/gpt-4o-mini": 2, "openai/gpt-4o": 1}, retry=FAST)
    assert llm_server.max_in_flight == 3


def test_progress_callback_runs_in_the_calling_thread(workspace, llm_server):
    llm.complete_many(workspace, [req(llm_server, "q0"), req(llm_server, "q1")], retry=FAST)  # two cached
    llm_server.script(latency_s=0.02)
    seen, threads = [], set()

    def progress(done, total):
        seen.append((done, total))
        threads.add(threading.get_ident())

    llm.complete_many(workspace, [req(llm_server, f"q{i}") for i in range(7)], progress=progress, retry=FAST)
    assert seen[0] == (2, 7) and seen[-1] == (7, 7)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)
    assert threads == {threading.get_ident()}


def test_show_bar_draws_a_tqdm_bar(workspace, llm_server, capsys):
    llm.complete_many(workspace, [req(llm_server, f"q{i}") for i in range(3)], show_bar=True, retry=FAST)
    assert "LLM calls" in capsys.readouterr().err


def test_totals_count_tokens_and_cost(workspace, llm_server):
    llm_server.script(reply="four words right here")
    llm.complete(workspace, req(llm_server, "cached one"), retry=FAST)
    ok = [req(llm_server, f"question number {i}") for i in range(3)]
    results = llm.complete_many(workspace, ok + [req(llm_server, "cached one")], retry=FAST)
    llm_server.script(status=401)
    results += llm.complete_many(workspace, [req(llm_server, "doomed")], retry=FAST)
    t = llm.totals(results)
    assert (t.calls_made, t.calls_cached, t.calls_failed) == (3, 1, 1)
    assert t.prompt_tokens == 3 * 3 and t.completion_tokens == 3 * 4  # the server counts words
    assert t.cost_usd is not None and t.cost_usd == pytest.approx(sum(r.cost_usd for r in results[:3]))
    assert t.cost_usd > 0 and t.calls_cost_unknown == 0


def test_cost_is_none_for_a_model_without_a_price(workspace, llm_server):
    results = llm.complete_many(workspace, [req(llm_server, model="openai/unknown-model-xyz"), req(llm_server)], retry=FAST)
    unknown, known = results
    assert unknown.ok and unknown.cost_usd is None and unknown.prompt_tokens is not None
    assert known.cost_usd is not None and known.cost_usd > 0
    t = results.totals()
    assert t.cost_usd is None and t.cost_usd_known == pytest.approx(known.cost_usd) and t.calls_cost_unknown == 1
    assert stored(workspace, unknown.cache_key)["cost_usd"] is None


def test_missing_usage_means_unknown_tokens_not_zero(workspace, llm_server):
    """No usage block: the tokens are unknown (None) and the call counts at its worst case, said so."""
    llm_server.script(reply="no usage block", usage=False)
    result = llm.complete(workspace, req(llm_server), retry=FAST)
    assert result.ok and result.prompt_tokens is None and result.completion_tokens is None
    assert result.cost_usd > 0 and "no usage" in result.usage_note and "worst case" in result.usage_note
    assert stored(workspace, result.cache_key)["usage_note"] == result.usage_note


@pytest.mark.slow
def test_run_counters_are_kept_in_runs(workspace, llm_server):
    with connect(workspace) as con:
        run_id = con.execute("INSERT INTO runs (stage, status) VALUES ('answer', 'running') RETURNING id").fetchone()[0]
    llm.complete(workspace, req(llm_server, "before"), retry=FAST)
    batch = [req(llm_server, "before")] + [req(llm_server, f"new {i}") for i in range(4)]
    batch.append(req(llm_server, "priceless", model="openai/unknown-model-xyz"))
    results = llm.complete_many(workspace, batch, run_id=run_id, retry=FAST)
    llm_server.script(status=400)
    llm.complete(workspace, req(llm_server, "broken"), run_id=run_id, retry=FAST)
    with connect(workspace) as con:
        counters = llm_calls.run_call_totals(con, run_id)
    assert counters["calls_made"] == 5 and counters["calls_cached"] == 1 and counters["calls_failed"] == 1
    assert counters["calls_cost_unknown"] == 1
    assert counters["cost_usd"] == pytest.approx(sum(r.cost_usd for r in results[1:5]))
    assert counters["prompt_tokens"] == sum(r.prompt_tokens for r in results[1:])


# -- secrets, locking, import cost -------------------------------------------------------------


def _all_text(workspace) -> str:
    chunks = []
    with connect(workspace) as con:
        tables = [r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()]
        for table in tables:
            cols = [r[0] for r in con.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_name = ? AND data_type = 'VARCHAR'",
                [table]).fetchall()]
            for col in cols:
                chunks += [str(v[0]) for v in con.execute(f'SELECT "{col}" FROM "{table}"').fetchall()]
    return "\n".join(chunks)


@pytest.mark.slow
def test_api_key_is_sent_but_never_stored(workspace, llm_server):
    llm_server.script(reply="fine")
    llm.complete(workspace, req(llm_server, "uses the env key"), retry=FAST)
    assert llm_server.requests[0].headers.get("authorization") == f"Bearer {KEY}"
    # A key passed in params is sent but not stored; an error that echoes a key is scrubbed.
    llm.complete(workspace, req(llm_server, "explicit key", api_key=KEY), retry=FAST)
    llm_server.script(status=401, error_body={"error": {"message": f"Incorrect API key provided: {KEY}. Also sk-live-abcdef123456789.", "type": "invalid_request_error"}})
    failed = llm.complete(workspace, req(llm_server, "bad key"), retry=FAST)
    assert failed.error_kind == "auth" and KEY not in failed.error_message
    assert "sk-live-abcdef123456789" not in failed.error_message
    dump = _all_text(workspace)
    assert "explicit key" in dump and "Incorrect API key provided" in dump  # the rows are there ...
    assert KEY not in dump and KEY[:12] not in dump and "sk-live-abcdef" not in dump  # ... the keys are not


def test_scrub_removes_key_looking_strings(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "plain-looking-secret-value-123")
    text = ("bad key sk-ant-api03-abcdefghijklmnop and AIzaSyA1234567890abcdefghijklmnop, Authorization: Bearer abc.def-ghi "
            "url?key=zzzzzzzzzz&x=1 plain-looking-secret-value-123")
    out = llm.scrub(text)
    for secret in ("sk-ant-api03", "AIzaSyA123", "abc.def-ghi", "zzzzzzzzzz", "plain-looking-secret"):
        assert secret not in out
    assert "bad key" in out
    assert llm.storable_params({"api_key": "x", "temperature": 0, "aws_secret_access_key": "y", "max_tokens": 5}) == {
        "temperature": 0, "max_tokens": 5}


@pytest.mark.slow
def test_workspace_is_free_for_other_processes_during_a_run(workspace, llm_server):
    # The server answers the first 12 requests and holds the rest until released, so the run is
    # certainly still going (4 calls in flight) while other processes open the workspace.
    held_from, n = 12, 40
    llm_server.script(latency_s=0.02, hold_after=held_from)
    requests = [req(llm_server, f"long run {i}") for i in range(n)]
    patient = RetryPolicy(max_attempts=2, initial_delay_s=0.01, timeout_s=120.0)  # held calls must not time out
    results = []
    runner = threading.Thread(target=lambda: results.extend(
        llm.complete_many(workspace, requests, max_concurrency=4, retry=patient)))
    runner.start()
    try:
        deadline = time.monotonic() + 60
        while True:  # the finished calls reach the workspace (the writer commits every 0.2 s)
            with connect(workspace) as con:
                stored_now = con.execute("SELECT count(*) FROM llm_calls").fetchone()[0]
            if stored_now == held_from:
                break
            assert time.monotonic() < deadline, f"only {stored_now} of {held_from} answered calls stored"
            time.sleep(0.05)
        # Another process opens the workspace while the run is going on (it fails if the file stays locked).
        reader = (
            "import sys; from lsqa.store import connect\n"
            "with connect(sys.argv[1], timeout_s=3) as con:\n"
            "    print(con.execute('SELECT count(*) FROM llm_calls').fetchone()[0])\n"
        )
        seen = []
        for _ in range(2):
            out = run_python(reader, workspace, timeout=60)
            assert out.returncode == 0, out.stderr
            seen.append(int(out.stdout))
        assert runner.is_alive() and llm_server.in_flight == 4  # the run was going on throughout
    finally:
        llm_server.release()
        runner.join(timeout=60)
    assert seen == [held_from, held_from]  # finished calls were stored; held ones were not
    assert len(results) == n and all(r.ok for r in results)
    with connect(workspace) as con:
        assert con.execute("SELECT count(*) FROM llm_calls WHERE status = 'ok'").fetchone()[0] == n


def test_gil_switch_interval_is_lowered_only_while_batches_run(workspace, llm_server):
    # The server reads the process-wide interval while it answers, i.e. while a batch runs. A
    # "slow" batch is held in the server while a second batch runs start to end: when the second
    # ends, the interval must stay low for the slow one, and come back only when that one ends.
    default, low = sys.getswitchinterval(), llm.runner.GIL_SWITCH_INTERVAL_S
    assert low < default
    gate, seen = threading.Event(), []

    def reply(request):
        seen.append(sys.getswitchinterval())
        if "slow" in str(request["messages"]):
            gate.wait(30)
        return "ok"

    llm_server.script(reply=reply)
    patient = RetryPolicy(max_attempts=1, timeout_s=60.0)
    slow_results = []
    slow = threading.Thread(target=lambda: slow_results.extend(
        llm.complete_many(workspace, [req(llm_server, "slow one")], retry=patient)))
    slow.start()
    try:
        deadline = time.monotonic() + 30
        while llm_server.in_flight < 1:
            assert time.monotonic() < deadline, "the slow call never reached the server"
            time.sleep(0.01)
        quick = llm.complete_many(workspace, [req(llm_server, f"quick {i}") for i in range(3)], retry=patient)
        assert all(r.ok for r in quick)
        assert sys.getswitchinterval() == pytest.approx(low)  # the slow batch is still running
    finally:
        gate.set()
        slow.join(timeout=30)
    assert slow_results and slow_results[0].ok
    assert len(seen) == 4 and all(v == pytest.approx(low) for v in seen)
    assert sys.getswitchinterval() == default  # restored after the last batch


def test_importing_lsqa_llm_does_not_import_litellm():
    code = "import sys, time; t = time.time(); import lsqa.llm; print('litellm' in sys.modules, time.time() - t)"
    out = run_python(code, timeout=60, fresh=True)  # start-up itself: a new interpreter
    imported, seconds = out.stdout.split()
    assert imported == "False" and float(seconds) < 1.0


def test_bad_requests_are_programming_errors(workspace):
    with pytest.raises(ValueError, match="messages"):
        llm.complete(workspace, LLMRequest("openai/x", "just a string"))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="model"):
        llm.complete(workspace, LLMRequest("", [{"role": "user", "content": "x"}]))
    assert llm.complete_many(workspace, []) == []


# -- real providers (opt-in) -------------------------------------------------------------------


@pytest.mark.api
@pytest.mark.skipif(os.environ.get("LSQA_RUN_API") != "1", reason="needs a real API key; set LSQA_RUN_API=1")
def test_a_real_provider_answers(workspace):
    model = os.environ.get("LSQA_API_MODEL", "openai/gpt-4o-mini")
    result = llm.complete(workspace, LLMRequest(model, [{"role": "user", "content": "Reply with the word: pong"}],
                                                {"max_tokens": 5, "temperature": 0}))
    assert result.ok, result.error_message
    assert "pong" in result.text.lower()
    assert llm.complete(workspace, LLMRequest(model, [{"role": "user", "content": "Reply with the word: pong"}],
                                              {"max_tokens": 5, "temperature": 0})).cached


def test_missing_key_is_an_auth_error_without_retries(workspace, llm_server, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY")
    result = llm.complete(workspace, req(llm_server), retry=FAST)
    assert result.status == "error" and result.error_kind == "auth" and result.attempts == 1
    assert "OPENAI_API_KEY" in result.error_message and llm_server.requests == []
