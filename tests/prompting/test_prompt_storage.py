"""Each context stored once (issue 15, part 1): prompts as parts, byte-exact, cache keys unchanged."""

import csv
import gzip
import json
import shutil

import duckdb
import pytest

from lsqa import store
from lsqa.config.study import load_run_config, run_config_from_dict
from lsqa.corpus.ingest import ingest_narrativeqa
from lsqa.llm import LLMRequest, cache_key
from lsqa.store import llm_calls
from lsqa.study import pipeline
from lsqa.text.prompt_parts import canonical_json, join_messages, split_messages
from tests.conftest import TEST_DATA

LEGACY = TEST_DATA / "pre0006_workspace"


def _stored_calls(path):
    with store.connect(path) as con:
        keys = [r[0] for r in con.execute("SELECT cache_key FROM llm_calls").fetchall()]
        return {k: llm_calls.get_call(con, k) for k in keys}


def test_split_and_join_give_back_the_messages_exactly():
    book = "Chapter I.\n\n" + "Jean Valjean walked on, {braces} “quotes” \\ and ünïcode.\n" * 50
    passage = "A passage that is retrieved. " * 20
    messages = [{"role": "system", "content": "short"},
                {"role": "user", "content": f"# CONTEXT\n{book}\n# CONTEXT END\n{passage}\n\nQuestion: who?"}]
    parts, texts = split_messages(messages, (book, passage))
    assert parts is not None and len(texts) == 2
    assert canonical_json(join_messages(canonical_json(parts), texts)) == canonical_json(messages)
    assert split_messages(messages, ("not in the prompt " * 20,)) == (None, {})


@pytest.mark.slow
def test_new_calls_store_each_context_once_and_read_back_byte_for_byte(workspace):
    ingest_narrativeqa(workspace, TEST_DATA / "narrativeqa_slice")
    config = run_config_from_dict({
        "documents": ["The Tale of Tom Kitten"], "questions": "narrativeqa", "max_questions": 6,
        "systems": [{"name": "rag", "model": "lsqa/extractive", "context": "retrieval:1000"},
                    {"name": "full", "model": "lsqa/extractive", "context": "full"}],
        "judges": [{"name": "sxs", "model": "lsqa/lexical-judge", "kind": "pairwise", "context": "full"}]})
    summary = pipeline.run(workspace, config).to_dict()
    assert summary["calls_made"] == 18 and summary["calls_failed"] == 0
    calls = _stored_calls(workspace)
    with store.connect(workspace) as con:
        story = con.execute("SELECT substring(full_text, clean_start + 1, clean_end - clean_start) FROM documents"
                            " WHERE title = 'The Tale of Tom Kitten'").fetchone()[0]
        books = con.execute("SELECT count(*) FROM prompt_texts WHERE text = ?", [story]).fetchone()[0]
        whole = [json.loads(m)[0]["content"] for (m,) in con.execute(
            "SELECT messages FROM llm_calls WHERE prompt_parts IS NULL").fetchall()]
    assert books == 1                 # the book once, for 6 answers and 6 verdicts that show it
    # Every call refers to its context (the book or the passages), except where BM25 found nothing.
    assert len(whole) <= 1 and all("# CONTEXT\n\n# CONTEXT END" in c for c in whole)
    for key, call in calls.items():
        messages = json.loads(call["messages"])
        assert story in messages[0]["content"] or "# CONTEXT" in messages[0]["content"]
        # The rendered prompt as sent, byte for byte: its canonical JSON hashes to the stored key.
        assert cache_key(LLMRequest(call["model"], messages, json.loads(call["params"]))) == key


def test_workspace_made_before_0006_migrates_and_every_call_still_hits(tmp_path):
    path = tmp_path / "old.duckdb"
    with gzip.open(LEGACY / "pre0006.duckdb.gz") as src, open(path, "wb") as dst:
        shutil.copyfileobj(src, dst)
    con = duckdb.connect(str(path))   # read as main's code left it, before any migration of ours
    before = dict(con.execute("SELECT cache_key, messages FROM llm_calls").fetchall())
    con.close()
    assert len(before) == 12

    calls = _stored_calls(path)       # the first connection applies 0006
    assert {k: c["messages"] for k, c in calls.items()} == before
    with store.connect(path) as con:
        moved = con.execute("SELECT count(*) FROM llm_calls WHERE prompt_parts IS NOT NULL").fetchone()[0]
        full_text = con.execute("SELECT count(*) FROM llm_calls WHERE messages LIKE '%Tom Kitten%'").fetchone()[0]
        con.execute("DELETE FROM judgments")
        con.execute("DELETE FROM answers")
    assert moved >= 8 and full_text == 0  # every full-book prompt moved (the book is in prompt_texts)

    summary = pipeline.run(path, load_run_config(LEGACY / "study.toml")).to_dict()
    assert (summary["calls_made"], summary["calls_cached"], summary["calls_failed"]) == (0, 12, 0)


@pytest.mark.slow
def test_full_book_calls_grow_the_workspace_by_under_2_percent_of_the_book(workspace, shared_data, tmp_path):
    """Issue 15's target on a 1.46 MB NarrativeQA book: 90 full-book verdicts (before: ~9% per call)."""
    doc_id = "0ebf71697ef16b7948f05a21dbf7abb34a818380"  # Of Human Bondage
    slice_dir = tmp_path / "nqa"
    (slice_dir / "stories").mkdir(parents=True)
    with open(shared_data / "narrativeqa" / "documents.csv", newline="", encoding="utf-8") as f:
        rows = [r for r in csv.DictReader(f) if r["document_id"] == doc_id]
    with open(slice_dir / "documents.csv", "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    qaps = [line for line in (shared_data / "narrativeqa" / "nqa_test_first3000_qaps.jsonl").read_text().splitlines()
            if json.loads(line)["document_id"] == doc_id]
    (slice_dir / "qaps.jsonl").write_text("\n".join(qaps) + "\n")
    book = shared_data / "narrativeqa" / "stories" / f"{doc_id}.txt"
    shutil.copy(book, slice_dir / "stories" / book.name)
    ingest_narrativeqa(workspace, slice_dir)
    systems = [{"name": "ref1", "model": "human:narrativeqa", "context": "reference:1"},
               {"name": "ref2", "model": "human:narrativeqa", "context": "reference:2"},
               {"name": "nocontext", "model": "lsqa/extractive", "context": "none"}]
    judge = {"name": "sxs-full", "model": "lsqa/lexical-judge", "kind": "pairwise", "context": "full"}
    study = {"documents": [doc_id], "questions": "narrativeqa", "systems": systems, "judges": [judge]}
    pipeline.run(workspace, run_config_from_dict({**study, "max_questions": 5}))  # the book is stored here, once
    size_before = workspace.stat().st_size
    summary = pipeline.run(workspace, run_config_from_dict({**study, "max_questions": 30})).to_dict()
    judged = summary["stages"][-1]
    calls = judged["calls_made"]      # a few pairs got the same two answers: one call serves both
    assert calls + judged["calls_cached"] == 75 and calls > 65 and summary["calls_failed"] == 0
    growth_per_call = (workspace.stat().st_size - size_before) / calls
    print(f"growth per full-book call: {growth_per_call:,.0f} bytes for a {book.stat().st_size:,}-byte book")
    assert growth_per_call <= 0.02 * book.stat().st_size
