"""Benchmark (issue 35): `lsqa rank --workspace` and the Audit queue at 10k, 100k and 1M verdicts, each beside
how it was read before, in the same run.

Run:  .venv/bin/python bench/bench_queue_scale.py                       (about 4 minutes on 2 cores)
      .venv/bin/python bench/bench_queue_scale.py --sizes 10000,100000   (quicker)

The workspaces (``bench/scale_workspace.py``, written in SQL): 10 systems, one side-by-side judge on all
45 pairs of every question, labels from a Bradley-Terry model with ties and 'none', 0.5% parse errors.

1. ``lsqa rank --workspace --judge bench-sxs --json`` in a subprocess: wall time (imports included) and
   peak memory, with the default bootstrap (1,000 rounds over comparisons) and with
   ``--by-question``. *Before*: the same command with the verdicts read as one Python row each
   (``analysis.comparison_rows`` + ``rank_table``, how it read them before issue 35); *now*: counted in
   SQL (``analysis.comparison_counts``). The two JSON outputs must be identical. Peak memory is the
   child's ``VmHWM`` (its resident high-water mark), not ``ru_maxrss``: Linux carries a parent's
   high-water mark into a child across fork and exec, so a child of this bench, which holds a million
   verdicts itself, would report at least the bench's own peak (1,022 MiB for both at 1M).
2. The Audit queue's first page for annotator ``ana`` (not reviewed by me, her opened items left out)
   right after ``ben`` reviewed a verdict, in process: *before*, the page computed over every verdict
   (``audit_queue(..., full=True)``: the signals kept in memory under a fingerprint of the verdicts,
   as before); *now*, ``audit.queue`` as the Audit page calls it (kept signals). Median of 5 reviews.
   And *cold*: the first read of a process (its in-memory caches empty). The pages must be equal.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

for _name, _value in (("HF_HUB_OFFLINE", "1"), ("TRANSFORMERS_OFFLINE", "1"), ("LITELLM_LOCAL_MODEL_COST_MAP", "True"),
                      ("OPENBLAS_NUM_THREADS", "1"), ("OMP_NUM_THREADS", "1"), ("MKL_NUM_THREADS", "1")):
    os.environ.setdefault(_name, _value)

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.scale_workspace import build  # noqa: E402
from lsqa import audit, store  # noqa: E402
from lsqa.audit.double_annotation import read_overlap  # noqa: E402
from lsqa.store import audit_queue as queue_store  # noqa: E402
from lsqa.store import workspace_cache  # noqa: E402

JUDGE = "bench-sxs"
PAGE = audit.PAGE_SIZE + audit.HEAD_SLACK  # the rows the Audit page reads for its first page

# The command in a child process; "rows" reads the verdicts as it did before issue 35.
RANK = """
import resource, sys, time
t0 = time.perf_counter()
if sys.argv[2] == "rows":
    import lsqa.cli.stats as cli_stats
    from lsqa.cli.common import existing_workspace
    from lsqa.figures import analysis

    def row_by_row(input, workspace, judge, use_overrides, exclude_flagged, by_question):
        ws = existing_workspace(workspace)
        return ws, analysis.comparison_rows(ws, judge, use_overrides=use_overrides,
                                            exclude_flagged=exclude_flagged), None

    cli_stats._rank_rows = row_by_row
from lsqa.cli import app
sys.argv = ["lsqa", "rank", "--workspace", sys.argv[1], "--judge", "bench-sxs", "--json", *sys.argv[3:]]
try:
    app()
except SystemExit as exc:
    assert not exc.code, exc.code
hwm = [int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:")]
peak = hwm[0] if hwm else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(f"BENCH {time.perf_counter() - t0:.3f} {peak / 1024:.0f}", file=sys.stderr)
"""


def rank(ws: Path, how: str, *options: str) -> tuple[float, float, str]:
    done = subprocess.run([sys.executable, "-c", RANK, str(ws), how, *options], capture_output=True, text=True,
                          cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    if done.returncode:
        raise SystemExit(done.stderr[-3000:])
    line = [x for x in done.stderr.splitlines() if x.startswith("BENCH ")][-1].split()
    return float(line[1]), float(line[2]), done.stdout


def computed_page(ws: Path, annotator: str, exclude: list[str]) -> dict:
    """The first page as read before issue 35: every verdict's signals computed (kept in memory by a
    fingerprint of the verdicts), through the same store call the Audit page makes."""
    with store.connect(ws) as con:
        rows, total = queue_store.audit_queue(con, weights=audit.PRIORITY_WEIGHTS, annotator=annotator,
                                              reviewed="not_mine", exclude=exclude, overlap=read_overlap(con),
                                              limit=PAGE, full=True)
    return {"rows": rows, "total": total}


def kept_page(ws: Path, annotator: str, exclude: list[str]) -> dict:
    """The same page from the kept signals, as the Audit page reads it (``audit.queue``), before rounding."""
    with store.connect(ws) as con:
        rows, total = queue_store.audit_queue(con, weights=audit.PRIORITY_WEIGHTS, annotator=annotator,
                                              reviewed="not_mine", exclude=exclude, overlap=read_overlap(con),
                                              limit=PAGE)
    return {"rows": rows, "total": total}


def timed(fn, *args, **kwargs):
    t0 = time.perf_counter()
    out = fn(*args, **kwargs)
    return time.perf_counter() - t0, out


def queue_after_reviews(ws: Path, reviews: int = 5) -> dict:
    """ana's first page right after each of ``reviews`` reviews by ben: before and now, both in process."""
    opened = [r["id"] for r in audit.queue(ws, audit.Filters(), "ana", page_size=3)["rows"]]
    workspace_cache.clear()
    queue_store._KEPT_SIGNALS.clear()
    cold_before, before = timed(computed_page, ws, "ana", opened)
    workspace_cache.clear()
    cold_now, now = timed(audit.queue, ws, audit.Filters(), "ana", exclude=opened)
    assert [r["id"] for r in now["rows"]] == [r["id"] for r in before["rows"][:audit.PAGE_SIZE]]
    times_before, times_now, times_store = [], [], []
    for _ in range(reviews):
        # A verdict on ana's page that she has not opened: her kept page cannot outlive the review.
        target = audit.queue(ws, audit.Filters(), "ana", exclude=opened)["rows"][5]
        if target["label"] is None:
            audit.review(ws, "ben", target["id"], "A")
        else:
            audit.confirm(ws, "ben", target["id"])
        t_now, now = timed(audit.queue, ws, audit.Filters(), "ana", exclude=opened)  # the Audit page's read
        t_store, kept = timed(kept_page, ws, "ana", opened)
        t_before, before = timed(computed_page, ws, "ana", opened)
        assert kept == before, "the kept page differs from the computed one"
        assert [r["id"] for r in now["rows"]] == [r["id"] for r in before["rows"][:audit.PAGE_SIZE]]
        assert now["total"] == before["total"]
        times_now.append(t_now)
        times_store.append(t_store)
        times_before.append(t_before)
    return {"before": statistics.median(times_before), "now": statistics.median(times_now),
            "store": statistics.median(times_store), "cold_before": cold_before, "cold_now": cold_now}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000,1000000", help="verdicts per workspace, comma-separated")
    parser.add_argument("--folder", type=Path, default=None, help="where to build (default: a temporary folder)")
    args = parser.parse_args(argv)
    folder = args.folder or Path(tempfile.mkdtemp(prefix="lsqa-queue-scale-"))
    folder.mkdir(parents=True, exist_ok=True)
    print(f"workspaces in {folder}; {os.cpu_count()} cores")
    try:
        for size in (int(s) for s in args.sizes.split(",")):
            ws = folder / f"ws-{size}.duckdb"
            if ws.exists():
                ws.unlink()
            t_build, made = timed(build, ws, size)
            print(f"\n{made['verdicts']:,} verdicts ({made['questions']:,} questions × 45 pairs), built in "
                  f"{t_build:.1f} s, {ws.stat().st_size / 2**20:.0f} MiB")
            for options in ((), ("--by-question",)):
                t_rows, m_rows, out_rows = rank(ws, "rows", *options)
                t_sql, m_sql, out_sql = rank(ws, "sql", *options)
                same = "identical" if json.loads(out_rows) == json.loads(out_sql) else "DIFFERENT"
                what = "rank --workspace" + (" --by-question" if options else "")
                print(f"  {what:32} before {t_rows:6.2f} s {m_rows:6.0f} MiB | now {t_sql:6.2f} s {m_sql:6.0f} MiB"
                      f" | JSON {same}")
                if same != "identical":
                    return 1
            q = queue_after_reviews(ws)
            print(f"  {'queue page after a review':32} before {q['before'] * 1000:7.1f} ms | now {q['now'] * 1000:6.1f} ms"
                  f" (store read {q['store'] * 1000:.1f} ms) | pages equal")
            print(f"  {'queue page, cold':32} before {q['cold_before'] * 1000:7.1f} ms | now {q['cold_now'] * 1000:6.1f} ms")
    finally:
        if args.folder is None:
            shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
