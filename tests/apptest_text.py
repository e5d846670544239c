"""The text a Streamlit AppTest run shows a person, as one string to assert on (every kind of text
element: Markdown, captions, headings, alerts, toasts)."""

from __future__ import annotations

TEXT_ELEMENTS = ("markdown", "caption", "title", "header", "subheader", "error", "warning", "info", "success", "toast")


def page_text(at) -> str:
    return " ".join(str(e.value) for kind in TEXT_ELEMENTS for e in getattr(at, kind))
