-- A person signed in with their link stays signed in in that browser across reloads and new tabs
-- (lsqa.team.sessions): a cookie holds a random session id, the workspace only its SHA-256.
-- person_since: the person's people.created_at when the session was opened; `lsqa users add` again
-- (a new token) changes it, so the sessions of the old token end with it, as revoking ends them.
CREATE TABLE sign_in_sessions (
    id_hash      VARCHAR PRIMARY KEY,
    name         VARCHAR NOT NULL,
    person_since TIMESTAMP NOT NULL,
    created_at   TIMESTAMP NOT NULL,
    expires_at   TIMESTAMP NOT NULL,
    ended_at     TIMESTAMP
);
