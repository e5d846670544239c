"""Benchmark (issue 35): `lsqa ingest-narrativeqa`'s question files at NarrativeQA's whole size, in SQL
and row by row, beside DuckDB's own reader of the same file in the same run.

Run:  .venv/bin/python bench/bench_narrativeqa_questions.py            (about half a minute)
      .venv/bin/python bench/bench_narrativeqa_questions.py --copies 4 (a quarter of the size)

The file: the 2,910 NarrativeQA test questions of ``$LSQA_DATA_DIR/narrativeqa`` (or ``../shared/data``)
``--copies`` times (16: 46,560 questions; NarrativeQA has 46,765 in all), each copy with other
``q_index``, as the published JSONL copy writes them (``q_index`` a number, the title and kind on every
line) and as ``qaps.csv`` is published (no ``q_index``: each document's questions counted in order,
with the tokenised columns). The folder holds the data's ``documents.csv`` and no stories, so the
time is the questions' (and the 98 documents' rows).

Each measurement runs in a child process of its own (``bench_store_scale.child``): wall time of the
work after the child's imports, peak memory the child's ``VmHWM``.

- *sql*: ``ingest_narrativeqa`` as the command calls it, into a new workspace (made before the clock).
- *rows*: the same with ``questions_in_sql=False``: the row reader the SQL replaces.
- *duckdb*: ``CREATE TABLE t AS SELECT * FROM read_json(file)`` / ``read_csv(file)`` into a new file.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.bench_store_scale import _PEAK, child  # noqa: E402

DATA = Path(os.environ.get("LSQA_DATA_DIR") or ROOT.parent / "shared" / "data") / "narrativeqa"

INGEST = """
import sys, time
from lsqa import store
from lsqa.corpus.ingest import ingest_narrativeqa
with store.connect(sys.argv[1]):
    pass
t0 = time.perf_counter()
summary = ingest_narrativeqa(sys.argv[1], sys.argv[2], questions_in_sql=IN_SQL)
assert summary.added["questions"] == int(sys.argv[3]), summary
elapsed = time.perf_counter() - t0
""" + _PEAK

DUCKDB = """
import sys, time
import duckdb
t0 = time.perf_counter()
con = duckdb.connect(sys.argv[1])
con.execute(f"CREATE TABLE t AS SELECT * FROM {sys.argv[3]}('{sys.argv[2]}')")
con.close()
elapsed = time.perf_counter() - t0
""" + _PEAK


def question_folders(folder: Path, copies: int) -> dict[str, tuple[Path, Path, int]]:
    """{format: (dataset folder, its question file, questions)}: the test questions ``copies`` times."""
    rows = [json.loads(line) for line in (DATA / "nqa_test_first3000_qaps.jsonl").open(encoding="utf-8")]
    made = {}
    for fmt, name in (("jsonl", "nqa_qaps.jsonl"), ("csv", "qaps.csv")):
        dataset = folder / fmt
        dataset.mkdir(parents=True, exist_ok=True)
        shutil.copy(DATA / "documents.csv", dataset / "documents.csv")
        path = dataset / name
        with path.open("w", encoding="utf-8", newline="") as f:
            if fmt == "jsonl":
                for k in range(copies):
                    f.writelines(json.dumps({**r, "q_index": r["q_index"] + 1000 * k}) + "\n" for r in rows)
            else:
                writer = csv.writer(f)
                writer.writerow(["document_id", "set", "question", "answer1", "answer2", "question_tokenized",
                                 "answer1_tokenized", "answer2_tokenized"])
                for _ in range(copies):
                    writer.writerows([r["document_id"], r["set"], r["question"], r["answer1"], r["answer2"],
                                      r["question"].lower(), r["answer1"].lower(), r["answer2"].lower()]
                                     for r in rows)
        made[fmt] = (dataset, path, len(rows) * copies)
    return made


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--copies", type=int, default=16, help="copies of the 2,910 test questions")
    args = parser.parse_args(argv)
    folder = Path(tempfile.mkdtemp(prefix="lsqa-nqa-bench-"))
    print(f"ingest-narrativeqa questions; {os.cpu_count()} cores; load {os.getloadavg()[0]:.2f}")
    print(f"{'format':>6} {'questions':>9} {'MiB':>5} | {'sql s':>6} {'MiB':>5} | {'rows s':>6} {'MiB':>5} | "
          f"{'duckdb s':>8} {'MiB':>5} | {'sql/duckdb':>10} {'rows/sql':>8}")
    try:
        for fmt, (dataset, path, n) in question_folders(folder, args.copies).items():
            times = {}
            for name, in_sql in (("sql", True), ("rows", False)):
                ws = folder / f"{fmt}-{name}.duckdb"
                times[name] = child(INGEST.replace("IN_SQL", str(in_sql)), ws, dataset, n)
            reader = "read_json" if fmt == "jsonl" else "read_csv"
            times["duckdb"] = child(DUCKDB, folder / f"{fmt}-duckdb.duckdb", path, reader)
            (sql_s, sql_m), (rows_s, rows_m), (db_s, db_m) = times["sql"], times["rows"], times["duckdb"]
            print(f"{fmt:>6} {n:>9,} {path.stat().st_size / 2**20:>5.1f} | {sql_s:>6.2f} {sql_m:>5.0f} | "
                  f"{rows_s:>6.2f} {rows_m:>5.0f} | {db_s:>8.2f} {db_m:>5.0f} | {sql_s / db_s:>9.1f}x "
                  f"{rows_s / sql_s:>7.1f}x", flush=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print(f"load after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
