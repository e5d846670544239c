"""The text a Streamlit AppTest run shows a person, as one string to assert on (every kind of text
element: Markdown, captions, headings, alerts, toasts)."""

from __future__ import annotations

import html
import re

TEXT_ELEMENTS = ("markdown", "caption", "title", "header", "subheader", "error", "warning", "info", "success", "toast")


def page_text(at) -> str:
    return " ".join(str(e.value) for kind in TEXT_ELEMENTS for e in getattr(at, kind))


def as_read(markdown: str) -> str:
    """What a person reads of a Markdown string the dashboard escaped (``lsqa.text.highlight.md_escape``):
    character references decoded, backslash escapes and the invisible word joiner gone."""
    return re.sub(r"\\(.)", r"\1", html.unescape(markdown)).replace("\u2060", "")
