-- What each system and judge name stood for when its results were made (model, context,
-- parameters that shape the completion, prompt version, judge settings; JSON). Results are kept
-- per name, so a run config that redefines a name is refused instead of mixing old and new
-- results under it (lsqa.definitions).
ALTER TABLE systems ADD COLUMN definition VARCHAR NOT NULL DEFAULT '';
CREATE TABLE judges (
    name        VARCHAR PRIMARY KEY,
    definition  VARCHAR NOT NULL,           -- JSON
    created_at  TIMESTAMP NOT NULL DEFAULT current_timestamp
);
