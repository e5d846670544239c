"""The passages of one entity's mention chain, for question generation (paper §2, footnote 1).

When a book does not fit the question-generation model's context, the paper feeds the passages
the entity's coreference chain points to: every place the entity is named *or referred to by a
pronoun*. ``entity_context`` collects the paragraphs holding the entity's mentions and keeps as
many as the token budget allows, in book order.

Which paragraphs are kept when not all fit: the chain's paragraphs are split, in book order, into
``STRATA`` equal groups; the groups are visited round-robin, each giving its paragraph with the
most mentions that still fits the remaining budget (a paragraph that would overflow is skipped,
smaller ones may still fit). So the context covers the whole span of the chain, beginning to end
(the point of long-span questions), and prefers the paragraphs densest in the entity.
A paragraph longer than ``LONG_PARAGRAPH_SHARE`` of the budget is narrowed to the sentences
holding the mentions, one sentence either side.
"""

from __future__ import annotations

import bisect
import re

from lsqa.corpus.entities.types import Entity, Mention
from lsqa.text.book import Passage, count_tokens

STRATA = 8
LONG_PARAGRAPH_SHARE = 0.25

_PARA_BREAK_RE = re.compile(r"\n[ \t]*\n")
_SENTENCE_END_RE = re.compile(r"[.!?…][\"'”’)\]]*\s+")


def _paragraph_bounds(text: str, lo: int, hi: int) -> tuple[list[int], list[int]]:
    """Starts and ends of the paragraph breaks touching [lo, hi)."""
    a = text.rfind("\n\n", 0, lo)
    b = text.find("\n\n", hi)
    a = 0 if a < 0 else a
    b = len(text) if b < 0 else b + 2
    starts, ends = [], []
    for m in _PARA_BREAK_RE.finditer(text, a, b):
        starts.append(m.start())
        ends.append(m.end())
    return starts, ends


def _trim(text: str, s: int, e: int) -> tuple[int, int]:
    while s < e and text[s].isspace():
        s += 1
    while e > s and text[e - 1].isspace():
        e -= 1
    return s, e


def _sentence_window(text: str, p_start: int, p_end: int, lo: int, hi: int) -> tuple[int, int]:
    """From one sentence before the one holding ``lo`` to one sentence after the one holding ``hi``."""
    ends = [m.end() for m in _SENTENCE_END_RE.finditer(text, p_start, p_end)]
    i = bisect.bisect_right(ends, lo)     # sentence i holds lo; it starts at ends[i-1]
    j = bisect.bisect_right(ends, hi)
    s = ends[i - 2] if i >= 2 else p_start
    e = ends[j + 1] if j + 1 < len(ends) else p_end
    return _trim(text, s, e)


def _mentions(entity) -> list[Mention]:
    """An Entity's mentions, or Mention objects / (char_start, char_end, ...) rows as a store returns them."""
    rows = entity.mentions if isinstance(entity, Entity) else entity
    out = []
    for row in rows:
        if isinstance(row, Mention):
            out.append(row)
        else:
            s, e = int(row[0]), int(row[1])
            out.append(Mention(s, e, ""))
    return sorted(out)


def chain_units(text: str, entity, max_tokens: int) -> list[tuple[int, int, int]]:
    """(char_start, char_end, n_mentions) of the text units holding the entity's mentions, book order."""
    mentions = _mentions(entity)
    if not mentions:
        return []
    for m in mentions:
        if not 0 <= m.char_start < m.char_end <= len(text):
            raise ValueError(f"mention ({m.char_start}, {m.char_end}) is not a span of a {len(text)}-character text")
    breaks_start, breaks_end = _paragraph_bounds(text, mentions[0].char_start, mentions[-1].char_end)
    paragraphs: dict[tuple[int, int], list] = {}
    for m in mentions:
        i = bisect.bisect_right(breaks_end, m.char_start)  # breaks wholly before the mention
        p_start = breaks_end[i - 1] if i > 0 else 0
        p_end = breaks_start[i] if i < len(breaks_start) else len(text)
        paragraphs.setdefault(_trim(text, p_start, p_end), []).append(m)
    long_limit = max(50, int(max_tokens * LONG_PARAGRAPH_SHARE))
    units: list[tuple[int, int, int]] = []
    for (p_start, p_end), ms in sorted(paragraphs.items()):
        if count_tokens(text[p_start:p_end]) <= long_limit:
            units.append((p_start, p_end, len(ms)))
            continue
        # Narrow a long paragraph to windows around its mentions, merging windows that overlap.
        windows: list[list[int]] = []
        for m in ms:
            s, e = _sentence_window(text, p_start, p_end, m.char_start, m.char_end)
            if windows and s <= windows[-1][1]:
                windows[-1][1] = max(windows[-1][1], e)
                windows[-1][2] += 1
            else:
                windows.append([s, e, 1])
        units.extend((s, e, n) for s, e, n in windows)
    return units


def entity_context(text: str, entity, max_tokens: int = 4000) -> list[Passage]:
    """The entity's chain passages that fit ``max_tokens``, in book order.

    ``entity`` is an ``Entity``, or its mentions as ``Mention`` objects or ``(char_start, char_end, ...)``
    rows. Each returned ``Passage`` has exact offsets into ``text``; its ``ordinal`` is the unit's
    index among all of the entity's chain units (book order), so gaps show what the budget left out.
    """
    units = chain_units(text, entity, max_tokens)
    sized = [(s, e, n, count_tokens(text[s:e])) for s, e, n in units]
    n_strata = min(STRATA, len(sized)) or 1
    strata: list[list[int]] = [[] for _ in range(n_strata)]
    for i in range(len(sized)):
        strata[i * n_strata // len(sized)].append(i)
    for group in strata:
        group.sort(key=lambda i: (-sized[i][2], i))
    chosen: set[int] = set()
    budget = max_tokens
    progress = True
    while progress:
        progress = False
        for group in strata:
            for k, i in enumerate(group):
                if sized[i][3] <= budget:
                    chosen.add(i)
                    budget -= sized[i][3]
                    del group[k]
                    progress = True
                    break
            else:
                group.clear()  # nothing left in this stratum fits
    return [Passage(i, sized[i][0], sized[i][1], sized[i][3], text[sized[i][0]:sized[i][1]]) for i in sorted(chosen)]


def entity_context_text(text: str, entity, max_tokens: int = 4000, separator: str = "\n\n") -> str:
    """``entity_context`` joined into one prompt-ready string (passages in book order)."""
    return separator.join(p.text for p in entity_context(text, entity, max_tokens))
