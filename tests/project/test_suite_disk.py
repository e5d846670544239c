"""The suite leaves no workspaces behind: a full run writes ~17 GB of DuckDB files into pytest's
temporary folders, and pytest's default (every test's folder kept, for the last three runs) filled
the shared disk of a CI machine until every test errored. pyproject.toml has pytest remove a passed
test's folder as it ends and a passing run's base folder at its end; this runs pytest with the
project's own configuration on a test that writes a file, and looks at what is left."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.conftest import PROJECT_ROOT


def _run(tmp_path, body: str) -> tuple[subprocess.CompletedProcess, list[str]]:
    (tmp_path / "suite").mkdir()
    (tmp_path / "suite" / "test_writes.py").write_text(body, encoding="utf-8")
    temp = tmp_path / "temp"
    temp.mkdir()
    env = {**os.environ, "TMPDIR": str(temp)}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                           "-c", str(PROJECT_ROOT / "pyproject.toml"), "--rootdir", str(tmp_path / "suite"),
                           str(tmp_path / "suite" / "test_writes.py")],
                          env=env, capture_output=True, text=True, timeout=120)
    left = sorted(str(p.relative_to(temp)) for p in temp.rglob("*") if p.is_file())
    return done, left


WRITES = """
def test_writes_a_workspace(tmp_path):
    (tmp_path / "workspace.duckdb").write_bytes(b"x" * 4096)
"""


def test_a_passing_run_leaves_no_file_in_the_temporary_folder(tmp_path):
    done, left = _run(tmp_path, WRITES)
    assert done.returncode == 0, done.stdout + done.stderr
    assert left == [], left


def test_a_failing_test_keeps_its_folder_to_look_at(tmp_path):
    done, left = _run(tmp_path, WRITES + "\n\ndef test_fails(tmp_path):\n"
                                        "    (tmp_path / 'kept.txt').write_text('look here')\n    assert False\n")
    assert done.returncode == 1, done.stdout + done.stderr
    assert [p for p in left if p.endswith("kept.txt")], left
    assert not [p for p in left if p.endswith("workspace.duckdb")], left  # the passed test's folder went
