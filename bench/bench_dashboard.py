"""Benchmark: the dashboard on a workspace with 50,000+ verdicts.

Run:  .venv/bin/python bench/bench_dashboard.py            (about 1 minute on 2 cores)
      .venv/bin/python bench/bench_dashboard.py --from db/demo_small.duckdb   (reuse a built demo)

The workspace: the small demo (configs/demo_small.toml, real verdicts of the embedded judges),
extended with SYNTHETIC rows written through lsqa.store's insert functions — 7 synthetic systems
and 1,000 synthetic question ids (copies of the 24 demo questions), whose answers and verdicts
are REPLICATED from the real demo rows (labels, raw labels, evidence, raw completions cycled in
order). The paper-scale side-by-side judge ``bench-sxs`` has 7 systems × 200 questions × all 21
pairs = 4,200 verdicts (paper §3.2, c = 200).

Measured:
  1. the Audit page's first render: a fresh AppTest session running app.py → pages/audit.py (the
     server has already imported lsqa, as a running dashboard has), median of 5 sessions; and the
     audit queue query alone;
  2. the Leaderboard's recompute after an override: one override saved, then the Bradley-Terry fit
     with 1,000 bootstrap rounds on bench-sxs with human overrides, median of 5; plus the whole
     Leaderboard page rerun when the overrides are switched on, in the default view (one judge)
     and with "All judges", for information.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from itertools import combinations, cycle
from pathlib import Path

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # as the dashboard does (app.py): threaded BLAS is erratic on 2 cores
for _name, _value in (("HF_HUB_OFFLINE", "1"), ("TRANSFORMERS_OFFLINE", "1"), ("LITELLM_LOCAL_MODEL_COST_MAP", "True"),
                      # The reads themselves, as in the first render after any change: repeated renders of
                      # an unchanged workspace would otherwise come from lsqa.store.workspace_cache.
                      ("LSQA_READ_CACHE", "0")):
    os.environ.setdefault(_name, _value)

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from lsqa import audit, store  # noqa: E402
from lsqa.figures import analysis  # noqa: E402
from lsqa.store import corpus as corpus_store  # noqa: E402
from lsqa.store import results as results_store  # noqa: E402
from lsqa.store import reviews as reviews_store  # noqa: E402
from lsqa.store.bulk import fetch_dicts  # noqa: E402
from lsqa.store.verdict_ids import judgment_id  # noqa: E402

N_SYSTEMS = 7
N_QUESTIONS = 1000       # synthetic question ids
PAPER_QUESTIONS = 200    # c: questions per system pair for the paper-scale judge
TARGET_AUDIT_S = 2.0
TARGET_RECOMPUTE_S = 0.5
CONTEXTS = ["none", "retrieval:4000", "full"]


def build_base(path: Path, source: Path | None) -> float:
    t0 = time.perf_counter()
    if source:
        shutil.copy(source, path)
    else:
        from lsqa.study.demo import build_demo

        for _ in build_demo(path, scale="small"):
            pass
    return time.perf_counter() - t0


def extend(ws: Path) -> dict:
    """Synthetic questions, systems, answers and verdicts replicated from the real demo rows."""
    with store.connect(ws) as con:
        real_q = fetch_dicts(con, "SELECT * FROM questions WHERE id IN (SELECT DISTINCT question_id FROM judgments)"
                                  " ORDER BY id")
        real_a = fetch_dicts(con, "SELECT text, status FROM answers ORDER BY question_id, system_name")
        real = {kind: fetch_dicts(con, "SELECT * FROM judgments WHERE judge = ? ORDER BY id", [judge])
                for kind, judge in (("sxs", "lexical-sxs-fc"), ("gtsxs", "lexical-gt-sxs"),
                                    ("abs", "lexical-autoais-fc"), ("gt", "lexical-gt"), ("sim", "minilm-similarity"))}
    systems = [f"bench-sys-{i + 1}" for i in range(N_SYSTEMS)]
    questions = []
    for k in range(N_QUESTIONS):
        q = real_q[k % len(real_q)]
        questions.append({"id": f"bench:q{k:05d}", "document_id": q["document_id"], "origin": "imported",
                          "text": q["text"], "reference_1": q["reference_1"], "reference_2": q["reference_2"],
                          "source_index": 100_000 + k})
    answers_src = cycle(real_a)
    answers = [{"question_id": q["id"], "system_name": s, **next(answers_src)} for q in questions for s in systems]

    def copy(src: dict, judge: str, kind: str, qid: str, a: str, b: str = "", order: str = "ab", ref: str = "") -> dict:
        key = dict(judge=judge, kind=kind, question_id=qid, system_a=a, system_b=b, shown_order=order, reference=ref)
        return {"id": judgment_id(**key), **key, "family": src["family"], "label": src["label"], "raw_label": src["raw_label"],
                "score": src["score"], "evidence": src["evidence"], "status": src["status"], "raw": src["raw"],
                "prompt_id": src["prompt_id"], "prompt_version": src["prompt_version"]}

    rows: list[dict] = []
    pairs = list(combinations(systems, 2))
    src = cycle(real["sxs"])
    for q in questions[:PAPER_QUESTIONS]:  # the paper-scale judge: 200 x 21 = 4,200
        for a, b in pairs:
            s = next(src)
            rows.append(copy(s, "bench-sxs", "pairwise", q["id"], a, b, s["shown_order"]))
    src = cycle(real["sxs"])
    for q in questions[PAPER_QUESTIONS:3 * PAPER_QUESTIONS]:  # both orders: 400 x 21 x 2
        for a, b in pairs:
            for order in ("ab", "ba"):
                rows.append(copy(next(src), "bench-sxs-both", "pairwise", q["id"], a, b, order))
    src = cycle(real["gtsxs"])
    for q in questions[:PAPER_QUESTIONS]:
        for a, b in pairs:
            rows.append(copy(next(src), "bench-gt-sxs", "groundtruth-pairwise", q["id"], a, b, ref="1"))
    src_abs, src_gt, src_sim = cycle(real["abs"]), cycle(real["gt"]), cycle(real["sim"])
    for q in questions:
        for s in systems:
            rows.append(copy(next(src_abs), "bench-autoais", "absolute", q["id"], s))
            rows.append(copy(next(src_sim), "bench-similarity", "similarity", q["id"], s))
            for ref in ("1", "2"):
                rows.append(copy(next(src_gt), "bench-gt", "groundtruth", q["id"], s, ref=ref))
    with store.write(ws) as con:
        corpus_store.insert_questions(con, questions)
        results_store.upsert_systems(con, [{"name": s, "model": "bench/replicated", "context": CONTEXTS[i % 3]}
                                           for i, s in enumerate(systems)])
        results_store.insert_answers(con, answers)
        results_store.insert_judgments(con, rows)
    # Some human work, so the review joins have rows to read.
    with store.write(ws) as con:
        for i, r in enumerate(rows[:600:3]):
            reviews_store.add_review(con, annotator=("ann", "bea")[i % 2], judgment_id=r["id"],
                                     action="confirm", label=r["label"])
    with store.connect(ws) as con:
        n = int(con.execute("SELECT count(*) FROM judgments").fetchone()[0])
        n_paper = int(con.execute("SELECT count(*) FROM judgments WHERE judge = 'bench-sxs'").fetchone()[0])
    return {"synthetic": len(rows), "verdicts": n, "paper_judge": n_paper, "questions": len(questions),
            "systems": len(systems)}


def time_audit_page(ws: Path, sessions: int = 5) -> list[float]:
    from streamlit.testing.v1 import AppTest

    os.environ["LSQA_WORKSPACE"] = str(ws)
    warm = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)  # imports, as in a running server
    warm.run()
    times = []
    for i in range(sessions):
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
        at.session_state["annotator"] = f"bench-{i}"
        at.run()
        at.switch_page("pages/audit.py")
        t0 = time.perf_counter()
        at.run()
        times.append(time.perf_counter() - t0)
        assert not at.exception, at.exception
        assert at.title[0].value == "Audit judge verdicts"
    return times


COLD = """
import os, sys, time
from streamlit.testing.v1 import AppTest
at = AppTest.from_file(sys.argv[1], default_timeout=120)
at.session_state["annotator"] = "cold"
at.switch_page("pages/audit.py")
t0 = time.perf_counter()
at.run()
assert not at.exception and at.title[0].value == "Audit judge verdicts", at.exception
print(time.perf_counter() - t0)
"""


def time_audit_cold(ws: Path) -> float:
    """The audit page as the first thing a new process renders (imports of lsqa, numpy, duckdb included)."""
    import subprocess

    out = subprocess.run([sys.executable, "-c", COLD, str(ROOT / "app.py")], env={**os.environ, "LSQA_WORKSPACE": str(ws)},
                         capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def time_leaderboard_after_override(ws: Path, rounds: int = 5) -> tuple[list[float], list[float], dict[str, float]]:
    from streamlit.testing.v1 import AppTest

    with store.connect(ws) as con:
        targets = fetch_dicts(con, "SELECT id, label FROM judgments WHERE judge = 'bench-sxs' AND label IN ('A', 'B')"
                                   " ORDER BY id LIMIT ?", [rounds])
    analysis.ranking(ws, "bench-sxs", use_overrides=True, bootstrap=1000)  # numpy/scipy warm
    recompute, with_write = [], []
    for t in targets:
        t0 = time.perf_counter()
        audit.review(ws, "bench", t["id"], "B" if t["label"] == "A" else "A")
        t1 = time.perf_counter()
        result = analysis.ranking(ws, "bench-sxs", use_overrides=True, bootstrap=1000)
        t2 = time.perf_counter()
        recompute.append(t2 - t1)
        with_write.append(t2 - t0)
        assert result["n_comparisons"] > 0
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.session_state["annotator"] = "bench"
    at.run()
    at.switch_page("pages/leaderboard.py")
    at.run()
    page = {}
    for view in (at.selectbox(key="lb_judge").value, "all"):  # the default (one judge), then every judge
        at.selectbox(key="lb_judge").set_value(view)
        at.toggle(key="lb_overrides").set_value(False)
        at.run()
        at.toggle(key="lb_overrides").set_value(True)
        t0 = time.perf_counter()
        at.run()
        page[view] = time.perf_counter() - t0
        assert not at.exception, at.exception
    return recompute, with_write, page


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--from", dest="source", type=Path, help="copy this demo workspace instead of building one")
    parser.add_argument("--keep", type=Path, help="also keep the bench workspace at this path")
    args = parser.parse_args()
    print(f"python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "bench.duckdb"
        built = build_base(ws, args.source)
        print(f"demo workspace {'copied' if args.source else 'built'} in {built:.1f} s")
        t0 = time.perf_counter()
        info = extend(ws)
        print(f"SYNTHETIC rows (replicated real demo verdicts across synthetic question ids/systems, written "
              f"through lsqa.store): {info['synthetic']:,} verdicts, {info['questions']:,} questions × "
              f"{info['systems']} systems, in {time.perf_counter() - t0:.1f} s")
        print(f"workspace: {info['verdicts']:,} verdicts; paper-scale judge bench-sxs: {info['paper_judge']:,} "
              f"comparisons (7 systems × 200 questions × 21 pairs)")

        q_times = []
        for _ in range(5):
            t0 = time.perf_counter()
            q = audit.queue(ws, audit.Filters(reviewed="not_mine"), "someone")
            q_times.append(time.perf_counter() - t0)
        print(f"audit queue query (first page of {q['total']:,}): median {statistics.median(q_times) * 1000:.0f} ms")

        pages = time_audit_page(ws)
        med = statistics.median(pages)
        print(f"Audit page first render (AppTest, 5 fresh sessions): median {med:.2f} s, max {max(pages):.2f} s "
              f"— target < {TARGET_AUDIT_S} s {'OK' if med < TARGET_AUDIT_S else 'MISSED'}")

        cold = time_audit_cold(ws)
        print(f"Audit page as the first render of a new process (imports included): {cold:.2f} s")

        recompute, with_write, page = time_leaderboard_after_override(ws)
        med = statistics.median(recompute)
        print(f"Leaderboard recompute after an override (bench-sxs, 4,200 comparisons, 1,000 bootstrap rounds): "
              f"median {med:.3f} s (with saving the override: {statistics.median(with_write):.3f} s) "
              f"— target < {TARGET_RECOMPUTE_S} s {'OK' if med < TARGET_RECOMPUTE_S else 'MISSED'}")
        default, every = page
        print(f"whole Leaderboard page rerun with overrides switched on, the default view ({default}, 1,000 rounds, "
              f"its corrected estimates): {page[default]:.2f} s; 'All judges' (6 side-by-side judges ranked with "
              f"1,000 rounds, 6 yes/no judges' accuracy): {page[every]:.2f} s")
        if args.keep:
            shutil.copy(ws, args.keep)
            print(f"kept the bench workspace at {args.keep}")


if __name__ == "__main__":
    main()
