"""lsqa.study.jobs: pipeline runs started from the dashboard, in background threads."""

from __future__ import annotations

import pytest
from lsqa.study import jobs
from lsqa.errors import InputError


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
