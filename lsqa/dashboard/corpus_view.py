"""The Corpus screen: books with their passages (the searched words marked), entities with their
mention chains (paper §2), and each book's questions with every system's answer.

An entity's mention chain is shown as stretches of the book with the mentions marked, cut on word
boundaries, a page at a time. Mentions close to each other share one stretch, so a paragraph with
five mentions is shown once with five marks. A stretch starts at the beginning of a word and ends at
the end of one (a reader never meets "…ed the cat" or "Tom Kit…"), and never cuts a mention. A main
character of a long book has thousands of mentions: the stretches are listed page by page and only
the shown page's text is read from the workspace. (The Long span tab is ``longspan_view``.)
"""

from __future__ import annotations

from pathlib import Path

from lsqa import store, vocabulary
from lsqa.figures import analysis
from lsqa.store import corpus as corpus_store
from lsqa.store.workspace_cache import kept_while_unchanged
from lsqa.text import highlight


@kept_while_unchanged()
def books(workspace: Path) -> list[dict]:
    with store.connect(workspace) as con:
        return corpus_store.books(con)


def passages(workspace: Path, document_id: str, *, page: int = 0, page_size: int = 10, contains: str = "") -> dict:
    with store.connect(workspace) as con:
        rows, total = corpus_store.passage_page(con, document_id, page * page_size, page_size, contains.strip())
    for r in rows:
        spans = []
        if contains.strip():
            low, needle = r["text"].lower(), contains.strip().lower()
            i = low.find(needle)
            while i >= 0:
                spans.append((i, i + len(needle)))
                i = low.find(needle, i + len(needle))
        r["html"] = highlight.marked_html(r["text"], spans)
    return {"rows": rows, "total": total, "pages": max(1, -(-total // page_size))}


def entities(workspace: Path, document_id: str) -> list[dict]:
    with store.connect(workspace) as con:
        return corpus_store.list_entities(con, document_id)


def binary_judges(workspace: Path) -> list[str]:
    """The yes/no judges (they say whether one answer is right)."""
    return analysis.judges_by_family(workspace)[vocabulary.BINARY]


@kept_while_unchanged()
def questions_and_answers(workspace: Path, document_id: str) -> dict:
    """The book's questions with both references and every system's answer (one column per system)."""
    with store.connect(workspace) as con:
        rows = corpus_store.questions_with_answers(con, document_id)
    by_q: dict[str, dict] = {}
    systems: list[str] = []
    for r in rows:
        q = by_q.setdefault(r["question_id"], {"question_id": r["question_id"], "origin": r["origin"],
                                               "question": r["question"], "reference 1": r["reference_1"],
                                               "reference 2": r["reference_2"]})
        if r["system_name"]:
            q[r["system_name"]] = r["answer"] if r["status"] == "ok" else f"[{r['status']}]"
            if r["system_name"] not in systems:
                systems.append(r["system_name"])
    return {"rows": list(by_q.values()), "systems": sorted(systems)}


# ------------------------------------------------------------------------------ mention chains

def stretches(mentions: list[tuple[int, int, str]], chars: int) -> list[list]:
    """``[start, end, [(mention start, end), ...]]`` with ``chars`` of text either side of the mentions."""
    out: list[list] = []
    for start, end, _text in mentions:
        if out and start - out[-1][1] <= chars:
            out[-1][1] = max(out[-1][1], end + chars)
            out[-1][2].append((start, end))
        else:
            out.append([max(0, start - chars), end + chars, [(start, end)]])
    return out


def on_word_boundaries(text: str, start: int, end: int, keep_from: int, keep_to: int) -> tuple[int, int]:
    """``[start, end)`` of ``text`` narrowed to whole words, never narrower than ``[keep_from, keep_to)``."""
    end = min(end, len(text))
    while start < keep_from and start > 0 and not text[start - 1].isspace():
        start += 1
    while start < keep_from and text[start].isspace():
        start += 1
    while end > keep_to and end < len(text) and not text[end].isspace():
        end -= 1
    while end > keep_to and text[end - 1].isspace():
        end -= 1
    return start, end


def page_count(workspace: Path, entity_id: str, *, page_size: int = 10, chars: int = 250) -> int:
    """How many pages of stretches ``mention_chain`` has for this entity (at least 1)."""
    with store.connect(workspace) as con:
        n = len(stretches(corpus_store.entity_mentions(con, entity_id), chars))
    return max(1, -(-n // page_size))


def mention_chain(workspace: Path, document_id: str, entity_id: str, *, page: int = 0, page_size: int = 10,
                  chars: int = 250) -> dict:
    """One page of an entity's stretches of text (mentions marked), and every mention as rows.

    Returns ``{"mentions", "windows", "n_mentions", "n_windows", "page", "pages"}``; a window has
    ``start``, ``end`` (character offsets of the text shown), ``n`` (mentions in it) and ``html``.
    """
    with store.connect(workspace) as con:
        mentions = corpus_store.entity_mentions(con, entity_id)
        all_windows = stretches(mentions, chars)
        pages = max(1, -(-len(all_windows) // page_size))
        page = min(max(0, page), pages - 1)
        out = []
        for s, e, spans in all_windows[page * page_size:(page + 1) * page_size]:
            # One character more on each side tells whether s and e fall inside a word.
            lo = max(0, s - 1)
            text = corpus_store.text_slice(con, document_id, lo, e + 1)
            a, b = on_word_boundaries(text, s - lo, e - lo, spans[0][0] - lo, spans[-1][1] - lo)
            out.append({"start": lo + a, "end": lo + b, "n": len(spans),
                        "html": highlight.marked_html(text[a:b], spans, offset=lo + a)})
    return {"mentions": [{"start": m[0], "end": m[1], "text": m[2]} for m in mentions], "windows": out,
            "n_mentions": len(mentions), "n_windows": len(all_windows), "page": page, "pages": pages}
