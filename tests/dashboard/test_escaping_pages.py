"""Every page shows user- and model-supplied text as text (lsqa.text.highlight.escape, the one rule),
checked with AppTest on the small demo workspace: a payload made of every line-separator character
of CommonMark, HTML and Unicode, alone and doubled, around an image, a link, bold text and a raw
<img>, is put into a question, an answer, a verdict's evidence, a flag note, a review note and a
comment (through lsqa's write functions where they take it, through lsqa.store otherwise, and said
so), and markup-only payloads into a system's, a judge's and an annotator's name (the name rule
refuses control characters in names: lsqa/text/names.py). Each page's elements are rendered as
Streamlit renders them (CommonMark; HTML only where the element allows it) and no <img>, <a> or
formatting element may come from a payload. The report (lsqa.dashboard.report) is checked too."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import pytest
import streamlit as st
from markdown_it import MarkdownIt
from streamlit.testing.v1 import AppTest

from lsqa import audit, store
from lsqa.audit import adjudication
from lsqa.store import results as results_store
from tests.conftest import PROJECT_ROOT
from tests.text.test_escaping import SEPARATORS

APP = str(PROJECT_ROOT / "app.py")
SXS = "lexical-sxs-fc"
PAGES = ["overview", "audit", "adjudicate", "reference_errors", "agreement", "leaderboard", "corpus"]
MARKER = "pwned"
# Notes and comments stop at 2,000 characters and refuse NUL: the line separators, each doubled.
NOTE_SEPARATORS = ["\r", "\r\n", "\n", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]


def payload(separators, n: int) -> str:
    parts = []
    for k, sep in enumerate(separators):
        s = sep * 2
        parts.append(f"{s}![{MARKER}{n}{k}](http://beacon.invalid/{n}{k}.png){s}**{MARKER}{n}{k}**{s}"
                     f'<img src="http://beacon.invalid/r{n}{k}.png">{s}[{MARKER}{n}{k}](http://beacon.invalid/l{n}{k})')
    return "".join(parts) + "end"


NAME = f"![{MARKER}](http://beacon.invalid/n.png) **{MARKER}** <img src=x> [{MARKER}](http://b.invalid)"

_md_html = MarkdownIt("commonmark", {"html": True})
_md_plain = MarkdownIt("commonmark", {"html": False})
BAD_TAGS = {"img", "a", "strong", "em", "h1", "h2", "h3", "h4", "h5", "h6", "li", "code", "script", "iframe"}


class _FromPayload(HTMLParser):
    """Elements the payload made: an <img> or <a> pointing at beacon.invalid, or a formatting element
    (``BAD_TAGS``) whose whole text is a payload's emphasised word (``pwned…``). A page's own bold
    label or heading around an escaped name holds more than that word, and is fine."""

    def __init__(self):
        super().__init__()
        self.open: list[list] = []   # [tag, text inside]
        self.found: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag in BAD_TAGS and any("beacon" in (v or "") for _, v in attrs):
            self.found.append(f"<{tag} {attrs}>")
        if tag not in ("br", "img", "hr", "input", "meta"):
            self.open.append([tag, ""])

    def handle_endtag(self, tag):
        for i in range(len(self.open) - 1, -1, -1):
            if self.open[i][0] == tag:
                name, text = self.open[i]
                if name in BAD_TAGS and re.fullmatch(rf"{MARKER}\d*", text.strip()):
                    self.found.append(f"<{name}>{text}</{name}>")
                del self.open[i:]
                break

    def handle_data(self, data):
        for entry in self.open:
            entry[1] += data


def from_payload(text: str, allow_html: bool | str) -> list[str]:
    """What the payload made of ``text``: Markdown (HTML allowed or not), or ``"raw"`` HTML as drawn
    (``st.html``: the Audit page's desk)."""
    parser = _FromPayload()
    parser.feed(text if allow_html == "raw" else (_md_html if allow_html else _md_plain).render(text))
    return parser.found


def shown_texts(at: AppTest) -> list[tuple[str, str, bool]]:
    """(element type, Markdown, HTML allowed) of everything on the page Streamlit renders as Markdown:
    markdown, captions, alerts, headers, and every widget's and expander's label (and radio options);
    and each block of HTML drawn as it is (``"raw"``), scripts left out."""
    out = [("html", e.proto.body, "raw") for e in at.get("html") if "<script" not in e.proto.body]
    for kind in ("markdown", "caption", "info", "warning", "error", "success", "title", "header", "subheader"):
        for el in at.get(kind):
            value = getattr(el, "value", None) or getattr(getattr(el, "proto", None), "body", "")
            allow = bool(getattr(getattr(el, "proto", None), "allow_html", False))
            out.append((kind, str(value), allow))
    for kind in ("expander", "button", "checkbox", "toggle", "radio", "selectbox", "multiselect", "text_input",
                 "text_area", "slider", "number_input", "tab"):
        for el in at.get(kind):
            out.append((kind, str(getattr(el, "label", "") or ""), False))
            if kind == "radio":
                out.extend((kind, str(o), False) for o in (getattr(el, "options", None) or []))
    return out


@pytest.fixture(autouse=True)
def _fresh_streamlit_caches():
    st.cache_data.clear()
    st.cache_resource.clear()
    yield
    st.cache_data.clear()
    st.cache_resource.clear()


def _rename(con, old: str, new: str) -> None:
    """Every text column holding exactly ``old`` gets ``new`` (a crafted name, through SQL: the
    name rule would refuse nothing here, but the pages must escape names whatever their origin)."""
    cols = con.execute("SELECT table_name, column_name FROM information_schema.columns WHERE data_type = 'VARCHAR' "
                       "AND table_schema = 'main' AND table_name IN (SELECT table_name FROM information_schema.tables "
                       "WHERE table_type = 'BASE TABLE')").fetchall()
    for table, column in cols:
        con.execute(f'UPDATE "{table}" SET "{column}" = ? WHERE "{column}" = ?', [new, old])


@pytest.fixture
def crafted(demo_workspace, monkeypatch) -> dict:
    ws = demo_workspace
    monkeypatch.setenv("LSQA_WORKSPACE", str(ws))
    item = audit.item(ws, audit.queue(ws, audit.Filters(judges=(SXS,)), "alice")["rows"][0]["id"])
    text = payload(SEPARATORS, 1)
    note = payload(NOTE_SEPARATORS, 2)[:1990]
    # Through lsqa's write functions: a flag note, a review note and a comment (an annotator with a
    # markup name signs the review).
    audit.flag(ws, NAME, item["question_id"], "1", "wrong", note=note)
    audit.review(ws, NAME, item["id"], item["label"] or "tie", note=note)
    audit.review(ws, "bob", item["id"], "A" if item["label"] != "A" else "B", note=note)
    adjudication.comment(ws, "alice", item["id"], note)
    # Through lsqa.store / SQL (no import path takes these raw): the question, an answer, the evidence.
    with store.write(ws) as con:
        results_store.insert_answers(con, [{"question_id": item["question_id"], "system_name": item["system_a"],
                                            "text": text, "status": "ok"}], replace=True)
        con.execute("UPDATE judgments SET evidence = ? WHERE id = ?", [json.dumps([text]), item["id"]])
        con.execute("UPDATE questions SET text = ?, reference_1 = ? WHERE id = ?", [payload(SEPARATORS, 3), payload(SEPARATORS, 4), item["question_id"]])
        _rename(con, item["system_b"], NAME + " system")
        _rename(con, SXS, NAME + " judge")
    return {"ws": ws, "item": item}


def _page(page: str, **query) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["annotator"] = "alice"
    for k, v in query.items():
        at.query_params[k] = v
    at.switch_page(f"pages/{page}.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.mark.parametrize("page", PAGES)
def test_no_markup_from_any_field_on_any_page(crafted, page):
    at = _page(page, **({"item": crafted["item"]["id"]} if page == "audit" else {}))
    shown = shown_texts(at)
    assert shown
    bad = [(kind, found, text[:200]) for kind, text, allow in shown for found in from_payload(text, allow)]
    assert bad == [], bad[:5]
    if page == "audit":  # the payloads are on the page, as text
        assert sum(text.count(MARKER) for _, text, _ in shown) >= 3


def test_no_markup_from_any_field_in_the_report(crafted):
    from lsqa.dashboard import report

    html = report.build(crafted["ws"], NAME + " judge", bootstrap=20)
    parser = _FromPayload()
    parser.feed(html)
    assert parser.found == []
    assert MARKER in html                                   # the judge's and the systems' names, as text
