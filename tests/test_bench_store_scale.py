"""A small version of bench/bench_store_scale.py (issue 35): 1,000 and 2 × 1,000 verdicts imported beside
DuckDB's read_csv of the same files, in a few seconds; the table it prints has every row."""

import re

from .conftest import run_python


def test_small_import_scale_bench_prints_both_readers(tmp_path):
    done = run_python("import sys; from bench.bench_store_scale import measure, main; "
                      "from pathlib import Path; r = measure(Path(sys.argv[1]), 2000, files=2); "
                      "assert r['files'] == 2 and r['rows'] == 1980, r; "
                      "raise SystemExit(main(['--sizes', '1000', '--folder', sys.argv[1]]))", tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    # rows | SQL import s, MiB | row importer s, MiB (timed up to --rows-up-to) | read_csv s, MiB | ratio
    row = re.search(r"^\s+990\s+1\s+\d+ \|\s+([\d.]+)\s+(\d+) \|\s+([\d.]+)\s+(\d+) \|\s+([\d.]+)\s+(\d+)"
                    r" \|\s+([\d.]+)x", done.stdout, re.M)
    assert row, done.stdout
    lsqa_s, lsqa_mib, rows_s, rows_mib, csv_s, csv_mib, ratio = map(float, row.groups())
    assert lsqa_s > 0 and csv_s > 0 and lsqa_mib > 0 and csv_mib > 0 and rows_s > 0 and rows_mib > 0
    assert abs(ratio - lsqa_s / csv_s) < 0.1 * ratio + 0.1


def test_small_jsonl_import_scale_bench_prints_both_readers(tmp_path):
    done = run_python("import sys; from bench.bench_store_scale import main; "
                      "raise SystemExit(main(['--sizes', '1000', '--format', 'jsonl', '--folder', sys.argv[1]]))",
                      tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "import-judgments of jsonl" in done.stdout and "read_json s" in done.stdout, done.stdout
    row = re.search(r"^\s+990\s+1\s+\d+ \|\s+([\d.]+)\s+(\d+) \|\s+([\d.]+)\s+(\d+) \|\s+([\d.]+)\s+(\d+)"
                    r" \|\s+([\d.]+)x", done.stdout, re.M)
    assert row, done.stdout
