"""The Audit desk's HTTP door: ``POST /audit-desk`` presses a button of a tab's desk
(``lsqa.dashboard.audit_desk``) and answers with the desk drawn again, as JSON.

``dashboard.py`` serves it as ASGI middleware beside the sign-in front, so that a decision by key is
one small request handled in a worker thread, not a Streamlit script run. The request is JSON::

    {"desk": KEY, "button": WIDGET_KEY, "on_screen": ITEM_ID, "note": TEXT}

``desk`` is the capability the page drew into its own HTML: it names one tab's desk and acts as the
person that page signed in (their cookie, proxy header or typed name, as the page found them), so a
request with another key, or none, finds nothing. A POST is accepted from this dashboard's own pages
only (``sign_in_front.from_this_dashboard``: no other site can make a signed-in browser press keys),
with a JSON body of at most ``MAX_BODY_BYTES``. The answer: ``{"html", "item", "note", "ended"}``
(``audit_desk.Pressed``), or ``{"error"}`` with 4xx saying what to do.

Never imports streamlit.
"""

from __future__ import annotations

import json

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from lsqa.dashboard import audit_desk
from lsqa.dashboard.sign_in_front import from_this_dashboard

DESK_PATH = "/audit-desk"
MAX_BODY_BYTES = 16_384  # a note is at most audit.MAX_NOTE_CHARS characters: room for it in UTF-8 and JSON
_NO_STORE = {"Cache-Control": "no-store"}
# Whether this process serves the desk's door: the Audit page says so when it does not (app.py served
# without dashboard.py), as a key there could write nothing.
serving = False


class AuditDeskFront:
    """ASGI middleware (Starlette's pure-ASGI form): ``POST /audit-desk``; everything else passes."""

    def __init__(self, app: ASGIApp) -> None:
        global serving
        self.app = app
        serving = True

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] == DESK_PATH:
            response = await self._answer(Request(scope, receive))
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)

    async def _answer(self, request: Request) -> Response:
        if request.method != "POST":
            return _error(405, "the desk is pressed with a POST from the Audit page", {"Allow": "POST"})
        if not from_this_dashboard(request):
            return _error(403, "the desk is pressed from this dashboard's own pages only")
        body = b""
        async for chunk in request.stream():
            body += chunk
            if len(body) > MAX_BODY_BYTES:
                return _error(413, f"a press is at most {MAX_BODY_BYTES:,} bytes of JSON")
        try:
            fields = json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            return _error(400, "a press is a JSON object: desk, button, on_screen, note")
        problem = _malformed(fields)
        if problem:
            return _error(400, problem)
        desk = audit_desk.desk_of(fields["desk"])
        if desk is None:
            return _error(404, "This page's desk is gone (the dashboard restarted, or the tab was idle for hours): "
                               "reload the page. Nothing was written.")
        pressed = await run_in_threadpool(audit_desk.press, desk, fields["button"], fields.get("on_screen"),
                                          fields.get("note") or "")
        return JSONResponse({"html": pressed.html, "item": pressed.item, "note": pressed.note, "ended": pressed.ended},
                            headers=_NO_STORE)


def _malformed(fields) -> str:
    """What is wrong with a press's fields ('' when nothing is)."""
    if not isinstance(fields, dict):
        return "a press is a JSON object: desk, button, on_screen, note"
    for name in ("desk", "button"):
        if not isinstance(fields.get(name), str) or not fields[name]:
            return f"a press names its {name} (a string)"
    for name in ("on_screen", "note"):
        if fields.get(name) is not None and not isinstance(fields[name], str):
            return f"a press's {name} is a string or null"
    return ""


def _error(status: int, said: str, headers: dict | None = None) -> Response:
    return JSONResponse({"error": said}, status_code=status, headers={**_NO_STORE, **(headers or {})})
