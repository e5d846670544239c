"""Streamlit AppTest helpers: a page opened by a signed-in person, and the text a run shows a person
as one string to assert on (every kind of text element: Markdown, captions, headings, alerts, toasts)."""

from __future__ import annotations

import html
import re


def signed_in_page(app: str, ws, name: str, page: str, **state):
    """``page`` of ``app`` for ``name``, signed in by a new link of theirs exchanged as the sign-in front
    does it (a link signs in once), with ``state`` in the session; the run must raise nothing."""
    from streamlit.testing.v1 import AppTest

    from lsqa import team
    from lsqa.dashboard.sign_in_front import exchange

    at = AppTest.from_file(app, default_timeout=90)
    session_id, problem = exchange(ws, team.new_link(ws, name)["token"])
    assert session_id, problem
    at.session_state["lsqa_session"] = session_id
    for k, v in state.items():
        at.session_state[k] = v
    at.run()
    at.switch_page(page)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


TEXT_ELEMENTS = ("markdown", "caption", "title", "header", "subheader", "error", "warning", "info", "success", "toast")


def page_text(at) -> str:
    """Every text element's value, and the text of each block of HTML (``st.html``, the Audit page's
    desk) without its tags; a script's block is left out."""
    blocks = [html.unescape(re.sub(r"<[^>]+>", " ", e.proto.body)) for e in at.get("html")
              if "<script" not in e.proto.body]
    return " ".join([*(str(e.value) for kind in TEXT_ELEMENTS for e in getattr(at, kind)), *blocks])


def as_read(markdown: str) -> str:
    """What a person reads of a Markdown string the dashboard escaped (``lsqa.text.highlight.md_escape``):
    character references decoded, backslash escapes and the invisible word joiner gone."""
    return re.sub(r"\\(.)", r"\1", html.unescape(markdown)).replace("\u2060", "")
