-- A personal sign-in link is exchanged once for a browser session and expires unused
-- (lsqa.team.people.sign_in): link_expires_at, after which an unused link signs nobody in, and
-- link_used_at, set by the one exchange. `lsqa users link NAME` (or the person's own signed-in
-- session) gives a new link: new token_salt/token_hash, a new expiry, link_used_at cleared.
-- Links handed out before this migration may sit in browser history and may have been opened
-- already: they count as expired (no lifetime left). Browser sessions opened with them live on.
ALTER TABLE people ADD COLUMN link_expires_at TIMESTAMP;
ALTER TABLE people ADD COLUMN link_used_at TIMESTAMP;
UPDATE people SET link_expires_at = created_at;
