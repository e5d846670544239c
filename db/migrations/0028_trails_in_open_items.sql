-- Each tab's back-key trail moves into that tab's row of open_items, and audit_trails goes: opening an
-- item on the Audit page then writes one table instead of two, and every table a decision writes is one
-- more the workspace's checkpoint rewrites when the dashboard lets go of the file.
-- A row now stands for a tab: the verdict it has open (NULL: nothing, its queue ended), its trail
-- (oldest first, at most 200 ids) and `updated_at`, when the tab last opened an item or closed its
-- queue; a row untouched for 30 days goes, as a trail did. Holds still end at `expires_at`.
ALTER TABLE open_items ALTER COLUMN judgment_id DROP NOT NULL;
ALTER TABLE open_items ADD COLUMN trail VARCHAR[] DEFAULT [];
ALTER TABLE open_items ADD COLUMN updated_at TIMESTAMP;
UPDATE open_items o SET trail = t.ids, updated_at = greatest(o.opened_at, t.updated_at)
FROM audit_trails t WHERE t.annotator = o.annotator AND t.tab = o.tab;
UPDATE open_items SET updated_at = opened_at WHERE updated_at IS NULL;
INSERT INTO open_items (annotator, tab, judgment_id, queue, seen_review, opened_at, expires_at, trail, updated_at)
SELECT t.annotator, t.tab, NULL, '', NULL, t.updated_at, t.updated_at, t.ids, t.updated_at
FROM audit_trails t WHERE NOT EXISTS (SELECT 1 FROM open_items o WHERE o.annotator = t.annotator AND o.tab = t.tab);
DROP TABLE audit_trails;
ALTER TABLE open_items ALTER COLUMN updated_at SET NOT NULL;
ALTER TABLE open_items ALTER COLUMN trail SET NOT NULL;
