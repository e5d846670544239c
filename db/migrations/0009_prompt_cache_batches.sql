-- Prompt caching and batch providers (issue 15, parts 3 and 4).
-- llm_calls.cached_prompt_tokens: the part of prompt_tokens the provider served from its prompt
-- cache (priced at its cached rate in cost_usd); NULL when the provider did not say.
-- runs.cached_prompt_tokens: their sum over the calls a run made.
ALTER TABLE llm_calls ADD COLUMN cached_prompt_tokens BIGINT;
ALTER TABLE runs ADD COLUMN cached_prompt_tokens BIGINT NOT NULL DEFAULT 0;

-- One provider batch job (litellm's files + batches API). The row is written before the batch is
-- created and keeps the provider's batch id from the moment it exists, so a run killed while the
-- batch is processed picks it up on restart instead of submitting (and paying for) it again.
-- custom_ids are the cache keys of the calls in the batch; their results go to llm_calls.
CREATE TABLE llm_batches (
    id VARCHAR PRIMARY KEY,               -- lsqa's id, chosen before anything is sent
    model VARCHAR NOT NULL,
    transport VARCHAR NOT NULL,           -- JSON: api_base and other transport settings, no secrets
    cache_keys VARCHAR[] NOT NULL,
    status VARCHAR NOT NULL,              -- uploading | submitted | done | failed
    input_file_id VARCHAR,
    batch_id VARCHAR,                     -- the provider's id, once created
    provider_status VARCHAR,              -- validating | in_progress | completed | failed | expired | cancelled ...
    output_file_id VARCHAR,
    error_file_id VARCHAR,
    error VARCHAR,
    run_id BIGINT,
    created_at TIMESTAMP NOT NULL DEFAULT now(),
    updated_at TIMESTAMP NOT NULL DEFAULT now()
);
