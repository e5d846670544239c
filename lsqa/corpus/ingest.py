"""Getting books and NarrativeQA into a workspace (answers and verdicts made elsewhere: ``lsqa.study.imports``).

Every importer reads and checks its whole input first and writes in one transaction: a bad file
writes nothing, and importing the same file twice adds nothing the second time.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from lsqa import store
from lsqa.errors import InputError
from lsqa.store import corpus as corpus_store
from lsqa.store.importers import errata as staged_errata
from lsqa.store.importers import questions as staged_questions
from lsqa.store.importers import skeleton
from lsqa.store.importers.wording import IngestSummary, named
from lsqa.text import book as book_text

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
    named(path, None, "title", title)
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
        summary.add("passages", corpus_store.insert_passages(con, {doc_id: passages}))
    summary.notes.append(f"{doc_id} '{title}': {doc['word_count']:,} words, story span by {span.how}")
    return summary


# --------------------------------------------------------------------------------- NarrativeQA

def _inside(root: Path, path: Path, *, line_of: str = "") -> Path:
    """``path`` if it lies inside the dataset folder ``root`` (resolved: no ``..``, no link leading
    out of it), else an InputError naming it. Every file the NarrativeQA importer opens passes here."""
    try:
        target = path.resolve()
    except (OSError, RuntimeError) as exc:  # a loop of links, a name too long
        raise InputError(path, f"cannot be resolved ({exc}){line_of}", hint="fix or remove this file") from None
    if target != root and not target.is_relative_to(root):
        raise InputError(path, f"leads outside the dataset folder {root} (to {target}){line_of}",
                         hint="put the file itself inside the folder, not a link to elsewhere")
    return path


def _story_file(root: Path, stories_dir: Path, doc_id: str, docs_file: Path, line_no: int) -> Path:
    """``stories/<document_id>.txt``, refused when the id could name a file elsewhere."""
    name = f"{doc_id}.txt"
    shown = doc_id if len(doc_id) <= 60 else doc_id[:60] + "…"
    if "/" in doc_id or "\\" in doc_id or "\x00" in doc_id or len(name.encode("utf-8", "surrogatepass")) > 255:
        raise InputError(docs_file, f"document_id {shown!r} cannot name a story file stories/<document_id>.txt "
                                    "(it holds /, \\ or NUL, or is longer than a file name may be)", line=line_no,
                         hint="use a plain id such as NarrativeQA's 40-character hex ids")
    return _inside(root, stories_dir / name, line_of=f"; document_id of {docs_file}:{line_no}")


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
    root = directory.resolve()
    for path in [docs, *qaps, *summaries]:
        _inside(root, path)
    return docs, qaps, summaries


def question_table(workspace: str | Path, qa_files: list[Path], set_name: str, document_ids: list[str]):
    """The questions of ``qa_files`` read and checked in SQL (the record ``lsqa.store.importers.questions.RECORD``
    staged apart, no workspace locked: an Arrow table; InputError at the first bad row). DuckDB spills next to
    the workspace, as an import does."""
    folder = Path(workspace).resolve().parent
    spill = folder if folder.is_dir() and os.access(folder, os.W_OK) else None
    return skeleton.stage_apart(qa_files, staged_questions.RECORD, spill_folder=spill, set_name=set_name,
                                document_ids=document_ids)


def ingest_narrativeqa(workspace: str | Path, directory: str | Path, *, set_name: str = "test",
                       target_tokens: int = 200) -> IngestSummary:
    """Add NarrativeQA as published: documents, questions with both references, summaries, stories.

    Full texts are read from ``DIR/stories/<document_id>.txt`` where present and cut with
    NarrativeQA's own ``story_start`` / ``story_end`` markers. Only documents of ``set_name`` that
    have questions, a summary or a story file are added. The documents, question and summary files are
    read and checked in SQL (``lsqa.store.importers.questions``) before anything is written.
    """
    directory = Path(directory)
    if set_name not in ("train", "valid", "test"):
        raise InputError(directory, f"unknown set {set_name!r}", hint="use test, valid or train")
    docs_file, qa_files, summary_files = _nqa_files(directory)
    docs = staged_questions.documents(docs_file, set_name)
    questions = question_table(workspace, qa_files, set_name, sorted(docs))
    summaries = staged_questions.summaries(summary_files, sorted(docs))
    return _add_narrativeqa(workspace, directory, set_name, docs_file, qa_files, docs, questions, summaries,
                            target_tokens)


def _add_narrativeqa(workspace, directory: Path, set_name: str, docs_file: Path, qa_files: list[Path],
                     docs: dict[str, dict], questions, summaries: dict[str, str], target_tokens: int) -> IngestSummary:
    """Read the stories of the documents to add and write everything in one transaction: ``docs``
    (``questions.documents``), ``questions`` (the Arrow table ``question_table`` staged), ``summaries``."""
    summary = IngestSummary(str(directory))
    question_docs = set(questions.column("document_id").to_pylist())
    stories_dir = _inside(directory.resolve(), directory / "stories")
    wanted = question_docs | set(summaries)
    wanted |= {p.stem for p in stories_dir.glob("*.txt") if p.stem in docs} if stories_dir.is_dir() else set()

    # Read and check every story before writing anything.
    doc_rows, passage_rows = [], {}
    for doc_id in sorted(wanted):
        meta = docs[doc_id]
        kind = "book" if meta["kind"] == "gutenberg" else meta["kind"]
        story_file = _story_file(directory.resolve(), stories_dir, doc_id, docs_file, meta["line"])
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
        # The questions' check (one the workspace has with another text) and insert, in this write.
        n_q = skeleton.run(workspace, qa_files, staged_questions.RECORD, con=con, staged=questions)
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
        summary.add("passages", corpus_store.insert_passages(con, passage_rows))
        summary.add("questions", n_q)
        summary.skip("questions", questions.num_rows - n_q)
    summary.notes.append(f"{len(passage_rows)} documents with full text, {len(summaries)} summaries, set={set_name}")
    return summary


# --------------------------------------------------------------------------------------- errata

def read_errata(path: str | Path) -> list[dict]:
    """The corrected references of an errata file (the Reference errors page's download, CSV or JSONL, or
    any table with ``question_id``, ``reference`` and ``correction``): one dict per (question, reference)
    with ``question_id``, ``reference``, ``text``, ``line``, ``source`` (file:line) and ``proposed_by`` (the
    row's ``annotators``). A row with an empty ``correction`` is a flag without a proposal and is passed over.

    Read and checked in SQL (``lsqa.store.importers.errata``); InputError naming the file and line: a
    malformed file, no ``correction`` column, a reference other than 1 or 2, a correction that is only
    spaces, one (question, reference) given two different texts, a file without any correction."""
    return staged_errata.read(path)


def ingest_errata(workspace: str | Path, path: str | Path) -> IngestSummary:
    """Read an errata file's corrected references into the workspace (``reference_corrections``,
    migration 0024), beside each question's own references, which stay as they are. Every row is
    checked first (``read_errata``; a question not in the workspace is refused with its line), then
    all are written in one transaction; reading the same file again adds nothing."""
    path = Path(path)
    corrections = skeleton.stage_apart(path, staged_errata.RECORD, spill_folder=None)
    summary = IngestSummary(str(path))
    with store.write(workspace) as con:
        added, same, total = skeleton.run(workspace, path, staged_errata.RECORD, con=con, staged=corrections)
    summary.add("corrected references", added)
    if same:
        summary.notes.append(f"{same} corrections equal to the reference they correct: not kept")
    if total - same - added:
        summary.notes.append(f"{total - same - added} corrections already standing: not added again")
    summary.notes.append("kept beside the original references (reference_1, reference_2 unchanged); "
                         "`lsqa export` writes them as corrected_reference_1/2")
    return summary


__all__ = ["ingest_book", "ingest_errata", "ingest_narrativeqa", "read_errata"]
