-- Derived state as views, defined once for the statistics, the audit queue and the dashboard
-- (issue 10): reviews that still stand, each annotator's label, the latest human label per verdict,
-- current reference flags, and verdict items with structured keys.

-- Undo of a flag is a fact: the flag row written by an undo names the row it withdraws.
ALTER TABLE reference_flags ADD COLUMN undoes BIGINT;

-- Rows written by an undo before this column existed carried 'undo of flag #N' at the start of
-- their note; they are recognised only when flag #N is the same annotator's earlier flag on the
-- same reference (what such an undo always restored). Notes are kept as written.
UPDATE reference_flags SET undoes = TRY_CAST(regexp_extract(note, '^undo of flag #([0-9]+)', 1) AS BIGINT)
WHERE note LIKE 'undo of flag #%'
  AND EXISTS (
      SELECT 1 FROM reference_flags o
      WHERE o.id = TRY_CAST(regexp_extract(reference_flags.note, '^undo of flag #([0-9]+)', 1) AS BIGINT)
        AND o.id < reference_flags.id
        AND o.annotator = reference_flags.annotator
        AND o.question_id = reference_flags.question_id
        AND o.reference = reference_flags.reference);

-- Reviews that still stand: not an undo row, not withdrawn by one.
CREATE VIEW live_reviews AS
SELECT r.* FROM human_reviews r
WHERE r.action <> 'undo'
  AND r.id NOT IN (SELECT undoes FROM human_reviews WHERE action = 'undo' AND undoes IS NOT NULL);

-- Each annotator's current label per verdict: their latest live review (confirm = the judge's label).
CREATE VIEW human_labels AS
SELECT l.judgment_id, l.annotator, l.id AS review_id, l.action, l.note, l.created_at,
       CASE WHEN l.action = 'confirm' THEN j.label ELSE l.label END AS label
FROM (SELECT *, row_number() OVER (PARTITION BY judgment_id, annotator ORDER BY id DESC) AS rn
      FROM live_reviews) l
JOIN judgments j ON j.id = l.judgment_id
WHERE l.rn = 1;

-- The latest human label per verdict, whoever gave it (what "use human overrides" applies).
CREATE VIEW latest_human_labels AS
SELECT judgment_id, annotator, review_id, action, label FROM (
    SELECT *, row_number() OVER (PARTITION BY judgment_id ORDER BY review_id DESC) AS rn
    FROM human_labels)
WHERE rn = 1;

-- A reference is flagged while some annotator's latest flag row on it is not a retract.
CREATE VIEW current_flags AS
SELECT id, annotator, question_id, reference, reason, note, created_at FROM (
    SELECT *, row_number() OVER (PARTITION BY question_id, reference, annotator ORDER BY id DESC) AS rn
    FROM reference_flags)
WHERE rn = 1 AND reason <> 'retract';

-- Flag actions that still stand (what an annotator's undo may withdraw): not written by an undo,
-- not withdrawn by one.
CREATE VIEW live_flags AS
SELECT f.* FROM reference_flags f
WHERE f.undoes IS NULL
  AND f.id NOT IN (SELECT undoes FROM reference_flags WHERE undoes IS NOT NULL);

-- What each verdict is about, as a structured key: a yes/no verdict rates one answer
-- [question, system]; a side-by-side verdict rates a pair whatever the order shown
-- [question, first system, second system] (names sorted). Lists, never joined strings, so any
-- character may appear in a name. `outcome` is comparable across judges of one item: yes/no, or
-- the winning system's name / tie / none. The pairwise kinds are lsqa.vocabulary.PAIRWISE_KINDS
-- (tests/test_vocabulary.py checks they agree).
CREATE VIEW verdict_items AS
SELECT id, judge, kind, question_id, system_a, system_b, shown_order, reference, label, raw_label, status,
       CASE WHEN kind IN ('pairwise', 'groundtruth-pairwise') THEN 'pairwise' ELSE 'binary' END AS family,
       CASE WHEN kind IN ('pairwise', 'groundtruth-pairwise')
            THEN [question_id, least(system_a, system_b), greatest(system_a, system_b)]
            ELSE [question_id, system_a] END AS item,
       CASE WHEN kind IN ('pairwise', 'groundtruth-pairwise')
            THEN (CASE label WHEN 'A' THEN system_a WHEN 'B' THEN system_b ELSE label END)
            ELSE label END AS outcome
FROM judgments;
