-- Issue 35: the one unique index on verdicts is on a 128-bit number of the id, not on the id's 40
-- characters. DuckDB's index on a VARCHAR of random hex is the slowest part of a large import: 1M
-- verdicts inserted and committed in 2.3 s with the primary key on id, 0.9 s with it on a UHUGEINT
-- (bench/bench_store_scale.py; docs/benchmarks-log/2026-12-03-import-id-number.md). id_number is the
-- first 32 hex digits of the id (a sha1: lsqa.store.verdict_ids), the md5 of an id of another shape;
-- the CHECK keeps it so for every writer, so one id_number is one id and the primary key still
-- refuses a second verdict with the same natural key. The id stays the verdict's name everywhere
-- (reviews, flags, exports); a lookup of one verdict by id names its number too, to use the index
-- (lsqa.store.verdict_ids.id_match).
-- The id itself is stored uncompressed, here and in the audit queue's kept rows: 40 random hex
-- characters do not compress, and DuckDB's attempt at it cost ~0.25 s per million verdicts written.
-- DuckDB cannot move a primary key, so the table is rebuilt with the same columns, defaults, order
-- of columns and rows, id_number last; queue_signals is made anew and filled again by the data step
-- (lsqa.store.db._data_step), with the same columns.

CREATE TABLE judgments_rebuilt (
    id             VARCHAR NOT NULL USING COMPRESSION uncompressed, -- sha1 of the natural key (verdict_ids)
    judge          VARCHAR NOT NULL,
    kind           VARCHAR NOT NULL,
    question_id    VARCHAR NOT NULL,
    system_a       VARCHAR NOT NULL,
    system_b       VARCHAR NOT NULL DEFAULT '',
    shown_order    VARCHAR NOT NULL DEFAULT 'ab',
    reference      VARCHAR NOT NULL DEFAULT '',
    label          VARCHAR,
    raw_label      VARCHAR NOT NULL DEFAULT '',
    score          DOUBLE,
    evidence       VARCHAR NOT NULL DEFAULT '[]',
    status         VARCHAR NOT NULL,
    raw            VARCHAR NOT NULL DEFAULT '',
    llm_call_key   VARCHAR NOT NULL DEFAULT '',
    prompt_id      VARCHAR NOT NULL DEFAULT '',
    prompt_version VARCHAR NOT NULL DEFAULT '',
    extra          VARCHAR NOT NULL DEFAULT '{}',
    created_at     TIMESTAMP NOT NULL DEFAULT current_timestamp,
    family         VARCHAR,
    -- lsqa.store.verdict_ids.NUMBER_SQL, written out: a migration is frozen, the module may not be.
    id_number      UHUGEINT PRIMARY KEY,
    CHECK (id_number = coalesce(CASE WHEN length(id) = 40 THEN TRY_CAST('0x' || left(id, 32) AS UHUGEINT) END,
                                CAST('0x' || md5(id) AS UHUGEINT)))
);

INSERT INTO judgments_rebuilt (id, judge, kind, question_id, system_a, system_b, shown_order, reference, label,
                               raw_label, score, evidence, status, raw, llm_call_key, prompt_id, prompt_version,
                               extra, created_at, family, id_number)
SELECT id, judge, kind, question_id, system_a, system_b, shown_order, reference, label,
       raw_label, score, evidence, status, raw, llm_call_key, prompt_id, prompt_version,
       extra, created_at, family,
       coalesce(CASE WHEN length(id) = 40 THEN TRY_CAST('0x' || left(id, 32) AS UHUGEINT) END,
                CAST('0x' || md5(id) AS UHUGEINT))
FROM judgments ORDER BY rowid;

DROP TABLE judgments;
ALTER TABLE judgments_rebuilt RENAME TO judgments;

DROP TABLE queue_signals;
CREATE TABLE queue_signals (
    id                 VARCHAR NOT NULL USING COMPRESSION uncompressed,
    judge              VARCHAR NOT NULL,
    kind               VARCHAR NOT NULL,
    family             VARCHAR,
    question_id        VARCHAR NOT NULL,
    system_a           VARCHAR NOT NULL,
    system_b           VARCHAR NOT NULL,
    shown_order        VARCHAR NOT NULL,
    reference          VARCHAR NOT NULL,
    label              VARCHAR,
    raw_label          VARCHAR NOT NULL,
    status             VARCHAR NOT NULL,
    disagreement       DOUBLE NOT NULL,
    n_others           BIGINT NOT NULL,
    self_inconsistent  BOOLEAN NOT NULL,
    flagged            BOOLEAN NOT NULL,
    priority           DOUBLE NOT NULL,
    id_key             UBIGINT NOT NULL
);
