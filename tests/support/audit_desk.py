"""The Audit page's desk in Streamlit AppTest: AppTest runs no JavaScript, so a press goes to the desk
itself (``lsqa.dashboard.audit_desk.press``, what the dashboard's HTTP door calls) from the item the
page drew, and the page is run again to draw it."""

from __future__ import annotations

import html
import re

from lsqa.dashboard import audit_desk


def desk(at) -> audit_desk.Desk:
    """The desk of the page ``at`` shows."""
    found = audit_desk.desk_of(at.session_state["audit_desk"])
    assert found is not None, "the page drew no desk"
    return found


def shown_id(at) -> str | None:
    """The verdict the desk shows (None: the queue has ended)."""
    return desk(at).current_id


def buttons(at) -> dict[str, dict]:
    """The desk's buttons as last drawn, by name (the widget key without its ``__writes``)."""
    bar = desk(at).bar
    return {b["key"].split("__")[0]: b for b in (*bar.nav, *bar.labels, *bar.flags)}


def press(at, name: str, note: str = "", on_screen: str | None = "shown") -> audit_desk.Pressed:
    """Press the desk's button ``name`` as keys.js does, from a screen showing the item drawn (or
    ``on_screen``), with ``note`` typed; then the page runs again, as after a sync."""
    spec = buttons(at)[name]
    d = desk(at)
    pressed = audit_desk.press(d, spec["key"], d.current_id if on_screen == "shown" else on_screen, note)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return pressed


def desk_html(at) -> str:
    """The desk's HTML as the page's last run drew it."""
    bodies = [e.proto.body for e in at.get("html") if e.proto.body.startswith("<div class=\"lsqa-desk")]
    assert len(bodies) == 1, f"{len(bodies)} desks drawn"
    return bodies[0]


def desk_text(at) -> str:
    """What a person reads of the desk: its HTML without tags, character references decoded."""
    return html.unescape(re.sub(r"<[^>]+>", " ", desk_html(at)))
