"""Where the suite's time goes: each test's start, end and CPU on each pytest-xdist worker.

    LSQA_TIMELINE_DIR=/tmp/tl .venv/bin/python -m pytest -q -n 2 --dist worksteal -p tests.support.timeline_plugin tests
    .venv/bin/python scripts/suite_timeline.py /tmp/tl

Writes one JSON line per test (setup, call and teardown together) to
``$LSQA_TIMELINE_DIR/timeline-<worker>.jsonl``: ``id``, ``start`` and ``end`` (epoch seconds),
``self`` (CPU of the worker process) and ``children`` (CPU of its child processes reaped during
the test: servers, CLI runs, the browser's driver). Not loaded unless asked for with ``-p``.
"""

from __future__ import annotations

import json
import os
import resource
import time
from pathlib import Path

_started: dict[str, tuple[float, float, float]] = {}


def _cpu() -> tuple[float, float]:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


_controller = False  # the pytest-xdist controller relays its workers' reports: they write their own


def pytest_configure(config):
    global _controller
    _controller = bool(getattr(config.option, "numprocesses", None)) and "PYTEST_XDIST_WORKER" not in os.environ


def _out() -> Path | None:
    folder = os.environ.get("LSQA_TIMELINE_DIR")
    if not folder or _controller:
        return None
    Path(folder).mkdir(parents=True, exist_ok=True)
    return Path(folder) / f"timeline-{os.environ.get('PYTEST_XDIST_WORKER', 'main')}.jsonl"


def pytest_runtest_logstart(nodeid, location):
    _started[nodeid] = (time.time(), *_cpu())


def pytest_runtest_logfinish(nodeid, location):
    path = _out()
    if path is None or nodeid not in _started:
        return
    start, own0, children0 = _started.pop(nodeid)
    own1, children1 = _cpu()
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps({"id": nodeid, "start": start, "end": time.time(), "self": own1 - own0,
                            "children": children1 - children0}) + "\n")
