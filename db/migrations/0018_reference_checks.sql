-- Verdicts of LLM reference checks (issue 32, judge kind `reference-check`): given a story's summary
-- (and, if the judge asks, passages of the book), is the question answerable and does one NarrativeQA
-- reference answer it? A verdict about a reference, not about any system's answer: a table of its own,
-- so that no reader of judgments (rankings, accuracy, agreement, the audit queue) takes it for a
-- verdict on a system. Keyed like a judgment (id = judgment_id of the natural key); a re-run replaces
-- a row that failed or could not be parsed, never one that is ok.
CREATE TABLE reference_checks (
    id             VARCHAR PRIMARY KEY,
    judge          VARCHAR NOT NULL,
    kind           VARCHAR NOT NULL,         -- reference-check
    question_id    VARCHAR NOT NULL,
    reference      VARCHAR NOT NULL,         -- '1' | '2'
    label          VARCHAR,                  -- yes | no: the reference answers the question
    answerable     VARCHAR,                  -- yes | no: the question can be answered from what the judge read
    evidence       VARCHAR NOT NULL DEFAULT '[]', -- JSON list of quotes
    status         VARCHAR NOT NULL,         -- ok | parse_error | error
    raw            VARCHAR NOT NULL DEFAULT '',
    llm_call_key   VARCHAR NOT NULL DEFAULT '',
    prompt_id      VARCHAR NOT NULL DEFAULT '',
    prompt_version VARCHAR NOT NULL DEFAULT '',
    extra          VARCHAR NOT NULL DEFAULT '{}',
    created_at     TIMESTAMP NOT NULL DEFAULT current_timestamp,
    UNIQUE (judge, question_id, reference)
);
