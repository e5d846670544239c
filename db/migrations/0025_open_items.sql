-- Items held while open on the Audit page (lsqa.audit.open_items). One row per browser tab (a page
-- session, `tab`: a random id kept in the page's address) of a person: the verdict it has open, the
-- queue it was served from, the person's latest review row of that verdict when it was opened (an
-- undo included; NULL: none) and until when the item is held for them. A decision is written only
-- on the tab's open item, and only while the person's latest review row of it is the one seen when
-- it was opened: a stale screen, a second tab or a held key never adds a second decision. An item
-- served from a shared queue is not served to anybody else (nor to the person's other tabs) before
-- `expires_at`; the page renews it while the tab is open. State, not history: rows are replaced and
-- deleted (they are never a review or a flag).
CREATE TABLE open_items (
    annotator    VARCHAR NOT NULL,
    tab          VARCHAR NOT NULL,
    judgment_id  VARCHAR NOT NULL,
    queue        VARCHAR NOT NULL,          -- priority | random | active | assigned | opened (a link, K, a table)
    seen_review  BIGINT,                    -- max(human_reviews.id) of the person on the verdict when opened
    opened_at    TIMESTAMP NOT NULL,
    expires_at   TIMESTAMP NOT NULL
);
-- Each person's back-key trail (lsqa.audit.trail), per tab: the verdicts opened, oldest first, so that
-- K goes back along them after a reload (the same tab) and in a new tab (the person's latest trail).
-- State, replaced as it grows (at most 200 ids); a tab's trail untouched for 30 days goes.
CREATE TABLE audit_trails (
    annotator    VARCHAR NOT NULL,
    tab          VARCHAR NOT NULL,
    ids          VARCHAR[] NOT NULL,
    updated_at   TIMESTAMP NOT NULL
);
