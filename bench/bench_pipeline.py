"""Benchmark: passages, BM25 retrieval and fallback entity extraction on Les Misérables (issue 5).

    .venv/bin/python bench/bench_pipeline.py                # ~15 s
    .venv/bin/python bench/bench_pipeline.py --similarity   # + threshold calibration (~2 min)

Targets: split + BM25 build + 1,000 retrievals under 20 s; fallback entity extraction under 60 s;
peak memory under 2 GB. Figures go to docs/BENCHMARKS.md, "Pipeline (issue 5)".

Queries (seeded): 500 real NarrativeQA test questions, as question + both answers (the §5.1
query shape), and 500 sentences of the book itself (8-30 words), for which we also report how
often the passage holding the sentence is among the retrieved ones.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import sys
import time
import tracemalloc
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from lsqa.corpus.entities import entity_context, extract_entities  # noqa: E402
from lsqa.corpus.retrieval import BookIndex, query_for, search  # noqa: E402
from lsqa.text.book import read_text, split_passages, story_span  # noqa: E402

SEED = 5


def data_dir() -> Path:
    return Path(os.environ.get("LSQA_DATA_DIR") or ROOT.parent / "shared" / "data")


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def build_queries(text: str, start: int, end: int, n: int = 1000):
    rng = random.Random(SEED)
    path = data_dir() / "narrativeqa" / "nqa_test_first3000_qaps.jsonl"
    rows = [json.loads(line) for line in open(path, encoding="utf-8")]
    nqa = [query_for(r["question"], [r["answer1"], r["answer2"]]) for r in rng.sample(rows, n // 2)]
    sentences = [m for m in re.finditer(r"[^.!?\n]*(?:\n[^.!?\n]+)*[.!?]", text[start:end])
                 if 8 <= len(m.group().split()) <= 30]
    picked = rng.sample(sentences, n - len(nqa))
    # Position of the sentence's first character (the match may begin with the preceding white space).
    own = [(" ".join(m.group().split()), start + m.start() + len(m.group()) - len(m.group().lstrip()))
           for m in picked]
    return nqa, own


def bench_retrieval(text: str, start: int, end: int) -> dict:
    t0 = time.perf_counter()
    passages = split_passages(text, start, end)
    t1 = time.perf_counter()
    index = BookIndex(passages)
    t2 = time.perf_counter()
    nqa, own = build_queries(text, start, end)
    t3 = time.perf_counter()
    for q in nqa:
        search(index, q, 4000)
    found = 0
    for q, pos in own:
        got = search(index, q, 4000)
        found += any(p.char_start <= pos < p.char_end for p in got.passages)
    t4 = time.perf_counter()
    return {"passages": len(passages), "split_s": t1 - t0, "bm25_build_s": t2 - t1, "queries": len(nqa) + len(own),
            "retrieve_s": t4 - t3, "ms_per_query": 1000 * (t4 - t3) / (len(nqa) + len(own)),
            "index_plus_1000_s": (t2 - t0) + (t4 - t3), "own_sentence_recall": found / len(own)}


def bench_entities(text: str, start: int, end: int) -> dict:
    t0 = time.perf_counter()
    chains = extract_entities(text, start, end)
    t1 = time.perf_counter()
    for e in chains.top(10):
        entity_context(text, e, 4000)
    t2 = time.perf_counter()
    return {"entities_s": t1 - t0, "n_entities": len(chains), "n_mentions": sum(e.n_mentions for e in chains),
            "top": [(e.name, e.n_mentions) for e in chains.top(8)], "context_top10_s": t2 - t1,
            "pronouns_attached": chains.params["n_pronouns_attached"]}


def traced(fn, *args) -> float:
    """Peak Python-heap MB while running ``fn`` (a separate, slower run)."""
    tracemalloc.start()
    fn(*args)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 2**20


def bench_similarity() -> dict:
    import numpy as np

    from lsqa.judging import similarity as S

    rows = [json.loads(line) for line in open(data_dir() / "narrativeqa" / "nqa_test_first3000_qaps.jsonl",
                                               encoding="utf-8")]
    rng = random.Random(0)
    by_story = defaultdict(list)
    for i, r in enumerate(rows):
        by_story[r["document_id"]].append(i)
    same, other = [], []
    for i, r in enumerate(rows):
        same.append(rng.choice([j for j in by_story[r["document_id"]] if j != i]))
        while True:
            j = rng.randrange(len(rows))
            if rows[j]["document_id"] != r["document_id"]:
                break
        other.append(j)
    t0 = time.perf_counter()
    a2 = [r["answer2"] for r in rows]
    pos = S.similarity(a2, [r["answer1"] for r in rows])
    neg_same = S.similarity(a2, [rows[j]["answer1"] for j in same])
    neg_other = S.similarity(a2, [rows[j]["answer1"] for j in other])
    elapsed = time.perf_counter() - t0
    threshold, balanced = S.choose_threshold(pos, neg_same)
    t = S.DEFAULT_THRESHOLD
    return {"pairs": len(rows), "encode_s": elapsed, "best_threshold": threshold, "best_balanced_accuracy": balanced,
            "auc_same_story": S.auc(pos, neg_same), "auc_other_story": S.auc(pos, neg_other),
            "pos_mean": float(pos.mean()), "pos_median": float(np.median(pos)),
            "neg_same_mean": float(neg_same.mean()), "neg_same_median": float(np.median(neg_same)),
            "neg_other_mean": float(neg_other.mean()),
            "at_default": {"threshold": t, "accept_pos": float((pos >= t).mean()),
                           "reject_same": float((neg_same < t).mean()), "reject_other": float((neg_other < t).mean())}}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--similarity", action="store_true", help="also calibrate the similarity threshold")
    parser.add_argument("--no-tracemalloc", action="store_true", help="skip the (slower) traced memory runs")
    args = parser.parse_args(argv)

    path = data_dir() / "books" / "pg135_les_miserables.txt"
    text = read_text(path)
    span = story_span(text)
    words = len(text[span.start:span.end].split())
    print(f"Les Misérables: {len(text):,} characters, story {words:,} words; python {sys.version.split()[0]}, "
          f"{os.cpu_count()} CPUs")

    r = bench_retrieval(text, span.start, span.end)
    print(f"passages: {r['passages']:,} in {r['split_s']:.2f} s; BM25 build {r['bm25_build_s']:.2f} s")
    print(f"retrieval: {r['queries']} queries (500 NarrativeQA q+answers, 500 own sentences), budget 4,000 tokens: "
          f"{r['retrieve_s']:.2f} s = {r['ms_per_query']:.1f} ms/query; own-sentence passage retrieved "
          f"{100 * r['own_sentence_recall']:.1f}%")
    print(f"index + 1,000 retrievals: {r['index_plus_1000_s']:.2f} s (target < 20 s)")

    e = bench_entities(text, span.start, span.end)
    print(f"fallback entities: {e['entities_s']:.2f} s (target < 60 s), {e['n_entities']} entities, "
          f"{e['n_mentions']:,} mentions, {e['pronouns_attached']:,} pronouns attached; "
          f"entity_context for the top 10: {e['context_top10_s']:.2f} s")
    print("  top:", ", ".join(f"{n} ({c})" for n, c in e["top"]))
    print(f"peak RSS so far: {rss_mb():.0f} MB (target < 2048 MB)")

    if not args.no_tracemalloc:
        index_peak = traced(lambda: BookIndex(split_passages(text, span.start, span.end)))
        ent_peak = traced(extract_entities, text, span.start, span.end)
        print(f"tracemalloc peaks: split + BM25 build {index_peak:.0f} MB; fallback entities {ent_peak:.0f} MB")

    if args.similarity:
        s = bench_similarity()
        d = s["at_default"]
        print(f"similarity calibration on {s['pairs']} NarrativeQA questions ({s['encode_s']:.0f} s encoding): "
              f"best threshold {s['best_threshold']:.3f} (balanced accuracy {s['best_balanced_accuracy']:.3f}); "
              f"AUC same-story {s['auc_same_story']:.3f}, other-story {s['auc_other_story']:.3f}")
        print(f"  positives mean {s['pos_mean']:.3f} median {s['pos_median']:.3f}; same-story negatives mean "
              f"{s['neg_same_mean']:.3f} median {s['neg_same_median']:.3f}; other-story mean {s['neg_other_mean']:.3f}")
        print(f"  at threshold {d['threshold']}: accepts {100 * d['accept_pos']:.1f}% of positives, rejects "
              f"{100 * d['reject_same']:.1f}% same-story and {100 * d['reject_other']:.1f}% other-story negatives")
    print(f"peak RSS of the process: {rss_mb():.0f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
