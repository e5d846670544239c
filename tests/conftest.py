"""Shared test fixtures: offline environment, shared data location, fresh workspaces."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from tests.llm_server import llm_server  # noqa: E402, F401 - the scriptable OpenAI server fixture, for every test module

PROJECT_ROOT = Path(__file__).resolve().parents[1]
TEST_DATA = Path(__file__).resolve().parent / "data"


def run_python(code: str, *args, timeout: float = 120) -> subprocess.CompletedProcess:
    """Run ``code`` in a new Python process started in the project root (``sys.argv[1:]`` = ``args``),
    its output captured as text: for what needs another process (file locks, forks, kill -9)."""
    return subprocess.run([sys.executable, "-c", code, *map(str, args)], cwd=PROJECT_ROOT,
                          capture_output=True, text=True, timeout=timeout)


def shared_data_dir() -> Path:
    return Path(os.environ.get("LSQA_DATA_DIR") or PROJECT_ROOT.parent / "shared" / "data")


@pytest.fixture(scope="session")
def shared_data() -> Path:
    path = shared_data_dir()
    if not path.is_dir():
        pytest.fail(f"shared data not found at {path}; set LSQA_DATA_DIR")
    return path


@pytest.fixture
def workspace(tmp_path) -> Path:
    """Path of a fresh, empty workspace file (created and migrated on first connect)."""
    return tmp_path / "ws.duckdb"


@pytest.fixture(autouse=True)
def _isolated_settings(monkeypatch, tmp_path):
    # Tests never read a developer's lsqa.toml or workspace by accident.
    monkeypatch.delenv("LSQA_WORKSPACE", raising=False)
    monkeypatch.delenv("LSQA_SETTINGS", raising=False)
    monkeypatch.setenv("LSQA_DATA_DIR", str(shared_data_dir()))
    from lsqa import workspace_cache

    workspace_cache.clear()  # each test reads its workspaces afresh


@pytest.fixture(scope="session")
def demo_workspace_template(tmp_path_factory) -> Path:
    """The small demo workspace (configs/demo_small.toml), built once per test run.

    Under pytest-xdist (`make test` runs two workers) the first worker to need it builds it in the
    run's shared temporary folder while the others wait on a file lock: building it is a study run
    with the embedded models, the costliest setup of the suite. Tests use ``demo_workspace`` (a
    private copy) or copy it themselves: opening the shared file would lock it against the others."""
    import fcntl

    from lsqa.demo import build_demo

    base = tmp_path_factory.getbasetemp()
    shared = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "demo-template"
    shared.mkdir(exist_ok=True)
    path = shared / "demo.duckdb"
    with open(shared / "build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not path.exists():
            partial = shared / "building.duckdb"  # renamed when whole: a failed build leaves no template
            partial.unlink(missing_ok=True)
            for _ in build_demo(partial, data_dir=shared_data_dir(), scale="small"):
                pass
            partial.rename(path)
    return path


@pytest.fixture
def demo_workspace(demo_workspace_template, tmp_path) -> Path:
    """A private copy of the small demo workspace, free to change."""
    import shutil

    copy = tmp_path / "demo.duckdb"
    shutil.copy(demo_workspace_template, copy)
    return copy


# `make check` (lint + tests not marked slow or browser) is the fast lane, under a minute: a test
# that builds the demo workspace (a study run with the embedded models) or renders the Streamlit
# app counts as slow without each one saying so. `make test` runs everything.
_SLOW_FIXTURES = {"demo_workspace", "demo_workspace_template"}
_SLOW_MODULES = {"test_dashboard_pages.py", "test_app_serves.py"}


def pytest_collection_modifyitems(config, items):
    for item in items:
        if _SLOW_FIXTURES & set(getattr(item, "fixturenames", ())) or item.path.name in _SLOW_MODULES:
            item.add_marker(pytest.mark.slow)
