"""What each role may do, and the one check every write function makes before it writes.

A workspace without people is the one-person tool it always was: a name (a plain string) acts with
every permission, as on the command line. Once a person was added (``lsqa users add``), a plain
string acts no more: only a :class:`Person` who signed in (``lsqa.team.people.sign_in``) acts, and
the check reads their role from the workspace *inside the write's transaction*, so a revoked token
or a changed role holds from the next action on, whatever the person's page still shows.

Roles are ordered; each may do what the one before may:

    viewer       reads every page and exports
    annotator    also reviews, flags, notes, skips, comments and undoes their own actions
    adjudicator  also sets the final label where people disagree
    admin        also starts runs, manages people, assignments, guidelines and workspace settings, and
                 sees every person's progress, pace and agreement (``lsqa.audit.team_figures``)
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from lsqa.errors import NotAllowed
from lsqa.store import people as people_store

ROLES = ("viewer", "annotator", "adjudicator", "admin")

# The least role each permission needs: the one table that says who may do what.
PERMISSIONS = {
    "read": "viewer",
    "review": "annotator",        # confirm, override, flag a reference, skip, comment, undo my own
    "adjudicate": "adjudicator",
    "run": "admin",               # spends the server's API keys
    "people": "admin",
    "assign": "admin",
    "guidelines": "admin",
    "settings": "admin",          # e.g. the share of verdicts every annotator reviews
    "oversee": "admin",           # every person's pace and agreement with the final labels
}

# How a Person came to act. "single-user": a workspace without people, on the dashboard;
# "command-line": a command that names who runs it (``lsqa assign --as NAME``, ``lsqa.team.people.named``).
VIA = ("token", "session", "header", "single-user", "command-line")


@dataclass(frozen=True)
class Person:
    """Somebody acting on the dashboard. Only ``lsqa.team.people`` (a token, a trusted header or a name given on the command line),
    ``lsqa.team.sessions`` (a browser signed in with a token before) and :func:`single_user` make one; the role here is what the page shows, the workspace's is what counts."""

    name: str
    role: str
    via: str = "token"

    def __post_init__(self):
        if self.role not in ROLES:
            raise ValueError(f"role must be one of {ROLES}, not {self.role!r}")
        if self.via not in VIA:
            raise ValueError(f"via must be one of {VIA}, not {self.via!r}")


def may(role: str, permission: str) -> bool:
    """Whether ``role`` has ``permission`` (``PERMISSIONS``)."""
    return ROLES.index(role) >= ROLES.index(PERMISSIONS[permission])


def allowed(person: Person | None, permission: str) -> bool:
    """What a page may offer ``person`` (a hint for showing buttons; the write function still checks)."""
    return person is not None and may(person.role, permission)


def is_loopback(address: str | None) -> bool:
    """Whether a server address is reachable from this machine only. Streamlit's default (no address)
    listens on every interface, so it is not."""
    if not address:
        return False
    if address == "localhost":
        return True
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


def single_user(name: str, *, server_address: str | None) -> Person:
    """The person acting on a dashboard whose workspace has no people: everything on the loopback
    address, read only when the server listens beyond it (anyone on the network could act)."""
    return Person(name.strip(), "admin" if is_loopback(server_address) else "viewer", via="single-user")


def team_workspace(con) -> bool:
    """Whether the workspace has people (then only signed-in people act)."""
    return people_store.has_people(con)


def _refused(name: str, role: str, permission: str) -> NotAllowed:
    need = PERMISSIONS[permission]
    return NotAllowed(f"{name} ({role}) may not {_WHAT[permission]}: that needs the {need} role "
                      f"(an admin gives it with `lsqa users add {name} --role {need}`)")


_WHAT = {"read": "read this workspace", "review": "review, flag, skip or comment",
         "adjudicate": "adjudicate disagreements", "run": "start runs", "people": "manage people",
         "assign": "assign items", "guidelines": "edit the guidelines", "settings": "change workspace settings",
         "oversee": "see every person's progress, pace and agreement"}


def acting(con, who: Person | str, permission: str) -> tuple[str, str]:
    """``(name, role)`` of who acts, checked inside the writing transaction ``con``; NotAllowed
    (nothing written) when they may not. Every library function that writes a person's action calls it.

    ``who`` a plain string: a name acting with every permission, allowed only while the workspace
    has no people (scripts, tests and the command line's one-person workspaces). A Person: in a
    workspace with people, one who exists, is not revoked and whose *stored* role allows it."""
    if permission not in PERMISSIONS:
        raise ValueError(f"unknown permission {permission!r}; one of {sorted(PERMISSIONS)}")
    if isinstance(who, str) or (isinstance(who, Person) and who.via == "single-user"):
        name = who if isinstance(who, str) else who.name
        if people_store.has_people(con):
            raise NotAllowed(f"{name or 'somebody'} is not signed in, and this workspace has people: "
                             f"open your personal sign-in link (an admin makes one with `lsqa users add`)")
        role = "admin" if isinstance(who, str) else who.role
        if not may(role, permission):
            raise NotAllowed(f"this dashboard listens beyond this machine and its workspace has no people, so "
                             f"nobody may {_WHAT[permission]} from it: add people (`lsqa users add NAME --role "
                             f"annotator`) and sign in with the link, or serve it on 127.0.0.1")
        return name, ""
    if not isinstance(who, Person):
        raise NotAllowed(f"{type(who).__name__} is not a person; sign in to act")
    row = people_store.person(con, who.name)
    if row is None or row["revoked_at"] is not None:
        raise NotAllowed(f"{who.name}'s sign-in link was revoked or never existed here: ask an admin for a new one")
    if not may(row["role"], permission):
        raise _refused(who.name, row["role"], permission)
    return row["name"], row["role"]


def require(con, who: Person | str, permission: str) -> None:
    """:func:`acting` when only the check matters (the action is not signed with the name)."""
    acting(con, who, permission)
