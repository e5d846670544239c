"""Benchmark: the CPU of one read of the audit queue (``lsqa.store.audit_queue.audit_queue``), kept signals
and computed (``full=True``), on generated workspaces (``bench/scale_workspace.build(..., rich=True,
seed=7)``, as tests/audit/test_queue_signals.py builds them) with a few reviews, a flag and an
assignment in them.

Run:  PYTHONPATH=/work/main .venv/bin/python bench/bench_queue_read.py      (the code on PYTHONPATH is measured)
      .venv/bin/python bench/bench_queue_read.py --sizes 1000,4000 --rounds 5

Per size: the read cases below (the Audit page's filters and modes, as the test reads them), each read
``--rounds`` times on one connection after one warm-up round; CPU is the process's (``time.process_time``:
every DuckDB thread included), wall beside it. Printed: mean CPU ms per read, kept and full, and the
``review_columns`` read of 7 rows that brings a kept page up to date after another person's review.
``--threads N``: ``SET threads = N`` on the connection first (default: DuckDB's own). ``--cold``: the
kept read as right after a write (a catch-up makes a new state of the kept signals, so the counts per
priority and the heads kept for the last state do not serve): those kept in this process are dropped
before each read. ``--test-cases``: the read cases of tests/audit/test_queue_signals.py instead (25, with a
read of the whole queue and a page past the end).
"""

from __future__ import annotations

import argparse
import os
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
from lsqa import audit, store  # noqa: E402
from lsqa.store import audit_queue as queue_store  # noqa: E402

W = audit.PRIORITY_WEIGHTS


def _people(ws: Path) -> None:
    """A few reviews by two people, a confirm, a skip, a flag and an assignment: what makes verdicts special."""
    ids = [r["id"] for r in audit.queue(ws, audit.Filters(reviewed="all"), "ana", page_size=30)["rows"]]
    with store.connect(ws) as con:
        rows = {r[0]: r[1:] for r in con.execute(
            "SELECT id, kind, label, question_id FROM judgments WHERE id IN (SELECT unnest(?))", [ids]).fetchall()}
    for n, jid in enumerate(ids[:12]):
        kind, label, _ = rows[jid]
        who = "ana" if n % 2 else "ben"
        if label is None or n % 3 == 0:
            audit.review(ws, who, jid, "B" if "pair" in kind else "no")
        else:
            audit.confirm(ws, who, jid)
    audit.skip(ws, "ana", ids[12], "unsure")
    audit.flag(ws, "ana", rows[ids[20]][2], "1", "wrong")
    with store.connect(ws) as con:
        judge = con.execute("SELECT min(judge) FROM judgments").fetchone()[0]
    audit.assign(ws, judge, "ana,ben", by="", per_item=1, count=8)


def _cases(con) -> list[dict]:
    judges = [r[0] for r in con.execute("SELECT DISTINCT judge FROM judgments ORDER BY 1").fetchall()]
    systems = [r[0] for r in con.execute("SELECT DISTINCT system_a FROM judgments ORDER BY 1").fetchall()]
    opened = [r[0] for r in con.execute("SELECT id FROM judgments ORDER BY hash(id) LIMIT 12").fetchall()]
    cases = [dict(annotator="ana", reviewed=m, limit=150) for m in audit.REVIEWED_FILTERS]
    cases += [dict(annotator="ana", reviewed="assigned", limit=150),
              dict(annotator="ana", reviewed="not_mine", exclude=opened, limit=150),
              dict(annotator="ben", reviewed="not_mine", overlap=0.4, limit=150),
              dict(annotator="ana", reviewed="all", reviewed_by=["ben"]),
              dict(annotator="ana", judges=judges[:2], reviewed="not_mine", limit=40, offset=40),
              dict(annotator="ben", systems=systems[1:3], labels=["A", "yes", "tie"], reviewed="unreviewed"),
              dict(statuses=["parse_error", "error"], reviewed="all"),
              dict(annotator="ana", reviewed="not_mine", search=audit.search_terms("the"), limit=60)]
    return cases


def _measure(fn, rounds: int) -> tuple[float, float]:
    """(CPU ms, wall ms) per call of ``fn`` over ``rounds`` calls, after one."""
    fn()
    c0, w0 = time.process_time(), time.perf_counter()
    for _ in range(rounds):
        fn()
    return (time.process_time() - c0) * 1000 / rounds, (time.perf_counter() - w0) * 1000 / rounds


def _read(con, case: dict, full: bool, cold: bool):
    if cold:
        queue_store._PRIORITIES.clear()
        queue_store._TOPS.clear()
    return queue_store.audit_queue(con, weights=W, full=full, **case)


def bench(size: int, rounds: int, threads: int | None, folder: Path, cold: bool = False,
          test_cases: bool = False) -> dict:
    ws = folder / f"generated-{size}.duckdb"
    n = build(ws, size, rich=True, seed=7)["verdicts"]
    _people(ws)
    out = {"size": size, "verdicts": n}
    with store.connect(ws) as con:
        if threads:
            con.execute(f"SET threads = {int(threads)}")
        if test_cases:
            from tests.audit.test_queue_signals import _cases as the_tests_cases
            cases = the_tests_cases(con)
        else:
            cases = _cases(con)
        for full in (False, True):
            cpu = wall = 0.0
            for case in cases:
                c, w = _measure(lambda case=case, full=full: _read(con, case, full, cold), rounds)
                cpu, wall = cpu + c, wall + w
            out["full" if full else "kept"] = (cpu / len(cases), wall / len(cases))
        rows, _ = queue_store.audit_queue(con, weights=W, annotator="ana", reviewed="not_mine", limit=7)
        out["review_columns"] = _measure(lambda: queue_store.review_columns(
            con, rows, annotator="ana", reviewed="not_mine", exclude=[rows[0]["id"]]), rounds * 5)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,4000,40000")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--cold", action="store_true")
    parser.add_argument("--test-cases", action="store_true")
    args = parser.parse_args()
    print(f"lsqa from {Path(lsqa.__file__).parent}; rounds {args.rounds}; threads {args.threads or 'default'}"
          f"{'; cold' if args.cold else ''}{'; the test file cases' if args.test_cases else ''}")
    print(f"{'verdicts':>9} {'kept CPU ms':>12} {'(wall)':>8} {'full CPU ms':>12} {'(wall)':>8}"
          f" {'review_columns':>15} {'(wall)':>8}")
    with tempfile.TemporaryDirectory() as tmp:
        for size in (int(s) for s in args.sizes.split(",")):
            r = bench(size, args.rounds, args.threads, Path(tmp), args.cold, args.test_cases)
            print(f"{r['verdicts']:>9,} {r['kept'][0]:>12.1f} {r['kept'][1]:>8.1f} {r['full'][0]:>12.1f}"
                  f" {r['full'][1]:>8.1f} {r['review_columns'][0]:>15.2f} {r['review_columns'][1]:>8.2f}", flush=True)


if __name__ == "__main__":
    main()
