"""What recording each call as sent before it leaves costs (issue 33: a kill cannot hide spend).

400 distinct calls at concurrency 16 go through litellm's real HTTP path to tests/support/llm_server.py
(100 ms per answer) in a fresh workspace, without a budget and with one, for each source tree
given, in turns (tree A none, tree A budget, tree B none, ...) so that the load of this shared
machine falls on every variant alike. Each variant runs in its own process (``--child``), warmed
up outside the timing. Printed per variant: the seconds of each round, their median, and the
``calls_in_flight`` rows left after the run (0: every record of a sent call was resolved when its
answer was stored).

    .venv/bin/python bench/bench_sent_marks.py [--calls 400] [--concurrency 16] [--latency 0.1]
        [--rounds 3] [--trees /work/main,.]

``--alternate N`` instead runs this checkout only, in one process: the record switched off and on
in turns, N times each, the calls in flight that had to wait for their record counted (the
quickest A/B on a loaded machine: no process start-up between the variants).

``--trees`` lists checkouts (their lsqa is imported through PYTHONPATH); the default is this one.
Variants (``--modes``): ``unrecorded`` is this code with the record switched off (the same
process layout, so the difference is what recording costs); on a checkout without the record
it is the same as ``none``. CPU seconds (this process) are printed beside wall seconds: on a
loaded machine they vary less.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def child(args) -> None:
    """One timed run in this process (lsqa from PYTHONPATH)."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ["OPENAI_API_KEY"] = "sk-bench-not-a-real-key-0000000000"
    from lsqa import llm
    from lsqa.llm import runner
    from lsqa.store import connect

    if args.mode == "unrecorded" and hasattr(runner, "_SentMarks"):
        async def unrecorded(self, job):  # the record switched off: what the same code costs without it
            return None

        runner._SentMarks.before_send = unrecorded

    params = {"api_base": args.api_base, "temperature": 0.0, "max_tokens": 32}

    def request(i: int, tag: str) -> "llm.LLMRequest":
        text = f"Question {tag}{i}: who carries the candlesticks in chapter {i % 97}? Answer briefly."
        return llm.LLMRequest("openai/gpt-4o-mini", [{"role": "user", "content": text}], params, "bench", "1")

    takes_ledger = "ledger" in inspect.signature(llm.complete_many).parameters
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp) / "bench.duckdb"

        def kwargs() -> dict:
            out: dict = {"max_concurrency": args.concurrency}
            if args.mode == "budget":
                out["budget"] = llm.Budget(1000.0, ledger="bench")
            elif takes_ledger:
                out["ledger"] = "bench"
            return out

        llm.complete_many(workspace, [request(i, "warm") for i in range(args.concurrency)], **kwargs())
        requests = [request(i, f"q{args.seed}-") for i in range(args.calls)]
        started, cpu = time.perf_counter(), time.process_time()
        results = llm.complete_many(workspace, requests, **kwargs())
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
        with connect(workspace) as con:
            left = con.execute("SELECT count(*) FROM calls_in_flight").fetchone()[0]
    made = results.totals().calls_made
    print(json.dumps({"seconds": seconds, "cpu": cpu, "made": made, "in_flight_left": left,
                      "record_writes": getattr(results, "sent_record_writes", None)}))


def alternate(args, api_base: str) -> None:
    """This checkout, one process: unrecorded and recorded (no budget) in turns."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ["OPENAI_API_KEY"] = "sk-bench-not-a-real-key-0000000000"
    from lsqa import llm
    from lsqa.llm import runner

    recorded = runner._SentMarks.before_send
    waits: list[float] = []

    async def timed(self, job):
        started = time.perf_counter()
        refusal = await recorded(self, job)
        waits.append(time.perf_counter() - started)
        return refusal

    async def unrecorded(self, job):
        return None

    params = {"api_base": api_base, "temperature": 0.0, "max_tokens": 32}

    def request(i: int, tag: str) -> "llm.LLMRequest":
        return llm.LLMRequest("openai/gpt-4o-mini", [{"role": "user", "content": f"Question {tag}{i}: who?"}],
                              params, "bench", "1")

    rows: dict[str, list[tuple[float, float, int]]] = {"unrecorded": [], "recorded": []}
    with tempfile.TemporaryDirectory() as tmp:
        for n in range(args.alternate):
            for variant in ("unrecorded", "recorded"):
                runner._SentMarks.before_send = unrecorded if variant == "unrecorded" else timed
                workspace = Path(tmp) / f"{variant}{n}.duckdb"
                llm.complete_many(workspace, [request(i, "warm") for i in range(args.concurrency)],
                                  max_concurrency=args.concurrency, ledger="bench")
                waits.clear()
                started, cpu = time.perf_counter(), time.process_time()
                llm.complete_many(workspace, [request(i, f"{variant}{n}-") for i in range(args.calls)],
                                  max_concurrency=args.concurrency, ledger="bench")
                rows[variant].append((time.perf_counter() - started, time.process_time() - cpu,
                                      sum(w > 0.005 for w in waits)))
    runner._SentMarks.before_send = recorded
    for variant, values in rows.items():
        print(f"{variant:>10}: wall median {statistics.median(v[0] for v in values):.2f} s "
              f"[{', '.join(f'{v[0]:.2f}' for v in values)}], CPU median {statistics.median(v[1] for v in values):.2f} s; "
              f"calls that waited > 5 ms for their record: {[v[2] for v in values]}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--trees", default=str(ROOT))
    parser.add_argument("--child", action="store_true")
    parser.add_argument("--mode", choices=("none", "budget", "unrecorded"), default="none")
    parser.add_argument("--modes", default="unrecorded,none,budget",
                        help="variants per tree: unrecorded (this code with the record switched off), none (no "
                             "budget), budget")
    parser.add_argument("--api-base", default="")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--alternate", type=int, default=0)
    args = parser.parse_args(argv)
    if args.child:
        child(args)
        return 0

    sys.path.insert(0, str(ROOT))
    server = subprocess.Popen([sys.executable, "-m", "tests.support.llm_server", "--latency", str(args.latency)],
                              cwd=ROOT, stdout=subprocess.PIPE, text=True)
    line = server.stdout.readline()
    if not line.startswith("PORT "):
        server.kill()
        raise SystemExit(f"benchmark server did not start: {line!r}")
    api_base = f"http://127.0.0.1:{int(line.split()[1])}/v1"
    if args.alternate:
        try:
            alternate(args, api_base)
        finally:
            server.kill()
            server.wait()
        return 0
    trees = [str(Path(t).resolve()) for t in args.trees.split(",")]
    seconds: dict[tuple[str, str], list[float]] = {}
    cpus: dict[tuple[str, str], list[float]] = {}
    left: dict[tuple[str, str], int] = {}
    writes: dict[tuple[str, str], object] = {}
    seed = 0
    try:
        for _ in range(args.rounds):
            for tree in trees:
                for mode in args.modes.split(","):
                    seed += 1
                    env = {**os.environ, "PYTHONPATH": tree}
                    out = subprocess.run([sys.executable, __file__, "--child", "--mode", mode, "--api-base", api_base,
                                          "--calls", str(args.calls), "--concurrency", str(args.concurrency),
                                          "--seed", str(seed)], env=env, capture_output=True, text=True, cwd=tree)
                    if out.returncode:
                        raise SystemExit(out.stderr[-3000:])
                    row = json.loads(out.stdout.strip().splitlines()[-1])
                    assert row["made"] == args.calls, row
                    seconds.setdefault((tree, mode), []).append(row["seconds"])
                    cpus.setdefault((tree, mode), []).append(row["cpu"])
                    left[(tree, mode)] = max(left.get((tree, mode), 0), row["in_flight_left"])
                    writes[(tree, mode)] = row["record_writes"]
    finally:
        server.kill()
        server.wait()
    ideal = args.calls * args.latency / args.concurrency
    print(f"{args.calls} calls, concurrency {args.concurrency}, server {args.latency * 1000:.0f} ms "
          f"(ideal {ideal:.2f} s), {args.rounds} rounds in turns")
    for (tree, mode), values in seconds.items():
        print(f"{tree:>30} {mode:>10}: median {statistics.median(values):.2f} s, CPU {statistics.median(cpus[(tree, mode)]):.2f} s "
              f"[{', '.join(f'{v:.2f}' for v in values)}]; recorded as sent in {writes[(tree, mode)]} transactions "
              f"(None: not counted); calls_in_flight rows left {left[(tree, mode)]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
