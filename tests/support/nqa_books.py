"""Real NarrativeQA books and questions from the shared data folder, for the entity/retrieval/similarity tests."""

from __future__ import annotations

import csv
import json
from functools import lru_cache
from pathlib import Path

from lsqa.text.book import read_text, story_span


@lru_cache(maxsize=None)
def book(data: Path, title: str) -> tuple[str, int, int, str]:
    """(full text, story start, story end, document_id) of the NarrativeQA book with this title,
    cut with NarrativeQA's own story_start/story_end markers."""
    nqa = Path(data) / "narrativeqa"
    with open(nqa / "stories" / "MANIFEST.csv", encoding="utf-8") as f:
        row = {r["wiki_title"]: r for r in csv.DictReader(f)}[title]
    with open(nqa / "documents.csv", encoding="utf-8") as f:
        doc = next(r for r in csv.DictReader(f) if r["document_id"] == row["document_id"])
    text = read_text(Path(data) / row["local_file"])
    span = story_span(text, doc["story_start"], doc["story_end"])
    return text, span.start, span.end, row["document_id"]


@lru_cache(maxsize=None)
def questions(data: Path) -> tuple[dict, ...]:
    path = Path(data) / "narrativeqa" / "nqa_test_first3000_qaps.jsonl"
    with open(path, encoding="utf-8") as f:
        return tuple(json.loads(line) for line in f if line.strip())
