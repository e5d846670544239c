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

from tests.support.llm_server import (
    llm_server,  # noqa: E402, F401 - the scriptable OpenAI server fixture, for every test module
)

# Compiled modules are kept (__pycache__, git-ignored) even where the environment sets
# PYTHONDONTWRITEBYTECODE: without them each pytest-xdist worker compiles and assertion-rewrites every
# test module and lsqa again on every run, and so does every new interpreter a test starts (figures:
# docs/BENCHMARKS.md, "Test suite", and its log).
sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

PROJECT_ROOT = Path(__file__).resolve().parents[1]
TEST_DATA = Path(__file__).resolve().parent / "data"


def run_python(code: str, *args, timeout: float = 120, fresh: bool = False, **kwargs) -> subprocess.CompletedProcess:
    """Run ``code`` in another Python process in the project root (``sys.argv[1:]`` = ``args``), its
    output captured as text: for what needs another process (file locks, forks, kill -9). The process
    is forked from one that has imported lsqa already (tests/support/forkserver.py); ``fresh=True`` starts a
    new interpreter, for a test about what start-up does."""
    from tests.support import forkserver

    return forkserver.run(code, *args, timeout=timeout, capture_output=True, text=True, fresh=fresh, **kwargs)


def shared_data_dir() -> Path:
    return Path(os.environ.get("LSQA_DATA_DIR") or PROJECT_ROOT.parent / "shared" / "data")


@pytest.fixture(scope="session")
def shared_data() -> Path:
    path = shared_data_dir()
    if not path.is_dir():
        pytest.fail(f"shared data not found at {path}; set LSQA_DATA_DIR")
    return path


@pytest.fixture
def workspace(tmp_path, migrated_workspace) -> Path:
    """Path of a fresh, empty workspace file, every migration applied (a copy of one migrated file: see
    ``migrated_workspace``). A test about creating or migrating a workspace uses a path of ``tmp_path``."""
    return migrated_workspace(tmp_path / "ws.duckdb")


@pytest.fixture(scope="session")
def migrated_workspace(tmp_path_factory):
    """``copy(path)``: an empty workspace with every migration applied, written at ``path`` (returned).

    Creating a workspace writes a copy of lsqa's per-process template and gives it a queue-signals
    version and ``applied_at`` of its own, in a transaction (lsqa.store.db); a plain copy of one file
    skips even that (docs/benchmarks-log/2026-12-07-fresh-workspace.md). The file is made once per
    worker by lsqa itself, so a copy is what a first connect would make, but for that version: the
    copies share one (a test about versions makes its workspaces with ``store.connect``)."""
    import shutil

    from lsqa.store import db

    template = tmp_path_factory.mktemp("migrated") / "empty.duckdb"
    with db.connect(template):
        pass  # closed: detached and checkpointed, so the file alone is the whole workspace
    assert not template.with_name(template.name + ".wal").exists(), "the migrated workspace kept a WAL"

    def copy(path: Path) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(template, path)
        return path

    return copy


@pytest.fixture(autouse=True)
def _isolated_settings(monkeypatch, tmp_path):
    # Tests never read a developer's lsqa.toml or workspace by accident.
    monkeypatch.delenv("LSQA_WORKSPACE", raising=False)
    monkeypatch.delenv("LSQA_SETTINGS", raising=False)
    monkeypatch.setenv("LSQA_DATA_DIR", str(shared_data_dir()))
    from lsqa.store import workspace_cache

    workspace_cache.clear()  # each test reads its workspaces afresh


def built_once(tmp_path_factory, name: str, build) -> Path:
    """``build(folder)`` run once per test run, in a folder every pytest-xdist worker shares, and
    that folder returned. The first worker to need it builds it while the others wait on a file lock;
    the folder is renamed into place only when whole, so a failed build is never taken for a finished
    one (the next test to need it builds it again)."""
    import fcntl
    import shutil

    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    done = shared / name
    with open(shared / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            partial = shared / f"{name}.building"
            shutil.rmtree(partial, ignore_errors=True)
            partial.mkdir()
            build(partial)
            partial.rename(done)
    return done


@pytest.fixture(scope="session")
def demo_workspace_template(tmp_path_factory) -> Path:
    """The small demo workspace (configs/demo_small.toml), built once per test run (``built_once``):
    building it is a study run with the embedded models, the costliest setup of the suite. Tests use
    ``demo_workspace`` (a private copy) or copy it themselves: opening the shared file would lock it
    against the others."""
    from lsqa.study.demo import build_demo

    def build(folder: Path) -> None:
        for _ in build_demo(folder / "demo.duckdb", data_dir=shared_data_dir(), scale="small"):
            pass

    return built_once(tmp_path_factory, "demo-template", build) / "demo.duckdb"


@pytest.fixture(scope="session")
def bundled_demo_from_wheel(tmp_path_factory) -> dict:
    """A fresh machine: a wheel built from this checkout, unpacked onto an empty path, runs
    ``lsqa demo`` in another folder with no shared data folder, so it builds the demo bundled with
    lsqa (Beatrix Potter tales). Built once per test run: the packaging test and the fresh-machine
    browser test read the same run. Returns ``wheel``, ``site``, ``elsewhere``, ``workspace``, ``env``
    (what the commands ran with) and the demo's ``stdout`` / ``stderr``."""
    import json
    import shutil
    import zipfile

    def build(folder: Path) -> None:
        source = folder / "src"  # a copy, so the build's own folders stay out of the checkout
        for name in ("lsqa", "prompts", "db", "configs"):
            shutil.copytree(PROJECT_ROOT / name, source / name, symlinks=True,
                            ignore=shutil.ignore_patterns("__pycache__", "*.duckdb*"))
        for name in ("pyproject.toml", "README.md"):
            shutil.copy(PROJECT_ROOT / name, source / name)
        subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                        "-w", str(folder / "wheel"), str(source)], check=True, capture_output=True, timeout=600)
        shutil.rmtree(source)
        (wheel,) = (folder / "wheel").glob("lsqa-*.whl")
        zipfile.ZipFile(wheel).extractall(folder / "site")  # a pure-Python wheel installs by unpacking it
        (folder / "elsewhere").mkdir()
        demo = subprocess.run([sys.executable, "-c", "from lsqa.cli import main; main()", "demo",
                               "--path", str(folder / "elsewhere" / "demo.duckdb")],
                              cwd=folder / "elsewhere", env=_wheel_env(folder), capture_output=True, text=True,
                              timeout=900)
        (folder / "demo.json").write_text(json.dumps({"returncode": demo.returncode, "stdout": demo.stdout,
                                                      "stderr": demo.stderr}))

    folder = built_once(tmp_path_factory, "bundled-demo-from-wheel", build)
    demo = json.loads((folder / "demo.json").read_text())
    assert demo["returncode"] == 0, demo["stdout"][-2000:] + demo["stderr"][-2000:]
    (wheel,) = (folder / "wheel").glob("lsqa-*.whl")
    return {"wheel": wheel, "site": folder / "site", "elsewhere": folder / "elsewhere",
            "workspace": folder / "elsewhere" / "demo.duckdb", "env": _wheel_env(folder), **demo}


def _wheel_env(folder: Path) -> dict[str, str]:
    """Only the wheel's copy of lsqa importable, and no shared data folder (as on a fresh machine)."""
    return {**os.environ, "PYTHONPATH": str(folder / "site"), "LSQA_DATA_DIR": str(folder / "no-shared-data")}


@pytest.fixture
def demo_workspace(demo_workspace_template, tmp_path) -> Path:
    """A private copy of the small demo workspace, free to change."""
    import shutil

    copy = tmp_path / "demo.duckdb"
    shutil.copy(demo_workspace_template, copy)
    return copy


# `make check` (lint + tests not marked slow or browser) is the fast lane: a test
# that builds the demo workspace (a study run with the embedded models) or renders the Streamlit
# app counts as slow without each one saying so. `make test` runs everything.
_SLOW_FIXTURES = {"demo_workspace", "demo_workspace_template", "bundled_demo_from_wheel"}
_SLOW_MODULES = {"test_dashboard_pages.py", "test_app_serves.py"}


def pytest_collection_modifyitems(config, items):
    for item in items:
        if _SLOW_FIXTURES & set(getattr(item, "fixturenames", ())) or item.path.name in _SLOW_MODULES:
            item.add_marker(pytest.mark.slow)
    _sample_case_tables(items)
    # The modules that use the small demo workspace run first, each kept whole. pytest-xdist starts
    # each worker on an even, contiguous share of this order: they all fall in the first worker's
    # share, which builds the demo template, while the second runs tests that do not need it. In
    # alphabetical order the second worker's share began with a test that needed it, and it waited
    # ~30 s on the build's lock.
    needs_demo = {item.path for item in items if "demo_workspace_template" in getattr(item, "fixturenames", ())}
    # The modules whose tests load the sentence-embedding model (``@pytest.mark.embedding_model``) come next,
    # kept whole too: all in the first worker's share, so one worker loads the model (~7 s of CPU), not each.
    needs_model = {item.path for item in items if item.get_closest_marker("embedding_model")}
    items.sort(key=lambda item: (item.path not in needs_demo, item.path not in needs_model))  # stable within groups


def _sample_case_tables(items) -> None:
    """A test marked ``@pytest.mark.sampled(every)`` is a table of cases (its parametrisations): the fast
    lane runs one case in ``every`` (the first, then every ``every``-th, in the table's order), the
    others are marked slow and run in ``make test``. Which cases are sampled does not depend on the
    order pytest-randomly gives."""
    tables: dict[tuple, list] = {}
    for item in items:
        marker = item.get_closest_marker("sampled")
        if marker is not None and hasattr(item, "callspec"):
            tables.setdefault((item.path, item.originalname), []).append((marker.args[0], item))
    for cases in tables.values():
        cases.sort(key=lambda case: tuple(case[1].callspec.indices.values()))
        for i, (every, item) in enumerate(cases):
            if i % every:
                item.add_marker(pytest.mark.slow)
