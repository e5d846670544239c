-- Settings a team keeps in its workspace (annotation guidelines per judge kind, the share of audit
-- items every annotator reviews). Append-only like the reviews: an edit is a new row, the latest
-- row per key is the setting, and the history says who changed what when.
CREATE SEQUENCE workspace_settings_id START 1;
CREATE TABLE workspace_settings (
    id          BIGINT PRIMARY KEY DEFAULT nextval('workspace_settings_id'),
    key         VARCHAR NOT NULL,
    value       VARCHAR NOT NULL,
    author      VARCHAR NOT NULL DEFAULT '',
    created_at  TIMESTAMP NOT NULL DEFAULT current_timestamp
);
