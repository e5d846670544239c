"""Benchmark of creating a workspace and of opening it again: CPU per new workspace (the first
``lsqa.store.connect`` of a new file, which migrates it) and per re-open of an existing one (open,
one ``SELECT``, close), for one or more lsqa source trees side by side in one run.

Each tree is measured in a process of its own (its ``lsqa`` imported from that tree), the trees
taking turns for ``--rounds`` rounds; the first new workspace of each process (which may prepare
what later ones reuse) is shown apart.

    .venv/bin/python bench/bench_workspace_open.py [--trees /work/main .] [--new 40] [--reopen 200] [--rounds 3]

``--schema-look N``: instead, in this process (this tree), N alternations of ``--reopen`` re-opens with the
schema looked for at each ATTACH (``db._as_left`` made to say no) and skipped when the file is as this
process left it; the median CPU ms of each.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def measure(new: int, reopen: int) -> dict:
    """In this process: CPU and wall ms of the first new workspace, then per new workspace and per re-open."""
    from lsqa import store

    def one_new(folder: Path, i: int) -> None:
        with store.connect(folder / f"ws{i}.duckdb") as con:
            con.execute("SELECT 1").fetchall()

    out = {"lsqa": store.__file__}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        wall, cpu = time.perf_counter(), time.process_time()
        one_new(folder, 0)
        out["first_new"] = ((time.perf_counter() - wall) * 1000, (time.process_time() - cpu) * 1000)
        wall, cpu = time.perf_counter(), time.process_time()
        for i in range(1, new + 1):
            one_new(folder, i)
        out["new"] = ((time.perf_counter() - wall) / new * 1000, (time.process_time() - cpu) / new * 1000)
        path = folder / "ws0.duckdb"
        wall, cpu = time.perf_counter(), time.process_time()
        for _ in range(reopen):
            with store.connect(path) as con:
                con.execute("SELECT 1").fetchall()
        out["reopen"] = ((time.perf_counter() - wall) / reopen * 1000, (time.process_time() - cpu) / reopen * 1000)
    return out


def schema_look(alternations: int, reopen: int) -> None:
    import statistics

    from lsqa import store
    from lsqa.store import db

    kept = db._as_left
    cpu = {"look": [], "skip": []}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "ws.duckdb"
        with store.connect(path):
            pass
        for _ in range(alternations):
            for mode in cpu:
                db._as_left = (lambda entry, key: False) if mode == "look" else kept
                start = time.process_time()
                for _ in range(reopen):
                    with store.connect(path) as con:
                        con.execute("SELECT 1").fetchall()
                cpu[mode].append((time.process_time() - start) / reopen * 1000)
        db._as_left = kept
    for mode, values in cpu.items():
        print(f"re-open, schema {mode:<4}: median {statistics.median(values):.2f} ms CPU "
              f"({', '.join(f'{v:.2f}' for v in values)})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trees", nargs="+", default=[str(ROOT)], help="lsqa source trees to compare")
    parser.add_argument("--new", type=int, default=40, help="new workspaces per process, after the first")
    parser.add_argument("--reopen", type=int, default=200, help="re-opens per process")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--schema-look", type=int, default=0, metavar="N", help="see the module's docstring")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.schema_look:
        sys.path.insert(0, str(ROOT))
        schema_look(args.schema_look, args.reopen)
        return 0
    if args.child:
        print(json.dumps(measure(args.new, args.reopen)))
        return 0

    print(f"{'tree':<28} {'round':>5} {'first new (CPU/wall ms)':>24} {'new (CPU/wall ms)':>18} "
          f"{'re-open (CPU/wall ms)':>22}")
    for rnd in range(1, args.rounds + 1):
        for tree in args.trees:
            env = {**os.environ, "PYTHONPATH": str(Path(tree).resolve())}
            done = subprocess.run([sys.executable, __file__, "--child", "--new", str(args.new),
                                   "--reopen", str(args.reopen)], env=env, capture_output=True, text=True,
                                  check=True)
            r = json.loads(done.stdout.splitlines()[-1])
            print(f"{tree:<28} {rnd:>5} {r['first_new'][1]:>12.1f} / {r['first_new'][0]:<9.1f}"
                  f" {r['new'][1]:>8.1f} / {r['new'][0]:<7.1f} {r['reopen'][1]:>10.2f} / {r['reopen'][0]:<8.2f}",
                  flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
