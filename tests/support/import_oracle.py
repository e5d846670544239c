"""The row-by-row importers: the oracle the tests compare lsqa's importers with (and the bench's *rows*).

One Python record per row, every check in Python, one write per row or table: the importers lsqa had
before its imports ran in SQL (``lsqa.store.importers``). They share the per-row wording helpers with
production (``lsqa.study.imports``, ``lsqa.audit.review_import``); the checks over the whole file, the
matching of reviews to verdicts and the writes are their own, so a comparison with production compares
the SQL's staging, checks and inserts with these.
"""

from __future__ import annotations

import json
from pathlib import Path

from lsqa import store
from lsqa.audit.review_import import _key, _review_rows
from lsqa.config import definitions
from lsqa.errors import InputError
from lsqa.store import corpus as corpus_store
from lsqa.store import results as results_store
from lsqa.store import reviews as reviews_store
from lsqa.store.importers.answers import ALIASES as ANSWER_ALIASES
from lsqa.store.importers.wording import IngestSummary
from lsqa.study.imports import _aliased, _judgment_rows
from lsqa.text.names import lookalike_warnings
from lsqa.vocabulary import IMPORTED

from .row_tables import records as read_records


def _check_repeats(path: Path, records: list[tuple[int, dict]], key, value: str, what: str) -> None:
    """A row that repeats an earlier row's key with another value is an error: one of the two would be
    dropped unseen (the workspace keeps one row per key). An exact repeat is harmless."""
    seen: dict = {}
    for line_no, rec in records:
        k = key(rec)
        if k in seen and seen[k][1] != rec[value]:
            raise InputError(path, f"{what} repeats line {seen[k][0]} with another {value} "
                                   f"({seen[k][1]!r}, here {rec[value]!r})", line=line_no,
                             hint="keep one row per item, or give the raters or systems different names")
        seen.setdefault(k, (line_no, rec[value]))


def _check_question_ids(path: Path, records: list[tuple[int, dict]], key: str, workspace) -> None:
    ids = [r[key] for _, r in records]
    with store.connect(workspace) as con:
        known = corpus_store.question_ids(con, ids)
    for line_no, rec in records:
        if rec[key] not in known:
            raise InputError(path, f"unknown question id {rec[key]!r}", line=line_no,
                             hint="import the questions first (lsqa ingest-narrativeqa / lsqa run)")


def _check_question_ids(path: Path, records: list[tuple[int, dict]], key: str, workspace) -> None:
    ids = [r[key] for _, r in records]
    with store.connect(workspace) as con:
        known = corpus_store.question_ids(con, ids)
    for line_no, rec in records:
        if rec[key] not in known:
            raise InputError(path, f"unknown question id {rec[key]!r}", line=line_no,
                             hint="import the questions first (lsqa ingest-narrativeqa / lsqa run)")


def import_answers_rows(workspace: str | Path, path: str | Path) -> IngestSummary:
    """``import_answers`` row by row: one Python record per answer, every error worded here (and the
    oracle tests/store/test_staged_answers_reviews.py compares the SQL path with)."""
    path = Path(path)
    summary = IngestSummary(str(path))
    records = []
    for line_no, rec in read_records(path, required_any=ANSWER_ALIASES):
        core = _aliased(path, line_no, rec, ANSWER_ALIASES)
        extra = {k: v for k, v in rec.items() if k not in sum(ANSWER_ALIASES.values(), ())}
        records.append((line_no, {**core, "extra": extra}))
    _check_repeats(path, records, lambda r: (r["question_id"], r["system"]), "answer",
                   "the answer of this system to this question")
    _check_question_ids(path, records, "question_id", workspace)
    systems = sorted({r["system"] for _, r in records})
    with store.write(workspace) as con:
        definitions.check_imported_systems(con, path, systems)
        stored = {(a["question_id"], a["system_name"]): a["text"]
                  for a in results_store.answers_for(con, [r["question_id"] for _, r in records], systems)}
        for line_no, r in records:
            old = stored.get((r["question_id"], r["system"]))
            if old is not None and old != r["answer"]:
                raise InputError(path, f"system {r['system']!r} already has another answer to {r['question_id']} "
                                       f"in the workspace ({old[:60]!r})", line=line_no,
                                 hint="give the new answers another system name")
        summary.notes.extend(lookalike_warnings(systems, results_store.system_definitions(con), what="system"))
        summary.add("systems", results_store.upsert_systems(
            con, [{"name": s, "model": IMPORTED, "context": IMPORTED} for s in systems]))
        rows = [{"question_id": r["question_id"], "system_name": r["system"], "text": r["answer"],
                 "extra": json.dumps(r["extra"], sort_keys=True, default=str)} for _, r in records]
        n = results_store.insert_answers(con, rows)
    summary.add("answers", n)
    summary.skip("answers", len(records) - n)
    return summary


def import_judgments_rows(workspace: str | Path, path: str | Path) -> IngestSummary:
    """``import_judgments`` row by row: one Python record per verdict, every error worded here
    (and the oracle tests/store/test_staged_imports.py compares the SQL path with)."""
    path = Path(path)
    summary = IngestSummary(str(path))
    # Each row parsed and checked by the strict reader the SQL path falls back to (one wording of a
    # row's errors); what this oracle does its own way is everything after: repeats, questions,
    # stored conflicts and the writes, one Python record at a time.
    records = [(r.pop("line"), {**r, "status": "ok"}) for r in _judgment_rows(path)]
    _check_repeats(path, records, lambda r: r["id"], "label",
                   "the verdict of this rater on this item (question, systems, order, reference)")
    _check_question_ids(path, records, "question_id", workspace)
    with store.write(workspace) as con:
        definitions.check_imported_verdicts(con, path, [(line_no, r["judge"], r["kind"]) for line_no, r in records])
        stored = results_store.judgment_labels(con, [r["id"] for _, r in records])
        for line_no, r in records:
            if r["id"] in stored and stored[r["id"]] != r["label"]:
                raise InputError(path, f"rater {r['judge']!r} already has the verdict {stored[r['id']]!r} on this item "
                                       "in the workspace", line=line_no,
                                 hint="give the new verdicts another rater name")
        summary.notes.extend(lookalike_warnings([r["judge"] for _, r in records], results_store.judge_definitions(con),
                                                what="rater"))
        summary.notes.extend(lookalike_warnings(
            [s for _, r in records for s in (r["system_a"], r["system_b"]) if s],
            results_store.system_definitions(con), what="system"))
        n = results_store.insert_judgments(con, [r for _, r in records])
    summary.add("judgments", n)
    summary.skip("judgments", len(records) - n)
    return summary


def import_reviews_rows(workspace: str | Path, path: str | Path, *, gold: bool = False) -> IngestSummary:
    """``import_reviews`` row by row: every verdict of the file's judges in Python, one ``add_review`` per
    new row, every error worded here (and the oracle tests/store/test_staged_answers_reviews.py compares with)."""
    path = Path(path)
    summary = IngestSummary(str(path))
    # Each row parsed and matched to its verdict by the strict reader the SQL path falls back to;
    # what this oracle does its own way is the duplicate check and one ``add_review`` per new row.
    reviews = [{**{k: v for k, v in r.items() if k != "line"}, "note": f"imported from {path.name}", "queue": "import",
                "gold": bool(gold)} for r in _review_rows(workspace, path)]
    with store.write(workspace) as con:
        stored = reviews_store.reviews(con)
        known = {_key({**r, "gold": bool(r["gold"])}) for r in stored if r["queue"] == "import"}
        summary.notes.extend(lookalike_warnings([r["annotator"] for r in reviews],
                                                sorted({r["annotator"] for r in stored}), what="annotator"))
        new = []
        for r in reviews:
            if _key(r) not in known:
                known.add(_key(r))
                new.append(r)
        for r in new:
            reviews_store.add_review(con, **r)
    summary.add("reviews", len(new))
    summary.skip("reviews", len(reviews) - len(new))
    reviews = new
    usable = sum(r["inclusion_prob"] is not None for r in reviews)
    summary.notes.append(f"{usable} with an inclusion probability (usable for corrected estimates), "
                         f"{len(reviews) - usable} without (agreement and overrides only)")
    return summary


__all__ = ["import_answers_rows", "import_judgments_rows", "import_reviews_rows"]
