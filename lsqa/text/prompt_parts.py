"""Prompts as parts: long contexts (a whole book, retrieved passages) by reference, the rest literal.

A full-book prompt is the book plus a few hundred characters of instructions; thousands of calls
share the same book (a side-by-side judge on all 21 pairs of 7 systems × 200 questions
sends *Les Misérables* 4,200 times). A call is therefore stored as its messages with each string
``content`` replaced by ``{"parts": [...]}``, a list of literal strings and ``{"ref": sha256}``
references to texts stored once, content-addressed. :func:`join_messages` gives back the messages
exactly, so the rendered prompt (and its canonical JSON, hence the cache key) is unchanged.

Pure functions only: the workspace side is :mod:`lsqa.store.prompt_texts`.
"""

from __future__ import annotations

import hashlib
import json
from typing import Iterable, Sequence

# Shorter texts are not worth a reference (a reference costs ~80 bytes of JSON).
MIN_REF_CHARS = 256


def canonical_json(value) -> str:
    """The one JSON form of a value: what cache keys hash and what ``llm_calls.messages`` holds."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)


def text_id(text: str) -> str:
    """The content address of a text: sha256 of its UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def find_spans(content: str, contexts: Iterable[str]) -> list[tuple[int, int]]:
    """Where ``contexts`` occur in ``content``, in the order given, without overlap.

    Contexts are looked for left to right (a passage set is in book order); one that is not
    found after the previous match is skipped, and stays in the literal text.
    """
    return [(start, end) for start, end, _ in find_contexts(content, contexts)]


def find_contexts(content: str, contexts: Iterable[str]) -> list[tuple[int, int, str]]:
    """:func:`find_spans` with the context found at each span (the caller's string itself)."""
    found, pos = [], 0
    for ctx in contexts:
        if len(ctx) < MIN_REF_CHARS:
            continue
        at = _find(content, ctx, pos)
        if at >= 0:
            found.append((at, at + len(ctx), ctx))
            pos = at + len(ctx)
    return found


def _find(content: str, ctx: str, pos: int) -> int:
    """``content.find(ctx, pos)``, quicker for a book: ``str.find`` prepares the whole 3.3 MB
    needle each time, while the book's first characters usually find it at once and one
    comparison confirms it (docs/benchmarks-log/2026-11-30-paper-scale.md)."""
    head = ctx[:MIN_REF_CHARS]
    at = content.find(head, pos)
    for _ in range(8):  # a head that recurs in the content: a few candidates, then the full search
        if at < 0 or content.startswith(ctx, at):
            return at
        at = content.find(head, at + 1)
    return at if at < 0 else content.find(ctx, at)


def split_content(content: str, spans: Sequence[tuple[int, int]], texts: dict[str, str]) -> list:
    """``content`` as literal strings and references (the referenced texts are added to ``texts``)."""
    parts: list = []
    pos = 0
    for start, end in spans:
        if start > pos:
            parts.append(content[pos:start])
        piece = content[start:end]
        sha = text_id(piece)
        texts[sha] = piece
        parts.append({"ref": sha})
        pos = end
    if pos < len(content):
        parts.append(content[pos:])
    return parts


def split_messages(messages: list[dict], contexts: Sequence[str]) -> tuple[list[dict] | None, dict[str, str]]:
    """(messages with contexts referenced, {sha256: text}), or (None, {}) when no context occurs."""
    texts: dict[str, str] = {}
    out = []
    for message in messages:
        content = message.get("content")
        spans = find_spans(content, contexts) if isinstance(content, str) and contexts else []
        out.append({**message, "content": {"parts": split_content(content, spans, texts)}} if spans else message)
    return (out, texts) if texts else (None, {})


def refs_of(parts_json: str) -> list[str]:
    """The text ids a stored parts form refers to."""
    found = []
    for message in json.loads(parts_json):
        content = message.get("content")
        if isinstance(content, dict):
            found.extend(p["ref"] for p in content["parts"] if isinstance(p, dict))
    return found


def join_messages(parts_json: str, texts: dict[str, str]) -> list[dict]:
    """The messages a parts form stands for, exactly as they were sent."""
    out = []
    for message in json.loads(parts_json):
        content = message.get("content")
        if isinstance(content, dict) and "parts" in content:
            message = {**message, "content": "".join(
                p if isinstance(p, str) else texts[p["ref"]] for p in content["parts"])}
        out.append(message)
    return out
