-- Audits keep the design that drew them. A verdict drawn for review by a random or active draw (the
-- Audit page's random and active queues, a random `lsqa assign` batch, an `lsqa import-reviews` file
-- with an inclusion probability) is an audit of that draw: its inclusion probability and stratum are
-- recorded here, with the draw. They were read from the verdict's latest review, anyone's, so a second
-- person's ordinary review (double annotation, a disagreement follow-up) took the verdict out of the
-- sample, and which verdicts dropped out depended on their labels: a selection bias in every corrected
-- figure (lsqa.stats.corrected_report, lsqa.stats.certification).
--
-- Append-only. A verdict's draw is its earliest row (lsqa.store.verdicts.sampled_human_labels); a
-- writer adds none for a verdict drawn already (lsqa.store.reviews.record_draws), in the transaction
-- of the review or the assignment batch that drew it. The label the statistics use is the verdict's
-- final human label (final_human_labels, migration 0016): later reviews, double annotation and
-- adjudication change the label, never whether the verdict counts. A draw is never withdrawn: undoing
-- the review that drew a verdict leaves the draw, and the verdict counts again once it has a final
-- label (the same person's review again, anyone else's, or an adjudication).
CREATE SEQUENCE audit_draws_id START 1;
CREATE TABLE audit_draws (
    id              BIGINT PRIMARY KEY DEFAULT nextval('audit_draws_id'),
    judgment_id     VARCHAR NOT NULL,
    queue           VARCHAR NOT NULL,           -- random | active | import (lsqa.vocabulary.DRAWN_QUEUES)
    inclusion_prob  DOUBLE NOT NULL,            -- the probability with which the verdict was drawn
    stratum         VARCHAR NOT NULL DEFAULT '',
    review_id       BIGINT,                     -- the review that drew it; NULL for an assignment batch
    batch           VARCHAR NOT NULL DEFAULT '',-- the random assignment batch that drew it ('' for a review)
    created_at      TIMESTAMP NOT NULL DEFAULT current_timestamp
);

-- Workspaces made before keep their audits: each verdict's draw is its earliest live review made
-- through a random or active queue or imported with an inclusion probability (the earliest sampled
-- review wins). Reviews undone before this migration draw nothing, as they counted for nothing.
-- Random assignment batches made before draw nothing here either: the assignee's review made from
-- "My assignments" carries the batch's probability and records the draw, as before.
-- human_reviews itself: the live_reviews view of 0005 predates the sampling columns of 0007.
INSERT INTO audit_draws (judgment_id, queue, inclusion_prob, stratum, review_id, created_at)
SELECT judgment_id, queue, inclusion_prob, stratum, id, created_at FROM (
    SELECT r.judgment_id, r.queue, r.inclusion_prob, r.stratum, r.id, r.created_at,
           row_number() OVER (PARTITION BY r.judgment_id ORDER BY r.id) AS rn
    FROM human_reviews r
    WHERE r.queue IN ('random', 'active', 'import') AND r.inclusion_prob IS NOT NULL
      AND r.id IN (SELECT id FROM live_reviews))
WHERE rn = 1
ORDER BY id;
