"""Answers and verdicts made elsewhere: ``lsqa import-answers`` and ``lsqa import-judgments``.

Every importer reads and checks its whole input first and writes in one transaction: a bad file
writes nothing, and importing the same file twice adds nothing the second time. Imported answers
belong to ``model = "imported"`` systems (``lsqa.config.definitions`` keeps the names apart).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from lsqa import store
from lsqa.config import definitions
from lsqa.corpus.tables import MAX_CELL_CHARS, MAX_TABLE_BYTES, IngestSummary, plain_value
from lsqa.corpus.tables import records as read_records
from lsqa.errors import InputError
from lsqa.store.verdict_ids import judgment_id
from lsqa.store import corpus as corpus_store
from lsqa.store import results as results_store
from lsqa.store.importers import answers as staged_answers
from lsqa.store.importers import skeleton
from lsqa.store.importers import verdicts as staged_verdicts
from lsqa.judging import kinds as judge_kinds
from lsqa.text.names import MAX_NAME_CHARS, lookalike_warnings, name_problem, shown_name
from lsqa.vocabulary import IMPORTED, REFERENCES


def _name(path: Path, line_no: int, column: str, value: str) -> str:
    """A system, rater or question id under the one name rule (``lsqa.text.names``)."""
    problem = name_problem(value)
    if problem:
        raise InputError(path, f"column {column}: {shown_name(value)} {problem}", line=line_no,
                         hint=f"use one line of visible text, at most {MAX_NAME_CHARS} characters")
    return value


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


ANSWER_ALIASES = {"question_id": ("question_id", "item_id"), "system": ("system", "system_name"),
                  "answer": ("answer", "answer_text", "text")}


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
        value = rec[column]
        if isinstance(value, float) and canonical not in texts and math.isfinite(value) and value.is_integer():
            value = int(value)
        out[canonical] = plain_value(path, line_no, column, value,
                                     numbers=canonical in texts or not isinstance(value, float))
        if canonical not in texts:
            _name(path, line_no, column, out[canonical])
    return out


def import_answers(workspace: str | Path, path: str | Path) -> IngestSummary:
    """Answers produced elsewhere (CSV or JSONL: question id, system name, answer text).

    A file the SQL reads exactly is read, checked and written there (``lsqa.store.importers.answers``);
    any other file row by row here, which words the errors."""
    staged = import_answers_staged(workspace, Path(path))
    return staged if staged is not None else import_answers_rows(workspace, path)


def import_answers_staged(workspace: str | Path, path: Path) -> IngestSummary | None:
    """``import_answers`` in SQL, or None (nothing written) when the SQL does not read the file exactly."""
    summary = IngestSummary(str(path))

    def systems_of_runs(con) -> None:
        definitions.check_imported_systems(con, path, staged_answers.systems(con))

    def notes(con) -> None:
        summary.notes.extend(lookalike_warnings(staged_answers.systems(con), results_store.system_definitions(con),
                                                what="system"))

    done = skeleton.run(workspace, path, staged_answers.RECORD, max_bytes=MAX_TABLE_BYTES,
                        max_cell_chars=MAX_CELL_CHARS, hooks={"systems": systems_of_runs}, notes=notes)
    if done is None:
        return None
    added_systems, added, total = done
    summary.add("systems", added_systems)
    summary.add("answers", added)
    summary.skip("answers", total - added)
    return summary


def import_answers_rows(workspace: str | Path, path: str | Path) -> IngestSummary:
    """``import_answers`` row by row: one Python record per answer, every error worded here (and the
    oracle tests/test_staged_answers_reviews.py compares the SQL path with)."""
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


def import_judgments(workspace: str | Path, path: str | Path) -> IngestSummary:
    """Verdicts produced elsewhere, by a model or a person (CSV or JSONL).

    Columns: item/question id, rater, kind, system_a, system_b (pairwise kinds), label; optional
    shown_order (ab|ba), reference (1|2), evidence. Other columns are kept in ``extra``.

    A plain file of good rows is read, checked and written in SQL (``lsqa.store.importers.verdicts``);
    any other file row by row here, which words the errors.
    """
    staged = import_judgments_staged(workspace, Path(path))
    return staged if staged is not None else import_judgments_rows(workspace, path)


def import_judgments_staged(workspace: str | Path, path: Path) -> IngestSummary | None:
    """``import_judgments`` in SQL, or None (nothing written) when the SQL does not read the file exactly."""
    summary = IngestSummary(str(path))

    def declared(con) -> None:
        conflict = staged_verdicts.first_declared_conflict(con)
        if conflict:
            definitions.check_imported_verdicts(con, path, [conflict])

    def notes(con) -> None:
        raters, systems = staged_verdicts.names_in_order(con)
        summary.notes.extend(lookalike_warnings(raters, results_store.judge_definitions(con), what="rater")
                             + lookalike_warnings(systems, results_store.system_definitions(con), what="system"))

    # The kinds the SQL takes, each label as written -> the canonical one. A kind about references is
    # refused and a scored kind's label may be a score: those are the row reader's.
    kinds = [(record.name, record.family, record.pairwise, alias, label)
             for record in judge_kinds.all_kinds() if not (record.about_references or record.scored)
             for alias, label in record.aliases.items()]
    done = skeleton.run(workspace, path, staged_verdicts.RECORD, max_bytes=MAX_TABLE_BYTES,
                        max_cell_chars=MAX_CELL_CHARS, hooks={"declared": declared}, notes=notes, kinds=kinds)
    if done is None:
        return None
    added, total = done
    summary.add("judgments", added)
    summary.skip("judgments", total - added)
    return summary


def import_judgments_rows(workspace: str | Path, path: str | Path) -> IngestSummary:
    """``import_judgments`` row by row: one Python record per verdict, every error worded here
    (and the oracle tests/test_staged_imports.py compares the SQL path with)."""
    path = Path(path)
    summary = IngestSummary(str(path))
    known_cols = set(sum(JUDGMENT_ALIASES.values(), ())) | {"system_b", "shown_order", "reference", "evidence"}
    records = []
    for line_no, rec in read_records(path, required_any=JUDGMENT_ALIASES):
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
            _name(path, line_no, "system_b", system_b)
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
        records.append((line_no, {
            "id": judgment_id(core["rater"], kind, core["question_id"], core["system_a"], system_b, shown, reference),
            "judge": core["rater"], "kind": kind, "family": record.family, "question_id": core["question_id"], "system_a": core["system_a"],
            "system_b": system_b, "shown_order": shown, "reference": reference, "label": label,
            "raw_label": core["label"], "score": score, "evidence": json.dumps(evidence), "status": "ok",
            "extra": json.dumps({"imported_from": str(path), **extra,
                                 **({"threshold": threshold} if threshold is not None else {})},
                                sort_keys=True, default=str),
        }))
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


__all__ = ["import_answers", "import_answers_rows", "import_answers_staged", "import_judgments", "import_judgments_rows",
           "import_judgments_staged"]
