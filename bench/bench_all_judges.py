"""Benchmark: the Leaderboard's "All judges" view with a switch on, two checkouts in turns (A/B).

Run:  .venv/bin/python bench/bench_all_judges.py --a ../lsqa-before --b . --from <small demo> --rounds 5

The workspace is bench_dashboard.py's (the small demo extended with synthetic verdicts: 6 side-by-side
and 6 yes/no judges shown, a paper-scale judge of 4,200 comparisons), built once with this checkout's
bench_dashboard.py. Each round runs A, then B, each in its own process (its checkout's app.py and lsqa
on PYTHONPATH, Streamlit's AppTest, no browser) and times three renders of "All judges":

  switch:   "Use human overrides" turned on after the page was shown with the switches off, with the
            workspace's kept reads (lsqa.store.workspace_cache) forgotten just before the page was shown,
            as after a review: the first render of a switched view;
  rerun:    the next render in that view (another strength scale): what every widget change costs;
  uncached: the switch again with LSQA_READ_CACHE=0: the reads and fits themselves (bench_dashboard's
            figure).

Each is the median over ``--reps`` repetitions within a process; the round's B/A ratio is printed,
then the median over the rounds.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve()


def child(workspace: Path, reps: int) -> dict:
    """In a checkout's own process (cwd and PYTHONPATH: the checkout): the three timings."""
    from streamlit.testing.v1 import AppTest

    from lsqa.store import workspace_cache

    os.environ["LSQA_WORKSPACE"] = str(workspace)
    at = AppTest.from_file(str(Path.cwd() / "app.py"), default_timeout=600)  # the checkout run
    at.session_state["annotator"] = "bench"
    at.run()
    at.switch_page("pages/leaderboard.py")
    at.run()
    at.selectbox(key="lb_judge").set_value("all").run()
    assert not at.exception, at.exception

    def timed(change) -> float:
        change()
        t0 = time.perf_counter()
        at.run()
        took = time.perf_counter() - t0
        assert not at.exception, at.exception
        return took

    out: dict[str, list[float]] = {"switch": [], "rerun": [], "uncached": []}
    scales = ["log", "beta"]
    for k in range(reps):
        workspace_cache.clear()
        at.toggle(key="lb_overrides").set_value(False).run()
        out["switch"].append(timed(lambda: at.toggle(key="lb_overrides").set_value(True)))
        out["rerun"].append(timed(lambda k=k: at.radio(key="lb_scale").set_value(scales[k % 2])))
    os.environ["LSQA_READ_CACHE"] = "0"
    for _ in range(reps):
        at.toggle(key="lb_overrides").set_value(False).run()
        out["uncached"].append(timed(lambda: at.toggle(key="lb_overrides").set_value(True)))
    return {k: statistics.median(v) for k, v in out.items()}


def run_side(checkout: Path, workspace: Path, reps: int) -> dict:
    env = {**os.environ, "PYTHONPATH": str(checkout), "LSQA_READ_CACHE": "1"}
    for name, value in (("OPENBLAS_NUM_THREADS", "1"), ("OMP_NUM_THREADS", "1"), ("MKL_NUM_THREADS", "1"),
                        ("HF_HUB_OFFLINE", "1"), ("TRANSFORMERS_OFFLINE", "1"), ("LITELLM_LOCAL_MODEL_COST_MAP", "True")):
        env.setdefault(name, value)
    done = subprocess.run([sys.executable, str(HERE), "--child", str(workspace), "--reps", str(reps)], cwd=checkout,
                          env=env, capture_output=True, text=True, timeout=3600)
    if done.returncode:
        raise SystemExit(f"{checkout}: {done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--a", type=Path, help="checkout A (before)")
    parser.add_argument("--b", type=Path, default=HERE.parents[1], help="checkout B (after; default: this one)")
    parser.add_argument("--from", dest="source", type=Path, help="a small demo workspace to extend (else built)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.reps)))
        return
    if args.a is None:
        parser.error("--a: the checkout to compare with")
    sys.path.insert(0, str(HERE.parent))
    os.environ.setdefault("LSQA_READ_CACHE", "0")
    import bench_dashboard

    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "bench.duckdb"
        bench_dashboard.build_base(ws, args.source)
        info = bench_dashboard.extend(ws)
        print(f"workspace: {info['verdicts']:,} verdicts (bench_dashboard.py's)")
        ratios: dict[str, list[float]] = {"switch": [], "rerun": [], "uncached": []}
        for r in range(1, args.rounds + 1):
            load = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else ["?"]
            a = run_side(args.a.resolve(), ws, args.reps)
            b = run_side(args.b.resolve(), ws, args.reps)
            for k in ratios:
                ratios[k].append(b[k] / a[k])
            print(f"round {r} (load {' '.join(load)}): " + "; ".join(
                f"{k} A {a[k]:.2f} s, B {b[k]:.2f} s, B/A {b[k] / a[k]:.2f}" for k in ratios), flush=True)
        print("median B/A over the rounds: " + ", ".join(f"{k} {statistics.median(v):.2f}" for k, v in ratios.items()))


if __name__ == "__main__":
    main()
