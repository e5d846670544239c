"""The row-by-row importers: the oracle the tests compare lsqa's importers with (and the bench's *rows*).

One Python record per row, every check in Python, one write per row or table: the importers lsqa had
before its imports ran in SQL (``lsqa.store.importers``). Each row is checked and worded here
(``_aliased``, ``_judgment_rows``, ``_review_rows``: lsqa checks no row in Python); every file is read by
the row reader (tests/support/row_tables.py: Python's csv and json modules), never by lsqa's table reader,
so that a comparison also finds where lsqa's reading of a file differs. Only the wording of one value
(``lsqa.store.importers.values``, ``wording``) and of a name is shared with production, so a comparison with
production compares the SQL's reading, staging, checks and inserts with these.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from lsqa import store
from lsqa.audit.actions import MAX_ANNOTATOR_CHARS, annotator_problem
from lsqa.config import definitions
from lsqa.errors import InputError
from lsqa.judging import kinds
from lsqa.judging import kinds as judge_kinds
from lsqa.store import corpus as corpus_store
from lsqa.store import results as results_store
from lsqa.store import reviews as reviews_store
from lsqa.store.importers import values
from lsqa.store.importers.answers import ALIASES as ANSWER_ALIASES
from lsqa.store.importers.wording import IngestSummary, plain_value
from lsqa.store.reviews import MIN_INCLUSION_PROB
from lsqa.store.verdict_ids import judgment_id
from lsqa.text.names import lookalike_warnings, shown_name
from lsqa.vocabulary import IMPORTED, REFERENCES, swap_pairwise

from .row_tables import records as read_records


def table_records(path: str | Path, *, required=(), required_any=None) -> list[tuple[int | None, dict]]:
    """``(line, row)`` pairs of a table as the row reader (tests/support/row_tables.py) reads it."""
    return read_records(path, required=required, required_any=required_any)


def _aliased(path: Path, line_no: int, rec: dict, aliases: dict[str, tuple[str, ...]],
             texts: tuple[str, ...] = ("answer", "label")) -> dict:
    """The canonical columns of a row as text (names and ids: text or whole numbers; answers and
    labels: text or numbers), or InputError naming the line."""
    out = {}
    for canonical, names in aliases.items():
        column = next((n for n in names if n in rec and rec[n] not in (None, "")), None)
        if column is None:
            raise InputError(path, f"missing value for '{canonical}' (columns tried: {', '.join(names)})",
                             line=line_no, hint="add one of these columns")
        out[canonical] = values.cell(path, line_no, column, rec[column], rule="text" if canonical in texts else "name")
    return out




JUDGMENT_ALIASES = {"question_id": ("question_id", "item_id"), "rater": ("rater", "judge"), "kind": ("kind",),
                    "system_a": ("system_a",), "label": ("label",)}


def _optional_text(path: Path, line_no: int, rec: dict, column: str) -> str:
    value = rec.get(column)
    if value is None or value == "":
        return ""
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        value = int(value)
    return plain_value(path, line_no, column, value, numbers=not isinstance(value, float))


def _evidence(path: Path, line_no: int, value) -> list[str]:
    """Evidence as a list of excerpts: a text, a list of texts, or nothing."""
    if value is None or value == "":
        return []
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(e, str) for e in items):
        raise InputError(path, f"evidence must be a text or a list of texts, not {json.dumps(value)[:60]}",
                         line=line_no, hint="write the excerpts as strings")
    return items


def _judgment_rows(path: Path) -> list[dict]:
    """The verdicts of a file, row by row (each row checked in Python, its error worded); InputError at a bad row."""
    path = Path(path)
    known_cols = set(sum(JUDGMENT_ALIASES.values(), ())) | {"system_b", "shown_order", "reference", "evidence"}
    out = []
    for line_no, rec in table_records(path, required_any=JUDGMENT_ALIASES):
        core = _aliased(path, line_no, rec, JUDGMENT_ALIASES)
        kind = core["kind"].lower()
        try:
            record = judge_kinds.get(kind)
        except judge_kinds.UnknownJudgeKind:
            raise InputError(path, f"unknown kind {core['kind']!r}", line=line_no,
                             hint=f"use one of {', '.join(judge_kinds.names())}") from None
        if record.about_references:
            raise InputError(path, f"{kind} verdicts are about NarrativeQA references, not answers: they are not "
                                   "imported as verdicts", line=line_no,
                             hint=f"run a judge of kind {kind} in a study (docs/reference-errors.md), or import "
                                  "the verdicts under a kind that rates answers")
        system_b = _optional_text(path, line_no, rec, "system_b")
        if system_b:
            values.name(path, line_no, "system_b", system_b)
        if record.pairwise and not system_b:
            raise InputError(path, "a pairwise verdict needs system_b", line=line_no, hint="add the other system")
        if record.pairwise and system_b == core["system_a"]:
            raise InputError(path, f"system_a and system_b are both {system_b!r}", line=line_no,
                             hint="a system cannot be compared with itself; fix the names")
        if not record.pairwise and system_b:
            raise InputError(path, f"a {kind} verdict rates one answer, but system_b is {system_b!r}", line=line_no,
                             hint="leave system_b empty, or use a pairwise kind")
        try:
            label = record.normalise_label(core["label"])
        except ValueError as exc:
            raise InputError(path, str(exc), line=line_no, hint=record.label_hint) from None
        score, threshold = None, None
        if record.scored and label not in record.labels:
            # A similarity score as the label: stored as the score, the label by the rater's default
            # threshold (as the pipeline's similarity rows), never a label the statistics cannot read.
            from lsqa.judging.similarity import DEFAULT_THRESHOLD

            score, threshold = float(label), DEFAULT_THRESHOLD
            if not -1.0 <= score <= 1.0:  # also NaN and Infinity, which JSON exports cannot write
                raise InputError(path, f"similarity {core['label']!r} is not a cosine similarity", line=line_no,
                                 hint="give a number from -1 to 1, or yes / no")
            label = "yes" if score >= threshold else "no"
        shown = (_optional_text(path, line_no, rec, "shown_order") or "ab").lower()
        if shown not in ("ab", "ba"):
            raise InputError(path, f"shown_order must be ab or ba, not {shown!r}", line=line_no,
                             hint="write ab (system_a shown first) or ba")
        reference = _optional_text(path, line_no, rec, "reference")
        if reference not in REFERENCES + ("",):
            raise InputError(path, f"reference must be 1 or 2, not {reference!r}", line=line_no,
                             hint="write the NarrativeQA reference the verdict used, or leave it empty")
        evidence = _evidence(path, line_no, rec.get("evidence"))
        extra = {k: v for k, v in rec.items() if k not in known_cols}
        out.append({
            "line": line_no, "id": judgment_id(core["rater"], kind, core["question_id"], core["system_a"], system_b, shown, reference),
            "judge": core["rater"], "kind": kind, "family": record.family, "question_id": core["question_id"], "system_a": core["system_a"],
            "system_b": system_b, "shown_order": shown, "reference": reference, "label": label,
            "raw_label": core["label"], "score": score, "evidence": json.dumps(evidence),
            "extra": json.dumps({"imported_from": str(path), **extra,
                                 **({"threshold": threshold} if threshold is not None else {})},
                                sort_keys=True, default=str),
        })
    return out


REVIEW_ALIASES = {"judge": ("judge", "rater"), "question_id": ("question_id", "item_id"),
                  "system_a": ("system_a", "system"), "label": ("label",), "annotator": ("annotator",)}
PROBABILITY_COLUMNS = ("inclusion_probability", "inclusion_prob", "pi")


def _value(rec: dict, names: tuple[str, ...]) -> str:
    for name in names:
        if rec.get(name) not in (None, ""):
            return str(rec[name]).strip()
    return ""


def _probability(path: Path, line, rec: dict) -> float | None:
    text = _value(rec, PROBABILITY_COLUMNS)
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        raise InputError(path, f"inclusion probability {text[:40]!r} is not a number", line=line,
                         hint=f"give the probability with which the item was drawn, from {MIN_INCLUSION_PROB:g} to 1") from None
    if not MIN_INCLUSION_PROB <= value <= 1:  # also NaN
        raise InputError(path, f"inclusion probability {text[:40]!r} is outside [{MIN_INCLUSION_PROB:g}, 1]", line=line,
                         hint="give the probability with which the item was drawn for review")
    return value


def _annotator(path: Path, line, value: str) -> str:
    problem = annotator_problem(value)
    if problem:
        raise InputError(path, f"annotator {shown_name(value)} {problem}", line=line,
                         hint=f"use one line of visible text, at most {MAX_ANNOTATOR_CHARS} characters")
    return value


def _key(review: dict) -> tuple:
    return (review["annotator"], review["judgment_id"], review["action"], review["label"], review["inclusion_prob"],
            review["stratum"], review["gold"])


def _find_verdict(by_key: dict, path: Path, line, judge, question_id, system_a, system_b, reference):
    """The verdict a row reviews (order ``ab`` first) and whether the row names its pair reversed."""
    for a, b, swapped in ((system_a, system_b, False), (system_b, system_a, True)):
        found = [v for v in by_key.get((judge, question_id, a, b), []) if not reference or v["reference"] == reference]
        if found:
            found.sort(key=lambda v: (v["shown_order"], v["reference"]))
            return found[0], swapped and bool(system_b)
    what = f"{system_a} vs {system_b}" if system_b else system_a
    raise InputError(path, f"no verdict of judge {judge!r} on question {question_id!r} for {what}"
                           + (f" with reference {reference}" if reference else ""), line=line,
                     hint="import or run the judge's verdicts first; names must match exactly")


def _review_rows(workspace, path: Path) -> list[dict]:
    """The reviews of a file, row by row, each matched to its verdict (``_find_verdict``); InputError at a
    bad row."""
    rows = table_records(path, required_any=REVIEW_ALIASES)
    with store.connect(workspace) as con:
        judges = sorted({_value(rec, REVIEW_ALIASES["judge"]) for _, rec in rows})
        by_key: dict[tuple, list[dict]] = {}
        for judge in judges:
            for v in results_store.list_judgments(con, judge=judge):
                by_key.setdefault((v["judge"], v["question_id"], v["system_a"], v["system_b"]), []).append(v)
    reviews = []
    for line, rec in rows:
        judge = _value(rec, REVIEW_ALIASES["judge"])
        question_id = _value(rec, REVIEW_ALIASES["question_id"])
        system_a = _value(rec, REVIEW_ALIASES["system_a"])
        system_b = _value(rec, ("system_b",))
        reference = _value(rec, ("reference",))
        verdict, swapped = _find_verdict(by_key, path, line, judge, question_id, system_a, system_b, reference)
        try:
            label = kinds.get(verdict["kind"]).normalise_label(_value(rec, ("label",)))
        except ValueError as exc:
            raise InputError(path, str(exc), line=line) from None
        if swapped:
            label = swap_pairwise(label)
        probability = _probability(path, line, rec)
        if isinstance(rec.get("stratum"), (dict, list)):  # a stratum names one group: never a list or table
            plain_value(path, line, "stratum", rec["stratum"])
        action = "confirm" if verdict["status"] == "ok" and label == verdict["label"] else "override"
        reviews.append({"line": line, "annotator": _annotator(path, line, _value(rec, ("annotator",))),
                        "judgment_id": verdict["id"], "action": action, "label": label,
                        "inclusion_prob": probability,
                        "stratum": _value(rec, ("stratum",)) or ("all" if probability is not None else "")})
    return reviews




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
