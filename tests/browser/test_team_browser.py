"""Signing in, in a real browser (issue 34): a personal link signs a person in and leaves the
address bar; sign out, paste the token, sign in again in the same tab; a revoked link stops at once;
a viewer's keys on the Audit page write nothing."""

from __future__ import annotations

import re
import shutil

import pytest

from lsqa import team
from tests.support.bad_input import snapshot
from tests.support.browser import chromium, expect, fresh_page, need_browser, wait_idle
from tests.support.streamlit_server import serve

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def server(demo_workspace_template, tmp_path_factory):
    need_browser()
    ws = tmp_path_factory.mktemp("team") / "demo.duckdb"
    shutil.copy(demo_workspace_template, ws)
    people = {role: team.add_person(ws, name, role)
              for name, role in (("ana", "annotator"), ("vic", "viewer"), ("ada", "admin"))}
    with serve(ws) as url:
        yield url, ws, people


@pytest.fixture(scope="module")
def browser(server):
    with chromium() as b:
        yield b


@pytest.fixture
def page(browser):
    with fresh_page(browser) as pg:
        yield pg


def _heading(page, text: str):
    expect(page.get_by_role("heading", name=text).first).to_be_visible(timeout=60000)
    wait_idle(page)


def test_link_sign_out_paste_and_revoke_in_one_tab(server, page):
    url, ws, people = server
    page.goto(f"{url}/audit?annotator=ana")  # a typed name is no way in
    _heading(page, "Sign in")
    page.goto(f"{url}/?token={people['annotator']['token']}")
    expect(page.get_by_text(re.compile("ana · annotator · signed in with your link"))).to_be_visible(timeout=60000)
    wait_idle(page)
    assert "token" not in page.url
    page.get_by_role("button", name="Sign out").click()
    _heading(page, "Sign in")
    page.goto(f"{url}/sign-in")  # the sign-in front's form: the token goes in a POST body, never an address
    field = page.get_by_label("Token")
    field.fill(people["viewer"]["token"])
    field.press("Enter")
    expect(page.get_by_text(re.compile("vic · viewer"))).to_be_visible(timeout=60000)
    wait_idle(page)
    team.revoke_person(ws, "vic")  # from another process, while vic's tab is open: their next click
    page.get_by_role("link", name="Leaderboard").click()
    _heading(page, "Sign in")  # the session ended with the revocation


def test_a_viewer_pressing_every_key_on_the_audit_page_writes_nothing(server, page):
    url, ws, people = server
    viewer = team.add_person(ws, "val", "viewer")
    page.goto(f"{url}/audit?token={viewer['token']}")
    expect(page.get_by_text(re.compile("your role may not review and flag"))).to_be_visible(timeout=60000)
    wait_idle(page)
    before = snapshot(ws)
    page.mouse.click(900, 500)
    for key in "vabtxynwmqfgu":
        page.keyboard.press(key)
        wait_idle(page)  # any run the key asked for is over: what it wrote is in
    assert snapshot(ws) == before


def test_a_reload_or_a_new_tab_keeps_a_person_signed_in_until_sign_out(server, page):
    """The link signs rey in once; a reload, a new tab and a bookmark of a page keep him signed in
    (a session cookie; the workspace keeps its hash). Sign out ends it in every tab of the browser;
    revoking him ends it at his next reload."""
    url, ws, _ = server
    rey = team.add_person(ws, "rey", "annotator")
    kept = re.compile("rey · annotator · signed in with your link in this browser")
    page.goto(f"{url}/?token={rey['token']}")
    expect(page.get_by_text(re.compile("rey · annotator · signed in with your link"))).to_be_visible(timeout=60000)
    wait_idle(page)
    (cookie,) = [c for c in page.context.cookies() if c["name"].startswith("lsqa_session_")]
    assert cookie["sameSite"] == "Strict" and cookie["httpOnly"] and rey["token"] not in cookie["value"]
    assert len(cookie["value"]) >= 40
    page.reload()
    expect(page.get_by_text(kept)).to_be_visible(timeout=60000)
    wait_idle(page)
    other = page.context.new_page()
    other.goto(f"{url}/leaderboard")  # a bookmark of another page, in a new tab
    expect(other.get_by_text(kept)).to_be_visible(timeout=60000)
    wait_idle(other)

    (cookie,) = [c for c in page.context.cookies() if c["name"].startswith("lsqa_session_")]
    page.get_by_role("button", name="Sign out").click()
    _heading(page, "Sign in")
    # The sign-in front cleared the HttpOnly cookie (no page script can) and ended its session.
    assert not [c for c in page.context.cookies() if c["name"].startswith("lsqa_session_")]
    assert team.resume(ws, cookie["value"]) is None
    page.reload()
    _heading(page, "Sign in")
    other.get_by_role("link", name="Overview").click()  # the other tab's next click: signed out there too
    _heading(other, "Sign in")

    page.goto(f"{url}/?token={team.new_link(ws, 'rey')['token']}")  # a link signs in once: a new one
    expect(page.get_by_text(re.compile("rey · annotator"))).to_be_visible(timeout=60000)
    wait_idle(page)
    team.revoke_person(ws, "rey")
    page.reload()
    _heading(page, "Sign in")
