-- How each human review was sampled (issue 13), so that audits can correct a judge's estimates:
-- queue 'priority' (the disagreement-first queue: counts for agreement and overrides, not for
-- corrected estimates), 'random' (uniform or stratified), 'active' (more likely where the judge is
-- least certain) or 'import' (made elsewhere); inclusion_prob is the probability with which the
-- reviewed item was drawn (NULL when unknown), stratum the design's stratum ('all', 'system:<s>',
-- 'pair:<a>|<b>'). Reviews made before this migration are priority-queue reviews.
ALTER TABLE human_reviews ADD COLUMN queue VARCHAR NOT NULL DEFAULT 'priority';
ALTER TABLE human_reviews ADD COLUMN inclusion_prob DOUBLE;
ALTER TABLE human_reviews ADD COLUMN stratum VARCHAR NOT NULL DEFAULT '';
