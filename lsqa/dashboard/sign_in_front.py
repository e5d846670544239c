"""The dashboard's sign-in front: the HTTP piece that exchanges a personal link for a session cookie
the browser keeps out of every page script's reach.

A Streamlit script can read cookies (``st.context.cookies``, server-side) but cannot set one with
``HttpOnly``: only an HTTP response can. ``dashboard.py`` serves app.py as a Streamlit ``st.App``
(an ASGI app on Starlette) with :class:`SignInFront` as its outermost middleware, so the front sees
every HTTP request before Streamlit does:

- ``GET <any page>?token=T``: the token is exchanged once (``lsqa.team.sign_in``), a browser session
  opened (``lsqa.team.open_session``) and the answer is a 303 redirect to the same page without the
  token, with ``Set-Cookie: lsqa_session_…=<id>; HttpOnly; SameSite=Strict; Path=/`` (``Secure``
  over HTTPS). A token that signs nobody in redirects to the page with ``?sign_in=used|expired|
  unknown``, a code the sign-in page turns into its sentence (``lsqa.dashboard.sign_in``).
- ``GET /sign-in`` shows a form to paste a token; ``POST /sign-in`` exchanges it the same way (the
  token in the request body, never in an address).
- ``POST /sign-out`` (the sidebar's *Sign out*) ends the browser's session in the workspace
  (``lsqa.team.end_session``: its id no longer resumes anywhere, a copy of the cookie included) and
  clears the cookie (``Max-Age=0`` with the attributes it was set with), then redirects to ``/``.
  A POST, not a GET: a GET must be safe to repeat (RFC 9110 §9.2.1), and prefetchers, link previews
  and an ``<img src>`` on any page send GETs by themselves.

A POST to either is accepted from this dashboard's own pages only (:func:`from_this_dashboard`), so
that no other site — nor another app of the same host, to which the ``SameSite`` cookie is sent
along — can sign a browser in to somebody else's session or out of its own (login / logout CSRF,
OWASP's cross-site request forgery guidance: ``Sec-Fetch-Site``, else ``Origin``).

This follows OWASP's session management guidance (a one-time login token exchanged for a session id
in an ``HttpOnly``, ``SameSite`` cookie set by the server) and Jupyter's token-then-cookie login.
Everything else (pages, static files, the websocket) passes through untouched; the script reads the
cookie from the websocket's handshake as before. Never imports streamlit.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Callable
from urllib.parse import parse_qsl, urlencode

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from lsqa import team
from lsqa.dashboard import sign_in
from lsqa.errors import LsqaError

SIGN_IN_PATH = sign_in.PASTE_PATH
SIGN_OUT_PATH = sign_in.SIGN_OUT_PATH
MAX_FORM_BYTES = 4096
_NO_STORE = {"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"}


def exchange(workspace: Path, token: str) -> tuple[str | None, str]:
    """``(session id, '')`` when ``token`` signs somebody in (the link is used up), else ``(None, code)``:
    ``used``, ``expired``, ``unknown`` or ``read-only`` (a workspace this process may not write, where
    a link cannot be marked used, so it signs nobody in)."""
    try:
        person = team.sign_in(workspace, token)
    except LsqaError:
        return None, "read-only"
    if person is None:
        return None, team.link_refusal(workspace, token) or "unknown"
    session_id = team.open_session(workspace, person)
    return (session_id, "") if session_id else (None, "read-only")


class SignInFront:
    """ASGI middleware (Starlette's pure-ASGI form): the sign-in exchange in front of the dashboard.

    ``workspace``: a callable giving the workspace for each request (default: the dashboard's,
    ``lsqa.dashboard.common.current_workspace``)."""

    def __init__(self, app: ASGIApp, workspace: Callable[[], Path] | None = None) -> None:
        self.app = app
        if workspace is None:
            from lsqa.dashboard.common import current_workspace as workspace
        self.workspace = workspace

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            request = Request(scope, receive)
            response = await self._answer(request)
            if response is not None:
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)

    async def _answer(self, request: Request) -> Response | None:
        if request.url.path == SIGN_IN_PATH:
            if request.method == "POST":
                return await self._pasted(request)
            if request.method in ("GET", "HEAD"):
                return _form_page(request.query_params.get("sign_in", ""))
            return Response("method not allowed", status_code=405, headers={"Allow": "GET, POST"})
        if request.url.path == SIGN_OUT_PATH:
            if request.method == "POST":
                return await self._signed_out(request)
            return Response("sign out with the Sign out button in the dashboard's sidebar (a POST)",
                            status_code=405, headers={"Allow": "POST"})
        # GET only: a HEAD (a link checker's) does not use a link up. A preview bot's GET does: the
        # person then asks for a new link (docs/limits.md).
        if request.method == "GET" and "token" in request.query_params:
            kept = [(k, v) for k, v in parse_qsl(request.url.query, keep_blank_values=True)
                    if k not in ("token", "sign_in")]
            return await self._signed_in(request, request.query_params["token"], request.url.path, kept)
        return None

    async def _pasted(self, request: Request) -> Response:
        if not from_this_dashboard(request):
            return Response("a sign-in form is accepted from this dashboard's own pages only", status_code=403)
        body = b""
        async for chunk in request.stream():
            body += chunk
            if len(body) > MAX_FORM_BYTES:
                return Response("the sign-in form holds one token", status_code=413)
        fields = dict(parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True))
        return await self._signed_in(request, fields.get("token", "").strip(), "/", [], failed_to=SIGN_IN_PATH)

    async def _signed_in(self, request: Request, token: str, path: str, kept: list[tuple[str, str]], *,
                         failed_to: str | None = None) -> Response:
        workspace = self.workspace()
        session_id, problem = await run_in_threadpool(exchange, workspace, token)
        if session_id is None:
            target = failed_to or path
            response = RedirectResponse(_address(target, kept + [("sign_in", problem)]), status_code=303,
                                        headers=_NO_STORE)
            return response
        response = RedirectResponse(_address(path, kept), status_code=303, headers=_NO_STORE)
        response.set_cookie(sign_in.cookie_name(workspace), session_id, max_age=team.SESSION_DAYS * 86400, path="/",
                            httponly=True, samesite="strict", secure=request.url.scheme == "https")
        return response


    async def _signed_out(self, request: Request) -> Response:
        if not from_this_dashboard(request):
            return Response("sign out is accepted from this dashboard's own pages only", status_code=403)
        workspace = self.workspace()
        name = sign_in.cookie_name(workspace)
        response = RedirectResponse("/", status_code=303, headers=_NO_STORE)
        try:
            await run_in_threadpool(team.end_session, workspace, request.cookies.get(name))
        except LsqaError as exc:  # e.g. a workspace this process may only read: the cookie goes all the same
            response = HTMLResponse(f"<!doctype html><title>Sign out — lsqa</title><p role=\"alert\">This browser "
                                    f"forgot its session, but the workspace could not end it: "
                                    f"{html.escape(str(exc))}</p>", status_code=503, headers=_NO_STORE)
        response.delete_cookie(name, path="/", httponly=True, samesite="strict", secure=request.url.scheme == "https")
        return response


def from_this_dashboard(request: Request) -> bool:
    """Whether a form POST comes from this dashboard's own pages (the same origin: scheme, host and
    port). ``Sec-Fetch-Site`` when the browser sends it (``same-origin``, or ``none`` for one the
    person started themself); else the ``Origin`` header, which must be this server's own; a request
    with neither comes from no browser page (a script holding the cookie needs no forcing)."""
    site = request.headers.get("sec-fetch-site")
    if site is not None:
        return site in ("same-origin", "none")
    origin = request.headers.get("origin")
    if origin is None:
        return True
    own = f"{request.url.scheme}://{request.headers.get('host', '')}"
    return origin.lower() == own.lower()


def _address(path: str, query: list[tuple[str, str]]) -> str:
    # A path of this server only (a request's own path): never another host.
    path = "/" + path.lstrip("/")
    return path + ("?" + urlencode(query) if query else "")


def _form_page(problem: str) -> HTMLResponse:
    said = sign_in.LINK_PROBLEMS.get(problem, "")
    note = f'<p role="alert">{html.escape(said)}</p>' if said else ""
    return HTMLResponse(f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sign in — lsqa</title>
<meta name="referrer" content="no-referrer"></head>
<body style="font-family: sans-serif; max-width: 36em; margin: 3em auto">
<h1>Sign in</h1>{note}
<p>Paste the token of your personal sign-in link (the text after <code>?token=</code>). A link signs in once;
an admin makes a new one with <code>lsqa users link NAME</code>.</p>
<form method="post" action="{SIGN_IN_PATH}"><label>Token <input name="token" type="password" autocomplete="off"
 required></label> <button type="submit">Sign in</button></form>
<p><a href="/">Back to the dashboard</a></p>
</body></html>""", headers=_NO_STORE)
