"""Shared test fixtures: offline environment, shared data location, fresh workspaces."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

PROJECT_ROOT = Path(__file__).resolve().parents[1]
TEST_DATA = Path(__file__).resolve().parent / "data"


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
