"""Signing in through the sign-in front, in Debian's chromium (``dashboard.py``, as ``make run`` serves
it): a link used twice signs in once; an expired link refuses with a clear message; the session cookie
is HttpOnly, so a page of another 127.0.0.1 port (a second server this test starts) cannot read it from
``document.cookie``, while it can read a cookie that is not HttpOnly; the link followed by a page change
shows the page."""

from __future__ import annotations

import contextlib
import http.server
import re
import shutil
import threading

import pytest

from lsqa import store, team
from tests.support.browser import chromium, expect, need_browser, wait_idle
from tests.support.streamlit_server import free_port, serve

pytestmark = pytest.mark.browser

AUDIT_HEADING = "Audit judge verdicts"


@pytest.fixture(scope="module")
def server(demo_workspace_template, tmp_path_factory):
    need_browser()
    ws = tmp_path_factory.mktemp("sign-in") / "demo.duckdb"
    shutil.copy(demo_workspace_template, ws)
    team.add_person(ws, "ada", "admin")
    with serve(ws) as url, chromium() as browser:
        yield {"url": url, "ws": ws, "browser": browser}


@contextlib.contextmanager
def _fresh_page(server):
    context = server["browser"].new_context(viewport={"width": 1280, "height": 800})
    try:
        yield context.new_page()
    finally:
        context.close()


@contextlib.contextmanager
def _other_local_app():
    """A tiny second web server on another 127.0.0.1 port (a notebook server, another local app)."""

    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (the standard library's name)
            body = b"<!doctype html><title>other app</title><p>another local app</p>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), Page)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=10)


def _signed_in_as(page, name: str):
    expect(page.get_by_text(re.compile(rf"{name} · annotator · signed in with your link"))).to_be_visible(timeout=60000)
    wait_idle(page)


def test_a_link_used_twice_signs_in_once_and_the_cookie_is_httponly(server):
    url, ws = server["url"], server["ws"]
    ana = team.add_person(ws, "ana", "annotator")
    with _fresh_page(server) as first:
        first.goto(f"{url}/?token={ana['token']}")
        _signed_in_as(first, "ana")
        assert "token" not in first.url
        (cookie,) = [c for c in first.context.cookies() if c["name"].startswith("lsqa_session_")]
        assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and cookie["path"] == "/"
        assert ana["token"] not in cookie["value"] and team.resume(ws, cookie["value"]).name == "ana"
        assert "lsqa_session_" not in first.evaluate("document.cookie")
        first.reload()  # the session, not the link, keeps her in
        _signed_in_as(first, "ana")
        with _fresh_page(server) as second:  # the same link again: from history, another browser
            second.goto(f"{url}/?token={ana['token']}")
            expect(second.get_by_role("heading", name="Sign in").first).to_be_visible(timeout=60000)
            expect(second.get_by_text("This sign-in link was used already")).to_be_visible(timeout=30000)
            assert not [c for c in second.context.cookies() if c["name"].startswith("lsqa_session_")]
            assert "sign_in" not in second.url and "token" not in second.url


def test_an_expired_link_refuses_with_a_clear_message(server):
    url, ws = server["url"], server["ws"]
    eve = team.add_person(ws, "eve", "annotator")
    with store.write(ws) as con:  # made eight days ago, never used
        con.execute("UPDATE people SET link_expires_at = link_expires_at - INTERVAL 8 DAY WHERE name = 'eve'")
    with _fresh_page(server) as page:
        page.goto(f"{url}/audit?token={eve['token']}")
        expect(page.get_by_text("This sign-in link expired without being used")).to_be_visible(timeout=60000)
        expect(page.get_by_test_id("stAlertContentError").get_by_text("lsqa users link NAME")).to_be_visible()
        assert not [c for c in page.context.cookies() if c["name"].startswith("lsqa_session_")]
    assert team.link_refusal(ws, eve["token"]) == "expired"


def test_another_local_port_cannot_read_the_session_cookie(server):
    url, ws = server["url"], server["ws"]
    cy = team.add_person(ws, "cy", "annotator")
    with _fresh_page(server) as page, _other_local_app() as other:
        page.goto(f"{url}/?token={cy['token']}")
        _signed_in_as(page, "cy")
        # The control: cookies are not scoped by port, so a cookie a script could read is read there.
        page.context.add_cookies([{"name": "readable_control", "value": "1", "domain": "127.0.0.1", "path": "/"}])
        page.goto(other)
        seen = page.evaluate("document.cookie")
        assert "readable_control=1" in seen
        assert "lsqa_session_" not in seen
        sent = [c for c in page.context.cookies(other) if c["name"].startswith("lsqa_session_")]
        assert sent and all(c["httpOnly"] for c in sent)  # the browser holds it for that port too, unreadable


@pytest.mark.parametrize("wait_s", [0.3, 3.0])
def test_the_link_then_a_page_change_shows_the_page(server, wait_s):
    """Open the personal link at / and move to the Audit page ``wait_s`` later (3.0: once the first page is
    drawn and idle): the Audit page, never a blank one or the sign-in page (the cookie came with the
    redirect, before any script ran)."""
    url, ws = server["url"], server["ws"]
    name = f"dee{int(wait_s * 10)}"
    dee = team.add_person(ws, name, "annotator")
    with _fresh_page(server) as page:
        page.goto(f"{url}/?token={dee['token']}")
        if wait_s < 1:
            page.wait_for_timeout(int(wait_s * 1000))  # a person quick to move on: before the page is drawn
        else:
            wait_idle(page)  # a person who waits: once the first page is drawn and its run is over
        page.get_by_test_id("stSidebarNavItems").get_by_role("link", name="Audit").click(timeout=30000)
        expect(page.get_by_role("heading", name=AUDIT_HEADING).first).to_be_visible(timeout=30000)
        expect(page.get_by_text(re.compile(rf"{name} · annotator"))).to_be_visible(timeout=30000)
        assert "/audit" in page.url


def _session_cookies(page) -> list[dict]:
    return [c for c in page.context.cookies() if c["name"].startswith("lsqa_session_")]


def test_sign_out_clears_the_cookie_and_ends_the_session(server):
    """Sign in by link, then the sidebar's *Sign out*: the cookie is gone from the browser, a reload
    shows the sign-in page, and the old cookie's value put back in the browser is refused (the
    workspace ended that session). A GET of /sign-out signs nobody out."""
    url, ws = server["url"], server["ws"]
    fay = team.add_person(ws, "fay", "annotator")
    with _fresh_page(server) as page:
        page.goto(f"{url}/audit?token={fay['token']}")
        _signed_in_as(page, "fay")
        (cookie,) = _session_cookies(page)
        assert team.resume(ws, cookie["value"]).name == "fay"
        assert page.request.get(f"{url}/sign-out").status == 405  # a GET (a prefetch, an <img>): nothing ends
        assert team.resume(ws, cookie["value"]).name == "fay"

        page.get_by_test_id("stSidebar").get_by_role("button", name="Sign out").click()
        expect(page.get_by_role("heading", name="Sign in").first).to_be_visible(timeout=60000)
        assert not _session_cookies(page)  # Max-Age=0, same name, path and attributes: the browser dropped it
        assert team.resume(ws, cookie["value"]) is None  # ended in the workspace
        page.reload()
        expect(page.get_by_role("heading", name="Sign in").first).to_be_visible(timeout=60000)
        expect(page.get_by_text(re.compile("fay · annotator"))).to_have_count(0)

        page.context.add_cookies([{k: cookie[k] for k in ("name", "value", "domain", "path", "httpOnly", "sameSite")}])
        page.goto(f"{url}/audit")  # the old value replayed (a copy taken before the sign out)
        expect(page.get_by_role("heading", name="Sign in").first).to_be_visible(timeout=60000)
        wait_idle(page)
        expect(page.get_by_text(re.compile("fay · annotator"))).to_have_count(0)
        assert team.resume(ws, cookie["value"]) is None


def test_another_site_or_local_app_cannot_sign_a_browser_out(server):
    """A form on another 127.0.0.1 port posts to /sign-out: the browser sends the SameSite cookie
    along (another port is the same site), but the front refuses the POST (Sec-Fetch-Site:
    same-site), so the person stays signed in. Without Sec-Fetch-Site (an older browser) the Origin
    header decides: another origin is refused, the dashboard's own is accepted."""
    import urllib.error
    import urllib.request

    url, ws = server["url"], server["ws"]
    gil = team.add_person(ws, "gil", "annotator")
    with _fresh_page(server) as page, _other_local_app() as other:
        page.goto(f"{url}/?token={gil['token']}")
        _signed_in_as(page, "gil")
        (cookie,) = _session_cookies(page)
        page.goto(other)
        with page.expect_navigation():
            page.evaluate("""(to) => { const f = document.createElement('form'); f.method = 'post'; f.action = to;
                                       document.body.appendChild(f); f.submit(); }""", f"{url}/sign-out")
        assert "own pages only" in page.content()
        assert [c["value"] for c in _session_cookies(page)] == [cookie["value"]]
        assert team.resume(ws, cookie["value"]).name == "gil"
        page.goto(f"{url}/")
        _signed_in_as(page, "gil")

    def post(origin: str) -> tuple[int, str]:
        request = urllib.request.Request(f"{url}/sign-out", data=b"", method="POST", headers={
            "Cookie": f"{cookie['name']}={cookie['value']}", "Origin": origin})
        opener = urllib.request.build_opener(type("NoRedirect", (urllib.request.HTTPRedirectHandler,), {
            "redirect_request": lambda *args, **kwargs: None}))
        try:
            with opener.open(request, timeout=30) as answer:
                return answer.status, answer.headers.get("Set-Cookie", "")
        except urllib.error.HTTPError as answer:
            return answer.code, answer.headers.get("Set-Cookie", "")

    assert post("http://elsewhere.example") == (403, "")
    assert team.resume(ws, cookie["value"]).name == "gil"
    status, set_cookie = post(url)
    assert status == 303 and team.resume(ws, cookie["value"]) is None
    said = [part.strip().lower() for part in set_cookie.split(";")]
    assert said[0] == f'{cookie["name"]}=""'.lower() and "max-age=0" in said
    assert {"httponly", "samesite=strict", "path=/"} <= set(said)
