"""A small version of bench/bench_scale.py (issue 15): 2 generated questions on Les Misérables,
7 systems, the full-book side-by-side judge on all 21 pairs; the plan against what the run made."""

import re

import pytest

from tests.conftest import run_python

pytestmark = pytest.mark.slow


def test_small_paper_scale_bench_plan_matches_the_run(tmp_path):
    done = run_python("import sys; sys.argv[0] = 'bench'; from bench.bench_scale import main; "
                      "raise SystemExit(main(sys.argv[1:]))", "--questions", 2, "--workspace", tmp_path / "s.duckdb",
                      timeout=1800)
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    assert re.search(r"plan before the answers: [\d,]+ calls vs [\d,]+ requests the run made \(equal\)", out), out
    assert re.search(r"plan before the judge: 42 judge calls, .*\(equal\)", out), out
    deviation = float(re.search(r"input tokens: plan .* \(([+-][\d.]+)%; target within 5%\)", out).group(1))
    assert abs(deviation) < 5
    size_mb = float(re.search(r"workspace: ([\d.]+) MB", out).group(1))
    assert size_mb < 200
