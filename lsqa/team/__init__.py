"""The people of a workspace: who they are (sign-in tokens, browser sessions), what each role may do, and who acts."""

from __future__ import annotations

from lsqa.team.people import (
    LINK_DAYS,
    add_person,
    has_people,
    link_refusal,
    list_people,
    named,
    new_link,
    revoke_person,
    sign_in,
    sign_in_by_name,
)
from lsqa.team.roles import (
    PERMISSIONS,
    ROLES,
    Person,
    acting,
    allowed,
    is_loopback,
    may,
    require,
    single_user,
    team_workspace,
)
from lsqa.team.sessions import SESSION_DAYS, end_session, open_session, resume

__all__ = [
    "add_person", "has_people", "LINK_DAYS", "link_refusal", "list_people", "named", "new_link", "revoke_person",
    "sign_in", "sign_in_by_name",
    "SESSION_DAYS", "end_session", "open_session", "resume",
    "acting", "allowed", "is_loopback", "may", "Person", "PERMISSIONS", "require", "ROLES", "single_user",
    "team_workspace",
]
