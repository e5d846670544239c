"""Book text: reading, Project Gutenberg cleanup, passages with exact offsets, token counts.

The stored text of a document is the file as read, with line endings normalised to ``\\n`` and a
byte-order mark removed. Everything else (the story span, passages, mentions) is an offset pair
into that stored text, so ``full_text[start:end]`` always gives back the exact characters.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from lsqa.errors import InputError

# Files above this are refused before reading: no real book comes near it (Les Misérables is
# 3.2 MB) and reading a multi-GB file into memory would take the machine down.
MAX_BOOK_BYTES = 64 * 1024 * 1024

_TOKEN_RE = re.compile(r"\w+|[^\w\s]")
_START_RE = re.compile(r"^\*{3} ?START OF (THE|THIS) PROJECT GUTENBERG.*$", re.MULTILINE | re.IGNORECASE)
_END_RE = re.compile(
    r"^(\*{3} ?END OF (THE|THIS) PROJECT GUTENBERG.*|End of (the )?Project Gutenberg.*)$",
    re.MULTILINE | re.IGNORECASE,
)
_PARAGRAPH_RE = re.compile(r"\S(?:.*?\S)??(?=[ \t]*\n[ \t]*\n|\s*\Z)", re.DOTALL)
_SENTENCE_END_RE = re.compile(r"(?<=[.!?…])[\"'”’)\]]*\s+")


def count_tokens(text: str) -> int:
    """Approximate token count: words and punctuation marks.

    A stand-in for a model tokenizer that needs no download; on English prose it lands close to
    sub-word tokenizers (Les Misérables: 568k words, ~0.7M here; the paper reports 732k tokens).
    """
    return len(_TOKEN_RE.findall(text))


def word_count(text: str) -> int:
    return len(text.split())


def sha1(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


def read_text(path: str | Path) -> str:
    """Read a UTF-8 text file (BOM removed, line endings normalised), or raise InputError."""
    path = Path(path)
    if path.exists() and not path.is_file():
        raise InputError(path, "a folder, device, pipe or socket, not a regular file",
                         hint="give the path of a plain-text book")
    if not path.is_file():
        raise InputError(path, "no such file", hint="check the path")
    size = path.stat().st_size
    if size == 0:
        raise InputError(path, "the file is empty")
    if size > MAX_BOOK_BYTES:
        raise InputError(path, f"the file is {size / 2**20:.0f} MiB, above the {MAX_BOOK_BYTES // 2**20} MiB limit for one book",
                         hint="split it or check that it is a book")
    data = path.read_bytes()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputError(path, f"not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start})", line=line,
                         hint="convert the file to UTF-8, e.g. iconv -f latin1 -t utf-8") from None
    if "\x00" in text:
        raise InputError(path, "contains NUL bytes: this is not a plain-text file")
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not text.strip():
        raise InputError(path, "the file holds only white space")
    return text


@dataclass(frozen=True)
class StorySpan:
    start: int
    end: int
    how: str  # which markers decided the span, for the ingest summary


def story_span(text: str, story_start: str = "", story_end: str = "") -> StorySpan:
    """Where the story is: Gutenberg header and licence footer removed.

    The ``*** START OF`` line ends the header and the ``*** END OF`` / ``End of Project
    Gutenberg`` line starts the footer. NarrativeQA's ``story_start`` / ``story_end`` markers, when
    given and found inside that span, narrow it further (NarrativeQA cut its stories with them).
    """
    start, end, how = 0, len(text), []
    m = _START_RE.search(text)
    if m:
        start = m.end()
        how.append("gutenberg-start")
    for m in _END_RE.finditer(text, start):
        end = m.start()
        how.append("gutenberg-end")
        break
    if story_start:
        pos = text.find(story_start, start, end)
        if pos >= 0:
            start = pos
            how.append("narrativeqa-start")
    if story_end:
        pos = text.rfind(story_end, start, end)
        if pos >= 0:
            end = pos + len(story_end)
            how.append("narrativeqa-end")
    # Trim surrounding white space so the span starts and ends on text.
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if end <= start:
        return StorySpan(0, len(text), "whole-file")
    return StorySpan(start, end, "+".join(how) or "whole-file")


@dataclass(frozen=True)
class Passage:
    """A run of whole paragraphs (or sentences of an over-long paragraph) in book order."""

    ordinal: int
    char_start: int
    char_end: int
    n_tokens: int
    text: str


def _paragraph_spans(text: str, start: int, end: int):
    for m in _PARAGRAPH_RE.finditer(text, start, end):
        yield m.start(), m.end()


def _sentence_spans(text: str, start: int, end: int):
    pos = start
    for m in _SENTENCE_END_RE.finditer(text, start, end):
        yield pos, m.start()
        pos = m.end()
    if pos < end:
        yield pos, end


def split_passages(text: str, start: int = 0, end: int | None = None, target_tokens: int = 200) -> list[Passage]:
    """Split ``text[start:end]`` into passages of about ``target_tokens`` tokens.

    Paragraphs are kept whole and grouped until the target is reached; a paragraph longer than
    twice the target is cut at sentence ends. Offsets index ``text`` itself.
    """
    end = len(text) if end is None else end
    units: list[tuple[int, int, int]] = []  # (start, end, tokens)
    for p_start, p_end in _paragraph_spans(text, start, end):
        n = count_tokens(text[p_start:p_end])
        if n > 2 * target_tokens:
            units.extend((s, e, count_tokens(text[s:e])) for s, e in _sentence_spans(text, p_start, p_end))
        else:
            units.append((p_start, p_end, n))
    passages: list[Passage] = []
    cur_start = cur_end = None
    cur_tokens = 0
    for u_start, u_end, n in units:
        if cur_start is not None and cur_tokens + n > target_tokens:
            passages.append(Passage(len(passages), cur_start, cur_end, cur_tokens, text[cur_start:cur_end]))
            cur_start = None
            cur_tokens = 0
        if cur_start is None:
            cur_start = u_start
        cur_end = u_end
        cur_tokens += n
    if cur_start is not None:
        passages.append(Passage(len(passages), cur_start, cur_end, cur_tokens, text[cur_start:cur_end]))
    return passages
