"""A small version of bench/bench_store_scale.py (issue 35): 1,000 and 2 × 1,000 verdicts imported beside
DuckDB's read_csv of the same files, in a few seconds; the table it prints has every row."""

import re

import pytest

from tests.conftest import run_python


@pytest.mark.slow  # the bench script in a process of its own
def test_small_import_scale_bench_prints_both_readers(tmp_path):
    done = run_python("import sys; from bench.bench_store_scale import measure, main; "
                      "from pathlib import Path; r = measure(Path(sys.argv[1]), 2000, files=2); "
                      "assert r['files'] == 2 and r['rows'] == 1980, r; "
                      "raise SystemExit(main(['--sizes', '1000', '--rows-up-to', '1000', '--folder', sys.argv[1]]))",
                      tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    # rows | lsqa wall, CPU, MiB | before (not asked: -) | row importer (tests' oracle) | read_csv | ratio (CPU)
    cell = r"\s+([\d.]+)\s+([\d.]+)\s+(\d+) \|"
    row = re.search(rf"^\s+990\s+1\s+\d+ \|{cell}\s+-\s+-\s+- \|{cell}{cell}\s+([\d.]+)x", done.stdout, re.M)
    assert row, done.stdout
    lsqa_s, lsqa_cpu, lsqa_mib, rows_s, rows_cpu, rows_mib, csv_s, csv_cpu, csv_mib, ratio = map(float, row.groups())
    assert min(lsqa_s, lsqa_cpu, lsqa_mib, rows_s, rows_cpu, rows_mib, csv_s, csv_cpu, csv_mib) > 0
    # The ratio is of the unrounded CPU times; the cells show them to 0.01 s and the ratio to 0.1.
    assert (lsqa_cpu - 0.005) / (csv_cpu + 0.005) - 0.05 <= ratio <= (lsqa_cpu + 0.005) / max(csv_cpu - 0.005, 1e-9) + 0.05


def test_small_jsonl_import_scale_bench_prints_both_readers(tmp_path):
    done = run_python("import sys; from bench.bench_store_scale import main; "
                      "raise SystemExit(main(['--sizes', '1000', '--format', 'jsonl', '--folder', sys.argv[1]]))",
                      tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "import-judgments of jsonl" in done.stdout and "read_json" in done.stdout, done.stdout
    cell = r"\s+([\d.]+)\s+([\d.]+)\s+(\d+) \|"
    row = re.search(rf"^\s+990\s+1\s+\d+ \|{cell}\s+-\s+-\s+- \|\s+-\s+-\s+- \|{cell}\s+([\d.]+)x",
                    done.stdout, re.M)
    assert row, done.stdout
