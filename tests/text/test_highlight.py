"""lsqa.text.highlight: evidence located in the book, escaped HTML with <mark>."""

from __future__ import annotations

from lsqa.text import highlight

BOOK = "He sat on the bank.\nThe  water was\ncold and deep. Then he went home… and slept."


def test_find_excerpt_exact_then_whitespace_and_case():
    m = highlight.find_excerpt(BOOK, "He sat on the bank.")
    assert (m.start, m.end, m.how) == (0, 19, "exact")
    m = highlight.find_excerpt(BOOK, "the water was cold")
    assert m.how == "whitespace" and BOOK[m.start:m.end] == "The  water was\ncold"
    assert highlight.find_excerpt(BOOK, "a sentence that is not there") is None
    assert highlight.find_excerpt(BOOK, "x") is None  # too short to mean anything
    assert highlight.find_excerpt(BOOK, "He sat", start=5) is None  # only inside the story span


def test_find_evidence_piece_by_piece_across_an_ellipsis():
    spans = highlight.find_evidence(BOOK, "He sat on the bank ... cold and deep. Then")
    assert [BOOK[m.start:m.end] for m in spans] == ["He sat on the bank", "cold and deep. Then"]


def test_marked_html_escapes_everything_but_its_own_tags():
    text = 'a <script>x</script> & "b" <img onerror=y> c_d_'
    out = highlight.marked_html(text, [(2, 10), (5, 20)])  # overlapping spans merge
    assert out.count("<mark>") == 1
    assert "<script>" not in out and "<img" not in out
    assert "&lt;script&gt;" in out and "&amp;" in out and "&quot;b&quot;" in out
    assert highlight.text_html("line 1\nline 2") == '<div class="lsqa-text">line 1<br>line 2</div>'
    assert "\n" not in highlight.text_html("a\n\nb")  # one line: a raw HTML block, never Markdown
    assert highlight.md_escape("![x](http://e) _a_ $b$") == \
        "&#33;&#91;x&#93;&#40;http:\u2060//e&#41; &#95;a&#95; &#36;b&#36;"
    assert highlight.md_escape("# a") == "&#35; a" and highlight.md_escape("12. a-b") == "12&#46; a-b"
    assert highlight.md_escape("    code") == "&#32;   code" and highlight.md_escape("- x") == "&#45; x"
