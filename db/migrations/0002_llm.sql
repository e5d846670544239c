-- LLM layer (issue 4): what lsqa.llm needs beyond 0001.
-- llm_calls.attempts: how many tries the stored outcome took (1 = first try; retries on 429/5xx/timeouts).
-- runs.*: token totals and how many calls had no known price, so that runs.cost_usd (the sum of
-- the known prices of the calls made in the run) can be read as complete or as a lower bound.
ALTER TABLE llm_calls ADD COLUMN attempts INTEGER;
ALTER TABLE runs ADD COLUMN prompt_tokens BIGINT NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN completion_tokens BIGINT NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN calls_cost_unknown INTEGER NOT NULL DEFAULT 0;
