-- Issue 34 (a team on one dashboard): who is given which verdict to review, and which reviews are gold.
-- assignments: append-only, one row per (verdict, annotator) of a batch (`lsqa assign`, or the Audit
-- page's "Assign items" panel). An assignment is done once its annotator has a live review of the
-- verdict; it never writes, changes or deletes a review. queue: how the batch chose its verdicts
-- ('priority': the audit queue's head; 'random': a simple random sample of the judge's items, each
-- drawn with probability inclusion_prob, which the review then carries for corrected estimates).
CREATE SEQUENCE assignments_id START 1;
CREATE TABLE assignments (
    id              BIGINT PRIMARY KEY DEFAULT nextval('assignments_id'),
    batch           VARCHAR NOT NULL,
    judge           VARCHAR NOT NULL,
    judgment_id     VARCHAR NOT NULL,
    annotator       VARCHAR NOT NULL,
    assigned_by     VARCHAR NOT NULL,
    queue           VARCHAR NOT NULL,      -- priority | random
    inclusion_prob  DOUBLE,                -- random batches: the item's probability of being drawn
    stratum         VARCHAR NOT NULL DEFAULT '',
    created_at      TIMESTAMP NOT NULL DEFAULT current_timestamp
);
-- gold: a label from a gold set (an `lsqa import-reviews --gold` file, LLMBar's human labels): it is
-- a reference, not a person's review, so it never makes a verdict "need a second review".
ALTER TABLE human_reviews ADD COLUMN gold BOOLEAN NOT NULL DEFAULT false;
-- Workspaces made before: the demo's LLMBar gold labels (lsqa.study.llmbar, annotator llmbar-gold).
UPDATE human_reviews SET gold = true WHERE annotator = 'llmbar-gold' AND note = 'LLMBar human gold label';
