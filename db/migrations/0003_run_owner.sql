-- Which process runs a stage (host name and process id), so that a run whose process died
-- without closing it (kill -9, a crash, a power cut) can be told apart from one still going:
-- lsqa.store.runs marks it 'interrupted' instead of leaving it 'running' forever.
ALTER TABLE runs ADD COLUMN host VARCHAR NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN pid INTEGER;
