"""``LSQA_DUCKDB_THREADS``: how many threads DuckDB may use in a process (``lsqa.store.db.duckdb_threads``)."""

from __future__ import annotations

import os

from tests.conftest import run_python

# A new process opens a workspace with the variable set and prints DuckDB's own setting, or the error.
OPEN_AND_SAY = (
    "import sys\n"
    "from lsqa.store import connect, WorkspaceError\n"
    "try:\n"
    "    with connect(sys.argv[1]) as con:\n"
    "        print('threads', con.execute(\"SELECT current_setting('threads')\").fetchone()[0])\n"
    "except WorkspaceError as exc:\n"
    "    print('refused:', exc)\n"
)


def _threads_seen(tmp_path, value: str | None) -> str:
    env = {k: v for k, v in os.environ.items() if k != "LSQA_DUCKDB_THREADS"}
    if value is not None:
        env["LSQA_DUCKDB_THREADS"] = value
    out = run_python(OPEN_AND_SAY, tmp_path / "ws.duckdb", env=env)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_the_variable_sets_duckdbs_threads(tmp_path):
    assert _threads_seen(tmp_path, "1") == "threads 1"
    assert _threads_seen(tmp_path, " 3 ") == "threads 3"


def test_unset_or_empty_leaves_duckdb_its_own_choice(tmp_path):
    assert _threads_seen(tmp_path, None) == f"threads {os.cpu_count()}"
    assert _threads_seen(tmp_path, "") == f"threads {os.cpu_count()}"


def test_a_value_that_is_not_a_whole_number_of_threads_is_refused_naming_the_variable(tmp_path):
    for bad in ("0", "-2", "two", "1.5", "1e3"):
        said = _threads_seen(tmp_path, bad)
        assert said.startswith("refused: LSQA_DUCKDB_THREADS=") and repr(bad.strip()) in said, (bad, said)
        assert not (tmp_path / "ws.duckdb").exists(), bad  # refused before any file is made
