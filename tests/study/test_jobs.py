"""lsqa.study.jobs: pipeline runs started from the dashboard, in background threads."""

from __future__ import annotations

import pytest

from lsqa.errors import InputError
from lsqa.study import jobs


def test_jobs_refuse_a_bad_config_at_once(demo_workspace):
    before = jobs.list_jobs(demo_workspace)
    with pytest.raises(InputError, match="documents is empty"):
        jobs.start(demo_workspace, {"documents": []})
    with pytest.raises(InputError, match=r"systems\[0\]\.context: 'moon' is not none, full"):
        jobs.start(demo_workspace, {"documents": ["x"], "systems": [{"name": "s", "model": "m", "context": "moon"}]})
    assert jobs.list_jobs(demo_workspace) == before  # refused before any job was started


def test_a_job_that_cannot_run_is_failed_not_a_crash(demo_workspace):
    job_id = jobs.start(demo_workspace, {"documents": ["No Such Book"], "systems": [
        {"name": "s", "model": "lsqa/extractive", "context": "none"}]})
    job = jobs.wait(job_id, 60)
    assert job["status"] == "failed" and "No Such Book" in job["error"]
    assert job_id in {j["id"] for j in jobs.list_jobs(demo_workspace)}


@pytest.mark.slow  # a new interpreter that imports litellm
def test_a_job_says_it_loads_the_llm_library_first(workspace, monkeypatch):
    """The first job of a dashboard process waits for litellm's import (~3-10 s): its progress says
    so instead of "starting: 0 / 0" (issue 34)."""
    import time

    from lsqa import llm

    real = llm.litellm
    gate = __import__("threading").Event()

    def slow():
        gate.wait(10)
        return real()

    monkeypatch.setattr(llm, "litellm", slow)
    job_id = jobs.start(workspace, {"documents": ["No Such Book"], "systems": [
        {"name": "s", "model": "lsqa/extractive", "context": "none"}]})
    deadline = time.monotonic() + 10
    while jobs.get(job_id)["stage"] != jobs.LOADING and time.monotonic() < deadline:
        time.sleep(0.01)
    assert jobs.get(job_id)["stage"] == jobs.LOADING and jobs.is_running(job_id)
    gate.set()
    assert jobs.wait(job_id, 60)["status"] == "failed"


def test_progress_names_each_stage_and_its_calls_before_they_go_out_then_moves(workspace, llm_server, monkeypatch):
    """pipeline.run's progress: each stage first says it is preparing (0 / 0), then its number of
    calls before the first one is sent (0 / N), then moves as calls finish — not only at the end."""
    from lsqa.config.study import run_config_from_dict
    from lsqa.corpus.ingest import ingest_narrativeqa
    from lsqa.study import pipeline
    from tests.conftest import TEST_DATA

    monkeypatch.setenv("OPENAI_API_KEY", "sk-local-test-0000")
    ingest_narrativeqa(workspace, TEST_DATA / "narrativeqa_slice")
    llm_server.script(reply="The better answer is A.", latency_s=0.1)
    config = run_config_from_dict({
        "documents": ["The Tale of Tom Kitten"], "questions": "narrativeqa", "max_questions": 8,
        "max_concurrency": 2,
        "systems": [{"name": "nocontext", "model": "lsqa/extractive", "context": "none"},
                    {"name": "fullbook", "model": "lsqa/extractive", "context": "full"}],
        "judges": [{"name": "sxs", "model": "openai/gpt-4o-mini", "kind": "pairwise", "context": "none",
                    "both_orders": False, "params": {"api_base": llm_server.api_base, "max_tokens": 20}}]},
        source="test")
    events = []
    pipeline.run(workspace, config, progress=lambda stage, done, total: events.append(
        (stage, done, total, len(llm_server.requests))))
    for name, calls in (("answers", 16), ("judge:sxs", 8)):
        seen = [e for e in events if e[0] == name]
        assert seen[0][:3] == (name, 0, 0)                       # preparing: the page names the stage at once
        assert seen[1][:3] == (name, 0, calls)                   # its calls, counted before any goes out
        assert seen[-1][:3] == (name, calls, calls)
    judge = [e for e in events if e[0] == "judge:sxs"]
    assert judge[1][3] == 0                                      # announced before the server saw a request
    assert any(0 < done < 8 for _, done, _, _ in judge), judge   # it moves while the calls go on
