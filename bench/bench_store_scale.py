"""Benchmark (issue 35): `lsqa import-judgments` at 10k, 100k and 1M side-by-side verdicts (5M with
``--five-million``), each beside a plain DuckDB ``read_csv`` of the same file into a table, in the same run;
``--what answers`` / ``--what reviews``: `lsqa import-answers` / `lsqa import-reviews` the same way;
``--format jsonl``: the same rows as JSON lines (strings), beside DuckDB's ``read_json`` of that file.

Run:  .venv/bin/python bench/bench_store_scale.py                        (about 2 minutes on 2 cores)
      .venv/bin/python bench/bench_store_scale.py --sizes 10000,100000    (quicker)
      .venv/bin/python bench/bench_store_scale.py --sizes 1000000 --five-million
      .venv/bin/python bench/bench_store_scale.py --what answers --sizes 100000,1000000
      .venv/bin/python bench/bench_store_scale.py --what reviews --sizes 100000,1000000
      .venv/bin/python bench/bench_store_scale.py --format jsonl --sizes 100000,1000000 --rows-up-to 0
      .venv/bin/python bench/bench_store_scale.py --what reviews --declined --sizes 100000 --before DIR

The workspace (``bench/scale_workspace.py``, written in SQL) holds the questions and systems; the file
holds the verdicts of its ``plain`` workspace as CSV (question_id, rater, kind, system_a, system_b,
shown_order, label: ~51 bytes a verdict). 5M verdicts are five files of 1M (one file of 5M would be
above the 256 MiB limit of one table), imported one after the other into one workspace.

Answers (``answer_file``): 10 imported systems answering every question, texts of 60-300 characters
as an LLM writes them — a comma and quotes in every one, a newline in one in ten, a non-ASCII word in
one in twenty — so DuckDB's COPY quotes every answer, as pandas or R would (~170 bytes a row).
Reviews (``review_file``): one review of every verdict of a ``plain`` workspace of the same size, by
five annotators, a fifth naming the pair reversed, labels as people spell them (``a``, ``Tie``,
``'B'``), a third with an inclusion probability. Sizes up to ``--rows-up-to`` (100k) also run the
row-by-row importer on the same file: the speed the SQL path replaces.

Each measurement runs in a child process of its own; wall time is the work itself (after the
child's Python imports), peak memory the child's ``VmHWM`` (resident high-water mark, not
``ru_maxrss``: Linux carries a parent's high-water mark into a child).

- *lsqa*: ``import_judgments`` / ``import_answers`` / ``import_reviews`` (what the commands call), the
  write, its commit and the audit queue's catch-up included; the workspace closed (checkpointed) after.
- *rows*: the row-by-row importer the tests keep as their oracle (``tests/support/import_oracle.py``).
- *read_csv*: ``CREATE TABLE t AS SELECT * FROM read_csv(file)`` into a new DuckDB file, closed after
  (``read_json`` for ``--format jsonl``).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

for _name, _value in (("HF_HUB_OFFLINE", "1"), ("TRANSFORMERS_OFFLINE", "1"), ("LITELLM_LOCAL_MODEL_COST_MAP", "True")):
    os.environ.setdefault(_name, _value)

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.scale_workspace import N_SYSTEMS, PAIRS_PER_QUESTION, build, verdict_file  # noqa: E402

# The bar: the import within 8x of read_csv, under 1 GiB.
MAX_RATIO, MAX_PEAK_MIB = 8.0, 1024

_PEAK = """
import resource
usage = resource.getrusage(resource.RUSAGE_SELF)
cpu = usage.ru_utime + usage.ru_stime - cpu0
hwm = [int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:")]
print(f"BENCH {elapsed:.3f} {hwm[0] / 1024:.0f} {cpu:.3f}", file=sys.stderr)
"""
_START = """
import resource
usage = resource.getrusage(resource.RUSAGE_SELF)
cpu0 = usage.ru_utime + usage.ru_stime
t0 = time.perf_counter()
"""

# The importer each --what measures, and its row-by-row twin.
IMPORTERS = {"judgments": ("lsqa.study.imports", "import_judgments", "import_judgments_rows"),
             "answers": ("lsqa.study.imports", "import_answers", "import_answers_rows"),
             "reviews": ("lsqa.audit.review_import", "import_reviews", "import_reviews_rows")}
# Where the row-by-row importers live: the tests' oracle (``--before``'s lsqa for an older checkout).
ROW_MODULE = "tests.support.import_oracle"

IMPORT = """
import sys, time
from MODULE import FUNCTION as importer
""" + _START + """for path in sys.argv[2:]:
    summary = importer(sys.argv[1], path)
    assert not any(summary.skipped.values()), summary
elapsed = time.perf_counter() - t0
""" + _PEAK

READ_CSV = """
import sys, time
import duckdb
""" + _START + """con = duckdb.connect(sys.argv[1])
for k, path in enumerate(sys.argv[2:]):
    con.execute(f"CREATE TABLE t{k} AS SELECT * FROM READER('{path}')")
con.close()
elapsed = time.perf_counter() - t0
""" + _PEAK


def child(code: str, *args, root: Path = ROOT) -> tuple[float, float, float]:
    """(wall s, peak MiB, CPU s) of ``code`` in a fresh process importing lsqa from ``root``."""
    done = subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True,
                          cwd=root, env={**os.environ, "PYTHONPATH": str(root)})
    if done.returncode:
        raise SystemExit(done.stderr[-3000:])
    line = [x for x in done.stderr.splitlines() if x.startswith("BENCH ")][-1].split()
    return float(line[1]), float(line[2]), float(line[3])


def _uniform(key: str, what: int) -> str:
    return f"((hash({key}, {what}) % 1000003) / 1000003.0)"


def answer_file(con, path: Path, n_questions: int) -> int:
    """Answers of 10 imported systems to questions 0 .. ``n_questions`` (module docstring) as a CSV file."""
    u = lambda what: _uniform("q.i, s.i", what)  # noqa: E731
    text = f"""'The answer is ' || (q.i * 7 + s.i) || ', as the book says: "' ||
               repeat('it was the ' || CASE WHEN {u(1)} < 0.05 THEN 'café' ELSE 'house' END || ' of the miller, ',
                      1 + CAST({u(2)} * 7 AS INTEGER)) || '"' ||
               CASE WHEN {u(3)} < 0.1 THEN chr(10) || 'Second paragraph.' ELSE '' END"""
    quoted = str(path).replace("'", "''")
    con.execute(f"""COPY (SELECT printf('bench:q%07d', q.i) AS question_id, 'imp-' || s.i AS system, {text} AS answer
                          FROM range({n_questions}) q(i), range({N_SYSTEMS}) s(i) ORDER BY q.i, s.i)
                    TO '{quoted}' (HEADER)""")
    return n_questions * N_SYSTEMS


def review_file(workspace: Path, path: Path) -> int:
    """One review of every verdict of ``workspace`` (module docstring) as a CSV file."""
    import duckdb

    u = lambda what: _uniform("id", what)  # noqa: E731
    spelled = "CASE label0 WHEN 'A' THEN 'a' WHEN 'tie' THEN 'Tie' WHEN 'B' THEN '''B''' ELSE label0 END"
    swapped = "CASE coalesce(label, 'A') WHEN 'A' THEN 'B' WHEN 'B' THEN 'A' ELSE label END"
    quoted = str(path).replace("'", "''")
    with duckdb.connect(str(workspace), read_only=True) as con:
        con.execute(f"""COPY (
            SELECT judge, question_id, CASE WHEN rev THEN system_b ELSE system_a END AS system_a,
                   CASE WHEN rev THEN system_a ELSE system_b END AS system_b,
                   CASE WHEN {u(2)} < 0.7 THEN {spelled} ELSE 'none' END AS label,
                   'annotator-' || CAST({u(3)} * 5 AS INTEGER) AS annotator,
                   CASE WHEN {u(4)} < 0.33 THEN '0.05' ELSE '' END AS inclusion_probability
            FROM (SELECT *, {u(1)} < 0.2 AS rev,
                         CASE WHEN {u(1)} < 0.2 THEN {swapped} ELSE coalesce(label, 'A') END AS label0
                  FROM judgments) ORDER BY question_id, system_a, system_b)
            TO '{quoted}' (HEADER)""")
        return int(con.execute("SELECT count(*) FROM judgments").fetchone()[0])


def measure(folder: Path, n_rows: int, files: int = 1, what: str = "judgments", rows_too: bool = False,
            fmt: str = "csv", rounds: int = 1, before: Path | None = None, declined: bool = False) -> dict:
    """Build the workspace, write the rows as ``files`` CSV files (one for answers and reviews), or JSON
    lines of the same rows (``fmt``), time the readers."""
    import duckdb

    ws, base = folder / f"ws-{n_rows}.duckdb", folder / f"base-{n_rows}.duckdb"
    for p in (ws, base):
        p.unlink(missing_ok=True)
    # Answers: n_rows / 10 questions (10 systems each), the questions of a plain workspace of that many.
    made = build(base, n_rows if what != "answers" else n_rows // N_SYSTEMS * PAIRS_PER_QUESTION,
                 verdicts=what == "reviews")
    paths = []
    if what == "judgments":
        per_file = made["questions"] // files
        with duckdb.connect() as con:
            for k in range(files):
                count = per_file if k < files - 1 else made["questions"] - per_file * (files - 1)
                path = folder / f"verdicts-{n_rows}-{k}.csv"
                verdict_file(con, path, k * per_file, count)
                paths.append(path)
        rows = made["questions"] * PAIRS_PER_QUESTION
    elif what == "answers":
        paths.append(folder / f"answers-{n_rows}.csv")
        with duckdb.connect() as con:
            rows = answer_file(con, paths[0], made["questions"])
    else:
        paths.append(folder / f"reviews-{n_rows}.csv")
        rows = review_file(base, paths[0])
    if declined:  # a name beyond plain ASCII on the first row: the staged SQL declines the file, lsqa restages it
        column = {"judgments": "rater", "answers": "system", "reviews": "annotator"}[what]
        with duckdb.connect() as con:
            for path in paths:
                con.execute(f"""COPY (SELECT * REPLACE (CASE WHEN row_number() OVER () = 1 THEN {column} || 'é'
                                                             ELSE {column} END AS {column})
                                      FROM read_csv('{path}', all_varchar = true)) TO '{path}.x' (HEADER)""")
                path.with_name(path.name + ".x").replace(path)
    if fmt == "jsonl":
        with duckdb.connect() as con:
            for k, path in enumerate(paths):
                paths[k] = path.with_suffix(".jsonl")
                con.execute(f"COPY (SELECT * FROM read_csv('{path}', all_varchar = true)) TO '{paths[k]}' (FORMAT JSON)")
                path.unlink()
    module, function, row_function = IMPORTERS[what]
    target = folder / f"read-csv-{n_rows}.duckdb"
    reader = READ_CSV.replace("READER", "read_json" if fmt == "jsonl" else "read_csv")
    importer = IMPORT.replace("MODULE", module).replace("FUNCTION", function)
    runs: dict[str, list[tuple[float, float, float]]] = {"lsqa": [], "before": [], "row_path": [], "read_csv": []}
    for _ in range(rounds):  # interleaved: each round runs every reader once, on a fresh copy of the workspace
        shutil.copy(base, ws)
        runs["lsqa"].append(child(importer, ws, *paths))
        if before is not None:
            shutil.copy(base, ws)
            runs["before"].append(child(importer, ws, *paths, root=before))
        if rows_too:
            shutil.copy(base, ws)
            runs["row_path"].append(child(IMPORT.replace("MODULE", ROW_MODULE).replace("FUNCTION", row_function), ws,
                                      *paths))
        target.unlink(missing_ok=True)
        runs["read_csv"].append(child(reader, target, *paths))
    size = sum(p.stat().st_size for p in paths)
    for p in (*paths, target, ws, base):
        p.unlink(missing_ok=True)
    out = {"rows": rows, "files": files, "mib": size / 2**20}
    for name, times in runs.items():
        if times:
            out[name] = statistics.median(t for t, _, _ in times)
            out[name + "_cpu"] = statistics.median(c for _, _, c in times)
            out[name + "_mib"] = max(m for _, m, _ in times)
        else:
            out[name] = out[name + "_cpu"] = out[name + "_mib"] = None
    return out


def _cell(r: dict, name: str) -> str:
    if r[name] is None:
        return f"{'-':>6} {'-':>6} {'-':>5}"
    return f"{r[name]:>6.2f} {r[name + '_cpu']:>6.2f} {r[name + '_mib']:>5.0f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--what", choices=tuple(IMPORTERS), default="judgments",
                        help="the import to measure (sizes are rows of its file)")
    parser.add_argument("--sizes", default="10000,100000,1000000", help="rows per file, comma-separated")
    parser.add_argument("--five-million", action="store_true", help="also 5M verdicts, as five files of 1M")
    parser.add_argument("--format", choices=("csv", "jsonl"), default="csv", help="the file's format")
    parser.add_argument("--rows-up-to", type=int, default=0,
                        help="also time the row-by-row importer (the tests' oracle) at sizes up to this (0: never)")
    parser.add_argument("--rounds", type=int, default=1, help="interleaved rounds per size (medians are printed)")
    parser.add_argument("--before", type=Path, default=None,
                        help="a checkout of lsqa to time beside this one, interleaved (e.g. from git archive)")
    parser.add_argument("--folder", type=Path, default=None, help="where to build (default: a temporary folder)")
    parser.add_argument("--declined", action="store_true",
                        help="a name beyond plain ASCII on the first row: the file the staged SQL declines")
    args = parser.parse_args(argv)
    folder = args.folder or Path(tempfile.mkdtemp(prefix="lsqa-store-scale-"))
    folder.mkdir(parents=True, exist_ok=True)
    runs = [(int(s), 1) for s in args.sizes.split(",")] + ([(5_000_000, 5)] if args.five_million else [])
    print(f"import-{args.what} of {args.format}; files in {folder}; {os.cpu_count()} cores; "
          f"load {os.getloadavg()[0]:.2f}; {args.rounds} interleaved round(s), medians; ratio = CPU / read's CPU")
    head = f"{'wall':>6} {'CPU':>6} {'MiB':>5}"
    print(f"{'rows':>10} {'files':>5} {'MiB':>5} | lsqa {head} | before {head} | rows {head} | "
          f"read_{args.format[:4]} {head} | {'ratio':>6} {'before':>6}  (bar: {MAX_RATIO:g}x, {MAX_PEAK_MIB} MiB)")
    try:
        for n, files in runs:
            t0 = time.perf_counter()
            r = measure(folder, n, files, args.what, rows_too=n <= args.rows_up_to, fmt=args.format,
                        rounds=args.rounds, before=args.before, declined=args.declined)
            ratio = r["lsqa_cpu"] / r["read_csv_cpu"]
            was = f"{r['before_cpu'] / r['read_csv_cpu']:>5.1f}x" if r["before"] is not None else f"{'-':>6}"
            met = "met" if ratio <= MAX_RATIO and r["lsqa_mib"] < MAX_PEAK_MIB else "NOT met"
            print(f"{r['rows']:>10,} {files:>5} {r['mib']:>5.0f} | {_cell(r, 'lsqa')} | {_cell(r, 'before')} | "
                  f"{_cell(r, 'row_path')} | {_cell(r, 'read_csv')} | {ratio:>5.1f}x {was}  {met}"
                  f"  ({time.perf_counter() - t0:.0f} s with the files made)", flush=True)
    finally:
        if args.folder is None:
            shutil.rmtree(folder, ignore_errors=True)
    print(f"load after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
