"""Benchmark: the fixed cost of one small import — CPU ms of importing a 1-line and a 10-line file of each kind.

What the suite pays thousands of times (the staged-import tables, the bad-input imports, every fixture that
ingests the NarrativeQA slice): for each kind, a CSV of 1 and of 10 rows imported into a fresh copy of one
base workspace (the slice tests/data/narrativeqa_slice ingested, ten verdicts of rater ``j`` imported, for the
reviews to review), and ``ingest_narrativeqa`` of the slice into a copy of an empty migrated workspace.
Also one declined file (a verdict whose label is a JSON number: restaged by the table reader).
Each import is timed alone (``time.process_time`` around the call: the copy of the workspace is outside), the
median of ``--repeat`` rounds printed; the kinds alternate within a round. Run it with each tree's lsqa:

    PYTHONPATH=/work/main  .venv/bin/python bench/bench_small_import.py [--repeat 15]
    PYTHONPATH=$PWD        .venv/bin/python bench/bench_small_import.py [--repeat 15]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

for _name, _value in (("HF_HUB_OFFLINE", "1"), ("TRANSFORMERS_OFFLINE", "1"), ("LITELLM_LOCAL_MODEL_COST_MAP", "True")):
    os.environ.setdefault(_name, _value)

SLICE = Path(__file__).resolve().parents[1] / "tests" / "data" / "narrativeqa_slice"


def _csv(path: Path, rows: list[dict]) -> Path:
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return path


def _files(folder: Path, questions: list[str]) -> dict[str, Path]:
    """The files of each kind and size (the reviews review the base's verdicts of rater j)."""
    files = {}
    for n in (1, 10):
        files[f"verdicts {n}"] = _csv(folder / f"v{n}.csv", [
            {"question_id": questions[i], "rater": "b", "kind": "pairwise", "system_a": "s1", "system_b": "s2",
             "shown_order": "ab", "label": "A"} for i in range(n)])
        files[f"answers {n}"] = _csv(folder / f"a{n}.csv", [
            {"question_id": questions[i], "system": "imp", "answer": f"Answer {i}."} for i in range(n)])
        files[f"reviews {n}"] = _csv(folder / f"r{n}.csv", [
            {"judge": "j", "question_id": questions[i], "system_a": "s1", "system_b": "s2", "label": "B",
             "annotator": "amy"} for i in range(n)])
    declined = folder / "declined.jsonl"
    declined.write_text(json.dumps({"question_id": questions[0], "rater": "b", "kind": "absolute", "system_a": "s1",
                                    "label": 1}) + "\n", encoding="utf-8")
    files["verdicts 1 declined"] = declined
    return files


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args(argv)

    import lsqa
    from lsqa.audit.review_import import import_reviews
    from lsqa.corpus.ingest import ingest_narrativeqa
    from lsqa.store import db
    from lsqa.study.imports import import_answers, import_judgments

    print(f"lsqa from {Path(lsqa.__file__).parent}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        empty = folder / "empty.duckdb"
        with db.connect(empty):
            pass
        base = folder / "base.duckdb"
        shutil.copyfile(empty, base)
        ingest_narrativeqa(base, SLICE)
        with db.connect(base) as con:
            questions = [r[0] for r in con.execute("SELECT id FROM questions ORDER BY id LIMIT 10").fetchall()]
        import_judgments(base, _csv(folder / "base_v.csv", [
            {"question_id": q, "rater": "j", "kind": "pairwise", "system_a": "s1", "system_b": "s2",
             "shown_order": "ab", "label": "A"} for q in questions]))
        with db.connect(base):
            pass
        files = _files(folder, questions)
        runs = {name: (import_judgments if name.startswith("verdicts") else import_answers
                       if name.startswith("answers") else import_reviews, path) for name, path in files.items()}
        runs["questions (ingest slice)"] = (lambda ws, _: ingest_narrativeqa(ws, SLICE), None)
        times: dict[str, list[float]] = {name: [] for name in runs}
        for r in range(args.repeat + 1):  # round 0 warms the imports up (not counted)
            for name, (importer, path) in runs.items():
                ws = folder / f"ws-{r}-{len(times[name])}-{name.replace(' ', '_')}.duckdb"
                shutil.copyfile(empty if path is None else base, ws)
                t0 = time.process_time()
                importer(ws, path)
                cpu = (time.process_time() - t0) * 1000
                if r:
                    times[name].append(cpu)
                ws.unlink()
        print(f"{'import':28s} {'CPU ms (median)':>16s} {'min':>8s}   ({args.repeat} rounds)")
        for name, values in times.items():
            print(f"{name:28s} {statistics.median(values):16.1f} {min(values):8.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
