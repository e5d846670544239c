"""Benchmark: the CPU of one catch-up of the audit queue's kept signals (``lsqa.store.queue_signals.catch_up``)
after a write that marked a few questions, on generated workspaces (``bench/scale_workspace.build(...,
rich=True, seed=7)``, as tests/audit/test_queue_signals.py builds them).

Run:  PYTHONPATH=/work/main .venv/bin/python bench/bench_catch_up.py      (the code on PYTHONPATH is measured)
      .venv/bin/python bench/bench_catch_up.py --sizes 1000,40000 --marked 0,1,5,50 --rounds 30

Per size and number of marked questions (the first questions in id order, at most as many as there are;
0: a write that marked none, the catch-up's look alone):
``--rounds`` times, ``queue_signals.mark`` of those questions then ``catch_up`` on one connection, after
three warm-up rounds; CPU is the process's (``time.process_time``: every DuckDB thread included), wall
beside it. Printed: median and mean CPU ms of the catch-up alone. At the end the kept rows are compared
with the rows computed afresh (``rows_sql('true')``): the bench fails if they differ.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

for _name, _value in (("HF_HUB_OFFLINE", "1"), ("TRANSFORMERS_OFFLINE", "1"), ("LITELLM_LOCAL_MODEL_COST_MAP", "True"),
                      ("OPENBLAS_NUM_THREADS", "1"), ("OMP_NUM_THREADS", "1"), ("MKL_NUM_THREADS", "1")):
    os.environ.setdefault(_name, _value)

# PYTHONPATH first (to measure another checkout's lsqa), this checkout after it.
sys.path.append(str(Path(__file__).resolve().parents[1]))

import lsqa  # noqa: E402
from bench.scale_workspace import build  # noqa: E402
from lsqa import store  # noqa: E402
from lsqa.store import queue_signals  # noqa: E402


def measure(ws: Path, marked: int, rounds: int) -> tuple[int, list[float], list[float]]:
    key = str(ws.resolve())
    with store.connect(ws) as con:
        questions = [q for q, in con.execute(
            f"SELECT DISTINCT question_id FROM judgments ORDER BY 1 LIMIT {marked}").fetchall()]
        cpu, wall = [], []
        for n in range(rounds + 3):
            queue_signals.mark(con, questions)
            c0, w0 = time.process_time(), time.perf_counter()
            done = queue_signals.catch_up(con, key)
            c1, w1 = time.process_time(), time.perf_counter()
            assert done == ("questions" if questions else ""), done
            if n >= 3:
                cpu.append(1000 * (c1 - c0))
                wall.append(1000 * (w1 - w0))
        kept = con.execute("SELECT * FROM queue_signals ORDER BY id").fetchall()
        fresh = con.execute(f"SELECT * FROM ({queue_signals.rows_sql('true')}) ORDER BY id").fetchall()
        assert kept == fresh, "kept rows differ from the rows computed afresh"
    return len(questions), cpu, wall


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1000,40000")
    ap.add_argument("--marked", default="0,1,5,50")
    ap.add_argument("--rounds", type=int, default=30)
    args = ap.parse_args()
    print(f"lsqa from {Path(lsqa.__file__).parent}")
    with tempfile.TemporaryDirectory() as tmp:
        for size in (int(s) for s in args.sizes.split(",")):
            ws = Path(tmp) / f"ws{size}.duckdb"
            counts = build(ws, size, rich=True, seed=7)
            for marked in (int(m) for m in args.marked.split(",")):
                n, cpu, wall = measure(ws, marked, args.rounds)
                print(f"{counts['verdicts']:>8} verdicts, {n:>3} marked questions: catch-up CPU median"
                      f" {statistics.median(cpu):6.2f} ms, mean {statistics.fmean(cpu):6.2f} ms;"
                      f" wall median {statistics.median(wall):6.2f} ms", flush=True)


if __name__ == "__main__":
    main()
