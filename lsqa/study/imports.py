"""Answers and verdicts made elsewhere: ``lsqa import-answers`` and ``lsqa import-judgments``.

Every importer reads and checks its whole input first and writes in one transaction: a bad file
writes nothing, and importing the same file twice adds nothing the second time. Imported answers
belong to ``model = "imported"`` systems (``lsqa.config.definitions`` keeps the names apart).

One importer per input (``lsqa.store.importers``): the file staged in SQL, or, when the SQL does not
read it exactly, by the table reader with its values checked in SQL (answers) or by the strict reader
here (``_judgment_rows``: each row checked and its error worded); then the same checks over the whole
file and the same insert, in SQL.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from lsqa.config import definitions
from lsqa.errors import InputError
from lsqa.judging import kinds as judge_kinds
from lsqa.store import results as results_store
from lsqa.store.importers import answers as staged_answers
from lsqa.store.importers import skeleton, values
from lsqa.store.importers import verdicts as staged_verdicts
from lsqa.store.importers.table import records as read_records
from lsqa.store.importers.wording import MAX_CELL_CHARS, MAX_TABLE_BYTES, IngestSummary, plain_value
from lsqa.store.verdict_ids import judgment_id
from lsqa.text.names import lookalike_warnings
from lsqa.vocabulary import REFERENCES


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
        out[canonical] = values.cell(path, line_no, column, rec[column], text=canonical in texts)
    return out


def import_answers(workspace: str | Path, path: str | Path) -> IngestSummary:
    """Answers produced elsewhere (CSV or JSONL: question id, system name, answer text); other columns
    are kept in ``extra``. Checked whole (repeats, unknown questions, a run's system name, an answer the
    workspace has with another text), then written in one transaction."""
    return _import_answers(workspace, Path(path), declined=True)


def import_answers_staged(workspace: str | Path, path: Path) -> IngestSummary | None:
    """``import_answers`` when the SQL reads the file exactly; else None, nothing written (the tests
    use it to see that a file is taken by the SQL)."""
    return _import_answers(workspace, Path(path), declined=False)


def _import_answers(workspace, path: Path, *, declined: bool) -> IngestSummary | None:
    summary = IngestSummary(str(path))

    def systems_of_runs(con) -> None:
        definitions.check_imported_systems(con, path, staged_answers.systems(con))

    def notes(con) -> None:
        summary.notes.extend(lookalike_warnings(staged_answers.systems(con), results_store.system_definitions(con),
                                                what="system"))

    done = skeleton.run(workspace, path, staged_answers.RECORD, max_bytes=MAX_TABLE_BYTES,
                        max_cell_chars=MAX_CELL_CHARS, declined=declined, hooks={"systems": systems_of_runs},
                        notes=notes)
    if done is None:
        return None
    added_systems, added, total = done
    summary.add("systems", added_systems)
    summary.add("answers", added)
    summary.skip("answers", total - added)
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


def _judgment_rows(path: Path) -> list[dict]:
    """The verdicts of a file the SQL does not read exactly, by the strict reader; InputError at a bad row."""
    path = Path(path)
    known_cols = set(sum(JUDGMENT_ALIASES.values(), ())) | {"system_b", "shown_order", "reference", "evidence"}
    out = []
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


def import_judgments(workspace: str | Path, path: str | Path) -> IngestSummary:
    """Verdicts produced elsewhere, by a model or a person (CSV or JSONL).

    Columns: item/question id, rater, kind, system_a, system_b (pairwise kinds), label; optional
    shown_order (ab|ba), reference (1|2), evidence. Other columns are kept in ``extra``. Checked whole
    (repeats, unknown questions, a rater a run config declared with another kind, a verdict the
    workspace has with another label), then written in one transaction.
    """
    return _import_judgments(workspace, Path(path), _judgment_rows)


def import_judgments_staged(workspace: str | Path, path: Path) -> IngestSummary | None:
    """``import_judgments`` when the SQL reads the file exactly; else None, nothing written."""
    return _import_judgments(workspace, Path(path), None)


def _import_judgments(workspace, path: Path, read_rows) -> IngestSummary | None:
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
    # refused and a scored kind's label may be a score: those are the strict reader's (``_judgment_rows``).
    kinds = [(record.name, record.family, record.pairwise, alias, label)
             for record in judge_kinds.all_kinds() if not (record.about_references or record.scored)
             for alias, label in record.aliases.items()]
    done = skeleton.run(workspace, path, staged_verdicts.RECORD, max_bytes=MAX_TABLE_BYTES,
                        max_cell_chars=MAX_CELL_CHARS, read_rows=read_rows, declined=read_rows is not None,
                        hooks={"declared": declared},
                        notes=notes, kinds=kinds)
    if done is None:
        return None
    added, total = done
    summary.add("judgments", added)
    summary.skip("judgments", total - added)
    return summary


__all__ = ["import_answers", "import_answers_staged", "import_judgments", "import_judgments_staged"]
