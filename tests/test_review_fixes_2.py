"""Bugs found by the second review pass (workspace host, fork, definitions), each fixed and kept as a test."""

from __future__ import annotations

import os

import pytest

from lsqa import pipeline, store
from lsqa.definitions import DefinitionChanged
from lsqa.errors import InputError
from lsqa.ingest import ingest_narrativeqa
from lsqa.runconfig import run_config_from_dict

from .conftest import TEST_DATA, run_python

BASE = {
    "documents": ["The Tale of Tom Kitten"], "questions": "narrativeqa", "max_questions": 4,
    "systems": [{"name": "rag", "model": "lsqa/extractive", "context": "retrieval:1000"}],
    "judges": [{"name": "gt", "model": "lsqa/lexical-judge", "kind": "groundtruth", "context": "none"}],
}


def _counts(ws):
    with store.connect(ws) as con:
        return (con.execute("SELECT count(*) FROM answers").fetchone()[0],
                con.execute("SELECT count(*) FROM judgments").fetchone()[0])


# --------------------------------------------------------------------------- definitions


def test_a_run_that_failed_before_any_result_does_not_pin_the_names(workspace):
    """A config with a typo (here: the document) fails before any answer or verdict exists; the
    user fixes it and also adjusts a system and a judge. Nothing has results under those names, so
    the fixed run must go ahead (before: refused as 'already has results made with a different
    definition')."""
    ingest_narrativeqa(workspace, TEST_DATA / "narrativeqa_slice")
    with pytest.raises(InputError):
        pipeline.run(workspace, run_config_from_dict({**BASE, "documents": ["The Tale of Tom Kiten"]}))
    assert _counts(workspace) == (0, 0)  # no results under any name
    fixed = run_config_from_dict({
        **BASE,
        "systems": [{"name": "rag", "model": "lsqa/extractive", "context": "retrieval:2000"}],
        "judges": [{"name": "gt", "model": "lsqa/lexical-judge", "kind": "groundtruth", "context": "none",
                    "reference": "1"}],
    })
    pipeline.run(workspace, fixed)
    assert _counts(workspace)[0] == 4


def test_a_judge_with_verdicts_from_before_definitions_is_not_silently_redefined(workspace):
    """Judges with verdicts from before migration 0004 have no row in `judges`; before, any
    redefinition was accepted and new verdicts mixed with the old ones under one name. Now the
    kind of the stored verdicts is compared."""
    ingest_narrativeqa(workspace, TEST_DATA / "narrativeqa_slice")
    pipeline.run(workspace, run_config_from_dict(BASE))
    with store.write(workspace) as con:  # as a workspace from before migration 0004 would have it
        con.execute("DELETE FROM judges")
    changed = run_config_from_dict({**BASE, "judges": [
        {"name": "gt", "model": "lsqa/lexical-judge", "kind": "absolute", "context": "none"}]})
    with pytest.raises(DefinitionChanged):
        pipeline.run(workspace, changed)


# --------------------------------------------------------------------------- host / fork

# Thread `a` connects while another process holds the file, so it waits in _attach's retry loop.
# A fork then (multiprocessing, os.fork) runs the at-fork hook. Before the fix the waiting
# connection was not counted, the hook saw an "idle" host, closed it and cleared _attachments;
# thread `a` attached the file through the orphaned entry and the next connect to the same file
# failed with "already attached".
FORK_DURING_LOCK_WAIT = (
    "import os, sys, time, threading, subprocess\n"
    "from lsqa import store\n"
    "ws = sys.argv[1]\n"
    "with store.connect(ws): pass\n"
    "holder = subprocess.Popen([sys.executable, '-c', 'import duckdb,sys,time\\n"
    "c = duckdb.connect(sys.argv[1]); print(1, flush=True); time.sleep(1.5)', ws],"
    " stdout=subprocess.PIPE, text=True)\n"
    "holder.stdout.readline()\n"
    "entered, release = threading.Event(), threading.Event()\n"
    "def a():\n"
    "    with store.connect(ws):\n"
    "        entered.set(); release.wait(30)\n"
    "t = threading.Thread(target=a); t.start()\n"
    "time.sleep(0.5)\n"
    "pid = os.fork()\n"
    "if pid == 0:\n"
    "    os._exit(0)\n"
    "os.waitpid(pid, 0)\n"
    "entered.wait(30)\n"
    "try:\n"
    "    with store.connect(ws) as con:\n"
    "        print('ok', con.execute('SELECT count(*) FROM systems').fetchone()[0], flush=True)\n"
    "except Exception as exc:\n"
    "    print('failed', type(exc).__name__, exc, flush=True)\n"
    "release.set(); t.join(); holder.wait()\n"
)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_fork_while_a_thread_waits_for_the_file_lock_does_not_break_later_connects(workspace):
    out = run_python(FORK_DURING_LOCK_WAIT, workspace)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok 0", out.stdout + out.stderr
