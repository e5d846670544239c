"""One escaping rule for every text shown (lsqa.text.highlight.escape), checked by generation: every
control and line-separator character, alone and doubled, around Markdown and HTML payloads (an image,
a link, bold, a raw <img>, a heading, a list, LaTeX, an autolink), through every way text is shown —
inside the HTML blocks the pages and the report build, and in Markdown strings — rendered by a
CommonMark renderer (markdown-it-py, HTML on, as Streamlit's unsafe_allow_html): no element may come
from the payload. The pages themselves are checked with AppTest in tests/dashboard/test_escaping_pages.py."""

from __future__ import annotations

import html
import unicodedata
from html.parser import HTMLParser

import pytest
from markdown_it import MarkdownIt

from lsqa.text import highlight

# Every C0 and C1 control, DEL, and the Unicode line and paragraph separators.
SEPARATORS = [chr(c) for c in (*range(0x00, 0x20), 0x7f, *range(0x80, 0xa0), 0x2028, 0x2029)] + ["\r\n"]
PAYLOADS = {
    "image": "![pwned](http://beacon.invalid/img.png)",
    "link": "[pwned](http://beacon.invalid/)",
    "bold": "**pwned** __pwned__ *pwned*",
    "raw img": '<img src="http://beacon.invalid/raw.png" onerror="alert(1)">',
    "raw link": '<a href="http://beacon.invalid/">pwned</a>',
    "heading": "# pwned",
    "list": "- pwned\n1. pwned",
    "code": "`pwned`",
    "autolink": "<http://beacon.invalid/>",
    "latex": "$x^2$",
}
FORBIDDEN = {"img", "a", "strong", "em", "b", "i", "h1", "h2", "h3", "h4", "h5", "h6", "code", "li", "ul",
             "ol", "script", "iframe", "svg", "del", "s", "table", "blockquote", "hr", "pre", "span"}

_md_html = MarkdownIt("commonmark", {"html": True})
_md_plain = MarkdownIt("commonmark", {"html": False})


class _Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)


def tags_of(rendered: str) -> list[str]:
    parser = _Tags()
    parser.feed(rendered)
    return parser.tags


def cases():
    for sep in SEPARATORS:
        name = unicodedata.name(sep, f"U+{ord(sep[0]):04X}") if len(sep) == 1 else "CR LF"
        for times in (1, 2):
            s = sep * times
            for kind, payload in PAYLOADS.items():
                yield pytest.param(f"before{s}{payload}{s}after{s}", id=f"{name}x{times}-{kind}")


ALL = list(cases())


def test_the_cases_cover_every_separator_alone_and_doubled_around_every_payload():
    assert len(ALL) == len(SEPARATORS) * 2 * len(PAYLOADS) >= 1300


@pytest.mark.parametrize("text", ALL)
def test_no_markup_comes_from_the_data_in_an_html_block_or_a_markdown_string(text):
    block = highlight.text_html(text)
    assert set(tags_of(_md_html.render(block))) <= {"div", "br"}, block
    marked = highlight.marked_html(text, [(0, 6)])
    assert set(tags_of(_md_html.render(marked))) <= {"div", "br", "mark"}, marked
    line = f"**Answer:** {highlight.md_escape(text)}"
    assert [t for t in tags_of(_md_plain.render(line)) if t != "p"] == ["strong"], line
    assert [t for t in tags_of(_md_html.render(line)) if t != "p"] == ["strong"], line
    shown = html.unescape(_md_html.render(block))
    assert "before" in shown and "after" in shown and "beacon.invalid" in shown.replace("\u2060", "") \
        if "beacon" in text else True                         # still shown, as text


def test_the_old_rule_let_a_lone_carriage_return_through():
    """What the rule replaces (html.escape, then \\r\\n and \\n as <br>): a lone \\r\\r ended the HTML
    block and the image after it was live — the test above fails on it."""
    text = "a\r\r![pwned](http://beacon.invalid/img.png)"
    old = '<div class="lsqa-text">' + html.escape(text).replace("\r\n", "\n").replace("\n", "<br>") + "</div>"
    assert "img" in tags_of(_md_html.render(old))
    assert "img" not in tags_of(_md_html.render(highlight.text_html(text)))


def test_plain_text_reads_the_same_once_rendered():
    text = "Tom's cat said \"5 > 3 & 2 < 4\" — 1. first; - dash; a_b*c; 50% $5"
    rendered = _md_plain.render(highlight.md_escape(text))
    assert html.unescape(rendered.replace("<p>", "").replace("</p>", "")).strip() == text
