"""Long prompt contexts stored once (``prompt_texts``), and calls stored as references to them.

``llm_calls.prompt_parts`` holds a call's messages with its contexts referenced
(:mod:`lsqa.text.prompt_parts`); ``llm_calls.messages`` is then NULL. Calls without a long context
keep ``messages`` as before. :func:`messages_json` gives the messages as sent, either way.
"""

from __future__ import annotations

import bisect
import json
import logging
from typing import Iterable

import duckdb

from lsqa.text.prompt_parts import canonical_json, join_messages, refs_of, split_content

log = logging.getLogger("lsqa.store")

_CHUNK = 200


def missing_texts(con: duckdb.DuckDBPyConnection, shas: Iterable[str]) -> set[str]:
    """The ids among ``shas`` not yet stored."""
    shas = list(dict.fromkeys(shas))
    if not shas:
        return set()
    have = {r[0] for r in con.execute("SELECT sha256 FROM prompt_texts WHERE sha256 IN (SELECT unnest(?::VARCHAR[]))",
                                      [shas]).fetchall()}
    return set(shas) - have


def save_texts(con: duckdb.DuckDBPyConnection, texts: dict[str, str]) -> int:
    """Store the texts not stored yet (only those cross to DuckDB: a book is sent once per workspace)."""
    new = sorted(missing_texts(con, texts))
    for start in range(0, len(new), _CHUNK):
        chunk = new[start:start + _CHUNK]
        con.execute("INSERT INTO prompt_texts (sha256, text) VALUES " + ", ".join(["(?, ?)"] * len(chunk))
                    + " ON CONFLICT DO NOTHING", [v for sha in chunk for v in (sha, texts[sha])])
    return len(new)


def load_texts(con: duckdb.DuckDBPyConnection, shas: Iterable[str]) -> dict[str, str]:
    shas = list(dict.fromkeys(shas))
    if not shas:
        return {}
    return dict(con.execute("SELECT sha256, text FROM prompt_texts WHERE sha256 IN (SELECT unnest(?::VARCHAR[]))",
                            [shas]).fetchall())


def messages_json(con: duckdb.DuckDBPyConnection, messages: str | None, prompt_parts: str | None) -> str | None:
    """A call's messages as sent (canonical JSON), from its ``messages`` or ``prompt_parts`` column."""
    if prompt_parts is None:
        return messages
    return canonical_json(join_messages(prompt_parts, load_texts(con, refs_of(prompt_parts))))


# ---------------------------------------------------------------------------------------------
# Migration 0006: calls stored before it keep their whole prompt; move their contexts out
# ---------------------------------------------------------------------------------------------

_ANCHOR = 64  # characters a passage is recognised by before it is compared whole


class _KnownTexts:
    """The workspace's book texts and passages, to find them inside stored prompts."""

    def __init__(self, con: duckdb.DuckDBPyConnection):
        self.stories = sorted(
            (len(t), t) for (t,) in con.execute(
                "SELECT substring(full_text, clean_start + 1, clean_end - clean_start) FROM documents "
                "WHERE full_text IS NOT NULL AND clean_end > clean_start").fetchall())
        self.lengths = [n for n, _ in self.stories]
        self.passages: dict[str, list[str]] = {}
        for (text,) in con.execute("SELECT text FROM passages").fetchall():
            if len(text) >= _ANCHOR:
                self.passages.setdefault(text[:_ANCHOR], []).append(text)

    def spans(self, content: str) -> list[tuple[int, int]]:
        """Spans of ``content`` that are a whole book, else passages starting at a line start."""
        # A prompt holds a whole book only if it is at least that long; templates add < 64k chars.
        lo = bisect.bisect_left(self.lengths, len(content) - 65536)
        hi = bisect.bisect_right(self.lengths, len(content))
        for n, story in reversed(self.stories[lo:hi]):
            at = content.find(story)
            if at >= 0:
                return [(at, at + n)]
        spans, pos = [], 0
        while pos < len(content):
            match = next((t for t in self.passages.get(content[pos:pos + _ANCHOR], ())
                          if content.startswith(t, pos)), None)
            if match is not None:
                spans.append((pos, pos + len(match)))
                pos += len(match)
            else:
                nl = content.find("\n", pos)
                pos = len(content) if nl < 0 else nl + 1
        return spans


def compact_stored_calls(con: duckdb.DuckDBPyConnection) -> int:
    """Move the books and passages inside stored prompts to ``prompt_texts``; return the calls moved.

    Runs inside migration 0006's transaction. A prompt is rewritten only when joining its parts
    gives back exactly the stored text.
    """
    keys = [r[0] for r in con.execute("SELECT cache_key FROM llm_calls WHERE messages IS NOT NULL "
                                      "AND length(messages) >= 1024").fetchall()]
    if not keys:
        return 0
    known = _KnownTexts(con)
    moved = 0
    for start in range(0, len(keys), _CHUNK):
        rows = con.execute("SELECT cache_key, messages FROM llm_calls WHERE cache_key IN (SELECT unnest(?::VARCHAR[]))",
                           [keys[start:start + _CHUNK]]).fetchall()
        updates, texts = [], {}
        for key, stored in rows:
            try:
                messages = json.loads(stored)
            except json.JSONDecodeError:
                continue
            if not isinstance(messages, list):
                continue
            found: dict[str, str] = {}
            out = []
            for m in messages:
                content = m.get("content") if isinstance(m, dict) else None
                spans = known.spans(content) if isinstance(content, str) else []
                out.append({**m, "content": {"parts": split_content(content, spans, found)}} if spans else m)
            if not found:
                continue
            parts = canonical_json(out)
            if canonical_json(join_messages(parts, found)) != stored:
                continue  # stored in another JSON form: leave it whole rather than change a byte
            updates.append((key, parts))
            texts.update(found)
        save_texts(con, texts)
        for key, parts in updates:
            con.execute("UPDATE llm_calls SET prompt_parts = ?, messages = NULL WHERE cache_key = ?", [parts, key])
        moved += len(updates)
    if moved:
        log.info("migration 0006: %d stored prompts now refer to their contexts", moved)
    return moved
