"""Tally the bad-input probes of tests/test_bad_input_*.py by outcome (issue 14's figures).

    LSQA_PROBE_LOG=/tmp/probes.jsonl pytest tests/test_bad_input_*.py
    python scripts/count_probes.py /tmp/probes.jsonl

Outcomes: refused (exit 2, one line naming input, place and what to do, tables unchanged),
traceback, accepted (silently let in), changed (a table changed), unclear (refused, but not in one
clear line).
"""

from __future__ import annotations

import json
import sys
from collections import Counter


def main(path: str) -> None:
    rows = [json.loads(line) for line in open(path, encoding="utf-8") if line.strip()]
    by_area: dict[str, Counter] = {}
    for r in rows:
        area = r["probe"].split()[0]
        by_area.setdefault(area, Counter())[r["outcome"]] += 1
    total = Counter(r["outcome"] for r in rows)
    kinds = ("refused", "traceback", "accepted", "changed", "unclear")
    print(f"{'probe family':<22}" + "".join(f"{k:>11}" for k in kinds))
    for area, counts in sorted(by_area.items()):
        print(f"{area:<22}" + "".join(f"{counts[k]:>11}" for k in kinds))
    print(f"{'total (' + str(len(rows)) + ')':<22}" + "".join(f"{total[k]:>11}" for k in kinds))


if __name__ == "__main__":
    main(sys.argv[1])
