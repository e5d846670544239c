"""Showing book and model text safely, with excerpts highlighted.

Judge evidence (paper Fig. 12/19: "extract literal passages from the context as evidence") is
located in the story text and shown inside its passage with the excerpt marked; entity mention
chains (paper §2) are shown the same way. Everything that came from a book, a dataset or a model is
escaped with ``html.escape``: the only tags in the output are the ones written here (``<div>``,
``<mark>``, ``<br>``), so an answer holding ``<script>`` or ``<img onerror=…>`` is shown as text.

The output is one line of HTML inside a ``<div>``: a Markdown renderer treats it as a raw HTML
block, so book text is never read as Markdown either (``_much_`` stays ``_much_``). Pure: no
streamlit, no database.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

# Models quote with "…" or "..." between the pieces they keep; each piece is looked up on its own.
_ELLIPSIS = re.compile(r"\s*(?:\.\s*\.\s*\.|…)\s*")
_MIN_PIECE_WORDS = 3


@dataclass(frozen=True)
class Match:
    start: int
    end: int
    how: str  # exact | whitespace (same words, other spacing or case)


def find_excerpt(text: str, excerpt: str, start: int = 0, end: int | None = None) -> Match | None:
    """Where ``excerpt`` occurs in ``text[start:end]``: exactly, else with whitespace and case normalised.

    Offsets are into ``text``. Returns None when the excerpt is not in the text (an explanation
    rather than a quote, or a paraphrase).
    """
    end = len(text) if end is None else end
    excerpt = excerpt.strip().strip("'\"“”‘’").strip()
    if len(excerpt) < 3:
        return None
    i = text.find(excerpt, start, end)
    if i >= 0:
        return Match(i, i + len(excerpt), "exact")
    words = excerpt.split()
    if not words:
        return None
    # Same words, any run of whitespace between them (books wrap lines), any case.
    pattern = re.compile(r"\s+".join(re.escape(w) for w in words), re.IGNORECASE)
    m = pattern.search(text, start, end)
    if m:
        return Match(m.start(), m.end(), "whitespace")
    return None


def find_evidence(text: str, excerpt: str, start: int = 0, end: int | None = None) -> list[Match]:
    """Spans of ``excerpt`` in the text; an excerpt with ellipses is looked up piece by piece."""
    whole = find_excerpt(text, excerpt, start, end)
    if whole:
        return [whole]
    pieces = [p for p in _ELLIPSIS.split(excerpt) if len(p.split()) >= _MIN_PIECE_WORDS]
    if len(pieces) < 2:
        return []
    found = [find_excerpt(text, p, start, end) for p in pieces]
    return [m for m in found if m]


# Every line terminator CommonMark (\n, \r, \r\n) and HTML know, the ones a blank line can be
# made of for a Markdown renderer that reads an HTML block (a lone \r\r ended the block and the
# rest became live Markdown), and those Unicode and Python's str.splitlines add (vertical tab, form
# feed, file/group/record separators, NEL, LINE and PARAGRAPH SEPARATOR).
LINE_BREAKS = re.compile("\r\n|[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
# The characters Markdown (CommonMark, GFM, Streamlit's :directives[] and $LaTeX$) or HTML give a
# meaning to anywhere in a line; each is written as a character reference, which both decode to the
# plain character. Those that act only at the start of a line (``#``, ``-``, ``+``, ``1.``, an indent)
# are written so there (``_LINE_START``): once every line terminator is gone, the data has no other
# line start.
MARKUP_CHARS = "\\`*_{}[]()!|<>~$&\"'"
_NAMED = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#x27;"}
_INERT = str.maketrans({**{c: f"&#{ord(c)};" for c in MARKUP_CHARS}, **_NAMED,
                        # other controls: shown as the replacement character, as CommonMark does with NUL
                        **{c: "\ufffd" for c in range(0x20) if chr(c) not in "\t\n\r\x0b\x0c\x1c\x1d\x1e"},
                        0x7f: "\ufffd", **{c: "\ufffd" for c in range(0x80, 0xa0) if c != 0x85}})
_LINE_START = re.compile(r"^(?:[ \t#+=\-]|(?<=^)(\d{1,9})\.)")


def _line_start(m: re.Match) -> str:
    return f"{m.group(1)}&#46;" if m.group(1) else f"&#{ord(m.group(0))};"


def escape(text, *, breaks: str = "<br>") -> str:
    """The one rule for every user- or model-supplied text shown on a page or in the report:
    ``text`` with every HTML and Markdown active character written as a character reference
    (``MARKUP_CHARS``), every line terminator (``LINE_BREAKS``) as ``breaks`` — ``<br>`` inside the
    HTML built here, a space in a Markdown string (:func:`md_escape`) — and other control characters
    as U+FFFD. The result is inert both as HTML and as Markdown: no tag, link, image, emphasis,
    heading or LaTeX can come from the data, whatever line breaks it holds (CommonMark 0.31,
    "HTML blocks": a blank line ends one; "Entity and numeric character references").

    In a Markdown string GitHub-flavoured Markdown also links bare URLs, ``www.`` names and e-mail
    addresses, and Streamlit's renderer finds them after escapes and entities are decoded: an
    invisible word joiner (U+2060) after ``:`` of ``://``, after ``www`` and after ``@`` keeps its
    link finder from seeing them, while the text reads the same.
    """
    text = str(text if text is not None else "")
    if breaks != "<br>":  # a Markdown string (inside an HTML block no link finder runs; a copied URL stays clean)
        text = _AUTOLINK_STARTS.sub("\\1\u2060", text)
    return _LINE_START.sub(_line_start, LINE_BREAKS.sub(breaks, text.translate(_INERT)), count=1)


def md_escape(text) -> str:
    """:func:`escape` for a Markdown string (``st.markdown`` / ``st.caption`` without HTML): line
    breaks become spaces."""
    return escape(text, breaks=" ")


_AUTOLINK_STARTS = re.compile(r"(:(?=//)|\bwww(?=\.)|@)", re.IGNORECASE)


def text_html(text: str, *, css: str = "") -> str:
    """A block showing ``text`` literally (no HTML, no Markdown)."""
    style = f' style="{html.escape(css, quote=True)}"' if css else ""
    return f'<div class="lsqa-text"{style}>{escape(text)}</div>'


def marked_html(text: str, spans: list[tuple[int, int]], *, offset: int = 0, css: str = "") -> str:
    """``text`` with ``spans`` (offsets into the book, shifted by ``offset``) wrapped in ``<mark>``.

    Overlapping spans are merged; spans outside the text are clipped or dropped.
    """
    n = len(text)
    cleaned = sorted((max(0, s - offset), min(n, e - offset)) for s, e in spans)
    merged: list[list[int]] = []
    for s, e in cleaned:
        if e <= s:
            continue
        if merged and s <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], e)
        else:
            merged.append([s, e])
    parts, pos = [], 0
    for s, e in merged:
        parts.append(escape(text[pos:s]))
        parts.append(f"<mark>{escape(text[s:e])}</mark>")
        pos = e
    parts.append(escape(text[pos:]))
    style = f' style="{html.escape(css, quote=True)}"' if css else ""
    return f'<div class="lsqa-text"{style}>{"".join(parts)}</div>'


def window(text_len: int, start: int, end: int, chars: int = 400, lo: int = 0, hi: int | None = None) -> tuple[int, int]:
    """A window of about ``chars`` characters either side of [start, end), inside [lo, hi)."""
    hi = text_len if hi is None else hi
    return max(lo, start - chars), min(hi, end + chars)


_SENTENCE_END = re.compile(r"[.!?][\"'”’)\]]*\s+")


def word_bounds(text: str, start: int, end: int) -> tuple[int, int]:
    """[start, end) narrowed so that it neither starts nor ends inside a word."""
    n = len(text)
    start, end = max(0, start), min(n, end)
    if 0 < start < n and not text[start - 1].isspace() and not text[start].isspace():
        nxt = re.search(r"\s", text[start:end])
        start = start + nxt.start() if nxt else start
    if 0 < end < n and not text[end - 1].isspace() and not text[end].isspace():
        prev = max(text.rfind(" ", start, end), text.rfind("\n", start, end))
        end = prev if prev > start else end
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def sentence_window(text: str, start: int, end: int, sentences: int = 2, lo: int = 0, hi: int | None = None,
                    max_chars: int = 600) -> tuple[int, int]:
    """About ``sentences`` whole sentences either side of [start, end), inside [lo, hi), on word boundaries.

    A side is cut at ``max_chars`` (on a word boundary) when its sentences run longer (verse, dialogue
    without full stops), so a folded passage stays a few lines long.
    """
    hi = len(text) if hi is None else hi
    a, b = max(lo, start - max_chars), min(hi, end + max_chars)
    before = [m.end() for m in _SENTENCE_END.finditer(text, a, start)]
    s = before[-sentences - 1] if len(before) > sentences else (before[0] if before and a > lo else a)
    if len(before) <= sentences and a == lo:
        s = lo
    after = [m.end() for m in _SENTENCE_END.finditer(text, max(start, end - 1), b)]
    e = after[sentences] if len(after) > sentences else b
    s, e = word_bounds(text, s, e) if (s > lo or e < hi) else (s, e)
    return min(s, start), max(e, end)
