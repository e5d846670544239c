"""Getting data into a workspace: books, NarrativeQA, answers and verdicts made elsewhere.

Every importer reads and checks its whole input first and writes in one transaction: a bad file
writes nothing, and importing the same file twice adds nothing the second time.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from lsqa import book_text, definitions, store
from lsqa.errors import InputError
from lsqa.vocabulary import ABSOLUTE_LABELS, IMPORTED, JUDGE_KINDS, PAIRWISE_LABELS, REFERENCES, is_pairwise, normalise_label
from lsqa.store import corpus as corpus_store
from lsqa.store import results as results_store
from lsqa.input_tables import plain_value
from lsqa.input_tables import records as read_records


@dataclass
class IngestSummary:
    """What an import did, printed by the command line and shown by the dashboard."""

    source: str
    added: dict[str, int] = field(default_factory=dict)
    skipped: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def add(self, key: str, n: int = 1) -> None:
        self.added[key] = self.added.get(key, 0) + n

    def skip(self, key: str, n: int = 1) -> None:
        self.skipped[key] = self.skipped.get(key, 0) + n

    def lines(self) -> list[str]:
        out = [f"{self.source}:"]
        for k, v in self.added.items():
            out.append(f"  added   {v:>7,} {k}")
        for k, v in self.skipped.items():
            if v:
                    out.append(f"  skipped {v:>7,} {k} (already in the workspace)")
        out.extend(f"  note: {n}" for n in self.notes)
        return out

    def to_dict(self) -> dict:
        return {"source": self.source, "added": self.added, "skipped": self.skipped, "notes": self.notes}


# --------------------------------------------------------------------------------------- books

_META_RE = {key: re.compile(rf"^{key}:\s*(.+)$", re.MULTILINE) for key in ("Title", "Author")}


def _gutenberg_meta(text: str, key: str) -> str:
    m = _META_RE[key].search(text[:20_000])
    return m.group(1).strip() if m else ""


def _book_rows(text: str, *, doc_id: str, source: str, title: str, author: str, kind: str, set_name: str = "",
               summary: str = "", story_start: str = "", story_end: str = "", target_tokens: int = 200):
    span = book_text.story_span(text, story_start, story_end)
    story = text[span.start:span.end]
    passages = book_text.split_passages(text, span.start, span.end, target_tokens)
    doc = {
        "id": doc_id, "source": source, "content_sha1": book_text.sha1(text), "title": title, "author": author,
        "kind": kind, "set_name": set_name, "full_text": text, "clean_start": span.start, "clean_end": span.end,
        "summary": summary, "word_count": book_text.word_count(story), "n_tokens": sum(p.n_tokens for p in passages),
    }
    return doc, passages, span


def ingest_book(workspace: str | Path, path: str | Path, *, title: str | None = None, author: str | None = None,
                kind: str = "book", target_tokens: int = 200) -> IngestSummary:
    """Add a plain-text book (Project Gutenberg header and footer removed) with its passages."""
    path = Path(path)
    text = book_text.read_text(path)
    summary = IngestSummary(str(path))
    title = title or _gutenberg_meta(text, "Title") or path.stem
    author = author if author is not None else _gutenberg_meta(text, "Author")
    doc_id = "book-" + book_text.sha1(text)[:12]
    with store.write(workspace) as con:
        existing = corpus_store.document_by_sha1(con, book_text.sha1(text))
        if existing:
            summary.skip("documents")
            summary.notes.append(f"this text is already in the workspace as {existing['id']} ({existing['title']})")
            return summary
        doc, passages, span = _book_rows(text, doc_id=doc_id, source=str(path), title=title, author=author, kind=kind,
                                         target_tokens=target_tokens)
        summary.add("documents", corpus_store.insert_documents(con, [doc]))
        summary.add("passages", corpus_store.insert_passages(con, doc_id, passages))
    summary.notes.append(f"{doc_id} '{title}': {doc['word_count']:,} words, story span by {span.how}")
    return summary


# --------------------------------------------------------------------------------- NarrativeQA

NQA_DOC_COLUMNS = ("document_id", "set", "kind", "wiki_title")
NQA_QA_COLUMNS = ("document_id", "question", "answer1", "answer2")


def _nqa_files(directory: Path) -> tuple[Path, list[Path], list[Path]]:
    """documents.csv, the question files and the summary files, in either published layout."""
    docs = directory / "documents.csv"
    if not docs.is_file():
        raise InputError(directory, "no documents.csv in this folder", hint="give the NarrativeQA repository folder")
    qaps = [p for p in (directory / "qaps.csv",) if p.is_file()] + sorted(directory.glob("*qaps*.jsonl"))
    if not qaps:
        raise InputError(directory, "no qaps.csv or *qaps*.jsonl question file")
    summaries = [p for p in (directory / "third_party" / "wikipedia" / "summaries.csv",) if p.is_file()]
    summaries += sorted(directory.glob("*summaries*.jsonl"))
    return docs, qaps, summaries


def _whole_number(path: Path, line_no: int, value, column: str) -> int:
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = None
    if number is None or not number.is_integer() or number < 0:
        raise InputError(path, f"{column} must be a whole number, not {value!r}", line=line_no,
                         hint="write a number such as 0, 1, 2")
    return int(number)


QUESTION_TEXT = ("text", "reference_1", "reference_2")


def _refuse_changed_questions(con, questions: list[dict]) -> None:
    """A question already stored under the same (document, q_index) with another text or other
    references: one of the two would be dropped unseen, so neither is kept."""
    stored = corpus_store.question_texts(con, [q["id"] for q in questions])
    for q in questions:
        old = stored.get(q["id"])
        if old is not None and tuple(old) != tuple(q[k] for k in QUESTION_TEXT):
            path, line = q["_source"]
            raise InputError(path, f"question {q['source_index']} of document {q['document_id']} is already in the "
                                   f"workspace with another text ({old[0][:60]!r})", line=line,
                             hint="keep the published text, or import the changed set into a new workspace")
    for q in questions:
        q.pop("_source", None)


def _question_rows(qa_files: list[Path], set_name: str, docs: dict[str, dict]) -> list[dict]:
    rows: list[dict] = []
    seen: dict[str, dict] = {}
    for path in qa_files:
        per_doc: dict[str, int] = {}
        for line_no, rec in read_records(path, required=NQA_QA_COLUMNS):
            if rec.get("set", set_name) != set_name:
                continue
            doc_id = rec["document_id"]
            if doc_id not in docs:
                raise InputError(path, f"question for unknown document_id {doc_id!r} (not in documents.csv)",
                                 line=line_no, hint="add the document to documents.csv or fix the id")
            q_index = rec.get("q_index")
            q_index = (_whole_number(path, line_no, q_index, "q_index") if q_index not in (None, "")
                       else per_doc.get(doc_id, 0))
            per_doc[doc_id] = q_index + 1
            row = {
                "id": f"nqa:{doc_id}:{q_index}", "document_id": doc_id, "origin": "narrativeqa",
                "text": rec["question"], "reference_1": rec["answer1"], "reference_2": rec["answer2"],
                "set_name": set_name, "source_index": q_index, "_source": (path, line_no),
            }
            first = seen.setdefault(row["id"], row)
            if first is not row:
                if tuple(first[k] for k in QUESTION_TEXT) != tuple(row[k] for k in QUESTION_TEXT):
                    where = f"{first['_source'][0]}:{first['_source'][1]}"
                    raise InputError(path, f"question {q_index} of document {doc_id} repeats {where} with another "
                                           "text", line=line_no, hint="keep one row per (document_id, q_index)")
                continue
            rows.append(row)
    return rows


def ingest_narrativeqa(workspace: str | Path, directory: str | Path, *, set_name: str = "test",
                       target_tokens: int = 200) -> IngestSummary:
    """Add NarrativeQA as published: documents, questions with both references, summaries, stories.

    Full texts are read from ``DIR/stories/<document_id>.txt`` where present and cut with
    NarrativeQA's own ``story_start`` / ``story_end`` markers. Only documents of ``set_name`` that
    have questions, a summary or a story file are added.
    """
    directory = Path(directory)
    if set_name not in ("train", "valid", "test"):
        raise InputError(directory, f"unknown set {set_name!r}", hint="use test, valid or train")
    summary = IngestSummary(str(directory))
    docs_file, qa_files, summary_files = _nqa_files(directory)
    docs = {}
    doc_lines: dict[str, tuple[int, dict]] = {}
    for line_no, rec in read_records(docs_file, required=NQA_DOC_COLUMNS):
        first = doc_lines.setdefault(rec["document_id"], (line_no, rec))
        if first[1] is not rec and first[1] != rec:
            raise InputError(docs_file, f"document_id {rec['document_id']!r} repeats line {first[0]} with other "
                                        "values", line=line_no, hint="keep one row per document")
        if rec["set"] == set_name:
            words = rec.get("story_word_count")
            rec["story_word_count"] = _whole_number(docs_file, line_no, words, "story_word_count") \
                if words not in (None, "") else 0
            docs[rec["document_id"]] = rec
    questions = _question_rows(qa_files, set_name, docs)
    summaries: dict[str, str] = {}
    for path in summary_files:
        for line_no, rec in read_records(path, required=("document_id", "summary")):
            if rec["document_id"] in docs:
                summaries[rec["document_id"]] = rec["summary"]
    stories_dir = directory / "stories"
    wanted = {q["document_id"] for q in questions} | set(summaries)
    wanted |= {p.stem for p in stories_dir.glob("*.txt") if p.stem in docs} if stories_dir.is_dir() else set()

    # Read and check every story before writing anything.
    doc_rows, passage_rows = [], {}
    for doc_id in sorted(wanted):
        meta = docs[doc_id]
        kind = "book" if meta["kind"] == "gutenberg" else meta["kind"]
        story_file = stories_dir / f"{doc_id}.txt"
        if story_file.is_file():
            text = book_text.read_text(story_file)
            doc, passages, _ = _book_rows(
                text, doc_id=doc_id, source=str(story_file), title=meta["wiki_title"], author="", kind=kind,
                set_name=set_name, summary=summaries.get(doc_id, ""), story_start=meta.get("story_start") or "",
                story_end=meta.get("story_end") or "", target_tokens=target_tokens)
            passage_rows[doc_id] = passages
        else:
            doc = {"id": doc_id, "source": meta.get("story_url", ""), "content_sha1": f"no-text:{doc_id}",
                   "title": meta["wiki_title"], "kind": kind, "set_name": set_name,
                   "summary": summaries.get(doc_id, ""), "word_count": int(meta.get("story_word_count") or 0)}
        doc_rows.append(doc)

    with store.write(workspace) as con:
        _refuse_changed_questions(con, questions)
        existing = corpus_store.document_ids(con)
        # A story whose text is already stored under another id (e.g. added by ingest-book) cannot be
        # stored twice (content_sha1 is unique): its NarrativeQA document is kept without the text,
        # rather than silently dropped with its passages and questions left pointing at nothing.
        holders = corpus_store.documents_by_sha1(con, [d["content_sha1"] for d in doc_rows])
        for i, d in enumerate(doc_rows):
            if d.get("full_text") is None:
                continue
            other = holders.setdefault(d["content_sha1"], d["id"])
            if other != d["id"]:
                doc_rows[i] = {k: d[k] for k in ("id", "source", "title", "kind", "set_name", "summary")} | {
                    "content_sha1": f"no-text:{d['id']}", "word_count": d["word_count"]}
                passage_rows.pop(d["id"], None)
                summary.notes.append(f"the story of {d['id']} ({d['title']}) is already in the workspace as "
                                     f"{other}; {d['id']} and its questions are kept without the full text")
        new_docs = [d for d in doc_rows if d["id"] not in existing]
        summary.add("documents", corpus_store.insert_documents(con, new_docs))
        summary.skip("documents", len(doc_rows) - len(new_docs))
        # A document first imported without its story gets the text when the story appears.
        for d in doc_rows:
            if d["id"] in existing and d.get("full_text") is not None:
                row = corpus_store.get_document(con, d["id"])
                if row["full_text"] is None:
                    corpus_store.set_document_text(con, d["id"], **{k: d[k] for k in (
                        "source", "content_sha1", "full_text", "clean_start", "clean_end", "word_count", "n_tokens")})
                    summary.add("story texts filled in")
        n_passages = sum(corpus_store.insert_passages(con, doc_id, ps) for doc_id, ps in passage_rows.items())
        summary.add("passages", n_passages)
        n_q = corpus_store.insert_questions(con, questions)
        summary.add("questions", n_q)
        summary.skip("questions", len(questions) - n_q)
    summary.notes.append(f"{len(passage_rows)} documents with full text, {len(summaries)} summaries, set={set_name}")
    return summary


# ----------------------------------------------------------------------- answers and verdicts

def _first_column(rec: dict, names: tuple[str, ...]) -> str | None:
    for name in names:
        if name in rec and rec[name] not in (None, ""):
            return str(rec[name])
    return None


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
    return out


def import_answers(workspace: str | Path, path: str | Path) -> IngestSummary:
    """Answers produced elsewhere (CSV or JSONL: question id, system name, answer text)."""
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


def judgment_id(judge: str, kind: str, question_id: str, system_a: str, system_b: str = "", shown_order: str = "ab",
                reference: str = "") -> str:
    """Stable id from a verdict's natural key, so re-imports and re-runs find the same row."""
    key = "\x1f".join((judge, kind, question_id, system_a, system_b, shown_order, reference))
    return hashlib.sha1(key.encode("utf-8")).hexdigest()


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


def _label_hint(kind: str) -> str:
    if is_pairwise(kind):
        return f"use one of {', '.join(PAIRWISE_LABELS)} (in system terms)"
    if kind == "similarity":
        return "use yes, no or a similarity from -1 to 1"
    return f"use one of {', '.join(ABSOLUTE_LABELS)}"


def import_judgments(workspace: str | Path, path: str | Path) -> IngestSummary:
    """Verdicts produced elsewhere, by a model or a person (CSV or JSONL).

    Columns: item/question id, rater, kind, system_a, system_b (pairwise kinds), label; optional
    shown_order (ab|ba), reference (1|2), evidence. Other columns are kept in ``extra``.
    """
    path = Path(path)
    summary = IngestSummary(str(path))
    known_cols = set(sum(JUDGMENT_ALIASES.values(), ())) | {"system_b", "shown_order", "reference", "evidence"}
    records = []
    for line_no, rec in read_records(path, required_any=JUDGMENT_ALIASES):
        core = _aliased(path, line_no, rec, JUDGMENT_ALIASES)
        kind = core["kind"].lower()
        if kind not in JUDGE_KINDS:
            raise InputError(path, f"unknown kind {core['kind']!r}", line=line_no,
                             hint=f"use one of {', '.join(JUDGE_KINDS)}")
        system_b = _optional_text(path, line_no, rec, "system_b")
        if is_pairwise(kind) and not system_b:
            raise InputError(path, "a pairwise verdict needs system_b", line=line_no, hint="add the other system")
        if is_pairwise(kind) and system_b == core["system_a"]:
            raise InputError(path, f"system_a and system_b are both {system_b!r}", line=line_no,
                             hint="a system cannot be compared with itself; fix the names")
        if not is_pairwise(kind) and system_b:
            raise InputError(path, f"a {kind} verdict rates one answer, but system_b is {system_b!r}", line=line_no,
                             hint="leave system_b empty, or use a pairwise kind")
        try:
            label = normalise_label(core["label"], kind)
        except ValueError as exc:
            raise InputError(path, str(exc), line=line_no, hint=_label_hint(kind)) from None
        score, threshold = None, None
        if kind == "similarity" and label not in ("yes", "no"):
            # A similarity score as the label: stored as the score, the label by the rater's default
            # threshold (as the pipeline's similarity rows), never a label the statistics cannot read.
            from lsqa.similarity import DEFAULT_THRESHOLD

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
            "judge": core["rater"], "kind": kind, "question_id": core["question_id"], "system_a": core["system_a"],
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
        n = results_store.insert_judgments(con, [r for _, r in records])
    summary.add("judgments", n)
    summary.skip("judgments", len(records) - n)
    return summary


__all__ = ["IngestSummary", "ingest_book", "ingest_narrativeqa", "import_answers", "import_judgments", "judgment_id"]
