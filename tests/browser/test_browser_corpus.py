"""The Corpus page and a fresh machine's demo, in Debian's chromium (issue 12, defect 11 and "Also").

Every book of the demo has entity chains; a stretch of text shown around mentions starts and ends
on word boundaries of the book; a main character's many stretches are paged. And with no shared
data folder at all, ``lsqa demo`` builds the bundled Beatrix Potter demo and the dashboard works on it.
"""

from __future__ import annotations

import re

import pytest

from lsqa import store
from lsqa.store import corpus as corpus_store
from tests.support.browser import chromium, expect, need_browser, wait_charts_drawn, wait_idle
from tests.support.streamlit_server import serve

pytestmark = pytest.mark.browser
STRETCH = re.compile(r"^characters ([\d,]+)–([\d,]+) · \d+ mentions$")


def _choose(page, label: str, option: str) -> None:
    box = page.get_by_label(label)
    box.click()
    page.get_by_role("option", name=option).first.click()
    wait_idle(page, 60000)


def _stretches(page) -> list[tuple[int, int]]:
    out = []
    for text in page.get_by_text(STRETCH).all_inner_texts():
        a, b = STRETCH.match(text.strip()).groups()
        out.append((int(a.replace(",", "")), int(b.replace(",", ""))))
    return out


def _book_text(ws, title: str) -> str:
    with store.connect(ws) as con:
        doc_id = corpus_store.resolve_documents(con, [title])[0]
        return corpus_store.get_document(con, doc_id)["full_text"]


def _on_word_boundaries(text: str, start: int, end: int) -> bool:
    starts_word = start == 0 or text[start - 1].isspace() or not text[start - 1].isalnum()
    ends_word = end == len(text) or text[end].isspace() or not text[end].isalnum()
    return starts_word and ends_word and not text[start].isspace() and not text[end - 1].isspace()


def test_corpus_entity_chains_for_every_book_on_word_boundaries_paged(demo_workspace):
    need_browser()
    ws = demo_workspace
    with store.connect(ws) as con:
        books = [d for d in corpus_store.list_documents(con) if d["has_text"]]
        with_entities = {d["title"] for d in books if corpus_store.list_entities(con, d["id"], limit=1)}
    assert len(books) == 8 and with_entities == {d["title"] for d in books}  # not only the generation book

    with serve(ws) as base, chromium() as browser:
        page = browser.new_page(viewport={"width": 1440, "height": 1600})
        page.goto(f"{base}/corpus?annotator=alice")
        expect(page.get_by_role("heading", name="Corpus")).to_be_visible(timeout=60000)
        wait_idle(page, 60000)
        _choose(page, "Book", "The Tale of Tom Kitten")
        page.get_by_role("tab", name="Entities").click()
        wait_idle(page)
        expect(page.get_by_text(STRETCH).first).to_be_visible(timeout=30000)
        text = _book_text(ws, "The Tale of Tom Kitten")
        shown = _stretches(page)
        assert shown and all(_on_word_boundaries(text, a, b) for a, b in shown), \
            [(text[max(0, a - 5):a + 10], text[b - 10:b + 5]) for a, b in shown]

        # A long book's main character: hundreds of stretches, ten to a page.
        _choose(page, "Book", "Of Human Bondage")
        page.get_by_role("tab", name="Entities").click()
        wait_idle(page, 60000)
        pages = page.get_by_text(re.compile(r"stretches of text · page 1 of (\d+)")).first
        expect(pages).to_be_visible(timeout=30000)
        n_pages = int(re.search(r"page 1 of (\d+)", pages.inner_text()).group(1))
        first = _stretches(page)
        assert n_pages > 1 and len(first) == 10
        box = page.get_by_label("Stretches page")
        box.fill("2")
        box.press("Enter")
        expect(page.get_by_text(re.compile(r"stretches of text · page 2 of"))).to_be_visible(timeout=30000)
        wait_idle(page)
        second = _stretches(page)
        assert len(second) == 10 and second[0][0] > first[-1][1]
        text = _book_text(ws, "Of Human Bondage")
        assert all(_on_word_boundaries(text, a, b) for a, b in first + second)


def test_fresh_machine_without_shared_data_gets_the_bundled_demo(bundled_demo_from_wheel, tmp_path):
    """`make run` on a machine without ../shared: `lsqa demo` builds the bundled demo, the pages work.
    The demo is the one a wheel of this checkout built with no shared data folder (conftest), shared
    with the packaging test: the same code, and one demo build instead of two."""
    import shutil

    need_browser()
    assert "bundled with lsqa" in bundled_demo_from_wheel["stdout"]
    ws = shutil.copy(bundled_demo_from_wheel["workspace"], tmp_path / "lsqa.duckdb")
    with serve(ws, env={"LSQA_DATA_DIR": str(tmp_path / "no-shared-data")}) as base, chromium() as browser:
        page = browser.new_page(viewport={"width": 1440, "height": 1600})
        page.goto(f"{base}/leaderboard?judge=lexical-sxs-fc&show=chart")  # a link to one judge's chart
        expect(page.get_by_text(re.compile(r"^lexical-sxs-fc: [\d,]+ comparisons"))).to_be_visible(timeout=60000)
        wait_idle(page, 60000)
        assert wait_charts_drawn(page) > 0
        page.goto(f"{base}/corpus")
        expect(page.get_by_role("heading", name="Corpus")).to_be_visible(timeout=60000)
        wait_idle(page, 60000)
        page.get_by_role("tab", name="Entities").click()
        expect(page.get_by_text(STRETCH).first).to_be_visible(timeout=30000)
        expect(page.locator('[data-testid="stException"]')).to_have_count(0)
