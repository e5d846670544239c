-- Issue 35: the audit queue's priority signals kept per verdict, so that its next page does not
-- recompute them over every verdict (lsqa.store.queue_signals). Derived data, never a source: one
-- row per verdict with the verdict's columns the queue filters, orders and shows, its signals
-- (disagreement with other judges on the item, n_others, self_inconsistent, flagged reference), its
-- priority under lsqa's weights, and id_key: a 64-bit number of the id (md5), to find a few verdicts
-- by id without comparing a million strings.
-- Built by the migration's data step (lsqa.store.db._data_step), kept by the marks below.
CREATE TABLE queue_signals (
    id                 VARCHAR NOT NULL,
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

-- Questions whose verdicts or reference flags changed since their signals were kept: a write of
-- verdicts or flags adds a row in its own transaction (append-only, so concurrent writers never
-- conflict on it); the queue reads these questions' signals fresh until a catch-up, after the
-- write's commit, has kept them and deleted the rows it applied.
CREATE SEQUENCE queue_dirty_id START 1;
CREATE TABLE queue_dirty (
    id           BIGINT PRIMARY KEY DEFAULT nextval('queue_dirty_id'),
    question_id  VARCHAR NOT NULL
);

-- Which state of queue_signals a reader saw: every catch-up that changes the table gives it a new
-- random version (catch-ups run one at a time per workspace), so two copies of a workspace file that
-- went different ways never share one. The queue keeps what it derived from the table under it.
-- verdicts: the count and a sum of hashes of the labels and statuses of the verdicts the kept rows
-- stand for; when the verdicts' own no longer match (a verdict changed by a writer that did not mark
-- it), the queue reads the verdicts and the next write's catch-up rebuilds the table.
CREATE TABLE queue_signals_version (version VARCHAR NOT NULL, verdicts VARCHAR NOT NULL);
INSERT INTO queue_signals_version VALUES (uuid()::VARCHAR, '');
