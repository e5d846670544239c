"""Benchmark of the LLM layer (issue 4): throughput against a local server, then a cached rerun.

2,000 distinct calls go through litellm's real HTTP path (``openai/gpt-4o-mini`` with
``api_base`` pointing at tests/support/llm_server.py in a separate process, 100 ms per answer) at
concurrency 16. The ideal time is 2,000 × 0.1 s / 16 = 12.5 s; the target is 1.3× that.
Then the same 2,000 calls again, all from the workspace cache: the target is under 3 % of the
first run. Every call of the first run is written to a fresh workspace as it finishes.

    .venv/bin/python bench/bench_llm.py [--calls 2000] [--concurrency 16] [--latency 0.1]

Exit status 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ["OPENAI_API_KEY"] = "sk-bench-not-a-real-key-0000000000"

from lsqa import llm  # noqa: E402
from lsqa.store import connect  # noqa: E402

THROUGHPUT_TARGET = 1.3   # × the ideal time
CACHED_TARGET = 0.03      # cached rerun / first run


class FullCollections:
    """Counts the garbage collector's full (generation 2) collections and how long they paused."""

    def __init__(self):
        self.count, self.seconds, self._started = 0, 0.0, 0.0

    def __call__(self, phase: str, info: dict) -> None:
        if info["generation"] != 2:
            return
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.count += 1
            self.seconds += time.perf_counter() - self._started

    def __enter__(self) -> "FullCollections":
        gc.callbacks.append(self)
        return self

    def __exit__(self, *exc) -> None:
        gc.callbacks.remove(self)


def start_server(latency: float) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.support.llm_server", "--latency", str(latency)],
        cwd=ROOT, stdout=subprocess.PIPE, text=True,
    )
    line = proc.stdout.readline()
    if not line.startswith("PORT "):
        proc.kill()
        raise SystemExit(f"benchmark server did not start: {line!r}")
    return proc, f"http://127.0.0.1:{int(line.split()[1])}/v1"


async def timed_gather(call, calls: int, concurrency: int) -> float:
    """Seconds to await ``call(i)`` for every i < ``calls``, at most ``concurrency`` at once."""
    gate = asyncio.Semaphore(concurrency)

    async def one(i: int):
        async with gate:
            await call(i)

    start = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(calls)))
    return time.perf_counter() - start


def plain_litellm_seconds(api_base: str, calls: int, concurrency: int) -> float:
    """The same calls through bare ``litellm.acompletion`` under a semaphore: what litellm alone costs
    on this machine right now, so lsqa's own overhead is read as a ratio measured in the same run."""
    module = llm.litellm()

    def call(i: int):
        return module.acompletion(model="openai/gpt-4o-mini", api_base=api_base, temperature=0.0, max_tokens=32,
                                  messages=[{"role": "user", "content": f"Baseline question {i}?"}])

    return asyncio.run(timed_gather(call, calls, concurrency))


def raw_http_seconds(api_base: str, calls: int, concurrency: int) -> float:
    """The same number of requests posted with aiohttp alone (litellm's own HTTP library): the floor
    that the server and the loopback network set on this machine right now, with no LLM library."""
    import aiohttp

    async def run() -> float:
        async with aiohttp.ClientSession(headers={"Authorization": "Bearer sk-bench"}) as session:
            async def post(i: int):
                body = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": f"Floor question {i}?"}]}
                async with session.post(api_base + "/chat/completions", json=body) as response:
                    await response.json()

            return await timed_gather(post, calls, concurrency)

    return asyncio.run(run())


def server_stats(api_base: str) -> dict:
    with urllib.request.urlopen(api_base + "/stats", timeout=5) as response:
        return json.loads(response.read())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--latency", type=float, default=0.1)
    args = parser.parse_args(argv)

    proc, api_base = start_server(args.latency)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            workspace = Path(tmp) / "bench.duckdb"
            params = {"api_base": api_base, "temperature": 0.0, "max_tokens": 32}

            def request(i: int, tag: str = "q") -> llm.LLMRequest:
                text = f"Question {tag}{i}: who carries the candlesticks in chapter {i % 97}? Answer briefly."
                return llm.LLMRequest("openai/gpt-4o-mini", [{"role": "user", "content": text}], params, "bench", "1")

            # Warm-up outside the timing: litellm's import (~3 s) and its HTTP client.
            llm.complete_many(workspace, [request(i, "warm") for i in range(args.concurrency)],
                              max_concurrency=args.concurrency)
            before = server_stats(api_base)["requests"]

            requests = [request(i) for i in range(args.calls)]
            with FullCollections() as collections:
                first = llm.complete_many(workspace, requests, max_concurrency=args.concurrency)
            stats = server_stats(api_base)
            second = llm.complete_many(workspace, requests, max_concurrency=args.concurrency)
            after = server_stats(api_base)["requests"]
            with connect(workspace) as con:
                stored = con.execute("SELECT count(*) FROM llm_calls WHERE prompt_id = 'bench'").fetchone()[0]
            baseline_s = plain_litellm_seconds(api_base, args.calls, args.concurrency)
            floor_s = raw_http_seconds(api_base, args.calls, args.concurrency)
    finally:
        proc.kill()
        proc.wait()

    ideal = args.calls * args.latency / args.concurrency
    t1, t2 = first.totals(), second.totals()
    ratio1 = first.elapsed_s / ideal
    ratio2 = second.elapsed_s / first.elapsed_s
    ok1 = ratio1 <= THROUGHPUT_TARGET and t1.calls_made == args.calls
    ok2 = ratio2 < CACHED_TARGET and t2.calls_cached == args.calls and after == stats["requests"]
    print(f"first run : {args.calls} calls, concurrency {args.concurrency}, server latency {args.latency * 1000:.0f} ms")
    print(f"            {first.elapsed_s:.2f} s (ideal {ideal:.2f} s) -> {ratio1:.3f}x ideal "
          f"(target <= {THROUGHPUT_TARGET}x) {'OK' if ok1 else 'MISSED'}")
    print(f"            made {t1.calls_made}, failed {t1.calls_failed}, server saw {stats['requests'] - before} "
          f"requests, max {stats['max_in_flight']} in flight; stored rows {stored}; cost ${t1.cost_usd_known:.6f}")
    print(f"            workspace writes: {first.store_writes} commits, held {first.store_write_s:.2f} s in total "
          f"({first.store_write_s / first.elapsed_s * 100:.0f}% of the run, {first.store_write_s / first.store_writes * 1000:.0f} ms "
          f"per commit, {args.calls / first.store_writes:.0f} calls each); a finished call was durable after at most "
          f"{first.store_max_delay_s * 1000:.0f} ms")
    print(f"            full garbage collections during the run: {collections.count}, "
          f"{collections.seconds * 1000:.0f} ms in all (every call in flight waits for them)")
    print(f"baseline  : plain litellm.acompletion, same calls and concurrency, no cache/retries/writes: "
          f"{baseline_s:.2f} s ({baseline_s / ideal:.3f}x ideal); lsqa / plain litellm = "
          f"{first.elapsed_s / baseline_s:.3f}")
    print(f"floor     : raw aiohttp posts, same server, no LLM library: {floor_s:.2f} s ({floor_s / ideal:.3f}x ideal); "
          f"lsqa / floor = {first.elapsed_s / floor_s:.3f}")
    print(f"cached run: {second.elapsed_s:.3f} s -> {ratio2 * 100:.2f}% of the first run "
          f"(target < {CACHED_TARGET * 100:.0f}%) {'OK' if ok2 else 'MISSED'}; "
          f"cached {t2.calls_cached}, new server requests {after - stats['requests']}")
    return 0 if ok1 and ok2 else 1


if __name__ == "__main__":
    raise SystemExit(main())
