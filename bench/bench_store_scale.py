"""Benchmark (issue 35): `lsqa import-judgments` at 10k, 100k and 1M side-by-side verdicts (5M with
``--five-million``), each beside a plain DuckDB ``read_csv`` of the same file into a table, in the same run.

Run:  .venv/bin/python bench/bench_store_scale.py                        (about 2 minutes on 2 cores)
      .venv/bin/python bench/bench_store_scale.py --sizes 10000,100000    (quicker)
      .venv/bin/python bench/bench_store_scale.py --sizes 1000000 --five-million

The workspace (``bench/scale_workspace.py``, written in SQL) holds the questions and systems; the file
holds the verdicts of its ``plain`` workspace as CSV (question_id, rater, kind, system_a, system_b,
shown_order, label: ~51 bytes a verdict). 5M verdicts are five files of 1M (one file of 5M would be
above the 256 MiB limit of one table), imported one after the other into one workspace.

Each measurement runs in a child process of its own; wall time is the work itself (after the
child's Python imports), peak memory the child's ``VmHWM`` (resident high-water mark, not
``ru_maxrss``: Linux carries a parent's high-water mark into a child).

- *lsqa*: ``lsqa.study.imports.import_judgments`` (what ``lsqa import-judgments`` calls), the write, its
  commit and the audit queue's catch-up included; the workspace closed (checkpointed) after.
- *read_csv*: ``CREATE TABLE t AS SELECT * FROM read_csv(file)`` into a new DuckDB file, closed after.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

for _name, _value in (("HF_HUB_OFFLINE", "1"), ("TRANSFORMERS_OFFLINE", "1"), ("LITELLM_LOCAL_MODEL_COST_MAP", "True")):
    os.environ.setdefault(_name, _value)

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.scale_workspace import PAIRS_PER_QUESTION, build, verdict_file  # noqa: E402

# The bar: the import within 8x of read_csv, under 1 GiB.
MAX_RATIO, MAX_PEAK_MIB = 8.0, 1024

_PEAK = """
hwm = [int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:")]
print(f"BENCH {elapsed:.3f} {hwm[0] / 1024:.0f}", file=sys.stderr)
"""

LSQA = """
import sys, time
from lsqa.study.imports import import_judgments
t0 = time.perf_counter()
for path in sys.argv[2:]:
    summary = import_judgments(sys.argv[1], path)
    assert not summary.skipped.get("judgments"), summary
elapsed = time.perf_counter() - t0
""" + _PEAK

READ_CSV = """
import sys, time
import duckdb
t0 = time.perf_counter()
con = duckdb.connect(sys.argv[1])
for k, path in enumerate(sys.argv[2:]):
    con.execute(f"CREATE TABLE t{k} AS SELECT * FROM read_csv('{path}')")
con.close()
elapsed = time.perf_counter() - t0
""" + _PEAK


def child(code: str, *args) -> tuple[float, float]:
    done = subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True,
                          cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    if done.returncode:
        raise SystemExit(done.stderr[-3000:])
    line = [x for x in done.stderr.splitlines() if x.startswith("BENCH ")][-1].split()
    return float(line[1]), float(line[2])


def measure(folder: Path, n_verdicts: int, files: int = 1) -> dict:
    """Build the questions, write the verdicts as ``files`` CSV files, time both readers."""
    import duckdb

    ws, base = folder / f"ws-{n_verdicts}.duckdb", folder / f"base-{n_verdicts}.duckdb"
    for p in (ws, base):
        p.unlink(missing_ok=True)
    made = build(base, n_verdicts, verdicts=False)
    per_file = made["questions"] // files
    paths = []
    with duckdb.connect() as con:
        for k in range(files):
            count = per_file if k < files - 1 else made["questions"] - per_file * (files - 1)
            path = folder / f"verdicts-{n_verdicts}-{k}.csv"
            verdict_file(con, path, k * per_file, count)
            paths.append(path)
    shutil.copy(base, ws)
    t_lsqa, m_lsqa = child(LSQA, ws, *paths)
    target = folder / f"read-csv-{n_verdicts}.duckdb"
    target.unlink(missing_ok=True)
    t_csv, m_csv = child(READ_CSV, target, *paths)
    size = sum(p.stat().st_size for p in paths)
    for p in (*paths, target, ws, base):
        p.unlink(missing_ok=True)
    return {"verdicts": made["questions"] * PAIRS_PER_QUESTION, "files": files, "mib": size / 2**20,
            "lsqa": t_lsqa, "lsqa_mib": m_lsqa, "read_csv": t_csv, "read_csv_mib": m_csv}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000,1000000", help="verdicts per file, comma-separated")
    parser.add_argument("--five-million", action="store_true", help="also 5M verdicts, as five files of 1M")
    parser.add_argument("--folder", type=Path, default=None, help="where to build (default: a temporary folder)")
    args = parser.parse_args(argv)
    folder = args.folder or Path(tempfile.mkdtemp(prefix="lsqa-store-scale-"))
    folder.mkdir(parents=True, exist_ok=True)
    runs = [(int(s), 1) for s in args.sizes.split(",")] + ([(5_000_000, 5)] if args.five_million else [])
    print(f"files in {folder}; {os.cpu_count()} cores; load {os.getloadavg()[0]:.2f}")
    print(f"{'verdicts':>10} {'files':>5} {'MiB':>6} | {'lsqa s':>7} {'MiB':>6} | {'read_csv s':>10} {'MiB':>6}"
          f" | {'ratio':>6}  (bar: {MAX_RATIO:g}x, {MAX_PEAK_MIB} MiB)")
    try:
        for n, files in runs:
            t0 = time.perf_counter()
            r = measure(folder, n, files)
            ratio = r["lsqa"] / r["read_csv"]
            met = "met" if ratio <= MAX_RATIO and r["lsqa_mib"] < MAX_PEAK_MIB else "NOT met"
            print(f"{r['verdicts']:>10,} {files:>5} {r['mib']:>6.0f} | {r['lsqa']:>7.2f} {r['lsqa_mib']:>6.0f} | "
                  f"{r['read_csv']:>10.2f} {r['read_csv_mib']:>6.0f} | {ratio:>5.1f}x  {met}"
                  f"  ({time.perf_counter() - t0:.0f} s with the files made)", flush=True)
    finally:
        if args.folder is None:
            shutil.rmtree(folder, ignore_errors=True)
    print(f"load after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
