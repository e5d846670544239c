-- Items a person passed over on the Audit page (issue 34): "skip" (with the note as the reason) or
-- "unsure". Recorded, not a label: a table of its own, so that no reader of human_reviews
-- (agreement, corrected estimates, overrides, the queue, undo) ever takes a skip for a review.
CREATE SEQUENCE review_skips_id START 1;
CREATE TABLE review_skips (               -- append-only
    id            BIGINT PRIMARY KEY DEFAULT nextval('review_skips_id'),
    annotator     VARCHAR NOT NULL,
    judgment_id   VARCHAR NOT NULL,
    reason        VARCHAR NOT NULL,         -- skip | unsure
    note          VARCHAR NOT NULL DEFAULT '',
    role          VARCHAR NOT NULL DEFAULT '',  -- the person's role when signed in (migration 0014)
    created_at    TIMESTAMP NOT NULL DEFAULT current_timestamp
);
