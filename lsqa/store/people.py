"""The people of a workspace: their rows in ``people``, read and written here only.

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
    """Name, role, when added and revoked, when their link expires and when it was used: never the
    salt or the hash."""
    return fetch_dicts(con, "SELECT name, role, created_at, revoked_at, link_expires_at, link_used_at FROM people "
                            "ORDER BY created_at, name")


def put_person(con, *, name: str, role: str, token_salt: str, token_hash: str, link_expires_at) -> None:
    """Add ``name``, or give a revoked person a new role and token (their old token stays dead)."""
    if person(con, name) is None:
        con.execute("INSERT INTO people (name, role, token_salt, token_hash, link_expires_at) VALUES (?, ?, ?, ?, ?)",
                    [name, role, token_salt, token_hash, link_expires_at])
    else:
        con.execute("UPDATE people SET role = ?, token_salt = ?, token_hash = ?, created_at = now()::TIMESTAMP, "
                    "revoked_at = NULL, link_expires_at = ?, link_used_at = NULL WHERE name = ?",
                    [role, token_salt, token_hash, link_expires_at, name])


def put_link(con, *, name: str, token_salt: str, token_hash: str, link_expires_at) -> bool:
    """A new sign-in link for the active person ``name`` (migration 0027): the previous one, used or
    not, stops working; their browser sessions go on. False when there is no active person of that name."""
    row = con.execute("UPDATE people SET token_salt = ?, token_hash = ?, link_expires_at = ?, link_used_at = NULL "
                      "WHERE name = ? AND revoked_at IS NULL RETURNING name",
                      [token_salt, token_hash, link_expires_at, name]).fetchone()
    return row is not None


def use_link(con, name: str, token_hash: str, now) -> bool:
    """Mark ``name``'s link (whose hash is ``token_hash``) used, once: False when it was used already,
    has expired, was replaced or the person revoked (the caller's transaction sees one answer)."""
    row = con.execute("UPDATE people SET link_used_at = ? WHERE name = ? AND token_hash = ? AND revoked_at IS NULL "
                      "AND link_used_at IS NULL AND link_expires_at > ? RETURNING name",
                      [now, name, token_hash, now]).fetchone()
    return row is not None


def revoke_person(con, name: str) -> bool:
    """Revoke ``name``'s token; False when there was nobody active of that name."""
    row = con.execute("UPDATE people SET revoked_at = current_timestamp WHERE name = ? AND revoked_at IS NULL "
                      "RETURNING name", [name]).fetchone()
    return row is not None


# ------------------------------------------------------------------------- browser sessions (0022)


def open_session(con, *, id_hash: str, name: str, now, expires_at) -> bool:
    """A browser session of the active person ``name``; False when there is none of that name. The
    sessions that can never resume again (ended or expired) go, so the table holds live ones only."""
    row = con.execute("SELECT created_at FROM people WHERE name = ? AND revoked_at IS NULL", [name]).fetchone()
    if row is None:
        return False
    con.execute("DELETE FROM sign_in_sessions WHERE ended_at IS NOT NULL OR expires_at <= ?", [now])
    con.execute("INSERT INTO sign_in_sessions (id_hash, name, person_since, created_at, expires_at) "
                "VALUES (?, ?, ?, ?, ?)", [id_hash, name, row[0], now, expires_at])
    return True


def session_person(con, id_hash: str) -> tuple[str, str, object] | None:
    """``(name, role, expires_at)`` of a session not ended whose person is active with the token the
    session was opened with (``person_since``); None otherwise. Expiry is the caller's to compare."""
    return con.execute("""SELECT p.name, p.role, s.expires_at FROM sign_in_sessions s JOIN people p USING (name)
                          WHERE s.id_hash = ? AND s.ended_at IS NULL AND p.revoked_at IS NULL
                            AND p.created_at = s.person_since""", [id_hash]).fetchone()


def end_session(con, id_hash: str, now) -> None:
    con.execute("UPDATE sign_in_sessions SET ended_at = ? WHERE id_hash = ? AND ended_at IS NULL", [now, id_hash])
