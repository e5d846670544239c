"""The command line of the foundation: ingest, import, status, workspace resolution, errors."""

import json
import os
import shutil
import subprocess
import sys

from typer.testing import CliRunner

from lsqa.cli import app
from tests.conftest import TEST_DATA

runner = CliRunner()
SLICE = TEST_DATA / "narrativeqa_slice"


def lsqa(*args, env=None):
    result = runner.invoke(app, list(map(str, args)), env=env)
    return result


def test_ingest_and_status_json(workspace):
    r = lsqa("ingest-narrativeqa", SLICE, "--workspace", workspace)
    assert r.exit_code == 0, r.output
    assert "added" in r.output and "89 questions" in r.output
    r = lsqa("status", "--workspace", workspace, "--json")
    counts = json.loads(r.output)
    assert counts["questions"] == 89 and counts["documents"] == 3 and set(counts) >= {"judgments", "human_reviews"}


def test_workspace_from_environment_and_settings(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    env_ws = tmp_path / "from_env.duckdb"
    r = lsqa("ingest-book", SLICE / "stories" / "2dd593d19e201c9cf4edb0703cad0f525c1038a2.txt",
             env={"LSQA_WORKSPACE": str(env_ws)})
    assert r.exit_code == 0, r.output
    assert env_ws.exists() and not (tmp_path / "db").exists()
    r = lsqa("status", "--json", env={"LSQA_WORKSPACE": str(env_ws)})
    assert r.exit_code == 0 and json.loads(r.output)["documents"] == 1  # the book went to the env's workspace
    (tmp_path / "lsqa.toml").write_text('workspace = "from_settings.duckdb"\n')
    r = lsqa("status", "--json")  # a command that reads refuses a workspace that is not there
    assert r.exit_code == 2 and "from_settings.duckdb does not exist" in r.stderr
    assert not (tmp_path / "from_settings.duckdb").exists()
    r = lsqa("ingest-book", SLICE / "stories" / "2dd593d19e201c9cf4edb0703cad0f525c1038a2.txt")
    assert r.exit_code == 0 and "creating a new workspace at from_settings.duckdb" in r.stderr
    assert (tmp_path / "from_settings.duckdb").exists()
    (tmp_path / "lsqa.toml").unlink()
    r = lsqa("status")
    assert r.exit_code == 2 and "db/lsqa.duckdb does not exist" in r.stderr
    assert not (tmp_path / "db").exists()


def test_settings_file_refuses_secrets(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "lsqa.toml").write_text('openai_api_key = "sk-123"\n')
    r = lsqa("status")
    assert r.exit_code == 2, r.output
    assert "lsqa.toml" in r.stderr and "'openai_api_key'" in r.stderr and "environment" in r.stderr
    assert "sk-123" not in r.output and "Traceback" not in r.output
    assert not (tmp_path / "db").exists()  # refused before any workspace is opened


def test_malformed_input_exits_nonzero_with_file_and_line(workspace, tmp_path):
    lsqa("ingest-narrativeqa", SLICE, "--workspace", workspace)
    bad = tmp_path / "answers.csv"
    bad.write_text("question_id,system,answer\nnqa:2c5f448df18172babaac38806e1fb699a8baf65b:0,s,ok\nnqa:missing:1,s,x\n")
    # The installed console script, as a user runs it: message on stderr, no traceback, exit 2.
    exe = shutil.which("lsqa", path=os.path.dirname(sys.executable))
    p = subprocess.run([exe, "import-answers", str(bad), "--workspace", str(workspace)], capture_output=True, text=True)
    assert p.returncode == 2
    assert f"{bad}:3: unknown question id 'nqa:missing:1'" in p.stderr and "Traceback" not in p.stderr
    r = lsqa("status", "--workspace", workspace, "--json")
    assert json.loads(r.output)["answers"] == 0
