"""The paper's design at scale on *Les Misérables* with the embedded models (issue 15, "Measured").

7 systems (no context, BM25 1k/2k/4k/8k/16k, the full book) × N generated questions, one
side-by-side judge with the **full book** on all 21 system pairs (N × 21 judge calls, each
carrying the whole 3.3 MB book). Prints wall time, calls, workspace size, and ``lsqa plan``'s
prediction beside what the run made:

    .venv/bin/python bench/bench_scale.py --questions 200          # the paper's scale
    .venv/bin/python bench/bench_scale.py --questions 20           # a scaled run

Targets: workspace < 200 MB at 200 questions; plan calls = calls the run made; plan input tokens
within 5% of the tokens recorded. Plans are made twice: after question generation (answers not
made yet: the judge prompts hold stand-in answers) and after the answers (exact requests).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from lsqa import store  # noqa: E402
from lsqa.config.study import run_config_from_dict  # noqa: E402
from lsqa.corpus.ingest import ingest_book  # noqa: E402
from lsqa.study import pipeline  # noqa: E402
from lsqa.study.plan import plan  # noqa: E402

CONTEXTS = ("none", "retrieval:1000", "retrieval:2000", "retrieval:4000", "retrieval:8000", "retrieval:16000", "full")


def study(n_questions: int, *, systems: bool = True, judge: bool = True) -> dict:
    return {
        "documents": ["Les Misérables"], "questions": "generate", "max_questions": n_questions,
        "sample": n_questions, "seed": 0, "max_concurrency": 2,
        "generation": {"model": "lsqa/template-questions", "entities": (n_questions + 1) // 2,
                       "questions_per_entity": 2, "context_tokens": 20000},
        "systems": [{"name": f"extractive-{c.replace(':', '')}", "model": "lsqa/extractive", "context": c,
                     "max_context_tokens": 1_000_000} for c in CONTEXTS] if systems else [],
        "judges": [{"name": "lexical-sxs-fullbook", "model": "lsqa/lexical-judge", "kind": "pairwise",
                    "context": "full", "max_context_tokens": 1_000_000}] if judge else [],
    }


def recorded(workspace: Path) -> dict:
    """What the study's answers and verdicts cost in calls: every row's call counted once per row
    (a call that served two rows counts twice, as the plan counts requests)."""
    with store.connect(workspace) as con:
        rows = con.execute("""
            SELECT 'answers' AS stage, c.prompt_tokens FROM answers a JOIN llm_calls c ON c.cache_key = a.llm_call_key
            UNION ALL
            SELECT 'judge', c.prompt_tokens FROM judgments j JOIN llm_calls c ON c.cache_key = j.llm_call_key
        """).fetchall()
        calls = con.execute("SELECT count(*) FROM llm_calls").fetchone()[0]
        texts = con.execute("SELECT count(*), sum(length(text)) FROM prompt_texts").fetchone()
    return {"requests": len(rows), "tokens": sum(t or 0 for _, t in rows), "llm_calls": calls,
            "prompt_texts": texts[0], "prompt_text_chars": texts[1] or 0}


def show_plan(label: str, p) -> None:
    print(f"plan {label}: {p.calls:,} calls ({p.cached:,} cached, {p.new_calls:,} new), "
          f"{p.input_tokens:,} input tokens, cost ${p.cost_usd}")
    for s in p.stages:
        print(f"    {s.stage:<28} {s.calls:>6,} calls {s.cached:>6,} cached {s.input_tokens:>14,} tokens")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--workspace", type=Path, default=None, help="default: a new file in a temp folder")
    args = parser.parse_args(argv)
    data = Path(os.environ.get("LSQA_DATA_DIR") or ROOT.parent / "shared" / "data")
    workspace = args.workspace or Path(tempfile.mkdtemp(prefix="bench_scale_")) / "scale.duckdb"
    n = args.questions
    t0 = time.monotonic()
    book = data / "books" / "pg135_les_miserables.txt"
    book_bytes = book.stat().st_size
    ingest_book(workspace, book, title="Les Misérables")
    size_ingest = workspace.stat().st_size
    t_ingest = time.monotonic() - t0

    t = time.monotonic()
    gen = pipeline.run(workspace, run_config_from_dict(study(n, systems=False, judge=False)))
    t_gen = time.monotonic() - t
    size_gen = workspace.stat().st_size
    with store.connect(workspace) as con:
        n_q = con.execute("SELECT count(*) FROM questions WHERE origin = 'generated'").fetchone()[0]
    print(f"ingest {t_ingest:.1f} s, {size_ingest / 1e6:.1f} MB; question generation {t_gen:.1f} s: "
          f"{n_q} questions ({gen.to_dict()['calls_made']} calls)")

    full = run_config_from_dict(study(n))
    t = time.monotonic()
    before = plan(workspace, full)
    t_plan = time.monotonic() - t
    show_plan(f"before the answers ({t_plan:.1f} s)", before)

    t = time.monotonic()
    answered = pipeline.run(workspace, run_config_from_dict(study(n, judge=False))).to_dict()
    t_answers = time.monotonic() - t
    size_answers = workspace.stat().st_size
    t = time.monotonic()
    exact = plan(workspace, full)
    t_plan2 = time.monotonic() - t
    show_plan(f"before the judge ({t_plan2:.1f} s)", exact)

    t = time.monotonic()
    judged = pipeline.run(workspace, full).to_dict()
    t_judge = time.monotonic() - t
    size = workspace.stat().st_size
    rec = recorded(workspace)
    judge_stage = next(s for s in judged["stages"] if s["stage"].startswith("judge:"))
    judge_requests = judge_stage["calls_made"] + judge_stage["calls_cached"] + judge_stage["calls_failed"]
    run_requests = (answered["calls_made"] + answered["calls_cached"] + answered["calls_failed"] + judge_requests)
    print(f"generation + answers: {answered['calls_made']:,} calls made, {answered['calls_cached']:,} cached in the run, "
          f"{answered['calls_failed']} failed, {t_answers:.1f} s")
    print(f"judge: {judge_stage['calls_made']:,} calls made, {judge_stage['calls_cached']:,} served by an identical "
          f"request of the run, {judge_stage['calls_failed']} failed, {t_judge:.1f} s")
    print(f"plan before the answers: {before.calls:,} calls vs {run_requests:,} requests the run made "
          f"({'equal' if before.calls == run_requests else 'DIFFERENT'}); "
          f"{before.new_calls:,} new vs {answered['calls_made'] + judge_stage['calls_made']:,} made "
          "(identical answers let one judge call serve two pairs)")
    judge_plan = next(s for s in exact.stages if s.stage.startswith("judge:"))
    print(f"plan before the judge: {judge_plan.calls:,} judge calls, {judge_plan.calls - judge_plan.cached:,} new "
          f"vs {judge_requests:,} requests, {judge_stage['calls_made']:,} made "
          f"({'equal' if judge_plan.calls - judge_plan.cached == judge_stage['calls_made'] else 'DIFFERENT'})")
    dev = (before.input_tokens - rec["tokens"]) / rec["tokens"] if rec["tokens"] else float("nan")
    print(f"input tokens: plan {before.input_tokens:,} vs recorded {rec['tokens']:,} over the run's "
          f"{rec['requests']:,} answers and verdicts ({dev:+.2%}; target within 5%)")
    wall = time.monotonic() - t0
    print(f"workspace: {size / 1e6:.1f} MB (after ingest {size_ingest / 1e6:.1f} MB, after generation "
          f"{size_gen / 1e6:.1f} MB); {rec['llm_calls']:,} stored calls, {rec['prompt_texts']:,} stored contexts "
          f"({rec['prompt_text_chars'] / 1e6:.1f} M chars); growth per judge call "
          f"{(size - size_answers) / max(1, judge_stage['calls_made']) / 1e3:.1f} kB "
          f"({(size - size_answers) / max(1, judge_stage['calls_made']) / book_bytes:.2%} of the book)")
    print(f"wall time {wall:.1f} s for {n} questions × 7 systems, {judge_requests:,} full-book judge requests")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
