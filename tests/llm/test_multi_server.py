"""Several servers for one model (issue 15, part 5): a list of ``api_base``s, calls spread over
them by litellm's Router, a failing server's calls answered by another — two real HTTP servers."""

import pytest

from lsqa import llm, store
from lsqa.config.study import run_config_from_dict
from lsqa.corpus.ingest import ingest_narrativeqa
from lsqa.study import pipeline
from tests.conftest import TEST_DATA
from tests.support.llm_server import FakeLLMServer

MODEL = "openai/gpt-4o-mini"


@pytest.fixture
def second_server():
    server = FakeLLMServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(autouse=True)
def _key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")


def _requests(servers, n: int, tag: str) -> list[llm.LLMRequest]:
    bases = [s.api_base for s in servers]
    return [llm.LLMRequest(MODEL, [{"role": "user", "content": f"{tag} question {i}"}], {"api_base": bases})
            for i in range(n)]


@pytest.mark.slow
def test_calls_are_spread_over_the_servers(workspace, llm_server, second_server):
    llm_server.script(reply="from one")
    second_server.script(reply="from two")
    results = llm.complete_many(workspace, _requests([llm_server, second_server], 40, "spread"), max_concurrency=4)
    assert all(r.ok for r in results)
    assert len(llm_server.requests) + len(second_server.requests) == 40
    assert len(llm_server.requests) >= 5 and len(second_server.requests) >= 5  # both used (at random)
    assert sorted({r.text for r in results}) == ["from one", "from two"]
    assert all(r.cost_usd and r.cost_usd > 0 for r in results)  # litellm's price, as with one server


def test_a_failing_servers_calls_are_retried_on_the_other(workspace, llm_server, second_server):
    llm_server.script(status=503)  # down
    second_server.script(reply="healthy")
    results = llm.complete_many(workspace, _requests([llm_server, second_server], 20, "failover"), max_concurrency=2,
                                retry=llm.RetryPolicy(max_attempts=1))  # no lsqa retries: the Router's failover only
    assert [r.text for r in results] == ["healthy"] * 20 and all(r.attempts == 1 for r in results)
    assert len(second_server.requests) == 20
    # the failing server is left alone after its first failures (litellm's cooldown)
    assert 1 <= len(llm_server.requests) <= 4


def test_a_server_that_is_gone_is_skipped(workspace, llm_server):
    gone = FakeLLMServer().start()
    gone.stop()  # nothing listens on its port any more: connection refused
    llm_server.script(reply="still here")
    results = llm.complete_many(workspace, _requests([gone, llm_server], 6, "gone"),
                                retry=llm.RetryPolicy(max_attempts=1))
    assert [r.text for r in results] == ["still here"] * 6


@pytest.mark.slow
def test_servers_are_transport_not_definition(workspace, llm_server, second_server):
    """The cache key and a name's definition ignore where the calls go: a study moved from one
    server to two answers from the cache."""
    ingest_narrativeqa(workspace, TEST_DATA / "narrativeqa_slice")
    llm_server.script(reply="Tom Kitten.")
    second_server.script(reply="Tom Kitten.")

    def study(api_base):
        return run_config_from_dict({
            "documents": ["The Tale of Tom Kitten"], "questions": "narrativeqa", "max_questions": 3,
            "systems": [{"name": "gpt-rag", "model": MODEL, "context": "retrieval:500",
                         "params": {"api_base": api_base, "temperature": 0}}],
        })

    first = pipeline.run(workspace, study(llm_server.api_base)).to_dict()
    assert first["calls_made"] == 3
    llm_server.script(reply="never")
    again = pipeline.run(workspace, study([llm_server.api_base, second_server.api_base])).to_dict()
    assert again["calls_made"] == 0 and llm_server.requests == [] and second_server.requests == []
    with store.connect(workspace) as con:
        texts = con.execute("SELECT DISTINCT text FROM answers WHERE system_name = 'gpt-rag'").fetchall()
    assert texts == [("Tom Kitten.",)]
