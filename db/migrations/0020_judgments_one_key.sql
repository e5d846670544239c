-- Issue 35: a verdict is unique by one index, not two. Every writer stores a verdict under
-- id = sha1 of its natural key (judge, kind, question, systems, order, reference: lsqa.judging.ids,
-- and the same sha1 in SQL for imports), so the primary key on id already refuses a second verdict
-- with the same key; the UNIQUE constraint of 0001 on the seven key columns said it again and cost
-- about half of a large import (its index is built on insert and written at every checkpoint:
-- 1M verdicts inserted and committed in 5.2 s with both, 3.5 s with the primary key alone).
-- DuckDB cannot drop a constraint, so the table is rebuilt with the same columns, defaults, order
-- of columns and rows. The views over judgments (0005, 0012) are bound when they are read and keep
-- working on the new table.

CREATE TABLE judgments_rebuilt (
    id             VARCHAR PRIMARY KEY,     -- sha1 of the natural key (lsqa.judging.ids.judgment_id)
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
    family         VARCHAR
);

INSERT INTO judgments_rebuilt (id, judge, kind, question_id, system_a, system_b, shown_order, reference, label,
                               raw_label, score, evidence, status, raw, llm_call_key, prompt_id, prompt_version,
                               extra, created_at, family)
SELECT id, judge, kind, question_id, system_a, system_b, shown_order, reference, label,
       raw_label, score, evidence, status, raw, llm_call_key, prompt_id, prompt_version,
       extra, created_at, family
FROM judgments ORDER BY rowid;

DROP TABLE judgments;
ALTER TABLE judgments_rebuilt RENAME TO judgments;

-- Its data step (lsqa.store.db._data_step) rebuilds the audit queue's kept signals: their id_key is
-- now the first 16 hex digits of the id (a sha1), no longer an md5 of it (lsqa.store.queue_signals).
