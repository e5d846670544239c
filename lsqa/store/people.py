"""The people of a workspace (issue 34): their rows in ``people``, read and written here only.

Who may do what is decided by ``lsqa.team.roles``; tokens are made and checked by ``lsqa.team.people``.
This module keeps rows: a token only ever arrives here as its salt and salted hash.
"""

from __future__ import annotations

from lsqa.store.bulk import fetch_dicts


def has_people(con) -> bool:
    """True once anybody was ever added: from then on every action needs a signed-in person
    (revoked people count, so revoking the last person does not reopen the workspace)."""
    return con.execute("SELECT count(*) FROM people").fetchone()[0] > 0


def person(con, name: str) -> dict | None:
    rows = fetch_dicts(con, "SELECT * FROM people WHERE name = ?", [name])
    return rows[0] if rows else None


def active_people(con) -> list[dict]:
    """Every person not revoked, with their salt and hash (for checking a token), oldest first."""
    return fetch_dicts(con, "SELECT * FROM people WHERE revoked_at IS NULL ORDER BY created_at, name")


def list_people(con) -> list[dict]:
    """Name, role, when added and when revoked: never the salt or the hash."""
    return fetch_dicts(con, "SELECT name, role, created_at, revoked_at FROM people ORDER BY created_at, name")


def put_person(con, *, name: str, role: str, token_salt: str, token_hash: str) -> None:
    """Add ``name``, or give a revoked person a new role and token (their old token stays dead)."""
    if person(con, name) is None:
        con.execute("INSERT INTO people (name, role, token_salt, token_hash) VALUES (?, ?, ?, ?)",
                    [name, role, token_salt, token_hash])
    else:
        con.execute("UPDATE people SET role = ?, token_salt = ?, token_hash = ?, created_at = now()::TIMESTAMP, "
                    "revoked_at = NULL WHERE name = ?", [role, token_salt, token_hash, name])


def revoke_person(con, name: str) -> bool:
    """Revoke ``name``'s token; False when there was nobody active of that name."""
    row = con.execute("UPDATE people SET revoked_at = current_timestamp WHERE name = ? AND revoked_at IS NULL "
                      "RETURNING name", [name]).fetchone()
    return row is not None
