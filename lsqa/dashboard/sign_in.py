"""Who is at the dashboard: a signed-in person, the one person of a workspace without people, or
nobody yet — decided once per page run from the browser's session cookie (``lsqa.team.sessions``), a
trusted proxy's header (only when the settings name it) and the typed name of a one-person workspace.

A personal link never reaches a page script: the sign-in front (``lsqa.dashboard.sign_in_front``,
served by ``dashboard.py``) exchanges its token once and sets the session cookie, ``HttpOnly``, on
its HTTP response; app.py reads the cookie and, when a link did not sign anybody in, the code the
front left in the address (``?sign_in=used``), and passes them here. The pages pass the resulting
Person to every write, and the library checks it again.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from lsqa import team
from lsqa.config.settings import load_settings  # noqa: F401 (app.py's: who may sign in, and how long a link lasts)
from lsqa.team import Person, new_link  # noqa: F401 (app.py's sidebar: a new sign-in link)


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


# The sign-in front's page for pasting a token (lsqa.dashboard.sign_in_front.SIGN_IN_PATH), and where
# the sidebar's Sign out posts (the front ends the session and clears its HttpOnly cookie).
PASTE_PATH = "/sign-in"
SIGN_OUT_PATH = "/sign-out"
# The sidebar's Sign out: a plain HTML form, as a script cannot clear an HttpOnly cookie (the front's
# answer to the POST does). Drawn by st.html, in the page itself, not in a frame.
SIGN_OUT_FORM = (f'<form method="post" action="{SIGN_OUT_PATH}" style="margin:0">'
                 '<button type="submit" style="font:inherit;padding:0.25rem 0.75rem;border-radius:0.5rem;'
                 'border:1px solid rgba(49,51,63,0.2);background:transparent;color:inherit;cursor:pointer">Sign out</button>'
                 '</form>')
_NEW_LINK = ("Ask an admin for a new link (`lsqa users link NAME`), or make one under *A new sign-in link* in "
             "the sidebar of a browser where you are signed in.")
# What the sign-in page says for each code the front leaves in the address (``?sign_in=…``). Only
# these words are ever shown: the code comes from a URL anybody can write.
LINK_PROBLEMS = {
    "used": "This sign-in link was used already: a link signs in once, in the browser that opened it first. "
            + _NEW_LINK,
    "expired": "This sign-in link expired without being used. " + _NEW_LINK,
    "unknown": "This sign-in link does not work here: it was revoked, replaced by a newer one, mistyped or made "
               "for another workspace. " + _NEW_LINK,
    "read-only": "This dashboard may only read its workspace, so a sign-in link cannot be used up here and signs "
                 "nobody in. Serve it from a workspace it can write.",
    "no-front": "This dashboard was started without its sign-in front (`streamlit run app.py`), so a sign-in link "
                "cannot sign in here. Start it with `make run` (`streamlit run dashboard.py`); the link was not "
                "used and still works there.",
}


def who_is_here(workspace: Path, *, headers: Mapping[str, str] | None, typed_name: str,
                server_address: str | None, identity_header: str = "", session_id: str | None = None,
                link_problem: str = "") -> Presence:
    """The Presence for this page run. A missing workspace is a one-person one (the page says what
    is wrong with it). ``session_id``: the browser's session cookie; ``link_problem``: the front's
    code for a link that signed nobody in (a key of ``LINK_PROBLEMS``; another code says nothing)."""
    if not Path(workspace).exists() or not team.has_people(workspace):
        # Always somebody (maybe nameless): the loopback check decides what they may do; a review
        # still needs the typed name that signs it.
        return Presence(team.single_user(typed_name or "", server_address=server_address), team=False)
    problem = LINK_PROBLEMS.get(link_problem, "")
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
    return Presence(None, team=True, problem=problem)


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
    return who_is_here(workspace, session_id=session.get("lsqa_session"), headers=None,
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
