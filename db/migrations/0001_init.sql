-- lsqa workspace schema, version 1.
-- Natural unique keys everywhere so that re-running a step never duplicates rows.
-- Empty string ('') rather than NULL in key columns: NULLs never collide in UNIQUE constraints.

CREATE TABLE documents (
    id            VARCHAR PRIMARY KEY,      -- NarrativeQA document_id, or 'book-<sha1[:12]>' for plain books
    source        VARCHAR NOT NULL,         -- file path or URL the text came from
    content_sha1  VARCHAR NOT NULL UNIQUE,  -- sha1 of full_text: the same text is never stored twice
    title         VARCHAR NOT NULL,
    author        VARCHAR NOT NULL DEFAULT '',
    kind          VARCHAR NOT NULL,         -- book | movie | script
    set_name      VARCHAR NOT NULL DEFAULT '', -- NarrativeQA split (train/valid/test) or ''
    full_text     VARCHAR,                  -- the file as read (NULL when only the summary is known)
    clean_start   INTEGER,                  -- story = full_text[clean_start:clean_end] (Gutenberg header/footer removed)
    clean_end     INTEGER,
    summary       VARCHAR NOT NULL DEFAULT '',
    word_count    INTEGER NOT NULL DEFAULT 0,
    n_tokens      INTEGER NOT NULL DEFAULT 0,
    created_at    TIMESTAMP NOT NULL DEFAULT current_timestamp
);

CREATE TABLE passages (
    document_id   VARCHAR NOT NULL,
    ordinal       INTEGER NOT NULL,         -- position in book order, from 0
    char_start    INTEGER NOT NULL,         -- offsets into documents.full_text
    char_end      INTEGER NOT NULL,
    n_tokens      INTEGER NOT NULL,
    text          VARCHAR NOT NULL,         -- = full_text[char_start:char_end], kept for fast retrieval
    PRIMARY KEY (document_id, ordinal)
);

CREATE TABLE entities (
    id            VARCHAR PRIMARY KEY,      -- '<document_id>:<method>:<rank>'
    document_id   VARCHAR NOT NULL,
    method        VARCHAR NOT NULL,         -- fastcoref | fallback
    rank          INTEGER NOT NULL,         -- 1 = most mentioned
    name          VARCHAR NOT NULL,
    n_mentions    INTEGER NOT NULL,
    UNIQUE (document_id, method, rank)
);

CREATE TABLE mentions (
    entity_id     VARCHAR NOT NULL,
    char_start    INTEGER NOT NULL,         -- offsets into documents.full_text
    char_end      INTEGER NOT NULL,
    text          VARCHAR NOT NULL,
    PRIMARY KEY (entity_id, char_start, char_end)
);

CREATE TABLE questions (
    id             VARCHAR PRIMARY KEY,     -- 'nqa:<document_id>:<q_index>', 'gen:<hash>' or 'imp:<hash>'
    document_id    VARCHAR NOT NULL,
    origin         VARCHAR NOT NULL,        -- generated | narrativeqa | imported
    text           VARCHAR NOT NULL,
    reference_1    VARCHAR NOT NULL DEFAULT '',
    reference_2    VARCHAR NOT NULL DEFAULT '',
    entity_id      VARCHAR NOT NULL DEFAULT '',
    prompt_id      VARCHAR NOT NULL DEFAULT '',
    prompt_version VARCHAR NOT NULL DEFAULT '',
    model          VARCHAR NOT NULL DEFAULT '',
    set_name       VARCHAR NOT NULL DEFAULT '',
    source_index   INTEGER,                 -- q_index in NarrativeQA, order of generation otherwise
    created_at     TIMESTAMP NOT NULL DEFAULT current_timestamp
);

CREATE TABLE systems (
    name          VARCHAR PRIMARY KEY,
    model         VARCHAR NOT NULL,         -- litellm model string, or 'human:<source>' / 'imported'
    context       VARCHAR NOT NULL,         -- none | retrieval:<tokens> | full | reference | imported
    prompt_id     VARCHAR NOT NULL DEFAULT '',
    params        VARCHAR NOT NULL DEFAULT '{}',  -- JSON
    created_at    TIMESTAMP NOT NULL DEFAULT current_timestamp
);

CREATE TABLE answers (
    question_id   VARCHAR NOT NULL,
    system_name   VARCHAR NOT NULL,
    text          VARCHAR NOT NULL,
    status        VARCHAR NOT NULL DEFAULT 'ok',   -- ok | error
    llm_call_key  VARCHAR NOT NULL DEFAULT '',
    passages      VARCHAR NOT NULL DEFAULT '[]',   -- JSON list of passage ordinals given as context
    extra         VARCHAR NOT NULL DEFAULT '{}',   -- JSON: columns kept from imports
    created_at    TIMESTAMP NOT NULL DEFAULT current_timestamp,
    PRIMARY KEY (question_id, system_name)
);

CREATE TABLE llm_calls (
    cache_key         VARCHAR PRIMARY KEY,  -- sha256 of (model, messages, parameters)
    model             VARCHAR NOT NULL,
    prompt_id         VARCHAR NOT NULL DEFAULT '',
    prompt_version    VARCHAR NOT NULL DEFAULT '',
    messages          VARCHAR NOT NULL,     -- JSON: the rendered prompt as sent
    params            VARCHAR NOT NULL DEFAULT '{}',
    response          VARCHAR,              -- raw completion text
    status            VARCHAR NOT NULL,     -- ok | error
    error_kind        VARCHAR NOT NULL DEFAULT '',
    error_message     VARCHAR NOT NULL DEFAULT '',
    prompt_tokens     INTEGER,
    completion_tokens INTEGER,
    cost_usd          DOUBLE,               -- NULL when the provider's price is unknown
    latency_s         DOUBLE,
    run_id            BIGINT,
    created_at        TIMESTAMP NOT NULL DEFAULT current_timestamp
);

CREATE TABLE judgments (
    id             VARCHAR PRIMARY KEY,     -- sha1 of the natural key below
    judge          VARCHAR NOT NULL,        -- judge name (a model config) or a person for imported ratings
    kind           VARCHAR NOT NULL,        -- absolute | pairwise | groundtruth | groundtruth-pairwise | similarity
    question_id    VARCHAR NOT NULL,
    system_a       VARCHAR NOT NULL,        -- the judged system (absolute) or the first of the pair
    system_b       VARCHAR NOT NULL DEFAULT '',
    shown_order    VARCHAR NOT NULL DEFAULT 'ab', -- ab: system_a shown as 'A'; ba: system_b shown as 'A'
    reference      VARCHAR NOT NULL DEFAULT '',   -- which reference a ground-truth rater used: '1' | '2' | ''
    label          VARCHAR,                 -- in system terms: A | B | tie | none (pairwise), yes | no (absolute)
    raw_label      VARCHAR NOT NULL DEFAULT '', -- as the judge said it, in shown positions
    score          DOUBLE,                  -- similarity / F1 style raters
    evidence       VARCHAR NOT NULL DEFAULT '[]', -- JSON list of strings
    status         VARCHAR NOT NULL,        -- ok | parse_error | error
    raw            VARCHAR NOT NULL DEFAULT '', -- raw completion, kept for audit
    llm_call_key   VARCHAR NOT NULL DEFAULT '',
    prompt_id      VARCHAR NOT NULL DEFAULT '',
    prompt_version VARCHAR NOT NULL DEFAULT '',
    extra          VARCHAR NOT NULL DEFAULT '{}',
    created_at     TIMESTAMP NOT NULL DEFAULT current_timestamp,
    UNIQUE (judge, kind, question_id, system_a, system_b, shown_order, reference)
);

CREATE SEQUENCE human_reviews_id START 1;
CREATE TABLE human_reviews (             -- append-only: a correction is a new row
    id            BIGINT PRIMARY KEY DEFAULT nextval('human_reviews_id'),
    annotator     VARCHAR NOT NULL,
    judgment_id   VARCHAR NOT NULL,
    action        VARCHAR NOT NULL,         -- confirm | override | undo
    label         VARCHAR,                  -- the label the human gives (system terms)
    note          VARCHAR NOT NULL DEFAULT '',
    undoes        BIGINT,                   -- for action = undo: the review it withdraws
    created_at    TIMESTAMP NOT NULL DEFAULT current_timestamp
);

CREATE SEQUENCE reference_flags_id START 1;
CREATE TABLE reference_flags (           -- append-only
    id            BIGINT PRIMARY KEY DEFAULT nextval('reference_flags_id'),
    annotator     VARCHAR NOT NULL,
    question_id   VARCHAR NOT NULL,
    reference     VARCHAR NOT NULL,         -- '1' | '2'
    reason        VARCHAR NOT NULL,         -- wrong | ambiguous | unanswerable | retract
    note          VARCHAR NOT NULL DEFAULT '',
    created_at    TIMESTAMP NOT NULL DEFAULT current_timestamp
);

CREATE SEQUENCE runs_id START 1;
CREATE TABLE runs (
    id            BIGINT PRIMARY KEY DEFAULT nextval('runs_id'),
    stage         VARCHAR NOT NULL,
    config        VARCHAR NOT NULL DEFAULT '{}',  -- JSON, never holds secrets
    status        VARCHAR NOT NULL,         -- running | ok | failed | interrupted
    counts        VARCHAR NOT NULL DEFAULT '{}',  -- JSON
    calls_made    INTEGER NOT NULL DEFAULT 0,
    calls_cached  INTEGER NOT NULL DEFAULT 0,
    calls_failed  INTEGER NOT NULL DEFAULT 0,
    cost_usd      DOUBLE,
    error         VARCHAR NOT NULL DEFAULT '',
    started_at    TIMESTAMP NOT NULL DEFAULT current_timestamp,
    finished_at   TIMESTAMP
);
