"""Issue 35: ``kill -9`` during ``lsqa import-judgments`` (and ``import-answers``, ``ingest-narrativeqa``)
leaves the workspace as it was.

A real kill, no hook: a child process imports 200,000 verdicts (a few seconds in SQL) and is killed
with SIGKILL at several moments after its import began (the sign: its spill folder next to the
workspace, made when it begins). Every table must then be exactly as before (row count and a digest
of every row), and the same import run again must add every verdict.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import duckdb
import pytest

from bench.scale_workspace import build, verdict_file
from lsqa import store
from lsqa.store.importers.lines import MEMORY_ENV, SPILL
from lsqa.study.imports import import_judgments
from tests.support import forkserver
from tests.support.bad_input import snapshot

pytestmark = pytest.mark.slow

IMPORT = "import sys; from lsqa.study.imports import import_judgments; import_judgments(sys.argv[1], sys.argv[2])"


def _spilling(folder: Path) -> bool:
    return (folder / SPILL).exists()


def _import_killed(folder: Path, code: str, *args, delay: float) -> tuple[bool, int, str]:
    """Run ``code`` (an import) in a child; SIGKILL it ``delay`` s after its import began (its spill folder
    appeared in ``folder``). Returns (whether the kill landed, the child's return code, its stderr's end)."""
    shutil.rmtree(folder / SPILL, ignore_errors=True)  # a killed import leaves it
    child = forkserver.start(code, *args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # lsqa imported
    deadline = time.monotonic() + 60
    while not _spilling(folder) and child.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    time.sleep(delay)
    landed = child.poll() is None
    if landed:
        child.send_signal(signal.SIGKILL)
    child.wait(timeout=60)
    return landed, child.returncode, child.stderr.read().decode()[-2000:]


def _whole_or_nothing(folder: Path, code: str, args: tuple, delays: tuple[float, ...], ws: Path, table: str,
                      n: int) -> bool:
    """Kill the import ``code`` (with ``args``) at each of ``delays`` after it began, until one finishes or
    commits: the workspace must be as it was, or hold the whole import (``n`` rows of ``table``), never a
    part; at least two kills must land. Returns whether a killed import had committed."""
    before = snapshot(ws)
    landed = []
    for delay in delays:
        killed, returncode, stderr = _import_killed(folder, code, *args, delay=delay)
        if killed:
            landed.append(delay)
        if returncode == 0:
            break
        assert returncode == -signal.SIGKILL, stderr
        if snapshot(ws) != before:
            with store.connect(ws) as con:  # killed after the commit: the whole import
                assert con.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == n, \
                    f"a kill {delay} s into the import left part of it"
            break
    assert len(landed) >= 2, f"kills landed only after {landed} s"
    return snapshot(ws) != before


def test_kill_9_during_an_import_leaves_the_workspace_as_it_was(tmp_path):
    ws = tmp_path / "ws.duckdb"
    made = build(ws, 200_000, verdicts=False)
    first, rest = tmp_path / "first.csv", tmp_path / "rest.csv"
    with duckdb.connect() as con:
        verdict_file(con, first, 0, 10)
        n = verdict_file(con, rest, 10, made["questions"] - 10)
    import_judgments(ws, first)  # the workspace has verdicts (and kept queue signals) before
    before = snapshot(ws)
    landed = []
    for delay in (0.0, 0.3, 0.8, 1.5, 2.5):
        killed, code, stderr = _import_killed(tmp_path, IMPORT, ws, rest, delay=delay)
        if killed:
            landed.append(delay)
        if code == 0:
            break  # the import finished before the kill: later delays cannot land either
        assert code == -signal.SIGKILL, stderr
        if snapshot(ws) != before:
            # Killed after the commit, during the audit queue's catch-up: then the whole import is there
            # (never a part of it), its marks left for the next catch-up; later delays cannot land earlier.
            with store.connect(ws) as con:
                assert con.execute("SELECT count(*) FROM judgments").fetchone()[0] == n + 10 * 45, \
                    f"a kill {delay} s into the import left part of it"
            break
    assert len(landed) >= 2, f"kills landed only after {landed} s"
    committed = snapshot(ws) != before
    summary = import_judgments(ws, rest)  # its write's catch-up also takes marks a killed one left
    assert summary.added == {"judgments": 0 if committed else n}
    with store.connect(ws) as con:
        assert con.execute("SELECT count(*) FROM judgments").fetchone()[0] == n + 10 * 45
        assert con.execute("SELECT count(*) FROM queue_dirty").fetchone()[0] == 0


def test_an_import_out_of_memory_says_so_and_writes_nothing(tmp_path):
    """Out of the import's memory, wherever it happens (DuckDB's OutOfMemoryException while staging; a
    refused commit, worded 'could not allocate', 'failed to allocate' or 'failed to pin' depending on
    what ran out, sometimes invalidating the process's database): one clear error naming the knob, exit
    code 2, no traceback, the workspace as it was. A sweep of small limits, because where 400k verdicts
    stop fitting moves with DuckDB's accounting (200k: 37-39 MB each failed differently on 2026-12-03,
    and 38 MB came out as a raw traceback before; since migration 0021's smaller index 200k fit in 32 MB,
    the least one may set, and 400k failed at 32-41 MB, fitted at 42): each either imports every verdict
    or fails that way, and the smallest fails. The same file imported with the default limit afterwards
    adds every verdict."""
    base = tmp_path / "base.duckdb"
    made = build(base, 400_000, verdicts=False)
    rows = tmp_path / "all.csv"
    with duckdb.connect() as con:
        n = verdict_file(con, rows, 0, made["questions"])
    before = snapshot(base)
    failed = []
    for memory_mb in ("32", "38", "40", "41", "42", "44"):
        ws = tmp_path / f"ws-{memory_mb}.duckdb"
        shutil.copy(base, ws)
        done = forkserver.run(None, "import-judgments", rows, "-w", ws, module="lsqa.cli", capture_output=True,
                              text=True, timeout=300, env={**os.environ, MEMORY_ENV: memory_mb})
        assert "Traceback" not in done.stderr, (memory_mb, done.stderr[-2000:])
        # DuckDB's owner file kept the spill folder to the end of the process: it must go with the process.
        assert not (tmp_path / SPILL).exists(), (memory_mb, sorted(p.name for p in (tmp_path / SPILL).iterdir()))
        if done.returncode == 0:
            assert f"added   {n:,} judgments" in done.stdout, (memory_mb, done.stdout)
            continue
        assert done.returncode == 2, (memory_mb, done.stderr[-2000:])
        assert f"needed more memory than the {memory_mb} MB it may use" in done.stderr
        assert f"{MEMORY_ENV}=<MB>" in done.stderr and "nothing was written" in done.stderr
        assert snapshot(ws) == before, memory_mb
        failed.append(memory_mb)
    assert failed and failed[0] == "32", failed
    assert import_judgments(tmp_path / f"ws-{failed[-1]}.duckdb", rows).added == {"judgments": n}


ANSWERS = "import sys; from lsqa.study.imports import import_answers; import_answers(sys.argv[1], sys.argv[2])"


def test_kill_9_during_an_answers_import_leaves_the_workspace_as_it_was(tmp_path):
    """``lsqa import-answers`` in SQL (issue 35): 200,000 quoted answers, killed at several moments
    after the import began; the workspace as it was or with the whole import, never a part."""
    from bench.bench_store_scale import answer_file
    from bench.scale_workspace import N_SYSTEMS, PAIRS_PER_QUESTION

    ws = tmp_path / "ws.duckdb"
    made = build(ws, 20_000 * PAIRS_PER_QUESTION, verdicts=False)
    source = tmp_path / "answers.csv"
    with duckdb.connect() as con:
        n = answer_file(con, source, made["questions"])
    committed = _whole_or_nothing(tmp_path, ANSWERS, (ws, source), (0.0, 0.3, 0.8, 1.5), ws, "answers", n)
    from lsqa.study.imports import import_answers

    summary = import_answers(ws, source)
    assert summary.added == {"systems": 0 if committed else N_SYSTEMS, "answers": 0 if committed else n}
    with store.connect(ws) as con:
        assert con.execute("SELECT count(*) FROM answers").fetchone()[0] == n


NARRATIVEQA = ("import sys; from lsqa.corpus.ingest import ingest_narrativeqa; "
               "ingest_narrativeqa(sys.argv[1], sys.argv[2])")


def test_kill_9_during_ingest_narrativeqa_leaves_the_workspace_as_it_was(tmp_path):
    """``lsqa ingest-narrativeqa`` reads its question files in SQL (issue 35): 53,400 questions (the
    slice's 89, 600 times with other ``q_index``), killed at several moments after the ingest began
    (its spill folder appears when the questions are staged); the workspace as it was or with the
    whole ingest, never a part of it; the same ingest again adds what is missing."""
    import json

    from lsqa.corpus.ingest import ingest_narrativeqa
    from tests.conftest import TEST_DATA

    slice_dir, dataset = TEST_DATA / "narrativeqa_slice", tmp_path / "nqa"
    dataset.mkdir()
    shutil.copy(slice_dir / "documents.csv", dataset / "documents.csv")
    rows = [json.loads(line) for line in (slice_dir / "nqa_test_slice_qaps.jsonl").open(encoding="utf-8")]
    with (dataset / "many_qaps.jsonl").open("w", encoding="utf-8") as f:
        for k in range(600):
            f.writelines(json.dumps({**r, "q_index": r["q_index"] + 1000 * k}) + "\n" for r in rows)
    n = len(rows) * 600
    ws = tmp_path / "ws.duckdb"
    with store.connect(ws):
        pass
    committed = _whole_or_nothing(tmp_path, NARRATIVEQA, (ws, dataset), (0.0, 0.15, 0.4, 0.8, 1.5), ws,
                                  "questions", n)
    summary = ingest_narrativeqa(ws, dataset)
    assert summary.added["questions"] == (0 if committed else n)
    with store.connect(ws) as con:
        assert con.execute("SELECT count(*) FROM questions").fetchone()[0] == n


REVIEWS = "import sys; from lsqa.audit.review_import import import_reviews; import_reviews(sys.argv[1], sys.argv[2])"


def test_kill_9_during_a_reviews_import_leaves_reviews_and_their_draws_whole_or_absent(tmp_path):
    """``lsqa import-reviews`` in SQL with an inclusion probability on every row: each review draws its
    verdict (``audit_draws``, migration 0023) in the review's transaction. Killed at several moments after
    the import began, the workspace holds neither the reviews nor the draws, or all of both."""
    ws = tmp_path / "ws.duckdb"
    made = build(ws, 250_000)
    source = tmp_path / "reviews.csv"
    with store.connect(ws) as con:
        n = con.execute("SELECT count(*) FROM judgments WHERE status = 'ok' AND shown_order = 'ab'").fetchone()[0]
        con.execute(f"""COPY (SELECT judge, question_id, system_a, system_b, label, 'ext' AS annotator,
                                     0.05 AS inclusion_probability
                              FROM judgments WHERE status = 'ok' AND shown_order = 'ab' ORDER BY id)
                        TO '{source}' (HEADER)""")
    assert made["verdicts"] >= n > 100_000
    committed = _whole_or_nothing(tmp_path, REVIEWS, (ws, source), (0.0, 0.3, 0.8, 1.5), ws, "human_reviews", n)
    with store.connect(ws) as con:
        counts = con.execute("SELECT (SELECT count(*) FROM human_reviews), (SELECT count(*) FROM audit_draws)"
                             ).fetchone()
    assert counts == ((n, n) if committed else (0, 0))
    from lsqa.audit.review_import import import_reviews

    summary = import_reviews(ws, source)
    assert summary.added == {"reviews": 0 if committed else n}
    with store.connect(ws) as con:
        assert con.execute("SELECT count(*), count(DISTINCT judgment_id), min(inclusion_prob), max(inclusion_prob)"
                           " FROM audit_draws").fetchone() == (n, n, 0.05, 0.05)
        assert con.execute("SELECT count(*) FROM human_reviews h JOIN audit_draws d ON d.review_id = h.id"
                           " AND d.judgment_id = h.judgment_id").fetchone()[0] == n
