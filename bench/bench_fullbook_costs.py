"""What one full-book request costs the plan and the embedded judge, before and after issue 15's
speed-ups, side by side in one process (docs/BENCHMARKS.md, "Paper-scale studies").

Makes a small paper-design workspace on *Les Misérables* (bench_scale's study: N questions, 7
systems answered, the full-book side-by-side judge not yet run), then alternates, ``--rounds``
times:

* ``lsqa plan`` of the study (N × 21 full-book judge requests and N × 7 answers) with the code
  as it is ("after") and with the old per-request work put back ("before": the cache key
  encodes the whole rendered prompt to JSON, ``str.find`` looks for the book, every prompt file
  is read and parsed for every request);
* the embedded ``lsqa/lexical-judge`` on the plan's full-book judge requests: "after" as it is,
  "before" with BM25 scored by ``rank_bm25.BM25Okapi.get_scores`` and the context cut out by
  splitting the prompt into lines (the sentence index of the book is built once for both).

Both sides must give the same plan and the same verdicts; the ratio is before / after.

    nice .venv/bin/python bench/bench_fullbook_costs.py --questions 2 --rounds 3
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from bench_scale import study  # noqa: E402

from lsqa.config.study import run_config_from_dict  # noqa: E402
from lsqa.corpus.ingest import ingest_book  # noqa: E402
from lsqa.llm.embedded import prompt_reading, respond  # noqa: E402
from lsqa.llm.embedded.sentence_index import OVERLAP_BONUS, SentenceIndex, index_for  # noqa: E402
from lsqa.llm.keys import semantic_params  # noqa: E402
from lsqa.prompting import templates as prompts  # noqa: E402
from lsqa.study import pipeline  # noqa: E402
from lsqa.study import plan as plan_mod  # noqa: E402
from lsqa.text import prompt_parts  # noqa: E402


def _whole_key(request) -> str:
    payload = prompt_parts.canonical_json({"model": request.model, "messages": request.messages,
                                           "params": semantic_params(request.params)})
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def _old_scores(self, query):
    if self._bm25 is None or not query:
        return np.zeros(len(self.spans))
    terms = list(dict.fromkeys(query))
    wanted = frozenset(terms)
    overlap = np.fromiter((len(t & wanted) for t in self.token_sets), dtype=float, count=len(self.token_sets))
    return np.maximum(self._bm25.get_scores(terms), 0.0) + OVERLAP_BONUS * overlap


def _old_split_context(text):
    lines = text.split("\n")
    start = next((i for i, line in enumerate(lines) if line.strip() == "# CONTEXT"), None)
    if start is None:
        return None, text
    end = next((j for j in range(start + 1, len(lines)) if lines[j].strip() == "# CONTEXT END"), None)
    if end is None:
        return "\n".join(lines[start + 1:]), "\n".join(lines[:start])
    return "\n".join(lines[start + 1: end]), "\n".join(lines[:start] + lines[end + 1:])


@contextlib.contextmanager
def _patched(pairs):
    saved = [(obj, name, getattr(obj, name)) for obj, name, _ in pairs]
    for obj, name, value in pairs:
        setattr(obj, name, value)
    try:
        yield
    finally:
        for obj, name, value in saved:
            setattr(obj, name, value)


PLAN_BEFORE = [(plan_mod, "cache_key", _whole_key), (prompts, "_parse_known_file", prompts.parse_prompt_file),
               (prompt_parts, "_find", lambda content, ctx, pos: content.find(ctx, pos))]
JUDGE_BEFORE = [(SentenceIndex, "scores", _old_scores), (prompt_reading, "split_context", _old_split_context)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--questions", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    data = Path(os.environ.get("LSQA_DATA_DIR") or ROOT.parent / "shared" / "data")
    workspace = Path(tempfile.mkdtemp(prefix="bench_fullbook_")) / "costs.duckdb"
    ingest_book(workspace, data / "books" / "pg135_les_miserables.txt", title="Les Misérables")
    pipeline.run(workspace, run_config_from_dict(study(args.questions, judge=False)))
    config = run_config_from_dict(study(args.questions))

    judge_requests = []
    add = plan_mod._Planner.add

    def recording_add(self, stage, request, **kw):
        if stage.startswith("judge:"):
            judge_requests.append(request)
        return add(self, stage, request, **kw)

    with _patched([(plan_mod._Planner, "add", recording_add)]):
        reference = plan_mod.plan(workspace, config).to_dict()  # also warms imports and memos
    n_requests = reference["calls"]
    index_for(prompt_reading.read_prompt(judge_requests[0].messages).context)  # the book's index, built once

    times = {("plan", "before"): [], ("plan", "after"): [], ("judge", "before"): [], ("judge", "after"): []}
    verdicts = {}
    for _ in range(args.rounds):
        for side in ("before", "after"):
            with _patched(PLAN_BEFORE if side == "before" else []):
                t = time.perf_counter()
                got = plan_mod.plan(workspace, config).to_dict()
                times[("plan", side)].append((time.perf_counter() - t) / n_requests)
            assert got == reference, f"the {side} plan differs"
            with _patched(JUDGE_BEFORE if side == "before" else []):
                t = time.perf_counter()
                out = [respond("lsqa/lexical-judge", r.messages)[0] for r in judge_requests]
                times[("judge", side)].append((time.perf_counter() - t) / len(judge_requests))
            assert verdicts.setdefault("all", out) == out, f"the {side} verdicts differ"

    print(f"{args.questions} questions: plan of {n_requests} requests ({len(judge_requests)} full-book judge "
          f"requests), {args.rounds} rounds, same plan and same verdicts before and after")
    for what, label in (("plan", "plan, per request"), ("judge", "lsqa/lexical-judge, per full-book call")):
        before = statistics.median(times[(what, "before")])
        after = statistics.median(times[(what, "after")])
        print(f"{label:<40} before {before * 1e3:8.1f} ms   after {after * 1e3:7.1f} ms   ratio {before / after:5.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
