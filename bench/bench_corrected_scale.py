"""Benchmark: `lsqa rank --corrected`, `lsqa certify` and `lsqa report` on a workspace of 1M side-by-side
verdicts and 5,000 random audits, beside `lsqa rank --workspace` (the floor: counts read in SQL).

Run:  .venv/bin/python bench/bench_corrected_scale.py                     (about a minute on 2 cores)
      .venv/bin/python bench/bench_corrected_scale.py --verdicts 100000 --audits 1000   (quicker)
      .venv/bin/python bench/bench_corrected_scale.py --workspace ws.duckdb --lsqa OTHER/checkout

The workspace is ``bench/scale_workspace.py``'s ``plain`` one (10 systems, one side-by-side judge
``bench-sxs`` on all 45 pairs of every question, seed 0) with ``add_audits``: a simple random sample
of its decided verdicts, each reviewed by one of three people (80% keep the judge's label), a tenth
reviewed again by a fourth. ``--workspace``: keep it in that file (made if missing) to reuse it.
``--lsqa``: run the commands of another checkout (its ``lsqa`` package on ``PYTHONPATH``), e.g. a
``git worktree`` of an older commit, for a before/after on the same workspace.

Each command runs as ``python -m lsqa.cli ...`` in a child process: wall time (Python's imports
included), CPU time (user + system) and peak RSS are the child's own, from ``os.wait4``'s
``ru_maxrss`` (the child is started by ``subprocess``, which execs at once, so no parent high-water
mark is carried over beyond the interpreter's own start). The bar (issue "One Bradley-Terry core at
arena scale"): each under 10 s and 1 GiB at 1M verdicts on a quiet machine.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

for _name, _value in (("HF_HUB_OFFLINE", "1"), ("TRANSFORMERS_OFFLINE", "1"), ("LITELLM_LOCAL_MODEL_COST_MAP", "True"),
                      ("LSQA_READ_CACHE", "0")):
    os.environ.setdefault(_name, _value)

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.scale_workspace import add_audits, build  # noqa: E402

JUDGE = "bench-sxs"
MAX_SECONDS, MAX_PEAK_MIB = 10.0, 1024


def commands(ws: Path, out: Path) -> list[tuple[str, list[str]]]:
    w = ["--workspace", str(ws), "--judge", JUDGE]
    return [("rank --workspace (floor)", ["rank", *w, "--json"]),
            ("rank --corrected", ["rank", *w, "--corrected", "--json"]),
            ("certify", ["certify", *w, "--json"]),
            ("report", ["report", *w, "--out", str(out)])]


def run(args: list[str], lsqa_root: Path) -> tuple[float, float, float, int]:
    """(wall s, CPU s, peak RSS MiB, exit code) of ``python -m lsqa.cli args`` in a child process."""
    env = {**os.environ, "PYTHONPATH": str(lsqa_root)}
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "lsqa.cli", *args], cwd=lsqa_root, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        print(f"  failed ({proc.returncode}): {err.strip()[-500:]}", file=sys.stderr)
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, proc.returncode


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--verdicts", type=int, default=1_000_000)
    p.add_argument("--audits", type=int, default=5_000)
    p.add_argument("--workspace", type=Path, default=None, help="keep the workspace in this file (made if missing)")
    p.add_argument("--lsqa", type=Path, default=ROOT, help="the checkout whose lsqa runs the commands")
    p.add_argument("--repeat", type=int, default=1, help="runs of each command (the best is printed)")
    a = p.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="lsqa-corrected-scale-") as tmp:
        ws = a.workspace or Path(tmp) / "ws.duckdb"
        if not ws.exists():
            t = time.perf_counter()
            counts = build(ws, a.verdicts)
            add_audits(ws, a.audits)
            print(f"workspace: {counts['verdicts']:,} verdicts, {a.audits:,} audits, built in "
                  f"{time.perf_counter() - t:.1f} s")
        load = os.getloadavg()[0]
        print(f"lsqa from {a.lsqa}; load {load:.2f} on {os.cpu_count()} cores")
        print(f"{'command':28s} {'wall s':>8s} {'CPU s':>8s} {'peak MiB':>9s}")
        failed = False
        for name, args in commands(ws, Path(tmp) / "report.html"):
            runs = [run(args, a.lsqa) for _ in range(a.repeat)]
            wall, cpu, peak, code = min(runs)
            mark = "" if code == 0 and (wall <= MAX_SECONDS and peak <= MAX_PEAK_MIB) else "  (over the bar)"
            failed |= code != 0
            print(f"{name:28s} {wall:8.1f} {cpu:8.1f} {peak:9.0f}{mark}")
        print(f"load after {os.getloadavg()[0]:.2f}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
