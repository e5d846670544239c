"""``lsqa import-reviews FILE``: human reviews of judge verdicts made elsewhere.

Columns (CSV or JSONL): judge, question_id, system_a, system_b (side by side) or system (yes/no),
reference (optional: which reference a ground-truth rater used), label, annotator; optional
inclusion_probability (the probability with which the item was drawn for review) and stratum.
Each row becomes a review as if made in the Audit page: ``confirm`` when the label is the judge's,
``override`` otherwise, queue ``import`` with the probability. Rows with a probability count as
usable audits for corrected estimates; rows without one count for agreement and overrides only.
A pair given in the other order than the verdict's (system_b, system_a) has its label swapped.
Every row is checked before anything is written; one bad row writes nothing. A row that is already
in the workspace as an imported review (same annotator, verdict, label, probability and stratum:
the same file imported again) is skipped, so importing a file twice adds nothing the second time.
Annotator names follow the one name rule (``lsqa.text.names``); one that looks like another
annotator's gets a warning in the summary's notes.
"""

from __future__ import annotations

from pathlib import Path

from lsqa import store
from lsqa.audit.actions import MAX_ANNOTATOR_CHARS, annotator_problem
from lsqa.errors import InputError
from lsqa.judging import kinds
from lsqa.store import results as results_store
from lsqa.store.importers import reviews as staged_reviews
from lsqa.store.importers import skeleton
from lsqa.store.importers.table import records as read_records
from lsqa.store.importers.wording import MAX_CELL_CHARS, MAX_TABLE_BYTES, IngestSummary, plain_value
from lsqa.store.reviews import MIN_INCLUSION_PROB  # the floor on π (1/π weighs an audit)
from lsqa.text.names import lookalike_warnings, shown_name
from lsqa.vocabulary import swap_pairwise

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
    """The reviews of a file the SQL does not read exactly, by the strict reader, each matched to its
    verdict (``_find_verdict``); InputError at a bad row."""
    rows = read_records(path, required_any=REVIEW_ALIASES)
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


def import_reviews(workspace: str | Path, path: str | Path, *, gold: bool = False) -> IngestSummary:
    """Add the reviews in ``path`` (module docstring); nothing is written when any row is bad.

    ``gold``: the file is a gold set (reference labels, not a person's review): each row is marked
    gold (migration 0015) and never makes a verdict "need a second review". Marked per row, so a
    file imported again with ``gold`` adds its rows as gold (the latest label of each annotator counts).

    One importer (``lsqa.store.importers.reviews``): the file matched and written in SQL; a file the SQL
    does not read exactly is read by the strict reader (``_review_rows``), which words a bad row's error."""
    return _import_reviews(workspace, Path(path), gold, lambda p: _review_rows(workspace, p))


def import_reviews_staged(workspace: str | Path, path: Path, *, gold: bool = False) -> IngestSummary | None:
    """``import_reviews`` when the SQL reads the file exactly; else None, nothing written."""
    return _import_reviews(workspace, Path(path), gold, None)


def _import_reviews(workspace, path: Path, gold: bool, read_rows) -> IngestSummary | None:
    summary = IngestSummary(str(path))

    def notes(con) -> None:
        summary.notes.extend(lookalike_warnings(staged_reviews.annotators_in_order(con),
                                                staged_reviews.stored_annotators(con), what="annotator"))

    # Every kind's labels as written -> canonical; a scored kind's label may be a score (the strict reader's).
    labels = [(record.name, record.family, record.pairwise, alias, label)
              for record in kinds.all_kinds() if not record.scored for alias, label in record.aliases.items()]
    done = skeleton.run(workspace, path, staged_reviews.RECORD, max_bytes=MAX_TABLE_BYTES,
                        max_cell_chars=MAX_CELL_CHARS, read_rows=read_rows, declined=read_rows is not None, notes=notes, kinds=labels,
                        min_probability=MIN_INCLUSION_PROB, max_annotator_chars=MAX_ANNOTATOR_CHARS,
                        note=f"imported from {path.name}", gold=gold)
    if done is None:
        return None
    added, usable, total = done
    summary.add("reviews", added)
    summary.skip("reviews", total - added)
    summary.notes.append(f"{usable} with an inclusion probability (usable for corrected estimates), "
                         f"{added - usable} without (agreement and overrides only)")
    return summary
