-- Issue 45 (labels that leave): a flag may carry the reference its annotator proposes instead, and an
-- errata file's corrections come back as corrected references kept beside the originals.

-- The reference the flagging person proposes instead ('' when none). Appended with the flag: an undo
-- restores the previous flag's proposal with it.
ALTER TABLE reference_flags ADD COLUMN correction VARCHAR NOT NULL DEFAULT '';

CREATE OR REPLACE VIEW current_flags AS
SELECT id, annotator, question_id, reference, reason, note, created_at, correction FROM (
    SELECT *, row_number() OVER (PARTITION BY question_id, reference, annotator ORDER BY id DESC) AS rn
    FROM reference_flags)
WHERE rn = 1 AND reason <> 'retract';

-- reference_corrections: append-only; a corrected reference read from an errata file (`lsqa
-- ingest-narrativeqa --errata FILE`), beside questions.reference_1 / reference_2, never in place of them.
-- The latest row of a (question, reference) stands. `source`: the file and line it came from;
-- `proposed_by`: the errata row's annotators, as written there.
CREATE SEQUENCE reference_corrections_id START 1;
CREATE TABLE reference_corrections (
    id           BIGINT PRIMARY KEY DEFAULT nextval('reference_corrections_id'),
    question_id  VARCHAR NOT NULL,
    reference    VARCHAR NOT NULL,          -- '1' | '2'
    text         VARCHAR NOT NULL,
    source       VARCHAR NOT NULL,
    proposed_by  VARCHAR NOT NULL DEFAULT '',
    created_at   TIMESTAMP NOT NULL DEFAULT current_timestamp
);

CREATE VIEW current_reference_corrections AS
SELECT id, question_id, reference, text, source, proposed_by, created_at FROM (
    SELECT *, row_number() OVER (PARTITION BY question_id, reference ORDER BY id DESC) AS rn
    FROM reference_corrections)
WHERE rn = 1;
