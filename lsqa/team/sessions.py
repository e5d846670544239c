"""Browser sessions: a person who signed in with their link stays signed in in that browser.

Signing in with a token (``lsqa.team.people.sign_in``) opens a session: a random id the dashboard
keeps in a cookie of that browser, while the workspace keeps only its SHA-256 (migration 0022). A
reload, a new tab or a bookmark of any page then finds the person again (``resume``) until the
session ends: signed out (``end_session``), ``SESSION_DAYS`` after it was opened, the person revoked,
or given a new token (``lsqa users add`` again). The role is read from the workspace each time, and
every write still checks the person in its own transaction (``lsqa.team.roles.acting``).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import secrets
from pathlib import Path

from lsqa import store
from lsqa.errors import WorkspaceError
from lsqa.store import people as people_store
from lsqa.store.lineage import Change
from lsqa.store.workspace_cache import kept_while_unchanged
from lsqa.team.roles import Person

# How long a browser stays signed in after the link was opened there: a working fortnight, so an
# annotator opens their link about twice a month, not on every reload.
SESSION_DAYS = 14


def _now() -> dt.datetime:
    """UTC, naive: how the session times are stored."""
    return dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)


def _hash(session_id: str) -> str:
    # The id is 32 random bytes: a plain hash is enough (nothing to guess, no salt needed).
    return hashlib.sha256(session_id.encode()).hexdigest()


def open_session(workspace: Path, person: Person) -> str | None:
    """A new session of ``person`` signed in with their token, as the id for the browser's cookie;
    None for anybody else (a trusted proxy's header signs people in on every request anyway; a
    one-person workspace has nobody to sign in) and when the workspace cannot be written."""
    if person.via != "token":
        return None
    session_id = secrets.token_urlsafe(32)
    now = _now()
    try:
        with store.write(workspace) as con:
            opened = people_store.open_session(con, id_hash=_hash(session_id), name=person.name, now=now,
                                               expires_at=now + dt.timedelta(days=SESSION_DAYS))
    except WorkspaceError:  # a workspace this process may only read: signed in in this tab only
        return None
    return session_id if opened else None


def resume(workspace: Path, session_id: str | None) -> Person | None:
    """The person of a live session, with the role the workspace gives them now, or None (no such
    session, ended, expired, the person revoked or given a new token, or not a session id at all)."""
    if not isinstance(session_id, str) or not 20 <= len(session_id) <= 200:
        return None
    row = _session_row(workspace, _hash(session_id))
    if row is None or row[2] <= _now():
        return None
    return Person(row[0], row[1], via="session")


def end_session(workspace: Path, session_id: str | None) -> None:
    """Sign the browser holding ``session_id`` out: the session no longer resumes anywhere."""
    if isinstance(session_id, str) and session_id:
        with store.write(workspace) as con:
            people_store.end_session(con, _hash(session_id), _now())


def _people_and_sessions_untouched(change: Change, arguments: dict) -> bool:
    """Kept across writes that touch neither people nor sessions (a review): every page run asks."""
    return not {"people", "sign_in_sessions"} & set(change.tables)


@kept_while_unchanged(survives=_people_and_sessions_untouched)
def _session_row(workspace: Path, id_hash: str) -> tuple | None:
    with store.connect(workspace) as con:
        return people_store.session_person(con, id_hash)


__all__ = ["SESSION_DAYS", "end_session", "open_session", "resume"]
