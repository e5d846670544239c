"""Summarise a suite timeline written by ``tests/support/timeline_plugin.py``: each worker's span, busy
time and CPU, the modules by worker time, and the slowest tests.

    .venv/bin/python scripts/suite_timeline.py /tmp/tl [--top 25]
"""

from __future__ import annotations

import argparse
import collections
import json
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args(argv)
    rows = []
    for path in sorted(args.folder.glob("timeline-*.jsonl")):
        worker = path.stem.removeprefix("timeline-")
        rows += [{**json.loads(line), "worker": worker} for line in path.read_text(encoding="utf-8").splitlines()]
    if not rows:
        print(f"no timeline-*.jsonl in {args.folder}")
        return 1
    t0 = min(r["start"] for r in rows)
    print(f"{len(rows)} tests, {max(r['end'] for r in rows) - t0:.0f} s from the first start to the last end")
    for worker in sorted({r["worker"] for r in rows}):
        mine = sorted((r for r in rows if r["worker"] == worker), key=lambda r: r["start"])
        print(f"  {worker}: first start {mine[0]['start'] - t0:.1f} s, last end {mine[-1]['end'] - t0:.1f} s, "
              f"busy {sum(r['end'] - r['start'] for r in mine):.0f} s, CPU {sum(r['self'] for r in mine):.0f} s "
              f"+ children {sum(r['children'] for r in mine):.0f} s")
    modules: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0.0, 0.0, 0])
    for r in rows:
        m = modules[r["id"].split("::")[0]]
        m[0] += r["end"] - r["start"]
        m[1] += r["self"]
        m[2] += r["children"]
        m[3] += 1
    print(f"\nmodules by worker time (top {args.top}): wall s, CPU s, children's CPU s, tests")
    for name, (wall, own, children, n) in sorted(modules.items(), key=lambda kv: -kv[1][0])[:args.top]:
        print(f"  {wall:7.1f} {own:7.1f} {children:7.1f} {n:5d}  {name}")
    print(f"\nslowest tests (top {args.top}): start s, wall s, worker")
    for r in sorted(rows, key=lambda r: r["start"] - r["end"])[:args.top]:
        print(f"  {r['start'] - t0:6.1f} {r['end'] - r['start']:6.1f} {r['worker']}  {r['id']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
