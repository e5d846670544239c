"""Who is at the dashboard: a signed-in person, the one person of a workspace without
people, or nobody yet — decided once per page run from the session's token, the browser's session
cookie (``lsqa.team.sessions``), a trusted proxy's header (only when the settings name it) and the
typed name of a one-person workspace.

app.py keeps the token in the session (it leaves the address bar at once), sets the cookie when a
token signs somebody in, and passes what it has here; the pages pass the resulting Person to every
write, and the library checks it again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from lsqa import team
from lsqa.team import Person


@dataclass(frozen=True)
class Presence:
    person: Person | None     # who acts; None: nobody signed in yet (a workspace with people)
    team: bool                # the workspace has people: only signed-in people act
    problem: str = ""         # why a link or header did not sign anybody in ('' when none was tried)

    @property
    def needs_sign_in(self) -> bool:
        return self.team and self.person is None

    @property
    def name(self) -> str:
        return self.person.name if self.person else ""

    def may(self, permission: str) -> bool:
        """Whether the page should offer this action (the write function decides)."""
        return team.allowed(self.person, permission)


def who_is_here(workspace: Path, *, token: str | None, headers: Mapping[str, str] | None, typed_name: str,
                server_address: str | None, identity_header: str = "", session_id: str | None = None) -> Presence:
    """The Presence for this page run. A missing workspace is a one-person one (the page says what
    is wrong with it). ``session_id``: the browser's session cookie, tried after the token."""
    if not Path(workspace).exists() or not team.has_people(workspace):
        # Always somebody (maybe nameless): the loopback check decides what they may do; a review
        # still needs the typed name that signs it.
        return Presence(team.single_user(typed_name or "", server_address=server_address), team=False)
    if token:
        person = team.sign_in(workspace, token)
        if person is not None:
            return Presence(person, team=True)
        return Presence(None, team=True, problem="This sign-in link does not work here: it was revoked, mistyped "
                                                 "or made for another workspace. Ask an admin for a new one.")
    if session_id:
        person = team.resume(workspace, session_id)
        if person is not None:
            return Presence(person, team=True)
    if identity_header and headers:
        value = headers.get(identity_header)
        if value:
            person = team.sign_in_by_name(workspace, value)
            if person is not None:
                return Presence(person, team=True)
            return Presence(None, team=True, problem=f"Your proxy names you {value!r}, who is not a person of this "
                                                     f"workspace. Ask an admin to add you.")
    return Presence(None, team=True)


def signed_in_caption(presence: Presence) -> str:
    """The sidebar's line saying who acts, and how."""
    p = presence.person
    if p is None or not p.name:
        return ""
    how = {"token": "signed in with your link", "session": "signed in with your link in this browser",
           "header": "signed in by your organisation's proxy", "single-user": "one-person workspace"}[p.via]
    return f"**{p.name}** · {p.role} · {how}"


def cookie_name(workspace: Path) -> str:
    """The session cookie of one workspace: a browser may be signed in to several dashboards of one host."""
    return "lsqa_session_" + hashlib.sha256(str(Path(workspace).resolve()).encode()).hexdigest()[:12]


def cookie_script(name: str, session_id: str | None, max_age_s: int) -> str:
    """The ``<script>`` that keeps ``session_id`` in this browser (None: forgets it). Not HttpOnly (a
    page script sets it: Streamlit sets no cookies of its own); SameSite=Strict keeps other sites'
    requests from carrying it, Secure when the page came over HTTPS."""
    value = json.dumps(f"{name}={session_id or ''}; Path=/; Max-Age={max_age_s if session_id else 0}; SameSite=Strict")
    return f"<script>document.cookie = {value} + (location.protocol === 'https:' ? '; Secure' : '');</script>"


def read_only_note(presence: Presence, server_address: str | None) -> str:
    """What the sidebar says when a one-person workspace is served beyond this machine ('' otherwise)."""
    if presence.team or team.is_loopback(server_address):
        return ""
    return ("Read only: this dashboard listens beyond this machine and its workspace has no people, so nobody "
            "may review, flag or start runs here. Add people (`lsqa users add NAME --role annotator`) and "
            "open the link it prints, or serve it on 127.0.0.1.")


def presence_of(session: Mapping, workspace: Path, server_address: str | None) -> Presence:
    """The Presence app.py found for this run; a page run on its own (a test opening one page file)
    works it out the same way, without a proxy header."""
    found = session.get("lsqa_presence")
    if isinstance(found, Presence):
        return found
    return who_is_here(workspace, token=session.get("lsqa_token"), headers=None,
                       typed_name=session.get("annotator", ""), server_address=server_address)


def cannot_act_note(presence: Presence, permission: str, what: str) -> str:
    """Why this page's ``what`` (e.g. "review and flag") is not offered to whoever is here ('' when it is)."""
    if presence.may(permission) and (presence.name or permission != "review"):
        return ""
    if presence.person is None or not presence.name and presence.may(permission):
        return (f"Enter your name under **Annotator** in the sidebar to {what} (it is saved with every action). "
                "Until then the decision keys and buttons do nothing.")
    if presence.person.via == "single-user":
        return f"This dashboard is read only here, so nobody may {what} (see the sidebar)."

    return (f"You are signed in as {presence.person.name} ({presence.person.role}): your role may not {what}. "
            f"An admin can give you another role.")
