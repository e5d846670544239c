-- Each verdict stores its family (issue 29: a judge kind is one record, lsqa.judging.kinds): whether it
-- rates one answer ('binary', yes/no) or a pair ('pairwise', side by side). It is written with the
-- verdict from its kind's record, so the statistics, the audit queue and the views below treat a
-- kind by its family without knowing its name, and a kind registered later needs no new SQL.

ALTER TABLE judgments ADD COLUMN family VARCHAR;

-- The verdicts stored before this migration are of the five kinds lsqa knew then (the pipeline and
-- every importer refused any other name); their families are those kinds' records'.
UPDATE judgments SET family = CASE WHEN kind IN ('pairwise', 'groundtruth-pairwise') THEN 'pairwise' ELSE 'binary' END;

-- verdict_items (0005) as before, its family and item keys now from the stored family: the same
-- rows and values for every verdict stored before (tests/test_kinds.py compares the two).
DROP VIEW verdict_items;
CREATE VIEW verdict_items AS
SELECT id, judge, kind, question_id, system_a, system_b, shown_order, reference, label, raw_label, status,
       family,
       CASE WHEN family = 'pairwise'
            THEN [question_id, least(system_a, system_b), greatest(system_a, system_b)]
            ELSE [question_id, system_a] END AS item,
       CASE WHEN family = 'pairwise'
            THEN (CASE label WHEN 'A' THEN system_a WHEN 'B' THEN system_b ELSE label END)
            ELSE label END AS outcome
FROM judgments;
