"""Benchmark of workspace connections: lsqa's attach-to-a-live-host connections against opening
a new DuckDB instance per unit of work (what ``duckdb.connect(path)`` does once the last
connection to a file has closed).

Both sides do the same work, in one run, on the same file: open, run one statement, close. Then
the LLM writer's unit of work: open, upsert 36 ``llm_calls`` rows in a transaction, close.
The workspace is filled with ``--rows`` stored calls first, so that opening it has a catalog and
data to read.

    .venv/bin/python bench/bench_store.py [--repeat 200] [--rows 20000]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import duckdb  # noqa: E402

from lsqa.store import connect, llm_calls, transaction  # noqa: E402


def call_rows(prefix: str, n: int) -> list[dict]:
    return [
        {
            "cache_key": f"{prefix}-{i}", "model": "openai/gpt-4o-mini", "prompt_id": "bench", "prompt_version": "1",
            "messages": json.dumps([{"role": "user", "content": f"Who carries the candlesticks in chapter {i % 97}?"}]),
            "params": '{"max_tokens": 32}', "response": "Jean Valjean carries them.", "status": "ok",
            "error_kind": "", "error_message": "", "prompt_tokens": 12, "completion_tokens": 5, "cost_usd": 1e-5,
            "latency_s": 0.1, "run_id": None, "attempts": 1,
        }
        for i in range(n)
    ]


def timed(fn, repeat: int) -> tuple[float, float]:
    """(wall ms, CPU ms) per repetition."""
    wall, cpu = time.perf_counter(), time.process_time()
    for i in range(repeat):
        fn(i)
    return (time.perf_counter() - wall) / repeat * 1000, (time.process_time() - cpu) / repeat * 1000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument("--rows", type=int, default=20000)
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.duckdb"
        with connect(path) as con, transaction(con):
            llm_calls.save_calls(con, call_rows("seed", args.rows))

        def lsqa_read(i: int) -> None:
            with connect(path) as con:
                con.execute("SELECT count(*) FROM llm_calls").fetchone()

        def new_instance_read(i: int) -> None:
            con = duckdb.connect(str(path))
            try:
                con.execute("SELECT count(*) FROM llm_calls").fetchone()
            finally:
                con.close()

        def lsqa_write(i: int) -> None:
            with connect(path) as con, transaction(con):
                llm_calls.save_calls(con, call_rows(f"lsqa{i}", 36))

        def new_instance_write(i: int) -> None:
            con = duckdb.connect(str(path))
            try:
                with transaction(con):
                    llm_calls.save_calls(con, call_rows(f"new{i}", 36))
            finally:
                con.close()

        print(f"workspace with {args.rows:,} stored calls; {args.repeat} repetitions of each; per unit of work:")
        for label, ours, theirs in (("open, one SELECT, close", lsqa_read, new_instance_read),
                                    ("open, upsert 36 calls, commit, close", lsqa_write, new_instance_write)):
            timed(ours, 5), timed(theirs, 5)  # warm both
            w_new, c_new = timed(theirs, args.repeat)
            w_ours, c_ours = timed(ours, args.repeat)
            print(f"  {label:38s} new instance {w_new:6.2f} ms wall {c_new:6.2f} ms CPU | "
                  f"lsqa attach {w_ours:6.2f} ms wall {c_ours:6.2f} ms CPU | {w_new / w_ours:4.1f}x faster")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
