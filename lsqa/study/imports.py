"""Answers and verdicts made elsewhere: ``lsqa import-answers`` and ``lsqa import-judgments``.

Every importer reads and checks its whole input first and writes in one transaction: a bad file
writes nothing, and importing the same file twice adds nothing the second time. Imported answers
belong to ``model = "imported"`` systems (``lsqa.config.definitions`` keeps the names apart).

One importer per input (``lsqa.store.importers``): the file staged in SQL, or, when the SQL does not
read it exactly, by the table reader with its values checked in SQL (each distinct unusual value judged
once in Python); then the same checks over the whole file and the same insert, in SQL.
"""

from __future__ import annotations

from pathlib import Path

from lsqa.config import definitions
from lsqa.judging import kinds as judge_kinds
from lsqa.store import results as results_store
from lsqa.store.importers import answers as staged_answers
from lsqa.store.importers import skeleton
from lsqa.store.importers import verdicts as staged_verdicts
from lsqa.store.importers.wording import MAX_CELL_CHARS, MAX_TABLE_BYTES, IngestSummary
from lsqa.text.names import lookalike_warnings
from lsqa.vocabulary import REFERENCES


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
    systems: list[str] = []  # the file's, read once by the check of the runs' names for the notes after

    def systems_of_runs(con) -> None:
        systems[:] = staged_answers.systems(con)
        definitions.check_imported_systems(con, path, systems)

    def notes(con) -> None:
        summary.notes.extend(lookalike_warnings(systems, results_store.system_definitions(con), what="system"))

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


def import_judgments(workspace: str | Path, path: str | Path) -> IngestSummary:
    """Verdicts produced elsewhere, by a model or a person (CSV or JSONL).

    Columns: item/question id, rater, kind, system_a, system_b (pairwise kinds), label; optional
    shown_order (ab|ba), reference (1|2), evidence. Other columns are kept in ``extra``. Checked whole
    (repeats, unknown questions, a rater a run config declared with another kind, a verdict the
    workspace has with another label), then written in one transaction.
    """
    return _import_judgments(workspace, Path(path), declined=True)


def import_judgments_staged(workspace: str | Path, path: Path) -> IngestSummary | None:
    """``import_judgments`` when the SQL reads the file exactly; else None, nothing written."""
    return _import_judgments(workspace, Path(path), declined=False)


def _similarity_threshold() -> float:
    """The similarity rater's default threshold: a score imported as a label is stored with the label it
    gives (loaded only when a file holds one)."""
    from lsqa.judging.similarity import DEFAULT_THRESHOLD

    return DEFAULT_THRESHOLD


def _import_judgments(workspace, path: Path, *, declined: bool) -> IngestSummary | None:
    summary = IngestSummary(str(path))

    def declared(con) -> None:
        conflict = staged_verdicts.first_declared_conflict(con)
        if conflict:
            definitions.check_imported_verdicts(con, path, [conflict])

    def notes(con) -> None:
        if not staged_verdicts.beyond_ascii(con):
            return  # (names all ASCII: none looks like another)
        raters, systems = staged_verdicts.names_in_order(con)
        summary.notes.extend(lookalike_warnings(raters, results_store.judge_definitions(con), what="rater")
                             + lookalike_warnings(systems, results_store.system_definitions(con), what="system"))

    # The kinds the staged SQL takes, each label as written -> the canonical one. A kind about references
    # is refused and a scored kind's label may be a score: a file with one is restaged, its rows checked by
    # the kinds' records.
    kinds = [(record.name, record.family, record.pairwise, alias, label)
             for record in judge_kinds.all_kinds() if not (record.about_references or record.scored)
             for alias, label in record.aliases.items()]
    done = skeleton.run(workspace, path, staged_verdicts.RECORD, max_bytes=MAX_TABLE_BYTES,
                        max_cell_chars=MAX_CELL_CHARS, declined=declined, hooks={"declared": declared},
                        notes=notes, kinds=kinds, records=dict(judge_kinds.KINDS), threshold=_similarity_threshold,
                        references=REFERENCES)
    if done is None:
        return None
    added, total = done
    summary.add("judgments", added)
    summary.skip("judgments", total - added)
    return summary


__all__ = ["import_answers", "import_answers_staged", "import_judgments", "import_judgments_staged"]
