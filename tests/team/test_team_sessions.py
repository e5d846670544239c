"""Browser sessions (``lsqa.team.sessions``): a person signed in with their link stays signed in until
they sign out, the session expires, they are revoked or given a new token; only a hash is stored."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from lsqa import store, team
from lsqa.errors import NotAllowed
from lsqa.team import sessions
from lsqa.team.roles import Person, acting


@pytest.fixture
def people_ws(workspace):
    ana = team.add_person(workspace, "ana", "annotator")
    team.add_person(workspace, "ada", "admin")
    return workspace, ana


def _signed_in(ws, link):
    """``link``: a person's added row; the first sign-in uses its token, each later one a new link
    (a link signs in once)."""
    token = link["token"] if not link.get("used") else team.new_link(ws, link["name"])["token"]
    link["used"] = True
    person = team.sign_in(ws, token)
    assert person is not None and person.via == "token"
    return person


def test_a_session_resumes_the_person_until_signed_out(people_ws):
    ws, ana = people_ws
    sid = team.open_session(ws, _signed_in(ws, ana))
    assert isinstance(sid, str) and len(sid) >= 40
    assert team.resume(ws, sid) == Person("ana", "annotator", via="session")
    assert team.resume(ws, sid) == Person("ana", "annotator", via="session")  # as often as pages ask
    team.end_session(ws, sid)
    assert team.resume(ws, sid) is None
    other = team.open_session(ws, _signed_in(ws, ana))  # signing in again: a new session
    assert other != sid and team.resume(ws, other).name == "ana" and team.resume(ws, sid) is None


def test_the_workspace_keeps_only_a_hash_of_the_session_id(people_ws):
    ws, ana = people_ws
    sid = team.open_session(ws, _signed_in(ws, ana))
    with store.connect(ws) as con:
        rows = con.execute("SELECT * FROM sign_in_sessions").fetchall()
    assert len(rows) == 1 and sid not in repr(rows)
    store.db.close_host_at_exit()  # checkpoint: the file itself must not hold the id either
    assert sid.encode() not in Path(ws).read_bytes()
    wal = Path(str(ws) + ".wal")
    assert not wal.exists() or sid.encode() not in wal.read_bytes()


def test_revoking_or_a_new_token_ends_the_sessions_and_a_role_change_shows(people_ws):
    ws, ana = people_ws
    sid = team.open_session(ws, _signed_in(ws, ana))
    team.revoke_person(ws, "ana")
    assert team.resume(ws, sid) is None
    new = team.add_person(ws, "ana", "adjudicator")  # a new link: the old browser sessions stay ended
    assert team.resume(ws, sid) is None
    sid2 = team.open_session(ws, _signed_in(ws, new))
    assert team.resume(ws, sid2).role == "adjudicator"
    team.add_person(ws, "bob", "viewer")  # another person's change leaves ana's session alone
    assert team.resume(ws, sid2).name == "ana"


def test_an_expired_session_does_not_resume(people_ws, monkeypatch):
    ws, ana = people_ws
    sid = team.open_session(ws, _signed_in(ws, ana))
    later = sessions._now() + dt.timedelta(days=sessions.SESSION_DAYS, seconds=1)
    monkeypatch.setattr(sessions, "_now", lambda: later)
    assert team.resume(ws, sid) is None


def test_sessions_that_cannot_resume_are_not_kept(people_ws, monkeypatch):
    ws, ana = people_ws
    person = _signed_in(ws, ana)
    ended, expiring, live = (team.open_session(ws, person) for _ in range(3))
    team.end_session(ws, ended)
    with store.write(ws) as con:  # one session older than the others, past its expiry by tomorrow
        con.execute("UPDATE sign_in_sessions SET expires_at = expires_at - INTERVAL 14 DAY + INTERVAL 1 DAY "
                    "WHERE id_hash = ?", [sessions._hash(expiring)])
    tomorrow = sessions._now() + dt.timedelta(days=1, seconds=1)
    monkeypatch.setattr(sessions, "_now", lambda: tomorrow)
    newest = team.open_session(ws, person)
    with store.connect(ws) as con:
        assert con.execute("SELECT count(*) FROM sign_in_sessions").fetchone()[0] == 2
    assert team.resume(ws, live).name == "ana" and team.resume(ws, newest).name == "ana"
    assert team.resume(ws, expiring) is None and team.resume(ws, ended) is None


@pytest.mark.parametrize("session_id", [None, "", "short", "x" * 201, 42, ["a" * 40], "a" * 43, "'; DROP TABLE people; --" * 3])
def test_anything_but_a_live_session_id_is_nobody(people_ws, session_id):
    ws, ana = people_ws
    team.open_session(ws, _signed_in(ws, ana))
    assert team.resume(ws, session_id) is None
    team.end_session(ws, session_id if isinstance(session_id, str) else None)  # ending nothing is no error
    with store.connect(ws) as con:
        assert con.execute("SELECT count(*) FROM people").fetchone()[0] == 2


def test_only_a_token_sign_in_opens_a_session(people_ws):
    ws, _ = people_ws
    assert team.open_session(ws, Person("ada", "admin", via="header")) is None
    assert team.open_session(ws, Person("ana", "annotator", via="single-user")) is None
    assert team.open_session(ws, Person("nobody", "admin", via="token")) is None  # not a person here


def test_a_resumed_person_is_checked_by_every_write_as_a_token_one_is(people_ws):
    ws, ana = people_ws
    sid = team.open_session(ws, _signed_in(ws, ana))
    person = team.resume(ws, sid)
    with store.write(ws) as con:
        assert acting(con, person, "review") == ("ana", "annotator")
        with pytest.raises(NotAllowed):
            acting(con, person, "run")
    team.revoke_person(ws, "ana")
    with store.write(ws) as con, pytest.raises(NotAllowed):
        acting(con, person, "review")  # a session object held by a page acts no more
