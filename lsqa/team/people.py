"""People and their sign-in tokens: add, list, revoke, and sign in by token or by a
trusted proxy's identity header.

A token is 32 random bytes (URL-safe text) shown once, when the person is added; the workspace keeps
a per-person salt and the SHA-256 of salt + token. A plain salted hash is enough here: the token is
random, not a password a person chose, so there is nothing to guess from a dictionary, and a slow
hash would be paid on every page a person opens.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from pathlib import Path

from lsqa import store
from lsqa.errors import NotAllowed
from lsqa.store import people as people_store
from lsqa.store.lineage import Change
from lsqa.store.workspace_cache import kept_while_unchanged
from lsqa.team.roles import acting, Person, ROLES
from lsqa.text.names import lookalike_warnings, name_problem, shown_name

MAX_PERSON_CHARS = 100


def _hash(salt: str, token: str) -> str:
    return hashlib.sha256(f"{salt}:{token}".encode()).hexdigest()


def add_person(workspace: Path, name: str, role: str, *, by: Person | str = "") -> dict:
    """Add ``name`` with ``role`` (or give a revoked person a new token): ``{"name", "role", "token"}``.
    The token is returned once and never stored. An active person of that name is refused (revoke
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
    with store.write(workspace) as con:
        if by:
            acting(con, by, "people")
        existing = people_store.person(con, name)
        if existing is not None and existing["revoked_at"] is None:
            raise NotAllowed(f"{name} is already a person here ({existing['role']}): `lsqa users revoke {name}` "
                             f"first to give them a new link or role")
        others = [p["name"] for p in people_store.list_people(con) if p["name"] != name]
        people_store.put_person(con, name=name, role=role, token_salt=salt, token_hash=_hash(salt, token))
    # A name that only looks like another person's (Cyrillic о beside Latin o): added, with a warning.
    return {"name": name, "role": role, "token": token,
            "warnings": lookalike_warnings([name], others, what="person")}


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


@kept_while_unchanged(survives=_people_untouched)
def sign_in(workspace: Path, token: str) -> Person | None:
    """The active person whose token this is, or None (unknown, revoked, or not a token at all)."""
    if not isinstance(token, str) or not 20 <= len(token) <= 200:
        return None
    with store.connect(workspace) as con:
        for row in people_store.active_people(con):
            if hmac.compare_digest(row["token_hash"], _hash(row["token_salt"], token)):
                return Person(row["name"], row["role"], via="token")
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
