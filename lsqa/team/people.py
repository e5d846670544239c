"""People and their sign-in links: add, list, revoke, a new link, and sign in by a link's token
or by a trusted proxy's identity header.

A link's token is 32 random bytes (URL-safe text) shown once, when the person is added or given a new
link (``new_link``: ``lsqa users link NAME``, or the person from their own signed-in session); the
workspace keeps a per-person salt and the SHA-256 of salt + token. A plain salted hash is enough: the
token is random, not a password a person chose, so there is nothing to guess from a dictionary.

A link is a one-time login token, as OWASP's session management guidance and Jupyter's
token-then-cookie login have it: ``sign_in`` exchanges it once (for a browser session,
``lsqa.team.sessions``) and it never signs anybody in again, so a copy left in browser history, a
proxy's log or a shared screen is worth nothing; unused, it expires ``LINK_DAYS`` after it was made
(``link_days`` in ``lsqa.toml`` changes that for the links made from then on).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import secrets
from pathlib import Path

from lsqa import store
from lsqa.errors import NotAllowed
from lsqa.store import people as people_store
from lsqa.store.lineage import Change
from lsqa.store.workspace_cache import kept_while_unchanged
from lsqa.team.roles import ROLES, Person, acting
from lsqa.text.names import lookalike_warnings, name_problem, shown_name

MAX_PERSON_CHARS = 100
# How long an unused sign-in link works: a week, time enough to read the message it came in.
LINK_DAYS = 7
MAX_LINK_DAYS = 90


def _now() -> dt.datetime:
    """UTC, naive: how link and session times are stored."""
    return dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)


def _link_expiry(days: float) -> dt.datetime:
    if isinstance(days, bool) or not isinstance(days, (int, float)) or not 0 < days <= MAX_LINK_DAYS:
        raise NotAllowed(f"link lifetime {days!r} days is not a number of days from more than 0 to {MAX_LINK_DAYS}: "
                         f"give e.g. link_days = {LINK_DAYS} in lsqa.toml")
    return _now() + dt.timedelta(days=days)


def _hash(salt: str, token: str) -> str:
    return hashlib.sha256(f"{salt}:{token}".encode()).hexdigest()


def add_person(workspace: Path, name: str, role: str, *, by: Person | str = "", link_days: float = LINK_DAYS) -> dict:
    """Add ``name`` with ``role`` (or give a revoked person a new token): ``{"name", "role", "token",
    "expires_at"}``. The token is returned once and never stored; it signs in once, until
    ``expires_at`` (``link_days`` from now). An active person of that name is refused (revoke
    first: a second token would silently keep the first one working). ``warnings``: lines naming a
    person whose name looks like this one (``lsqa.text.names.lookalike_warnings``).

    ``by``: who adds; in a workspace with people only an admin may (the shell's own ``lsqa users add``
    passes nobody: whoever can run it can open the workspace file anyway)."""
    problem = name_problem(name, max_chars=MAX_PERSON_CHARS)
    if problem:
        raise NotAllowed(f"person {shown_name(name)} {problem}: give a name of visible text, 1 to "
                         f"{MAX_PERSON_CHARS} characters")
    if role not in ROLES:
        raise NotAllowed(f"role {role!r} is not one of {', '.join(ROLES)}")
    name, token, salt = name.strip(), secrets.token_urlsafe(32), secrets.token_hex(16)
    expires_at = _link_expiry(link_days)
    with store.write(workspace) as con:
        if by:
            acting(con, by, "people")
        existing = people_store.person(con, name)
        if existing is not None and existing["revoked_at"] is None:
            raise NotAllowed(f"{name} is already a person here ({existing['role']}): `lsqa users revoke {name}` "
                             f"first to give them a new link or role")
        others = [p["name"] for p in people_store.list_people(con) if p["name"] != name]
        people_store.put_person(con, name=name, role=role, token_salt=salt, token_hash=_hash(salt, token),
                                link_expires_at=expires_at)
    # A name that only looks like another person's (Cyrillic о beside Latin o): added, with a warning.
    return {"name": name, "role": role, "token": token, "expires_at": expires_at,
            "warnings": lookalike_warnings([name], others, what="person")}


def new_link(workspace: Path, name: str, *, by: Person | str = "", link_days: float = LINK_DAYS) -> dict:
    """A new sign-in link for the active person ``name``: ``{"name", "role", "token", "expires_at"}``,
    the token returned once. Their previous link stops working (used or not); their browser sessions
    go on. ``by``: an admin, or the person themself from a signed-in session (the shell's
    ``lsqa users link`` passes nobody, as ``add_person``). NotAllowed for anybody else, or when
    ``name`` is not an active person."""
    token, salt = secrets.token_urlsafe(32), secrets.token_hex(16)
    expires_at = _link_expiry(link_days)
    with store.write(workspace) as con:
        if by and not (isinstance(by, Person) and by.via in ("token", "session") and by.name == name):
            acting(con, by, "people")
        elif by:
            acting(con, by, "read")  # themself: still an active person of the workspace
        if not people_store.put_link(con, name=name, token_salt=salt, token_hash=_hash(salt, token),
                                     link_expires_at=expires_at):
            raise NotAllowed(f"no active person named {shown_name(name)} here; `lsqa users list` shows who there is "
                             f"(`lsqa users add` gives a revoked person a new link)")
        role = people_store.person(con, name)["role"]
    return {"name": name, "role": role, "token": token, "expires_at": expires_at}


def revoke_person(workspace: Path, name: str, *, by: Person | str = "") -> None:
    """Revoke ``name``'s link at once (their pages stop acting on the next action). NotAllowed when
    there is no such active person."""
    with store.write(workspace) as con:
        if by:
            acting(con, by, "people")
        if not people_store.revoke_person(con, name):
            raise NotAllowed(f"no active person named {shown_name(name)} here; `lsqa users list` shows who there is")


def list_people(workspace: Path) -> list[dict]:
    """Name, role, added, revoked (never a token or its hash)."""
    with store.connect(workspace) as con:
        return people_store.list_people(con)


def _people_untouched(change: Change, arguments: dict) -> bool:
    """Kept across writes that leave ``people`` alone (a review does): signing in is asked on every
    page a person opens and every key they press."""
    return "people" not in change.tables


@kept_while_unchanged(survives=_people_untouched)
def has_people(workspace: Path) -> bool:
    with store.connect(workspace) as con:
        return people_store.has_people(con)


def sign_in(workspace: Path, token: str) -> Person | None:
    """Exchange a link's token, once, for the person it was made for (``via="token"``; the caller opens
    their browser session, ``lsqa.team.sessions.open_session``). None for a token that was used
    already, has expired, was replaced by a newer link, whose person was revoked, or that is not a
    token here at all (``link_refusal`` says which). The exchange is written: on a workspace this
    process may only read, WorkspaceError."""
    row = _link_row(workspace, token)
    if row is None:
        return None
    with store.write(workspace) as con:
        if not people_store.use_link(con, row["name"], row["token_hash"], _now()):
            return None
    return Person(row["name"], row["role"], via="token")


def link_refusal(workspace: Path, token: str) -> str:
    """Why ``token`` signs nobody in: ``"used"`` (a link signs in once), ``"expired"`` (unused past its
    expiry), ``"unknown"`` (revoked, replaced by a newer link, mistyped, another workspace's), or ''
    when it would sign somebody in. A code, not a sentence: it travels in a URL (``?sign_in=used``),
    where only words the dashboard chose may be shown."""
    row = _link_row(workspace, token)
    if row is None:
        return "unknown"
    if row["link_used_at"] is not None:
        return "used"
    if row["link_expires_at"] is None or row["link_expires_at"] <= _now():
        return "expired"
    return ""


def _link_row(workspace: Path, token: str) -> dict | None:
    """The active person whose current link ``token`` is (used or not), or None."""
    if not isinstance(token, str) or not 20 <= len(token) <= 200:
        return None
    with store.connect(workspace) as con:
        for row in people_store.active_people(con):
            if hmac.compare_digest(row["token_hash"], _hash(row["token_salt"], token)):
                return row
    return None


def named(workspace: Path, name: str | None) -> Person | str:
    """Who acts when a command names them (``lsqa assign --as NAME``). In a workspace with people: that
    active person, whose *stored* role the write then checks (``acting``), as on the dashboard;
    NotAllowed when no name is given or nobody active has it. In a workspace without people: the name
    itself (default: the login name of whoever runs the command), acting with every permission."""
    given = name.strip() if isinstance(name, str) else ""
    with store.connect(workspace) as con:
        if not people_store.has_people(con):
            return given or _login_name()
        row = people_store.person(con, given) if given else None
    if not given:
        raise NotAllowed("this workspace has people: say who acts with --as NAME (a person of the workspace "
                         "whose role allows it; `lsqa users list` shows who there is)")
    if row is None or row["revoked_at"] is not None:
        raise NotAllowed(f"no active person named {shown_name(given)} here: give --as the name of a person "
                         f"`lsqa users list` shows")
    return Person(row["name"], row["role"], via="command-line")


def _login_name() -> str:
    import getpass

    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no login name in this environment (a container without a passwd entry)
        return "(command line)"


@kept_while_unchanged(survives=_people_untouched)
def sign_in_by_name(workspace: Path, name: str) -> Person | None:
    """The active person named by a trusted proxy's identity header (only when the settings name that
    header), or None: a header never creates a person."""
    if not isinstance(name, str) or not name.strip():
        return None
    with store.connect(workspace) as con:
        row = people_store.person(con, name.strip())
    if row is None or row["revoked_at"] is not None:
        return None
    return Person(row["name"], row["role"], via="header")
