"""Pipeline runs started from the dashboard: a small registry of background jobs, keyed by job id.

A job runs ``lsqa.study.pipeline.run`` in a daemon thread of the dashboard's server process. The registry
lives in this module, so every browser session served by that process sees the same jobs: a user
can leave the Run page and come back, or open it in another tab, and find the job with its
progress. The pipeline opens short-lived workspace connections, so the rest of the dashboard (and
the command line) keeps working while a job runs (``lsqa.store.db``).

Progress comes from the pipeline's ``progress(stage, done, total)`` callback; the calls and cost
so far are read from the LLM calls stored by the job's own runs (the pipeline hands each stage's
run id to the job as it opens), never those of another job or a command-line run beside it. A failed call is data: it
appears in the job's summary as a count and a list of messages; only an exception that stops the
pipeline (a bad config, an unknown book) marks the job ``failed``.
"""

from __future__ import annotations

import itertools
import threading
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from lsqa import store
from lsqa.store import llm_calls as llm_calls_store
from lsqa.team import Person, require

_lock = threading.Lock()
_jobs: dict[str, "Job"] = {}
_ids = itertools.count(1)


@dataclass
class Job:
    id: str
    workspace: str
    config: dict
    label: str
    status: str = "queued"             # queued | running | done | failed
    stage: str = ""
    done: int = 0
    total: int = 0
    stages_seen: list[str] = field(default_factory=list)
    started: float = field(default_factory=time.time)
    finished: float | None = None
    run_ids: list[int] = field(default_factory=list)  # this job's runs rows, one per stage opened
    summary: dict | None = None
    lines: list[str] = field(default_factory=list)
    error: str = ""
    trace: str = ""

    def snapshot(self) -> dict:
        with _lock:
            return {k: (list(v) if isinstance(v, list) else v) for k, v in self.__dict__.items()}


def _progress(job: Job):
    def callback(stage: str, done: int, total: int) -> None:
        with _lock:
            if stage != job.stage and stage not in job.stages_seen:
                job.stages_seen.append(stage)
            job.stage, job.done, job.total = stage, int(done), int(total)
    return callback


LOADING = "loading the LLM library"  # the stage a job shows while litellm is imported


def _load_llm_library(job: Job) -> None:
    """Import litellm before the first stage, saying so: the first job of a dashboard process waits
    for it (seconds on a busy machine), and its progress must not read "starting: 0 / 0" meanwhile."""
    from lsqa import llm

    with _lock:
        job.stage = LOADING
    llm.litellm()


def _run(job: Job) -> None:
    from lsqa.config.study import run_config_from_dict
    from lsqa.study import pipeline

    try:
        config = run_config_from_dict(job.config, source=job.label)
        with _lock:
            job.status = "running"
        _load_llm_library(job)
        summary = pipeline.run(job.workspace, config, progress=_progress(job), run_ids=job.run_ids)
        with _lock:
            job.summary = summary.to_dict()
            job.lines = summary.lines()
            job.status = "done"
    except Exception as exc:  # a job must never take the server down: its error is shown on the page
        with _lock:
            job.status = "failed"
            job.error = f"{type(exc).__name__}: {exc}"
            job.trace = traceback.format_exc()
    finally:
        with _lock:
            job.finished = time.time()


def start(workspace: str | Path, config: dict, *, label: str = "dashboard", by: Person | str = "") -> str:
    """Validate ``config`` (a study config as a dict, see ``lsqa.config.study``) and run it in the background.

    ``by``: who starts it. A run spends the server's API keys, so in a workspace with people only a
    signed-in admin may (``lsqa.team``); ``NotAllowed`` at once otherwise, nothing started.
    Raises ``lsqa.errors.InputError`` at once for a config that cannot run; returns the job id.
    """
    from lsqa.config.study import run_config_from_dict

    if Path(workspace).exists():  # a new workspace has nobody in it yet: its first run is the shell user's
        with store.connect(workspace) as con:
            require(con, by, "run")
    run_config_from_dict(config, source=label)  # refuse a bad config here, not in the thread
    job = Job(id=f"job-{next(_ids)}-{int(time.time())}", workspace=str(workspace), config=dict(config), label=label)
    with _lock:
        _jobs[job.id] = job
    threading.Thread(target=_run, args=(job,), name=f"lsqa-{job.id}", daemon=True).start()
    return job.id


def get(job_id: str) -> dict | None:
    job = _jobs.get(job_id)
    return job.snapshot() if job else None


def list_jobs(workspace: str | Path | None = None) -> list[dict]:
    with _lock:
        jobs = list(_jobs.values())
    out = [j.snapshot() for j in jobs if workspace is None or j.workspace == str(workspace)]
    return sorted(out, key=lambda j: -j["started"])


def is_running(job_id: str) -> bool:
    job = _jobs.get(job_id)
    return bool(job and job.status in ("queued", "running"))


def wait(job_id: str, timeout_s: float = 300.0) -> dict | None:
    """Block until the job ends (tests and scripts)."""
    deadline = time.monotonic() + timeout_s
    while is_running(job_id) and time.monotonic() < deadline:
        time.sleep(0.1)
    return get(job_id)


def cost_so_far(job: dict) -> dict:
    """Calls and cost stored so far by the job's own runs."""
    with store.connect(job["workspace"]) as con:
        return llm_calls_store.cost_of_runs(con, job["run_ids"])
