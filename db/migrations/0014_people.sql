-- Issue 34 (a team on one dashboard): the people who sign in, and who made each human row.
-- people: one row per person. The sign-in token is never stored, only a salted SHA-256 of it
-- (token_salt, token_hash); a revoked person keeps the row (their past work names them) with revoked_at set.
CREATE TABLE people (
    name        VARCHAR PRIMARY KEY,
    role        VARCHAR NOT NULL,          -- viewer | annotator | adjudicator | admin (lsqa.team.roles)
    token_salt  VARCHAR NOT NULL,
    token_hash  VARCHAR NOT NULL,
    created_at  TIMESTAMP NOT NULL DEFAULT current_timestamp,
    revoked_at  TIMESTAMP
);
-- The role the person held when they wrote the row ('' for rows from before people, a one-person
-- workspace or an import): exports carry identity and role (issue 34).
ALTER TABLE human_reviews ADD COLUMN role VARCHAR NOT NULL DEFAULT '';
ALTER TABLE reference_flags ADD COLUMN role VARCHAR NOT NULL DEFAULT '';
