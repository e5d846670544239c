"""Benchmark: `lsqa ingest-narrativeqa`'s question files at NarrativeQA's whole size, in SQL (fast, and
declined to the table reader) and row by row, beside DuckDB's own reader of the same file in the same run.

Run:  .venv/bin/python bench/bench_narrativeqa_questions.py            (about a minute)
      .venv/bin/python bench/bench_narrativeqa_questions.py --copies 4 (a quarter of the size)
      .venv/bin/python bench/bench_narrativeqa_questions.py --root ../old-checkout (another checkout's lsqa)

The file: the 2,910 NarrativeQA test questions of ``$LSQA_DATA_DIR/narrativeqa`` (or ``../shared/data``)
``--copies`` times (16: 46,560 questions; NarrativeQA has 46,765 in all), each copy with other
``q_index``, as the published JSONL copy writes them (``q_index`` a number, the title and kind on every
line) and as ``qaps.csv`` is published (no ``q_index``: each document's questions counted in order,
with the tokenised columns). The folder holds the data's ``documents.csv`` and no stories, so the
time is the questions' (and the 98 documents' rows).

Each measurement runs in a child process of its own (``bench_store_scale.child``): wall time of the
work after the child's imports, peak memory the child's ``VmHWM``.

- *sql*: ``ingest_narrativeqa`` as the command calls it, into a new workspace (made before the clock).
- *declined*: the same, of the file with its last line written so that the fast stage declines it (its
  ``q_index`` as ``" 7"`` with a space; in the CSV, a ``q_index`` column given on the last row only, the
  number it is counted to anyway): the same questions, read by the table reader, checked in SQL.
- *rows*: the row readers the tests keep as their oracle (``tests/support/narrativeqa_oracle.py``; in a
  checkout without it, ``questions_in_sql=False``).
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

from bench.bench_store_scale import _PEAK, _START, child  # noqa: E402

DATA = Path(os.environ.get("LSQA_DATA_DIR") or ROOT.parent / "shared" / "data") / "narrativeqa"

INGEST = """
import sys, time
from lsqa import store
from lsqa.corpus.ingest import ingest_narrativeqa
if ROWS:
    try:
        from tests.support.narrativeqa_oracle import ingest_narrativeqa_rows as ingest
    except ImportError:  # a checkout whose lsqa still had the row path
        ingest = lambda ws, folder: ingest_narrativeqa(ws, folder, questions_in_sql=False)
else:
    ingest = ingest_narrativeqa
with store.connect(sys.argv[1]):
    pass
""" + _START + """summary = ingest(sys.argv[1], sys.argv[2])
assert summary.added["questions"] == int(sys.argv[3]), summary
elapsed = time.perf_counter() - t0
""" + _PEAK

DUCKDB = """
import sys, time
import duckdb
""" + _START + """con = duckdb.connect(sys.argv[1])
con.execute(f"CREATE TABLE t AS SELECT * FROM {sys.argv[3]}('{sys.argv[2]}')")
con.close()
elapsed = time.perf_counter() - t0
""" + _PEAK


def question_folders(folder: Path, copies: int) -> dict[str, tuple[Path, Path, int]]:
    """{format: (dataset folder, its question file, questions)}: the test questions ``copies`` times, each
    format also as ``<format>-declined`` (see the module's docstring)."""
    rows = [json.loads(line) for line in (DATA / "nqa_test_first3000_qaps.jsonl").open(encoding="utf-8")]
    made = {}
    for fmt, name in (("jsonl", "nqa_qaps.jsonl"), ("csv", "qaps.csv")):
        for declined in (False, True):
            dataset = folder / (fmt + ("-declined" if declined else ""))
            dataset.mkdir(parents=True, exist_ok=True)
            shutil.copy(DATA / "documents.csv", dataset / "documents.csv")
            path = dataset / name
            with path.open("w", encoding="utf-8", newline="") as f:
                if fmt == "jsonl":
                    lines = [{**r, "q_index": r["q_index"] + 1000 * k} for k in range(copies) for r in rows]
                    if declined:
                        lines[-1]["q_index"] = f" {lines[-1]['q_index']}"
                    f.writelines(json.dumps(line) + "\n" for line in lines)
                else:
                    writer = csv.writer(f)
                    writer.writerow(["document_id", "set", "question", "answer1", "answer2", "question_tokenized",
                                     "answer1_tokenized", "answer2_tokenized"] + (["q_index"] if declined else []))
                    lines = [[r["document_id"], r["set"], r["question"], r["answer1"], r["answer2"],
                              r["question"].lower(), r["answer1"].lower(), r["answer2"].lower()]
                             + ([""] if declined else []) for _ in range(copies) for r in rows]
                    if declined:  # the number the last row is counted to: its document's rows before it
                        lines[-1][-1] = str(sum(line[0] == lines[-1][0] for line in lines[:-1]))
                    writer.writerows(lines)
            made[fmt + ("-declined" if declined else "")] = (dataset, path, len(rows) * copies)
    return made


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--copies", type=int, default=16, help="copies of the 2,910 test questions")
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout whose lsqa is measured")
    args = parser.parse_args(argv)
    folder = Path(tempfile.mkdtemp(prefix="lsqa-nqa-bench-"))
    print(f"ingest-narrativeqa questions; {args.root}; {os.cpu_count()} cores; load {os.getloadavg()[0]:.2f}")
    print("each: wall s, CPU s, peak MiB")
    print(f"{'format':>6} {'questions':>9} {'MiB':>5} | {'sql':^17} | {'declined':^17} | {'rows':^17} | "
          f"{'duckdb':^17} | {'sql/duckdb':>10} {'rows/sql':>8}")
    try:
        folders = question_folders(folder, args.copies)
        for fmt in ("jsonl", "csv"):
            dataset, path, n = folders[fmt]
            times = {}
            for name, data, rows in (("sql", dataset, False), ("declined", folders[fmt + "-declined"][0], False),
                                     ("rows", dataset, True)):
                ws = folder / f"{fmt}-{name}.duckdb"
                times[name] = child(INGEST.replace("ROWS", str(rows)), ws, data, n, root=args.root)
            reader = "read_json" if fmt == "jsonl" else "read_csv"
            times["duckdb"] = child(DUCKDB, folder / f"{fmt}-duckdb.duckdb", path, reader, root=args.root)
            cells = " | ".join(f"{wall:>5.2f} {cpu:>5.2f} {peak:>5.0f}" for wall, peak, cpu in
                               (times[k] for k in ("sql", "declined", "rows", "duckdb")))
            print(f"{fmt:>6} {n:>9,} {path.stat().st_size / 2**20:>5.1f} | {cells} | "
                  f"{times['sql'][0] / times['duckdb'][0]:>9.1f}x {times['rows'][0] / times['sql'][0]:>7.1f}x", flush=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print(f"load after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
