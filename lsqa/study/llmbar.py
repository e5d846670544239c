"""LLMBar's MT-Bench and FairEval sets as judge verdicts plus human labels (Zeng et al., 2024,
princeton-nlp/LLMBar, MIT), so the demo's Agreement page shows real judge-vs-human figures.

Each set is pairwise: an instruction, two outputs, a human gold label (which output is better), and
the verdicts of GPT-4 and ChatGPT asked in both orders (``result.json``, ``results[-1]``:
``swap = False`` is the original order, ``swap = True`` the swapped one, its winner already given
in the original numbering). Imported as:

- a document per set (no text) with one question per item, the two outputs as the answers of
  systems ``llmbar-output-1`` and ``llmbar-output-2``;
- per evaluator and set a side-by-side judge (``llmbar-gpt-4-mt-bench`` …) with a verdict per
  order (``shown_order`` ab / ba; ``raw_label`` in shown positions, ``label`` in system terms);
- the gold label as a review by annotator ``llmbar-gold`` of each of those verdicts.

Then lsqa's own statistics reproduce the authors' ``statistics.json`` exactly: agreement of a
judge with ``human:llmbar-gold`` is ``correct_False`` (the first-order verdict against gold), the
position panel's consistency and κ are ``equal`` and ``kappa_agreement`` (``figures``).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Iterator

from lsqa import store
from lsqa.errors import InputError
from lsqa.figures import analysis
from lsqa.judging import kinds
from lsqa.store import corpus as corpus_store
from lsqa.store import results as results_store
from lsqa.store import reviews as reviews_store
from lsqa.store.verdict_ids import judgment_id

SETS = ("MT-Bench", "FairEval")
EVALUATORS = ("GPT-4", "ChatGPT")
SYSTEM_1, SYSTEM_2 = "llmbar-output-1", "llmbar-output-2"
GOLD = "llmbar-gold"
LLMBAR_DIR = Path("judgments") / "llmbar"
_LABEL = {"1": "A", "2": "B"}


def judge_name(dataset: str, evaluator: str) -> str:
    return f"llmbar-{evaluator.lower()}-{dataset.lower()}"


JUDGES = frozenset(judge_name(d, e) for d in SETS for e in EVALUATORS)


def is_llmbar_judge(name: str) -> bool:
    """LLMBar's judges compare two outputs of an instruction set, not QA systems: they belong on the
    Agreement page (judge against human), not on a leaderboard of the study's systems."""
    return name in JUDGES


def _read(root: Path, dataset: str, evaluator: str) -> list[dict]:
    path = root / dataset / evaluator / "Vanilla_NoRules" / "result.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(path, f"cannot read LLMBar results ({exc})") from None


def published(root: Path, dataset: str, evaluator: str) -> dict:
    path = root / dataset / "evaluators" / evaluator / "Vanilla_NoRules" / "statistics.json"
    return json.loads(path.read_text(encoding="utf-8"))


def _verdict(judge: str, qid: str, order: str, run: dict) -> dict:
    winner = run["winner"]
    label = _LABEL.get(winner)
    # In the swapped run output 2 was shown first: "A" on screen was system B.
    raw = (label or "") if order == "ab" else {"A": "B", "B": "A"}.get(label, "")
    completion = run.get("completion") or [""]
    kind = kinds.SIDE_BY_SIDE  # LLMBar's evaluators pick the better of two outputs
    return {"id": judgment_id(judge, kind.name, qid, SYSTEM_1, SYSTEM_2, order), "judge": judge, "kind": kind.name,
            "family": kind.family, "question_id": qid, "system_a": SYSTEM_1, "system_b": SYSTEM_2, "shown_order": order, "reference": "",
            "label": label, "raw_label": raw, "status": "ok" if label else "parse_error", "raw": str(completion[0]),
            "extra": json.dumps({"imported_from": "LLMBar", "winner": winner})}


def import_llmbar(workspace: str | Path, data_dir: str | Path) -> Iterator[str]:
    """Import both sets (idempotent: a set already in the workspace is skipped), yielding progress lines."""
    root = Path(data_dir) / LLMBAR_DIR
    for dataset in SETS:
        doc_id = f"llmbar:{dataset}"
        results = {e: _read(root, dataset, e) for e in EVALUATORS}
        items = results[EVALUATORS[0]]
        for e, other in results.items():
            if [it["input"] for it in other] != [it["input"] for it in items]:
                raise InputError(root / dataset / e, "items differ from the other evaluator's file (order or text)")
        with store.write(workspace) as con:
            if doc_id in corpus_store.document_ids(con):
                yield f"LLMBar {dataset}: already imported"
                continue
            sha = hashlib.sha1(json.dumps([it["input"] for it in items]).encode("utf-8")).hexdigest()
            corpus_store.insert_documents(con, [{
                "id": doc_id, "source": str(root / dataset), "content_sha1": sha, "kind": "judgment-set",
                "title": f"LLMBar {dataset} (pairwise, human gold label)", "author": "LLMBar (MIT)", "set_name": dataset,
                "summary": "", "word_count": 0, "n_tokens": 0}])
            qids = [f"{doc_id}:{i}" for i in range(len(items))]
            corpus_store.insert_questions(con, [
                {"id": q, "document_id": doc_id, "origin": "imported", "text": it["input"], "set_name": dataset,
                 "source_index": i} for i, (q, it) in enumerate(zip(qids, items, strict=False))])
            results_store.upsert_systems(con, [{"name": s, "model": "imported", "context": "imported"}
                                               for s in (SYSTEM_1, SYSTEM_2)])
            results_store.insert_answers(con, [
                {"question_id": q, "system_name": s, "text": it[f"output_{k}"], "extra": "{}"}
                for q, it in zip(qids, items, strict=False) for k, s in ((1, SYSTEM_1), (2, SYSTEM_2))])
            n_reviews = 0
            for evaluator, rows in results.items():
                judge = judge_name(dataset, evaluator)
                verdicts = []
                for q, it in zip(qids, rows, strict=False):
                    last = it["results"][-1]
                    verdicts += [_verdict(judge, q, "ab", last["swap = False"]),
                                 _verdict(judge, q, "ba", last["swap = True"])]
                results_store.insert_judgments(con, verdicts)
                gold = {q: _LABEL[str(it["label"])] for q, it in zip(qids, rows, strict=False)}
                for v in verdicts:
                    action = "confirm" if v["label"] == gold[v["question_id"]] else "override"
                    reviews_store.add_review(con, annotator=GOLD, judgment_id=v["id"], action=action,
                                             label=gold[v["question_id"]], note="LLMBar human gold label",
                                             gold=True)
                    n_reviews += 1
        yield (f"LLMBar {dataset}: {len(items)} items, {len(EVALUATORS)} judges × 2 orders, "
               f"{n_reviews} gold labels as reviews by {GOLD}")


def _fraction(k: int, n: int) -> str:
    """The authors' "k / n = x%" (Python's k / n * 100, unrounded)."""
    return f"{k} / {n} = {k / n * 100}%"


def present_judges(workspace: str | Path) -> set[str]:
    """LLMBar's judges imported into this workspace (``import_llmbar``)."""
    with store.connect(workspace) as con:
        return {j["judge"] for j in results_store.judges(con)} & JUDGES


def figures(workspace: str | Path, data_dir: str | Path, *, read: analysis.LabelsRead | None = None) -> list[dict]:
    """Per imported judge: the published figure and the same figure computed by lsqa from the workspace.
    ``read``: raters' labels already read by the report this is part of (the Agreement page)."""
    root = Path(data_dir) / LLMBAR_DIR
    rows = []
    present = present_judges(workspace)
    for dataset in SETS:
        for evaluator in EVALUATORS:
            judge = judge_name(dataset, evaluator)
            if judge not in present:
                continue
            stats = published(root, dataset, evaluator)
            # correct_False: the judge against the gold label in the first (original) order only.
            vs_gold = analysis.agreement(workspace, judge, f"{analysis.HUMAN}:{GOLD}@{judge}", bootstrap=0, read=read,
                                         shown_order="ab")
            n = vs_gold["n"]
            bias = analysis.position_bias(workspace, judge)
            ours = {"correct_False": _fraction(round(vs_gold["agreement"] * n), n),
                    "equal": _fraction(round(bias["consistency"] * bias["n_both_orders"]), bias["n_both_orders"]),
                    "kappa_agreement": bias["kappa"]}
            for figure, value in ours.items():
                rows.append({"judge": judge, "figure": figure, "published": stats[figure], "lsqa": value,
                             "same": stats[figure] == value})
    return rows
