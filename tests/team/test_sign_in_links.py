"""One-time sign-in links (``lsqa.team.people``, migration 0027) and the sign-in front's exchange
(``lsqa.dashboard.sign_in_front``): a link signs in once, expires unused, a new one replaces it (from an
admin or the person's own session), and the front answers with an HttpOnly cookie. The browser side:
tests/browser/test_sign_in_browser.py."""

from __future__ import annotations

import datetime as dt

import pytest

from lsqa import store, team
from lsqa.dashboard import sign_in
from lsqa.dashboard.sign_in_front import exchange
from lsqa.errors import NotAllowed
from lsqa.team import people as people_mod
from lsqa.team import sessions as sessions_mod
from lsqa.team.roles import Person
from tests.support.bad_input import invoke, snapshot
from tests.support.migrations import workspace_before


@pytest.fixture
def ws(workspace):
    return workspace


def test_a_link_signs_in_once_and_says_why_not_again(ws):
    ana = team.add_person(ws, "ana", "annotator")
    assert team.link_refusal(ws, ana["token"]) == ""
    assert team.sign_in(ws, ana["token"]) == Person("ana", "annotator", via="token")
    assert team.sign_in(ws, ana["token"]) is None and team.link_refusal(ws, ana["token"]) == "used"
    assert team.link_refusal(ws, "x" * 43) == "unknown"
    assert set(sign_in.LINK_PROBLEMS) >= {"used", "expired", "unknown", "read-only", "no-front"}


def test_an_unused_link_expires_after_link_days(ws, monkeypatch):
    ana = team.add_person(ws, "ana", "annotator", link_days=2)
    assert ana["expires_at"] - people_mod._now() == pytest.approx(dt.timedelta(days=2), abs=dt.timedelta(seconds=5))
    later = people_mod._now() + dt.timedelta(days=2, seconds=1)
    monkeypatch.setattr(people_mod, "_now", lambda: later)
    before = snapshot(ws)
    assert team.sign_in(ws, ana["token"]) is None and team.link_refusal(ws, ana["token"]) == "expired"
    assert snapshot(ws) == before
    assert team.add_person(ws, "bo", "viewer")["expires_at"] - later == pytest.approx(
        dt.timedelta(days=team.LINK_DAYS), abs=dt.timedelta(seconds=5))  # the default: 7 days
    for days in (0, -1, 91, "7", True, float("nan")):
        with pytest.raises(NotAllowed, match="link lifetime"):
            team.add_person(ws, "cy", "viewer", link_days=days)


def test_a_new_link_replaces_the_old_one_and_keeps_the_sessions(ws):
    ana = team.add_person(ws, "ana", "annotator")
    team.add_person(ws, "ada", "admin")
    team.add_person(ws, "bo", "annotator")
    sid = team.open_session(ws, team.sign_in(ws, ana["token"]))
    me = team.resume(ws, sid)
    mine = team.new_link(ws, "ana", by=me)  # from her own signed-in session
    assert team.resume(ws, sid) == me  # the browser she made it from stays signed in
    admins = team.new_link(ws, "ana", by=Person("ada", "admin"))
    assert team.link_refusal(ws, mine["token"]) == "unknown"  # replaced before it was used
    assert team.sign_in(ws, admins["token"]).name == "ana"
    before = snapshot(ws)
    with pytest.raises(NotAllowed, match="manage people"):
        team.new_link(ws, "ana", by=Person("bo", "annotator"))  # somebody else's link: admins only
    with pytest.raises(NotAllowed, match="no active person"):
        team.new_link(ws, "nobody")
    assert snapshot(ws) == before


def test_the_front_exchange_opens_a_session_once(ws):
    ana = team.add_person(ws, "ana", "annotator")
    session_id, problem = exchange(ws, ana["token"])
    assert problem == "" and team.resume(ws, session_id).name == "ana"
    assert exchange(ws, ana["token"]) == (None, "used")
    assert exchange(ws, "not-a-token-but-long-enough") == (None, "unknown")


def test_users_link_prints_a_link_that_expires(ws, tmp_path, monkeypatch):
    team.add_person(ws, "ana", "annotator")
    (tmp_path / "lsqa.toml").write_text("link_days = 3\n")
    monkeypatch.setenv("LSQA_SETTINGS", str(tmp_path / "lsqa.toml"))
    out = invoke("users", "link", "ana", "--workspace", ws)
    assert out.exit_code == 0, out.output
    assert "/?token=" in out.stdout and "signs in once" in out.stdout and "expires unused on" in out.stdout
    token = out.stdout.split("?token=")[1].split()[0]
    with store.connect(ws) as con:
        left = con.execute("SELECT link_expires_at FROM people WHERE name = 'ana'").fetchone()[0] - people_mod._now()
    assert dt.timedelta(days=3) - dt.timedelta(seconds=30) < left <= dt.timedelta(days=3)
    assert team.sign_in(ws, token).name == "ana"
    (tmp_path / "lsqa.toml").write_text("link_days = 0\n")
    r = invoke("users", "link", "ana", "--workspace", ws)
    assert r.exit_code == 2 and "link_days" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_migration_0027_expires_the_links_made_before_it_and_keeps_the_sessions(tmp_path):
    """A workspace at migration 0026 with a person and a live browser session: after 0027 the person's
    old link signs nobody in (it may sit in browser history, maybe used), the session resumes, and a
    new link works once."""
    ws, con = workspace_before(tmp_path, "0027")
    token, salt = "t" * 43, "s" * 32
    con.execute("INSERT INTO people (name, role, token_salt, token_hash) VALUES ('ana', 'annotator', ?, ?)",
                [salt, people_mod._hash(salt, token)])
    sid = "i" * 43
    con.execute("INSERT INTO sign_in_sessions SELECT ?, 'ana', created_at, now()::TIMESTAMP, "
                "now()::TIMESTAMP + INTERVAL 1 DAY, NULL FROM people", [sessions_mod._hash(sid)])
    con.close()
    assert team.resume(ws, sid).name == "ana"  # connecting migrates to 0027
    assert team.sign_in(ws, token) is None and team.link_refusal(ws, token) == "expired"
    assert team.resume(ws, sid).name == "ana"
    new = team.new_link(ws, "ana")
    assert team.sign_in(ws, new["token"]).name == "ana" and team.sign_in(ws, new["token"]) is None
