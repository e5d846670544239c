"""The row-by-row readers of ``lsqa ingest-narrativeqa``'s files: the oracle the tests compare lsqa's SQL with
(``lsqa.store.importers.questions``, ``lsqa.store.importers.errata``), and the NarrativeQA bench's *rows*.

One Python record per row, every check in Python: the documents, question and summary files and the
errata file as lsqa read them before its NarrativeQA import ran in SQL. The rows come from the row reader
(``row_tables``: Python's csv and json modules), not from lsqa's table reader, so a comparison is one of the
reading as well as of the rules. ``ingest_narrativeqa_rows`` reads the files this way and hands what it read to
lsqa's own writing (the stories, the stored-question check and the insert: ``lsqa.corpus.ingest._add_narrativeqa``),
so a comparison with ``ingest_narrativeqa`` compares the reading and the checks.
"""

from __future__ import annotations

from pathlib import Path

from lsqa.corpus import ingest
from lsqa.errors import InputError
from lsqa.store.importers.questions import DOCUMENT_COLUMNS, DOCUMENT_FIELDS, QUESTION_COLUMNS, REQUIRED
from lsqa.store.importers.wording import MAX_CELL_CHARS, named, whole_number
from lsqa.text import csv_cells

from .import_oracle import table_records
from .row_tables import read_table

QUESTION_TEXT = ("text", "reference_1", "reference_2")


def question_rows(qa_files: list[Path], set_name: str, docs: dict[str, dict]) -> list[dict]:
    """The questions of ``qa_files`` (each (document, q_index) once, from its first line), with ``file_no``
    and ``line``; InputError at the first bad row."""
    rows: list[dict] = []
    seen: dict[str, dict] = {}
    for file_no, path in enumerate(qa_files):
        per_doc: dict[str, int] = {}
        for line_no, rec in table_records(path, required=REQUIRED):
            if rec.get("set", set_name) != set_name:
                continue
            doc_id = rec["document_id"]
            if doc_id not in docs:
                raise InputError(path, f"question for unknown document_id {doc_id!r} (not in documents.csv)",
                                 line=line_no, hint="add the document to documents.csv or fix the id")
            q_index = rec.get("q_index")
            q_index = (whole_number(path, line_no, q_index, "q_index") if q_index not in (None, "")
                       else per_doc.get(doc_id, 0))
            per_doc[doc_id] = q_index + 1
            row = {
                "id": f"nqa:{doc_id}:{q_index}", "document_id": doc_id, "origin": "narrativeqa",
                "text": rec["question"], "reference_1": rec["answer1"], "reference_2": rec["answer2"],
                "set_name": set_name, "source_index": q_index, "file_no": file_no, "line": line_no,
            }
            first = seen.setdefault(row["id"], row)
            if first is not row:
                if tuple(first[k] for k in QUESTION_TEXT) != tuple(row[k] for k in QUESTION_TEXT):
                    where = f"{qa_files[first['file_no']]}:{first['line']}"
                    raise InputError(path, f"question {q_index} of document {doc_id} repeats {where} with another "
                                           "text", line=line_no, hint="keep one row per (document_id, q_index)")
                continue
            rows.append(row)
    return rows


def documents(docs_file: Path, set_name: str) -> dict[str, dict]:
    """NarrativeQA's documents of ``set_name`` by id (names and word count checked), each with its first line."""
    docs: dict[str, dict] = {}
    first_rows: dict[str, tuple[int, dict]] = {}
    for line_no, rec in table_records(docs_file, required=DOCUMENT_COLUMNS):
        first = first_rows.setdefault(rec["document_id"], (line_no, dict(rec)))
        if first[1] != rec:
            raise InputError(docs_file, f"document_id {rec['document_id']!r} repeats line {first[0]} with other "
                                        "values", line=line_no, hint="keep one row per document")
        if rec["set"] == set_name and first[0] == line_no:
            named(docs_file, line_no, "document_id", rec["document_id"])
            named(docs_file, line_no, "wiki_title", rec["wiki_title"])
            words = rec.get("story_word_count")
            words = whole_number(docs_file, line_no, words, "story_word_count") if words not in (None, "") else 0
            docs[rec["document_id"]] = {"line": line_no, **{k: rec.get(k) or "" for k in DOCUMENT_FIELDS},
                                        "story_word_count": words}
    return docs


def summaries(summary_files: list[Path], docs: dict[str, dict]) -> dict[str, str]:
    """The summary of each document in ``docs`` (the last row of an id wins)."""
    found: dict[str, str] = {}
    for path in summary_files:
        for _, rec in table_records(path, required=("document_id", "summary")):
            if rec["document_id"] in docs:
                found[rec["document_id"]] = rec["summary"]
    return found


def ingest_narrativeqa_rows(workspace, directory, *, set_name: str = "test", target_tokens: int = 200):
    """``ingest_narrativeqa`` with its files read by the readers above (lsqa writes what they read)."""
    import pyarrow

    directory = Path(directory)
    if set_name not in ("train", "valid", "test"):
        raise InputError(directory, f"unknown set {set_name!r}", hint="use test, valid or train")
    docs_file, qa_files, summary_files = ingest._nqa_files(directory)
    docs = documents(docs_file, set_name)
    rows = question_rows(qa_files, set_name, docs)
    schema = pyarrow.schema([(c, pyarrow.int32() if c == "source_index" else pyarrow.string())
                             for c in QUESTION_COLUMNS] + [("file_no", pyarrow.int32()), ("line", pyarrow.int64())])
    questions = pyarrow.Table.from_pylist(rows, schema=schema)
    return ingest._add_narrativeqa(workspace, directory, set_name, docs_file, qa_files, docs, questions,
                                   summaries(summary_files, docs), target_tokens)


# --------------------------------------------------------------------------------------- errata


def _errata_text(path: Path, line, column: str, value, csv_file: bool) -> str:
    """A text cell of an errata row ('' for none); a CSV cell loses the ``'`` lsqa's errata CSV put in
    front of formula-like text (``lsqa.text.csv_cells``)."""
    if value is None:
        return ""
    if isinstance(value, list) and all(isinstance(v, str) for v in value) and column == "annotators":
        return "; ".join(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool) and column == "correction":
        return str(value)  # a JSON number ("3") is the text it reads as
    if not isinstance(value, str):
        raise InputError(path, f"column {column} must be text, not {type(value).__name__}", line=line,
                         hint="write it as text in quotes")
    return csv_cells.read_cell(value) if csv_file else value


def read_errata_rows(path: str | Path) -> list[dict]:
    """``lsqa.corpus.ingest.read_errata`` row by row."""
    path = Path(path)
    table = read_table(path, ("question_id", "reference"))
    csv_file = table.header_line is not None
    if "correction" not in table.columns:
        raise InputError(path, "no correction column", line=table.header_line,
                         hint="add a correction column with the corrected reference (lsqa's errata file has one)")
    seen: dict[tuple[str, str], tuple[int | None, str]] = {}
    out = []
    for row, line in zip(table.rows, table.lines, strict=False):
        reference = row["reference"]
        if reference not in ("1", "2"):
            raise InputError(path, f"reference {reference!r} is not 1 or 2", line=line,
                             hint="write which reference of the question is corrected: 1 or 2")
        raw = row.get("correction")
        text = _errata_text(path, line, "correction", raw, csv_file).strip()
        if not text:
            if isinstance(raw, str) and raw:
                raise InputError(path, f"the correction of reference {reference} of {row['question_id']!r} is only "
                                       "spaces", line=line, hint="write the corrected reference, or leave the cell empty")
            continue
        if len(text) > MAX_CELL_CHARS or "\x00" in text:
            raise InputError(path, "a correction above the size limit or with a NUL character", line=line,
                             hint="shorten it")
        key = (row["question_id"], reference)
        if key in seen:
            first_line, first = seen[key]
            if first != text:
                raise InputError(path, f"reference {reference} of {key[0]!r} is corrected twice with different texts "
                                       f"(first at line {first_line})", line=line,
                                 hint="keep one correction per question and reference")
            continue
        seen[key] = (line, text)
        out.append({"question_id": key[0], "reference": reference, "text": text, "line": line,
                    "source": f"{path.name}:{line}" if line is not None else path.name,
                    "proposed_by": _errata_text(path, line, "annotators", row.get("annotators"), csv_file)})
    if not out:
        raise InputError(path, "no corrected reference: every correction cell is empty",
                         hint="write the corrected reference in the correction column of the rows to correct")
    return out
