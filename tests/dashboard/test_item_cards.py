"""lsqa.dashboard.item_cards: the Audit item's question and answers as one HTML block each, on real NarrativeQA
questions (tests/data/narrativeqa_slice) and on text that tries to become markup."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from lsqa.dashboard import item_cards
from lsqa.text import highlight

SLICE = Path(__file__).parents[1] / "data" / "narrativeqa_slice" / "nqa_test_slice_qaps.jsonl"
OWN_TAGS = {"div", "p", "b", "br"}


class _Reading(HTMLParser):
    """The tags of a block and the text of each ``lsqa-text`` div, with ``<br>`` read back as a line break."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags, self.texts, self.bold, self._in_text, self._in_bold = [], [], [], 0, False

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag == "div" and ("class", "lsqa-text") in attrs:
            self._in_text, self.texts = 1, self.texts + [""]
        elif tag == "div" and self._in_text:
            self._in_text += 1
        elif tag == "br" and self._in_text:
            self.texts[-1] += "\n"
        elif tag == "b":
            self._in_bold, self.bold = True, self.bold + [""]

    def handle_endtag(self, tag):
        if tag == "div" and self._in_text:
            self._in_text -= 1
        elif tag == "b":
            self._in_bold = False

    def handle_data(self, data):
        if self._in_text:
            self.texts[-1] += data
        elif self._in_bold:
            self.bold[-1] += data


def read(block: str) -> _Reading:
    r = _Reading()
    r.feed(block)
    r.close()
    return r


def _questions() -> list[dict]:
    return [json.loads(line) for line in SLICE.read_text(encoding="utf-8").splitlines()]


def test_every_real_question_reads_back_as_given_in_one_line():
    for q in _questions():
        refs = [{"n": 1, "text": q["answer1"]}, {"n": 2, "text": q["answer2"]}]
        card = item_cards.question_card(q["question"], refs, used=2)
        assert "\n" not in card  # one line: a Markdown renderer keeps it whole as raw HTML
        r = read(card)
        assert set(r.tags) <= OWN_TAGS
        assert r.texts == [q["question"], q["answer1"], q["answer2"]]
        assert r.bold == ["Question", "NarrativeQA reference 1", "NarrativeQA reference 2"]
        assert card.count(" — used by this rater") == 1 and card.index("reference 2") < card.index("used by this rater")


def test_flags_show_under_their_reference_with_their_note_as_text():
    q = _questions()[0]
    note = 'see https://example.org/ref <a href="https://example.com/x">link</a> <b>bold</b>'
    refs = [{"n": 1, "text": q["answer1"]}, {"n": 2, "text": q["answer2"]}]
    card = item_cards.question_card(q["question"], refs, flags={2: [{"reason": "ambiguous", "annotator": "<i>bob</i>",
                                                                     "note": note}]})
    r = read(card)
    assert set(r.tags) <= OWN_TAGS  # the note's <a> and <b>, the name's <i>: text, not tags
    assert "⚑ ambiguous — &lt;i&gt;bob&lt;/i&gt;: see https://example.org/ref &lt;a href=" in card
    assert card.index("reference 2") < card.index("⚑")  # under the reference it is about
    assert "used by this rater" not in card


def test_answer_cards_keep_the_order_given_and_escape_names():
    answers = [("Answer A: <b>bold</b>", "He fled.\n\nAt night."), ("Answer B: plain", "")]
    block = item_cards.answer_cards("Answers, in the order the judge saw them", answers)
    r = read(block)
    assert set(r.tags) <= OWN_TAGS and "\n" not in block
    assert r.bold == ["Answers, in the order the judge saw them", "Answer A: <b>bold</b>", "Answer B: plain"]
    assert r.texts == ["He fled.\n\nAt night.", ""]


CONTROLS = {c: "\ufffd" for c in (*range(0x20), 0x7f, *range(0x80, 0xa0)) if chr(c) not in "\t\n"}


@given(st.text(), st.text(), st.text(), st.text())
def test_no_text_becomes_markup(question, ref, title, answer):
    block = item_cards.question_card(question, [{"n": 1, "text": ref}]) + item_cards.answer_cards("Answer",
                                                                                                  [(title, answer)])
    r = read(block)
    assert set(r.tags) <= OWN_TAGS and "\n" not in block
    # What the parser reads back is what was given, every line terminator as <br> (\r\n as one) and
    # other control characters as U+FFFD (lsqa.text.highlight.escape).
    norm = [highlight.LINE_BREAKS.sub("\n", t).translate(CONTROLS) for t in (question, ref or "—", answer)]
    assert [t.replace("\r", "\n") for t in r.texts] == norm
